#!/usr/bin/env bash
# WARC import speed (issue 4), every contender measured in the same run on the same files,
# as compressed MB/s: the floor (inflate + SHA-1 of every byte, our own small program; with
# zlib-rs streaming as the fastwarc crate does, and with libdeflate's one-call inflate), the
# fastwarc crate (HTTP parsing + payload digest check), cdxj-indexer (pip), and sediment
# import-warc (1 and 2 threads, empty stores) and sediment cdx.
# The corpus is made by scripts/make-bench-warc.sh (wget crawl of Debian documentation served
# on 127.0.0.1, >= 500 MB of gzip-per-record WARC).
# Usage: scripts/bench-warc.sh [BENCH_DIR]   (default /work/bench-data; env RUNS, default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
dir="${1:-/work/bench-data}"
ls "$dir"/bench-*.warc.gz >/dev/null 2>&1 || scripts/make-bench-warc.sh "$dir"
ls "$dir"/html-*.warc.gz >/dev/null 2>&1 || scripts/make-bench-warc.sh "$dir"
files=$(ls "$dir"/bench-*.warc.gz)
html_files=$(ls "$dir"/html-*.warc.gz)
cargo build --release --quiet
tools_target="${CARGO_TARGET_DIR}-bench-tools"
CARGO_TARGET_DIR="$tools_target" cargo build --release --quiet --manifest-path scripts/bench-tools/Cargo.toml
tools="$tools_target/release"
mb=$(du -cb $files | tail -1 | awk '{print $1/1e6}')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
html_mb=$(du -cb $html_files | tail -1 | awk '{print $1/1e6}')
cat $files $html_files > /dev/null   # page cache, for every contender alike

secs() { local s=$(date +%s.%N); "$@" >/dev/null 2>"$work/log"; local e=$(date +%s.%N); echo "$e - $s" | bc -l; }
# The machine is shared: every contender runs RUNS times, interleaved, and keeps its best time.
declare -A t
best() { local name=$1; shift; local v; v=$(secs "$@"); if [ -z "${t[$name]:-}" ] || (( $(echo "$v < ${t[$name]}" | bc -l) )); then t[$name]=$v; fi; }
runs="${RUNS:-3}"
for round in $(seq 1 "$runs"); do
  best floor1 "$tools/floor" --threads 1 $files
  best floor2 "$tools/floor" --threads 2 $files
  best floor_ld "$tools/floor_libdeflate" --threads 1 $files
  best fastwarc "$tools/fastwarc" --threads 1 $files
  rm -rf "$work/s1" "$work/s2"
  best import1 "$SEDIMENT_BIN" --store "$work/s1" import-warc --threads 1 $files
  tail -1 "$work/log" > "$work/import1.log"
  best import2 "$SEDIMENT_BIN" --store "$work/s2" import-warc --threads 2 $files
  best cdx "$SEDIMENT_BIN" cdx --threads 2 $files -o "$work/sediment.cdx"
  # The crawl without PDFs: many small records.
  best html_floor1 "$tools/floor" --threads 1 $html_files
  best html_floor_ld "$tools/floor_libdeflate" --threads 1 $html_files
  best html_fastwarc "$tools/fastwarc" --threads 1 $html_files
  rm -rf "$work/h1"
  best html_import1 "$SEDIMENT_BIN" --store "$work/h1" import-warc --threads 1 $html_files
  if command -v cdxj-indexer >/dev/null && [ "$round" = 1 ]; then
    # about 20 s a run: once is enough for a ratio of several times
    best cdxj cdxj-indexer -11 -s $files -o "$work/cdxj.cdx"
  fi
done

echo "corpus: $(echo $files | wc -w) files, ${mb} MB gzip-per-record WARC; best of $runs runs; $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
row() { printf '%-52s %7.2f s %8.1f MB/s\n' "$1" "$2" "$(echo "$mb / $2" | bc -l)"; }
row "floor: inflate + SHA-1, 1 thread" "${t[floor1]}"
row "floor: inflate + SHA-1, 2 threads" "${t[floor2]}"
row "floor: libdeflate one-call inflate + SHA-1, 1 thr" "${t[floor_ld]}"
row "fastwarc crate (parse_http + verify digest), 1 thr" "${t[fastwarc]}"
[ -n "${t[cdxj]:-}" ] && row "cdxj-indexer -11 -s" "${t[cdxj]}"
row "sediment import-warc --threads 1" "${t[import1]}"
row "sediment import-warc --threads 2" "${t[import2]}"
row "sediment cdx --threads 2" "${t[cdx]}"
r() { echo "scale=2; $1 / $2" | bc -l; }
echo "import 1 thread / fastwarc: $(r "${t[fastwarc]}" "${t[import1]}")   import 2 threads / 1 thread: $(r "${t[import1]}" "${t[import2]}")   import 1 thread / floor: $(r "${t[floor1]}" "${t[import1]}")   / libdeflate floor: $(r "${t[floor_ld]}" "${t[import1]}")"
[ -n "${t[cdxj]:-}" ] && echo "sediment cdx / cdxj-indexer: $(r "${t[cdxj]}" "${t[cdx]}")"
[ -n "${t[cdxj]:-}" ] && { cmp -s "$work/sediment.cdx" "$work/cdxj.cdx" && echo "cdx output identical to cdxj-indexer: yes" || echo "cdx output identical to cdxj-indexer: NO"; }
cat "$work/import1.log"

echo
echo "HTML crawl (no PDFs): $(echo $html_files | wc -w) files, ${html_mb} MB gzip-per-record WARC; best of $runs runs"
hrow() { printf '%-52s %7.2f s %8.1f MB/s\n' "$1" "$2" "$(echo "$html_mb / $2" | bc -l)"; }
hrow "floor: inflate + SHA-1, 1 thread" "${t[html_floor1]}"
hrow "floor: libdeflate one-call inflate + SHA-1, 1 thr" "${t[html_floor_ld]}"
hrow "fastwarc crate (parse_http + verify digest), 1 thr" "${t[html_fastwarc]}"
hrow "sediment import-warc --threads 1" "${t[html_import1]}"
echo "HTML crawl: import 1 thread / fastwarc: $(r "${t[html_fastwarc]}" "${t[html_import1]}")   import 1 thread / floor: $(r "${t[html_floor1]}" "${t[html_import1]}")   / libdeflate floor: $(r "${t[html_floor_ld]}" "${t[html_import1]}")"
