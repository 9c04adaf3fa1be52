#!/usr/bin/env python3
"""Precision and recall of `sediment match` against ground truth.

Usage: match_eval.py [--rows FILE] [--split tune|report] EXPORT.jsonl TRUTH.bibjson
       match_eval.py --exact-title [--split tune|report] GROBID.bibjson TRUTH.bibjson
  EXPORT.jsonl  `sediment export --families match0` (rows with match0 cells)
  TRUTH.bibjson catalog records carrying the `sha` (hex) of the PDF they describe
A row counts as matched when it has match0:doi; the match is correct when that DOI is
the DOI of a truth record with the row's sha. Recall is over the rows that have a truth
record (`--rows FILE` restricts it to the rows present in FILE, the GROBID input).

`--split tune|report` counts only the rows of one half of the ground truth. The split is
fixed: a row is in the tuning half when the first byte of SHA-256 of its lower-case hex
SHA-1 (the text, in ASCII) is even, in the reporting half otherwise. Thresholds are tuned
on the tuning half (scripts/tune-match.sh, through read_truth and evaluate below, with the
tuning half's truth only); the figures reported are the reporting half's.

`--exact-title` is the reference the issue names instead of Sediment's matches: a GROBID
record matches a catalog record whose title is the same once both are normalised (NFKD,
lower case, only ASCII letters and digits kept); it is correct when one such record has the
DOI of the row's sha. Recall over the GROBID rows that have a truth record (745 of 944).
"""
import collections
import hashlib
import json
import re
import sys
import unicodedata


def half(sha1hex):
    """The half of the fixed split a row belongs to: "tune" or "report"."""
    first = hashlib.sha256(sha1hex.lower().encode("ascii")).digest()[0]
    return "tune" if first % 2 == 0 else "report"


def normalised_title(title):
    return re.sub(r"[^a-z0-9]", "", unicodedata.normalize("NFKD", title or "").lower())


def exact_title(grobid_path, truth_path, split):
    by_title = collections.defaultdict(set)
    truth = collections.defaultdict(set)
    for line in open(truth_path, encoding="utf-8"):
        if line.strip():
            record = json.loads(line)
            if record.get("title") and record.get("doi"):
                by_title[normalised_title(record["title"])].add(record["doi"].lower())
            if record.get("sha") and record.get("doi"):
                truth[record["sha"].lower()].add(record["doi"].lower())
    relevant = matched = correct = 0
    for line in open(grobid_path, encoding="utf-8"):
        if not line.strip():
            continue
        record = json.loads(line)
        sha = (record.get("sha") or "").lower()
        if sha not in truth or (split and half(sha) != split):
            continue
        relevant += 1
        dois = by_title.get(normalised_title(record.get("title")))
        if normalised_title(record.get("title")) and dois:
            matched += 1
            correct += bool(dois & truth[sha])
    print(json.dumps({
        **({"split": split} if split else {}),
        "reference": "normalised exact title",
        "rows_with_truth": relevant,
        "matched": matched,
        "correct": correct,
        "precision": round(correct / matched, 4) if matched else 0.0,
        "recall": round(correct / relevant, 4) if relevant else 0.0,
    }))


def main():
    args = sys.argv[1:]
    exact = "--exact-title" in args
    if exact:
        args.remove("--exact-title")
    rows_file = None
    if "--rows" in args:
        i = args.index("--rows")
        rows_file = args[i + 1]
        del args[i:i + 2]
    split = None
    if "--split" in args:
        i = args.index("--split")
        split = args[i + 1]
        del args[i:i + 2]
        if split not in ("tune", "report"):
            sys.exit("--split is tune or report")
    if len(args) != 2:
        sys.exit(__doc__)
    if exact:
        exact_title(args[0], args[1], split)
        return
    export, truth_path = args
    present = None
    if rows_file:
        present = {json.loads(l)["sha1hex"] for l in open(rows_file, encoding="utf-8") if l.strip()}
    print(json.dumps(evaluate(export, read_truth(truth_path, split), present, split)))


def read_truth(truth_path, split=None):
    """sha → DOIs of the truth records (of one half when `split` is given: the other
    half's records are dropped as they are read)."""
    truth = collections.defaultdict(set)
    for line in open(truth_path, encoding="utf-8"):
        if line.strip():
            record = json.loads(line)
            if record.get("sha") and record.get("doi"):
                if split and half(record["sha"]) != split:
                    continue
                truth[record["sha"].lower()].add(record["doi"].lower())
    return truth


def evaluate(export, truth, present=None, split=None):
    """Precision, recall and statuses of an export of match0 cells against `truth`
    (from read_truth); recall over the rows of `present` (a set of SHA-1s) when given."""
    if present is not None and split:
        present = {sha for sha in present if half(sha) == split}
    statuses = collections.Counter()
    matched = correct = 0
    for line in open(export, encoding="utf-8"):
        row = json.loads(line)
        if split and half(row["sha1hex"]) != split:
            continue
        status = row.get("match0:mstatus")
        if status is None:
            continue
        statuses[status] += 1
        doi = row.get("match0:doi")
        if doi:
            matched += 1
            if doi.lower() in truth.get(row["sha1hex"], ()):
                correct += 1
    relevant = len(truth if present is None else present & truth.keys())
    precision = correct / matched if matched else 0.0
    recall = correct / relevant if relevant else 0.0
    return {
        **({"split": split} if split else {}),
        "rows_with_truth": relevant,
        "matched": matched,
        "correct": correct,
        "wrong": matched - correct,
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "statuses": dict(sorted(statuses.items())),
    }

if __name__ == "__main__":
    main()
