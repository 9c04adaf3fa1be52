#!/usr/bin/env bash
# The Spark application against the single-process import (issue 17), same WARC corpus, same
# run: `sediment import-warc --threads 2` and `spark-submit --master local[2]
# scripts/spark/sediment_spark.py import-warc`, each into an empty store, best of RUNS
# (default 3), interleaved. Spark's start-up (JVM, SparkContext, the executors' Python
# workers) is part of the headline: the ratio is spark-submit's whole wall time (start-up
# included) / single-process time; work after start-up / single-process time is printed too.
# Also measured: the shuffle volume per capture (record lines), the SST bytes and the
# ingest-sst time. Checked (scripts/bench-lib.sh; status 1 otherwise): the exports and the
# capture lists of both stores are byte for byte the same.
# BENCH_CORRUPT=spark alters the single-process export on purpose, to show the check failing.
# The corpus: BENCH_DIR/bench-*.warc.gz (scripts/make-bench-warc.sh's), or, given FILES and
# COPIES, FILES files made of COPIES copies each of BENCH_DIR/base.warc.gz (hard links when
# COPIES is 1): `10 1` is ten 53 MB files, `4 5` four 267 MB ones, closer to the 1 GB WARC
# files of production crawls (Spark's cost per task weighs less on larger files).
# Usage: scripts/bench-spark.sh [BENCH_DIR [FILES COPIES]]   (default /work/bench-data)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
. scripts/bench-lib.sh
dir="${1:-/work/bench-data}"
[ -f "$dir/base.warc.gz" ] || scripts/make-bench-warc.sh "$dir"
work=$(mktemp -d /work/bench-spark.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ -n "${3:-}" ]; then
  mkdir "$work/corpus"
  for i in $(seq -w 1 "$2"); do
    if [ "$3" = 1 ]; then
      ln "$dir/base.warc.gz" "$work/corpus/bench-$i.warc.gz" 2>/dev/null || cp "$dir/base.warc.gz" "$work/corpus/bench-$i.warc.gz"
    else
      for _ in $(seq 1 "$3"); do cat "$dir/base.warc.gz"; done > "$work/corpus/bench-$i.warc.gz"
    fi
  done
  dir="$work/corpus"
fi
files=$(ls "$dir"/bench-*.warc.gz)
cargo build --release --quiet
mb=$(stat -c %s $files | awk '{s += $1} END {print s / 1e6}')   # hard-linked copies count too
cat $files > /dev/null   # page cache, for both contenders alike
export SPARK_LOCAL_IP=127.0.0.1

now() { date +%s.%N; }
best_single="" ; best_work="" ; best_startup="" ; best_total=""
min() { if [ -z "$1" ] || (( $(echo "$2 < $1" | bc -l) )); then echo "$2"; else echo "$1"; fi; }
runs="${RUNS:-3}"
for round in $(seq 1 "$runs"); do
  rm -rf "$work/single" "$work/spark"
  s_single=$(now); "$SEDIMENT_BIN" --store "$work/single" import-warc --threads 2 $files 2>"$work/single.log"; e_single=$(now)
  best_single=$(min "$best_single" "$(echo "$e_single - $s_single" | bc -l)")
  s=$(now)
  # A short-lived local driver: C1 only (no C2 compiler threads competing for the two cores)
  # and the serial collector. SPARK_JAVA_OPTIONS= measures with the JVM's defaults.
  spark-submit --master 'local[2]' --conf spark.ui.enabled=false --conf spark.driver.host=127.0.0.1 \
    --conf spark.driver.bindAddress=127.0.0.1 --conf spark.log.level=WARN --driver-memory 4g \
    --driver-java-options "${SPARK_JAVA_OPTIONS--XX:TieredStopAtLevel=1 -XX:+UseSerialGC}" \
    scripts/spark/sediment_spark.py import-warc --store "$work/spark" --ranges 2 $files \
    >"$work/spark.log" 2>&1
  e=$(now)
  line=$(grep '^sediment-spark import-warc:' "$work/spark.log")
  startup=$(echo "$line" | sed -E 's/.*; start-up ([0-9.]+) s.*/\1/')
  worked=$(echo "$line" | sed -E 's/.*total after start-up ([0-9.]+) s.*/\1/')
  echo "round $round: single $(echo "$e_single - $s_single" | bc -l | cut -c1-5) s, Spark work $worked s, start-up $startup s"
  if [ -z "$best_work" ] || (( $(echo "$worked < $best_work" | bc -l) )); then
    cp "$work/spark.log" "$work/spark-best.log"
  fi
  best_work=$(min "$best_work" "$worked")
  best_startup=$(min "$best_startup" "$startup")
  best_total=$(min "$best_total" "$(echo "$e - $s" | bc -l)")
done

"$SEDIMENT_BIN" --store "$work/single" export > "$work/single.jsonl" 2>/dev/null
"$SEDIMENT_BIN" --store "$work/spark" export > "$work/spark.jsonl" 2>/dev/null
"$SEDIMENT_BIN" --store "$work/single" captures > "$work/single.captures" 2>/dev/null
"$SEDIMENT_BIN" --store "$work/spark" captures > "$work/spark.captures" 2>/dev/null
bench_corrupt spark "$work/single.jsonl"
check_same "export of the single-process store = export of the Spark store" "$work/single.jsonl" "$work/spark.jsonl"
check_same "captures of the single-process store = captures of the Spark store" "$work/single.captures" "$work/spark.captures"
line=$(grep '^sediment-spark import-warc:' "$work/spark-best.log")
field() { echo "$line" | sed -E "s/.* $1 ([0-9.]+).*/\1/"; }
captures=$(field captures); record_bytes=$(field record_bytes); sst_bytes=$(field sst_bytes)
ingest=$(echo "$line" | sed -E 's/.*ingest ([0-9.]+) s.*/\1/')
extract=$(echo "$line" | sed -E 's/.*extract ([0-9.]+) s.*/\1/')
shuffle=$(echo "$line" | sed -E 's/.*shuffle and write-sst ([0-9.]+) s.*/\1/')

echo "corpus: $(echo $files | wc -w) files, ${mb} MB gzip-per-record WARC, $captures captures; best of $runs runs; $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
printf '%-58s %7.2f s %7.1f MB/s\n' "sediment import-warc --threads 2" "$best_single" "$(echo "$mb / $best_single" | bc -l)"
printf '%-58s %7.2f s %7.1f MB/s\n' "Spark local[2], work (after start-up)" "$best_work" "$(echo "$mb / $best_work" | bc -l)"
printf '%-58s %7.2f s\n' "Spark start-up (JVM, SparkContext, Python workers), best" "$best_startup"
printf '%-58s %7.2f s\n' "spark-submit wall time, best" "$best_total"
echo "Spark wall time, start-up included / single process: $(echo "scale=2; $best_total / $best_single" | bc -l)  (the headline; goal <= 1.5)"
echo "Spark work after start-up / single process: $(echo "scale=2; $best_work / $best_single" | bc -l)"
echo "best run: extract ${extract} s, shuffle + write-sst ${shuffle} s, ingest-sst ${ingest} s; $(echo "$line" | grep -o 'start-up [^)]*)')"
echo "shuffle volume: $record_bytes bytes of record lines, $(echo "scale=1; $record_bytes / $captures" | bc -l) bytes per capture; SST files $sst_bytes bytes, $(echo "scale=1; $sst_bytes / $captures" | bc -l) per capture"
echo "ingest-sst: $(echo "scale=0; $captures / $ingest" | bc -l) captures/s, $(echo "scale=1; $sst_bytes / 1000000 / $ingest" | bc -l) MB/s of SST"
tail -1 "$work/single.log"
