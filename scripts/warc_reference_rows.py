#!/usr/bin/env python3
"""Reference for the WARC import tests, computed with warcio (independent of Sediment):
the file rows a set of WARC files should produce under `--all-types` (the default status
filter, every MIME type; the tests check the full-text default against these rows by type).

Row key = SHA-1 of the stored payload (the bytes after the HTTP header block, still
chunk-encoded if they were stored that way), base32. A capture locates a file when it is a
response with HTTP status 200 or a resource record, of a web URL (http, https, ftp: wget's
`metadata://` log and arguments, `dns:` and the like are not files of the crawl and make no
row; see FileFilter::is_web_fetch); revisits count towards `c` of the digest they name. The first capture is the earliest by (WARC-Date, file name, offset).

Prints one JSON object per row: {"key", "size", "c", "f", "o", "u", "d"}.
Usage: warc_reference_rows.py FILE...
"""
import base64, hashlib, json, os, sys
from warcio.archiveiterator import ArchiveIterator


def ts14(date):
    return "".join(ch for ch in date.split(".")[0] if ch.isdigit())[:14]


rows = {}
revisits = {}
for path in sys.argv[1:]:
    name = os.path.basename(path)
    with open(path, "rb") as fh:
        it = ArchiveIterator(fh, no_record_parse=False, arc2warc=False)
        for rec in it:
            kind = rec.rec_type
            if kind == "revisit":
                digest = (rec.rec_headers.get_header("WARC-Payload-Digest") or "").split(":")[-1]
                revisits[digest] = revisits.get(digest, 0) + 1
                continue
            if kind not in ("response", "resource"):
                continue
            uri = rec.rec_headers.get_header("WARC-Target-URI").strip("<>")
            scheme, colon, rest = uri.partition(":")
            if colon and "/" not in scheme and not rest[:1].isdigit() \
                    and scheme.lower() not in ("http", "https", "ftp"):
                rec.raw_stream.read()
                continue
            if kind == "response":
                if rec.http_headers is None or rec.http_headers.get_statuscode() != "200":
                    rec.raw_stream.read()
                    continue
            data = rec.raw_stream.read()
            key = base64.b32encode(hashlib.sha1(data).digest()).decode()
            date = rec.rec_headers.get_header("WARC-Date")
            cap = (ts14(date), name, it.get_record_offset(), uri, date, len(data))
            rows.setdefault(key, []).append(cap)

for key, caps in sorted(rows.items()):
    caps.sort()
    ts, name, offset, uri, date, size = caps[0]
    d = "%s-%s-%sT%s:%s:%sZ" % (ts[0:4], ts[4:6], ts[6:8], ts[8:10], ts[10:12], ts[12:14])
    print(json.dumps({"key": key, "size": size, "c": len(caps) + revisits.get(key, 0),
                      "f": name, "o": offset, "u": uri, "d": d}))
