#!/usr/bin/env bash
# Issue 39's two ingest goals on both of their corpora, in one run: `import-warc --threads 1`
# against the fastwarc crate (goal: at least 0.95× its rate) on the bench crawl (PDF-heavy
# and HTML) and the crawl of small records, and `backfill-cdx --bulk` of gzip CDX against
# `zcat | wc -l` (goal: at most 2.0× its wall time) on generated lines and on lines shaped
# like the small-records crawl's CDX. Runs scripts/bench-warc.sh, then scripts/bench-cdx.sh
# on each corpus (every check of those scripts applies: a failed check stops this one with
# status 1), keeps their whole output in LOG_DIR, and ends with a table of the goals.
# Usage: scripts/bench-ingest.sh [CDX_LINES_GENERATED [CDX_LINES_SMALL [LOG_DIR]]]
#   (defaults 5,000,000, 2,000,000 and /tmp/sediment-bench-ingest; env RUNS, BENCH_DIR and
#   SMALL_DIR as the scripts it runs take them)
set -euo pipefail
cd "$(dirname "$0")/.."
generated="${1:-5000000}"
small="${2:-2000000}"
logs="${3:-/tmp/sediment-bench-ingest}"
mkdir -p "$logs"
bench_dir="${BENCH_DIR:-/work/bench-data}"

stamp() { date -u +%H:%M:%S; }
start=$(stamp)
echo "== WARC import (scripts/bench-warc.sh), $(stamp)"
scripts/bench-warc.sh "$bench_dir" ${SMALL_DIR:+"$SMALL_DIR"} | tee "$logs/warc.log"
echo "== CDX backfill, generated lines (scripts/bench-cdx.sh $generated), $(stamp)"
scripts/bench-cdx.sh "$generated" /tmp/sediment-bench-cdx generated | tee "$logs/cdx-generated.log"
echo "== CDX backfill, small-records lines (scripts/bench-cdx.sh $small), $(stamp)"
scripts/bench-cdx.sh "$small" /tmp/sediment-bench-cdx small-records | tee "$logs/cdx-small.log"
end=$(stamp)

# The ratio after a label on one line of a log ("LABEL: 1.02").
ratio() { grep -m1 -- "$2" "$logs/$1" | sed -E "s|.*$2 ([0-9.]+).*|\\1|"; }
# The bulk (gz) row's ratio to the floor's wall time ("2.48x floor").
bulk_ratio() { grep -m1 -- '--bulk (gz)' "$logs/$1" | sed -E 's/.* ([0-9.]+)x floor .*/\1/' | head -1; }
verdict() { # VALUE OP GOAL
  if [ "$(echo "$1 $2 $3" | bc -l)" = 1 ]; then echo met; else echo "NOT met"; fi
}

echo
echo "Issue 39's goals, $start–$end UTC, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); logs in $logs"
printf '%-58s %8s %10s  %s\n' "workload, corpus" "ratio" "goal" ""
w_bench=$(ratio warc.log "^import 1 thread / fastwarc:")
w_html=$(ratio warc.log "HTML crawl: import 1 thread / fastwarc:")
w_small=$(ratio warc.log "small records: import 1 thread / fastwarc:")
c_gen=$(bulk_ratio cdx-generated.log)
c_small=$(bulk_ratio cdx-small.log)
printf '%-58s %7s× %10s  %s\n' "import-warc, 1 thread / fastwarc: PDF-heavy bench crawl" "$w_bench" "≥ 0.95×" "$(verdict "$w_bench" '>=' 0.95)"
printf '%-58s %7s× %10s  %s\n' "import-warc, 1 thread / fastwarc: HTML crawl" "$w_html" "≥ 0.95×" "$(verdict "$w_html" '>=' 0.95)"
printf '%-58s %7s× %10s  %s\n' "import-warc, 1 thread / fastwarc: small records" "$w_small" "≥ 0.95×" "$(verdict "$w_small" '>=' 0.95)"
printf '%-58s %7s× %10s  %s\n' "backfill-cdx --bulk (gz) / zcat | wc -l: generated" "$c_gen" "≤ 2.0×" "$(verdict "$c_gen" '<=' 2.0)"
printf '%-58s %7s× %10s  %s\n' "backfill-cdx --bulk (gz) / zcat | wc -l: small records" "$c_small" "≤ 2.0×" "$(verdict "$c_small" '<=' 2.0)"
