#!/usr/bin/env python3
"""Freshet fixture API server (test infrastructure, Python 3.11 standard library only).

Serves the fixtures in <repo>/fixtures/ on 127.0.0.1:

* PokeAPI style:   /api/v2/pokemon/, /api/v2/pokemon/{id|name}/,
                   /api/v2/pokemon-species/, /api/v2/pokemon-species/{id|name}/
                   (lists trimmed to ids 1..151, offset/limit paging like pokeapi.co)
* JSONPlaceholder: /posts /comments /albums /photos /users /todos with json-server
                   semantics (filters, _page/_limit with Link and X-Total-Count,
                   _start/_end, _sort/_order, q, nested /posts/1/comments,
                   POST/PUT/PATCH/DELETE on an in-memory copy, Idempotency-Key replay).

Every 200 GET carries a strong ETag, Cache-Control: max-age, Date and Last-Modified,
and If-None-Match / If-Modified-Since give 304 (RFC 9110 section 13).

A second listener (the control port) changes behaviour at run time: delays, injected
failures, malformed bodies, refusing connections, and shows the request log.

Usage:
  python3 tools/fixture-server/fixture_server.py [--data DIR] [--port 0]
      [--control-port 0] [--max-age 60] [--request-log PATH]

When both listeners are ready it prints one JSON line to stdout:
  {"port": P, "control_port": C, "base_url": "http://127.0.0.1:P"}
and runs until SIGTERM or SIGINT (exit status 0).
"""

import argparse
import email.utils
import gzip
import hashlib
import json
import os
import re
import signal
import socket
import sys
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

HOST = "127.0.0.1"
POKEMON_COUNT = 151
POKEAPI_RESOURCES = ("pokemon", "pokemon-species")
JSON_TYPE = "application/json; charset=utf-8"
MAX_BODY = 16 * 1024 * 1024
SERVER_NAME = "freshet-fixture-server/1"


# --------------------------------------------------------------------------- helpers

def dumps(obj):
    """Minified JSON as UTF-8 bytes (key order kept)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def make_etag(body):
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def http_date(ts):
    return email.utils.formatdate(ts, usegmt=True)


def iso_now():
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (now.microsecond // 1000)


def js_string(value):
    """Render a JSON value the way JavaScript's String(value) does (json-server compares strings)."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    return "[object Object]"


def parse_etags(header):
    """Parse an If-None-Match value into a list of entity-tags (with W/ kept), or ['*']."""
    header = header.strip()
    if header == "*":
        return ["*"]
    return re.findall(r'(?:W/)?"[^"]*"', header)


def weak_match(a, b):
    """Weak comparison (RFC 9110 section 8.8.3.2): opaque tags equal, W/ ignored."""
    strip = lambda t: t[2:] if t.startswith("W/") else t
    return strip(a) == strip(b)


class Response:
    __slots__ = ("status", "headers", "body", "chunks", "interval")

    def __init__(self, status, body=b"", headers=None, chunks=None, interval=0.0):
        self.status = status
        self.body = body
        self.headers = list(headers or [])
        # A streamed body: an iterable of byte strings sent with Transfer-Encoding: chunked,
        # `interval` seconds apart (the trickling and no-Content-Length routes).
        self.chunks = chunks
        self.interval = interval


def json_response(status, obj, headers=None):
    return Response(status, dumps(obj), [("Content-Type", JSON_TYPE)] + list(headers or []))


def not_found_pokeapi():
    return json_response(404, {"detail": "Not found."})


def not_found_jp():
    return json_response(404, {})


class BadRequest(Exception):
    pass


# --------------------------------------------------------------------------- data

class PokeAPIData:
    """Read-only PokeAPI documents, loaded lazily from fixtures (gzip) or the raw api-data layout."""

    def __init__(self, root):
        self.root = root
        self.lock = threading.Lock()
        self.cache = {}  # (resource, id) -> (body, etag)
        self.lists = {}  # resource -> list of entries (first 151)
        self.names = {}  # resource -> {name: id}
        for res in POKEAPI_RESOURCES:
            doc = json.loads(self._read(res, None))
            entries = doc["results"][:POKEMON_COUNT]
            self.lists[res] = entries
            self.names[res] = {e["name"]: i + 1 for i, e in enumerate(entries)}

    def _read(self, resource, ident):
        name = "index" if ident is None else str(ident)
        gz = os.path.join(self.root, "api", "v2", resource, name + ".json.gz")
        if os.path.exists(gz):
            with gzip.open(gz, "rb") as f:
                return f.read()
        # Raw PokeAPI/api-data layout (e.g. the shared data directory).
        sub = [] if ident is None else [str(ident)]
        raw = os.path.join(self.root, "data", "api", "v2", resource, *sub, "index.json")
        with open(raw, "rb") as f:
            data = f.read()
        return dumps(json.loads(data))

    def detail(self, resource, key):
        """Body and ETag of one detail document, or None. key is an id (1..151) or a name."""
        if key.isdigit():
            ident = int(key)
        else:
            ident = self.names[resource].get(key.lower())
        if ident is None or not 1 <= ident <= POKEMON_COUNT:
            return None
        hit = self.cache.get((resource, ident))
        if hit is None:
            with self.lock:
                hit = self.cache.get((resource, ident))
                if hit is None:
                    body = self._read(resource, ident)
                    hit = (body, make_etag(body))
                    self.cache[(resource, ident)] = hit
        return hit


def load_jsonplaceholder(root):
    gz = os.path.join(root, "data.json.gz")
    if os.path.exists(gz):
        with gzip.open(gz, "rb") as f:
            return f.read()
    with open(os.path.join(root, "data.json"), "rb") as f:
        return f.read()


# --------------------------------------------------------------------------- control state

CONTROL_DEFAULTS = {
    "delay_ms": 0,
    "fail_status": None,
    "fail_count": None,
    "fail_path_prefix": None,
    "fail_method": None,
    "malformed": False,
    "refuse": False,
    "retry_after": None,
    # Server-sent events (GET /events): the retry: field sent on connect, the keep-alive
    # comment interval, and a drop after this many events per connection (None: never).
    "sse_retry_ms": 1000,
    "sse_keepalive_ms": 15000,
    "sse_drop_after": None,
}


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def validate_control(update):
    if not isinstance(update, dict):
        raise BadRequest("control body must be a JSON object")
    known = set(CONTROL_DEFAULTS) | {"max_age", "reset", "sse_drop"}
    unknown = sorted(set(update) - known)
    if unknown:
        raise BadRequest("unknown control keys: " + ", ".join(unknown))
    for key, value in update.items():
        if key in ("delay_ms", "max_age", "sse_retry_ms"):
            ok = _is_int(value) and value >= 0
        elif key == "sse_keepalive_ms":
            ok = _is_int(value) and value >= 1
        elif key == "sse_drop_after":
            ok = value is None or (_is_int(value) and value >= 1)
        elif key == "fail_status":
            ok = value is None or (_is_int(value) and 200 <= value <= 599)
        elif key == "fail_count":
            ok = value is None or (_is_int(value) and value >= 0)
        elif key in ("fail_path_prefix", "fail_method"):
            ok = value is None or isinstance(value, str)
        elif key == "retry_after":
            ok = value is None or isinstance(value, str) or _is_int(value)
        else:  # malformed, refuse, reset
            ok = isinstance(value, bool)
        if not ok:
            raise BadRequest("invalid value for %s: %r" % (key, value))


# --------------------------------------------------------------------------- application

class App:
    def __init__(self, data_dir, max_age, request_log_path):
        self.data_dir = data_dir
        self.start_time = int(time.time())
        self.default_max_age = max_age
        self.poke = PokeAPIData(os.path.join(data_dir, "pokeapi"))
        self.poke_last_modified = self.start_time
        self.jp_original = load_jsonplaceholder(os.path.join(data_dir, "jsonplaceholder"))

        self.state_lock = threading.Lock()
        self.control = dict(CONTROL_DEFAULTS)
        self.max_age = max_age

        self.data_lock = threading.RLock()
        self._load_jp(self.start_time)

        # The change stream (GET /events): every write to the JSONPlaceholder data as
        # (id, event data bytes), ids 1, 2, 3, ... never reused (a reset does not clear it).
        self.change_cond = threading.Condition()
        self.changes = []
        self.sse_generation = 0  # bumped by {"sse_drop": true}: open streams drop
        self.sse_clients = 0

        self.log_lock = threading.Lock()
        self.request_log = []
        self.log_file = None
        if request_log_path:
            parent = os.path.dirname(os.path.abspath(request_log_path))
            os.makedirs(parent, exist_ok=True)
            self.log_file = open(request_log_path, "a", encoding="utf-8")

        self.api_server = None
        self.api_thread = None
        self.api_port = None
        self.server_lock = threading.Lock()
        self.base_url = None

    # ---- JSONPlaceholder data

    def _load_jp(self, modified_at):
        self.jp = json.loads(self.jp_original)
        self.jp_modified = {name: modified_at for name in self.jp}
        self.idempotency = {}

    def _touch(self, collection):
        """Record a write: Last-Modified moves forward by at least one whole second so that
        If-Modified-Since (1 s resolution) never hides a change."""
        now = int(time.time())
        self.jp_modified[collection] = max(now, self.jp_modified[collection] + 1)

    def record_change(self, collection, op, rows=None, ids=None):
        """Append one change to the stream's log and wake the open streams."""
        change = {"collection": collection, "op": op}
        if op == "upsert":
            change["rows"] = rows
        else:
            change["ids"] = ids
        with self.change_cond:
            ident = (self.changes[-1][0] + 1) if self.changes else 1
            self.changes.append((ident, dumps(change)))
            self.change_cond.notify_all()

    def drop_event_streams(self):
        with self.change_cond:
            self.sse_generation += 1
            self.change_cond.notify_all()

    def changes_after(self, last_id):
        with self.change_cond:
            return [c for c in self.changes if c[0] > last_id]

    def reset_data(self):
        with self.data_lock:
            latest = max(self.jp_modified.values())
            changed = latest > self.start_time
            # After a reset the data differs from what clients saw after the last write,
            # so its Last-Modified must be newer than any date handed out before.
            stamp = max(int(time.time()), latest + 1) if changed else self.start_time
            self._load_jp(stamp)

    # ---- control

    def control_snapshot(self):
        with self.state_lock:
            snap = dict(self.control)
            snap["max_age"] = self.max_age
        snap["port"] = self.api_port
        snap["control_port"] = self.control_port
        with self.change_cond:
            snap["sse_clients"] = self.sse_clients
            snap["sse_last_id"] = self.changes[-1][0] if self.changes else 0
        return snap

    def apply_control(self, update):
        validate_control(update)
        if update.get("reset"):
            with self.state_lock:
                self.control = dict(CONTROL_DEFAULTS)
                self.max_age = self.default_max_age
            self.reset_data()
            self.set_refused(False)
        with self.state_lock:
            for key, value in update.items():
                if key in ("reset", "refuse", "sse_drop"):
                    continue
                if key == "max_age":
                    self.max_age = value
                elif key == "retry_after" and value is not None:
                    self.control[key] = str(value)
                elif key == "fail_method" and value is not None:
                    self.control[key] = value.upper()
                else:
                    self.control[key] = value
        if "refuse" in update:
            self.set_refused(update["refuse"])
        if update.get("sse_drop"):
            self.drop_event_streams()
        return self.control_snapshot()

    def take_failure(self, method, path):
        """Decide (atomically) whether this API request gets the injected failure."""
        with self.state_lock:
            c = self.control
            status = c["fail_status"]
            if status is None:
                return None
            if c["fail_count"] is not None and c["fail_count"] <= 0:
                return None
            if c["fail_path_prefix"] and not path.startswith(c["fail_path_prefix"]):
                return None
            if c["fail_method"] and c["fail_method"] != method:
                return None
            if c["fail_count"] is not None:
                c["fail_count"] -= 1
                if c["fail_count"] == 0:
                    c["fail_status"] = None
                    c["fail_count"] = None
            retry_after = c["retry_after"]
        headers = [("Retry-After", retry_after)] if retry_after is not None else []
        if status in (204, 304):
            return Response(status, b"", headers)
        body = {"detail": "Injected failure (fixture server control).", "status": status}
        return json_response(status, body, headers)

    def wants_malformed(self, method, path):
        with self.state_lock:
            c = self.control
            if not c["malformed"] or method not in ("GET", "HEAD"):
                return False
            if c["fail_path_prefix"] and not path.startswith(c["fail_path_prefix"]):
                return False
            return True

    def delay_seconds(self):
        with self.state_lock:
            return self.control["delay_ms"] / 1000.0

    def current_max_age(self):
        with self.state_lock:
            return self.max_age

    # ---- listeners

    def start_api(self, port):
        server = FixtureHTTPServer((HOST, port), APIHandler, self)
        self.api_server = server
        self.api_port = server.server_address[1]
        self.base_url = "http://%s:%d" % (HOST, self.api_port)
        self.api_thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                           name="api", daemon=True)
        self.api_thread.start()

    def set_refused(self, refused):
        with self.server_lock:
            with self.state_lock:
                self.control["refuse"] = refused
            if refused and self.api_server is not None:
                server, self.api_server = self.api_server, None
                server.shutdown()
                server.server_close()
                server.close_connections()
            elif not refused and self.api_server is None:
                self.start_api(self.api_port)

    def is_refused(self):
        with self.state_lock:
            return self.control["refuse"]

    # ---- request log

    def log_request(self, method, path, status, headers, body=b""):
        entry = {
            "time": iso_now(),
            "method": method,
            "path": path,
            "status": status,
            "if_none_match": headers.get("If-None-Match"),
            "if_modified_since": headers.get("If-Modified-Since"),
            "idempotency_key": headers.get("Idempotency-Key"),
            # Every header line as received, in order: tests check what reached which origin.
            "headers": [[name, value] for name, value in headers.items()],
            "body": body.decode("utf-8", "replace"),
        }
        line = json.dumps(entry, ensure_ascii=False)
        with self.log_lock:
            self.request_log.append(entry)
            if self.log_file is not None:
                self.log_file.write(line + "\n")
                self.log_file.flush()

    def requests_snapshot(self):
        with self.log_lock:
            return list(self.request_log)

    def clear_requests(self):
        with self.log_lock:
            self.request_log.clear()

    # ---- caching

    def cached_get(self, method, headers, body, last_modified, status=200, extra=()):
        """A 200 for a GET/HEAD with validators, or a 304 when the request's preconditions say so."""
        etag = make_etag(body)
        cache = [("ETag", etag), ("Cache-Control", "max-age=%d" % self.current_max_age()),
                 ("Last-Modified", http_date(last_modified))]
        if not_modified(headers, etag, last_modified):
            return Response(304, b"", cache)
        return Response(status, body, [("Content-Type", JSON_TYPE)] + cache + list(extra))

    # ---- routing

    def route(self, method, raw_path, headers, body):
        split = urlsplit(raw_path)
        segments = [unquote(s) for s in split.path.split("/") if s]
        query = parse_qsl(split.query, keep_blank_values=True)
        if segments[:1] == ["test"] and len(segments) == 2:
            return self.route_test(segments[1], dict(query))
        if segments == ["events"]:
            if method not in ("GET", "HEAD"):
                return json_response(405, {}, [("Allow", "GET, HEAD")])
            last = headers.get("Last-Event-ID")
            if last is None:
                last = dict(query).get("lastEventId")
            # An ID this server did not issue (not a decimal number) replays everything:
            # a client that dedupes by ID loses nothing and folds nothing twice.
            last_id = int(last) if last is not None and re.fullmatch(r"[0-9]{1,18}", last.strip()) else 0
            return Response(200, b"", [("Content-Type", "text/event-stream; charset=utf-8"),
                                       ("Cache-Control", "no-store")], chunks=EventStream(self, last_id))
        if segments[:1] == ["api"]:
            return self.route_pokeapi(method, segments, query, headers)
        if segments and segments[0] in self.jp:
            return self.route_jp(method, segments, split.query, query, headers, body)
        return not_found_pokeapi() if split.path.startswith("/api") else not_found_jp()

    # ---- test routes (origins, redirects, limits)

    def route_test(self, name, q):
        """Routes under /test/ for the client's security and limit tests:
        /test/redirect?status=307&to=URL   answers `status` with Location: URL (any method)
        /test/page?id=a&next=URL&style=body|link
                                           one page {"results":[{"id":a}],"next":URL|null}; with
                                           style=link the next URL is a Link rel="next" header
        /test/page?pages=N[&page=K]        page K of N (row id pK); the next link repeats the
                                           query with page=K+1 and sig=srv-SIGNED-<K+1>
        /test/big?bytes=N&chunked=1        a JSON page padded to at least N bytes; chunked: no
                                           Content-Length, sent in 64 KiB chunks
        /test/trickle?bytes=N&interval_ms=M
                                           a chunked body of N bytes, one byte every M ms
        """
        try:
            if name == "redirect":
                status = int(q.get("status", "302"))
                if not 300 <= status <= 399 or "to" not in q:
                    raise ValueError("redirect needs a 3xx status and to=")
                return Response(status, b"", [("Location", q["to"])])
            if name == "page":
                next_url = q.get("next") or None
                style = q.get("style", "body")
                row_id = q.get("id", "1")
                if "pages" in q:
                    # Carried paging, as signed-URL APIs do: the next link repeats this query
                    # (tokens included) with page+1 and a server-made signature.
                    number, count = int(q.get("page", "0")), int(q["pages"])
                    row_id = "p%d" % number
                    carried = dict(q, page=str(number + 1), sig="srv-SIGNED-%d" % (number + 1))
                    next_url = "/test/page?" + urlencode(sorted(carried.items())) if number + 1 < count else None
                page = {"results": [{"id": row_id}], "next": next_url if style == "body" else None}
                extra = [("Link", '<%s>; rel="next"' % next_url)] if style == "link" and next_url else []
                return json_response(200, page, extra)
            if name == "big":
                size = int(q.get("bytes", "1048576"))
                if size < 0 or size > 1 << 30:
                    raise ValueError("bytes out of range")
                prefix, suffix = b'{"results":[{"id":"1","pad":"', b'"}],"next":null}'
                pad = max(0, size - len(prefix) - len(suffix))
                if q.get("chunked") == "1":
                    # Made as it is sent, so a huge body never sits in the server's memory.
                    def chunks(pad=pad, block=b"x" * 65536):
                        yield prefix
                        for start in range(0, pad, len(block)):
                            yield block[:min(len(block), pad - start)]
                        yield suffix
                    return Response(200, b"", [("Content-Type", JSON_TYPE)], chunks=chunks())
                return Response(200, prefix + b"x" * pad + suffix, [("Content-Type", JSON_TYPE)])
            if name == "trickle":
                size = int(q.get("bytes", "100000"))
                interval = int(q.get("interval_ms", "100")) / 1000.0
                if size < 0 or interval < 0:
                    raise ValueError("bytes and interval_ms must be >= 0")
                return Response(200, b"", [("Content-Type", JSON_TYPE)], chunks=(b" " for _ in range(size)), interval=interval)
        except ValueError as e:
            return json_response(400, {"error": str(e)})
        return json_response(404, {"error": "no test route %s" % name})

    # ---- PokeAPI

    def route_pokeapi(self, method, segments, query, headers):
        if method not in ("GET", "HEAD"):
            return json_response(405, {"detail": 'Method "%s" not allowed.' % method},
                                 [("Allow", "GET, HEAD")])
        if segments[:2] != ["api", "v2"]:
            return not_found_pokeapi()
        if len(segments) == 2:
            root = {res: "%s/api/v2/%s/" % (self.base_url, res) for res in POKEAPI_RESOURCES}
            return self.cached_get(method, headers, dumps(root), self.poke_last_modified)
        resource = segments[2]
        if resource not in POKEAPI_RESOURCES or len(segments) > 4:
            return not_found_pokeapi()
        if len(segments) == 3:
            try:
                return self.pokeapi_list(method, resource, query, headers)
            except BadRequest as e:
                return json_response(400, {"detail": str(e)})
        hit = self.poke.detail(resource, segments[3])
        if hit is None:
            return not_found_pokeapi()
        return self.cached_get(method, headers, hit[0], self.poke_last_modified)

    def pokeapi_list(self, method, resource, query, headers):
        params = {}
        for key, value in query:
            if key in ("offset", "limit") and key not in params:
                if not re.fullmatch(r"[0-9]+", value):
                    raise BadRequest("%s must be a non-negative integer" % key)
                params[key] = int(value)
        offset = params.get("offset", 0)
        # Like pokeapi.co (parseInt(limit) || 20): a missing or zero limit means 20.
        limit = params.get("limit") or 20
        entries = self.poke.lists[resource]
        count = len(entries)
        page_url = lambda o, l: "%s/api/v2/%s/?offset=%d&limit=%d" % (self.base_url, resource, o, l)
        # next/previous keep the requested limit (the form pokeapi.co uses); pokeapi.co itself
        # trims the limit of the last next page to the count, which this server does not do.
        nxt = page_url(offset + limit, limit) if offset + limit < count else None
        prev = page_url(max(offset - limit, 0), limit) if offset > 0 else None
        doc = {"count": count, "next": nxt, "previous": prev, "results": entries[offset:offset + limit]}
        return self.cached_get(method, headers, dumps(doc), self.poke_last_modified)

    # ---- JSONPlaceholder (json-server semantics)

    def route_jp(self, method, segments, raw_query, query, headers, body):
        if len(segments) > 3:
            return not_found_jp()
        name = segments[0]
        if method in ("GET", "HEAD"):
            with self.data_lock:
                return self.jp_get(method, segments, raw_query, query, headers)
        if method not in ("POST", "PUT", "PATCH", "DELETE"):
            return json_response(405, {}, [("Allow", "GET, HEAD, POST, PUT, PATCH, DELETE")])
        key = headers.get("Idempotency-Key")
        with self.data_lock:
            if key is not None and key in self.idempotency:
                first = self.idempotency[key]
                return Response(first.status, first.body, first.headers + [("Idempotent-Replayed", "true")])
            payload = {}
            if method != "DELETE" or body.strip():
                if body.strip():
                    try:
                        payload = json.loads(body.decode("utf-8"))
                    except (UnicodeDecodeError, ValueError):
                        return json_response(400, {"error": "Invalid JSON body"})
                if not isinstance(payload, dict):
                    return json_response(400, {"error": "JSON body must be an object"})
            resp = self.jp_write(method, segments, payload)
            if key is not None:
                self.idempotency[key] = resp
            return resp

    def _find(self, name, ident):
        for item in self.jp[name]:
            if js_string(item.get("id")) == ident:
                return item
        return None

    def jp_get(self, method, segments, raw_query, query, headers):
        name = segments[0]
        if len(segments) == 2:
            item = self._find(name, segments[1])
            if item is None:
                return not_found_jp()
            return self.cached_get(method, headers, dumps(item), self.jp_modified[name])
        rows = self.jp[name]
        extra_filters = []
        last_modified = self.jp_modified[name]
        if len(segments) == 3:
            child = segments[2]
            if child not in self.jp:
                return not_found_jp()
            extra_filters.append((name[:-1] + "Id", segments[1]))
            rows = self.jp[child]
            last_modified = self.jp_modified[child]
        rows, extra = select_rows(rows, query + extra_filters, self.base_url, segments, raw_query)
        return self.cached_get(method, headers, dumps(rows), last_modified, extra=extra)

    def jp_write(self, method, segments, payload):
        name = segments[0]
        if method == "POST":
            if len(segments) == 2:
                return not_found_jp()
            target = name
            row = {k: v for k, v in payload.items() if k != "id"}
            if len(segments) == 3:
                target = segments[2]
                if target not in self.jp:
                    return not_found_jp()
                parent = segments[1]
                row[name[:-1] + "Id"] = int(parent) if parent.isdigit() else parent
            ids = [r["id"] for r in self.jp[target] if _is_int(r.get("id"))]
            row["id"] = max(ids, default=0) + 1
            self.jp[target].append(row)
            self._touch(target)
            self.record_change(target, "upsert", rows=[row])
            return json_response(201, row, [("Location", "%s/%s/%d" % (self.base_url, target, row["id"]))])
        if len(segments) != 2:
            return not_found_jp()
        item = self._find(name, segments[1])
        if item is None:
            return not_found_jp()
        if method == "DELETE":
            self._delete_cascade(name, item)
            return json_response(200, {})
        ident = item["id"]
        if method == "PUT":
            item.clear()
            item["id"] = ident
        item.update({k: v for k, v in payload.items() if k != "id"})
        self._touch(name)
        self.record_change(name, "upsert", rows=[item])
        return json_response(200, item)

    def _delete_cascade(self, name, item):
        """Remove item and, like json-server, the rows whose foreign key (<singular>Id) points at it."""
        self.jp[name] = [r for r in self.jp[name] if r is not item]
        self._touch(name)
        self.record_change(name, "delete", ids=[js_string(item.get("id"))])
        fk, ident = name[:-1] + "Id", js_string(item.get("id"))
        for other in list(self.jp):
            dependents = [r for r in self.jp[other] if fk in r and js_string(r[fk]) == ident]
            for dep in dependents:
                if dep in self.jp[other]:
                    self._delete_cascade(other, dep)


# --------------------------------------------------------------------------- conditional requests

def not_modified(headers, etag, last_modified):
    """RFC 9110 section 13.2.2: If-None-Match first; If-Modified-Since only without it."""
    inm = headers.get("If-None-Match")
    if inm is not None:
        tags = parse_etags(inm)
        if tags == ["*"]:
            return True
        return any(weak_match(t, etag) for t in tags)
    ims = headers.get("If-Modified-Since")
    if ims is not None:
        try:
            when = email.utils.parsedate_to_datetime(ims)
        except (TypeError, ValueError, IndexError):
            return False
        if when is None:
            return False
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return int(last_modified) <= when.timestamp()
    return False


# --------------------------------------------------------------------------- json-server list semantics

SPECIAL_PARAMS = {"_page", "_limit", "_start", "_end", "_sort", "_order", "_embed", "_expand", "q",
                  "callback", "_"}


def _get_path(obj, path):
    cur = obj
    for part in path.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return _MISSING
    return cur


_MISSING = object()


def _to_number(s):
    try:
        return float(s)
    except ValueError:
        return None


def _match_one(op, wanted, value):
    if op in ("_gte", "_lte"):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            num = _to_number(wanted)
            if num is None:
                return False
            return value >= num if op == "_gte" else value <= num
        sv = js_string(value)
        return sv >= wanted if op == "_gte" else sv <= wanted
    sv = js_string(value)
    if op == "_ne":
        return sv != wanted
    if op == "_like":
        try:
            return re.search(wanted, sv, re.IGNORECASE) is not None
        except re.error:
            return False
    return sv == wanted


def _deep_query(value, q):
    if isinstance(value, dict):
        return any(_deep_query(v, q) for v in value.values())
    if isinstance(value, list):
        return any(_deep_query(v, q) for v in value)
    return q in js_string(value).lower()


def _int_or(value, default):
    m = re.match(r"\s*([+-]?[0-9]+)", value or "")
    return int(m.group(1)) if m else default


def _sort_key(value):
    if value is _MISSING or value is None:
        return (2, 0)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, value)
    return (1, js_string(value))


def select_rows(rows, query, base_url, segments, raw_query):
    """Filter, sort and slice like json-server 0.17; returns (rows, extra headers)."""
    filters = {}
    special = {}
    for key, value in query:
        if key in SPECIAL_PARAMS:
            special.setdefault(key, value)
        else:
            filters.setdefault(key, []).append(value)

    def keep(row):
        for key, wanted_values in filters.items():
            m = re.match(r"^(.*?)(_gte|_lte|_ne|_like)?$", key)
            path, op = m.group(1), m.group(2) or ""
            value = _get_path(row, path)
            if value is _MISSING or value is None:
                return False
            results = [_match_one(op, w, value) for w in wanted_values]
            if not (all(results) if op == "_ne" else any(results)):
                return False
        return True

    out = [r for r in rows if keep(r)]
    if "q" in special and special["q"] != "":
        q = special["q"].lower()
        out = [r for r in out if _deep_query(r, q)]
    if special.get("_sort"):
        fields = special["_sort"].split(",")
        orders = (special.get("_order") or "").split(",")
        for i in reversed(range(len(fields))):
            desc = i < len(orders) and orders[i].lower() == "desc"
            out.sort(key=lambda r, f=fields[i]: _sort_key(_get_path(r, f)), reverse=desc)

    headers = []
    total = len(out)
    if "_page" in special:
        page = max(_int_or(special["_page"], 1), 1)
        limit = _int_or(special.get("_limit"), 10)
        if limit <= 0:
            limit = 10
        start, end = (page - 1) * limit, page * limit
        items = out[start:end]
        headers.append(("X-Total-Count", str(total)))
        links = []
        if items:
            first = last = None
            prev_page = page - 1 if page > 1 else None
            next_page = page + 1 if end < total else None
            if len(items) != total:
                first, last = 1, (total + limit - 1) // limit
            path = "/" + "/".join(segments)

            def url(p):
                parts, done = [], False
                for piece in raw_query.split("&"):
                    if not done and piece.split("=", 1)[0] == "_page":
                        piece, done = "_page=%d" % p, True
                    parts.append(piece)
                return "%s%s?%s" % (base_url, path, "&".join(parts))

            for rel, p in (("first", first), ("prev", prev_page), ("next", next_page), ("last", last)):
                if p is not None:
                    links.append('<%s>; rel="%s"' % (url(p), rel))
        if links:
            headers.append(("Link", ", ".join(links)))
        out = items
    elif "_end" in special or "_limit" in special or "_start" in special:
        start = max(_int_or(special.get("_start"), 0), 0)
        if "_end" in special:
            end = _int_or(special["_end"], total)
        elif "_limit" in special:
            end = start + max(_int_or(special["_limit"], 0), 0)
        else:
            end = total
        headers.append(("X-Total-Count", str(total)))
        out = out[start:end]
    return out, headers


# --------------------------------------------------------------------------- HTTP plumbing

class EventStream:
    """The body of GET /events (text/event-stream, WHATWG HTML section 9.2): `retry:`, then every
    change after `last_id`, then each new change as it is made, one event each:

        id: 7
        event: change
        data: {"collection":"todos","op":"upsert","rows":[{...}]}

    with a `: keep-alive` comment after each quiet `sse_keepalive_ms`. The stream ends without
    a terminating chunk (a dropped connection) on {"sse_drop": true} or after `sse_drop_after`
    events."""

    def __init__(self, app, last_id):
        self.app = app
        self.last_id = last_id

    def run(self, write):
        app = self.app
        with app.state_lock:
            retry = app.control["sse_retry_ms"]
        with app.change_cond:
            generation = app.sse_generation
            app.sse_clients += 1
        try:
            write(b"retry: %d\n\n" % retry)
            sent = 0
            while True:
                with app.state_lock:
                    keepalive = app.control["sse_keepalive_ms"] / 1000.0
                    drop_after = app.control["sse_drop_after"]
                with app.change_cond:
                    pending = [c for c in app.changes if c[0] > self.last_id]
                    if not pending and app.sse_generation == generation:
                        app.change_cond.wait(keepalive)
                        pending = [c for c in app.changes if c[0] > self.last_id]
                    dropped = app.sse_generation != generation
                if dropped:
                    return
                if not pending:
                    write(b": keep-alive\n\n")
                    continue
                for ident, data in pending:
                    write(b"id: %d\nevent: change\ndata: %s\n\n" % (ident, data))
                    self.last_id = ident
                    sent += 1
                    if drop_after is not None and sent >= drop_after:
                        return
        finally:
            with app.change_cond:
                app.sse_clients -= 1


class FixtureHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, handler, app):
        self.app = app
        self.connections = set()
        self.connections_lock = threading.Lock()
        super().__init__(address, handler)

    def track(self, sock, add):
        with self.connections_lock:
            (self.connections.add if add else self.connections.discard)(sock)

    def close_connections(self):
        with self.connections_lock:
            conns = list(self.connections)
            self.connections.clear()
        for sock in conns:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError, OSError)):
            return  # client went away or the listener was closed on purpose
        print("fixture-server: error while handling a request: %r" % (exc,), file=sys.stderr)


class QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30  # idle keep-alive connections are closed after this many seconds

    def version_string(self):
        return SERVER_NAME

    def setup(self):
        super().setup()
        # Headers and body go out in two writes; without TCP_NODELAY, Nagle's algorithm and the
        # client's delayed ACK hold the body back ~40 ms on every keep-alive response.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.track(self.connection, True)

    def finish(self):
        try:
            super().finish()
        finally:
            self.server.track(self.connection, False)

    def log_message(self, format, *args):
        pass

    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks, total = [], 0
            while True:
                line = self.rfile.readline(65537)
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                total += size
                if total > MAX_BODY:
                    raise BadRequest("body too large")
                chunks.append(self.rfile.read(size))
                self.rfile.readline(65537)
        length = self.headers.get("Content-Length")
        if not length:
            return b""
        n = int(length)
        if n < 0 or n > MAX_BODY:
            raise BadRequest("bad Content-Length")
        return self.rfile.read(n)

    def send(self, resp, head=False):
        if isinstance(resp.chunks, EventStream) and not head:
            return self.send_event_stream(resp)
        if isinstance(resp.chunks, EventStream):
            resp.chunks = None
        if resp.chunks is not None and not head:
            return self.send_chunked(resp)
        self.send_response(resp.status)
        names = set()
        for k, v in resp.headers:
            self.send_header(k, v)
            names.add(k.lower())
        if resp.status >= 200 and resp.status not in (204, 304):
            self.send_header("Content-Length", str(len(resp.body)))
        self.end_headers()
        if not head and resp.status >= 200 and resp.status not in (204, 304) and resp.body:
            self.wfile.write(resp.body)
        self.wfile.flush()

    def send_chunked(self, resp):
        """Streams resp.chunks with Transfer-Encoding: chunked, resp.interval seconds apart.
        A client that goes away ends it (the write fails)."""
        self.send_response(resp.status)
        for k, v in resp.headers:
            self.send_header(k, v)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        try:
            for chunk in resp.chunks:
                if resp.interval > 0:
                    time.sleep(resp.interval)
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            pass  # the client stopped reading (a size limit or a deadline): nothing more to send


    def send_event_stream(self, resp):
        """Streams an EventStream chunk by chunk. Its end is a dropped connection: no
        terminating chunk, the socket shut down, as a network failure looks to the client."""
        self.send_response(resp.status)
        for k, v in resp.headers:
            self.send_header(k, v)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True

        def write(data):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        try:
            resp.chunks.run(write)
        except OSError:
            return  # the client went away
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class APIHandler(QuietHandler):
    def handle_any(self):
        app = self.server.app
        method = self.command.upper()
        if app.api_server is not self.server:
            self.close_connection = True  # listener closed by "refuse": drop the connection
            return
        try:
            body = self.read_body()
        except (BadRequest, ValueError):
            self.close_connection = True
            resp = json_response(400, {"error": "Bad request body"})
            app.log_request(method, self.path, resp.status, self.headers, b"")
            self.send(resp)
            return
        delay = app.delay_seconds()
        if delay > 0:
            time.sleep(delay)
        path = urlsplit(self.path).path
        resp = app.take_failure(method, path)
        if resp is None and app.wants_malformed(method, path):
            resp = Response(200, b"this is not json", [("Content-Type", JSON_TYPE)])
        if resp is None:
            try:
                resp = app.route(method, self.path, self.headers, body)
            except Exception as e:  # a bug here must still answer and be visible
                print("fixture-server: internal error for %s %s: %r" % (method, self.path, e), file=sys.stderr)
                resp = json_response(500, {"detail": "Internal fixture server error."})
        # Logged before the answer leaves, so a client that has its response finds the entry.
        app.log_request(method, self.path, resp.status, self.headers, body)
        self.send(resp, head=(method == "HEAD"))

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = handle_any


class ControlHandler(QuietHandler):
    def reply(self, status, obj):
        self.send(json_response(status, obj))

    def do_GET(self):
        app = self.server.app
        path = urlsplit(self.path).path.rstrip("/")
        if path == "/requests":
            self.reply(200, app.requests_snapshot())
        elif path == "/control":
            self.reply(200, dict(ok=True, **app.control_snapshot()))
        elif path in ("", "/health"):
            self.reply(200, {"ok": True})
        else:
            self.reply(404, {"ok": False, "error": "not found"})

    def do_POST(self):
        app = self.server.app
        path = urlsplit(self.path).path.rstrip("/")
        try:
            body = self.read_body()
        except (BadRequest, ValueError) as e:
            self.close_connection = True
            return self.reply(400, {"ok": False, "error": str(e)})
        if path == "/requests/clear":
            app.clear_requests()
            return self.reply(200, {"ok": True})
        if path != "/control":
            return self.reply(404, {"ok": False, "error": "not found"})
        try:
            update = json.loads(body.decode("utf-8")) if body.strip() else {}
            state = app.apply_control(update)
        except (UnicodeDecodeError, ValueError) as e:
            return self.reply(400, {"ok": False, "error": "invalid JSON: %s" % e})
        except BadRequest as e:
            return self.reply(400, {"ok": False, "error": str(e)})
        except OSError as e:
            return self.reply(500, {"ok": False, "error": "could not listen again: %s" % e})
        self.reply(200, dict(ok=True, **state))


# --------------------------------------------------------------------------- main

def default_data_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(os.path.dirname(here)), "fixtures")


def main(argv=None):
    p = argparse.ArgumentParser(description="Freshet fixture API server (PokeAPI + JSONPlaceholder).")
    p.add_argument("--data", default=default_data_dir(), help="fixtures directory (default: %(default)s)")
    p.add_argument("--port", type=int, default=0, help="API port (0: any free port)")
    p.add_argument("--control-port", type=int, default=0, help="control port (0: any free port)")
    p.add_argument("--max-age", type=int, default=60, help="Cache-Control max-age in seconds (default 60)")
    p.add_argument("--request-log", default=None, help="append one JSON line per API request to this file")
    args = p.parse_args(argv)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    # A parent that spawned us from a thread with SIGTERM/SIGINT blocked (Foundation's Process
    # from a Swift concurrency thread) passed that mask on through exec: unblock them, so the
    # server stops on SIGTERM however it was started. Before any thread starts: they inherit it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})

    try:
        app = App(os.path.abspath(args.data), args.max_age, args.request_log)
        app.control_port = None
        app.start_api(args.port)
        control = FixtureHTTPServer((HOST, args.control_port), ControlHandler, app)
    except (OSError, ValueError, KeyError) as e:
        print("fixture-server: cannot start: %s" % e, file=sys.stderr)
        return 1
    app.control_port = control.server_address[1]
    threading.Thread(target=control.serve_forever, kwargs={"poll_interval": 0.05},
                     name="control", daemon=True).start()

    ready = {"port": app.api_port, "control_port": app.control_port, "base_url": app.base_url}
    sys.stdout.write(json.dumps(ready) + "\n")
    sys.stdout.flush()

    while not stop.wait(0.5):
        pass

    control.shutdown()
    control.server_close()
    control.close_connections()
    with app.server_lock:
        if app.api_server is not None:
            app.api_server.shutdown()
            app.api_server.server_close()
            app.api_server.close_connections()
    if app.log_file is not None:
        with app.log_lock:
            app.log_file.close()
            app.log_file = None
    return 0


if __name__ == "__main__":
    try:
        code = main()
    except KeyboardInterrupt:
        code = 0
    sys.exit(code)
