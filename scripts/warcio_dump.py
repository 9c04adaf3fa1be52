#!/usr/bin/env python3
"""Print one JSON line per WARC record as seen by warcio (the independent reference for
tests/warc_reader.rs). Usage: warcio_dump.py FILE

Per record: type, target URI, record id, offset and length (warcio's own), the SHA-1 of the
stored payload (block bytes after the HTTP head, still chunk-encoded if they are), the SHA-1
of the de-chunked payload when the HTTP head says chunked and warcio's strict de-chunker
accepts it, and the expected digest check computed here from WARC-Payload-Digest.
A last line {"error": ...} when warcio stops on an exception."""

import base64
import binascii
import hashlib
import io
import json
import sys

from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import ChunkedDataReader


def decode_sha1(text):
    try:
        if len(text) == 32:
            raw = base64.b32decode(text.upper())
        elif len(text) == 40:
            raw = binascii.unhexlify(text)
        elif len(text) in (27, 28):
            padded = text + "=" * (28 - len(text))
            if "-" in padded or "_" in padded:
                raw = base64.urlsafe_b64decode(padded)
            else:
                raw = base64.b64decode(padded, validate=True)
        else:
            return None
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 20 else None


def expected_check(rec_type, headers, stored, dechunked):
    if rec_type == "revisit" or headers.get_header("WARC-Segment-Number"):
        return "not-applicable"
    value = headers.get_header("WARC-Payload-Digest")
    if value is None:
        return "absent"
    value = value.strip()
    if ":" in value:
        label, encoded = value.split(":", 1)
        label = label.strip().lower()
    else:
        label, encoded = "sha1", value
    if label not in ("sha1", "sha-1"):
        return "unsupported"
    digest = decode_sha1(encoded.strip())
    if digest is None:
        return "malformed"
    if digest == stored:
        return "match"
    if dechunked is not None and digest == dechunked:
        return "match-dechunked"
    return "mismatch"


def main(path):
    out = sys.stdout
    with open(path, "rb") as f:
        it = ArchiveIterator(f)
        try:
            for record in it:
                raw = record.raw_stream.read()
                stored = hashlib.sha1(raw).digest()
                http = record.http_headers
                chunked = bool(
                    http is not None
                    and "chunked" in (http.get_header("Transfer-Encoding") or "").lower()
                )
                dechunked = None
                if chunked:
                    try:
                        reader = ChunkedDataReader(io.BytesIO(raw), raise_exceptions=True)
                        dechunked = hashlib.sha1(reader.read()).digest()
                    except Exception:
                        dechunked = None
                headers = record.rec_headers
                status = None
                if http is not None and record.rec_type != "request":
                    code = http.get_statuscode()
                    status = int(code) if code and code.isdigit() else None
                row = {
                    "type": record.rec_type,
                    "uri": headers.get_header("WARC-Target-URI"),
                    "id": headers.get_header("WARC-Record-ID"),
                    "offset": it.get_record_offset(),
                    "length": it.get_record_length(),
                    "has_http": http is not None,
                    "status": status,
                    "payload_sha1": stored.hex(),
                    "payload_length": len(raw),
                    "chunked": chunked,
                    "dechunked_sha1": dechunked.hex() if dechunked else None,
                    "digest_check": expected_check(record.rec_type, headers, stored, dechunked),
                }
                out.write(json.dumps(row) + "\n")
        except Exception as e:  # warcio gives up on this file here
            out.write(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
