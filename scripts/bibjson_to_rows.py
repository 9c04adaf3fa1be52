#!/usr/bin/env python3
"""GROBID-side bibjson ({title, sha, authors, doi, journal}, as in the sandcrawler match
data) to rows in the export format of `sediment export`, for `sediment import-jsonl`:
each line becomes a processed row whose grobid0:metadata holds what GROBID extracted
(title, authors as {"name": ...} objects, doi, journal as {"name": ...}).

Usage: bibjson_to_rows.py [--drop-doi] FILE > rows.jsonl
  --drop-doi  leave every DOI out (the benchmark "without DOIs").
Lines without a 40-hex `sha` are reported on stderr with their line number and skipped.
"""
import base64
import json
import sys


def main():
    args = sys.argv[1:]
    drop_doi = "--drop-doi" in args
    files = [a for a in args if a != "--drop-doi"]
    if len(files) != 1:
        sys.exit(__doc__)
    path = files[0]
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                sha = record["sha"].lower()
                raw = bytes.fromhex(sha)
                if len(raw) != 20:
                    raise ValueError("sha is not 40 hex digits")
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                print(f"{path}:{number}: skipped: {e}", file=sys.stderr)
                continue
            metadata = {}
            if record.get("title"):
                metadata["title"] = record["title"]
            authors = [{"name": a} for a in record.get("authors") or [] if isinstance(a, str) and a.strip()]
            if authors:
                metadata["authors"] = authors
            if record.get("doi") and not drop_doi:
                metadata["doi"] = record["doi"]
            if record.get("journal"):
                metadata["journal"] = {"name": record["journal"]}
            row = {
                "key": base64.b32encode(raw).decode("ascii"),
                "sha1hex": sha,
                "grobid0:status_code": 200,
                "grobid0:status": {"status": "success"},
                "grobid0:metadata": metadata,
            }
            print(json.dumps(row, ensure_ascii=False, sort_keys=True))


if __name__ == "__main__":
    main()
