#!/usr/bin/env bash
# CDX backfill speed (issue 3), with the floor measured in the same run.
# Makes N (default 5,000,000) CDX lines, sorted and gzipped, then times: zcat | wc -l (the
# floor), backfill-cdx normal and --bulk into empty stores from the .gz, and --bulk from the
# uncompressed file (wall time, and CPU time: user + system of every process). Two corpora,
# so that the ratio is measured on more than one shape of CDX (CORPUS):
#   generated      CDX-11 lines made from real ones (scripts/gen_cdx.py: sandcrawler's and
#                  pywb's sample CDX, mostly revisits and PDFs); the default
#   small-records  wget's CDX (`a b a m s k r M V g u`, with the record ID) of the crawl of
#                  small records that scripts/make-bench-warc-small-records.sh makes in
#                  SMALL_DIR (default /work/bench-data/small-records; made when missing),
#                  repeated with the URL path, timestamp and digest varied as gen_cdx.py
#                  varies them, until N lines
# Checked before any figure is printed (scripts/bench-lib.sh; status 1 otherwise): each
# store holds exactly the input's captures (`sediment captures --output cdx` against the
# input, every line, sorted), normalised only where the formats legitimately differ: the
# URL key is left out (Sediment writes its own SURT spelling), the WARC file is compared by
# its base name (a store keeps the name, the directory is where the WARC is looked for),
# and wget's lines, which have no length column and end with the record ID, are compared
# as the 11 columns Sediment writes for them (length `-`); and the bulk and normal stores
# export the same bytes.
# BENCH_CORRUPT=cdx alters the bulk store's captures on purpose, to show the check failing.
# Usage: scripts/bench-cdx.sh [N] [WORKDIR] [CORPUS]   (env RUNS, default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
. scripts/bench-lib.sh
n="${1:-5000000}"
work="${2:-/tmp/sediment-bench-cdx}"
corpus="${3:-generated}"
cargo build --release --quiet
mkdir -p "$work"
case "$corpus" in
  generated)
    cdx="$work/bench-$n.cdx"
    if [ ! -s "$cdx.gz" ]; then
      python3 scripts/gen_cdx.py "$n" | LC_ALL=C sort -S 2G > "$cdx"
      gzip -k -6 "$cdx"
    fi ;;
  small-records)
    small_dir="${SMALL_DIR:-/work/bench-data/small-records}"
    [ -s "$small_dir/small.cdx" ] || scripts/make-bench-warc-small-records.sh "$small_dir"
    cdx="$work/small-$n.cdx"
    if [ ! -s "$cdx.gz" ]; then
      {
        head -1 "$small_dir/small.cdx"
        python3 - "$small_dir/small.cdx" "$n" <<'PY' | LC_ALL=C sort -S 2G
import base64, datetime, hashlib, sys
seed = [l.rstrip("\n").split(" ") for l in open(sys.argv[1]) if not l.startswith(" CDX")]
seed = [c for c in seed if len(c) == 11]
n = int(sys.argv[2])
out = []
for i in range(n):
    cols = list(seed[i % len(seed)])
    group = i // len(seed)
    if group:
        # Another capture of another URL: the path, the time and the digest varied as
        # scripts/gen_cdx.py varies them (1 line in 8 repeats a digest).
        suffix = "/v%07d" % group
        cols[0] += suffix
        cols[2] += suffix
        d = i - (i % 8 == 7) * 7
        cols[5] = base64.b32encode(hashlib.sha1(d.to_bytes(8, "big")).digest()).decode()
        ts = datetime.datetime.strptime(cols[1][:14], "%Y%m%d%H%M%S")
        cols[1] = (ts + datetime.timedelta(seconds=group % 86400)).strftime("%Y%m%d%H%M%S")
    out.append(" ".join(cols))
    if len(out) >= 100000:
        sys.stdout.write("\n".join(out) + "\n")
        out = []
if out:
    sys.stdout.write("\n".join(out) + "\n")
PY
      } > "$cdx"
      gzip -k -6 "$cdx"
    fi ;;
  *) echo "CORPUS is generated or small-records, not '$corpus'" >&2; exit 2 ;;
esac
[ -s "$cdx" ] || gzip -dk "$cdx.gz"
# t COMMAND...: prints the wall seconds, and keeps the CPU seconds (user + system of every
# process it ran) in $work/last.cpu: `times` in the command substitution's subshell counts
# only that subshell's children (COMMAND may be a shell function; /usr/bin/time could not
# run one).
t() {
  local s=$(date +%s.%N)
  "$@" >/dev/null 2>"$work/last.log"
  local e=$(date +%s.%N)
  times > "$work/last.times"   # in this shell: a pipeline's fork would count no children
  awk 'NR == 2 { split($1, u, /[ms]/); split($2, k, /[ms]/); print u[1] * 60 + u[2] + k[1] * 60 + k[2] }' "$work/last.times" > "$work/last.cpu"
  echo "$e - $s" | bc
}
sed_() { "$SEDIMENT_BIN" --store "$1" backfill-cdx "${@:2}"; }
cat "$cdx" "$cdx.gz" > /dev/null   # page cache, for every contender alike

# The machine is shared: the floor and the bulk loads run RUNS times, interleaved, and keep
# their best time; the normal path (minutes) runs once.
min() { if [ -z "$1" ] || (( $(echo "$2 < $1" | bc -l) )); then echo "$2"; else echo "$1"; fi; }
runs="${RUNS:-3}"
t_floor="" t_bulk="" t_bulk_plain="" c_floor="" c_bulk="" c_bulk_plain=""
for round in $(seq 1 "$runs"); do
  rm -rf "$work"/s-bulk*
  t_floor=$(min "$t_floor" "$(t sh -c "zcat '$cdx.gz' | wc -l")")
  c_floor=$(min "$c_floor" "$(cat "$work/last.cpu")")
  t_bulk=$(min "$t_bulk" "$(t sed_ "$work/s-bulk" --bulk "$cdx.gz")")
  c_bulk=$(min "$c_bulk" "$(cat "$work/last.cpu")")
  cp "$work/last.log" "$work/bulk.log"
  t_bulk_plain=$(min "$t_bulk_plain" "$(t sed_ "$work/s-bulk-plain" --bulk "$cdx")")
  c_bulk_plain=$(min "$c_bulk_plain" "$(cat "$work/last.cpu")")
done
rm -rf "$work"/s-normal*
t_normal=$(t sed_ "$work/s-normal" "$cdx.gz")
c_normal=$(cat "$work/last.cpu")
cp "$work/last.log" "$work/normal.log"
t_normal_plain=$(t sed_ "$work/s-normal-plain" "$cdx")
c_normal_plain=$(cat "$work/last.cpu")

# The stores hold the input's captures, every one (the last round's stores).
cdx_rows() { # FILE [wget]: CDX-11 lines without the URL key, the file's base name
  awk -v wget="${2:-}" '$1 == "CDX" || NF < 11 { next }
    wget { $11 = $10; $10 = $9; $9 = "-" }
    { $1 = ""; n = split($11, p, "/"); $11 = p[n]; print }' "$1" | LC_ALL=C sort
}
cdx_rows "$cdx" "$([ "$corpus" = small-records ] && echo wget)" > "$work/input.captures"
for s in bulk bulk-plain normal normal-plain; do
  "$SEDIMENT_BIN" --store "$work/s-$s" captures --output cdx 2>/dev/null > "$work/$s.cdx"
  cdx_rows "$work/$s.cdx" > "$work/$s.captures"
done
bench_corrupt cdx "$work/bulk.captures"
check_same "captures of the --bulk store (gz) = the input's lines (every column but the URL key)" "$work/bulk.captures" "$work/input.captures"
check_same "captures of the --bulk store (plain) = the input's lines" "$work/bulk-plain.captures" "$work/input.captures"
check_same "captures of the normal store (gz) = the input's lines" "$work/normal.captures" "$work/input.captures"
check_same "captures of the normal store (plain) = the input's lines" "$work/normal-plain.captures" "$work/input.captures"
for s in normal bulk; do
  "$SEDIMENT_BIN" --store "$work/s-$s" export > "$work/export-$s.jsonl" 2>/dev/null
done
check_same "export of the --bulk store = export of the normal store" "$work/export-bulk.jsonl" "$work/export-normal.jsonl"
echo

echo "corpus: $corpus; lines: $n (floor and bulk: best of $runs runs); gz $(($(stat -c %s "$cdx.gz") / 1000000)) MB, plain $(($(stat -c %s "$cdx") / 1000000)) MB; $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
# Wall time (best), lines/s, × the floor's wall time; CPU time (best; user + system), × the
# floor's CPU time (on a loaded machine the steadier ratio).
row() { printf '%-44s %8.2f s %10.0f lines/s %6.2fx floor   %7.2f s CPU %6.2fx floor\n' "$1" "$2" "$(echo "$n / $2" | bc -l)" "$(echo "$2 / $t_floor" | bc -l)" "$3" "$(echo "$3 / $c_floor" | bc -l)"; }
row "zcat | wc -l (floor)" "$t_floor" "$c_floor"
row "backfill-cdx (gz, normal)" "$t_normal" "$c_normal"
row "backfill-cdx --bulk (gz)" "$t_bulk" "$c_bulk"
row "backfill-cdx (plain, normal)" "$t_normal_plain" "$c_normal_plain"
row "backfill-cdx --bulk (plain)" "$t_bulk_plain" "$c_bulk_plain"
tail -1 "$work/bulk.log"
echo "bulk export == normal export: yes (checked above)"
du -sh "$work/s-bulk" | awk '{print "store on disk (bulk): " $1}'
