#!/usr/bin/env bash
# Export/import rates of the store (issue 2) on N generated rows (default 1,000,000),
# with references measured in the same run: reading the file (cat) and parsing every
# line with Python's json module.
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
t() { local s=$(date +%s.%N); "$@"; local e=$(date +%s.%N); echo "$e - $s" | bc; }
rate() { echo "scale=0; $n / $1" | bc; }

t_cat=$(t sh -c "cat '$work/rows.jsonl' > /dev/null")
t_py=$(t python3 -c "
import json,sys
for l in open('$work/rows.jsonl','rb'): json.loads(l)")
t_import=$(t "$SEDIMENT_BIN" --store "$work/store" import-jsonl "$work/rows.jsonl" 2>"$work/import.log")
t_bulk=$(t "$SEDIMENT_BIN" --store "$work/bulk" import-jsonl --bulk "$work/rows.jsonl" 2>"$work/bulk.log")
t_export=$(t sh -c "'$SEDIMENT_BIN' --store '$work/store' export -o '$work/export.jsonl' 2>'$work/export.log'")
t_import2=$(t "$SEDIMENT_BIN" --store "$work/store2" import-jsonl "$work/export.jsonl" 2>"$work/import2.log")
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
printf '%-34s %8s s %12s rows/s\n' "cat (read floor)" "$t_cat" "$(rate "$t_cat")"
printf '%-34s %8s s %12s rows/s\n' "python json.loads per line" "$t_py" "$(rate "$t_py")"
printf '%-34s %8s s %12s rows/s\n' "sediment import-jsonl" "$t_import" "$(rate "$t_import")"
printf '%-34s %8s s %12s rows/s\n' "sediment import-jsonl --bulk" "$t_bulk" "$(rate "$t_bulk")"
printf '%-34s %8s s %12s rows/s\n' "sediment export" "$t_export" "$(rate "$t_export")"
printf '%-34s %8s s %12s rows/s\n' "sediment import-jsonl (re-import)" "$t_import2" "$(rate "$t_import2")"
echo "export → import → export byte-identical: $same; --bulk import exports the same: $same_bulk"
echo "import-jsonl / json.loads (rate): $(echo "scale=2; $t_py / $t_import" | bc), --bulk: $(echo "scale=2; $t_py / $t_bulk" | bc)"
du -sh "$work/store" | awk '{print "store on disk: " $1}'
