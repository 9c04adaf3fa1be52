#!/usr/bin/env bash
# Crashes at scale (issue 36): `kill -9` of a bulk load of N generated captures
# (examples/gen_scale_cdx.rs piped into `backfill-cdx --bulk -`) at three moments: early and
# mid (when the loader has read 15 % and 50 % of its input) and late (all input read, half
# way through what is left: the last batch's SST files, their ingestion, the compaction).
# After each kill:
#  - the store opens for a reader (`stats`) and shows a whole state: none yet (no version
#    was published), or the captures of a published version;
#  - the load is run again from the start and completes;
#  - the result equals the uninterrupted load's: the same `stats` (every family counted),
#    and the same SHA-256 of `export --captures` (every row and every capture: the whole
#    store), streamed. Above 10 M captures (or FINGERPRINT=sample) the export is sampled
#    instead, as issue 36 allows ("counts and a sample of exports"): the rows whose key
#    begins with `A` in base32 (1/32 of the digests, from every batch: digests are random)
#    and every capture of ten hosts taken at even steps of the input (a whole 100 M export
#    is ~10 minutes here, and it is made four times).
# The uninterrupted load is timed (wall, CPU, peak RSS) and its store's bytes reported; so
# is each re-run (wall, CPU, peak RSS).
# REFERENCE=DIR takes a store of an uninterrupted load of the same N and SEED made before
# (`KEEP=1 scripts/bench-scale.sh N`) instead of loading one (fingerprinted, then removed
# when DROP_REFERENCE=1: at 100 M two stores do not fit beside each other); TAIL_SECONDS
# (default 600) is then the time its load took after the input was read, which the late
# kill aims into. MOMENTS (default "15 50 late") chooses the kills, in that order.
# BULK_MEMORY_MB (default: N / 5,000, so that a load is several batches and a kill can land
# between them, at most a quarter of the memory available, as the loader's own default) is
# passed as --bulk-memory-mb. One store is on disk at a time (the reference is fingerprinted
# and removed before the first kill): at N = 100,000,000 that is ~35 GB at the peak.
# Usage: scripts/crash-scale.sh N [WORKDIR]     (scripts/test.sh runs it at N = 200,000 in
#   CI; N = 10,000,000 took ~15 minutes on 2 cores). Env: SEED (36), SEDIMENT_BIN and GEN_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
given_bin="${SEDIMENT_BIN:-}"
. scripts/env.sh
[ -n "$given_bin" ] && [ -n "${GEN_BIN:-}" ] && SEDIMENT_BIN="$given_bin"
n="${1:?usage: scripts/crash-scale.sh N [WORKDIR]}"
n="${n//_/}"
work="${2:-/tmp/sediment-crash-scale}"
seed="${SEED:-36}"
quarter_mb=$(awk '$1 == "MemAvailable:" { print int($2 / 4 / 1024) }' /proc/meminfo)
memory_mb=$(( n / 5000 > 50 ? n / 5000 : 50 ))
[ "$memory_mb" -gt "$quarter_mb" ] && memory_mb=$quarter_mb
memory_mb="${BULK_MEMORY_MB:-$memory_mb}"
if [ -z "${GEN_BIN:-}" ]; then
  cargo build --release --quiet --bin sediment --example gen_scale_cdx
  GEN_BIN="$CARGO_TARGET_DIR/release/examples/gen_scale_cdx"
fi
# The path files of scripts/bench-scale.sh: the same N and SEED give the same lines, so its
# store can be the REFERENCE.
. scripts/bench-lib.sh
mapfile -t paths < <(scale_path_files)
[ ${#paths[@]} -gt 0 ] || { echo "no CDX files under ${SEDIMENT_CORPUS:-../shared/corpus} to take URL paths from" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"

load() { # STORE: the whole load, in the background (timed=FILE: under /usr/bin/time -v)
  local time=()
  [ -n "${timed:-}" ] && time=(/usr/bin/time -v -o "$timed")
  ( "$GEN_BIN" "$n" --seed "$seed" "${paths[@]}" |
      exec "${time[@]}" "$SEDIMENT_BIN" --store "$1" backfill-cdx --bulk --bulk-memory-mb "$memory_mb" --quiet - \
        2>> "$work/load.log" ) &
}
loader_of() { # STORE: the pid of the `sediment` loading it (waits for it to start)
  local pid=""
  for _ in $(seq 1 500); do
    # Anchored: not the /usr/bin/time that runs a timed load.
    pid=$(pgrep -f -- "^$SEDIMENT_BIN --store $1 backfill-cdx --bulk" | head -1 || true)
    [ -n "$pid" ] && break
    sleep 0.01
  done
  echo "$pid"
}
feeder_of() { # PID: the process writing into its standard input (the generator)
  local pipe p
  pipe=$(readlink "/proc/$1/fd/0" 2> /dev/null) || return 0
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" != "$1" ] && [ "$(readlink "$p/fd/1" 2> /dev/null)" = "$pipe" ] &&
      { echo "${p#/proc/}"; return 0; }
  done
  return 0
}
input_read() { # FEEDER_PID: the input the loader has been given so far: what the generator
  # wrote into the pipe (all of it once the generator is gone). Not the loader's own read
  # bytes: those count its reads of the store too, and passed the input's size at 100 M
  # while a fifth of the input was still to come.
  local written
  written=$(awk '$1 == "wchar:" { print $2 }' "/proc/$1/io" 2> /dev/null || true)
  echo "${written:-$input_bytes}"
}
counted() { # COMMAND...: "N lines, sha256 HASH" of what it writes (an empty sample fails)
  local hash lines
  hash=$("$@" 2> /dev/null | awk -v out="$work/lines.tmp" '{ print } END { print NR > out }' |
    sha256sum | cut -c1-16)
  lines=$(cat "$work/lines.tmp")
  [ "$lines" -gt 0 ] || { echo "FAILED: an empty sample ($*)" >&2; exit 1; }
  echo "$lines lines, sha256 $hash"
}
fingerprint_mode="${FINGERPRINT:-$([ "$n" -gt 10000000 ] && echo sample || echo full)}"
fingerprint() { # STORE: stats and the hash of the whole export, or of its sample
  "$SEDIMENT_BIN" --store "$1" stats | grep -v -E "^(store|on disk) "
  if [ "$fingerprint_mode" = full ]; then
    echo "export --captures: sha256 $("$SEDIMENT_BIN" --store "$1" export --captures --quiet 2> /dev/null | sha256sum | cut -c1-16)"
  else
    echo "export --prefix A: $(counted "$SEDIMENT_BIN" --store "$1" export --prefix A --quiet)"
    while read -r host; do
      echo "captures of $host: $(counted "$SEDIMENT_BIN" --store "$1" captures --surt-prefix "$host")"
    done < "$work/hosts.txt"
  fi
}

echo "crash at scale: N = $n, --bulk-memory-mb $memory_mb; $(nproc) cores; $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
# The input's size, and the SURT hosts of ten lines at even steps of it (the sample).
"$GEN_BIN" "$n" --seed "$seed" "${paths[@]}" |
  awk -v step=$(( n / 10 > 0 ? n / 10 : 1 )) -v out="$work/hosts.txt" \
    '{ bytes += length($0) + 1 } NR % step == 0 { sub(/\).*/, ")", $1); print $1 > out } END { print bytes }' \
  > "$work/input.bytes"
input_bytes=$(cat "$work/input.bytes")
echo "fingerprint: $fingerprint_mode"
cpu_and_rss() { # TIME_FILE (/usr/bin/time -v's): "X s CPU (user U, sys S), peak RSS R MB"
  awk -F': ' '/User time/ { user = $2 } /System time/ { sys = $2 } /Maximum resident/ { rss = $2 }
    END { printf "%.1f s CPU (user %.1f, sys %.1f), peak RSS %d MB", user + sys, user, sys, rss / 1024 }' "$1"
}
if [ -n "${REFERENCE:-}" ]; then
  [ -d "$REFERENCE" ] || { echo "REFERENCE: no store at $REFERENCE" >&2; exit 2; }
  tail_time="${TAIL_SECONDS:-600}"
  fingerprint "$REFERENCE" > "$work/reference.txt"
  echo "uninterrupted load: the store at $REFERENCE, loaded before (its tail taken as $tail_time s)"
  [ -n "${DROP_REFERENCE:-}" ] && rm -rf "$REFERENCE"
else
  started=$(date +%s.%N)
  timed="$work/reference.time" load "$work/reference"
  pid=$(loader_of "$work/reference")
  feeder=$(feeder_of "$pid")
  read_all=""
  while kill -0 "$pid" 2> /dev/null; do
    [ -z "$read_all" ] && [ "$(input_read "$feeder")" -ge "$input_bytes" ] && read_all=$(date +%s.%N)
    sleep 0.02
  done
  wait
  ended=$(date +%s.%N)
  took=$(echo "$ended - $started" | bc -l)
  tail_time=$(echo "$ended - ${read_all:-$ended}" | bc -l)
  fingerprint "$work/reference" > "$work/reference.txt"
  bytes=$(du -sb "$work/reference" | cut -f1)
  rm -rf "$work/reference"
  batches=$(grep -o 'bulk_batches [0-9]*' "$work/load.log" | tail -1 | cut -d' ' -f2)
  printf 'uninterrupted load: %.1f s (%.1f s of it after the input was read), %s batches\n' "$took" "$tail_time" "${batches:-1}"
  printf '  the load: %s; store %d bytes, %.1f a capture\n' "$(cpu_and_rss "$work/reference.time")" \
    "$bytes" "$(echo "$bytes / $n" | bc -l)"
fi
sed 's/^/  /' "$work/reference.txt"

failures=0
moments="${MOMENTS:-15 50 late}"
for moment in $moments; do
  store="$work/killed-$moment"
  # Late kills aim at a quarter of the way through what follows the input; when the load
  # finished first (its tail varies with the machine's load), again with less delay.
  for fraction in 4 16 0; do
    rm -rf "$store"
    load "$store"
    pid=$(loader_of "$store")
    feeder=$(feeder_of "$pid")
    target=$input_bytes
    [ "$moment" != late ] && target=$((input_bytes * moment / 100))
    while kill -0 "$pid" 2> /dev/null && [ "$(input_read "$feeder")" -lt "$target" ]; do sleep 0.01; done
    [ "$moment" = late ] && [ "$fraction" != 0 ] && sleep "$(echo "$tail_time / $fraction" | bc -l)"
    if kill -9 "$pid" 2> /dev/null; then
      killed=1
    else
      killed=""
    fi
    wait 2> /dev/null || true
    [ -n "$killed" ] && break
    [ "$moment" != late ] && break
  done
  if [ -z "$killed" ]; then
    echo "FAILED at $moment: the load finished before it could be killed" >&2
    failures=$((failures + 1))
    continue
  fi
  seen=$("$SEDIMENT_BIN" --store "$store" stats 2> "$work/stats-$moment.err" | awk '$1 == "captures" { print $2 }' || true)
  if [ -z "$seen" ] && ! grep -q "no published version yet" "$work/stats-$moment.err"; then
    echo "FAILED at $moment %: the killed store does not open for a reader:" >&2
    cat "$work/stats-$moment.err" >&2
    failures=$((failures + 1))
    continue
  fi
  rerun_started=$(date +%s.%N)
  timed="$work/rerun-$moment.time" load "$store"
  wait
  rerun_took=$(echo "$(date +%s.%N) - $rerun_started" | bc -l)
  fingerprint "$store" > "$work/killed-$moment.txt"
  if cmp -s "$work/reference.txt" "$work/killed-$moment.txt"; then
    printf 'killed at %-5s a reader saw %s; the re-run equals the uninterrupted load\n' \
      "$moment:" "${seen:+$seen captures}${seen:-no version (none was published yet)}"
    printf '  the re-run: %.1f s, %s\n' "$rerun_took" "$(cpu_and_rss "$work/rerun-$moment.time")"
  else
    echo "FAILED at $moment %: the re-run differs from the uninterrupted load:" >&2
    diff "$work/reference.txt" "$work/killed-$moment.txt" >&2 || true
    failures=$((failures + 1))
  fi
  rm -rf "$store"
done
count=$(echo $moments | wc -w)
if [ "$failures" -gt 0 ]; then
  echo "crash at scale: $failures of $count FAILED" >&2
  exit 1
fi
echo "crash at scale: $count of $count kills passed"
