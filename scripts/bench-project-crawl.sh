#!/usr/bin/env bash
# Crawl database projection speed (issue 5): captures per second of `sediment project crawl`
# on the fixture crawls, the Heritrix example WARC, a 100,000-capture store built with
# `backfill-cdx --bulk` from a generated CDX, and (when present) the Debian documentation
# crawl of scripts/make-bench-warc.sh (HTML-heavy). Each is projected RUNS times into a fresh
# database; the best wall time and its CPU time (user + sys) are printed.
# Usage: scripts/bench-project-crawl.sh [N] [WORKDIR] [RUNS]   (defaults 100000, /tmp/sediment-bench-crawl, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
n="${1:-100000}"
work="${2:-/tmp/sediment-bench-crawl}"
runs="${3:-3}"
cargo build --release --quiet
mkdir -p "$work"
bin="$SEDIMENT_BIN"

store_of() { # NAME COMMAND...: builds the store once
  local store="$work/store-$1"
  [ -d "$store" ] || "$bin" --store "$store" "${@:2}" 2>/dev/null
  echo "$store"
}

measure() { # LABEL STORE [project options]
  local label="$1" store="$2" best="" best_cpu="" summary=""
  for _ in $(seq "$runs"); do
    rm -f "$work/crawl.db" "$work/crawl.db-wal" "$work/crawl.db-shm"
    /usr/bin/time -f "%e %U %S" -o "$work/time" \
      "$bin" --store "$store" project crawl -o "$work/crawl.db" "${@:3}" 2>"$work/log"
    read -r wall user sys < "$work/time"
    if [ -z "$best" ] || [ "$(echo "$wall < $best" | bc)" = 1 ]; then
      best="$wall"; best_cpu="$(echo "$user + $sys" | bc)"; summary="$(tail -1 "$work/log")"
    fi
  done
  local captures
  captures="$(echo "$summary" | grep -o 'captures [0-9]*' | head -1 | cut -d' ' -f2)"
  printf '%-28s %8s captures %7.2f s wall %7.2f s cpu %9.0f captures/s %9.0f captures/cpu-s\n' \
    "$label" "$captures" "$best" "$best_cpu" "$(echo "$captures / $best" | bc -l)" \
    "$(echo "$captures / $best_cpu" | bc -l)"
}

echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
measure "fixture crawl1+crawl2" "$(store_of fixture import-warc fixtures/crawl/crawl1.warc.gz fixtures/crawl/crawl2.warc.gz)"
if [ -f ../shared/corpus/warcbase/example.warc.gz ]; then
  measure "Heritrix example.warc.gz" "$(store_of heritrix import-warc ../shared/corpus/warcbase/example.warc.gz)"
fi
cdx="$work/gen-$n.cdx"
[ -s "$cdx" ] || python3 scripts/gen_cdx.py "$n" | LC_ALL=C sort > "$cdx"
measure "generated CDX ($n, bulk)" "$(store_of "cdx-$n" backfill-cdx --bulk "$cdx")"
if [ -f /work/bench-data/base.warc.gz ]; then
  measure "Debian docs WARC (HTML)" "$(store_of debian import-warc /work/bench-data/base.warc.gz)"
fi
