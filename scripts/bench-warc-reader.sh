#!/usr/bin/env bash
# Measure the streaming WARC reader (src/warc) against the floor: flate2 inflate + SHA-1 of
# every decompressed byte, one thread, on the same >= 200 MB gzip-per-record WARC made by
# concatenating corpus WARCs. Prints MB/s (compressed bytes per CPU second, steadier than
# wall time on a shared machine; wall MB/s is shown too) and the ratio of the best runs.
# Checked first (scripts/bench-lib.sh; the script stops with status 1 otherwise): the reader
# sees the same records as the fastwarc crate (type, record ID, target URI and the verdict
# on each HTTP response's payload digest, every record), and its timed run counts as many
# records and as many verified digests, with no errors.
# BENCH_CORRUPT=warc-reader alters Sediment's list on purpose, to show the check failing.
#
# Usage: scripts/bench-warc-reader.sh [MIN_MB] (default 200)   env: BENCH_DIR, RUNS
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
. scripts/bench-lib.sh
MIN_MB=${1:-200}
RUNS=${RUNS:-3}
BENCH_DIR=${BENCH_DIR:-/tmp/sediment-bench}
CORPUS=../shared/corpus
FILE="$BENCH_DIR/corpus-${MIN_MB}mb.warc.gz"
mkdir -p "$BENCH_DIR"

if [ ! -s "$FILE" ]; then
  # Valid gzip-per-record corpus files (each member is one record).
  parts=(
    "$CORPUS/warcbase/example.warc.gz"
    "$CORPUS/pywb/sample_archive/warcs/iana.warc.gz"
    "$CORPUS/chatnoir-resiliparse/tests/data/warcfile.warc.gz"
    "$CORPUS/webarchive-commons/src/test/resources/org/archive/format/gzip/IAH-urls-wget.warc.gz"
    "$CORPUS/jwarc/test-resources/org/netpreserve/jwarc/cc.warc.gz"
    "$CORPUS/pywb/sample_archive/warcs/dupes.warc.gz"
  )
  tmp="$FILE.tmp"
  : > "$tmp"
  while [ "$(stat -c %s "$tmp")" -lt $((MIN_MB * 1000 * 1000)) ]; do
    cat "${parts[@]}" >> "$tmp"
  done
  mv "$tmp" "$FILE"
fi
echo "input: $FILE ($(stat -c %s "$FILE") bytes)"

cargo build --release --quiet --example warc_bench --example warc_dump
BIN="$CARGO_TARGET_DIR/release/examples/warc_bench"
tools=$(bench_tools)

# The same records on both sides, before any time is taken.
"$CARGO_TARGET_DIR/release/examples/warc_dump" "$FILE" > "$BENCH_DIR/warc-dump.txt"
warc_records_sediment < "$BENCH_DIR/warc-dump.txt" > "$BENCH_DIR/records-sediment.txt"
warc_records_reference "$tools" "$FILE" > "$BENCH_DIR/records-fastwarc.txt"
bench_corrupt warc-reader "$BENCH_DIR/records-sediment.txt"
check_same "records of $FILE: Sediment's reader and the fastwarc crate (type, ID, URI, digest verdict)" \
  "$BENCH_DIR/records-sediment.txt" "$BENCH_DIR/records-fastwarc.txt"
reference_records=$(wc -l < "$BENCH_DIR/records-fastwarc.txt")
# The timed runs count digests that match, de-chunked or not, on every kind of record.
digests_ok=$(grep -cE ' (match|match-dechunked) ' "$BENCH_DIR/warc-dump.txt" || true)

cat "$FILE" > /dev/null  # page cache

best() { sort -k2 -n -r | head -1 | awk '{print $2}'; }
mean() { awk '{s += $2; n++} END {printf "%.1f", s / n}'; }
: > "$BENCH_DIR/floor.txt"; : > "$BENCH_DIR/reader.txt"
for _ in $(seq "$RUNS"); do
  "$BIN" floor "$FILE" | tee -a "$BENCH_DIR/floor.txt"
  "$BIN" reader "$FILE" | tee -a "$BENCH_DIR/reader.txt"
done
# Every timed run of the reader read what the check above compared.
while read -r line; do
  check_equal "records in a timed run" "$(echo "$line" | grep -o 'records=[0-9]*' | cut -d= -f2)" "$reference_records"
  check_equal "verified payload digests in a timed run" "$(echo "$line" | grep -o 'digests_ok=[0-9]*' | cut -d= -f2)" "$digests_ok"
  check_equal "read errors in a timed run" "$(echo "$line" | grep -o 'errors=[0-9]*' | cut -d= -f2)" 0
done < "$BENCH_DIR/reader.txt"
f=$(best < "$BENCH_DIR/floor.txt")
r=$(best < "$BENCH_DIR/reader.txt")
echo "best of $RUNS: floor $f MB/s, reader $r MB/s, ratio $(awk -v r="$r" -v f="$f" 'BEGIN{printf "%.3f", r/f}')"
fm=$(mean < "$BENCH_DIR/floor.txt")
rm_=$(mean < "$BENCH_DIR/reader.txt")
echo "mean of $RUNS: floor $fm MB/s, reader $rm_ MB/s, ratio $(awk -v r="$rm_" -v f="$fm" 'BEGIN{printf "%.3f", r/f}')"
