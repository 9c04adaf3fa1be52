#!/usr/bin/env bash
# Kill -9 at random moments, many times per command (issue 11's standing check): for
# import-warc --threads 2 (into a store with captures, and into an empty one), backfill-cdx, backfill-cdx --bulk, import-jsonl (also --bulk), project crawl
# and project summary. After each kill the store opens for readers and shows a whole
# state, the projection's database passes SQLite's integrity check, the re-run completes,
# and the result equals an uninterrupted run (tests/crash.rs; CI runs 5 kills each).
# Kills are drawn within the uninterrupted run's time, and a command fails unless four in
# five of its kills landed while it ran; the table at the end gives the counts and seeds.
#
# Usage: scripts/crash-test.sh [KILLS]      (default 20; SEDIMENT_CRASH_SEED repeats a run)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/env.sh
kills="${1:-20}"
[[ "$kills" =~ ^[0-9]+$ ]] || { echo "KILLS must be a whole number" >&2; exit 2; }
echo "crash test: $kills kills per command on $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# The features of scripts/test.sh's build, so that nothing is rebuilt; the crash tests
# do not use its simulated crashes, they kill.
status=0
SEDIMENT_CRASH_KILLS="$kills" cargo test --release --features crash-points --test crash \
  -- --nocapture --test-threads 1 >"$log" 2>&1 || status=$?
grep -E "rounds|SEED|panicked|FAILED|test result" "$log" || true
echo
echo "| command | kills | landed mid-run | missed | at least | seed |"
echo "|---|---:|---:|---:|---:|---:|"
sed -nE 's/^(.*): ([0-9]+) rounds, ([0-9]+) kills landed mid-run, ([0-9]+) missed \(at least ([0-9]+) must land\), .*SEDIMENT_CRASH_SEED=([0-9]+)$/| `\1` | \2 | \3 | \4 | \5 | \6 |/p' "$log"
if [[ $status -ne 0 ]]; then
  grep -q "test result" "$log" || tail -n 40 "$log"  # it did not get to run the tests
  echo "crash test FAILED (exit $status); the messages above name the seed" >&2
fi
exit "$status"
