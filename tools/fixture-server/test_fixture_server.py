"""Tests for the fixture API server (unittest, standard library only).

Run: python3 -m unittest discover -s tools/fixture-server -v
"""

import email.utils
import hashlib
import http.client
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "fixture_server.py")

# Never go through a proxy for loopback, whatever the environment says.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def start_server(*extra, preexec_fn=None):
    """Start the server on free ports; return (process, ready dict)."""
    proc = subprocess.Popen([sys.executable, SERVER, "--port", "0", "--control-port", "0", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=preexec_fn)
    ready, _, _ = select.select([proc.stdout], [], [], 20)
    if not ready:
        proc.kill()
        raise RuntimeError("fixture server did not print its ready line")
    line = proc.stdout.readline()
    if not line:
        proc.wait(5)
        raise RuntimeError("fixture server exited: %s" % proc.stderr.read())
    return proc, json.loads(line)


def stop_server(proc, sig=signal.SIGTERM):
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        raise
    return proc.returncode, err


def request(method, url, body=None, headers=None, timeout=10):
    """Return (status, headers, body bytes); HTTP errors and 304 are returned, not raised."""
    data = None
    headers = dict(headers or {})
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        headers.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with OPENER.open(req, timeout=timeout) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.headers, e.read()


class FixtureServerTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.log_path = os.path.join(cls.tmp.name, "logs", "requests.jsonl")
        cls.proc, cls.ready = start_server("--max-age", "60", "--request-log", cls.log_path)
        cls.base = cls.ready["base_url"]
        cls.control = "http://127.0.0.1:%d" % cls.ready["control_port"]

    @classmethod
    def tearDownClass(cls):
        code, err = stop_server(cls.proc)
        cls.tmp.cleanup()
        assert code == 0, "server exit status %r, stderr: %s" % (code, err)

    def setUp(self):
        self.ctl({"reset": True})
        status, _, _ = request("POST", self.control + "/requests/clear", body=b"")
        self.assertEqual(status, 200)

    # ---- helpers

    def ctl(self, update):
        status, _, body = request("POST", self.control + "/control", body=update)
        self.assertEqual(status, 200, body)
        state = json.loads(body)
        self.assertTrue(state["ok"])
        return state

    def get(self, path, headers=None):
        return request("GET", self.base + path, headers=headers)

    def get_json(self, path, headers=None):
        status, hdrs, body = self.get(path, headers)
        self.assertEqual(status, 200, body)
        return json.loads(body), hdrs

    def logged(self):
        status, _, body = request("GET", self.control + "/requests")
        self.assertEqual(status, 200)
        return json.loads(body)

    # ---- ready line

    def test_ready_line(self):
        self.assertEqual(set(self.ready), {"port", "control_port", "base_url"})
        self.assertEqual(self.ready["base_url"], "http://127.0.0.1:%d" % self.ready["port"])
        self.assertNotEqual(self.ready["port"], self.ready["control_port"])

    # ---- PokeAPI

    def test_pokemon_paging_reaches_151(self):
        page_url = lambda o, l: "%s/api/v2/pokemon/?offset=%d&limit=%d" % (self.base, o, l)
        doc, _ = self.get_json("/api/v2/pokemon/")
        self.assertEqual(doc["count"], 151)
        self.assertIsNone(doc["previous"])
        self.assertEqual(doc["next"], page_url(20, 20))
        self.assertEqual(doc["results"][0], {"name": "bulbasaur", "url": "/api/v2/pokemon/1/"})
        names, pages, url = [], 0, self.base + "/api/v2/pokemon/?offset=0&limit=20"
        previous = []
        while url:
            self.assertTrue(url.startswith(self.base))
            doc, _ = self.get_json(url[len(self.base):])
            self.assertEqual(doc["count"], 151)
            names.extend(e["name"] for e in doc["results"])
            previous.append(doc["previous"])
            pages += 1
            for e in doc["results"]:
                self.assertRegex(e["url"], r"^/api/v2/pokemon/[0-9]+/$")
            url = doc["next"]
        self.assertEqual(pages, 8)
        self.assertEqual(len(names), 151)
        self.assertEqual(names[-1], "mew")
        self.assertEqual(names[24], "pikachu")
        self.assertEqual(previous[1], page_url(0, 20))
        self.assertEqual(previous[7], page_url(120, 20))
        self.assertEqual(previous[0], None)

    def test_pokemon_next_previous_exact(self):
        doc, _ = self.get_json("/api/v2/pokemon/?offset=20&limit=20")
        self.assertEqual(doc["next"], self.base + "/api/v2/pokemon/?offset=40&limit=20")
        self.assertEqual(doc["previous"], self.base + "/api/v2/pokemon/?offset=0&limit=20")
        self.assertEqual([e["url"] for e in doc["results"][:2]], ["/api/v2/pokemon/21/", "/api/v2/pokemon/22/"])
        # The limit is kept on next and previous.
        doc, _ = self.get_json("/api/v2/pokemon/?offset=120&limit=20")
        self.assertEqual(doc["next"], self.base + "/api/v2/pokemon/?offset=140&limit=20")
        doc, _ = self.get_json("/api/v2/pokemon/?offset=10&limit=20")
        self.assertEqual(doc["previous"], self.base + "/api/v2/pokemon/?offset=0&limit=20")
        self.assertEqual(doc["next"], self.base + "/api/v2/pokemon/?offset=30&limit=20")
        doc, _ = self.get_json("/api/v2/pokemon/?offset=140&limit=20")
        self.assertIsNone(doc["next"])
        self.assertEqual(len(doc["results"]), 11)
        doc, _ = self.get_json("/api/v2/pokemon/?limit=151")
        self.assertEqual(len(doc["results"]), 151)
        self.assertIsNone(doc["next"])

    def test_paths_with_and_without_trailing_slash(self):
        a = self.get("/api/v2/pokemon?offset=0&limit=5")
        b = self.get("/api/v2/pokemon/?offset=0&limit=5")
        self.assertEqual((a[0], a[2]), (b[0], b[2]))
        c = self.get("/api/v2/pokemon/25")
        d = self.get("/api/v2/pokemon/25/")
        self.assertEqual((c[0], c[2]), (d[0], d[2]))

    def test_species_list_and_detail(self):
        doc, _ = self.get_json("/api/v2/pokemon-species/?offset=140&limit=20")
        self.assertEqual(doc["count"], 151)
        self.assertEqual(doc["results"][-1], {"name": "mew", "url": "/api/v2/pokemon-species/151/"})
        doc, _ = self.get_json("/api/v2/pokemon-species/25/")
        self.assertEqual((doc["id"], doc["name"]), (25, "pikachu"))

    def test_detail_pikachu(self):
        doc, headers = self.get_json("/api/v2/pokemon/25/")
        self.assertEqual((doc["id"], doc["name"]), (25, "pikachu"))
        self.assertEqual(headers["Content-Type"], "application/json; charset=utf-8")
        self.assertIsNone(headers.get("Content-Encoding"))
        doc, _ = self.get_json("/api/v2/pokemon/pikachu/")
        self.assertEqual(doc["id"], 25)

    def test_not_found_and_bad_paging(self):
        for path in ("/api/v2/pokemon/152/", "/api/v2/pokemon/0/", "/api/v2/pokemon/nope/", "/api/v2/berry/"):
            status, _, body = self.get(path)
            self.assertEqual(status, 404, path)
            self.assertEqual(json.loads(body), {"detail": "Not found."})
        for q in ("offset=abc", "offset=-1", "limit=-5", "limit=2.5"):
            status, headers, body = self.get("/api/v2/pokemon/?" + q)
            self.assertEqual(status, 400, q)
            self.assertIn("detail", json.loads(body))
            self.assertEqual(headers["Content-Type"], "application/json; charset=utf-8")

    # ---- caching

    def test_etag_and_304(self):
        status, headers, body = self.get("/api/v2/pokemon/25/")
        self.assertEqual(status, 200)
        etag = headers["ETag"]
        self.assertRegex(etag, r'^"[0-9a-f]{32}"$')
        self.assertEqual(etag, '"%s"' % hashlib.sha256(body).hexdigest()[:32])
        self.assertEqual(headers["Cache-Control"], "max-age=60")
        self.assertEqual(int(headers["Content-Length"]), len(body))
        self.assertIsNotNone(email.utils.parsedate_to_datetime(headers["Date"]))
        self.assertIsNotNone(email.utils.parsedate_to_datetime(headers["Last-Modified"]))

        for inm in (etag, "W/" + etag, '"nope", ' + etag, "*"):
            status, h304, body304 = self.get("/api/v2/pokemon/25/", {"If-None-Match": inm})
            self.assertEqual(status, 304, inm)
            self.assertEqual(body304, b"")
            self.assertEqual(h304["ETag"], etag)
            self.assertEqual(h304["Cache-Control"], "max-age=60")
            self.assertIsNotNone(h304["Date"])
        status, _, body2 = self.get("/api/v2/pokemon/25/", {"If-None-Match": '"0000"'})
        self.assertEqual((status, body2), (200, body))
        # A page has its own ETag.
        _, h1, _ = self.get("/api/v2/pokemon/?offset=0&limit=20")
        _, h2, _ = self.get("/api/v2/pokemon/?offset=20&limit=20")
        self.assertNotEqual(h1["ETag"], h2["ETag"])

    def test_if_modified_since(self):
        _, headers, _ = self.get("/api/v2/pokemon/1/")
        lm = headers["Last-Modified"]
        status, _, body = self.get("/api/v2/pokemon/1/", {"If-Modified-Since": lm})
        self.assertEqual((status, body), (304, b""))
        later = email.utils.formatdate(email.utils.parsedate_to_datetime(lm).timestamp() + 3600, usegmt=True)
        self.assertEqual(self.get("/api/v2/pokemon/1/", {"If-Modified-Since": later})[0], 304)
        earlier = email.utils.formatdate(email.utils.parsedate_to_datetime(lm).timestamp() - 1, usegmt=True)
        self.assertEqual(self.get("/api/v2/pokemon/1/", {"If-Modified-Since": earlier})[0], 200)
        # If-None-Match wins over If-Modified-Since (RFC 9110 section 13.2.2).
        status, _, _ = self.get("/api/v2/pokemon/1/", {"If-None-Match": '"other"', "If-Modified-Since": lm})
        self.assertEqual(status, 200)
        self.assertEqual(self.get("/api/v2/pokemon/1/", {"If-Modified-Since": "garbage"})[0], 200)

    def test_max_age_control(self):
        self.ctl({"max_age": 5})
        _, headers, _ = self.get("/todos/1")
        self.assertEqual(headers["Cache-Control"], "max-age=5")
        self.ctl({"reset": True})
        _, headers, _ = self.get("/todos/1")
        self.assertEqual(headers["Cache-Control"], "max-age=60")

    # ---- JSONPlaceholder reads

    def test_todos_page_link_and_total(self):
        status, headers, body = self.get("/todos?_page=2&_limit=10")
        self.assertEqual(status, 200)
        rows = json.loads(body)
        self.assertEqual([r["id"] for r in rows], list(range(11, 21)))
        self.assertEqual(headers["X-Total-Count"], "200")
        b = self.base
        self.assertEqual(headers["Link"],
                         '<%s/todos?_page=1&_limit=10>; rel="first", '
                         '<%s/todos?_page=1&_limit=10>; rel="prev", '
                         '<%s/todos?_page=3&_limit=10>; rel="next", '
                         '<%s/todos?_page=20&_limit=10>; rel="last"' % (b, b, b, b))
        _, headers, _ = self.get("/todos?_page=20&_limit=10")
        self.assertNotIn('rel="next"', headers["Link"])
        _, headers, body = self.get("/todos?_start=5&_end=8")
        self.assertEqual([r["id"] for r in json.loads(body)], [6, 7, 8])
        self.assertEqual(headers["X-Total-Count"], "200")

    def test_todos_list_item_filters_nested(self):
        rows, headers = self.get_json("/todos")
        self.assertEqual(len(rows), 200)
        self.assertIsNone(headers.get("X-Total-Count"))
        item, _ = self.get_json("/todos/1")
        self.assertEqual(item, {"userId": 1, "id": 1, "title": "delectus aut autem", "completed": False})
        status, _, body = self.get("/todos/9999")
        self.assertEqual((status, json.loads(body)), (404, {}))
        rows, _ = self.get_json("/todos?userId=1&completed=false")
        self.assertTrue(rows)
        self.assertTrue(all(r["userId"] == 1 and r["completed"] is False for r in rows))
        comments, _ = self.get_json("/posts/1/comments")
        self.assertEqual(len(comments), 5)
        self.assertTrue(all(c["postId"] == 1 for c in comments))
        todos, _ = self.get_json("/users/1/todos/")
        self.assertEqual(len(todos), 20)
        rows, _ = self.get_json("/todos?id=3&id=5")
        self.assertEqual([r["id"] for r in rows], [3, 5])
        rows, _ = self.get_json("/todos?_sort=id&_order=desc&_limit=2")
        self.assertEqual([r["id"] for r in rows], [200, 199])

    # ---- JSONPlaceholder writes

    def test_post_patch_put_delete_change_later_gets(self):
        _, h0, _ = self.get("/todos")
        etag0 = h0["ETag"]
        status, headers, body = request("POST", self.base + "/todos",
                                        body={"userId": 1, "title": "new one", "completed": False, "id": "tmp-1"})
        self.assertEqual(status, 201)
        created = json.loads(body)
        self.assertEqual(created["id"], 201)
        self.assertEqual(created["title"], "new one")
        self.assertEqual(self.get_json("/todos/201")[0], created)
        rows, h1 = self.get_json("/todos")
        self.assertEqual(len(rows), 201)
        self.assertNotEqual(h1["ETag"], etag0)
        self.assertEqual(self.get("/todos", {"If-None-Match": etag0})[0], 200)
        self.assertEqual(self.get("/todos", {"If-None-Match": h1["ETag"]})[0], 304)
        # The collection's Last-Modified moved past the date a client saw before the write.
        self.assertEqual(self.get("/todos", {"If-Modified-Since": h0["Last-Modified"]})[0], 200)

        status, _, body = request("PATCH", self.base + "/todos/1", body={"completed": True})
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body), {"userId": 1, "id": 1, "title": "delectus aut autem", "completed": True})
        self.assertTrue(self.get_json("/todos/1")[0]["completed"])

        status, _, body = request("PUT", self.base + "/todos/2", body={"title": "replaced"})
        self.assertEqual((status, json.loads(body)), (200, {"id": 2, "title": "replaced"}))
        self.assertEqual(self.get_json("/todos/2")[0], {"id": 2, "title": "replaced"})

        status, _, body = request("DELETE", self.base + "/todos/1")
        self.assertEqual((status, json.loads(body)), (200, {}))
        self.assertEqual(self.get("/todos/1")[0], 404)
        self.assertEqual(request("DELETE", self.base + "/todos/1")[0], 404)
        self.assertEqual(request("PATCH", self.base + "/todos/9999", body={"a": 1})[0], 404)

        # Nested create sets the foreign key; invalid bodies are rejected.
        status, _, body = request("POST", self.base + "/posts/1/comments", body={"body": "hi"})
        self.assertEqual(status, 201)
        self.assertEqual(json.loads(body)["postId"], 1)
        self.assertEqual(len(self.get_json("/posts/1/comments")[0]), 6)
        self.assertEqual(request("POST", self.base + "/todos", body=b"{not json")[0], 400)
        self.assertEqual(request("POST", self.base + "/todos", body=b"[1,2]")[0], 400)

        # reset restores the original data
        self.ctl({"reset": True})
        rows, h2 = self.get_json("/todos")
        self.assertEqual(len(rows), 200)
        self.assertEqual(h2["ETag"], etag0)

    def test_idempotency_key_replay(self):
        key = {"Idempotency-Key": "mutation-1"}
        first = request("POST", self.base + "/todos", body={"title": "once"}, headers=key)
        second = request("POST", self.base + "/todos", body={"title": "twice?"}, headers=key)
        self.assertEqual(first[0], 201)
        self.assertEqual((second[0], second[2]), (first[0], first[2]))
        self.assertEqual(json.loads(second[2])["title"], "once")
        self.assertEqual(len(self.get_json("/todos")[0]), 201)
        d1 = request("DELETE", self.base + "/todos/5", headers={"Idempotency-Key": "del-5"})
        d2 = request("DELETE", self.base + "/todos/5", headers={"Idempotency-Key": "del-5"})
        self.assertEqual((d1[0], d1[2]), (200, b"{}"))
        self.assertEqual((d2[0], d2[2]), (200, b"{}"))
        p1 = request("PATCH", self.base + "/todos/6", body={"title": "a"}, headers={"Idempotency-Key": "p6"})
        p2 = request("PATCH", self.base + "/todos/6", body={"title": "b"}, headers={"Idempotency-Key": "p6"})
        self.assertEqual(p1[2], p2[2])
        self.assertEqual(self.get_json("/todos/6")[0]["title"], "a")
        keys = [e["idempotency_key"] for e in self.logged() if e["method"] != "GET"]
        self.assertEqual(keys, ["mutation-1", "mutation-1", "del-5", "del-5", "p6", "p6"])
        # reset forgets the keys
        self.ctl({"reset": True})
        again = request("POST", self.base + "/todos", body={"title": "fresh"}, headers=key)
        self.assertEqual(json.loads(again[2])["title"], "fresh")

    # ---- control

    def test_fail_status_with_count(self):
        state = self.ctl({"fail_status": 503, "fail_count": 2, "retry_after": "1"})
        self.assertEqual((state["fail_status"], state["fail_count"]), (503, 2))
        for _ in range(2):
            status, headers, body = self.get("/api/v2/pokemon/1/")
            self.assertEqual(status, 503)
            self.assertEqual(headers["Retry-After"], "1")
            self.assertEqual(json.loads(body)["status"], 503)
        status, headers, _ = self.get("/api/v2/pokemon/1/")
        self.assertEqual(status, 200)
        self.assertIsNone(headers.get("Retry-After"))
        self.assertEqual([e["status"] for e in self.logged()], [503, 503, 200])

    def test_fail_filters_by_prefix_and_method(self):
        self.ctl({"fail_status": 500, "fail_path_prefix": "/todos", "fail_method": "post"})
        self.assertEqual(self.get("/todos/1")[0], 200)
        self.assertEqual(self.get("/api/v2/pokemon/1/")[0], 200)
        self.assertEqual(request("POST", self.base + "/todos", body={"x": 1})[0], 500)
        self.assertEqual(request("POST", self.base + "/todos", body={"x": 1})[0], 500)
        self.assertEqual(len(self.get_json("/todos")[0]), 200)  # the failed writes were not applied
        self.ctl({"fail_status": None})
        self.assertEqual(request("POST", self.base + "/todos", body={"x": 1})[0], 201)

    def test_malformed(self):
        self.ctl({"malformed": True})
        status, headers, body = self.get("/api/v2/pokemon/25/")
        self.assertEqual(status, 200)
        self.assertEqual(body, b"this is not json")
        self.assertTrue(headers["Content-Type"].startswith("application/json"))
        self.ctl({"malformed": False})
        self.assertEqual(self.get_json("/api/v2/pokemon/25/")[0]["name"], "pikachu")

    def test_refuse_then_listen_again_on_same_port(self):
        state = self.ctl({"refuse": True})
        self.assertTrue(state["refuse"])
        with self.assertRaises(urllib.error.URLError) as cm:
            request("GET", self.base + "/todos/1", timeout=5)
        self.assertIsInstance(cm.exception.reason, ConnectionRefusedError)
        # the control port keeps working
        self.assertEqual(request("GET", self.control + "/requests")[0], 200)
        state = self.ctl({"refuse": False})
        self.assertFalse(state["refuse"])
        self.assertEqual(state["port"], self.ready["port"])
        self.assertEqual(self.get("/todos/1")[0], 200)

    def test_keep_alive_and_head(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.ready["port"], timeout=10)
        try:
            conn.request("GET", "/api/v2/pokemon/1/")
            r1 = conn.getresponse()
            body = r1.read()
            etag = r1.getheader("ETag")
            conn.request("GET", "/api/v2/pokemon/1/", headers={"If-None-Match": etag})
            r2 = conn.getresponse()
            self.assertEqual((r2.status, r2.read()), (304, b""))
            conn.request("HEAD", "/api/v2/pokemon/1/")
            r3 = conn.getresponse()
            self.assertEqual(r3.status, 200)
            self.assertEqual(int(r3.getheader("Content-Length")), len(body))
            self.assertEqual(r3.read(), b"")
            conn.request("POST", "/todos", body=b'{"title":"k"}', headers={"Content-Type": "application/json"})
            r4 = conn.getresponse()
            self.assertEqual(r4.status, 201)
            r4.read()
            conn.request("GET", "/todos/201")
            r5 = conn.getresponse()
            self.assertEqual(json.loads(r5.read())["title"], "k")
        finally:
            conn.close()

    def test_refuse_drops_open_connections(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.ready["port"], timeout=10)
        try:
            conn.request("GET", "/users/1")
            r = conn.getresponse()
            r.read()
            self.assertEqual(r.status, 200)
            self.ctl({"refuse": True})
            with self.assertRaises((ConnectionError, http.client.HTTPException)):
                conn.request("GET", "/users/1")
                conn.getresponse().read()
        finally:
            conn.close()
        self.ctl({"refuse": False})
        self.assertEqual(self.get("/users/1")[0], 200)

    def test_delay(self):
        self.ctl({"delay_ms": 30})
        t0 = time.monotonic()
        self.assertEqual(self.get("/todos/1")[0], 200)
        self.assertGreaterEqual(time.monotonic() - t0, 0.03)

    def test_control_validation(self):
        for bad in ({"delay_ms": -1}, {"fail_status": "x"}, {"bogus": 1}, {"refuse": 1}, [1]):
            status, _, body = request("POST", self.control + "/control", body=bad)
            self.assertEqual(status, 400, bad)
            self.assertFalse(json.loads(body)["ok"])
        status, _, body = request("POST", self.control + "/control", body=b"{nope")
        self.assertEqual(status, 400)

    # ---- request log

    def test_request_log(self):
        _, headers, _ = self.get("/api/v2/pokemon/?offset=20&limit=20")
        self.get("/api/v2/pokemon/?offset=20&limit=20", {"If-None-Match": headers["ETag"],
                                                         "If-Modified-Since": headers["Last-Modified"]})
        request("POST", self.base + "/todos", body={"a": 1}, headers={"Idempotency-Key": "k-log"})
        entries = self.logged()
        self.assertEqual(len(entries), 3)
        for e in entries:
            self.assertEqual(set(e), {"time", "method", "path", "status", "if_none_match",
                                      "if_modified_since", "idempotency_key", "headers", "body"})
            self.assertRegex(e["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
        self.assertEqual((entries[0]["method"], entries[0]["path"], entries[0]["status"]),
                         ("GET", "/api/v2/pokemon/?offset=20&limit=20", 200))
        self.assertIsNone(entries[0]["if_none_match"])
        self.assertEqual(entries[1]["status"], 304)
        self.assertEqual(entries[1]["if_none_match"], headers["ETag"])
        self.assertEqual(entries[1]["if_modified_since"], headers["Last-Modified"])
        self.assertEqual((entries[2]["method"], entries[2]["status"], entries[2]["idempotency_key"]),
                         ("POST", 201, "k-log"))
        self.assertEqual(entries[2]["body"], '{"a": 1}')
        self.assertIn(["Idempotency-Key", "k-log"], entries[2]["headers"])
        # control requests are not logged; the file has the same lines, flushed
        with open(self.log_path, encoding="utf-8") as f:
            lines = [json.loads(line) for line in f if line.strip()]
        self.assertEqual(lines[-3:], entries)
        request("POST", self.control + "/requests/clear", body=b"")
        self.assertEqual(self.logged(), [])


class BlockedSignalTests(unittest.TestCase):
    """A parent that starts the server with SIGTERM and SIGINT blocked (Foundation's Process
    from a Swift concurrency thread does) can still stop it with either signal."""

    def stop_with(self, sig):
        def block():
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        proc, _ = start_server(preexec_fn=block)
        with open("/proc/%d/status" % proc.pid) as status:
            blocked = int(next(l for l in status if l.startswith("SigBlk:")).split()[1], 16)
        code, err = stop_server(proc, sig)
        self.assertEqual((blocked >> (signal.SIGTERM - 1)) & 1, 0, "SIGTERM still blocked")
        self.assertEqual((blocked >> (signal.SIGINT - 1)) & 1, 0, "SIGINT still blocked")
        self.assertEqual(code, 0, err)

    def test_sigterm_stops_it(self):
        self.stop_with(signal.SIGTERM)

    def test_sigint_stops_it(self):
        self.stop_with(signal.SIGINT)


class TestRouteTests(unittest.TestCase):
    """The /test/ routes the client's origin and limit tests use."""

    @classmethod
    def setUpClass(cls):
        cls.proc, cls.ready = start_server()
        cls.host, cls.port = "127.0.0.1", cls.ready["port"]

    @classmethod
    def tearDownClass(cls):
        stop_server(cls.proc)

    def raw(self, method, path, body=None, headers=None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, r.headers, r.read()
        finally:
            conn.close()

    def test_redirect_answers_the_status_and_location_for_any_method(self):
        for method in ("GET", "POST"):
            status, headers, body = self.raw(method, "/test/redirect?status=307&to=http%3A%2F%2F127.0.0.1%3A9%2Ftodos", body=b"{}")
            self.assertEqual((status, headers["Location"], body), (307, "http://127.0.0.1:9/todos", b""))
        self.assertEqual(self.raw("GET", "/test/redirect?status=200&to=x")[0], 400)

    def test_page_puts_next_in_the_body_or_a_link_header(self):
        status, headers, body = self.raw("GET", "/test/page?id=a&next=http%3A%2F%2Fo%2Fp")
        self.assertEqual((status, json.loads(body), headers["Link"]), (200, {"results": [{"id": "a"}], "next": "http://o/p"}, None))
        status, headers, body = self.raw("GET", "/test/page?id=b&next=http%3A%2F%2Fo%2Fp&style=link")
        self.assertEqual((json.loads(body), headers["Link"]), ({"results": [{"id": "b"}], "next": None}, '<http://o/p>; rel="next"'))

    def test_carried_paging_repeats_the_query_with_a_signature(self):
        status, _, body = self.raw("GET", "/test/page?pages=2&access_token=t1")
        self.assertEqual(json.loads(body), {"results": [{"id": "p0"}], "next": "/test/page?access_token=t1&page=1&pages=2&sig=srv-SIGNED-1"})
        status, _, body = self.raw("GET", "/test/page?access_token=t1&page=1&pages=2&sig=srv-SIGNED-1")
        self.assertEqual(json.loads(body), {"results": [{"id": "p1"}], "next": None})

    def test_big_is_valid_json_of_the_asked_size_with_or_without_content_length(self):
        status, headers, body = self.raw("GET", "/test/big?bytes=100000")
        self.assertEqual((status, len(body), headers["Content-Length"]), (200, 100000, "100000"))
        self.assertEqual(json.loads(body)["results"][0]["id"], "1")
        status, headers, body = self.raw("GET", "/test/big?bytes=200000&chunked=1")
        self.assertEqual((status, len(body), headers["Content-Length"], headers["Transfer-Encoding"]), (200, 200000, None, "chunked"))

    def test_trickle_sends_one_byte_per_interval(self):
        status, headers, body = self.raw("GET", "/test/trickle?bytes=3&interval_ms=10")
        self.assertEqual((status, body, headers["Transfer-Encoding"]), (200, b"   ", "chunked"))


class EventStreamReader:
    """Reads GET /events on its own connection and parses events (enough of WHATWG HTML
    section 9.2.6 for this server's output: LF line ends, id/event/data/retry, comments)."""

    def __init__(self, port, last_event_id=None):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        self.conn.request("GET", "/events", headers=headers)
        self.resp = self.conn.getresponse()
        self.buffer = b""
        self.retry = None
        self.comments = 0

    def close(self):
        self.conn.close()

    def next_event(self):
        """The next event as (id, type, data dict); None when the stream ended."""
        while True:
            while b"\n\n" not in self.buffer:
                try:
                    chunk = self.resp.read1(65536)
                except (http.client.IncompleteRead, ConnectionError):
                    chunk = b""
                if not chunk:
                    return None
                self.buffer += chunk
            block, self.buffer = self.buffer.split(b"\n\n", 1)
            fields = {}
            for line in block.decode("utf-8").split("\n"):
                if line.startswith(":"):
                    self.comments += 1
                    continue
                name, _, value = line.partition(":")
                fields.setdefault(name, []).append(value[1:] if value.startswith(" ") else value)
            if "retry" in fields:
                self.retry = int(fields["retry"][-1])
            if "data" in fields:
                return fields["id"][-1], fields["event"][-1], json.loads("\n".join(fields["data"]))


class EventStreamTests(unittest.TestCase):
    """GET /events: the change stream of the JSONPlaceholder data. A server per test, so the
    event IDs start at 1."""

    def setUp(self):
        self.proc, ready = start_server()
        self.base = ready["base_url"]
        self.port = ready["port"]
        self.control = "http://127.0.0.1:%d" % ready["control_port"]
        self.readers = []

    def tearDown(self):
        for reader in self.readers:
            reader.close()
        code, err = stop_server(self.proc)
        self.assertEqual(code, 0, err)

    def stream(self, last_event_id=None):
        reader = EventStreamReader(self.port, last_event_id)
        self.readers.append(reader)
        return reader

    def ctl(self, update):
        status, _, body = request("POST", self.control + "/control", body=update)
        self.assertEqual(status, 200, body)
        return json.loads(body)

    def test_writes_become_change_events_with_increasing_ids(self):
        reader = self.stream()
        self.assertEqual(reader.resp.status, 200)
        self.assertEqual(reader.resp.getheader("Content-Type"), "text/event-stream; charset=utf-8")
        self.assertEqual(request("PATCH", self.base + "/todos/1", body={"title": "patched"})[0], 200)
        self.assertEqual(request("POST", self.base + "/todos", body={"title": "new", "completed": False, "userId": 1})[0], 201)
        self.assertEqual(request("PUT", self.base + "/todos/3", body={"title": "put"})[0], 200)
        self.assertEqual(request("DELETE", self.base + "/todos/4")[0], 200)
        events = [reader.next_event() for _ in range(4)]
        self.assertEqual(reader.retry, 1000)
        self.assertEqual([e[0] for e in events], ["1", "2", "3", "4"])
        self.assertEqual({e[1] for e in events}, {"change"})
        self.assertEqual(events[0][2], {"collection": "todos", "op": "upsert",
                                        "rows": [{"userId": 1, "id": 1, "title": "patched", "completed": False}]})
        self.assertEqual(events[1][2], {"collection": "todos", "op": "upsert",
                                        "rows": [{"title": "new", "completed": False, "userId": 1, "id": 201}]})
        self.assertEqual(events[2][2], {"collection": "todos", "op": "upsert", "rows": [{"id": 3, "title": "put"}]})
        self.assertEqual(events[3][2], {"collection": "todos", "op": "delete", "ids": ["4"]})

    def test_a_cascading_delete_streams_every_removed_row(self):
        reader = self.stream()
        self.assertEqual(request("DELETE", self.base + "/posts/1")[0], 200)
        first = reader.next_event()
        self.assertEqual(first[2], {"collection": "posts", "op": "delete", "ids": ["1"]})
        comments = [reader.next_event()[2] for _ in range(5)]
        self.assertEqual(comments, [{"collection": "comments", "op": "delete", "ids": [str(i)]} for i in range(1, 6)])

    def test_last_event_id_replays_only_the_missed_events(self):
        for title in ("a", "b", "c"):
            request("PATCH", self.base + "/todos/1", body={"title": title})
        reader = self.stream("1")
        events = [reader.next_event() for _ in range(2)]
        self.assertEqual([(e[0], e[2]["rows"][0]["title"]) for e in events], [("2", "b"), ("3", "c")])
        everything = self.stream()
        self.assertEqual([everything.next_event()[0] for _ in range(3)], ["1", "2", "3"])
        # An ID the server never issued replays everything (duplicates are the client's to drop).
        odd = self.stream("not-a-number")
        self.assertEqual(odd.next_event()[0], "1")

    def test_sse_drop_ends_open_streams_and_a_resume_loses_nothing(self):
        reader = self.stream()
        request("PATCH", self.base + "/todos/1", body={"title": "before"})
        self.assertEqual(reader.next_event()[0], "1")
        state = self.ctl({"sse_drop": True})
        self.assertEqual(state["sse_last_id"], 1)
        self.assertIsNone(reader.next_event())
        request("PATCH", self.base + "/todos/1", body={"title": "while away"})
        resumed = self.stream("1")
        event = resumed.next_event()
        self.assertEqual((event[0], event[2]["rows"][0]["title"]), ("2", "while away"))

    def test_sse_drop_after_cuts_every_stream_mid_way(self):
        for title in ("a", "b", "c"):
            request("PATCH", self.base + "/todos/1", body={"title": title})
        self.ctl({"sse_drop_after": 2})
        reader = self.stream()
        self.assertEqual([reader.next_event()[0] for _ in range(2)], ["1", "2"])
        self.assertIsNone(reader.next_event())
        self.assertEqual(self.stream("2").next_event()[0], "3")

    def test_retry_and_keepalive_are_settable(self):
        self.ctl({"sse_retry_ms": 20, "sse_keepalive_ms": 50})
        reader = self.stream()
        request("PATCH", self.base + "/todos/1", body={"title": "x"})
        self.assertEqual(reader.next_event()[0], "1")
        self.assertEqual(reader.retry, 20)
        bad = request("POST", self.control + "/control", body={"sse_keepalive_ms": 0})
        self.assertEqual(bad[0], 400)

    def test_keepalive_comments_flow_while_quiet(self):
        self.ctl({"sse_keepalive_ms": 10})
        reader = self.stream()
        while reader.comments < 2:
            chunk = reader.resp.read1(65536)
            self.assertTrue(chunk)
            reader.buffer += chunk
            reader.comments = reader.buffer.count(b": keep-alive")
        self.assertGreaterEqual(reader.comments, 2)


class ShutdownTests(unittest.TestCase):
    def _check(self, sig):
        proc, ready = start_server()
        self.assertEqual(request("GET", ready["base_url"] + "/users/1")[0], 200)
        code, err = stop_server(proc, sig)
        self.assertEqual(code, 0)
        self.assertEqual(err, "")

    def test_sigterm_exits_cleanly(self):
        self._check(signal.SIGTERM)

    def test_sigint_exits_cleanly(self):
        self._check(signal.SIGINT)


if __name__ == "__main__":
    unittest.main()
