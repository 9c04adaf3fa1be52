#!/usr/bin/env bash
# WARC import speed (issue 4), every contender measured in the same run on the same files,
# as compressed MB/s of wall time, with its CPU time (user + system, every thread) beside
# it, the steadier figure on a shared machine: the floor (inflate + SHA-1 of every byte, our own small program; with
# zlib-rs streaming as the fastwarc crate does, and with libdeflate's one-call inflate), the
# fastwarc crate (HTTP parsing + payload digest check), cdxj-indexer (pip), and sediment
# import-warc (1 and 2 threads, empty stores) and sediment cdx against cdxj-indexer.
# The references are built with their best release settings (scripts/bench-tools: fat LTO,
# one codegen unit).
# Three corpora, so that each ratio is measured on more than one crawl: BENCH_DIR's
# bench-*.warc.gz, made by scripts/make-bench-warc.sh (wget crawl of Debian documentation
# served on 127.0.0.1, HTML and PDF, >= 500 MB of gzip-per-record WARC), its html-*.warc.gz
# (the same site without PDFs), and SMALL_DIR's small-*.warc.gz, made by
# scripts/make-bench-warc-small-records.sh (another crawl, of other documentation, every
# payload under 10 KiB).
# Checked after the timed runs, before any figure is printed (scripts/bench-lib.sh; the
# script stops with status 1 otherwise), on every corpus: the captures in each import's
# store (`sediment captures --output cdx`) are the fastwarc crate's response, revisit and
# resource records, as sorted `URL TIMESTAMP DIGEST` lines, every record; the lines of
# `sediment cdx` are those and the metadata records; fastwarc found no payload digest
# wrong (a corpus with damaged records is not a speed corpus); and `sediment cdx` writes
# cdxj-indexer's output byte for byte (the PDF-heavy corpus and the small records).
# BENCH_CORRUPT=warc alters the first store's captures on purpose, to show the check failing.
# Usage: scripts/bench-warc.sh [BENCH_DIR [SMALL_DIR]]
#   (defaults /work/bench-data and BENCH_DIR/small-records; env RUNS, default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
. scripts/bench-lib.sh
dir="${1:-/work/bench-data}"
small_dir="${2:-$dir/small-records}"
ls "$dir"/bench-*.warc.gz >/dev/null 2>&1 || scripts/make-bench-warc.sh "$dir"
ls "$dir"/html-*.warc.gz >/dev/null 2>&1 || scripts/make-bench-warc.sh "$dir"
ls "$small_dir"/small-*.warc.gz >/dev/null 2>&1 || scripts/make-bench-warc-small-records.sh "$small_dir"
files=$(ls "$dir"/bench-*.warc.gz)
html_files=$(ls "$dir"/html-*.warc.gz)
small_files=$(ls "$small_dir"/small-*.warc.gz)
cargo build --release --quiet
tools=$(bench_tools)
mb=$(du -cb $files | tail -1 | awk '{print $1/1e6}')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
html_mb=$(du -cb $html_files | tail -1 | awk '{print $1/1e6}')
small_mb=$(du -cb $small_files | tail -1 | awk '{print $1/1e6}')
cat $files $html_files $small_files > /dev/null   # page cache, for every contender alike

# Wall seconds and CPU seconds (user + system, every thread) of one run.
secs() {
  local s=$(date +%s.%N)
  /usr/bin/time -f '%U %S' -o "$work/time" "$@" >/dev/null 2>"$work/log"
  local e=$(date +%s.%N)
  echo "$(echo "$e - $s" | bc -l) $(awk '{print $1 + $2}' "$work/time")"
}
# The machine is shared: every contender runs RUNS times, interleaved, and keeps its best
# wall time (t) and its best CPU time (c); on a loaded machine the CPU times are the steadier.
declare -A t c
best() {
  local name=$1; shift; local v w u
  v=$(secs "$@"); read -r w u <<<"$v"
  if [ -z "${t[$name]:-}" ] || (( $(echo "$w < ${t[$name]}" | bc -l) )); then t[$name]=$w; fi
  if [ -z "${c[$name]:-}" ] || (( $(echo "$u < ${c[$name]}" | bc -l) )); then c[$name]=$u; fi
}
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
  # The other crawl, of small records.
  best small_floor1 "$tools/floor" --threads 1 $small_files
  best small_floor_ld "$tools/floor_libdeflate" --threads 1 $small_files
  best small_fastwarc "$tools/fastwarc" --threads 1 $small_files
  rm -rf "$work/m1"
  best small_import1 "$SEDIMENT_BIN" --store "$work/m1" import-warc --threads 1 $small_files
  rm -rf "$work/m2"
  best small_import2 "$SEDIMENT_BIN" --store "$work/m2" import-warc --threads 2 $small_files
  best small_cdx "$SEDIMENT_BIN" cdx --threads 2 $small_files -o "$work/small.cdx"
  if command -v cdxj-indexer >/dev/null && [ "$round" = 1 ]; then
    best small_cdxj cdxj-indexer -11 -s $small_files -o "$work/small-cdxj.cdx"
  fi
  if command -v cdxj-indexer >/dev/null && [ "$round" = 1 ]; then
    # about 20 s a run: once is enough for a ratio of several times
    best cdxj cdxj-indexer -11 -s $files -o "$work/cdxj.cdx"
  fi
done

# Every contender read the same records: the stores' captures, the CDX lines and the
# reference's records agree (the last round's stores and outputs).
check_corpus() { # NAME STORE FILES...
  local name=$1 store=$2
  shift 2
  warc_captures_reference "$tools" 'response|revisit|resource' "$@" > "$work/$name.reference"
  "$SEDIMENT_BIN" --store "$store" captures --output cdx > "$work/$name.store.cdx" 2>/dev/null
  cdx_captures "$work/$name.store.cdx" > "$work/$name.store"
  bench_corrupt warc "$work/$name.store"
  check_same "$name: captures of the import-warc store = fastwarc's response, revisit and resource records (URL, timestamp, digest)" \
    "$work/$name.store" "$work/$name.reference"
  read -r ok bad < <(warc_digest_verdicts "$tools" "$@")
  check_equal "$name: HTTP payload digests fastwarc found wrong (of $ok verified)" "$bad" 0
}
check_corpus pdf-heavy "$work/s1" $files
cdx_captures "$work/sediment.cdx" > "$work/pdf-heavy.cdx"
warc_captures_reference "$tools" 'response|revisit|resource|metadata' $files > "$work/pdf-heavy.cdx-reference"
check_same "pdf-heavy: lines of sediment cdx = fastwarc's response, revisit, resource and metadata records" "$work/pdf-heavy.cdx" "$work/pdf-heavy.cdx-reference"
"$SEDIMENT_BIN" --store "$work/s2" captures --output cdx 2>/dev/null | cdx_captures /dev/stdin > "$work/pdf-heavy.store2"
check_same "pdf-heavy: captures of the 2-thread import = fastwarc's records" "$work/pdf-heavy.store2" "$work/pdf-heavy.reference"
check_corpus html "$work/h1" $html_files
check_corpus small-records "$work/m1" $small_files
"$SEDIMENT_BIN" --store "$work/m2" captures --output cdx 2>/dev/null | cdx_captures /dev/stdin > "$work/small-records.store2"
check_same "small-records: captures of the 2-thread import = fastwarc's records" "$work/small-records.store2" "$work/small-records.reference"
cdx_captures "$work/small.cdx" > "$work/small-records.cdx"
warc_captures_reference "$tools" 'response|revisit|resource|metadata' $small_files > "$work/small-records.cdx-reference"
check_same "small-records: lines of sediment cdx = fastwarc's response, revisit, resource and metadata records" "$work/small-records.cdx" "$work/small-records.cdx-reference"
if [ -n "${t[cdxj]:-}" ]; then
  check_same "sediment cdx output = cdxj-indexer -11 -s output, byte for byte" "$work/sediment.cdx" "$work/cdxj.cdx"
  check_same "small-records: sediment cdx output = cdxj-indexer -11 -s output, byte for byte" "$work/small.cdx" "$work/small-cdxj.cdx"
fi
echo

echo "corpus: $(echo $files | wc -w) files, ${mb} MB gzip-per-record WARC; best of $runs runs; $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
row() { printf '%-52s %7.2f s %8.1f MB/s  %7.2f s CPU\n' "$1" "${t[$2]}" "$(echo "$mb / ${t[$2]}" | bc -l)" "${c[$2]}"; }
row "floor: inflate + SHA-1, 1 thread" floor1
row "floor: inflate + SHA-1, 2 threads" floor2
row "floor: libdeflate one-call inflate + SHA-1, 1 thr" floor_ld
row "fastwarc crate (parse_http + verify digest), 1 thr" fastwarc
[ -n "${t[cdxj]:-}" ] && row "cdxj-indexer -11 -s" cdxj
row "sediment import-warc --threads 1" import1
row "sediment import-warc --threads 2" import2
row "sediment cdx --threads 2" cdx
r() { echo "scale=2; $1 / $2" | bc -l; }
echo "import 1 thread / fastwarc: $(r "${t[fastwarc]}" "${t[import1]}")   import 2 threads / 1 thread: $(r "${t[import1]}" "${t[import2]}")   import 1 thread / floor: $(r "${t[floor1]}" "${t[import1]}")   / libdeflate floor: $(r "${t[floor_ld]}" "${t[import1]}")"
echo "CPU time: import 1 thread / fastwarc: $(r "${c[fastwarc]}" "${c[import1]}")   import 1 thread / floor: $(r "${c[floor1]}" "${c[import1]}")"
[ -n "${t[cdxj]:-}" ] && echo "sediment cdx / cdxj-indexer: $(r "${t[cdxj]}" "${t[cdx]}")   CPU time: $(r "${c[cdxj]}" "${c[cdx]}")"
[ -n "${t[cdxj]:-}" ] && echo "cdx output identical to cdxj-indexer: yes (checked above)"
cat "$work/import1.log"

echo
echo "HTML crawl (no PDFs): $(echo $html_files | wc -w) files, ${html_mb} MB gzip-per-record WARC; best of $runs runs"
hrow() { printf '%-52s %7.2f s %8.1f MB/s  %7.2f s CPU\n' "$1" "${t[$2]}" "$(echo "$html_mb / ${t[$2]}" | bc -l)" "${c[$2]}"; }
hrow "floor: inflate + SHA-1, 1 thread" html_floor1
hrow "floor: libdeflate one-call inflate + SHA-1, 1 thr" html_floor_ld
hrow "fastwarc crate (parse_http + verify digest), 1 thr" html_fastwarc
hrow "sediment import-warc --threads 1" html_import1
echo "HTML crawl: import 1 thread / fastwarc: $(r "${t[html_fastwarc]}" "${t[html_import1]}")   import 1 thread / floor: $(r "${t[html_floor1]}" "${t[html_import1]}")   / libdeflate floor: $(r "${t[html_floor_ld]}" "${t[html_import1]}")"
echo "HTML crawl, CPU time: import 1 thread / fastwarc: $(r "${c[html_fastwarc]}" "${c[html_import1]}")   import 1 thread / floor: $(r "${c[html_floor1]}" "${c[html_import1]}")"

echo
echo "Small-records crawl: $(echo $small_files | wc -w) files, ${small_mb} MB gzip-per-record WARC; best of $runs runs"
srow() { printf '%-52s %7.2f s %8.1f MB/s  %7.2f s CPU\n' "$1" "${t[$2]}" "$(echo "$small_mb / ${t[$2]}" | bc -l)" "${c[$2]}"; }
srow "floor: inflate + SHA-1, 1 thread" small_floor1
srow "floor: libdeflate one-call inflate + SHA-1, 1 thr" small_floor_ld
srow "fastwarc crate (parse_http + verify digest), 1 thr" small_fastwarc
[ -n "${t[small_cdxj]:-}" ] && srow "cdxj-indexer -11 -s" small_cdxj
srow "sediment import-warc --threads 1" small_import1
srow "sediment import-warc --threads 2" small_import2
srow "sediment cdx --threads 2" small_cdx
echo "small records: import 1 thread / fastwarc: $(r "${t[small_fastwarc]}" "${t[small_import1]}")   import 2 threads / 1 thread: $(r "${t[small_import1]}" "${t[small_import2]}")   import 1 thread / floor: $(r "${t[small_floor1]}" "${t[small_import1]}")   / libdeflate floor: $(r "${t[small_floor_ld]}" "${t[small_import1]}")"
echo "small records, CPU time: import 1 thread / fastwarc: $(r "${c[small_fastwarc]}" "${c[small_import1]}")   import 1 thread / floor: $(r "${c[small_floor1]}" "${c[small_import1]}")"
[ -n "${t[small_cdxj]:-}" ] && echo "small records: sediment cdx / cdxj-indexer: $(r "${t[small_cdxj]}" "${t[small_cdx]}")   CPU time: $(r "${c[small_cdxj]}" "${c[small_cdx]}")"
