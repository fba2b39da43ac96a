#!/usr/bin/env python3
"""Build the lean test fixtures in <repo>/fixtures/ from the shared source data.

Usage: python3 tools/fixture-server/make_fixtures.py SHARED_DATA_DIR [--out DIR]

SHARED_DATA_DIR holds pokeapi/ (a checkout of PokeAPI/api-data with LICENSE.txt,
SOURCE.txt and data/api/v2/...) and jsonplaceholder/ (data.json, LICENSE,
SOURCE.txt). Documents are minified (values and key order unchanged) and
gzip-compressed at level 9 with mtime 0, so the output is byte-for-byte
reproducible. Standard library only.
"""

import argparse
import gzip
import io
import json
import os
import shutil
import sys

POKEMON_IDS = range(1, 152)
RESOURCES = ("pokemon", "pokemon-species")
CHANGE_LINE = ("Changed for Freshet fixtures: documents minified (values unchanged) "
               "and gzip-compressed, one file per document.")


def minify(path):
    with open(path, "r", encoding="utf-8") as f:
        doc = json.load(f)  # dicts keep key order
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def write_gz(data, dest):
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    buf = io.BytesIO()
    # filename="" keeps the source name out of the header; mtime=0 for reproducibility.
    with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=buf, mtime=0) as gz:
        gz.write(data)
    tmp = dest + ".tmp"
    with open(tmp, "wb") as f:
        f.write(buf.getvalue())
    os.replace(tmp, dest)


def copy_source_txt(src, dest):
    with open(src, "r", encoding="utf-8") as f:
        text = f.read()
    if not text.endswith("\n"):
        text += "\n"
    with open(dest, "w", encoding="utf-8") as f:
        f.write(text + CHANGE_LINE + "\n")


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    default_out = os.path.join(os.path.dirname(os.path.dirname(here)), "fixtures")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("shared_data", help="shared data directory (contains pokeapi/ and jsonplaceholder/)")
    p.add_argument("--out", default=default_out, help="output fixtures directory (default: %(default)s)")
    args = p.parse_args(argv)

    src = os.path.abspath(args.shared_data)
    out = os.path.abspath(args.out)
    poke_src = os.path.join(src, "pokeapi")
    jp_src = os.path.join(src, "jsonplaceholder")
    for d in (poke_src, jp_src):
        if not os.path.isdir(d):
            print(f"make_fixtures: missing directory {d}", file=sys.stderr)
            return 2

    # PokeAPI
    poke_out = os.path.join(out, "pokeapi")
    os.makedirs(poke_out, exist_ok=True)
    shutil.copyfile(os.path.join(poke_src, "LICENSE.txt"), os.path.join(poke_out, "LICENSE.txt"))
    copy_source_txt(os.path.join(poke_src, "SOURCE.txt"), os.path.join(poke_out, "SOURCE.txt"))
    count = 0
    for res in RESOURCES:
        api_src = os.path.join(poke_src, "data", "api", "v2", res)
        api_out = os.path.join(poke_out, "api", "v2", res)
        write_gz(minify(os.path.join(api_src, "index.json")), os.path.join(api_out, "index.json.gz"))
        count += 1
        for i in POKEMON_IDS:
            write_gz(minify(os.path.join(api_src, str(i), "index.json")),
                     os.path.join(api_out, f"{i}.json.gz"))
            count += 1

    # JSONPlaceholder
    jp_out = os.path.join(out, "jsonplaceholder")
    os.makedirs(jp_out, exist_ok=True)
    shutil.copyfile(os.path.join(jp_src, "LICENSE"), os.path.join(jp_out, "LICENSE"))
    copy_source_txt(os.path.join(jp_src, "SOURCE.txt"), os.path.join(jp_out, "SOURCE.txt"))
    write_gz(minify(os.path.join(jp_src, "data.json")), os.path.join(jp_out, "data.json.gz"))
    count += 1

    print(f"make_fixtures: wrote {count} documents under {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
