#!/usr/bin/env bash
# Fuzzes every parser that reads untrusted bytes with cargo-fuzz (libFuzzer), outside CI.
#   scripts/fuzz.sh [SECONDS] [TARGET…]     each target for SECONDS (default 600)
#   FUZZ_RUNS=10000000 scripts/fuzz.sh 0     each target for that many executions instead
# Targets: warc_reader cdx_line surt html_analyze html_fast_path tei_json jsonl_row http_request
# (default: all).
# Corpora are seeded from fixtures/ and ../shared/corpus and kept in fuzz/corpus/ (not in
# git); crashes land in fuzz/artifacts/TARGET/. The last line of each run goes to
# fuzz/logs/TARGET.log and a summary table is printed at the end.
#   FUZZ_SANITIZER=address   build with AddressSanitizer (default: none — Sediment's only
#                            unsafe code is a malloc setting, a prefetch hint and the calls
#                            into libdeflate, which OSS-Fuzz fuzzes itself; ASan made the
#                            WARC reader 5× slower)
#   FUZZ_MAX_LEN=65536       longest input tried (default 4096: a few records, pages or
#                            lines each; short inputs run many times faster)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(warc_reader cdx_line surt html_analyze html_fast_path tei_json jsonl_row http_request)
shared=${SEDIMENT_SHARED:-$root/../shared}

. scripts/env.sh
rustup toolchain list | grep -q '^nightly' || { echo "fuzz: needs the nightly toolchain (rustup toolchain install nightly)" >&2; exit 1; }
command -v cargo-fuzz >/dev/null 2>&1 || cargo install --locked cargo-fuzz

# Reuse the RocksDB and Snappy archives of the main build when there is one: the fuzz
# targets link the library, and compiling RocksDB's C++ again takes a quarter of an hour.
rocks_out=$(ls -d "$CARGO_TARGET_DIR"/release/build/librocksdb-sys-*/out 2>/dev/null | while read -r d; do [ -f "$d/librocksdb.a" ] && echo "$d"; done | head -n1 || true)
if [ -n "$rocks_out" ]; then
  export ROCKSDB_LIB_DIR=$rocks_out ROCKSDB_STATIC=1 SNAPPY_LIB_DIR=$rocks_out SNAPPY_STATIC=1
  echo "fuzz: linking RocksDB from $rocks_out" >&2
fi
# Its own target directory: the sanitizer flags would otherwise rebuild the main one.
export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-$root/fuzz/target}

seed() { # seed TARGET FILE… : copies files (up to 1 MiB each) into the target's corpus
  local dir=$root/fuzz/corpus/$1; shift
  mkdir -p "$dir"
  for f in "$@"; do
    [ -f "$f" ] || continue
    [ "$(stat -c %s "$f")" -le 1048576 ] || continue
    cp -f "$f" "$dir/seed-$(sha1sum "$f" | cut -c1-16)"
  done
}
warcs=$(find fixtures "$shared/corpus" -type f \( -name '*.warc' -o -name '*.warc.gz' -o -name '*.arc.gz' \) 2>/dev/null || true)
seed warc_reader $warcs
seed cdx_line $(find fixtures "$shared/corpus" -type f \( -name '*.cdx' -o -name '*.cdxj' \) 2>/dev/null || true)
seed html_analyze fixtures/html/*.html $(find fixtures/site -name '*.html' 2>/dev/null | head -n 50)
seed html_fast_path fixtures/html/*.html $(find fixtures/site -name '*.html' 2>/dev/null | head -n 50)
seed tei_json $(find "$shared/corpus" -type f -name '*.xml' 2>/dev/null || true)
# SURT and JSONL seeds are single lines: URLs from the CDX files, rows from an export.
mkdir -p fuzz/corpus/surt fuzz/corpus/jsonl_row
cat $(find fixtures "$shared/corpus" -type f -name '*.cdx' 2>/dev/null) 2>/dev/null \
  | awk 'NF>=3 && $1 !~ /^ ?CDX/ {print $3}' | head -n 300 | nl -ba | while read -r n url; do
      printf '%s' "$url" > "fuzz/corpus/surt/url-$n"; done || true  # head closes the pipe early
if [ -x "${SEDIMENT_BIN:-}" ] && [ -z "$(ls fuzz/corpus/jsonl_row)" ]; then
  tmp=$(mktemp -d)
  "$SEDIMENT_BIN" --store "$tmp/store" import-warc --quiet fixtures/crawl/crawl1.warc.gz >/dev/null 2>&1 || true
  "$SEDIMENT_BIN" --store "$tmp/store" export --versions 2>/dev/null | head -n 40 | nl -ba | while read -r n row; do
    printf '%s' "$row" > "fuzz/corpus/jsonl_row/row-$n"; done || true
  rm -rf "$tmp"
fi
# HTTP seeds: a request to each endpoint, with the parameters each one reads.
mkdir -p fuzz/corpus/http_request
n=0
for target in '/cdx?url=example.com/*&from=2021&to=2022&limit=-3&fl=timestamp,url&filter=!status:404&collapse=digest&output=json' \
    '/cdx?url=example.com&closest=20210101&sort=closest&showNumPages=true&pageSize=5' \
    '/captures/sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA?output=cdxj&fl=digest' \
    '/search?q=lake+%22flood+layer%22+-mud+site:example.org+lang:de+mime:pdf+sedi*&limit=5&format=html' \
    '/sha1/0123456789abcdef0123456789abcdef01234567' '/payload/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' '*'; do
  n=$((n + 1))
  method=GET; [ "$target" = '*' ] && method=OPTIONS
  printf '%s %s HTTP/1.1\r\nHost: x\r\nAccept: text/html\r\n\r\n' "$method" "$target" > "fuzz/corpus/http_request/seed-$n"
done

mkdir -p fuzz/logs
summary=()
for target in "${targets[@]}"; do
  limit=(-max_total_time="$seconds")
  [ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
  if [ -n "${FUZZ_RUNS:-}" ]; then label="$FUZZ_RUNS runs"; else label="$seconds s"; fi
  echo "fuzz: $target ($label)" >&2
  status=ok
  (cd fuzz && cargo +nightly fuzz run --release -s "${FUZZ_SANITIZER:-none}" "$target" "corpus/$target" -- \
      "${limit[@]}" -max_len="${FUZZ_MAX_LEN:-4096}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      >"logs/$target.log" 2>&1) || status=FAILED
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "fuzz/logs/$target.log" | grep -o '[0-9]*$' | tail -n1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "fuzz/logs/$target.log" | grep -o '[0-9]*$' | tail -n1)
  summary+=("$(printf '%-14s %12s executions %8s/s  %s' "$target" "${runs:-?}" "${rate:-?}" "$status")")
done
printf '%s\n' "${summary[@]}"
! printf '%s\n' "${summary[@]}" | grep -q FAILED
