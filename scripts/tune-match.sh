#!/usr/bin/env bash
# Tunes the title thresholds of `sediment match` (src/matching/similarity.rs,
# `TitleThresholds`) on the tuning half of the sandcrawler ground truth only: every point of
# a grid is run through `sediment match --title-thresholds` (a hidden option, for this
# script) in three cases, and one point is chosen by a fixed rule; scripts/match_tune.py
# says which grid, which cases and which rule. The reporting half's truth is never read:
# its figures come from scripts/bench-match.sh, after the chosen values are made the
# defaults.
# Usage: scripts/tune-match.sh [WORKDIR]
# Env: SEDIMENT_BIN: a binary to use as it is, without building.
set -euo pipefail
cd "$(dirname "$0")/.."
given_bin="${SEDIMENT_BIN:-}"
. scripts/env.sh
corpus="$(pwd)/../shared/corpus/sandcrawler"
work="${1:-/tmp/sediment-tune-match}"
if [ ! -f "$corpus/grobid_sample.bibjson" ]; then
    echo "corpus not found ($corpus): nothing tuned" >&2
    exit 2
fi
if [ -n "$given_bin" ]; then
    SEDIMENT_BIN="$given_bin"
else
    cargo build --release --quiet
fi
rm -rf "$work" && mkdir -p "$work"
python3 scripts/match_tune.py --bin "$SEDIMENT_BIN" --work "$work" \
    "$corpus/grobid_sample.bibjson" "$corpus/crossref_sample.bibjson"
