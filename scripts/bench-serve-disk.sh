#!/usr/bin/env bash
# Serving from disk (issue 36): `sediment serve` over a big store inside a memory cgroup
# whose limit, page cache included, is a quarter of the store's size (or MEMORY_MB), so
# most reads go to the disk. 16 clients (CLIENTS), closed loop, keep-alive, over captures
# drawn at random from the store, three kinds of request, each its own run:
#   exact   /cdx?url=URL&output=json                             every capture of the URL
#   prefix  /cdx?url=DIRECTORY/&matchType=prefix&limit=100&output=json
#   sha1    /sha1/KEY                                            the row of the payload
# Goals (issue 36, at 100 M captures): p99 exact <= 10 ms, prefix <= 30 ms, sha1 <= 5 ms.
#
# Steps, each timed with /usr/bin/time -v (wall, CPU, peak RSS):
#  1. `export-captures --format parquet` of the whole store into WORKDIR/parquet (this is
#     also issue 36's export check), and DuckDB's count of its rows, which must
#     equal the captures the store reports (`stats`).
#  2. SAMPLE (100,000) captures drawn by DuckDB (reservoir sample, seed 36) for the URL
#     requests, and as many of the captures that have a file row (status 200, a full-text
#     type: the default file filter) for /sha1.
#  3. The page cache is dropped (root; the store's pages must not be charged to another
#     cgroup), `serve` starts inside the cgroup (cgroup v1 memory controller at
#     /sys/fs/cgroup/memory, or cgroup v2's memory.max), a warm-up of WARMUP requests, then
#     REQUESTS requests per kind; the cgroup's peak memory and the server's CPU time are
#     reported, and RocksDB's block cache and filter settings are those of `serve`.
# Usage: scripts/bench-serve-disk.sh STORE [WORKDIR]
# Env: SAMPLE_CDX (a file of CDX lines to take the sample from instead of step 1's export,
# e.g. every 1000th line of the generator's stream: no disk for the export), SAMPLE_JSONL
# (an earlier run's WORKDIR/sample.jsonl, to serve the same sample again), KINDS (the
# requests to run, of "exact prefix sha1"), MEMORY_MB, BLOCK_CACHE_MB (serve's
# --block-cache-mb; its default otherwise), CLIENTS (16), SAMPLE (100000), REQUESTS (100000 per kind), WARMUP
# (10000), SEDIMENT_BIN and LOAD_BIN (binaries to use instead of building them), PORT (8391).
set -euo pipefail
cd "$(dirname "$0")/.."
given_bin="${SEDIMENT_BIN:-}"
. scripts/env.sh
. scripts/bench-lib.sh
[ -n "$given_bin" ] && [ -n "${LOAD_BIN:-}" ] && SEDIMENT_BIN="$given_bin"
store="${1:?usage: scripts/bench-serve-disk.sh STORE [WORKDIR]}"
work="${2:-$(dirname "$store")/serve-disk}"
clients="${CLIENTS:-16}"
sample="${SAMPLE:-100000}"
requests="${REQUESTS:-100000}"
warmup="${WARMUP:-10000}"
port="${PORT:-8391}"
if [ -z "${LOAD_BIN:-}" ]; then
  cargo build --release --quiet --bin sediment --example http_load
  LOAD_BIN="$CARGO_TARGET_DIR/release/examples/http_load"
fi
python="${SEDIMENT_VENV:-$HOME/.cache/sediment-venv}/bin/python"
[ -x "$python" ] || python=python3
"$python" -c 'import duckdb' 2>/dev/null || { echo "duckdb (Python) is missing: scripts/setup.sh installs it" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "root is needed for the memory cgroup and to drop the page cache" >&2; exit 1; }
mkdir -p "$work"


store_bytes=$(du -sb "$store" | cut -f1)
memory_mb="${MEMORY_MB:-$((store_bytes / 4 / 1048576))}"
echo "store $store: $((store_bytes / 1048576)) MB; memory cap $memory_mb MB; $clients clients; $(nproc) cores; $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. The sample: from the Parquet export (and its count checked), or from SAMPLE_CDX.
write_requests() { # PYTHON CODE: reads (url, status, mime, digest) rows from stdin as JSON
  "$python" -c '
import json, sys, urllib.parse
work = sys.argv[1]
types = {t["type"] for t in json.load(open("schemas/fulltext-types.json"))["types"]}
q = lambda s: urllib.parse.quote(s, safe="")
with open(f"{work}/exact.txt", "w") as exact, open(f"{work}/prefix.txt", "w") as prefix, \
        open(f"{work}/sha1.txt", "w") as sha1:
    for line in sys.stdin:
        url, status, mime, digest = json.loads(line)
        exact.write(f"/cdx?url={q(url)}&output=json\n")
        directory = url[: url.rfind("/") + 1] if url.count("/") > 2 else url
        prefix.write(f"/cdx?url={q(directory)}&matchType=prefix&limit=100&output=json\n")
        # Only captures that pass the default file filter (status 200, a full-text
        # type) have a row to ask /sha1 for.
        if str(status) == "200" and mime in types and digest:
            key = digest[5:] if digest.startswith("sha1:") else digest
            sha1.write(f"/sha1/{key}\n")
' "$work"
}
if [ -n "${SAMPLE_JSONL:-}" ]; then
  # The sample of an earlier run's step 1 (WORKDIR/sample.jsonl), its count already checked.
  write_requests < "$SAMPLE_JSONL"
  echo "sample: $(wc -l < "$work/exact.txt") captures from $SAMPLE_JSONL"
elif [ -n "${SAMPLE_CDX:-}" ]; then
  # CDX lines (11 fields: urlkey timestamp url mime status digest ...), all of them taken.
  awk '{ printf "[\"%s\", \"%s\", \"%s\", \"%s\"]\n", $3, $5, $4, $6 }' "$SAMPLE_CDX" | write_requests
  echo "sample: $(wc -l < "$work/exact.txt") captures from $SAMPLE_CDX"
else
  stats="$work/stats.txt"
  "$SEDIMENT_BIN" --store "$store" stats > "$stats"
  captures=$(awk '$1 == "captures" { print $2 }' "$stats")
  rm -rf "$work/parquet"
  /usr/bin/time -v -o "$work/export.time" "$SEDIMENT_BIN" --store "$store" export-captures \
    --format parquet -o "$work/parquet" 2> "$work/export.log"
  time_summary "export-captures --format parquet" "$work/export.time"
  echo "parquet: $(du -sb "$work/parquet" | cut -f1) bytes"
  /usr/bin/time -v -o "$work/duckdb.time" "$python" -c '
import duckdb, json, sys
parquet, sample, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
con = duckdb.connect()
con.execute("SET threads TO 2")
con.execute("SET enable_progress_bar = false")  # it goes to stdout, among the rows
files = f"read_parquet(\"{parquet}/**/*.parquet\", hive_partitioning = true)".replace(chr(34), chr(39))
count = con.execute(f"SELECT count(*) FROM {files}").fetchone()[0]
open(f"{work}/parquet.count", "w").write(f"{count}\n")
for row in con.execute(
    f"SELECT url, fetch_status, content_mime_type, content_digest FROM {files} "
    f"USING SAMPLE reservoir({sample} ROWS) REPEATABLE (36)"
).fetchall():
    print(json.dumps(row))
' "$work/parquet" "$sample" "$work" > "$work/sample.jsonl"
  time_summary "duckdb: count + sample" "$work/duckdb.time"
  write_requests < "$work/sample.jsonl"
  counted=$(cat "$work/parquet.count")
  if [ "$counted" != "$captures" ]; then
    echo "FAILED: DuckDB counts $counted rows in the Parquet export, the store $captures captures" >&2
    exit 1
  fi
  echo "DuckDB's count of the Parquet export = the store's captures = $captures (checked)"
fi

# 2. The server inside the memory cap.
cg=$(memory_cgroup sediment-serve-disk "$memory_mb")
serve_args=(--bind "127.0.0.1:$port")
[ -n "${BLOCK_CACHE_MB:-}" ] && serve_args+=(--block-cache-mb "$BLOCK_CACHE_MB")
echo "serve ${serve_args[*]}"
in_cgroup "$cg" \
  "$SEDIMENT_BIN" --store "$store" serve "${serve_args[@]}" 2> "$work/serve.log" &
server=$!
cleanup() { kill "$server" 2> /dev/null || true; wait "$server" 2> /dev/null || true; rmdir "$cg" 2> /dev/null || true; }
trap cleanup EXIT
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$port/health" > /dev/null && break
  sleep 0.5
done
alive() {
  kill -0 "$server" 2> /dev/null && return 0
  echo "FAILED: serve stopped (killed by the memory cap? dmesg says); its log:" >&2
  tail -5 "$work/serve.log" >&2
  exit 1
}
alive
base="http://127.0.0.1:$port"
"$LOAD_BIN" "$base" "$work/exact.txt" "$clients" "$warmup" > /dev/null || true
for kind in ${KINDS:-exact prefix sha1}; do
  alive
  cpu_before=$(awk '{ print $14 + $15 }' "/proc/$server/stat")
  result=$("$LOAD_BIN" "$base" "$work/$kind.txt" "$clients" "$requests" || echo "FAILED")
  alive
  cpu_after=$(awk '{ print $14 + $15 }' "/proc/$server/stat")
  printf '%-7s %s; server CPU %.3f ms a request\n' "$kind" "$result" \
    "$(echo "($cpu_after - $cpu_before) * 1000 / $(getconf CLK_TCK) / $requests" | bc -l)"
done
echo "cgroup peak memory (page cache included): $(cgroup_peak_mb "$cg") MB of $memory_mb MB; block cache $(curl -sf "$base/stats" | "$python" -c 'import json, sys; print(json.load(sys.stdin).get("block_cache_bytes", 0) >> 20)') MB"
