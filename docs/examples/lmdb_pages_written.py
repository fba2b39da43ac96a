#!/usr/bin/env python3
"""Pages an LMDB environment writes per commit, and which B-tree each belongs to.

Usage:
    strace -f -e trace=pwrite64,writev,lseek -s0 -o TRACE COMMAND...
    lmdb_pages_written.py TRACE FD=DATA.MDB [FD=DATA.MDB ...]

For each file descriptor FD (see `ls -l /proc/PID/fd`, or the order the stores were opened
in), prints the commits seen (a commit ends with LMDB's meta-page write, a pwrite of fewer
than 4,096 bytes), the pages and write calls per commit, and for the last commit the pages
by tree (`log`, `rows`, ..., `MAIN` the catalogue of named databases, `FREE` the free list)
and level (0 the root), found by walking every tree of the data file as it is after the
command: the last commit's pages are exactly the pages of its trees that it wrote. Timings
under strace mean nothing; counts do (docs/performance.md, "W7 round 3").

Assumes LMDB's 64-bit layout with 4,096-byte pages, as Freshet's stores have.
"""
import collections
import re
import struct
import sys

PAGE = 4096
P_BRANCH, F_BIGDATA, F_SUBDATA = 0x01, 0x01, 0x02


def owners(path):
    """Page number -> (tree, level) for every page reachable in the newest meta page's trees."""
    data = open(path, 'rb').read()
    # MDB_meta follows each meta page's 16-byte header: magic, version, address, mapsize,
    # two MDB_db (free list at 24, main at 72), last page at 120, transaction ID at 128.
    meta = max((struct.unpack_from('<Q', data, i * PAGE + 16 + 128)[0], i * PAGE + 16) for i in (0, 1))[1]
    found = {}

    def database(offset):
        # MDB_db: pad u32, flags u16, depth u16, branch, leaf, overflow pages, entries, root.
        return struct.unpack_from('<IHHQQQQQ', data, offset)

    def walk(page, tree, level):
        base = page * PAGE
        found[page] = (tree, level)
        flags, lower = struct.unpack_from('<HH', data, base + 10)
        for k in range((lower - 16) // 2):
            node = base + struct.unpack_from('<H', data, base + 16 + 2 * k)[0]
            lo, hi, node_flags, key_size = struct.unpack_from('<HHHH', data, node)
            if flags & P_BRANCH:
                walk(lo | hi << 16 | node_flags << 32, tree, level + 1)
                continue
            value = node + 8 + key_size
            if node_flags & F_BIGDATA:
                first = struct.unpack_from('<Q', data, value)[0]
                count = struct.unpack_from('<I', data, first * PAGE + 12)[0]
                for j in range(count):
                    found[first + j] = (tree, 'overflow')
            if node_flags & F_SUBDATA and tree == 'MAIN':
                named = database(value)
                if named[2] > 0:
                    walk(named[7], data[node + 8:value].decode(), 0)

    for tree, offset in (('FREE', meta + 24), ('MAIN', meta + 72)):
        root = database(offset)
        if root[2] > 0:
            walk(root[7], tree, 0)
    return found


def commits(trace):
    """FD -> list of commits, each (pages written, write calls)."""
    position, current, calls, done = {}, collections.defaultdict(list), collections.Counter(), collections.defaultdict(list)
    for line in open(trace):
        line = line.strip()
        m = re.match(r'\d+\s+lseek\((\d+), (\d+), SEEK_SET\)', line)
        if m:
            position[m.group(1)] = int(m.group(2))
            continue
        m = re.match(r'\d+\s+pwrite64\((\d+), .*, (\d+), (\d+)\)\s+= (\d+)', line)
        if m:
            fd, count, offset = m.group(1), int(m.group(2)), int(m.group(3))
            if count < PAGE:
                done[fd].append((current[fd], calls[fd]))
                current[fd], calls[fd] = [], 0
            else:
                current[fd] += [offset // PAGE + j for j in range(count // PAGE)]
                calls[fd] += 1
            continue
        m = re.match(r'\d+\s+writev\((\d+), .*\)\s+= (\d+)', line)
        if m:
            fd, count = m.group(1), int(m.group(2))
            current[fd] += [position[fd] // PAGE + j for j in range(count // PAGE)]
            position[fd] += count
            calls[fd] += 1
    return done


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    seen = commits(sys.argv[1])
    for pair in sys.argv[2:]:
        fd, path = pair.split('=', 1)
        if not seen[fd]:
            print(f'fd {fd} ({path}): no commits')
            continue
        n = len(seen[fd])
        pages = sum(len(p) for p, _ in seen[fd]) / n
        calls = sum(c for _, c in seen[fd]) / n
        tree_of = owners(path)
        last = [tree_of.get(p, ('?', '?')) for p in seen[fd][-1][0]]
        by_tree = collections.Counter(tree for tree, _ in last)
        print(f'fd {fd} ({path}): {n} commits, {pages:.2f} pages and {calls:.2f} write calls a commit')
        print('  last commit: ' + ', '.join(f'{tree} {by_tree[tree]} (levels {sorted(str(l) for t, l in last if t == tree)})'
                                            for tree in sorted(by_tree)))


if __name__ == '__main__':
    main()
