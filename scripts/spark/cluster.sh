#!/usr/bin/env bash
# A standalone Spark cluster on this machine, for the Spark application's tests and
# benchmark (scripts/bench-spark.sh MASTER=standalone, tests/spark.rs): one master and
# WORKERS workers on 127.0.0.1, made from the Spark that pyspark's package ships (its
# bin/spark-class; no separate download). Every port is chosen by the system (port 0) and
# read back from the daemons' logs, so runs side by side do not collide; the master's REST
# submission server is off. Work, scratch and log directories are under DIR.
#
#   scripts/spark/cluster.sh start DIR [WORKERS [CORES [MEMORY]]]   (default 2 1 1g)
#       prints the master's URL (spark://127.0.0.1:PORT) once every worker is registered
#       (the master's /json lists it ALIVE); DIR/master-url and DIR/master-json-url too.
#   scripts/spark/cluster.sh stop DIR
#       stops the daemons, their executors and the executors' Python workers (each daemon
#       is the leader of its own process group).
#
# SPARK_DAEMON_JAVA_OPTS (default: C1 only, serial collector: short-lived daemons on two
# cores) and SPARK_CLUSTER_TIMEOUT (seconds to wait for the workers, default 180) are read.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
. "$here/scripts/env.sh"
# The executors find the sediment binary as on a real cluster: shipped with --files, on
# their PATH, or at the driver's path (the application passes it), not through this variable.
unset SEDIMENT_BIN

usage() { echo "usage: $0 start DIR [WORKERS [CORES [MEMORY]]] | stop DIR" >&2; exit 2; }
[ $# -ge 2 ] || usage
action=$1 dir=$2

stop() {
  local pidfile pid
  for pidfile in "$dir"/*.pid; do
    [ -e "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill -TERM -- "-$pid" 2>/dev/null || true
  done
  for _ in $(seq 1 50); do
    local alive=0
    for pidfile in "$dir"/*.pid; do
      [ -e "$pidfile" ] || continue
      kill -0 -- "-$(cat "$pidfile")" 2>/dev/null && alive=1
    done
    [ "$alive" = 0 ] && break
    sleep 0.2
  done
  for pidfile in "$dir"/*.pid; do
    [ -e "$pidfile" ] || continue
    kill -KILL -- "-$(cat "$pidfile")" 2>/dev/null || true
    rm -f "$pidfile"
  done
}

# The port a daemon's log says it bound: the first line matching PATTERN, its last number.
logged_port() {
  local log=$1 pattern=$2 deadline=$3
  while [ "$(date +%s)" -lt "$deadline" ]; do
    local line
    line=$(grep -m1 -E "$pattern" "$log" 2>/dev/null || true)
    if [ -n "$line" ]; then
      echo "$line" | grep -oE '[0-9]+' | tail -n 1
      return 0
    fi
    sleep 0.2
  done
  echo "spark cluster: no '$pattern' in $log within the time allowed:" >&2
  tail -n 20 "$log" >&2
  return 1
}

case "$action" in
  stop) stop; exit 0 ;;
  start) ;;
  *) usage ;;
esac

workers=${3:-2} cores=${4:-1} memory=${5:-1g}
spark_home=$(python3 -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')
spark_class="$spark_home/bin/spark-class"
[ -x "$spark_class" ] || { echo "spark cluster: no $spark_class (pip install pyspark)" >&2; exit 1; }
mkdir -p "$dir/logs" "$dir/conf" "$dir/local"
export SPARK_HOME="$spark_home" SPARK_CONF_DIR="$dir/conf" SPARK_LOG_DIR="$dir/logs"
export SPARK_LOCAL_IP=127.0.0.1 SPARK_LOCAL_DIRS="$dir/local"
export SPARK_DAEMON_JAVA_OPTS="${SPARK_DAEMON_JAVA_OPTS--XX:TieredStopAtLevel=1 -XX:+UseSerialGC}"
export SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false"
deadline=$(( $(date +%s) + ${SPARK_CLUSTER_TIMEOUT:-180} ))
# Whatever fails from here on leaves no daemon behind.
trap 'status=$?; [ $status = 0 ] || stop; exit $status' EXIT

setsid "$spark_class" org.apache.spark.deploy.master.Master --host 127.0.0.1 --port 0 \
  --webui-port 0 >"$dir/logs/master.out" 2>&1 </dev/null &
echo $! >"$dir/master.pid"
port=$(logged_port "$dir/logs/master.out" 'Starting Spark master at spark://' "$deadline")
ui=$(logged_port "$dir/logs/master.out" "Bound MasterWebUI to|MasterWebUI.* started at" "$deadline")
url="spark://127.0.0.1:$port"
for i in $(seq 1 "$workers"); do
  mkdir -p "$dir/work$i"
  setsid "$spark_class" org.apache.spark.deploy.worker.Worker "$url" --host 127.0.0.1 --port 0 \
    --webui-port 0 --cores "$cores" --memory "$memory" --work-dir "$dir/work$i" \
    >"$dir/logs/worker$i.out" 2>&1 </dev/null &
  echo $! >"$dir/worker$i.pid"
done

json="http://127.0.0.1:$ui/json/"
while :; do
  alive=$(python3 - "$json" <<'EOF' 2>/dev/null || echo 0
import json, sys, urllib.request
state = json.load(urllib.request.urlopen(sys.argv[1], timeout=5))
print(sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE"))
EOF
)
  [ "$alive" -ge "$workers" ] && break
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "spark cluster: $alive of $workers workers registered with $url in time" >&2
    tail -n 20 "$dir"/logs/*.out >&2
    exit 1
  fi
  sleep 0.5
done
echo "$url" >"$dir/master-url"
echo "$json" >"$dir/master-json-url"
echo "$url"
