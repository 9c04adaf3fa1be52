#!/usr/bin/env bash
# Projections at scale (issue 36) and search on a big index (issue 37): N HTML pages of a
# synthetic crawl (examples/gen_scale_warc.rs: the shared corpus's HTML responses as
# templates, their visible text varied per page from a seed, ~10 KB of gzip a page, WARC
# files of ~1 GB) through the whole path:
#   1. the generator (timed, so that it can be told apart from the rest);
#   2. `import-warc` of the WARC directory; checked: the store holds exactly N captures;
#   3. `project crawl` into a fresh crawl database;
#   4. `project summary` into a fresh summary database;
#   5. search latency through `sediment serve --summary-db` (scripts/bench-lib.sh: the
#      queries drawn from the words of the titles as scripts/bench-search.sh draws them, a
#      warm-up over every query with 1 client, then REQUESTS requests at CLIENTS clients
#      with examples/http_load.rs).
# Per step: wall time, CPU time (user + sys) and peak RSS (/usr/bin/time -v), µs a capture;
# disk use of the WARCs, the store and the databases; search median, p99 and rate. A
# progress line every PROGRESS seconds while a step runs (its elapsed time and current RSS),
# and a summary at the end (also in DIR/summary.txt). Compare two runs (100 k and 1 M pages)
# by their µs a capture and peak RSS.
#
# Usage: scripts/bench-scale-pages.sh N [DIR]     (default DIR /work/scale-pages/N; N as
#   100000 or 1_000_000; 1 M pages need ~10 GB of WARCs, and the databases ~10x those of
#   100 k pages: 8.7 GB (crawl.db) and 11 GB (summary.db) there, so ~200 GB)
# Environment: SEED (default 36); WARCS: the generator's template WARCs or directories
#   (default: the shared corpus, $SEDIMENT_CORPUS or ../shared/corpus: ~100 pages, ~50 KB
#   of HTML and ~9 KB of gzip a generated page; adding /work/bench-data/base.warc.gz, the
#   Debian documentation crawl, gives ~2,800 templates, ~90 KB and ~15 KB); CLIENTS (16),
#   REQUESTS (4000), QUERIES (2000); PROGRESS (60); DELETE_WARCS=1 deletes the WARCs at the
#   end (a big run's disk; the projections need them, so not before); REUSE_WARCS=1 uses the WARCs in
#   DIR/warcs; GEN_ARGS: more options of the generator (e.g. "--max-template-kb 256");
#   STEPS: the steps to run, in this order, default "gen import crawl summary search"
#   (a step needs the output of those before it in that list); SEDIMENT_BIN, GEN_BIN and
#   HTTP_LOAD: binaries to use instead of building them (all three given: no build).
set -euo pipefail
cd "$(dirname "$0")/.."
given_bin="${SEDIMENT_BIN:-}"
. scripts/env.sh
. scripts/bench-lib.sh
n="${1:?usage: scripts/bench-scale-pages.sh N [DIR]}"
n="${n//_/}"
dir="${2:-/work/scale-pages/$n}"
seed="${SEED:-36}"
clients="${CLIENTS:-16}"
requests="${REQUESTS:-4000}"
nqueries="${QUERIES:-2000}"
progress="${PROGRESS:-60}"
steps="${STEPS:-gen import crawl summary search}"
if [[ -n "$given_bin" && -n "${GEN_BIN:-}" && -n "${HTTP_LOAD:-}" ]]; then
  SEDIMENT_BIN="$given_bin"
else
  cargo build --release --quiet --bin sediment --example gen_scale_warc --example http_load
  GEN_BIN="$CARGO_TARGET_DIR/release/examples/gen_scale_warc"
  HTTP_LOAD="$CARGO_TARGET_DIR/release/examples/http_load"
fi
if [[ -n "${WARCS:-}" ]]; then
  read -r -a templates <<< "$WARCS"
else
  templates=("${SEDIMENT_CORPUS:-../shared/corpus}")
fi
warcs="$dir/warcs"
store="$dir/store"
mkdir -p "$dir"
serve_pid=""
cleanup() {
  if [[ -n "$serve_pid" ]]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

now() { date -u +%H:%M:%S; }
say() { echo "[$(now)] $*"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
mb() { awk -v b="$1" 'BEGIN { printf "%.0f MB", b / 1e6 }'; }
size_of() { du -sb "$@" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }

# step NAME COMMAND...: runs COMMAND under /usr/bin/time -v (stdout DIR/NAME.out, stderr
# DIR/NAME.log), printing its elapsed time and RSS every PROGRESS seconds; exit 0 and 3 (a
# run with problems, counted in its report) go on, anything else stops the benchmark.
step() {
  local name=$1 pid child rss started status=0
  shift
  say "$name: started (load $(load))"
  started=$(date +%s)
  /usr/bin/time -v -o "$dir/$name.time" "$@" > "$dir/$name.out" 2> "$dir/$name.log" &
  pid=$!
  while ! wait_for "$pid" "$progress"; do
    child=$(pgrep -P "$pid" | head -1 || true)
    rss=$([[ -n "$child" ]] && awk '/VmRSS/ { printf "%.0f MB", $2 / 1024 }' "/proc/$child/status" 2>/dev/null || echo "?")
    say "$name: $(($(date +%s) - started)) s, RSS $rss, load $(load)"
  done
  wait "$pid" || status=$?
  if [[ $status -ne 0 && $status -ne 3 ]]; then
    echo "FAILED: $name exited with status $status; the end of $dir/$name.log:" >&2
    tail -20 "$dir/$name.log" >&2
    exit 1
  fi
  say "$(time_summary "$name" "$dir/$name.time")"
}
# wait_for PID SECONDS: true once PID has ended, false when SECONDS passed first.
wait_for() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.1
  done
  ! kill -0 "$1" 2>/dev/null
}

say "N = $n pages, seed $seed, DIR $dir; $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ { print $2 }') GB RAM; load $(load)"
df -h "$dir" | tail -1 | awk '{ print "disk: " $4 " free of " $2 }'

warc_bytes=0
search_failed=""
for s in $steps; do
  case "$s" in
  gen)
    if [[ -z "${REUSE_WARCS:-}" ]]; then
      rm -rf "$warcs"
      # shellcheck disable=SC2086 # GEN_ARGS are words
      step gen "$GEN_BIN" "$n" "$warcs" --seed "$seed" ${GEN_ARGS:-} "${templates[@]}"
      grep '^gen_scale_warc: [0-9]* templates' "$dir/gen.log" || true
      tail -1 "$dir/gen.log"
    fi
    warc_bytes=$(size_of "$warcs")
    say "WARCs: $(ls "$warcs" | wc -l) files, $(mb "$warc_bytes")"
    ;;
  import)
    rm -rf "$store"
    step import "$SEDIMENT_BIN" --store "$store" import-warc "$warcs"
    tail -1 "$dir/import.log"
    "$SEDIMENT_BIN" --store "$store" stats > "$dir/stats.txt" 2>&1
    captures=$(awk '$1 == "captures" { print $2 }' "$dir/stats.txt")
    if [[ "$captures" != "$n" ]]; then
      echo "FAILED: the store holds ${captures:-no} captures, not $n (see $dir/stats.txt)" >&2
      exit 1
    fi
    say "captures in the store: $captures = N (checked)"
    ;;
  crawl)
    rm -f "$dir"/crawl.db*
    step crawl "$SEDIMENT_BIN" --store "$store" project crawl -o "$dir/crawl.db"
    tail -1 "$dir/crawl.log"
    ;;
  summary)
    rm -f "$dir"/summary.db*
    step summary "$SEDIMENT_BIN" --store "$store" project summary -o "$dir/summary.db" --json
    say "summary counts: $(cat "$dir/summary.out")"
    ;;
  search)
    say "search: drawing $nqueries queries"
    search_queries "$dir/summary.db" "$dir/queries.txt" "$nqueries"
    search_serve "$SEDIMENT_BIN" "$store" "$dir/summary.db" "$dir/serve.log"
    say "search: serving at $serve_base; load $(load)"
    # A failed answer (a 503 when a search waited over a second for a place) is reported
    # after the summary, which is printed all the same.
    search_load "$HTTP_LOAD" "$dir/queries.txt" "$dir/requests.txt" "$clients" "$requests" |
      tee "$dir/search.txt" || search_failed=1
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
    serve_pid=""
    ;;
  *)
    echo "unknown step $s (STEPS: gen import crawl summary search)" >&2
    exit 2
    ;;
  esac
done
[[ $warc_bytes -gt 0 ]] || warc_bytes=$(size_of "$warcs")

{
  echo "== bench-scale-pages: N = $n pages, seed $seed, $(date -u +%FT%TZ), $(nproc) cores, load $(load)"
  for s in gen import crawl summary; do
    [[ -f "$dir/$s.time" ]] || continue
    time_summary "$s" "$dir/$s.time" | awk -v n="$n" '{
        for (i = 1; i <= NF; i++) { if ($i == "wall") w = $(i + 1); if ($i == "cpu") c = $(i + 1) }
        printf "%s  %8.1f µs/capture wall %8.1f µs/capture cpu\n", $0, w * 1e6 / n, c * 1e6 / n }'
  done
  echo "disk: WARCs $(mb "$warc_bytes") ($(awk -v b="$warc_bytes" -v n="$n" 'BEGIN { printf "%.0f", b / n }') bytes a page), store $(mb "$(size_of "$store")"), crawl.db $(mb "$(size_of "$dir"/crawl.db*)"), summary.db $(mb "$(size_of "$dir"/summary.db*)")"
  if [[ -f "$dir/search.txt" ]]; then
    grep '^clients' "$dir/search.txt" | sed 's/^/search: /'
    grep 'server CPU' "$dir/search.txt" | sed 's/^/search: /' || true
  fi
} | tee "$dir/summary.txt"
if [[ -n "$search_failed" ]]; then
  echo "FAILED: some search answers were not a 200 with a total (see $dir/search.txt)" >&2
  exit 1
fi
if [[ -n "${DELETE_WARCS:-}" ]]; then
  rm -rf "$warcs"
  say "WARCs deleted (DELETE_WARCS=1)"
fi
