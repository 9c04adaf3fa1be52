#!/usr/bin/env bash
# Benchmark of the summary database and search (issue 6; figures in BENCHMARKS.md).
#
# Usage: scripts/bench-summary.sh [DIR]     (default /work/bench-data/summary, outside the repo)
# 1. makes the corpus with scripts/make-summary-bench.py when DIR has none (12,000 generated
#    pages of real documentation prose, two crawls a day apart, 1,000 queries);
# 2. imports crawl 1 into a fresh store and summarizes it (pages/s, database size);
# 3. imports crawl 2 and summarizes again, incrementally (10 % of the pages changed, 2 % gone,
#    2 % new);
# 4. runs the 1,000 queries through the search library (examples/search_latency.rs: median,
#    p90, p99, max over the queries, after a warm-up pass) and a few through the CLI.
# Times are wall clock and CPU (user + sys) of the whole process; the machine may be shared,
# CPU time is the steadier figure.
set -euo pipefail

dir="${1:-/work/bench-data/summary}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$repo/scripts/env.sh"
target="$CARGO_TARGET_DIR"
sediment="$target/release/sediment"
latency="$target/release/examples/search_latency"

if [[ ! -s "$dir/crawl2.warc.gz" || ! -s "$dir/queries.txt" ]]; then
    python3 "$repo/scripts/make-summary-bench.py" --out "$dir"
fi
(cd "$repo" && cargo build --release --quiet --bin sediment --example search_latency)

store="$dir/store"
db="$dir/summary.db"
rm -rf "$store" "$db" "$db-wal" "$db-shm"

timed() { # label, command...: prints wall s, CPU s, max RSS
    local label="$1"
    shift
    /usr/bin/time -f "$label: %e s wall, %U s user + %S s sys, max RSS %M KB" "$@"
}

"$sediment" --store "$store" import-warc "$dir/crawl1.warc.gz" 2>/dev/null
timed "summary of crawl 1" "$sediment" --store "$store" project summary -o "$db" --json >"$dir/run1.json"
echo "counts: $(cat "$dir/run1.json")"
echo "database size after crawl 1: $(stat -c %s "$db") bytes"

"$sediment" --store "$store" import-warc "$dir/crawl2.warc.gz" 2>/dev/null
timed "incremental summary of crawl 2" "$sediment" --store "$store" project summary -o "$db" --json >"$dir/run2.json"
echo "counts: $(cat "$dir/run2.json")"
echo "database size after crawl 2: $(stat -c %s "$db") bytes"
sqlite3 "$db" "SELECT 'pages in the search index: ' || count(*) FROM full_text_entity_index" 2>/dev/null || true

"$latency" "$db" "$dir/queries.txt"
for q in 'the' 'socket timeout' '"regular expression"' 'module -"erlang"' 'table lang:de'; do
    timed "CLI: sediment search '$q'" "$sediment" search --db "$db" --limit 10 -- "$q" >/dev/null
done
