#!/usr/bin/env python3
"""Writes N CDX-11 lines derived from real ones (sandcrawler/example.cdx and pywb's
iana.cdx from $SEDIMENT_CORPUS or ../shared/corpus), varying digest, URL path and timestamp so that every line
is a distinct capture and most digests are distinct (1 in 8 repeats an earlier digest, as
duplicates do in real crawls). Deterministic. Sort the output (LC_ALL=C sort) to get a real CDX's order.
Usage: gen_cdx.py N > out.cdx"""
import base64, datetime, hashlib, os, sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 5_000_000
root = os.environ.get("SEDIMENT_CORPUS") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "corpus")
seed_lines = []
for rel in ("sandcrawler/example.cdx", "pywb/sample_archive/cdx/iana.cdx"):
    with open(os.path.join(root, rel)) as fh:
        for line in fh:
            cols = line.rstrip("\n").split(" ")
            if len(cols) == 11 and not line.startswith(" "):
                seed_lines.append(cols)
out = sys.stdout
buf = []
for i in range(n):
    cols = list(seed_lines[i % len(seed_lines)])
    group = i // len(seed_lines)
    d = i - (i % 8 == 7) * 7  # every 8th line repeats the digest of 7 lines before
    cols[5] = base64.b32encode(hashlib.sha1(d.to_bytes(8, "big")).digest()).decode()
    suffix = "/v%07d" % group
    cols[0] = cols[0] + suffix
    cols[2] = cols[2] + suffix
    ts = datetime.datetime.strptime(cols[1][:14].ljust(14, "0"), "%Y%m%d%H%M%S")
    cols[1] = (ts + datetime.timedelta(seconds=group % 86400)).strftime("%Y%m%d%H%M%S")
    if cols[9] != "-":
        cols[9] = str(int(cols[9]) + group * 1000)
    buf.append(" ".join(cols))
    if len(buf) >= 100000:
        out.write("\n".join(buf) + "\n")
        buf = []
if buf:
    out.write("\n".join(buf) + "\n")
