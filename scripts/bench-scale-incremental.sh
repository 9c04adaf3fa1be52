#!/usr/bin/env bash
# Incremental loads into a big store (issue 36): what a store made by scripts/bench-scale.sh
# (KEEP=1) costs the next, ordinary loads.
#  1. LINES (1,000,000) new generated CDX lines (examples/gen_scale_cdx.rs, another seed)
#     through the normal path, `backfill-cdx -` (batched writes, commits every 10 s): goal
#     >= 100 k lines/s. The same lines into an empty store first, the same way: the
#     reference that tells the store's size from the normal path's own cost. Then LINES
#     other new lines (seed SEED+1) through `backfill-cdx --bulk`: SST files ingested over
#     what the store holds, the rows of its new digests derived from the lines.
#  2. `import-warc` of WARCS (default: the small-records crawl, ~107 MB; made by
#     scripts/make-bench-warc-small-records.sh) into an empty store, then the same files into
#     the big store (the empty store's through SST files, the big one's through the write
#     path; IMPORT_ARGS are given to both): goal >= 0.8x the empty store's rate.
# Each step's report gives `slowest_write_ms` (the longest one write call waited) and
# `write_stall_ms` (RocksDB's cumulative write stall): goal, no stall over a second.
# The big store is changed (it gains these captures): run scripts/bench-serve-disk.sh first.
# With MEMORY_MB, each step runs in a memory cgroup of that size (page cache included, as
# in scripts/bench-serve-disk.sh; root) after the page cache is dropped, so that a store
# smaller than the machine's memory is read from disk as a big one would be.
# Usage: scripts/bench-scale-incremental.sh STORE [WORKDIR]
# Env: LINES, SEED (37), IMPORT_ARGS, WARCS (a directory of .warc.gz files), MEMORY_MB, SEDIMENT_BIN and
# GEN_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
given_bin="${SEDIMENT_BIN:-}"
. scripts/env.sh
. scripts/bench-lib.sh
[ -n "$given_bin" ] && [ -n "${GEN_BIN:-}" ] && SEDIMENT_BIN="$given_bin"
store="${1:?usage: scripts/bench-scale-incremental.sh STORE [WORKDIR]}"
work="${2:-$(dirname "$store")/incremental}"
lines="${LINES:-1000000}"
seed="${SEED:-37}"
warcs="${WARCS:-/work/bench-data/small-records}"
if [ -z "${GEN_BIN:-}" ]; then
  cargo build --release --quiet --bin sediment --example gen_scale_cdx
  GEN_BIN="$CARGO_TARGET_DIR/release/examples/gen_scale_cdx"
fi
[ -d "$store" ] || { echo "no store at $store: make one with KEEP=1 scripts/bench-scale.sh N" >&2; exit 1; }
shopt -s nullglob
warc_files=("$warcs"/*.warc.gz)
[ ${#warc_files[@]} -gt 0 ] || { echo "no WARCs in $warcs: scripts/make-bench-warc-small-records.sh makes them" >&2; exit 1; }
mapfile -t paths < <(scale_path_files)
rm -rf "$work"
mkdir -p "$work"
capped() { # COMMAND...: runs it, in the memory cgroup when MEMORY_MB is set
  if [ -z "${MEMORY_MB:-}" ]; then
    "$@"
    return
  fi
  (in_cgroup "$(memory_cgroup sediment-incremental "$MEMORY_MB")" "$@")
}

wall_of() { awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); print (n == 3 ? t[1] * 3600 + t[2] * 60 + t[3] : t[1] * 60 + t[2]) }' "$1"; }
stalls() { # REPORT: the two stall counters of a JSON report
  python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))["counts"]; print("slowest write %d ms, RocksDB write stall %d ms" % (c.get("slowest_write_ms", 0), c.get("write_stall_ms", 0)))' "$1"
}

echo "store $store ($(du -sb "$store" | cut -f1) bytes); memory cap ${MEMORY_MB:-none} MB; $(nproc) cores; $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
"$GEN_BIN" "$lines" --seed "$seed" "${paths[@]}" > "$work/new.cdx"
capped /usr/bin/time -v -o "$work/cdx-empty.time" "$SEDIMENT_BIN" --store "$work/empty-cdx" backfill-cdx \
  --quiet --report "$work/cdx-empty.json" "$work/new.cdx" 2> "$work/cdx-empty.log"
time_summary "backfill-cdx, $lines new lines into an empty store" "$work/cdx-empty.time"
rm -rf "$work/empty-cdx"
capped /usr/bin/time -v -o "$work/cdx.time" "$SEDIMENT_BIN" --store "$store" backfill-cdx --quiet \
  --report "$work/cdx.json" "$work/new.cdx" 2> "$work/cdx.log"
time_summary "backfill-cdx, $lines new lines into the big store" "$work/cdx.time"
empty_cdx_wall=$(wall_of "$work/cdx-empty.time")
big_cdx_wall=$(wall_of "$work/cdx.time")
printf '  %.0f lines/s into the big store (goal >= 100000), %.0f into the empty one: %.2fx; %s\n' \
  "$(echo "$lines / $big_cdx_wall" | bc -l)" "$(echo "$lines / $empty_cdx_wall" | bc -l)" \
  "$(echo "$empty_cdx_wall / $big_cdx_wall" | bc -l)" "$(stalls "$work/cdx.json")"
rm -f "$work/new.cdx"
"$GEN_BIN" "$lines" --seed "$((seed + 1))" "${paths[@]}" > "$work/new-bulk.cdx"
capped /usr/bin/time -v -o "$work/cdx-bulk.time" "$SEDIMENT_BIN" --store "$store" backfill-cdx --bulk \
  --quiet --report "$work/cdx-bulk.json" "$work/new-bulk.cdx" 2> "$work/cdx-bulk.log"
time_summary "backfill-cdx --bulk, $lines other new lines into the big store" "$work/cdx-bulk.time"
printf '  %.0f lines/s (goal >= 100000)\n' "$(echo "$lines / $(wall_of "$work/cdx-bulk.time")" | bc -l)"
rm -f "$work/new-bulk.cdx"

bytes=$(du -cb "${warc_files[@]}" | tail -1 | cut -f1)
/usr/bin/time -v -o "$work/empty.time" "$SEDIMENT_BIN" --store "$work/empty" import-warc --quiet ${IMPORT_ARGS:-} \
  --report "$work/empty.json" "${warc_files[@]}" 2> "$work/empty.log"
time_summary "import-warc into an empty store" "$work/empty.time"
capped /usr/bin/time -v -o "$work/big.time" "$SEDIMENT_BIN" --store "$store" import-warc --quiet ${IMPORT_ARGS:-} \
  --report "$work/big.json" "${warc_files[@]}" 2> "$work/big.log"
time_summary "import-warc into the big store" "$work/big.time"
if grep -q '"inputs_skipped"' "$work/big.json"; then
  echo "FAILED: the big store had these WARCs already (inputs_skipped): give WARCS new files" >&2
  exit 1
fi
empty_wall=$(wall_of "$work/empty.time")
big_wall=$(wall_of "$work/big.time")
printf '  %d bytes of WARCs: %.1f MB/s into the empty store, %.1f MB/s into the big one: %.2fx (goal >= 0.8x); %s\n' \
  "$bytes" "$(echo "$bytes / 1000000 / $empty_wall" | bc -l)" "$(echo "$bytes / 1000000 / $big_wall" | bc -l)" \
  "$(echo "$empty_wall / $big_wall" | bc -l)" "$(stalls "$work/big.json")"
rm -rf "$work/empty"
