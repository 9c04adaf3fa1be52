#!/usr/bin/env python3
"""Make corrupted copies of a small corpus WARC in fixtures/corrupt/, plus manifest.json
naming, for each file, the errors a correct reader must report (reason and file offset,
worked out here from the bytes) and the record ids it must still return; optionally the
target URIs of records embedded in a payload that must never become captures
("phantom_uris") and the records that are read but cannot be indexed ("unindexed": id,
offset, reason), which `cdx` and `import-warc` must both leave out and report.

Source: ../shared/corpus/warcio/test/data/example.warc.gz (6 records, gzip per record).
Usage: scripts/make-corrupt-warcs.py   (from the repository root; deterministic output)"""

import gzip
import json
import os
import re
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "..", "shared", "corpus", "warcio", "test", "data", "example.warc.gz")
OUT = os.path.join(ROOT, "fixtures", "corrupt")


def members(data):
    """Decompressed contents of each gzip member."""
    out, pos = [], 0
    while pos < len(data):
        d = zlib.decompressobj(31)
        out.append(d.decompress(data[pos:]) + d.flush())
        pos = len(data) - len(d.unused_data)
    return out


def gz(data):
    return gzip.compress(data, compresslevel=6, mtime=0)


def record_id(record):
    return re.search(rb"WARC-Record-ID: (\S+)", record).group(1).decode()


def set_content_length(record, delta):
    m = re.search(rb"Content-Length: (\d+)", record)
    new = int(m.group(1)) + delta
    return record[: m.start(1)] + str(new).encode() + record[m.end(1):]


def drop_header(record, name):
    return re.sub(rb"\r\n" + name + rb": [^\r]*", b"", record, count=1)


def warc_record(headers, block):
    head = b"WARC/1.0\r\n" + b"".join(b"%s: %s\r\n" % (k, v) for k, v in headers)
    head += b"Content-Length: %d\r\n\r\n" % len(block)
    return head + block + b"\r\n\r\n"


def phantom_record(uri, with_id):
    body = b"<html>not a capture of this file</html>"
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body
    headers = [(b"WARC-Type", b"response")]
    if with_id:
        headers.append((b"WARC-Record-ID", b"<urn:uuid:00000000-0000-4000-8000-00000000beef>"))
    headers += [(b"WARC-Date", b"2017-03-06T04:03:53Z"), (b"WARC-Target-URI", uri.encode()),
                (b"Content-Type", b"application/http; msgtype=response")]
    return warc_record(headers, block)


def embedding_record(inner, delta):
    """A resource record holding a WARC file (one record) with its Content-Length off."""
    block = b"A stored WARC file follows.\r\n" + inner
    headers = [(b"WARC-Type", b"resource"),
               (b"WARC-Record-ID", b"<urn:uuid:00000000-0000-4000-8000-0000000ca55e>"),
               (b"WARC-Date", b"2017-03-06T04:03:53Z"),
               (b"WARC-Target-URI", b"http://example.com/stored.warc"),
               (b"Content-Type", b"application/warc")]
    return set_content_length(warc_record(headers, block), delta)


def main():
    records = members(open(SOURCE, "rb").read())
    assert len(records) == 6 and all(r.startswith(b"WARC/1.0") for r in records)
    ids = [record_id(r) for r in records]
    manifest = []
    os.makedirs(OUT, exist_ok=True)

    def write(name, data, errors, valid, phantoms=(), unindexed=()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        case = {
            "file": name,
            "intact_records": len(records),
            "errors": [{"kind": k, "offset": o} for k, o in errors],
            "valid_ids": [ids[i] for i in valid],
        }
        if phantoms:
            case["phantom_uris"] = list(phantoms)
        if unindexed:
            case["unindexed"] = [{"id": ids[i], "offset": o, "reason": r} for i, o, r in unindexed]
        manifest.append(case)

    everything = range(len(records))
    but = lambda *skip: [i for i in everything if i not in skip]

    # --- gzip, one member per record ---
    comp = [gz(r) for r in records]
    offsets = [sum(len(c) for c in comp[:i]) for i in everything]
    joined = lambda parts: b"".join(parts)

    # Member 2 cut short (its last half and trailer gone), followed by the intact member 3.
    # Raw deflate has no framing: the inflater reads on into member 3's bytes as if they
    # were member 2's (here until a block with the final bit), so the break shows as a
    # CRC-32 mismatch; the reader then looks for the next member from member 2's start.
    cut = comp[:2] + [comp[2][: len(comp[2]) // 2]] + comp[3:]
    write("gz-truncated-member.warc.gz", joined(cut), [("gzip-checksum", offsets[2])], but(2))

    garbage = b"this is not a gzip member\r\n" * 3
    write("gz-garbage-between-members.warc.gz", joined(comp[:3] + [garbage] + comp[3:]),
          [("garbage", offsets[3])], everything)

    for name, delta in [("up", 10), ("down", -10)]:
        parts = comp[:2] + [gz(set_content_length(records[2], delta))] + comp[3:]
        write("gz-content-length-%s.warc.gz" % name, joined(parts),
              [("content-length-mismatch", offsets[2])], but(2))

    parts = comp[:2] + [gz(drop_header(records[2], b"WARC-Record-ID"))] + comp[3:]
    write("gz-missing-record-id.warc.gz", joined(parts),
          [("missing-warc-record-id", offsets[2])], but(2))

    # Only the trailer is damaged: the member's data decodes completely, so its record is
    # kept (as warcio keeps it) and the trailer reported.
    bad_crc = bytearray(comp[2])
    bad_crc[-8] ^= 0xFF
    write("gz-bad-crc.warc.gz", joined(comp[:2] + [bytes(bad_crc)] + comp[3:]),
          [("gzip-trailer", offsets[2])], everything)
    write("gz-missing-trailer.warc.gz", joined(comp[:2] + [comp[2][:-8]] + comp[3:]),
          [("gzip-trailer", offsets[2])], everything)
    write("gz-missing-trailer-at-end.warc.gz", joined(comp[:5] + [comp[5][:-8]]),
          [("gzip-trailer", offsets[5])], everything)

    # A WARC file stored in a resource record whose Content-Length is 20 bytes short: the
    # record inside its payload is complete and valid, but it is not a record of this file.
    phantom_uri = "http://phantom.example/"
    carrier = embedding_record(phantom_record(phantom_uri, with_id=True), -20)
    parts = comp[:2] + [gz(carrier)] + comp[2:]
    write("gz-embedded-record.warc.gz", joined(parts),
          [("content-length-mismatch", offsets[2])], everything, phantoms=[phantom_uri])

    whole = joined(comp)
    write("gz-cut-mid-record.warc.gz", whole[: offsets[4] + len(comp[4]) // 2],
          [("gzip-truncated", offsets[4])], range(4))

    # --- one gzip member for the whole file, cut in the middle ---
    plain = joined(records)
    single = gz(plain)
    cut_at = len(single) * 3 // 5
    prefix = zlib.decompressobj(31).decompress(single[:cut_at])
    ends = [sum(len(r) for r in records[: i + 1]) for i in everything]
    # A record is returned when its bytes and at least one byte after it came out.
    complete = [i for i in everything if ends[i] < len(prefix)]
    write("whole-gzip-cut.warc.gz", single[:cut_at], [("gzip-truncated", 0)], complete)

    # --- uncompressed ---
    plain_offsets = [sum(len(r) for r in records[:i]) for i in everything]
    write("warc-garbage-between-records.warc", joined(records[:3] + [garbage] + records[3:]),
          [("garbage", plain_offsets[3])], everything)
    for name, delta in [("up", 10), ("down", -10)]:
        parts = records[:2] + [set_content_length(records[2], delta)] + records[3:]
        write("warc-content-length-%s.warc" % name, joined(parts),
              [("content-length-mismatch", plain_offsets[2])], but(2))
    parts = records[:2] + [drop_header(records[2], b"WARC-Record-ID")] + records[3:]
    write("warc-missing-record-id.warc", joined(parts),
          [("missing-warc-record-id", plain_offsets[2])], but(2))
    parts = records[:2] + [drop_header(records[2], b"Content-Length")] + records[3:]
    write("warc-missing-content-length.warc", joined(parts),
          [("missing-content-length", plain_offsets[2])], but(2))
    # Uncompressed, nothing tells a stored record from a real one but its validity: the one
    # embedded here lacks its WARC-Record-ID, so after resynchronizing on it the reader must
    # not take it as a record.
    inner = phantom_record(phantom_uri, with_id=False)
    carrier = embedding_record(inner, -20)
    parts = records[:2] + [carrier] + records[2:]
    inner_at = plain_offsets[2] + carrier.index(inner)
    write("warc-embedded-record.warc", joined(parts),
          [("content-length-mismatch", plain_offsets[2]), ("missing-warc-record-id", inner_at)],
          everything, phantoms=[phantom_uri])
    # Records that are read but cannot be indexed: a response whose WARC-Date is not a date,
    # a revisit without WARC-Target-URI.
    bad_date = re.sub(rb"WARC-Date: [^\r]*", b"WARC-Date: yesterday", records[2], count=1)
    no_uri = drop_header(records[4], b"WARC-Target-URI")
    parts = records[:2] + [bad_date, records[3], no_uri, records[5]]
    at = [sum(len(r) for r in parts[:i]) for i in everything]
    write("warc-unindexable-records.warc", joined(parts), [], everything,
          unindexed=[(2, at[2], "bad-warc-date"), (4, at[4], "missing-target-uri")])
    # Cut inside the block of record 4 (20 bytes before its end).
    write("warc-cut-mid-record.warc", plain[: plain_offsets[4] + len(records[4]) - 20],
          [("record-truncated", plain_offsets[4])], range(4))
    write("warc-cut-in-header.warc", plain[: plain_offsets[4] + 100],
          [("record-truncated", plain_offsets[4])], range(4))

    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
