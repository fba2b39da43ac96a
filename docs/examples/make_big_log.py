#!/usr/bin/env python3
"""Writes a synthetic Freshet JSON Lines export (docs/log-format.md §13) for timing the tools.

    python3 docs/examples/make_big_log.py 200000 > /tmp/big.jsonl
    freshet import /tmp/big /tmp/big.jsonl && time freshet verify /tmp/big

Records: every 50th is a `fetched` replacing one of 100 collections with 20 rows; the others
are `localWrite` upserts of one small row. Timestamps are 1 ms apart from 2026-01-01.
"""
import json
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
start = 1_767_225_600_000_000
compact = dict(separators=(",", ":"))
for i in range(1, n + 1):
    collection = "c%d" % (i % 100)
    if i % 50 == 0:
        rows = [{"id": str(j), "json": json.dumps({"id": j, "name": "row %d v%d" % (j, i)}, **compact)} for j in range(20)]
        kind, event = "fetched", {"placement": "replace", "rows": rows,
                                  "response": {"url": "http://h/" + collection, "status": 200, "etag": '"e%d"' % i,
                                               "durationMicros": 1000, "responseBytes": 2000, "requestBytes": 0}}
    else:
        row = {"id": str(i % 37), "json": json.dumps({"id": i % 37, "n": i}, **compact)}
        kind, event = "localWrite", {"ops": [{"op": "upsert", "row": row}]}
    sys.stdout.write(json.dumps({"lsn": i, "micros": start + i * 1000, "kind": kind, "collection": collection, "event": event}, **compact) + "\n")
