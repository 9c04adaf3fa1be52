#!/usr/bin/env bash
# The main job on the bundled fixture crawls, with the embedded store:
# backfill wget's CDX, import the WARCs, show what the store holds, export JSON lines,
# index a WARC to CDX and read a payload back, then project the store into the crawl and
# summary databases and the two word indexes, and search it.
# Installs what is missing (scripts/setup.sh) and builds in release mode first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/env.sh
cargo build --release --quiet
out="${DEMO_DIR:-out/demo}"
rm -rf "$out" && mkdir -p "$out"
export SEDIMENT_STORE="$out/store"
s() { echo "\$ sediment $*" >&2; "$SEDIMENT_BIN" "$@"; }

s backfill-cdx fixtures/crawl/crawl1.cdx fixtures/crawl/crawl2.cdx
s import-warc fixtures/crawl/crawl1.warc.gz fixtures/crawl/crawl2.warc.gz
s stats
s export -o "$out/files.jsonl"
echo "first rows of $out/files.jsonl:"
head -n 2 "$out/files.jsonl"
key=$(grep -m1 '"file:mime":"application/pdf"' "$out/files.jsonl" | sed 's/^{"key":"\([A-Z2-7]*\)".*/\1/')
s get "$key"
s cat "$key" > "$out/$key.pdf"
echo "payload of $key: $(wc -c < "$out/$key.pdf") bytes, sha1 $(sha1sum "$out/$key.pdf" | cut -c1-40)"
s captures --url http://127.0.0.1:47213/about.html
s cdx fixtures/crawl/crawl1.warc.gz -o "$out/crawl1.cdx"
head -n 3 "$out/crawl1.cdx"

# Projections: the WARCs are found under fixtures/crawl (the stored paths are as given).
s project crawl -o "$out/crawl.db" --warc-dir fixtures/crawl
echo "crawl.db: $(sqlite3 "$out/crawl.db" "SELECT count(*) FROM crawl_log") crawl_log rows, \
$(sqlite3 "$out/crawl.db" "SELECT count(*) FROM redirect") redirects, \
$(sqlite3 "$out/crawl.db" "SELECT count(*) FROM crawl_candidate") crawl candidates"
s project summary -o "$out/summary.db" --warc-dir fixtures/crawl
s search --db "$out/summary.db" --limit 3 sediment core
s search --db "$out/summary.db" --limit 3 '"terms of use"'
s project locust -o "$out/locust" --warc-dir fixtures/crawl
ls "$out/locust"
s project jdbm -o "$out/jdbm" --warc-dir fixtures/crawl
s lookup-jdbm "$out/jdbm" lake > "$out/lake.tsv"
echo "pages with the word \"lake\" (URL, frequency), first 5:"
head -n 5 "$out/lake.tsv"
