#!/usr/bin/env bash
# Search latency through `sediment serve` at 16 concurrent clients (issue 37: p99 <= 50 ms on
# an index of the bench crawl's size).
#
# Usage: scripts/bench-search.sh [WARC] [CLIENTS] [REQUESTS]
#   WARC      default /work/bench-data/html.warc.gz (scripts/make-bench-warc.sh), else
#             base.warc.gz beside it (the same crawl with its PDFs)
#   CLIENTS   concurrent clients, default 16
#   REQUESTS  requests measured, default 20000
# 1. imports the WARC into a fresh store and summarizes it (`project summary`), in a
#    temporary directory;
# 2. draws QUERIES (default 2,000) queries from the words of the crawl's titles, seeded:
#    40 % one word, 30 % two words, 10 % a two-word phrase, 10 % a word and an exclusion,
#    10 % a word and a site: filter;
# 3. starts `sediment serve --summary-db` on 127.0.0.1 (no access log) and runs
#    examples/http_load.rs (a closed-loop load generator in Rust: one keep-alive connection
#    per client, each request `/search?format=json&q=…`, which counts, facets and pages as
#    the HTML page does) once over every query with 1 client as a warm-up, then REQUESTS
#    requests at CLIENTS clients: median, p90, p99 and maximum latency, and the rate; the
#    server's CPU time (user + sys) over the measured run.
# Every answer must be a 200 with a total, else the status is 1. The machine may be shared:
# the load average is printed before and after.
# Environment: QUERIES; SEDIMENT and HTTP_LOAD to use binaries built elsewhere.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$repo/scripts/env.sh"
. "$repo/scripts/bench-lib.sh"
warc="${1:-/work/bench-data/html.warc.gz}"
if [[ ! -f "$warc" && -z "${1:-}" ]]; then
    warc="/work/bench-data/base.warc.gz"
fi
clients="${2:-16}"
requests="${3:-20000}"
nqueries="${QUERIES:-2000}"
[[ -f "$warc" ]] || { echo "no WARC $warc: make it with scripts/make-bench-warc.sh" >&2; exit 1; }

sediment="${SEDIMENT:-$CARGO_TARGET_DIR/release/sediment}"
load="${HTTP_LOAD:-$CARGO_TARGET_DIR/release/examples/http_load}"
if [[ -z "${SEDIMENT:-}" || -z "${HTTP_LOAD:-}" ]]; then
    (cd "$repo" && cargo build --release --quiet --bin sediment --example http_load)
fi

work="$(mktemp -d /tmp/sediment-bench-search.XXXXXX)"
serve_pid=""
cleanup() {
    if [[ -n "$serve_pid" ]]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

echo "WARC $warc ($(du -h "$warc" | cut -f1)); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$sediment" --store "$work/store" import-warc "$warc" 2>/dev/null
# Exit 3 is a run with problems (counted and shown above: a malformed XML file, a PDF
# without text); the database is whole, so the measurement goes on.
status=0
/usr/bin/time -f "project summary: %e s wall, %U s user + %S s sys" \
    "$sediment" --store "$work/store" project summary -o "$work/summary.db" --json >/dev/null \
    || status=$?
[[ $status -eq 0 || $status -eq 3 ]] || { echo "project summary failed (exit $status)" >&2; exit 1; }
search_queries "$work/summary.db" "$work/queries.txt" "$nqueries"
search_serve "$sediment" "$work/store" "$work/summary.db" "$work/serve.log"
search_load "$load" "$work/queries.txt" "$work/requests.txt" "$clients" "$requests"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
