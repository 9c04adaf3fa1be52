#!/usr/bin/env python3
"""Tunes the title thresholds of `sediment match` on the tuning half of the ground truth.

Usage: match_tune.py --bin SEDIMENT --work DIR GROBID.bibjson CATALOG.bibjson
  (scripts/tune-match.sh runs it on the sandcrawler sample)

What it reads: the GROBID rows of the tuning half only (the fixed split of
scripts/match_eval.py: the parity of the first byte of SHA-256 of the row's hex SHA-1), and
of the catalog file two things kept apart: the records without their `sha` (the catalog the
matcher searches, every record of both halves, as in scripts/bench-match.sh) and the
(sha, DOI) pairs of the tuning half (the truth; the reporting half's pairs are dropped as
they are read and never written out).

Three cases, as in scripts/bench-match.sh, each a store made once and matched again with
`sediment match --force --title-thresholds …` for every point of GRID:
  as-given      the rows with GROBID's DOIs, the whole catalog
  without-dois  every DOI removed from the rows, the whole catalog
  half-no-dois  no DOIs, the catalog records whose sha starts with 0-7 (a row whose record
                is missing must stay unmatched)

The rule: among the points whose precision is at least MIN_PRECISION in all three cases,
the highest recall without DOIs; ties go to the fewest wrong matches over the three cases,
then to the stricter point (the larger sum of the points' positions in their ascending
value lists), then to the larger values in GRID's order.

Writes DIR/grid.jsonl (every point's figures) and prints the chosen point, the current
defaults' figures and the best points as JSON lines; the last line is the choice.
"""
import argparse
import itertools
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from match_eval import evaluate, half  # noqa: E402

# The thresholds searched (the names of `TitleThresholds` in src/matching/similarity.rs),
# each with its values in ascending order (higher = stricter): the two edit thresholds on
# both sides of the values before tuning, the others at that value and a looser one (288
# points, about 1.4 s each on 2 busy cores; the defaults before tuning are a point).
GRID = {
    "strong_edit": [0.85, 0.9, 0.95],
    "medium_edit": [0.7, 0.8, 0.9],
    "strong_inside": [0.9, 0.95],
    "medium_inside": [0.75, 0.85],
    "strong_dice": [0.8, 0.9],
    "medium_catalog_coverage": [0.7, 0.8],
    "medium_truncated": [0.5, 0.6],
}
# The values in force before tuning (src/matching/similarity.rs at the time the grid was
# made), printed beside the choice.
BEFORE = {
    "strong_edit": 0.9,
    "medium_edit": 0.8,
    "strong_inside": 0.95,
    "medium_inside": 0.85,
    "strong_dice": 0.9,
    "medium_catalog_coverage": 0.8,
    "medium_truncated": 0.6,
}
MIN_PRECISION = 0.99
HALF_CATALOG_DIGITS = "01234567"


def run(cmd, log):
    with open(log, "ab") as err:
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=err)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit status {done.returncode} (see {log})")


def prepare(args, work):
    """The inputs of the three cases, from the tuning half and the catalog without shas."""
    grobid_tune = os.path.join(work, "grobid-tune.bibjson")
    with open(grobid_tune, "w", encoding="utf-8") as out:
        for number, line in enumerate(open(args.grobid, encoding="utf-8"), 1):
            if not line.strip():
                continue
            sha = (json.loads(line).get("sha") or "").lower()
            if len(sha) != 40:
                print(f"{args.grobid}:{number}: no 40-hex sha, left out", file=sys.stderr)
                continue
            if half(sha) == "tune":
                out.write(line)
    catalog = os.path.join(work, "catalog.bibjson")
    half_catalog = os.path.join(work, "half-catalog.bibjson")
    truth = {}  # sha → DOIs of the tuning half's truth records
    half_truth = {}  # the same, for the records in the half catalog
    with open(catalog, "w", encoding="utf-8") as whole, \
            open(half_catalog, "w", encoding="utf-8") as halved:
        for line in open(args.catalog, encoding="utf-8"):
            if not line.strip():
                continue
            record = json.loads(line)
            sha = (record.pop("sha", None) or "").lower()
            text = json.dumps(record, ensure_ascii=False) + "\n"
            whole.write(text)
            in_half = sha[:1] in tuple(HALF_CATALOG_DIGITS) if sha else False
            if in_half:
                halved.write(text)
            if sha and record.get("doi") and half(sha) == "tune":
                truth.setdefault(sha, set()).add(record["doi"].lower())
                if in_half:
                    half_truth.setdefault(sha, set()).add(record["doi"].lower())
    here = os.path.dirname(os.path.abspath(__file__))
    cases = []
    for name, drop_doi, cat, case_truth in [
        ("as-given", False, catalog, truth),
        ("without-dois", True, catalog, truth),
        ("half-no-dois", True, half_catalog, half_truth),
    ]:
        rows = os.path.join(work, f"{name}.rows.jsonl")
        with open(rows, "w", encoding="utf-8") as out:
            cmd = [sys.executable, os.path.join(here, "bibjson_to_rows.py")]
            subprocess.run(cmd + (["--drop-doi"] if drop_doi else []) + [grobid_tune],
                           stdout=out, check=True)
        present = {json.loads(l)["sha1hex"] for l in open(rows, encoding="utf-8") if l.strip()}
        store = os.path.join(work, f"{name}.store")
        log = os.path.join(work, f"{name}.log")
        run([args.bin, "--store", store, "catalog", "load", cat], log)
        run([args.bin, "--store", store, "import-jsonl", rows], log)
        cases.append({"name": name, "store": store, "log": log, "truth": case_truth,
                      "present": present})
    return cases


def measure(args, work, cases, point):
    overrides = ",".join(f"{k}={v}" for k, v in point.items())
    figures = {}
    for case in cases:
        store, log = case["store"], case["log"]
        run([args.bin, "--store", store, "match", "--force", "--quiet",
             "--title-thresholds", overrides], log)
        export = os.path.join(work, f"{case['name']}.match0.jsonl")
        run([args.bin, "--store", store, "export", "--families", "match0", "-o", export], log)
        figures[case["name"]] = evaluate(export, case["truth"], case["present"])
    return figures


def strictness(point):
    return sum(GRID[k].index(v) for k, v in point.items())


def sort_key(entry):
    """Best first: the rule of the module's docstring."""
    figures, point = entry["figures"], entry["point"]
    return (
        -figures["without-dois"]["recall"],
        sum(f["wrong"] for f in figures.values()),
        -strictness(point),
        tuple(-v for v in point.values()),
    )


def feasible(entry):
    return all(f["precision"] >= MIN_PRECISION for f in entry["figures"].values())


def brief(entry):
    return {
        "point": entry["point"],
        **{name: {k: f[k] for k in ("matched", "correct", "wrong", "precision", "recall")}
           for name, f in entry["figures"].items()},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("grobid")
    parser.add_argument("catalog")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    cases = prepare(args, args.work)
    for case in cases:
        print(f"{case['name']}: {len(case['present'])} rows of the tuning half, "
              f"{len(case['present'] & case['truth'].keys())} with a truth record",
              file=sys.stderr)
    points = [dict(zip(GRID, values)) for values in itertools.product(*GRID.values())]
    results = []
    start = time.time()
    with open(os.path.join(args.work, "grid.jsonl"), "w", encoding="utf-8") as grid:
        for n, point in enumerate(points, 1):
            entry = {"point": point, "figures": measure(args, args.work, cases, point)}
            results.append(entry)
            grid.write(json.dumps(entry) + "\n")
            grid.flush()
            if n % 25 == 0 or n == len(points):
                spent = time.time() - start
                print(f"{n}/{len(points)} points, {spent:.0f} s, "
                      f"about {spent / n * (len(points) - n):.0f} s left", file=sys.stderr)
    ranked = sorted(filter(feasible, results), key=sort_key)
    before = next(e for e in results if e["point"] == BEFORE)
    print(json.dumps({"grid": GRID, "points": len(points), "feasible": len(ranked),
                      "min_precision": MIN_PRECISION}))
    print(json.dumps({"before_tuning": brief(before)}))
    for rank, entry in enumerate(ranked[:10], 1):
        print(json.dumps({"rank": rank, **brief(entry)}))
    if not ranked:
        sys.exit(f"no point reaches precision {MIN_PRECISION} in every case")
    print(json.dumps({"chosen": brief(ranked[0])}))


if __name__ == "__main__":
    main()
