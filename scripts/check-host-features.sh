#!/usr/bin/env bash
# RocksDB's C++ is compiled by librocksdb-sys's build script, and cargo keys that build on
# the features of every host crate under it (bindgen and its dependencies). When the
# default configuration, the minimal one (--no-default-features) and the Python bindings
# (python/, minimal plus pyo3) disagree there, a shared target dir compiles RocksDB once
# for each (12 minutes apiece on 2 cores). Cargo.toml's [build-dependencies] make them
# agree; this check, run by scripts/test.sh, fails when a dependency update breaks that
# and prints the differing crates, whose features then go into [build-dependencies].
set -euo pipefail
cd "$(dirname "$0")/.."
under_rocksdb() { # CARGO TREE ARGS...: each package under librocksdb-sys, with its features
  cargo tree --quiet -e normal,build --target all --prefix depth --no-dedupe -f '{p} {f}' "$@" |
    awk '{
      match($0, /^[0-9]+/); d = substr($0, 1, RLENGTH) + 0; rest = substr($0, RLENGTH + 1)
      sub(/ \(\*\)$/, "", rest)
      if (inside >= 0 && d <= inside) inside = -1
      if (inside < 0 && index(rest, "librocksdb-sys ") == 1) inside = d
      if (inside >= 0) print rest
    }
    BEGIN { inside = -1 }' | sort -u
}
work=$(mktemp -d "${TMPDIR:-/tmp}/sediment-host-features.XXXXXX")
trap 'rm -rf "$work"' EXIT
under_rocksdb >"$work/default"
under_rocksdb --no-default-features >"$work/minimal"
under_rocksdb --manifest-path python/Cargo.toml >"$work/python"
if ! grep -q '^librocksdb-sys ' "$work/default"; then
  echo "check-host-features: librocksdb-sys not found in cargo tree's output" >&2
  exit 1
fi
status=0
for config in minimal python; do
  if ! diff -u --label default --label "$config" "$work/default" "$work/$config" >"$work/diff"; then
    echo "check-host-features: librocksdb-sys's host crates differ between the default and the $config configuration, so a shared target dir builds RocksDB twice; add the default's features to [build-dependencies] in Cargo.toml:" >&2
    cat "$work/diff" >&2
    status=1
  fi
done
[[ $status == 0 ]] && echo "check-host-features: one librocksdb-sys build for the default, minimal and Python configurations ($(wc -l <"$work/default") packages under it)"
exit $status
