#!/usr/bin/env bash
# Writing to Bigtable (issue 16): the same cells written by `sediment import-jsonl` into
# a `bigtable://` store and by Google's `cbt import` from CSV, both against one local
# emulator in the same run (the emulator bounds both), plus `import-warc` of WARCs
# straight into Bigtable next to the same import into RocksDB.
# Checked (scripts/bench-lib.sh; status 1 otherwise): `cbt count` finds every row in both
# tables, and Sediment's table read back (`sediment export`) is the input, every row.
# BENCH_CORRUPT=bigtable alters what was read back on purpose.
#
# Usage: scripts/bench-bigtable.sh [ROWS] [WORKDIR]     (default 100000 generated rows)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/env.sh
. scripts/bench-lib.sh
n="${1:-100000}"
work="${2:-/tmp/sediment-bench-bigtable}"
cargo build --release --quiet
rm -rf "$work" && mkdir -p "$work"
emulator="${SEDIMENT_CBTEMULATOR:-$(command -v cbtemulator || echo /usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator)}"
"$emulator" -host 127.0.0.1 -port 0 > "$work/emulator.log" 2>&1 &
emulator_pid=$!
trap 'kill $emulator_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q "running on" "$work/emulator.log" && break; sleep 0.1; done
export BIGTABLE_EMULATOR_HOST=$(awk '/running on/ {print $NF}' "$work/emulator.log")
t() { local s=$(date +%s.%N); "$@"; local e=$(date +%s.%N); echo "$e - $s" | bc; }
per_s() { echo "scale=0; $1 / $2" | bc; }
cbt_() { cbt -project bench -instance bench "$@"; }

# The rows: generated export lines (f:c, file:size, file:mime, file:cdx: 4 cells a row).
python3 scripts/gen_rows.py "$n" > "$work/rows.jsonl"
cells=$((n * 4))
# The same cells as cbt's CSV: a family row, a qualifier row, one line per row (hex keys:
# cbt reads text), values written as the JSON export has them.
python3 - "$work/rows.jsonl" "$work/rows.csv" <<'PY'
import csv, json, sys
rows = (json.loads(l) for l in open(sys.argv[1]))
with open(sys.argv[2], "w", newline="") as out:
    w = csv.writer(out)
    w.writerow(["", "f", "file", "", ""])
    w.writerow(["", "c", "size", "mime", "cdx"])
    for r in rows:
        w.writerow([r["sha1hex"], json.dumps(r["f:c"], sort_keys=True, separators=(",", ":")),
                    str(r["file:size"]), r["file:mime"],
                    json.dumps(r["file:cdx"], sort_keys=True, separators=(",", ":"))])
PY

"$SEDIMENT_BIN" --store bigtable://bench/bench/viasediment bigtable create > /dev/null
"$SEDIMENT_BIN" --store bigtable://bench/bench/viacbt bigtable create > /dev/null
t_sediment=$(t "$SEDIMENT_BIN" --store bigtable://bench/bench/viasediment import-jsonl "$work/rows.jsonl" 2> "$work/import.log")
t_cbt=$(t sh -c "cbt -project bench -instance bench import viacbt '$work/rows.csv' batch-size=500 workers=2 > '$work/cbt.log' 2>&1")
rows_sediment=$(cbt_ count viasediment)
rows_cbt=$(cbt_ count viacbt)
# Both wrote every row (status 1 otherwise).
check_equal "rows written by sediment" "$rows_sediment" "$n"
check_equal "rows written by cbt import" "$rows_cbt" "$n"
# What Sediment wrote, read back from the emulator, is the input, every cell.
"$SEDIMENT_BIN" --store bigtable://bench/bench/viasediment export 2>/dev/null | LC_ALL=C sort > "$work/readback.jsonl"
LC_ALL=C sort "$work/rows.jsonl" > "$work/rows.sorted"
bench_corrupt bigtable "$work/readback.jsonl"
check_same "rows read back from Bigtable = the input rows (sorted)" "$work/readback.jsonl" "$work/rows.sorted"

# WARCs straight into Bigtable, next to RocksDB.
warcs=(fixtures/crawl/crawl1.warc.gz fixtures/crawl/crawl2.warc.gz)
for w in ../shared/corpus/pywb/sample_archive/warcs/*.warc.gz; do [ -f "$w" ] && warcs+=("$w"); done
"$SEDIMENT_BIN" --store bigtable://bench/bench/warcs bigtable create > /dev/null
t_warc_bt=$(t "$SEDIMENT_BIN" --store bigtable://bench/bench/warcs import-warc "${warcs[@]}" 2> "$work/warc-bt.log")
t_warc_rocks=$(t "$SEDIMENT_BIN" --store "$work/rocks" import-warc "${warcs[@]}" 2> "$work/warc-rocks.log")

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); emulator $BIGTABLE_EMULATOR_HOST"
echo "$n rows, $cells cells (rows counted by cbt: sediment $rows_sediment, cbt $rows_cbt)"
printf '%-42s %8s s %9s rows/s %9s cells/s\n' "sediment import-jsonl -> Bigtable" "$t_sediment" "$(per_s $n "$t_sediment")" "$(per_s $cells "$t_sediment")"
printf '%-42s %8s s %9s rows/s %9s cells/s\n' "cbt import (CSV, 2 workers)" "$t_cbt" "$(per_s $n "$t_cbt")" "$(per_s $cells "$t_cbt")"
echo "ratio sediment/cbt (rate): $(echo "scale=2; $t_cbt / $t_sediment" | bc)"
printf '%-42s %8s s\n' "import-warc ${#warcs[@]} WARCs -> Bigtable" "$t_warc_bt"
printf '%-42s %8s s\n' "import-warc ${#warcs[@]} WARCs -> RocksDB" "$t_warc_rocks"
