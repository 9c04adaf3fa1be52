#!/usr/bin/env bash
# Peak memory (RSS) and time of the projections as the archive grows (issue 18).
#
# Builds synthetic stores of N captures each (CDX lines made from real ones by
# scripts/gen_cdx.py: distinct URLs, 1 in 8 digests repeated, no WARC bodies), loaded with
# `backfill-cdx --bulk`, then runs every projection on each with /usr/bin/time -v and prints
# one line per (projection, size): peak RSS, wall time, µs per capture, and the growth
# ratios against the smallest size. Not a test: run it by hand; each run is bounded by
# TIMEOUT seconds (default 900) and a projection that exceeds it is reported as such.
#
# Usage: scripts/bench-projection-memory.sh [WORKDIR] [SIZES] [PROJECTIONS] [EXTRA ARGS]
#   WORKDIR      default /tmp/sediment-bench-projection-memory (stores are kept and reused)
#   SIZES        default "100000 1000000" (add 3000000 for the 3 M row)
#   PROJECTIONS  default "crawl summary locust jdbm export export-captures" (the last two:
#                JSON lines to /dev/null, Parquet files)
#   EXTRA ARGS   passed to every projection, e.g. "--memory-mb 256"
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-/tmp/sediment-bench-projection-memory}"
sizes="${2:-100000 1000000}"
projections="${3:-crawl summary locust jdbm export export-captures}"
extra="${4:-}"
timeout_s="${TIMEOUT:-900}"
# The shared target directory (scripts/env.sh): building elsewhere compiles RocksDB again.
. "$repo/scripts/env.sh"

(cd "$repo" && cargo build --release --quiet)
bin="$CARGO_TARGET_DIR/release/sediment"
mkdir -p "$work"

for n in $sizes; do
    if [[ ! -d "$work/store-$n" ]]; then
        python3 "$repo/scripts/gen_cdx.py" "$n" | LC_ALL=C sort >"$work/cdx-$n.cdx"
        "$bin" --store "$work/store-$n" backfill-cdx --bulk "$work/cdx-$n.cdx" >/dev/null 2>"$work/bulk-$n.log"
        rm -f "$work/cdx-$n.cdx"
    fi
done

printf '%-10s %10s %10s %9s %10s %8s %8s\n' projection captures rss_mb seconds us/capture rss_x time_x
for p in $projections; do
    base_rss="" base_time="" base_n=""
    for n in $sizes; do
        out="$work/out-$p-$n"
        rm -rf "$out" "$out".db*
        case "$p" in
            crawl | summary) command=(project "$p" -o "$out.db") ;;
            export) command=(export) ;;
            export-captures) command=(export-captures --format parquet -o "$out") ;;
            *) command=(project "$p" -o "$out") ;;
        esac
        status=0
        # shellcheck disable=SC2086
        timeout "$timeout_s" /usr/bin/time -v "$bin" --store "$work/store-$n" "${command[@]}" $extra \
            >/dev/null 2>"$work/time-$p-$n.log" || status=$?
        # 3 = done with problems: these stores have no WARC files, so every body is missing.
        if [[ $status -ne 0 && $status -ne 3 ]]; then
            printf '%-10s %10s %s\n' "$p" "$n" "failed or timed out (status $status, see $work/time-$p-$n.log)"
            continue
        fi
        rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time-$p-$n.log")
        wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time-$p-$n.log")
        secs=$(python3 -c "import sys; p=sys.argv[1].split(':'); print(sum(float(x)*60**i for i,x in enumerate(reversed(p))))" "$wall")
        rss_mb=$(python3 -c "print(round($rss_kb/1024))")
        us=$(python3 -c "print(round($secs*1e6/$n, 1))")
        if [[ -z "$base_rss" ]]; then
            base_rss=$rss_kb base_time=$secs base_n=$n
            rss_x="1.00" time_x="1.00"
        else
            rss_x=$(python3 -c "print('%.2f' % ($rss_kb/$base_rss))")
            time_x=$(python3 -c "print('%.2f' % (($secs/$n)/($base_time/$base_n)))")
        fi
        printf '%-10s %10s %10s %9.1f %10s %8s %8s\n' "$p" "$n" "$rss_mb" "$secs" "$us" "$rss_x" "$time_x"
        rm -rf "$out" "$out".db*
    done
done
echo "rss_x: peak RSS / peak RSS at the smallest size; time_x: time per capture / time per capture at the smallest size"
