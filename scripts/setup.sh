#!/usr/bin/env bash
# Installs what building and testing Sediment needs on a Debian machine with a Rust
# toolchain. Idempotent: does nothing when everything is present.
#   - clang + libclang: RocksDB's Rust bindings are generated with bindgen.
#   - python3 packages warcio, surt, cdxj-indexer, fastwarc: independent implementations
#     the equivalence tests compare against (tests skip with a message without them).
#   - wget: makes the fixture crawls (scripts/make-fixtures.sh).
#   - sqlite3: the demo shows the projected databases with it.
#   - mariadb-server + mariadb-client: the locust projection's SQL is loaded into a private
#     server on 127.0.0.1 by its test (scripts/mariadb-test-server.sh).
#   - chromium + chromium-driver: the serve tests load the search page in headless Chromium.
#   - python package pywb: the serve tests replay through pywb on top of `sediment serve`
#     and compare its CDX API with ours (scripts/bench-serve.sh measures both).
#   - rocksdb-tools (ldb, sst_dump) and rocksdict (pip): other tools that must read a store
#     (tests/shared_store.rs).
#   - a Bigtable emulator and Google's cbt client (tests/bigtable.rs): Google's packages
#     when their repository is configured, else an emulator built from Debian's Go client
#     (scripts/build-bigtable-emulator.sh).
#   - Java (default-jre-headless, 17 on Debian 12) and pyspark + duckdb (pip): the Spark
#     application and the readers of the Parquet capture index (tests/spark.rs, tests/parquet.rs).
set -euo pipefail

need_apt=()
command -v clang >/dev/null 2>&1 || need_apt+=(clang)
ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 || need_apt+=(libclang-dev)
command -v wget >/dev/null 2>&1 || need_apt+=(wget)
command -v sqlite3 >/dev/null 2>&1 || need_apt+=(sqlite3)
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need_apt+=(mariadb-server)
command -v mariadb >/dev/null 2>&1 || need_apt+=(mariadb-client)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need_apt+=(chromium-driver)
command -v ldb >/dev/null 2>&1 || need_apt+=(rocksdb-tools)
command -v java >/dev/null 2>&1 || need_apt+=(default-jre-headless)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]} (Debian packages)" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if command -v python3 >/dev/null 2>&1; then
  if ! python3 -c 'import warcio, surt, cdxj_indexer, fastwarc, rocksdict, cdx_toolkit' >/dev/null 2>&1; then
    echo "setup: installing python packages warcio surt cdxj-indexer fastwarc rocksdict cdx-toolkit (reference implementations, readers and clients for tests)" >&2
    python3 -m pip install -q --disable-pip-version-check warcio surt cdxj-indexer fastwarc rocksdict cdx-toolkit >&2 \
      || echo "setup: pip install failed; equivalence tests will skip" >&2
  fi
  if ! python3 -c 'import pyspark, duckdb' >/dev/null 2>&1; then
    echo "setup: installing python packages pyspark duckdb (Spark application, Parquet readers for tests)" >&2
    python3 -m pip install -q --disable-pip-version-check pyspark duckdb >&2 \
      || echo "setup: pip install failed; Spark and Parquet tests will skip" >&2
  fi
  if ! python3 -c 'import pywb' >/dev/null 2>&1; then
    echo "setup: installing python package pywb (replay and CDX server for the serve tests)" >&2
    python3 -m pip install -q --disable-pip-version-check pywb >&2 \
      || echo "setup: pip install pywb failed; the pywb tests will skip" >&2
  fi
fi

# The Bigtable emulator: the Cloud SDK's, or one built from Debian's bttest package.
if [ ! -x /usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator ] \
   && ! command -v cbtemulator >/dev/null 2>&1; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  if apt-cache policy google-cloud-cli-bigtable-emulator 2>/dev/null | grep -q Candidate: \
     && ! apt-cache policy google-cloud-cli-bigtable-emulator | grep -q "Candidate: (none)"; then
    echo "setup: installing google-cloud-cli-bigtable-emulator google-cloud-cli-cbt" >&2
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq google-cloud-cli-bigtable-emulator google-cloud-cli-cbt >/dev/null \
      || echo "setup: could not install Google's emulator packages" >&2
  fi
  if [ ! -x /usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator ]; then
    echo "setup: building a Bigtable emulator from Debian's golang-google-cloud-dev" >&2
    "$(dirname "$0")/build-bigtable-emulator.sh" >&2 || echo "setup: no Bigtable emulator; tests/bigtable.rs will skip" >&2
  fi
fi
