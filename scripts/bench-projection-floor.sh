#!/usr/bin/env bash
# How far `project summary` and `project crawl` are from SQLite itself (issue 15): each
# projection of an HTML-heavy crawl, then the same rows inserted again into an empty
# database of the same schema by examples/sqlite_floor.rs (rows held in memory, prepared
# statements, one transaction, indexes after the rows). Best of RUNS (default 3),
# interleaved; prints both times and their ratio. Checked (scripts/bench-lib.sh; status 1
# otherwise): the floor's database holds as many rows as the projection's in every table
# it copied. BENCH_CORRUPT=projection-floor alters the floor's counts on purpose.
#
# Usage: scripts/bench-projection-floor.sh [WARC] [WORKDIR]
#   WARC     default /work/bench-data/html.warc.gz (scripts/make-bench-warc.sh makes it)
#   WORKDIR  default /tmp/sediment-bench-projection-floor
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
warc="${1:-/work/bench-data/html.warc.gz}"
work="${2:-/tmp/sediment-bench-projection-floor}"
runs="${RUNS:-3}"
. "$repo/scripts/env.sh"
. "$repo/scripts/bench-lib.sh"
[[ -f "$warc" ]] || { echo "no WARC at $warc (scripts/make-bench-warc.sh makes one)" >&2; exit 2; }
(cd "$repo" && cargo build --release --quiet --example sqlite_floor && cargo build --release --quiet)
bin="$CARGO_TARGET_DIR/release/sediment"
floor="$CARGO_TARGET_DIR/release/examples/sqlite_floor"
mkdir -p "$work"
if [[ ! -d "$work/store" ]]; then
    "$bin" --store "$work/store" import-warc "$warc" >/dev/null 2>"$work/import.log"
fi
warc_dir="$(dirname "$warc")"

seconds() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>>"$work/last.log"; e=$(date +%s.%N); echo "$e - $s" | bc; }
min() { if [[ -z "$1" ]] || (($(echo "$2 < $1" | bc -l))); then echo "$2"; else echo "$1"; fi; }

for projection in summary crawl; do
    best_projection="" best_floor=""
    for _ in $(seq 1 "$runs"); do
        rm -f "$work/$projection.db"*
        best_projection=$(min "$best_projection" \
            "$(seconds "$bin" --store "$work/store" project "$projection" -o "$work/$projection.db" --warc-dir "$warc_dir")")
        line=$("$floor" "$work/$projection.db" "$work/$projection-floor.db" 2>"$work/$projection-floor-tables.log")
        best_floor=$(min "$best_floor" "$(echo "$line" | awk '{print $NF}')")
    done
    # The floor inserted every row of every table it copied (status 1 otherwise).
    sed -n 's/^\([A-Za-z0-9_]*\): [0-9]* rows, .*/\1/p' "$work/$projection-floor-tables.log" > "$work/$projection.tables"
    [[ -s "$work/$projection.tables" ]] || check_fail "$projection: the floor copied no table"
    for db in "$projection" "$projection-floor"; do
        while read -r table; do
            echo "$table $(sqlite3 "$work/$db.db" "SELECT count(*) FROM \"$table\"")"
        done < "$work/$projection.tables" > "$work/$db.counts"
    done
    bench_corrupt projection-floor "$work/$projection-floor.counts"
    check_same "$projection: rows per table, the floor's database = the projection's" \
        "$work/$projection-floor.counts" "$work/$projection.counts"
    rows=$(echo "$line" | awk '{print $2}')
    printf '%-8s rows %9s  projection %7.2f s  floor %6.2f s  ratio %5.2f\n' "$projection" "$rows" \
        "$best_projection" "$best_floor" "$(echo "$best_projection / $best_floor" | bc -l)"
done
