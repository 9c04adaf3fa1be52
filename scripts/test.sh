#!/usr/bin/env bash
# Runs the whole test suite: formatting, lints, the API documentation's links, unit and
# integration tests, and the Python bindings' pytest tests (python/; only when no cargo test
# arguments narrow the run). Ends with one line `N passed, N failed, N skipped`.
# Everything builds in release mode so RocksDB is compiled once, for tests and binaries alike.
#
#   scripts/test.sh [--strict] [--self-check] [CARGO TEST ARGUMENTS...]
#
# --strict (or SEDIMENT_STRICT=1; on by itself under CI=true): a test that lacks a tool, a
# Python package, a service or the shared corpus fails instead of being counted as skipped.
# --self-check: first shows that the suite cannot pass without its prerequisites (a test
# binary run without the corpus, and one without its Python package, must fail).
# --summarize LOG SKIPS: only prints the summary line of a saved `cargo test` output and
# skip log.
set -euo pipefail
cd "$(dirname "$0")/.."

# The summary of a `cargo test` output (file $1) and a skip log (file $2, lines
# `binary::test<TAB>what`): passed excludes tests that skipped; ignored count as skipped.
summarize() {
  awk -v skips="$2" '
    BEGIN {
      while ((getline line < skips) > 0) { split(line, f, "\t"); skipped[f[1]] = 1 }
    }
    # "Running tests/x.rs (…/deps/x-0123abcd)": the binary whose results follow.
    /^ *Running / {
      b = $0; sub(/.*\(/, "", b); sub(/\).*/, "", b)
      n = split(b, parts, "/"); b = parts[n]; sub(/-[0-9a-f]+$/, "", b); bin = b
    }
    /^ *Doc-tests / { bin = "doc-tests" }
    /^test .* \.\.\. ok$/ { if ((bin "::" $2) in skipped) skipped_ok++ }
    /^test result: / {
      results++
      for (i = 3; i < NF; i++) {
        if ($(i + 1) ~ /^passed/) passed += $i
        if ($(i + 1) ~ /^failed/) failed += $i
        if ($(i + 1) ~ /^ignored/) ignored += $i
      }
    }
    END {
      printf "%d passed, %d failed, %d skipped\n", passed - skipped_ok, failed, skipped_ok + ignored
      exit results == 0
    }
  ' "$1"
}

truthy() { # the tests' reading of CI and SEDIMENT_STRICT
  local v="${1:-}"
  v="${v,,}"
  v="${v//[[:space:]]/}"
  [[ -n "$v" && "$v" != 0 && "$v" != false ]]
}

self_check=0
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --strict) export SEDIMENT_STRICT=1 ;;
    --self-check) self_check=1 ;;
    --summarize) summarize "$2" "${3:-/dev/null}"; exit ;;
    *) args+=("$1") ;;
  esac
  shift
done

scripts/setup.sh
. scripts/env.sh
echo "test: Python packages from $SEDIMENT_VENV, made from $(cat "$SEDIMENT_VENV/.sediment-python") ($("$SEDIMENT_VENV/bin/python3" --version 2>&1))"
strict=0
if truthy "${CI:-}" || truthy "${SEDIMENT_STRICT:-}"; then strict=1; fi
corpus="${SEDIMENT_CORPUS:-$PWD/../shared/corpus}"
if [[ ! -d "$corpus" ]]; then
  if [[ $strict == 1 ]]; then
    echo "test: the shared corpus is not at $corpus: in strict mode every test that reads it fails" >&2
  else
    echo "test: the shared corpus is not at $corpus (put it at ../shared/corpus beside the checkout, or set SEDIMENT_CORPUS): the tests that read it are counted as skipped" >&2
  fi
fi
[[ $strict == 1 ]] && echo "test: strict mode: a test that lacks what it needs fails"

cargo fmt --check
cargo fmt --check --manifest-path python/Cargo.toml
# One RocksDB build for the default, the minimal and the Python configuration (a second
# one would cost 12 minutes): librocksdb-sys's host crates must have the same features.
scripts/check-host-features.sh
cargo clippy --release --all-targets --features crash-points -- -D warnings
# The minimal configuration (no Bigtable backend, no Parquet export, no server): the
# library a program builds with default-features = false, kept building and lint-clean.
cargo clippy --release --lib --no-default-features -- -D warnings
cargo build --release --lib --no-default-features --quiet
RUSTDOCFLAGS="-D warnings" cargo doc --release --no-deps --quiet

work=$(mktemp -d "${TMPDIR:-/tmp}/sediment-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [[ $self_check == 1 ]]; then
  # Each run must fail, and say why: the suite cannot pass without what it tests with.
  expect_failure() { # expect_failure WHAT MESSAGE ENV... -- CARGO TEST ARGUMENTS...
    local what=$1 message=$2 envs=()
    shift 2
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    if env "${envs[@]}" CI=true cargo test --release --features crash-points "$@" >"$work/self-check.log" 2>&1; then
      echo "self-check: $* passed $what: strict mode does not work" >&2
      tail -20 "$work/self-check.log" >&2
      exit 1
    fi
    if ! grep -q "$message" "$work/self-check.log"; then
      echo "self-check: $* failed $what, but not saying \"$message\"" >&2
      tail -40 "$work/self-check.log" >&2
      exit 1
    fi
    echo "self-check: $* fails $what, as it must"
  }
  expect_failure "without the corpus" "strict mode" SEDIMENT_CORPUS=/nonexistent \
    -- --test cdx_corpus
  # A python3 without its site packages, and no venv on PATH: warcio is missing.
  mkdir "$work/bin"
  printf '#!/bin/sh\nexec %s -S "$@"\n' "$(command -v python3)" >"$work/bin/python3"
  chmod +x "$work/bin/python3"
  bare_path=$(tr ':' '\n' <<<"$PATH" | grep -vxF "$SEDIMENT_VENV/bin" | paste -sd:)
  expect_failure "without warcio" "Python module(s) warcio" PATH="$work/bin:$bare_path" \
    -- --test warc_hostile -- a_content_length_megabytes_too_large_costs_only_its_record
fi

export SEDIMENT_SKIP_LOG="$work/skipped"
: >"$SEDIMENT_SKIP_LOG"
status=0
cargo test --release --features crash-points --no-fail-fast ${args[@]+"${args[@]}"} 2>&1 | tee "$work/cargo-test.log" || status=$?
summary=$(summarize "$work/cargo-test.log" "$SEDIMENT_SKIP_LOG") || {
  echo "test: cargo test ran no test (status $status): did it build?" >&2
  [[ $status != 0 ]] || status=1
}
# The Python bindings: built into the venv by maturin (on the same target directory, so
# RocksDB is not compiled again), tested against the binary cargo test just built. Their
# counts join the summary; without maturin or pytest that is one failure in strict mode,
# one skip otherwise.
py_passed=0 py_failed=0 py_skipped=0
if [[ ${#args[@]} -eq 0 ]]; then
  if ! "$SEDIMENT_VENV/bin/python3" -c 'import maturin, pytest' 2>/dev/null; then
    echo "test: maturin or pytest is missing from $SEDIMENT_VENV (scripts/setup.sh installs them): the Python bindings are not tested" >&2
    if [[ $strict == 1 ]]; then py_failed=1; else py_skipped=1; fi
  elif ! maturin develop --release -m python/Cargo.toml >"$work/maturin.log" 2>&1; then
    tail -40 "$work/maturin.log" >&2
    echo "test: building the Python bindings (maturin develop) failed" >&2
    py_failed=1
  else
    "$SEDIMENT_VENV/bin/python3" -m pytest -q -rs -p no:cacheprovider --junitxml="$work/pytest.xml" python/tests || true
    read -r py_passed py_failed py_skipped < <("$SEDIMENT_VENV/bin/python3" - "$work/pytest.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    print(0, 1, 0)  # pytest wrote no report: it did not run
    sys.exit()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
n = lambda name: sum(int(s.get(name, 0)) for s in suites)
failed = n("failures") + n("errors")
ran = n("tests")
print(ran - failed - n("skipped"), failed + (ran == 0), n("skipped"))
PY
    )
  fi
fi
if [[ -n "$summary" ]]; then
  read -r c_passed c_failed c_skipped < <(sed -E 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/' <<<"$summary")
  summary="$((c_passed + py_passed)) passed, $((c_failed + py_failed)) failed, $((c_skipped + py_skipped)) skipped"
fi

if [[ -s "$SEDIMENT_SKIP_LOG" ]]; then
  echo "test: skipped for lack of what they need:"
  sort -u "$SEDIMENT_SKIP_LOG" | sed 's/^/  /'
fi
echo "$summary"
failed=$(sed -n 's/.* passed, \([0-9]*\) failed,.*/\1/p' <<<"$summary")
if [[ $status -ne 0 || ${failed:-1} -ne 0 ]]; then
  exit 1
fi
