#!/usr/bin/env python3
"""Compare freshet-bench binaries on one workload, interleaved, in one engine's child process.

    scripts/bench-compare.py WORKLOAD ENGINE RUNS WORK_DIR BINARY...

Runs `BINARY --child WORKLOAD ENGINE measure OUT --work WORK_DIR` for every binary in turn,
RUNS times (A, B, A, B, ...: the load other processes put on the machine falls on all of
them alike), and prints each value the child measured (`value`, `cpu`, `append`, ...) as the
median of the runs, then every run's value in brackets, and the load average seen.
WORK_DIR is a work directory made once with
`freshet-bench --only WORKLOAD --rounds 1 --work WORK_DIR --keep` (it holds the inputs).
Used for the before/after tables of docs/performance.md (round 4).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile


def main(argv):
    if len(argv) < 6:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    workload, engine, runs, work, binaries = argv[1], argv[2], int(argv[3]), argv[4], argv[5:]
    values = {b: {} for b in binaries}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        for _ in range(runs):
            for b in binaries:
                subprocess.run([b, "--child", workload, engine, "measure", out, "--work", work], check=True)
                with open(out) as f:
                    for key, v in json.load(f)["values"].items():
                        values[b].setdefault(key, []).append(v)
            loads.append(os.getloadavg()[0])
    for b in binaries:
        cells = [f"{k}={statistics.median(v):.4g} [{' '.join(f'{x:.4g}' for x in v)}]" for k, v in sorted(values[b].items())]
        print(os.path.basename(b), " ".join(cells))
    print(f"load average during the runs: {min(loads):.1f}-{max(loads):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
