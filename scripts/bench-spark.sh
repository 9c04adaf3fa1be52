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
# MASTER=standalone runs the application on a standalone Spark cluster instead of local[2]:
# a master and two one-core workers on 127.0.0.1 (scripts/spark/cluster.sh, WORKER_MEMORY
# each, default 2g), started once before the rounds (its start is timed and reported
# apart), `spark-submit --master spark://127.0.0.1:PORT`, stopped on exit whatever happens;
# MASTER="local standalone" runs both in each round. Each Spark store's export is checked
# against the single-process store's.
# WARCS=GLOB (relative to BENCH_DIR) takes those files as the corpus instead, e.g. the
# synthetic page crawl of scripts/bench-scale-pages.sh: `WARCS='SCALE-PAGES-*.warc.gz'
# scripts/bench-spark.sh DIR/warcs` (issue 36's 1 M-page crawl, ~5 GB in 5 files).
# SEDIMENT_BIN=PATH measures that binary (no build).
# Usage: [MASTER=local|standalone|"local standalone"] scripts/bench-spark.sh [BENCH_DIR [FILES COPIES]]
#        (default /work/bench-data, MASTER=local)
set -euo pipefail
cd "$(dirname "$0")/.."
given_bin="${SEDIMENT_BIN:-}"
. scripts/env.sh
. scripts/bench-lib.sh
dir="${1:-/work/bench-data}"
[ -n "${WARCS:-}" ] || [ -f "$dir/base.warc.gz" ] || scripts/make-bench-warc.sh "$dir"
work=$(mktemp -d /work/bench-spark.XXXXXX)
masters="${MASTER:-local}"
for m in $masters; do
  case "$m" in local|standalone) ;; *) echo "MASTER: local, standalone or both, not $m" >&2; exit 2 ;; esac
done
cleanup() {
  if [ -f "$work/cluster/master-url" ] || ls "$work"/cluster/*.pid >/dev/null 2>&1; then
    scripts/spark/cluster.sh stop "$work/cluster"
  fi
  rm -rf "$work"
}
trap cleanup EXIT
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
# shellcheck disable=SC2086 # WARCS is a glob
files=$(ls "$dir"/${WARCS:-bench-*.warc.gz})
if [ -n "$given_bin" ]; then
  SEDIMENT_BIN=$(realpath "$given_bin")   # a binary given is measured as it is, not built
else
  cargo build --release --quiet
fi
mb=$(stat -c %s $files | awk '{s += $1} END {print s / 1e6}')   # hard-linked copies count too
cat $files > /dev/null   # page cache, for both contenders alike
export SPARK_LOCAL_IP=127.0.0.1

now() { date +%s.%N; }
min() { if [ -z "$1" ] || (( $(echo "$2 < $1" | bc -l) )); then echo "$2"; else echo "$1"; fi; }
jvm_options="${SPARK_JAVA_OPTIONS--XX:TieredStopAtLevel=1 -XX:+UseSerialGC}"
cluster_start=""
if [[ " $masters " == *" standalone "* ]]; then
  worker_memory="${WORKER_MEMORY:-2g}"
  s=$(now)
  url=$(scripts/spark/cluster.sh start "$work/cluster" 2 1 "$worker_memory")
  cluster_start=$(echo "$(now) - $s" | bc -l)
  echo "standalone cluster $url: master and 2 workers (1 core, $worker_memory each) registered in $(printf %.2f "$cluster_start") s"
fi
# A short-lived driver: C1 only (no C2 compiler threads competing for the two cores) and the
# serial collector; the standalone executors too. SPARK_JAVA_OPTIONS= measures with the
# JVM's defaults.
submit() {
  local m=$1 store=$2 log=$3
  local args=(--conf spark.ui.enabled=false --conf spark.driver.host=127.0.0.1
    --conf spark.driver.bindAddress=127.0.0.1 --conf spark.log.level=WARN
    --driver-java-options "$jvm_options")
  if [ "$m" = local ]; then
    args+=(--master 'local[2]' --driver-memory 4g)
  else
    args+=(--master "$url" --executor-memory "$worker_memory"
      --conf "spark.executor.extraJavaOptions=$jvm_options")
  fi
  spark-submit "${args[@]}" scripts/spark/sediment_spark.py import-warc --store "$store" \
    --ranges 2 $files >"$log" 2>&1
}
declare -A best_work best_startup best_total
best_single=""
runs="${RUNS:-3}"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq 1 "$runs"); do
  for m in $masters; do rm -rf "$work/spark-$m"; done
  rm -rf "$work/single"
  s_single=$(now); "$SEDIMENT_BIN" --store "$work/single" import-warc --threads 2 $files 2>"$work/single.log"; e_single=$(now)
  best_single=$(min "$best_single" "$(echo "$e_single - $s_single" | bc -l)")
  report="round $round: single $(echo "$e_single - $s_single" | bc -l | cut -c1-5) s"
  for m in $masters; do
    s=$(now)
    submit "$m" "$work/spark-$m" "$work/spark-$m.log" || { tail -n 30 "$work/spark-$m.log" >&2; exit 1; }
    e=$(now)
    line=$(grep '^sediment-spark import-warc:' "$work/spark-$m.log")
    startup=$(echo "$line" | sed -E 's/.*; start-up ([0-9.]+) s.*/\1/')
    worked=$(echo "$line" | sed -E 's/.*total after start-up ([0-9.]+) s.*/\1/')
    report+=", $m: work $worked s, start-up $startup s, wall $(echo "$e - $s" | bc -l | cut -c1-5) s"
    if [ -z "${best_work[$m]:-}" ] || (( $(echo "$worked < ${best_work[$m]}" | bc -l) )); then
      cp "$work/spark-$m.log" "$work/spark-$m-best.log"
    fi
    best_work[$m]=$(min "${best_work[$m]:-}" "$worked")
    best_startup[$m]=$(min "${best_startup[$m]:-}" "$startup")
    best_total[$m]=$(min "${best_total[$m]:-}" "$(echo "$e - $s" | bc -l)")
  done
  echo "$report; load $(cut -d' ' -f1-3 /proc/loadavg)"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

"$SEDIMENT_BIN" --store "$work/single" export > "$work/single.jsonl" 2>/dev/null
"$SEDIMENT_BIN" --store "$work/single" captures > "$work/single.captures" 2>/dev/null
bench_corrupt spark "$work/single.jsonl"
for m in $masters; do
  "$SEDIMENT_BIN" --store "$work/spark-$m" export > "$work/spark-$m.jsonl" 2>/dev/null
  "$SEDIMENT_BIN" --store "$work/spark-$m" captures > "$work/spark-$m.captures" 2>/dev/null
  check_same "export of the single-process store = export of the Spark store ($m)" "$work/single.jsonl" "$work/spark-$m.jsonl"
  check_same "captures of the single-process store = captures of the Spark store ($m)" "$work/single.captures" "$work/spark-$m.captures"
done

echo "corpus: $(echo $files | wc -w) files, ${mb} MB gzip-per-record WARC; best of $runs runs; $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load average (1, 5, 15 min) $load_before before, $load_after after"
printf '%-58s %7.2f s %7.1f MB/s\n' "sediment import-warc --threads 2" "$best_single" "$(echo "$mb / $best_single" | bc -l)"
for m in $masters; do
  if [ "$m" = local ]; then name="Spark local[2]"; else name="Spark standalone (2 workers x 1 core)"; fi
  echo "== $name"
  line=$(grep '^sediment-spark import-warc:' "$work/spark-$m-best.log")
  printf '%-58s %7.2f s %7.1f MB/s\n' "work (after start-up)" "${best_work[$m]}" "$(echo "$mb / ${best_work[$m]}" | bc -l)"
  printf '%-58s %7.2f s\n' "start-up (JVMs, SparkContext, executors, Python workers)" "${best_startup[$m]}"
  printf '%-58s %7.2f s\n' "spark-submit wall time, best" "${best_total[$m]}"
  [ "$m" = standalone ] && printf '%-58s %7.2f s\n' "cluster start (not in the above)" "$cluster_start"
  echo "wall time, start-up included / single process: $(echo "scale=2; ${best_total[$m]} / $best_single" | bc -l)  (the headline; goal <= 1.5)"
  echo "work after start-up / single process: $(echo "scale=2; ${best_work[$m]} / $best_single" | bc -l)"
  field() { echo "$line" | sed -E "s/.* $1 ([0-9.]+).*/\1/"; }
  captures=$(field captures); record_bytes=$(field record_bytes); sst_bytes=$(field sst_bytes)
  ingest=$(echo "$line" | sed -E 's/.*ingest ([0-9.]+) s.*/\1/')
  extract=$(echo "$line" | sed -E 's/.*extract ([0-9.]+) s.*/\1/')
  shuffle=$(echo "$line" | sed -E 's/.*shuffle and write-sst ([0-9.]+) s.*/\1/')
  echo "best run: $captures captures; extract ${extract} s, shuffle + write-sst ${shuffle} s, ingest-sst ${ingest} s; $(echo "$line" | grep -o 'start-up [^)]*)')"
  echo "shuffle volume: $record_bytes bytes of record lines, $(echo "scale=1; $record_bytes / $captures" | bc -l) bytes per capture; SST files $sst_bytes bytes, $(echo "scale=1; $sst_bytes / $captures" | bc -l) per capture"
  echo "ingest-sst: $(echo "scale=0; $captures / $ingest" | bc -l) captures/s, $(echo "scale=1; $sst_bytes / 1000000 / $ingest" | bc -l) MB/s of SST"
done
tail -1 "$work/single.log"
