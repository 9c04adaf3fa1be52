#!/usr/bin/env bash
# Runs the whole test suite: formatting, lints, the API documentation's links, unit and
# integration tests.
# Everything builds in release mode so RocksDB is compiled once, for tests and binaries alike.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/env.sh
cargo fmt --check
cargo clippy --release --all-targets --features crash-points -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --release --no-deps --quiet
cargo test --release --features crash-points "$@"
