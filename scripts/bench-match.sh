#!/usr/bin/env bash
# Accuracy of `sediment match` (issue 7) on the real match data of sandcrawler:
# grobid_sample.bibjson (GROBID metadata of ~980 PDFs, keyed by sha) becomes grobid0
# rows, crossref_sample.bibjson (~960 Crossref records carrying the sha of the same PDF,
# the ground truth) is the catalog. Precision and recall twice: as given, and with every
# DOI removed from the GROBID side; then, without DOIs, against half of the catalog
# (precision when the right record is missing).
# Tuned on one half, reported on the other: the ground truth is split once and for all by
# scripts/match_eval.py (the parity of the first byte of SHA-256 of the row's hex SHA-1).
# The "report" half gives the figures to quote; the "tune" half is the only one to look at
# when changing the thresholds of src/matching/similarity.rs. Both are printed, and the
# whole sample too, for comparison with figures measured before the split. The reference,
# normalised exact-title matching (scripts/match_eval.py --exact-title), is printed for the
# same halves.
# The thresholds themselves are chosen by scripts/tune-match.sh, which reads the tuning
# half's truth only.
# Usage: scripts/bench-match.sh [WORKDIR]
# Env: SEDIMENT_BIN: a binary to use as it is, without building.
set -euo pipefail
cd "$(dirname "$0")/.."
given_bin="${SEDIMENT_BIN:-}"
. scripts/env.sh
corpus="$(pwd)/../shared/corpus/sandcrawler"
work="${1:-/tmp/sediment-bench-match}"
if [ ! -f "$corpus/grobid_sample.bibjson" ]; then
    echo "corpus not found ($corpus): nothing measured" >&2
    exit 2
fi
if [ -n "$given_bin" ]; then
    SEDIMENT_BIN="$given_bin"
else
    cargo build --release --quiet
fi
rm -rf "$work" && mkdir -p "$work"

run() { # NAME CATALOG [--drop-doi]
    local name="$1" catalog="$2"; shift 2
    local store="$work/$name.store"
    python3 scripts/bibjson_to_rows.py "$@" "$corpus/grobid_sample.bibjson" > "$work/$name.rows.jsonl"
    "$SEDIMENT_BIN" --store "$store" catalog load "$catalog" 2>"$work/$name.catalog.log"
    "$SEDIMENT_BIN" --store "$store" import-jsonl "$work/$name.rows.jsonl" 2>"$work/$name.import.log"
    local s=$(date +%s.%N)
    "$SEDIMENT_BIN" --store "$store" match 2>"$work/$name.match.log"
    local e=$(date +%s.%N)
    "$SEDIMENT_BIN" --store "$store" export --families match0 -o "$work/$name.match0.jsonl" 2>/dev/null
    printf '%-16s report half: %s  (match: %.2f s)\n' "$name" \
        "$(python3 scripts/match_eval.py --split report --rows "$work/$name.rows.jsonl" "$work/$name.match0.jsonl" "$catalog")" \
        "$(echo "$e - $s" | bc)"
    printf '%-16s tune half:   %s\n' "$name" \
        "$(python3 scripts/match_eval.py --split tune --rows "$work/$name.rows.jsonl" "$work/$name.match0.jsonl" "$catalog")"
    printf '%-16s whole:       %s\n' "$name" \
        "$(python3 scripts/match_eval.py --rows "$work/$name.rows.jsonl" "$work/$name.match0.jsonl" "$catalog")"
}

echo "GROBID side: $(wc -l < "$corpus/grobid_sample.bibjson") rows, catalog: $(wc -l < "$corpus/crossref_sample.bibjson") Crossref records"
for split in report tune; do
    printf '%-16s %-6s half:  %s\n' exact-title "$split" \
        "$(python3 scripts/match_eval.py --exact-title --split "$split" "$corpus/grobid_sample.bibjson" "$corpus/crossref_sample.bibjson")"
done
printf '%-16s whole:       %s\n' exact-title \
    "$(python3 scripts/match_eval.py --exact-title "$corpus/grobid_sample.bibjson" "$corpus/crossref_sample.bibjson")"
run as-given "$corpus/crossref_sample.bibjson"
run without-dois "$corpus/crossref_sample.bibjson" --drop-doi
# Precision when the right record is missing: the catalog holds only the records whose
# sha starts with a hex digit below 8 (about half); every match of a row whose record
# is not there is wrong, and recall counts only rows whose record is there.
python3 -c "
import json, sys
for line in open(sys.argv[1], encoding='utf-8'):
    if line.strip() and json.loads(line)['sha'][0] in '01234567':
        sys.stdout.write(line)" "$corpus/crossref_sample.bibjson" > "$work/half-catalog.bibjson"
echo "half catalog: $(wc -l < "$work/half-catalog.bibjson") records"
run half-no-dois "$work/half-catalog.bibjson" --drop-doi
