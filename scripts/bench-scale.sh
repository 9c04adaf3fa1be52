#!/usr/bin/env bash
# Archive scale (issue 36): N captures shaped like a web archive's CDX, streamed from a
# generator (examples/gen_scale_cdx.rs: Zipf hosts over >= 200,000 registered domains, URL
# paths of the shared corpus's crawls, 15 years of timestamps, ~80 % status 200, a quarter
# of the digests seen again, WARC files per monthly crawl) into `backfill-cdx --bulk -`.
# Nothing is written to disk but the store.
# Per step: wall time, CPU time (user + sys), peak RSS (/usr/bin/time -v) and disk use
# (the store, and each column family's SST files from the MANIFEST, with `ldb` of
# rocksdb-tools when installed). Checked: the store holds exactly N captures (`stats`);
# reported: whether the load's peak RSS stayed within the memory limit it was given.
# Steps: the generator alone into /dev/null (it must be far faster than the load), then
# the load, then `stats`.
# Usage: scripts/bench-scale.sh N [WORKDIR]   (N as 10000000 or 10_000_000; 100 M works
#   when the disk has ~35 GB free). Env: SEED (default 36), KEEP=1 keeps the store,
#   BULK_MEMORY_MB (passed as --bulk-memory-mb), GEN_ONLY=1 times the generator alone,
#   SEDIMENT_BIN and GEN_BIN: binaries to use instead of building them.
set -euo pipefail
cd "$(dirname "$0")/.."
given_bin="${SEDIMENT_BIN:-}"
. scripts/env.sh
. scripts/bench-lib.sh
# A binary given in SEDIMENT_BIN (with GEN_BIN) is used as it is, without building.
[ -n "$given_bin" ] && [ -n "${GEN_BIN:-}" ] && SEDIMENT_BIN="$given_bin"
n="${1:?usage: scripts/bench-scale.sh N [WORKDIR]}"
n="${n//_/}"
work="${2:-/tmp/sediment-bench-scale}"
seed="${SEED:-36}"
if [ -z "${GEN_BIN:-}" ]; then
  cargo build --release --quiet --bin sediment --example gen_scale_cdx
  GEN_BIN="$CARGO_TARGET_DIR/release/examples/gen_scale_cdx"
fi
mapfile -t paths < <(scale_path_files)
mkdir -p "$work"
store="$work/store-$n"
rm -rf "$store"


echo "N = $n, seed $seed, path files: ${#paths[@]}; $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(date -u +%FT%TZ)"
/usr/bin/time -v -o "$work/gen.time" "$GEN_BIN" "$n" --seed "$seed" "${paths[@]}" > /dev/null
time_summary "generator alone -> /dev/null" "$work/gen.time"
[ -n "${GEN_ONLY:-}" ] && exit 0

bulk_args=(--bulk)
[ -n "${BULK_MEMORY_MB:-}" ] && bulk_args+=(--bulk-memory-mb "$BULK_MEMORY_MB")
"$GEN_BIN" "$n" --seed "$seed" "${paths[@]}" |
  /usr/bin/time -v -o "$work/load.time" "$SEDIMENT_BIN" --store "$store" backfill-cdx "${bulk_args[@]}" - 2> "$work/load.log"
time_summary "backfill-cdx --bulk - (the load)" "$work/load.time"
tail -1 "$work/load.log"
# Issue 36: the load's peak resident memory within the memory limit it was given.
limit_mb=$(grep -o 'bulk_memory_mb [0-9]*' "$work/load.log" | tail -1 | cut -d' ' -f2)
peak_mb=$(awk -F: '/Maximum resident/ { print int($2 / 1024) }' "$work/load.time")
if [ -n "$limit_mb" ]; then
  verdict=within; [ "$peak_mb" -le "$limit_mb" ] || verdict=OVER
  echo "peak RSS $peak_mb MB, memory limit $limit_mb MB: $verdict"
fi

/usr/bin/time -v -o "$work/stats.time" "$SEDIMENT_BIN" --store "$store" stats > "$work/stats.txt" 2>&1
time_summary "stats" "$work/stats.time"
captures=$(awk '$1 == "captures" { print $2 }' "$work/stats.txt")
if [ "$captures" != "$n" ]; then
  echo "FAILED: the store holds $captures captures, not $n" >&2
  exit 1
fi
echo "captures in the store: $captures = N (checked)"

bytes=$(du -sb "$store" | cut -f1)
printf 'store on disk: %d bytes, %.1f bytes a capture\n' "$bytes" "$(echo "$bytes / $n" | bc -l)"
if command -v ldb > /dev/null; then
  # The MANIFEST lists each family's live SST files as ` NUMBER:SIZE[...`.
  ldb manifest_dump --path="$(ls "$store"/MANIFEST-* | tail -1)" 2>/dev/null |
    LC_ALL=C tr -cd '\11\12\40-\176' | awk -v n="$n" '
    /^-+ Column family "/ { match($0, /"[^"]+"/); cf = substr($0, RSTART + 1, RLENGTH - 2); next }
    /^ [0-9]+:[0-9]+\[/ { split($1, p, ":"); size[cf] += p[2]; files[cf]++ }
    END { for (cf in size) printf "  %-20s %6d SST files %14d bytes %8.1f bytes a capture\n", cf, files[cf], size[cf], size[cf] / n }' | sort -k5 -n -r
else
  echo "  (per family: install rocksdb-tools for ldb)"
fi
[ -n "${KEEP:-}" ] || rm -rf "$store"
