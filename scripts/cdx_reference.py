#!/usr/bin/env python3
"""Reference reading of CDX/CDXJ files for tests/cdx_corpus.rs, written independently of
the Rust parser from the format rules (the CDX dialects of ARCHITECTURE.md and README).

Usage: cdx_reference.py FILE...  Writes one JSON object: {FILE: {"counts": {...},
"records": [...]}}, each record with its line number and fields.
"""
import base64
import json
import re
import sys
import zlib

CDX11, CDX10, CDX09 = "NbamskrMSVg", "NbamskrMVg", "NbamskrVg"
PAD = "10000101000000"


def read_lines(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        lines, pos = [], 0
        while pos < len(data):
            d = zlib.decompressobj(31)
            text = d.decompress(data[pos:])
            # Each gzip member ends a line (ZipNum blocks end without a line break).
            part = text.split(b"\n")
            if part and part[-1] == b"":
                part.pop()
            lines.extend(part)
            pos = len(data) - len(d.unused_data)
        return lines
    part = data.split(b"\n")
    if part and part[-1] == b"":
        part.pop()
    return part


def absent(v):
    return v is None or v in ("-", "")


def digest_b32(v):
    if absent(v):
        return None
    if v.lower().startswith("sha1:"):
        v = v[5:]
    try:
        if len(v) == 32:
            return base64.b32encode(base64.b32decode(v.upper())).decode()
        if len(v) == 40:
            return base64.b32encode(bytes.fromhex(v)).decode()
    except ValueError:
        pass
    raise ValueError("bad_digest")


def number(v, reason):
    if absent(v):
        return None
    if not (v.isascii() and v.isdigit()):
        raise ValueError(reason)
    return int(v)


def status(v):
    if absent(v):
        return None
    if not (v.isdigit() and 1 <= len(v) <= 3):
        raise ValueError("bad_status")
    return int(v)


def timestamp(v):
    if not (v.isdigit() and 4 <= len(v) <= 14):
        raise ValueError("bad_timestamp")
    return v + PAD[len(v):]


def surt_shaped(k):
    return k if (k and re.match(r"^[^/)]*\)/", k)) else None


def read(path):
    counts = {"records": 0, "skipped": {}, "rejected": {}}
    records = []
    letters = None

    def skip(why):
        counts["skipped"][why] = counts["skipped"].get(why, 0) + 1

    def reject(why):
        counts["rejected"][why] = counts["rejected"].get(why, 0) + 1

    for no, raw in enumerate(read_lines(path), 1):
        line = raw.decode("utf-8").rstrip(" \t\r\n")
        if not line.strip():
            skip("blank")
            continue
        if line.lstrip().startswith("#") or line.startswith("!"):
            skip("comment")
            continue
        if line.startswith("filedesc"):
            skip("filedesc")
            continue
        if line.lstrip().startswith("CDX ") or line.strip() == "CDX":
            letters = "".join(line.split()[1:])
            skip("header")
            continue
        parts = line.split(" ", 2)
        if letters is None:
            if len(parts) == 3 and parts[2].startswith("{"):
                letters = "J"
            else:
                letters = {11: CDX11, 10: CDX10, 9: CDX09}.get(len(line.split(" ")))
                if letters is None:
                    reject("too_many_columns" if len(line.split(" ")) > 11 else "too_few_columns")
                    continue
        try:
            if letters == "J":
                obj = json.loads(parts[2])
                key = parts[0]
                rec = {
                    "key": key,
                    "timestamp": timestamp(parts[1]),
                    "url": obj["url"],
                    "mime": None if absent(obj.get("mime")) else obj["mime"],
                    "status": status(str(obj["status"])) if "status" in obj else None,
                    "digest": digest_b32(obj.get("digest")),
                    "size": number(str(obj["length"]), "bad_size") if "length" in obj else None,
                    "offset": number(str(obj["offset"]), "bad_offset") if "offset" in obj else None,
                    "filename": obj.get("filename"),
                    "record_id": None,
                    "redirect": obj.get("redirect"),
                }
            else:
                cols = line.split(" ")
                if len(cols) != len(letters):
                    reject("too_few_columns" if len(cols) < len(letters) else "too_many_columns")
                    continue
                col = {}
                for letter, value in zip(letters, cols):
                    col.setdefault(letter, value)
                key = col.get("N", col.get("A"))
                rid = col.get("u")
                if not absent(rid) and rid.startswith("<") and rid.endswith(">"):
                    rid = rid[1:-1]
                rec = {
                    "key": None if absent(key) else key,
                    "timestamp": timestamp(col["b"]),
                    "url": col["a"],
                    "mime": None if absent(col.get("m")) else col["m"],
                    "status": status(col.get("s")),
                    "digest": digest_b32(col.get("k")),
                    "size": number(col.get("S"), "bad_size"),
                    "offset": number(col.get("V"), "bad_offset"),
                    "filename": None if absent(col.get("g")) else col["g"],
                    "record_id": None if absent(rid) else rid,
                    "redirect": None if absent(col.get("r")) else col["r"],
                }
        except ValueError as e:
            reject(str(e))
            continue
        except KeyError:
            reject("missing_url")
            continue
        rec["line"] = no
        rec["surt"] = surt_shaped(rec["key"])
        rec["revisit"] = (rec["mime"] or "").lower() == "warc/revisit"
        counts["records"] += 1
        records.append(rec)
    return {"counts": counts, "records": records}


if __name__ == "__main__":
    json.dump({p: read(p) for p in sys.argv[1:]}, sys.stdout)
