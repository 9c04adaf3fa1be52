#!/usr/bin/env bash
# Word-index projection speed (issue 8): `sediment project locust` and `project jdbm` on the
# fixture crawls and on the Debian documentation crawl of scripts/make-bench-warc.sh
# (HTML and PDF), with 1 and 2 threads; pages/s (wall and per CPU second) and output sizes.
# When a MariaDB server can run here (scripts/mariadb-test-server.sh), the locust SQL of the
# large crawl is also loaded into it and timed.
# Usage: scripts/bench-wordindex.sh [WARC] [WORKDIR]
#   (defaults /work/bench-data/base.warc.gz, /tmp/sediment-bench-wordindex)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
. scripts/bench-lib.sh
warc="${1:-/work/bench-data/base.warc.gz}"
work="${2:-/tmp/sediment-bench-wordindex}"
[ -s "$warc" ] || scripts/make-bench-warc.sh "$(dirname "$warc")"
cargo build --release --quiet
rm -rf "$work" && mkdir -p "$work"

# NAME STORE ARGS...: runs a projection, prints wall, CPU, pages/s and output size.
measure() {
  local name=$1 store=$2 kind=$3 threads=$4 out="$work/out-$1"
  local log="$work/$name.log"
  /usr/bin/time -f '%e %U %S %M' -o "$work/$name.time" \
    "$SEDIMENT_BIN" --store "$store" project "$kind" -o "$out" --warc-dir "$(dirname "$warc")" \
    --warc-dir fixtures/crawl --threads "$threads" >/dev/null 2>"$log"
  read -r wall user sys rss < "$work/$name.time"
  local pages
  pages=$(grep -o 'pages [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  local cpu
  cpu=$(echo "$user + $sys" | bc -l)
  printf '%-34s %6d pages %7.2f s wall %7.2f s cpu %7.0f pages/s %7.0f pages/cpu-s %8.1f MB out %5d MB rss\n' \
    "$name" "$pages" "$wall" "$cpu" "$(echo "$pages / $wall" | bc -l)" "$(echo "$pages / $cpu" | bc -l)" \
    "$(du -sb "$out" | awk '{print $1/1e6}')" "$((rss / 1024))"
}

"$SEDIMENT_BIN" --store "$work/fixture" import-warc fixtures/crawl/crawl1.warc.gz fixtures/crawl/crawl2.warc.gz 2>/dev/null
"$SEDIMENT_BIN" --store "$work/debian" import-warc "$warc" 2>/dev/null
echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
measure "fixture locust" "$work/fixture" locust 2
measure "fixture jdbm" "$work/fixture" jdbm 2
for threads in 1 2; do
  measure "debian-docs locust, $threads thread(s)" "$work/debian" locust "$threads"
  measure "debian-docs jdbm, $threads thread(s)" "$work/debian" jdbm "$threads"
done
# The output does not depend on the number of threads (status 1 otherwise).
for kind in locust; do
  (cd "$work/out-debian-docs $kind, 1 thread(s)" && find . -type f | LC_ALL=C sort | xargs sha1sum) > "$work/$kind-1.sums"
  (cd "$work/out-debian-docs $kind, 2 thread(s)" && find . -type f | LC_ALL=C sort | xargs sha1sum) > "$work/$kind-2.sums"
  bench_corrupt wordindex "$work/$kind-2.sums"
  check_same "$kind output with 2 threads = with 1 thread (SHA-1 of every file)" "$work/$kind-2.sums" "$work/$kind-1.sums"
done

server="$work/mariadb"
if port_line=$(scripts/mariadb-test-server.sh start "$server" 2>/dev/null); then
  port=$(echo "$port_line" | sed -n 's/^PORT=//p')
  trap 'scripts/mariadb-test-server.sh stop "$server"' EXIT
  sql() { mariadb -h 127.0.0.1 -P "$port" -u root "$@"; }
  sql -e 'CREATE DATABASE bench'
  start=$(date +%s.%N)
  for f in "$work/out-debian-docs locust, 2 thread(s)"/schema.sql "$work/out-debian-docs locust, 2 thread(s)"/data-*.sql; do
    sql bench < "$f"
  done
  end=$(date +%s.%N)
  printf 'MariaDB load of the debian-docs locust SQL: %.1f s; urlword rows %s, wordurl rows %s\n' \
    "$(echo "$end - $start" | bc -l)" "$(sql -N bench -e 'SELECT count(*) FROM urlword')" \
    "$(sql -N bench -e 'SELECT count(*) FROM wordurl')"
else
  echo "MariaDB cannot run here: load not measured"
fi
