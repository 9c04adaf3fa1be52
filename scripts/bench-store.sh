#!/usr/bin/env bash
# Export/import rates of the store (issue 2) on N generated rows (default 1,000,000),
# with references measured in the same run: reading the file (cat) and parsing every
# line with Python's json module. Wall time and CPU time (user + system of every process)
# of each.
# Checked before any figure is printed (scripts/bench-lib.sh; status 1 otherwise): the
# export holds the input rows, every one and nothing else (sorted lines compared),
# export → import → export is byte-identical, and the --bulk
# import exports the same bytes. BENCH_CORRUPT=store alters the re-export on purpose.
# Usage: scripts/bench-store.sh [N] [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
. scripts/bench-lib.sh
n="${1:-1000000}"
work="${2:-/tmp/sediment-bench-store}"
cargo build --release --quiet
rm -rf "$work" && mkdir -p "$work"
python3 scripts/gen_rows.py "$n" > "$work/rows.jsonl"
bytes=$(stat -c %s "$work/rows.jsonl")
# t COMMAND...: prints the wall seconds, and keeps the CPU seconds (user + system of every
# process it ran; `times` in the command substitution's subshell counts only its children)
# in $work/last.cpu: on a shared machine the steadier figure.
t() {
  local s=$(date +%s.%N); "$@"; local e=$(date +%s.%N)
  times > "$work/last.times"   # in this shell: a pipeline's fork would count no children
  awk 'NR == 2 { split($1, u, /[ms]/); split($2, k, /[ms]/); print u[1] * 60 + u[2] + k[1] * 60 + k[2] }' "$work/last.times" > "$work/last.cpu"
  echo "$e - $s" | bc
}
cpu() { cat "$work/last.cpu"; }
rate() { awk -v n="$n" -v t="$1" 'BEGIN { if (t > 0) printf "%d\n", n / t; else print "-" }'; }

t_cat=$(t sh -c "cat '$work/rows.jsonl' > /dev/null")
c_cat=$(cpu)
t_py=$(t python3 -c "
import json,sys
for l in open('$work/rows.jsonl','rb'): json.loads(l)")
c_py=$(cpu)
t_import=$(t "$SEDIMENT_BIN" --store "$work/store" import-jsonl "$work/rows.jsonl" 2>"$work/import.log")
c_import=$(cpu)
t_bulk=$(t "$SEDIMENT_BIN" --store "$work/bulk" import-jsonl --bulk "$work/rows.jsonl" 2>"$work/bulk.log")
c_bulk=$(cpu)
t_export=$(t sh -c "'$SEDIMENT_BIN' --store '$work/store' export -o '$work/export.jsonl' 2>'$work/export.log'")
c_export=$(cpu)
t_import2=$(t "$SEDIMENT_BIN" --store "$work/store2" import-jsonl "$work/export.jsonl" 2>"$work/import2.log")
c_import2=$(cpu)
"$SEDIMENT_BIN" --store "$work/store2" export -o "$work/export2.jsonl" 2>/dev/null
"$SEDIMENT_BIN" --store "$work/bulk" export -o "$work/export-bulk.jsonl" 2>/dev/null
bench_corrupt store "$work/export2.jsonl"
check_equal "rows exported" "$(wc -l < "$work/export.jsonl")" "$n"
# gen_rows.py writes the export's own spelling, so the export is the input, in key order.
LC_ALL=C sort "$work/rows.jsonl" > "$work/rows.sorted"
LC_ALL=C sort "$work/export.jsonl" > "$work/export.sorted"
check_same "export = the input rows (sorted)" "$work/export.sorted" "$work/rows.sorted"
check_same "export → import → export" "$work/export2.jsonl" "$work/export.jsonl"
check_same "export of the --bulk import = export of the normal import" "$work/export-bulk.jsonl" "$work/export.jsonl"
same=yes same_bulk=yes

echo "rows: $n ($((bytes / 1000000)) MB of JSON lines), machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
printf '%-34s %8.2f s %9s rows/s %7.2f s CPU %9s rows/CPU s\n' "cat (read floor)" "$t_cat" "$(rate "$t_cat")" "$c_cat" "$(rate "$c_cat")"
printf '%-34s %8.2f s %9s rows/s %7.2f s CPU %9s rows/CPU s\n' "python json.loads per line" "$t_py" "$(rate "$t_py")" "$c_py" "$(rate "$c_py")"
printf '%-34s %8.2f s %9s rows/s %7.2f s CPU %9s rows/CPU s\n' "sediment import-jsonl" "$t_import" "$(rate "$t_import")" "$c_import" "$(rate "$c_import")"
printf '%-34s %8.2f s %9s rows/s %7.2f s CPU %9s rows/CPU s\n' "sediment import-jsonl --bulk" "$t_bulk" "$(rate "$t_bulk")" "$c_bulk" "$(rate "$c_bulk")"
printf '%-34s %8.2f s %9s rows/s %7.2f s CPU %9s rows/CPU s\n' "sediment export" "$t_export" "$(rate "$t_export")" "$c_export" "$(rate "$c_export")"
printf '%-34s %8.2f s %9s rows/s %7.2f s CPU %9s rows/CPU s\n' "sediment import-jsonl (re-import)" "$t_import2" "$(rate "$t_import2")" "$c_import2" "$(rate "$c_import2")"
echo "export → import → export byte-identical: $same; --bulk import exports the same: $same_bulk"
echo "import-jsonl / json.loads (rate): $(echo "scale=2; $t_py / $t_import" | bc), --bulk: $(echo "scale=2; $t_py / $t_bulk" | bc)"
echo "by CPU time: import-jsonl / json.loads: $(echo "scale=2; $c_py / $c_import" | bc), --bulk: $(echo "scale=2; $c_py / $c_bulk" | bc)"
du -sh "$work/store" | awk '{print "store on disk: " $1}'
