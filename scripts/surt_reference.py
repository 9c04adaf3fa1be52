#!/usr/bin/env python3
"""Reference SURT keys from the Python `surt` package, for tests/surt_equivalence.rs.

Reads a JSON object on stdin: {"corpus": DIR or null, "urls": [extra URLs]}.
Collects every original URL of the CDX/CDXJ files under DIR and every target URI of the
WARC/ARC files under DIR (read with warcio), adds the extra URLs, and writes one JSON
array of {"url", "source", "surt"} objects to stdout ("surt" is null when the package
raises, with "error" holding the message).
"""
import gzip
import json
import os
import sys
import zlib

import surt


def cdx_lines(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        # Member by member, as ZipNum readers do (a member's last line has no break).
        out, pos = [], 0
        while pos < len(data):
            d = zlib.decompressobj(31)
            text = d.decompress(data[pos:])
            out.extend(text.splitlines())
            pos = len(data) - len(d.unused_data)
        return out
    return data.splitlines()


def urls_from_cdx(path):
    url_col = 2
    for raw in cdx_lines(path):
        line = raw.decode("utf-8", "replace").rstrip()
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#") or line.startswith("filedesc"):
            continue
        if stripped.startswith("CDX "):
            letters = stripped.split()[1:]
            url_col = letters.index("a") if "a" in letters else None
            continue
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[2].startswith("{"):
            try:
                url = json.loads(parts[2]).get("url")
            except ValueError:
                continue
            if url:
                yield url
            continue
        cols = line.split(" ")
        if url_col is not None and len(cols) > url_col and cols[url_col] != "-":
            yield cols[url_col]


def urls_from_warc(path):
    from warcio.archiveiterator import ArchiveIterator

    try:
        with open(path, "rb") as f:
            for record in ArchiveIterator(f, arc2warc=True):
                uri = record.rec_headers.get_header("WARC-Target-URI")
                if uri:
                    yield uri
    except Exception:  # broken samples: keep what was read
        return


def main():
    req = json.load(sys.stdin)
    items = []
    corpus = req.get("corpus")
    if corpus:
        for root, _dirs, files in sorted(os.walk(corpus)):
            for name in sorted(files):
                path = os.path.join(root, name)
                rel = os.path.relpath(path, corpus)
                if name.endswith((".cdx", ".cdxj", ".cdx.gz")):
                    items.extend((u, rel) for u in urls_from_cdx(path))
                elif name.endswith((".warc", ".warc.gz", ".arc", ".arc.gz", ".warc.gz.bad")):
                    items.extend((u, rel) for u in urls_from_warc(path))
    items.extend((u, "hand-picked") for u in req.get("urls", []))
    out, seen = [], set()
    for url, source in items:
        if url in seen:
            continue
        seen.add(url)
        entry = {"url": url, "source": source}
        try:
            entry["surt"] = surt.surt(url)
        except Exception as e:
            entry["surt"] = None
            entry["error"] = "%s: %s" % (type(e).__name__, e)
        out.append(entry)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
