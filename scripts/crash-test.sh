#!/usr/bin/env bash
# Kill -9 at random moments, many times per command (issue 11's standing check): for
# import-warc --threads 2, backfill-cdx, backfill-cdx --bulk, import-jsonl (also --bulk), project crawl
# and project summary. After each kill the store opens for readers and shows a whole
# state, the projection's database passes SQLite's integrity check, the re-run completes,
# and the result equals an uninterrupted run (tests/crash.rs; CI runs 3 kills each).
#
# Usage: scripts/crash-test.sh [KILLS]      (default 20; SEDIMENT_CRASH_SEED repeats a run)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/env.sh
kills="${1:-20}"
[[ "$kills" =~ ^[0-9]+$ ]] || { echo "KILLS must be a whole number" >&2; exit 2; }
echo "crash test: $kills kills per command on $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
SEDIMENT_CRASH_KILLS="$kills" cargo test --release --test crash -- --nocapture --test-threads 1 2>&1 \
  | grep -E "rounds|SEED|panicked|FAILED|test result"
