#!/usr/bin/env bash
# CDX backfill speed (issue 3), with the floor measured in the same run.
# Generates N (default 5,000,000) CDX lines from real ones (scripts/gen_cdx.py), sorted and
# gzipped, then times: zcat | wc -l (the floor), backfill-cdx normal and --bulk into empty
# stores from the .gz, and --bulk from the uncompressed file.
# Usage: scripts/bench-cdx.sh [N] [WORKDIR]   (env RUNS, default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
n="${1:-5000000}"
work="${2:-/tmp/sediment-bench-cdx}"
cargo build --release --quiet
mkdir -p "$work"
cdx="$work/bench-$n.cdx"
if [ ! -s "$cdx.gz" ]; then
  python3 scripts/gen_cdx.py "$n" | LC_ALL=C sort -S 2G > "$cdx"
  gzip -k -6 "$cdx"
fi
[ -s "$cdx" ] || gzip -dk "$cdx.gz"
t() { local s=$(date +%s.%N); "$@" >/dev/null 2>"$work/last.log"; local e=$(date +%s.%N); echo "$e - $s" | bc; }
sed_() { "$SEDIMENT_BIN" --store "$1" backfill-cdx "${@:2}"; }
cat "$cdx" "$cdx.gz" > /dev/null   # page cache, for every contender alike

# The machine is shared: the floor and the bulk loads run RUNS times, interleaved, and keep
# their best time; the normal path (minutes) runs once.
min() { if [ -z "$1" ] || (( $(echo "$2 < $1" | bc -l) )); then echo "$2"; else echo "$1"; fi; }
runs="${RUNS:-3}"
t_floor="" t_bulk="" t_bulk_plain=""
for round in $(seq 1 "$runs"); do
  rm -rf "$work"/s-bulk*
  t_floor=$(min "$t_floor" "$(t sh -c "zcat '$cdx.gz' | wc -l")")
  t_bulk=$(min "$t_bulk" "$(t sed_ "$work/s-bulk" --bulk "$cdx.gz")")
  cp "$work/last.log" "$work/bulk.log"
  t_bulk_plain=$(min "$t_bulk_plain" "$(t sed_ "$work/s-bulk-plain" --bulk "$cdx")")
done
rm -rf "$work"/s-normal*
t_normal=$(t sed_ "$work/s-normal" "$cdx.gz")
cp "$work/last.log" "$work/normal.log"
t_normal_plain=$(t sed_ "$work/s-normal-plain" "$cdx")

echo "lines: $n (floor and bulk: best of $runs runs); gz $(($(stat -c %s "$cdx.gz") / 1000000)) MB, plain $(($(stat -c %s "$cdx") / 1000000)) MB; $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
row() { printf '%-44s %8.2f s %10.0f lines/s %6.2fx floor\n' "$1" "$2" "$(echo "$n / $2" | bc -l)" "$(echo "$2 / $t_floor" | bc -l)"; }
row "zcat | wc -l (floor)" "$t_floor"
row "backfill-cdx (gz, normal)" "$t_normal"
row "backfill-cdx --bulk (gz)" "$t_bulk"
row "backfill-cdx (plain, normal)" "$t_normal_plain"
row "backfill-cdx --bulk (plain)" "$t_bulk_plain"
tail -1 "$work/bulk.log"
for s in normal bulk; do
  "$SEDIMENT_BIN" --store "$work/s-$s" export > "$work/export-$s.jsonl" 2>/dev/null
done
cmp -s "$work/export-normal.jsonl" "$work/export-bulk.jsonl" && echo "bulk export == normal export: yes" || echo "bulk export == normal export: NO"
du -sh "$work/s-bulk" | awk '{print "store on disk (bulk): " $1}'
