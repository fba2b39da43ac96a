#!/usr/bin/env python3
"""Read a Freshet store without Freshet: an independent implementation of docs/log-format.md.

Everything here is written from the document, not from the Swift sources, so running it
against a store that Freshet wrote checks that the document is complete.

Usage:
  read_log.py STORE_DIR [--json] [--from LSN] [--to LSN] [--collection NAME]
                              one line per log record (needs the `lmdb` module)
  read_log.py STORE_DIR --state
                              the pending mutations, then the materialized collections:
                              SyncMark, then the stored rows in order
  read_log.py STORE_DIR --projection NAME
                              what an observer of NAME sees: the replayed rows with the
                              pending overlay applied, and the pending mutation IDs
  read_log.py STORE_DIR --verify
                              re-encodes every record and compares bytes, replays the log
                              with the fold rules of the document and compares the result
                              with the `rows`, `rowIndex`, `marks`, `pending`, `mutations`,
                              `idMap`, `confirmed` and `meta` databases byte for byte;
                              exit status 1 on any difference
  read_log.py --hex HEX       decodes one record given as hex (no `lmdb` needed)
  read_log.py --example       builds the worked example of docs/log-format.md, prints its
                              hex and decodes it again (no `lmdb` needed)
  read_log.py --self-test     CRC-32C check value, varints, zigzag (no `lmdb` needed)

`pip install lmdb` provides the `lmdb` module (py-lmdb, which bundles liblmdb). The store is
opened read-only; Freshet may have it open at the same time (LMDB allows many readers).
Python 3.9 or later, standard library otherwise.
"""

import json
import struct
import sys
from datetime import datetime, timezone

# ---------------------------------------------------------------- CRC-32C (Castagnoli)
# Reflected polynomial 0x82F63B78 (normal form 0x1EDC6F41), init 0xFFFFFFFF, xorout 0xFFFFFFFF.

_CRC_TABLE = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = _CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


# ---------------------------------------------------------------- primitives

class FormatError(Exception):
    pass


def write_varint(v):
    """Unsigned LEB128: 7 bits a byte, least significant group first, high bit = more follows."""
    if v < 0 or v >= 1 << 64:
        raise ValueError("varint out of range")
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def read_varint(buf, pos):
    """Returns (value, next position). At most 10 bytes; the 10th may only be 0 or 1."""
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise FormatError("truncated varint")
        b = buf[pos]
        pos += 1
        if shift == 63 and b > 1:
            raise FormatError("varint overflows 64 bits")
        result |= (b & 0x7F) << shift
        if b & 0x80 == 0:
            return result, pos
        shift += 7


def zigzag(v):
    return ((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF


def unzigzag(z):
    v = (z >> 1) ^ -(z & 1)
    return v


def fields(buf):
    """Yields (tag, value bytes) for every field of a payload or nested message, in order."""
    pos = 0
    while pos < len(buf):
        tag, pos = read_varint(buf, pos)
        length, pos = read_varint(buf, pos)
        if length > len(buf) - pos:
            raise FormatError("field %d claims %d bytes, %d left" % (tag, length, len(buf) - pos))
        yield tag, buf[pos:pos + length]
        pos += length


def as_uint(value):
    return read_varint(value, 0)[0]


def as_int(value):
    return unzigzag(as_uint(value))


def as_str(value):
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError("string field is not valid UTF-8")


class Writer:
    """Writes fields: tag varint, length varint, value bytes."""

    def __init__(self):
        self.buf = bytearray()

    def bytes(self, tag, b):
        self.buf += write_varint(tag) + write_varint(len(b)) + b
        return self

    def uint(self, tag, v):
        return self.bytes(tag, write_varint(v))

    def int(self, tag, v):
        return self.uint(tag, zigzag(v))

    def bool(self, tag, v):
        return self.uint(tag, 1 if v else 0)

    def str(self, tag, s):
        return self.bytes(tag, s.encode("utf-8"))

    def opt_str(self, tag, s):
        return self if s is None else self.str(tag, s)

    def opt_uint(self, tag, v):
        return self if v is None else self.uint(tag, v)

    def opt_int(self, tag, v):
        return self if v is None else self.int(tag, v)


def iso(micros):
    if micros is None:
        return None
    seconds, us = divmod(micros, 1_000_000)
    dt = datetime.fromtimestamp(seconds, tz=timezone.utc).replace(microsecond=us)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%06dZ" % us


# ---------------------------------------------------------------- events

KINDS = {
    1: "fetched", 2: "notModified", 3: "fetchFailed", 4: "changed", 5: "mutationProposed",
    6: "mutationConfirmed", 7: "mutationRolledBack", 8: "invalidated", 9: "localWrite",
    10: "checkpoint", 11: "evicted",
}
KIND_CODES = {name: code for code, name in KINDS.items()}
RESERVED = set()  # no reserved kind left: `checkpoint` (0a) has its payload (section 6.12)
CHECKPOINT_TABLES = {1: "rows", 2: "marks", 3: "pending", 4: "mutations", 5: "idMap", 6: "confirmed"}

RESPONSE_FIELDS = [  # tag, name, type
    (1, "url", "string"), (2, "status", "uint"), (3, "etag", "string"),
    (4, "lastModified", "string"), (5, "cacheControl", "string"), (6, "date", "string"),
    (7, "age", "string"), (8, "expires", "string"), (9, "durationMicros", "int"),
    (10, "responseBytes", "uint"), (11, "requestBytes", "uint"),
]


def decode_response(buf):
    r = {"url": "", "status": 0, "etag": None, "lastModified": None, "cacheControl": None,
         "date": None, "age": None, "expires": None, "durationMicros": 0,
         "responseBytes": 0, "requestBytes": 0}
    types = {tag: (name, t) for tag, name, t in RESPONSE_FIELDS}
    for tag, value in fields(buf):
        if tag in types:
            name, t = types[tag]
            r[name] = as_str(value) if t == "string" else as_uint(value) if t == "uint" else as_int(value)
    return r


def encode_response(r):
    w = Writer().str(1, r["url"]).uint(2, r["status"])
    for tag, name in [(3, "etag"), (4, "lastModified"), (5, "cacheControl"), (6, "date"),
                      (7, "age"), (8, "expires")]:
        w.opt_str(tag, r[name])
    return w.int(9, r["durationMicros"]).uint(10, r["responseBytes"]).uint(11, r["requestBytes"]).buf


def decode_row(buf):
    row_id, body = None, b""
    for tag, value in fields(buf):
        if tag == 1:
            row_id = as_str(value)
        elif tag == 2:
            body = bytes(value)
    if row_id is None:
        raise FormatError("row has no id")
    return {"id": row_id, "json": body}


FRESHNESS = {1: "always", 2: "maxAge", 3: "http", 4: "manual"}
FRESHNESS_CODES = {name: code for code, name in FRESHNESS.items()}


def decode_read_policy(buf):
    """ReadPolicy message (log-format.md 6.11): the policy and retry settings a refresh ran under."""
    p = {"freshness": None, "maxAgeMicros": 0, "maxAttempts": 3, "baseDelayMicros": 1000000,
         "maxDelayMicros": 30000000, "jitterMillionths": 200000, "maxRetryAfterMicros": 300000000}
    code = 0
    for tag, value in fields(buf):
        if tag == 1:
            code = as_uint(value)
        elif tag == 2:
            p["maxAgeMicros"] = as_int(value)
        elif tag == 3:
            p["maxAttempts"] = as_uint(value)
        elif tag == 4:
            p["baseDelayMicros"] = as_int(value)
        elif tag == 5:
            p["maxDelayMicros"] = as_int(value)
        elif tag == 6:
            p["jitterMillionths"] = as_uint(value)
        elif tag == 7:
            p["maxRetryAfterMicros"] = as_int(value)
    if code not in FRESHNESS:
        raise FormatError("read policy has unknown freshness %d" % code)
    p["freshness"] = FRESHNESS[code]
    return p


def encode_read_policy(p):
    w = Writer().uint(1, FRESHNESS_CODES[p["freshness"]])
    if p["freshness"] == "maxAge":
        w.int(2, p["maxAgeMicros"])
    w.uint(3, p["maxAttempts"]).int(4, p["baseDelayMicros"]).int(5, p["maxDelayMicros"])
    w.uint(6, p["jitterMillionths"]).int(7, p["maxRetryAfterMicros"])
    return w.buf


def decode_payload(kind, buf):
    if kind == "fetched":
        placement, index, is_last, rows, response, nxt = 0, 0, False, [], None, None
        basis, withheld, policy = None, False, None
        for tag, value in fields(buf):
            if tag == 1:
                placement = as_uint(value)
            elif tag == 2:
                index = as_uint(value)
            elif tag == 3:
                is_last = as_uint(value) != 0
            elif tag == 4:
                rows.append(decode_row(value))
            elif tag == 5:
                response = decode_response(value)
            elif tag == 6:
                nxt = as_str(value)
            elif tag == 7:
                basis = as_uint(value)
            elif tag == 8:
                withheld = as_uint(value) != 0
            elif tag == 9:
                policy = decode_read_policy(value)
        names = {1: "replace", 2: "page", 3: "upsert"}
        if placement not in names:
            raise FormatError("fetched event has unknown placement %d" % placement)
        if response is None:
            raise FormatError("fetched event has no response field")
        e = {"placement": names[placement], "rows": rows, "response": response, "nextCursor": nxt,
             "basisLSN": basis, "rowsWithheld": withheld, "readPolicy": policy}
        if placement == 2:
            e["page"], e["isLastPage"] = index, is_last
        return e
    if kind == "notModified":
        response, page, basis, policy = None, None, None, None
        for tag, value in fields(buf):
            if tag == 1:
                response = decode_response(value)
            elif tag == 2:
                page = as_uint(value)
            elif tag == 3:
                basis = as_uint(value)
            elif tag == 4:
                policy = decode_read_policy(value)
        if response is None:
            raise FormatError("notModified event has no response field")
        return {"response": response, "page": page, "basisLSN": basis, "readPolicy": policy}
    if kind == "fetchFailed":
        e = {"url": "", "reason": "", "status": None, "message": "", "attempt": 1, "durationMicros": None,
             "readPolicy": None, "page": None}
        for tag, value in fields(buf):
            if tag == 1:
                e["url"] = as_str(value)
            elif tag == 2:
                e["reason"] = as_str(value)
            elif tag == 3:
                e["status"] = as_uint(value)
            elif tag == 4:
                e["message"] = as_str(value)
            elif tag == 5:
                e["attempt"] = as_uint(value)
            elif tag == 6:
                e["durationMicros"] = as_int(value)
            elif tag == 7:
                e["readPolicy"] = decode_read_policy(value)
            elif tag == 8:
                e["page"] = as_uint(value)
        return e
    if kind in ("changed", "localWrite"):
        ops, origin = [], None
        for tag, value in fields(buf):
            if tag == 2:  # PushOrigin (6.6)
                origin = {"source": None, "eventID": None}
                for t, x in fields(value):
                    if t in (1, 2):
                        origin[("source", "eventID")[t - 1]] = as_str(x)
                if origin["source"] is None or origin["eventID"] is None:
                    raise FormatError("push origin has no source or no event ID")
                continue
            if tag != 1:
                continue
            op, row_id, body = 0, None, b""
            for t, x in fields(value):
                if t == 1:
                    op = as_uint(x)
                elif t == 2:
                    row_id = as_str(x)
                elif t == 3:
                    body = bytes(x)
            if row_id is None:
                raise FormatError("row op has no id")
            if op == 1:
                ops.append({"op": "upsert", "id": row_id, "json": body})
            elif op == 2:
                ops.append({"op": "delete", "id": row_id})
            else:
                raise FormatError("unknown row op %d" % op)
        return {"ops": ops, "origin": origin}
    if kind == "invalidated":
        reason = None
        for tag, value in fields(buf):
            if tag == 1:
                reason = as_str(value)
        return {"reason": reason}
    if kind == "mutationProposed":
        return decode_proposed(buf)
    if kind == "mutationConfirmed":
        return decode_confirmed(buf)
    if kind == "mutationRolledBack":
        return decode_rolled_back(buf)
    if kind == "checkpoint":
        return decode_checkpoint(buf)
    if kind == "evicted":  # section 6.13
        e = {"unobservedMicros": 0, "gcTimeMicros": 0}
        for tag, value in fields(buf):
            if tag == 1:
                e["unobservedMicros"] = as_int(value)
            elif tag == 2:
                e["gcTimeMicros"] = as_int(value)
        return e
    raise FormatError("event kind %s is reserved and has no payload format yet" % kind)


# ---------------------------------------------------------------- checkpoint payload (6.12)

def decode_checkpoint(buf):
    through, micros, kept, removed, entries = None, 0, [], 0, []
    version, policies = 1, []
    for tag, value in fields(buf):
        if tag == 1:
            through = as_uint(value)
        elif tag == 2:
            micros = as_int(value)
        elif tag == 3:
            kept.append(as_uint(value))
        elif tag == 4:
            removed = as_uint(value)
        elif tag == 5:
            table, key, val = None, None, b""
            for t, v in fields(value):
                if t == 1:
                    table = as_uint(v)
                elif t == 2:
                    key = bytes(v)
                elif t == 3:
                    val = bytes(v)
            if table not in CHECKPOINT_TABLES:
                raise FormatError("checkpoint entry names unknown database %r" % table)
            if not key:
                raise FormatError("checkpoint entry has no key")
            entries.append((table, key, val))
        elif tag == 6:
            version = as_uint(value)
        elif tag == 7:
            collection, lsn, policy = None, 0, None
            for t, v in fields(value):
                if t == 1:
                    collection = as_str(v)
                elif t == 2:
                    lsn = as_uint(v)
                elif t == 3:
                    policy = decode_read_policy(v)
            if collection is None or policy is None:
                raise FormatError("checkpoint policy entry has no collection or no policy")
            policies.append((collection, lsn, policy))
    if through is None:
        raise FormatError("checkpoint has no throughLSN")
    if version > 2:
        raise FormatError("checkpoint payload version %d is newer than 2" % version)
    return {"throughLSN": through, "throughMicros": micros, "keptLSNs": kept, "removedCount": removed, "entries": entries,
            "payloadVersion": version, "policies": policies}


def encode_checkpoint(e, w):
    w.uint(1, e["throughLSN"]).int(2, e["throughMicros"])
    for lsn in e["keptLSNs"]:
        w.uint(3, lsn)
    w.uint(4, e["removedCount"])
    for table, key, val in e["entries"]:
        w.bytes(5, Writer().uint(1, table).bytes(2, key).bytes(3, val).buf)
    if e.get("payloadVersion", 1) >= 2:  # version 2 writes field 6 even with no policy
        w.uint(6, e["payloadVersion"])
        for collection, lsn, policy in e.get("policies", []):
            w.bytes(7, Writer().str(1, collection).uint(2, lsn).bytes(3, encode_read_policy(policy)).buf)


# ---------------------------------------------------------------- mutation payloads

def mutation_id(value):
    if len(value) != 16:
        raise FormatError("a mutation ID is 16 bytes, not %d" % len(value))
    return bytes(value)


def show_id(b):
    """The 16 bytes of a mutation ID as the lowercase UUID string Freshet prints and sends."""
    h = b.hex()
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


TOKEN_EXTRA = set(b"!#$%&'*+-.^_`|~")


def is_token(text):
    """RFC 9110 section 5.6.2 token: one or more of ALPHA, DIGIT and !#$%&'*+-.^_`|~."""
    return len(text) > 0 and all(chr(c).isascii() and (chr(c).isalnum() or c in TOKEN_EXTRA) for c in text.encode("utf-8"))


def decode_proposed(buf):
    e = {"id": None, "name": "", "queue": "default", "ops": [], "invalidates": [],
         "request": {"method": "GET", "path": "", "headers": [], "body": None},
         "confirmation": {"kind": 0}}
    for tag, value in fields(buf):
        if tag == 1:
            e["id"] = mutation_id(value)
        elif tag == 2:
            e["name"] = as_str(value)
        elif tag == 3:
            e["queue"] = as_str(value)
        elif tag == 4:
            op = {"collection": "", "op": 0, "id": "", "json": b""}
            for t, x in fields(value):
                if t == 1:
                    op["collection"] = as_str(x)
                elif t == 2:
                    op["op"] = as_uint(x)
                elif t == 3:
                    op["id"] = as_str(x)
                elif t == 4:
                    op["json"] = bytes(x)
            if op["op"] not in (1, 2):
                raise FormatError("unknown mutation op %d" % op["op"])
            op["op"] = "upsert" if op["op"] == 1 else "delete"
            if op["op"] == "delete":
                del op["json"]
            e["ops"].append(op)
        elif tag == 5:
            req = {"method": "GET", "path": "", "headers": {}, "body": None}
            for t, x in fields(value):
                if t == 1:
                    req["method"] = as_str(x)
                elif t == 2:
                    req["path"] = as_str(x)
                elif t == 3:
                    name, val = "", ""
                    for ht, hx in fields(x):
                        if ht == 1:
                            name = as_str(hx)
                        elif ht == 2:
                            val = as_str(hx)
                    req["headers"][name] = val  # a repeated name: the last one wins
                elif t == 4:
                    req["body"] = bytes(x)
            if not is_token(req["method"]):
                raise FormatError("bad request method %r" % req["method"])
            req["headers"] = sorted(req["headers"].items())
            e["request"] = req
        elif tag == 6:
            e["invalidates"].append(as_str(value))
        elif tag == 7:
            c = {"kind": 0, "collection": "", "provisionalID": "", "idField": "id"}
            for t, x in fields(value):
                if t == 1:
                    c["kind"] = as_uint(x)
                elif t == 2:
                    c["collection"] = as_str(x)
                elif t == 3:
                    c["provisionalID"] = as_str(x)
                elif t == 4:
                    c["idField"] = as_str(x)
            e["confirmation"] = c if c["kind"] == 1 else {"kind": 0}  # any other kind reads as none
    if e["id"] is None:
        raise FormatError("mutationProposed has no mutation ID")
    return e


def decode_confirmed(buf):
    e = {"id": None, "status": 0, "rows": [], "idMappings": [], "invalidates": [], "affected": []}
    for tag, value in fields(buf):
        if tag == 1:
            e["id"] = mutation_id(value)
        elif tag == 2:
            e["status"] = as_uint(value)
        elif tag == 3:
            collection, row = "", None
            for t, x in fields(value):
                if t == 1:
                    collection = as_str(x)
                elif t == 2:
                    row = decode_row(x)
            if row is None:
                raise FormatError("confirmed row without a row")
            e["rows"].append({"collection": collection, "row": row})
        elif tag == 4:
            m = {"collection": "", "provisionalID": "", "serverID": ""}
            for t, x in fields(value):
                if t in (1, 2, 3):
                    m[("collection", "provisionalID", "serverID")[t - 1]] = as_str(x)
            e["idMappings"].append(m)
        elif tag == 5:
            e["invalidates"].append(as_str(value))
        elif tag == 6:
            e["affected"].append(as_str(value))
    if e["id"] is None:
        raise FormatError("mutationConfirmed has no mutation ID")
    return e


def decode_rolled_back(buf):
    e = {"id": None, "status": None, "reason": "", "body": b"", "affected": []}
    for tag, value in fields(buf):
        if tag == 1:
            e["id"] = mutation_id(value)
        elif tag == 2:
            e["status"] = as_uint(value)
        elif tag == 3:
            e["reason"] = as_str(value)
        elif tag == 4:
            e["body"] = bytes(value)
        elif tag == 5:
            e["affected"].append(as_str(value))
    if e["id"] is None:
        raise FormatError("mutationRolledBack has no mutation ID")
    return e


def encode_mutation(kind, e, w):
    if kind == "mutationProposed":
        w.bytes(1, e["id"]).str(2, e["name"]).str(3, e["queue"])
        for op in e["ops"]:
            m = Writer().str(1, op["collection"])
            if op["op"] == "upsert":
                m.uint(2, 1).str(3, op["id"]).bytes(4, op["json"])
            else:
                m.uint(2, 2).str(3, op["id"])
            w.bytes(4, m.buf)
        req = e["request"]
        m = Writer().str(1, req["method"]).str(2, req["path"])
        for name, value in req["headers"]:  # sorted by name
            m.bytes(3, Writer().str(1, name).str(2, value).buf)
        if req["body"] is not None:
            m.bytes(4, req["body"])
        w.bytes(5, m.buf)
        for name in e["invalidates"]:
            w.str(6, name)
        c = e["confirmation"]
        if c["kind"] == 1:
            w.bytes(7, Writer().uint(1, 1).str(2, c["collection"]).str(3, c["provisionalID"]).str(4, c["idField"]).buf)
        else:
            w.bytes(7, Writer().uint(1, 0).buf)
    elif kind == "mutationConfirmed":
        w.bytes(1, e["id"]).uint(2, e["status"])
        for r in e["rows"]:
            w.bytes(3, Writer().str(1, r["collection"]).bytes(2, Writer().str(1, r["row"]["id"]).bytes(2, r["row"]["json"]).buf).buf)
        for m in e["idMappings"]:
            w.bytes(4, Writer().str(1, m["collection"]).str(2, m["provisionalID"]).str(3, m["serverID"]).buf)
        for name in e["invalidates"]:
            w.str(5, name)
        for name in e["affected"]:
            w.str(6, name)
    else:  # mutationRolledBack
        w.bytes(1, e["id"]).opt_uint(2, e["status"]).str(3, e["reason"])
        if e["body"]:
            w.bytes(4, e["body"])
        for name in e["affected"]:
            w.str(5, name)


def affected_collections(record):
    """The collections whose SyncMark a mutation record touches: its own, then the others, once each."""
    e, k = record["event"], record["kind"]
    names = [record["collection"]]
    if k == "mutationProposed":
        names += [op["collection"] for op in e["ops"]]
    elif k == "mutationConfirmed":
        names += e["affected"] + [r["collection"] for r in e["rows"]] + e["invalidates"]
    elif k == "mutationRolledBack":
        names += e["affected"]
    seen, out = set(), []
    for n in names:
        if n not in seen:
            seen.add(n)
            out.append(n)
    return out


def encode_payload(kind, e):
    w = Writer()
    if kind == "fetched":
        if e["placement"] == "replace":
            w.uint(1, 1)
        elif e["placement"] == "page":
            w.uint(1, 2).uint(2, e["page"]).bool(3, e["isLastPage"])
        else:
            w.uint(1, 3)
        for row in e["rows"]:
            w.bytes(4, Writer().str(1, row["id"]).bytes(2, row["json"]).buf)
        w.bytes(5, encode_response(e["response"]))
        w.opt_str(6, e["nextCursor"]).opt_uint(7, e["basisLSN"])
        if e["rowsWithheld"]:
            w.bool(8, True)
        if e.get("readPolicy"):
            w.bytes(9, encode_read_policy(e["readPolicy"]))
    elif kind == "notModified":
        w.bytes(1, encode_response(e["response"])).opt_uint(2, e["page"]).opt_uint(3, e["basisLSN"])
        if e.get("readPolicy"):
            w.bytes(4, encode_read_policy(e["readPolicy"]))
    elif kind == "fetchFailed":
        w.str(1, e["url"]).str(2, e["reason"]).opt_uint(3, e["status"]).str(4, e["message"])
        w.uint(5, e["attempt"]).opt_int(6, e["durationMicros"])
        if e.get("readPolicy"):
            w.bytes(7, encode_read_policy(e["readPolicy"]))
        w.opt_uint(8, e.get("page"))
    elif kind in ("changed", "localWrite"):
        for op in e["ops"]:
            m = Writer()
            if op["op"] == "upsert":
                m.uint(1, 1).str(2, op["id"]).bytes(3, op["json"])
            else:
                m.uint(1, 2).str(2, op["id"])
            w.bytes(1, m.buf)
        if e.get("origin"):
            w.bytes(2, Writer().str(1, e["origin"]["source"]).str(2, e["origin"]["eventID"]).buf)
    elif kind == "invalidated":
        w.opt_str(1, e["reason"])
    elif kind in ("mutationProposed", "mutationConfirmed", "mutationRolledBack"):
        encode_mutation(kind, e, w)
    elif kind == "checkpoint":
        encode_checkpoint(e, w)
    elif kind == "evicted":
        w.int(1, e["unobservedMicros"]).int(2, e["gcTimeMicros"])
    else:
        raise ValueError("cannot encode %s" % kind)
    return bytes(w.buf)


# ---------------------------------------------------------------- record envelope

def decode_record(buf, expected_lsn=None):
    """Decodes one log record (format version 1). Raises FormatError with the reason."""
    buf = bytes(buf)
    if len(buf) < 30:
        raise FormatError("record is %d bytes, shorter than the 30-byte minimum" % len(buf))
    body, (stored,) = buf[:-4], struct.unpack(">I", buf[-4:])
    computed = crc32c(body)
    if stored != computed:
        raise FormatError("checksum mismatch: stored 0x%08x, computed 0x%08x" % (stored, computed))
    version, kind_byte, flags, lsn, micros, n = struct.unpack(">BBHQqH", body[:22])
    if version != 1:
        raise FormatError("unsupported format version %d" % version)
    if kind_byte not in KINDS:
        raise FormatError("unknown event kind %d" % kind_byte)
    if flags != 0:
        raise FormatError("unknown flags %d" % flags)
    if expected_lsn is not None and lsn != expected_lsn:
        raise FormatError("record under key %d says it is LSN %d" % (expected_lsn, lsn))
    if len(body) < 26 + n:
        raise FormatError("truncated collection name")
    collection = as_str(body[22:22 + n])
    (m,) = struct.unpack(">I", body[22 + n:26 + n])
    if len(body) != 26 + n + m:
        raise FormatError("payload length %d does not match the %d bytes left" % (m, len(body) - 26 - n))
    kind = KINDS[kind_byte]
    event = decode_payload(kind, body[26 + n:])
    return {"lsn": lsn, "timestampMicros": micros, "kind": kind, "collection": collection, "event": event}


def encode_record(lsn, micros, kind, collection, event):
    name = collection.encode("utf-8")
    payload = encode_payload(kind, event)
    body = struct.pack(">BBHQqH", 1, KIND_CODES[kind], 0, lsn, micros, len(name)) + name
    body += struct.pack(">I", len(payload)) + payload
    return body + struct.pack(">I", crc32c(body))


def escaped(text):
    """Like Swift's TerminalEscaping.escaped: one record stays one line, no terminal escapes."""
    names = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}
    out = []
    for ch in text:
        c = ord(ch)
        if ch in names:
            out.append(names[ch])
        elif c <= 0x1F or 0x7F <= c <= 0x9F or c in (0x061C, 0x200E, 0x200F) \
                or 0x2028 <= c <= 0x202E or 0x2066 <= c <= 0x2069:
            out.append("\\u{%X}" % c)
        else:
            out.append(ch)
    return "".join(out)


def summary(r):
    e, k = r["event"], r["kind"]
    if k == "fetched":
        where = e["placement"] + (" %d%s" % (e["page"], " (last)" if e["isLastPage"] else "") if "page" in e else "")
        ids = [row["id"] for row in e["rows"]]
        span = "" if not ids else " (%s … %s)" % (ids[0], ids[-1]) if len(ids) > 1 else " (%s)" % ids[0]
        return "%s, %d row%s%s, %d, ETag %s" % (where, len(ids), "" if len(ids) == 1 else "s", span,
                                                 e["response"]["status"], e["response"]["etag"])
    if k == "notModified":
        return "304, ETag %s" % e["response"]["etag"]
    if k == "fetchFailed":
        return "attempt %d: %s%s — %s" % (e["attempt"], e["reason"], "" if e["status"] is None else " %d" % e["status"], e["message"])
    if k in ("changed", "localWrite"):
        return ", ".join("%s %s" % (op["op"], op["id"]) for op in e["ops"])
    if k == "mutationProposed":
        ops = ", ".join("%s %s/%s" % (op["op"], op["collection"], op["id"]) for op in e["ops"])
        return "%s %s: %s; %s %s (queue %s)" % (e["name"], show_id(e["id"]), ops, e["request"]["method"],
                                                e["request"]["path"], e["queue"])
    if k == "mutationConfirmed":
        parts = ["%s confirmed, %d" % (show_id(e["id"]), e["status"])]
        parts += ["%s/%s → %s" % (m["collection"], m["provisionalID"], m["serverID"]) for m in e["idMappings"]]
        if e["rows"]:
            parts.append("%d server row%s" % (len(e["rows"]), "" if len(e["rows"]) == 1 else "s"))
        if e["invalidates"]:
            parts.append("invalidates " + ", ".join(e["invalidates"]))
        return ", ".join(parts)
    if k == "mutationRolledBack":
        return "%s rolled back%s: %s" % (show_id(e["id"]), "" if e["status"] is None else ", %d" % e["status"], e["reason"])
    if k == "evicted":
        return "evicted after %s unobserved (gcTime %s)" % (
            "%g s" % (e["unobservedMicros"] / 1e6), "%g s" % (e["gcTimeMicros"] / 1e6))
    if k == "checkpoint":
        return "state through LSN %d (%d entries), %d older records removed, %d kept" % (
            e["throughLSN"], len(e["entries"]), e["removedCount"], len(e["keptLSNs"]))
    return "invalidated" + ("" if e["reason"] is None else ": " + e["reason"])


def to_json(r):
    def clean(v):
        if isinstance(v, (bytes, bytearray)):
            return bytes(v).decode("utf-8", "replace")
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):  # a checkpoint's entries and policies are tuples
            return [clean(x) for x in v]
        return v
    e = dict(r["event"])
    if "id" in e and isinstance(e["id"], (bytes, bytearray)) and len(e["id"]) == 16:
        e["mutationID"] = show_id(e.pop("id"))
    # Like `freshet dump --json`: row IDs, not row bodies.
    if r["kind"] == "mutationConfirmed":
        e["rows"] = [{"collection": x["collection"], "id": x["row"]["id"]} for x in e["rows"]]
    elif "rows" in e:
        e["rowIDs"] = [row["id"] for row in e.pop("rows")]
    if r["kind"] == "mutationProposed":
        e["ops"] = [{k: v for k, v in op.items() if k != "json"} for op in e["ops"]]
    o = clean(dict(r, event=e))
    o["time"] = iso(r["timestampMicros"])
    return json.dumps(o, sort_keys=True, ensure_ascii=False)


# ---------------------------------------------------------------- SyncMark

MARK_TIMES = {1: "fetchedAt", 3: "validatedAt", 13: "lastAttemptAt", 16: "invalidatedAt"}
MARK_UINTS = {2: "fetchedLSN", 4: "lastLSN", 12: "pageCount", 15: "consecutiveFailures", 17: "invalidatedLSN",
              18: "rowsLSN"}
MARK_STRINGS = {5: "etag", 6: "lastModified", 7: "cacheControl", 8: "responseDate", 9: "age",
                10: "expires", 11: "nextCursor"}


def new_mark():
    m = {name: None for name in list(MARK_TIMES.values()) + list(MARK_STRINGS.values())}
    m.update(fetchedLSN=None, invalidatedLSN=None, lastLSN=0, pageCount=0,
             consecutiveFailures=0, lastError=None, rowsLSN=0, responseDelayMicros=0,
             noStore=False, pages=[], resumePage=None, pushCursors=[])
    return m


def decode_mark(buf):
    m = new_mark()
    for tag, value in fields(buf):
        if tag in MARK_TIMES:
            m[MARK_TIMES[tag]] = as_int(value)
        elif tag in MARK_UINTS:
            m[MARK_UINTS[tag]] = as_uint(value)
        elif tag in MARK_STRINGS:
            m[MARK_STRINGS[tag]] = as_str(value)
        elif tag == 14:
            e = {"reason": "", "status": None, "message": "", "lsn": 0}
            for t, x in fields(value):
                if t == 1:
                    e["reason"] = as_str(x)
                elif t == 2:
                    e["status"] = as_uint(x)
                elif t == 3:
                    e["message"] = as_str(x)
                elif t == 4:
                    e["lsn"] = as_uint(x)
            m["lastError"] = e
        elif tag == 19:
            m["responseDelayMicros"] = as_int(value)
        elif tag == 20:
            m["noStore"] = as_uint(value) != 0
        elif tag == 22:
            m["resumePage"] = as_uint(value)
        elif tag == 25:
            c = {"source": "", "eventID": "", "lsn": 0}
            for t, x in fields(value):
                if t == 1:
                    c["source"] = as_str(x)
                elif t == 2:
                    c["eventID"] = as_str(x)
                elif t == 3:
                    c["lsn"] = as_uint(x)
            m["pushCursors"].append(c)
        elif tag == 21:
            page = {"url": "", "etag": None, "lastModified": None, "next": None}
            for t, x in fields(value):
                if t in (1, 2, 3, 4):
                    page[("url", "etag", "lastModified", "next")[t - 1]] = as_str(x)
            m["pages"].append(page)
    return m


def encode_mark(m):
    w = Writer()
    w.opt_int(1, m["fetchedAt"]).opt_uint(2, m["fetchedLSN"]).opt_int(3, m["validatedAt"])
    w.uint(4, m["lastLSN"])
    for tag in range(5, 12):
        w.opt_str(tag, m[MARK_STRINGS[tag]])
    w.uint(12, m["pageCount"]).opt_int(13, m["lastAttemptAt"])
    if m["lastError"] is not None:
        e = m["lastError"]
        w.bytes(14, Writer().str(1, e["reason"]).opt_uint(2, e["status"]).str(3, e["message"]).uint(4, e["lsn"]).buf)
    w.uint(15, m["consecutiveFailures"]).opt_int(16, m["invalidatedAt"]).opt_uint(17, m["invalidatedLSN"])
    w.uint(18, m["rowsLSN"]).int(19, m["responseDelayMicros"])
    if m["noStore"]:
        w.bool(20, True)
    w.opt_uint(22, m["resumePage"])  # Freshet writes 22 before the pages (tags may come in any order)
    for page in m["pages"]:
        w.bytes(21, Writer().str(1, page["url"]).opt_str(2, page["etag"]).opt_str(3, page["lastModified"])
                .opt_str(4, page["next"]).buf)
    for c in m["pushCursors"]:
        w.bytes(25, Writer().str(1, c["source"]).str(2, c["eventID"]).uint(3, c["lsn"]).buf)
    return bytes(w.buf)


# ---------------------------------------------------------------- materialized state and the fold

def collection_key(name):
    b = name.encode("utf-8")
    return struct.pack(">H", len(b)) + b


def position(page, index):
    return (page << 32) | index


def encode_row_value(row_id, body):
    i = row_id.encode("utf-8")
    return write_varint(len(i)) + i + bytes(body)


def decode_row_value(value):
    n, pos = read_varint(value, 0)
    if n > len(value) - pos:
        raise FormatError("truncated row ID")
    return as_str(value[pos:pos + n]), bytes(value[pos + n:])


MUTATION_PENDING, MUTATION_CONFIRMED, MUTATION_ROLLED_BACK = 1, 2, 3


class State:
    """The materialized databases (`rows`, `rowIndex`, `marks`, `pending`, `mutations`, `idMap`,
    `confirmed`) as Python dicts of key bytes → value bytes."""

    def __init__(self):
        self.rows, self.index, self.marks = {}, {}, {}
        self.pending, self.mutations, self.id_map, self.confirmed = {}, {}, {}, {}
        self.proposals = {}  # LSN → mutationProposed event: what the fold reads back from `log`
        self.proposal_collections = {}  # LSN → that record's collection
        self.checkpoint = None  # meta.checkpoint: the LSN of the latest checkpoint folded

    def load_checkpoint(self, e, kept):
        """Starts from a checkpoint's state (6.12): its entries, rowIndex derived from rows, and
        the kept proposals (LSN → decoded record) the fold reads back."""
        tables = {"rows": self.rows, "marks": self.marks, "pending": self.pending,
                  "mutations": self.mutations, "idMap": self.id_map, "confirmed": self.confirmed}
        for table, key, val in e["entries"]:
            tables[CHECKPOINT_TABLES[table]][key] = val
            if CHECKPOINT_TABLES[table] == "rows":
                row_id, _ = decode_row_value(val)
                self.index[key[:-8] + row_id.encode("utf-8")] = key[-8:]
        for lsn, r in kept.items():
            self.proposals[lsn] = r["event"]
            self.proposal_collections[lsn] = r["collection"]

    def _pos(self, ckey, row_id):
        v = self.index.get(ckey + row_id.encode("utf-8"))
        return None if v is None or len(v) != 8 else struct.unpack(">Q", v)[0]

    def _put(self, ckey, row, pos):
        self.rows[ckey + struct.pack(">Q", pos)] = encode_row_value(row["id"], row["json"])
        self.index[ckey + row["id"].encode("utf-8")] = struct.pack(">Q", pos)

    def _remove(self, ckey, row_id):
        pos = self._pos(ckey, row_id)
        if pos is None:
            return False
        self.rows.pop(ckey + struct.pack(">Q", pos), None)
        self.index.pop(ckey + row_id.encode("utf-8"), None)
        return True

    def _positions(self, ckey):
        return sorted(struct.unpack(">Q", k[len(ckey):])[0] for k in self.rows
                      if len(k) == len(ckey) + 8 and k.startswith(ckey))

    def _remove_positions(self, ckey, lower, upper):
        for pos in self._positions(ckey):
            if pos >= lower and (upper is None or pos < upper):
                row_id, _ = decode_row_value(self.rows.pop(ckey + struct.pack(">Q", pos)))
                self.index.pop(ckey + row_id.encode("utf-8"), None)

    def _replace_range(self, ckey, rows, page, lower, upper):
        """Makes positions lower ..< upper hold exactly `rows` as page `page`; False if they already did."""
        existing = [(p, self.rows[ckey + struct.pack(">Q", p)]) for p in self._positions(ckey)
                    if p >= lower and (upper is None or p < upper)]
        wanted = [(position(page, i), encode_row_value(r["id"], r["json"])) for i, r in enumerate(rows)]
        if existing == wanted:
            return False
        self._remove_positions(ckey, lower, upper)
        for i, row in enumerate(rows):
            self._remove(ckey, row["id"])  # an ID held on another page moves here
            self._put(ckey, row, position(page, i))
        return True

    def _upsert(self, ckey, row):
        pos = self._pos(ckey, row["id"])
        if pos is not None:
            if self.rows.get(ckey + struct.pack(">Q", pos)) == encode_row_value(row["id"], row["json"]):
                return False
        else:
            existing = self._positions(ckey)
            pos = existing[-1] + 1 if existing else 0
        self._put(ckey, row, pos)
        return True

    @staticmethod
    def _validated(m, t, response, basis):
        m.update(validatedAt=t, lastAttemptAt=t, responseDelayMicros=response["durationMicros"],
                 lastError=None, consecutiveFailures=0)
        if m["invalidatedLSN"] is not None and basis is not None and m["invalidatedLSN"] > basis:
            return  # invalidated after the request left: not answered by this response
        m.update(invalidatedAt=None, invalidatedLSN=None)

    # ---- the confirmed-rows rule (docs/log-format.md 10.1)

    def _confirmed_entries(self, ckey):
        """(row ID, LSN, op) of the collection's `confirmed` entries, in key order."""
        out = []
        for key in sorted(k for k in self.confirmed if k.startswith(ckey)):
            value = self.confirmed[key]
            if len(value) == 9:
                out.append((as_str(key[len(ckey):]), struct.unpack(">Q", value[:8])[0], value[8], key))
        return out

    def _confirmed_rows(self, ckey, basis):
        """Rows a confirmation after `basis` wrote, read before a fetch replaces them."""
        if basis is None:
            return {}
        kept = {}
        for row_id, lsn, op, _ in self._confirmed_entries(ckey):
            pos = self._pos(ckey, row_id)
            if op == 1 and lsn > basis and pos is not None:
                _, body = decode_row_value(self.rows[ckey + struct.pack(">Q", pos)])
                kept[row_id] = {"id": row_id, "json": body}
        return kept

    def _reapply_confirmed(self, ckey, basis, prune, preserved):
        if basis is None:
            return False
        changed, later = False, []
        for row_id, lsn, op, key in self._confirmed_entries(ckey):
            if lsn > basis:
                later.append((row_id, op))
            elif prune:
                del self.confirmed[key]
        for row_id, op in later:
            present = self._pos(ckey, row_id) is not None
            if op == 1 and row_id in preserved:
                # missing from the response, or in it at an older version: the confirmation wins
                if self._upsert(ckey, preserved[row_id]):
                    changed = True
            elif op == 2 and present:
                self._remove(ckey, row_id)
                changed = True
        return changed

    # ---- garbage collection (docs/log-format.md 10.8)

    def fold_evicted(self, r):
        name = r["collection"]
        old = self.marks.get(name.encode("utf-8"))
        if old is None:
            return
        m = decode_mark(old)
        if m["fetchedLSN"] is None and m["validatedAt"] is None and m["lastAttemptAt"] is None:
            return  # never fetched: local-only
        for key in self.pending:
            lsn = struct.unpack(">Q", key)[0]
            p = self.proposals[lsn]
            named = {self.proposal_collections.get(lsn, "")} | {op["collection"] for op in p["ops"]}
            if p["confirmation"]["kind"] == 1:
                named.add(p["confirmation"]["collection"])
            if name in named:
                return  # a pending mutation names it
        ckey = collection_key(name)
        self._remove_positions(ckey, 0, None)
        del self.marks[name.encode("utf-8")]

    # ---- mutations (docs/log-format.md 10.7)

    def _touch(self, r):
        for name in affected_collections(r):
            old = self.marks.get(name.encode("utf-8"))
            m = decode_mark(old) if old is not None else new_mark()
            m["lastLSN"] = r["lsn"]
            m["rowsLSN"] = r["lsn"]
            self.marks[name.encode("utf-8")] = encode_mark(m)

    def _resolve(self, r, outcome):
        entry = self.mutations.get(r["event"]["id"])
        if entry is None:
            raise FormatError("LSN %d: %s for mutation %s, which was never proposed" % (r["lsn"], r["kind"], show_id(r["event"]["id"])))
        if entry[0] != MUTATION_PENDING:
            raise FormatError("LSN %d: %s for mutation %s, which is already resolved" % (r["lsn"], r["kind"], show_id(r["event"]["id"])))
        self.pending.pop(entry[1:], None)
        self.mutations[r["event"]["id"]] = bytes([outcome]) + entry[1:]
        return self.proposals.get(struct.unpack(">Q", entry[1:])[0])

    def fold_mutation(self, r):
        e, k, lsn = r["event"], r["kind"], r["lsn"]
        if k == "mutationProposed":
            if e["id"] in self.mutations:
                raise FormatError("LSN %d: mutation %s was already proposed" % (lsn, show_id(e["id"])))
            self.mutations[e["id"]] = bytes([MUTATION_PENDING]) + struct.pack(">Q", lsn)
            self.pending[struct.pack(">Q", lsn)] = e["id"]
            self.proposals[lsn] = e
            self.proposal_collections[lsn] = r["collection"]
            self._touch(r)
        elif k == "mutationConfirmed":
            proposal = self._resolve(r, MUTATION_CONFIRMED)
            for x in e["rows"]:
                self.confirmed[collection_key(x["collection"]) + x["row"]["id"].encode("utf-8")] = struct.pack(">Q", lsn) + b"\x01"
            for op in (proposal or {"ops": []})["ops"]:
                if op["op"] == "delete":
                    ck = collection_key(op["collection"])
                    self._remove(ck, op["id"])
                    self.confirmed[ck + op["id"].encode("utf-8")] = struct.pack(">Q", lsn) + b"\x02"
            for m in e["idMappings"]:
                ck = collection_key(m["collection"])
                self.id_map[ck + m["provisionalID"].encode("utf-8")] = m["serverID"].encode("utf-8")
                if m["provisionalID"] != m["serverID"]:
                    self._remove(ck, m["provisionalID"])
            changed_bases = set(x["collection"] for x in e["rows"])
            changed_bases |= set(op["collection"] for op in (proposal or {"ops": []})["ops"] if op["op"] == "delete")
            for x in e["rows"]:
                self._upsert(collection_key(x["collection"]), x["row"])
            self._touch(r)
            # the stored rows no longer match what the validators name: drop them (10.7)
            for name in sorted(changed_bases):
                key = name.encode("utf-8")
                if key not in self.marks:
                    continue
                m = decode_mark(self.marks[key])
                m["etag"] = m["lastModified"] = None
                for page in m["pages"]:
                    page["etag"] = page["lastModified"] = None
                self.marks[key] = encode_mark(m)
            for name in e["invalidates"]:
                m = decode_mark(self.marks[name.encode("utf-8")])
                m.update(invalidatedAt=r["timestampMicros"], invalidatedLSN=lsn, lastLSN=lsn)
                self.marks[name.encode("utf-8")] = encode_mark(m)
        else:  # mutationRolledBack
            proposal = self._resolve(r, MUTATION_ROLLED_BACK)
            c = (proposal or {"confirmation": {"kind": 0}})["confirmation"]
            if c["kind"] == 1:
                ck = collection_key(c["collection"])
                key = ck + c["provisionalID"].encode("utf-8")
                # Only a create's provisional ID is marked dead: not a row the collection holds,
                # nor one that already has a mapping.
                if self._pos(ck, c["provisionalID"]) is None and key not in self.id_map:
                    self.id_map[key] = b""
            self._touch(r)

    def projection(self, name):
        """The rows an observer sees: the stored rows with the pending overlay on top, in LSN order."""
        ckey = collection_key(name)
        rows = []
        for pos in self._positions(ckey):
            row_id, body = decode_row_value(self.rows[ckey + struct.pack(">Q", pos)])
            rows.append({"id": row_id, "json": body})
        touched = []
        for key in sorted(self.pending):
            p = self.proposals[struct.unpack(">Q", key)[0]]
            ops = [op for op in p["ops"] if op["collection"] == name]
            if ops:
                touched.append(p["id"])
            for op in ops:
                target = op["id"]
                mapped = self.id_map.get(ckey + op["id"].encode("utf-8"))
                if mapped:
                    target = mapped.decode("utf-8")
                if op["op"] == "upsert":
                    shown = {"id": target, "json": op["json"]}
                    i = next((i for i, x in enumerate(rows) if x["id"] == target), None)
                    if i is None:
                        rows.append(shown)
                    else:
                        rows[i] = shown
                else:
                    rows = [x for x in rows if x["id"] != target]
        return rows, touched

    def fold(self, r):
        """Applies one decoded record, following the fold rules of docs/log-format.md."""
        if r["kind"] == "checkpoint":  # changes no collection; meta.checkpoint keeps the largest
            self.checkpoint = max(self.checkpoint or 0, r["lsn"])
            return
        if r["kind"] in ("mutationProposed", "mutationConfirmed", "mutationRolledBack"):
            return self.fold_mutation(r)
        if r["kind"] == "evicted":
            return self.fold_evicted(r)
        name, e, k, t = r["collection"], r["event"], r["kind"], r["timestampMicros"]
        ckey = collection_key(name)
        old = self.marks.get(name.encode("utf-8"))
        m = decode_mark(old) if old is not None else new_mark()
        m["lastLSN"] = r["lsn"]
        changed = False
        if k == "fetched":
            rows = [] if e["rowsWithheld"] else e["rows"]
            resp = e["response"]
            if e["placement"] == "replace":
                preserved = self._confirmed_rows(ckey, e["basisLSN"])
                changed = self._replace_range(ckey, rows, 0, 0, None)
                changed = self._reapply_confirmed(ckey, e["basisLSN"], True, preserved) or changed
                m["pageCount"], m["pages"] = 0, []
            elif e["placement"] == "page":
                p, last = e["page"], e["isLastPage"]
                preserved = self._confirmed_rows(ckey, e["basisLSN"])
                changed = self._replace_range(ckey, rows, p, position(p, 0), None if last else position(p + 1, 0))
                changed = self._reapply_confirmed(ckey, e["basisLSN"], False, preserved) or changed
                m["pageCount"] = p + 1 if last else max(m["pageCount"], p + 1)
                page = {"url": resp["url"], "etag": resp["etag"], "lastModified": resp["lastModified"], "next": e["nextCursor"]}
                pages = m["pages"]
                if p < len(pages):
                    pages[p] = page
                else:
                    pages.extend({"url": "", "etag": None, "lastModified": None, "next": None} for _ in range(p - len(pages)))
                    pages.append(page)
                if last:
                    del pages[p + 1:]
            else:
                for row in rows:
                    changed = self._upsert(ckey, row) or changed
            m.update(fetchedAt=t, fetchedLSN=r["lsn"], etag=resp["etag"], lastModified=resp["lastModified"],
                     cacheControl=resp["cacheControl"], responseDate=resp["date"], age=resp["age"],
                     expires=resp["expires"], noStore=e["rowsWithheld"],
                     nextCursor=e["nextCursor"] if e["placement"] == "page" else None)
            self._validated(m, t, resp, e["basisLSN"])
        elif k == "notModified":
            resp = e["response"]
            for mark_name, resp_name in [("etag", "etag"), ("lastModified", "lastModified"),
                                         ("cacheControl", "cacheControl"), ("responseDate", "date"),
                                         ("expires", "expires")]:
                if resp[resp_name] is not None:  # RFC 9111 §4.3.4: what the 304 lacks is kept
                    m[mark_name] = resp[resp_name]
            m["age"] = resp["age"]
            if e["page"] is not None and e["page"] < len(m["pages"]):
                for name_ in ("etag", "lastModified"):
                    if resp[name_] is not None:
                        m["pages"][e["page"]][name_] = resp[name_]
            self._validated(m, t, resp, e["basisLSN"])
        elif k == "fetchFailed":
            m["lastAttemptAt"] = t
            m["lastError"] = {"reason": e["reason"], "status": e["status"], "message": e["message"], "lsn": r["lsn"]}
            m["consecutiveFailures"] += 1
        elif k in ("changed", "localWrite"):
            origin = e.get("origin")
            if origin is not None:  # 10.4: a re-delivered push event folds nothing
                cursor = next((c for c in m["pushCursors"] if c["source"] == origin["source"]), None)
                if cursor is not None and push_repeats(origin["eventID"], cursor["eventID"]):
                    e = dict(e, ops=[])
                else:
                    m["pushCursors"] = sorted([c for c in m["pushCursors"] if c["source"] != origin["source"]]
                                              + [{"source": origin["source"], "eventID": origin["eventID"], "lsn": r["lsn"]}],
                                              key=lambda c: c["source"].encode("utf-8"))
            for op in e["ops"]:
                if op["op"] == "upsert":
                    changed = self._upsert(ckey, op) or changed
                else:
                    changed = self._remove(ckey, op["id"]) or changed
        elif k == "invalidated":
            m["invalidatedAt"], m["invalidatedLSN"] = t, r["lsn"]
        if changed:
            m["rowsLSN"] = r["lsn"]
        self.marks[name.encode("utf-8")] = encode_mark(m)


# ---------------------------------------------------------------- the store

def open_store(directory):
    try:
        import lmdb
    except ImportError:
        sys.exit("read_log.py: reading a store needs the lmdb module (pip install lmdb)")
    try:
        env = lmdb.open(directory, readonly=True, max_dbs=16, subdir=True, create=False)
        # Named databases opened outside a transaction stay valid until the environment closes.
        dbs = {n: env.open_db(n.encode(), create=False) for n in REQUIRED_DBS}
    except lmdb.Error as error:
        # Exit 2 as `freshet` does for a directory that is not a readable store.
        print("read_log.py: cannot open store %s: %s" % (directory, error), file=sys.stderr)
        sys.exit(2)
    with begin(env) as txn:  # section 9: a store format this reader does not know is refused, as Freshet does
        version = txn.get(b"formatVersion", db=dbs["meta"])
    if version is None or bytes(version) not in (b"\x01", b"\x02"):
        print("read_log.py: cannot open store %s: store format %r; this reader reads formats 1 to 2"
              % (directory, None if version is None else bytes(version)), file=sys.stderr)
        sys.exit(2)
    for n in MUTATION_DBS:  # added in the mutations release; a store no newer Freshet opened lacks them
        try:
            dbs[n] = env.open_db(n.encode(), create=False)
        except lmdb.NotFoundError:
            dbs[n] = None
    return env, dbs


def begin(env, **kwargs):
    """env.begin(), once more after adopting the map size when another process grew the map
    (LMDB's MDB_MAP_RESIZED: mdb_env_set_mapsize with 0 takes the size the file now has)."""
    import lmdb
    try:
        return env.begin(**kwargs)
    except lmdb.MapResizedError:
        env.set_mapsize(0)
        return env.begin(**kwargs)


REQUIRED_DBS = ("log", "rows", "rowIndex", "marks", "meta")
MUTATION_DBS = ("pending", "mutations", "idMap", "confirmed")


def read_log(env, dbs, first=1, last=None):
    """Yields (lsn, record or None, error or None) in LSN order."""
    with begin(env, db=dbs["log"]) as txn:
        cursor = txn.cursor()
        if not cursor.set_range(struct.pack(">Q", first)):
            return
        for key, value in cursor:
            if len(key) != 8:
                continue
            (lsn,) = struct.unpack(">Q", key)
            if last is not None and lsn > last:
                return
            try:
                yield lsn, decode_record(value, expected_lsn=lsn), None, bytes(value)
            except FormatError as error:
                yield lsn, None, error, bytes(value)


def dump(directory, args):
    env, dbs = open_store(directory)
    first = int(args[args.index("--from") + 1]) if "--from" in args else 1
    last = int(args[args.index("--to") + 1]) if "--to" in args else None
    only = args[args.index("--collection") + 1] if "--collection" in args else None
    problems = 0
    for lsn, r, error, _ in read_log(env, dbs, first, last):
        if error is not None:
            problems += 1
            print("%6d  UNREADABLE  %s" % (lsn, error))
        elif only is None or r["collection"] == only:
            if "--json" in args:
                print(to_json(r))
            else:
                print("%6d  %s  %-18s %-14s  %s" % (lsn, iso(r["timestampMicros"]), r["kind"], escaped(r["collection"]), escaped(summary(r))))
    return 1 if problems else 0


def show_state(directory):
    env, dbs = open_store(directory)
    show_pending(env, dbs)
    with begin(env) as txn:
        stamps = read_stamps(txn, dbs)
        for name, value in txn.cursor(db=dbs["marks"]):
            collection = name.decode("utf-8")
            m = decode_mark(stamped(bytes(name), value, stamps))
            shown = {k: (iso(v) if k in MARK_TIMES.values() else v) for k, v in m.items() if v is not None}
            print("%s  SyncMark %s" % (collection, json.dumps(shown, sort_keys=True)))
            ckey = collection_key(collection)
            cursor = txn.cursor(db=dbs["rows"])
            if cursor.set_range(ckey):
                for key, row in cursor:
                    if not (len(key) == len(ckey) + 8 and key.startswith(ckey)):
                        break
                    (pos,) = struct.unpack(">Q", key[len(ckey):])
                    row_id, body = decode_row_value(row)
                    print("  page %d #%d  id %s  %s" % (pos >> 32, pos & 0xFFFFFFFF, row_id, body[:60].decode("utf-8", "replace")))
    return 0


def show_pending(env, dbs):
    """The unresolved mutations: `pending` holds proposal LSNs; the proposals are read from `log`."""
    if dbs["pending"] is None:
        return
    with begin(env) as txn:
        for key, mid in txn.cursor(db=dbs["pending"]):
            (lsn,) = struct.unpack(">Q", key)
            r = decode_record(txn.get(key, db=dbs["log"]), expected_lsn=lsn)
            print("pending mutation %s at LSN %d: %s" % (show_id(bytes(mid)), lsn, escaped(summary(r))))


def read_stamps(txn, dbs):
    """The stamp journal (meta `markStamps`, store format 2): {name bytes: (lastLSN, rowsLSN)}."""
    value = txn.get(b"markStamps", db=dbs["meta"])
    stamps, offset, previous = {}, 0, None
    value = bytes(value) if value is not None else b""
    while offset < len(value):
        if len(value) - offset < 2:
            raise FormatError("meta markStamps: an entry is truncated")
        (n,) = struct.unpack(">H", value[offset:offset + 2])
        if n == 0:
            raise FormatError("meta markStamps: an entry has an empty name")
        if n > 200:
            raise FormatError("meta markStamps: an entry's name is %d bytes, more than 200" % n)
        if len(value) - offset - 2 < n + 16:
            raise FormatError("meta markStamps: an entry is truncated")
        name = value[offset + 2:offset + 2 + n]
        if previous is not None and name <= previous:
            raise FormatError("meta markStamps: names are not in ascending order")
        stamps[name] = struct.unpack(">QQ", value[offset + 2 + n:offset + 18 + n])
        previous, offset = name, offset + 18 + n
    return stamps


def stamp_applies(name, value, stamps):
    """9.1: a stamp applies when its lastLSN is greater than the stored mark's; else readers ignore it."""
    return name in stamps and stamps[name][0] > decode_mark(value)["lastLSN"]


def stamped(name, value, stamps):
    """A `marks` value as readers see it: lastLSN (4) and rowsLSN (18) replaced by the journal's
    when its stamp applies; every other field kept as stored, unknown tags included."""
    if not stamp_applies(name, value, stamps):
        return bytes(value)
    last, rows = stamps[name]
    w = Writer()
    for tag, field in fields(value):
        if tag == 4:
            w.uint(4, last)
        elif tag == 18:
            w.uint(18, rows)
        else:
            w.bytes(tag, bytes(field))
    return bytes(w.buf)


def push_repeats(event_id, last_id):
    """10.4: both sequences (1-19 ASCII digits) and not greater, or else equal byte for byte."""
    def sequence(i):
        return int(i) if 1 <= len(i) <= 19 and all("0" <= ch <= "9" for ch in i) else None
    mine, last = sequence(event_id), sequence(last_id)
    if mine is not None and last is not None:
        return mine <= last
    return event_id == last_id


def older_mark_matches(stored, replayed):
    """A SyncMark written by a Freshet that predates tags 18-21 (rowsLSN, responseDelayMicros,
    noStore, pages) matches when the replayed mark's other fields are the same bytes."""
    stored_fields = list(fields(stored))
    if any(tag >= 18 for tag, _ in stored_fields):
        return False
    return [(t, bytes(v)) for t, v in stored_fields] == [(t, bytes(v)) for t, v in fields(replayed) if t < 18]


def start_state(env, dbs):
    """The state replay starts from: the latest checkpoint's (meta.checkpoint), or empty.
    Returns (state, the first LSN to fold)."""
    state = State()
    with begin(env) as txn:
        value = txn.get(b"checkpoint", db=dbs["meta"])
        if value is None:
            return state, 1
        (lsn,) = struct.unpack(">Q", value)
        r = decode_record(txn.get(struct.pack(">Q", lsn), db=dbs["log"]), expected_lsn=lsn)
        if r["kind"] != "checkpoint" or r["event"]["throughLSN"] >= lsn:
            raise FormatError("meta.checkpoint names LSN %d, which is not a checkpoint before itself" % lsn)
        kept = {k: decode_record(txn.get(struct.pack(">Q", k), db=dbs["log"]), expected_lsn=k) for k in r["event"]["keptLSNs"]}
    state.load_checkpoint(r["event"], kept)
    return state, r["event"]["throughLSN"] + 1


def verify(directory):
    env, dbs = open_store(directory)
    state, first = start_state(env, dbs)
    problems, count, last = [], 0, 0
    expected = first
    for lsn, r, error, raw in read_log(env, dbs):
        if lsn < first:
            continue  # covered by the checkpoint (a kept proposal): already in its state
        if lsn != expected:
            problems.append("LSNs %d…%d are missing" % (expected, lsn - 1))
        expected = lsn + 1
        count += 1
        last = lsn
        if error is not None:
            problems.append("LSN %d: %s" % (lsn, error))
            continue
        again = encode_record(r["lsn"], r["timestampMicros"], r["kind"], r["collection"], r["event"])
        if again != raw:
            problems.append("LSN %d: re-encoding gives different bytes" % lsn)
        try:
            state.fold(r)
        except FormatError as error:
            problems.append(str(error))
    older_marks = 0
    with begin(env) as txn:
        try:
            stamps = read_stamps(txn, dbs)
        except FormatError as error:
            problems.append("%s; SyncMarks compared as stored" % error)
            stamps = {}
        for name, replayed in (("rows", state.rows), ("rowIndex", state.index), ("marks", state.marks),
                               ("pending", state.pending), ("mutations", state.mutations),
                               ("idMap", state.id_map), ("confirmed", state.confirmed)):
            if dbs[name] is None:
                if replayed:
                    problems.append("the store has no %s database, but the replay fills it" % name)
                continue
            stored = {bytes(k): (stamped(bytes(k), v, stamps) if name == "marks" else bytes(v)) for k, v in txn.cursor(db=dbs[name])}
            for key in sorted(set(stored) | set(replayed)):
                a, b = stored.get(key), replayed.get(key)
                if a == b:
                    continue
                if name == "marks" and a is not None and b is not None and older_mark_matches(a, b):
                    older_marks += 1
                    continue
                problems.append("%s key %s: stored %r, replayed %r" % (name, key.hex(), a, b))
        meta = {bytes(k): bytes(v) for k, v in txn.cursor(db=dbs["meta"])}
        stored_marks = {bytes(k): bytes(v) for k, v in txn.cursor(db=dbs["marks"])}
    for name, (stamp_last, _) in sorted(stamps.items()):  # 9.1: stamps readers ignore
        if name not in stored_marks:
            problems.append("meta markStamps: %s has no SyncMark; readers ignore the stamp" % name.decode("utf-8", "replace"))
        elif not stamp_applies(name, stored_marks[name], stamps):
            problems.append("meta markStamps: %s lastLSN %d is not newer than its SyncMark's; readers ignore the stamp"
                            % (name.decode("utf-8", "replace"), stamp_last))
    if len(stamps) > 16 or sum(18 + len(n) for n in stamps) > 1024:
        problems.append("meta markStamps holds %d entries, over its limits" % len(stamps))
    stored_checkpoint = meta.get(b"checkpoint")
    if (struct.unpack(">Q", stored_checkpoint)[0] if stored_checkpoint else None) != state.checkpoint:
        problems.append("meta checkpoint %r, replayed %r" % (stored_checkpoint, state.checkpoint))
    stored_last = meta.get(b"lastLSN")
    if stored_last is not None and struct.unpack(">Q", stored_last)[0] < last:
        problems.append("meta lastLSN %d is below the last log key %d" % (struct.unpack(">Q", stored_last)[0], last))
    for p in problems[:20]:
        print("PROBLEM " + p)
    if older_marks:
        print("%d SyncMarks were written before tags 18-21 existed; their tags 1-17 match the replay" % older_marks)
    print("%d records re-encoded byte for byte; replay of %d collections equals the stored rows (%d), "
          "rowIndex (%d) and marks (%d); mutations (%d), pending (%d), idMap (%d), confirmed (%d)"
          % (count, len(state.marks), len(state.rows), len(state.index), len(state.marks), len(state.mutations),
             len(state.pending), len(state.id_map), len(state.confirmed))
          if not problems else "%d problems" % len(problems))
    return 1 if problems else 0


def show_projection(directory, name):
    env, dbs = open_store(directory)
    state, first = start_state(env, dbs)
    for lsn, r, error, _ in read_log(env, dbs, first):
        if error is not None:
            print("LSN %d unreadable (%s): replay stops here" % (lsn, error))
            break
        state.fold(r)
    rows, touched = state.projection(name)
    print("%s: %d rows, pending %s" % (name, len(rows), ", ".join(show_id(t) for t in touched) or "none"))
    for row in rows:
        print("  id %s  %s" % (row["id"], bytes(row["json"])[:60].decode("utf-8", "replace")))
    return 0


# ---------------------------------------------------------------- examples and self-test

EXAMPLE = dict(lsn=3, micros=1_767_225_600_000_000,  # 2026-01-01T00:00:00Z
               kind="localWrite", collection="favourites",
               event={"ops": [{"op": "upsert", "id": "25", "json": b'{"name":"pikachu"}'}]})


def example():
    rec = encode_record(EXAMPLE["lsn"], EXAMPLE["micros"], EXAMPLE["kind"], EXAMPLE["collection"], EXAMPLE["event"])
    print(" ".join("%02x" % b for b in rec))
    print("%d bytes, CRC-32C 0x%s" % (len(rec), rec[-4:].hex()))
    decoded = decode_record(rec)
    print(to_json(decoded))
    state = State()
    state.fold(decoded)
    print("folded into an empty store:")
    for name, db in (("rows", state.rows), ("rowIndex", state.index), ("marks", state.marks)):
        for key, value in sorted(db.items()):
            print("  %-8s key %s\n  %-8s value %s" % (name, key.hex(" "), "", value.hex(" ")))
    return 0


def self_test():
    assert crc32c(b"123456789") == 0xE3069283
    # RFC 3720 §B.4 test vectors
    assert crc32c(b"") == 0
    assert crc32c(bytes(32)) == 0x8A9136AA
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E
    assert crc32c(bytes(reversed(range(32)))) == 0x113FDB5C
    assert write_varint(0) == b"\x00" and write_varint(127) == b"\x7f"
    assert write_varint(300) == b"\xac\x02" and read_varint(b"\xac\x02", 0) == (300, 2)
    assert read_varint(write_varint(2**64 - 1), 0)[0] == 2**64 - 1 and len(write_varint(2**64 - 1)) == 10
    assert [zigzag(v) for v in (0, -1, 1, -2, 2)] == [0, 1, 2, 3, 4]
    assert all(unzigzag(zigzag(v)) == v for v in (0, -1, 1, -(2**63), 2**63 - 1, 1_767_225_600_000_000))
    mutation_self_test()
    print("self-test passed")
    return 0


def mutation_self_test():
    """The confirmed-rows rule of section 10.1 and the overlay of 10.6 on records built here:
    a list [1, 2, 3]; a mutation deleting 2 and creating tmp-a, confirmed as 201; then a list
    response whose request left before the confirmation (basisLSN 1) still holding 2 and
    lacking 201. Expected: [1, 3, 201], with 2 deleted again."""
    def rec(lsn, kind, collection, event):
        raw = encode_record(lsn, lsn * 1_000_000, kind, collection, event)
        return decode_record(raw, expected_lsn=lsn)

    def row(i):
        return {"id": i, "json": ('{"id":"%s"}' % i).encode()}

    response = {"url": "https://api.test/items", "status": 200, "etag": None, "lastModified": None,
                "cacheControl": None, "date": None, "age": None, "expires": None, "durationMicros": 0,
                "responseBytes": 0, "requestBytes": 0}
    mid = bytes(range(16))
    state = State()
    state.fold(rec(1, "fetched", "items", {"placement": "replace", "rows": [row("1"), row("2"), row("3")],
                                           "response": response, "nextCursor": None, "basisLSN": 0,
                                           "rowsWithheld": False}))
    state.fold(rec(2, "mutationProposed", "items", {
        "id": mid, "name": "edit", "queue": "default",
        "ops": [{"collection": "items", "op": "delete", "id": "2"},
                {"collection": "items", "op": "upsert", "id": "tmp-a", "json": b'{"id":"tmp-a"}'}],
        "request": {"method": "POST", "path": "/items", "headers": [], "body": b"{}"}, "invalidates": [],
        "confirmation": {"kind": 1, "collection": "items", "provisionalID": "tmp-a", "idField": "id"}}))
    assert [r["id"] for r in state.projection("items")[0]] == ["1", "3", "tmp-a"]
    state.fold(rec(3, "mutationConfirmed", "items", {
        "id": mid, "status": 201, "rows": [{"collection": "items", "row": row("201")}],
        "idMappings": [{"collection": "items", "provisionalID": "tmp-a", "serverID": "201"}],
        "invalidates": [], "affected": ["items"]}))
    assert state.projection("items") == ([row("1"), row("3"), row("201")], [])
    state.fold(rec(4, "fetched", "items", {"placement": "replace", "rows": [row("1"), row("2"), row("3")],
                                           "response": response, "nextCursor": None, "basisLSN": 1,
                                           "rowsWithheld": False}))
    assert state.projection("items")[0] == [row("1"), row("3"), row("201")], state.projection("items")
    assert len(state.confirmed) == 2  # newer than basis 1: kept
    state.fold(rec(5, "fetched", "items", {"placement": "replace", "rows": [row("1"), row("3")],
                                           "response": response, "nextCursor": None, "basisLSN": 4,
                                           "rowsWithheld": False}))
    assert state.projection("items")[0] == [row("1"), row("3")] and not state.confirmed


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    if argv[0] == "--self-test":
        return self_test()
    if argv[0] == "--example":
        return example()
    if argv[0] == "--hex":
        print(to_json(decode_record(bytes.fromhex("".join(argv[1:])))))
        return 0
    directory, rest = argv[0], argv[1:]
    if "--verify" in rest:
        return verify(directory)
    if "--projection" in rest:
        return show_projection(directory, rest[rest.index("--projection") + 1])
    if "--state" in rest:
        return show_state(directory)
    return dump(directory, rest)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except FormatError as error:
        print("read_log.py: %s" % error, file=sys.stderr)
        sys.exit(1)
    except BrokenPipeError:  # piped into `head`
        sys.exit(0)
