#!/usr/bin/env bash
# Installs what building and testing Sediment needs on a Debian machine with a Rust
# toolchain. Idempotent and quick: does nothing when everything is present.
#   - clang + libclang: RocksDB's Rust bindings are generated with bindgen.
#   - a Python virtual environment (${SEDIMENT_VENV:-~/.cache/sediment-venv}, made from
#     ${SEDIMENT_PYTHON:-python3}; Debian's python3-venv when the venv module is missing)
#     holding every Python package below, and selectolax (scripts/bench-html.sh). Exits
#     non-zero when an install fails: a test without its prerequisite fails in strict mode.
#   - python packages warcio, surt, cdxj-indexer, fastwarc: independent implementations
#     the equivalence tests compare against.
#   - python package cdx-toolkit: the CDX client whose paging `serve` must finish (tests/serve_cdx_toolkit.rs).
#   - wget: makes the fixture crawls (scripts/make-fixtures.sh).
#   - sqlite3: the demo shows the projected databases with it.
#   - mariadb-server + mariadb-client: the locust projection's SQL is loaded into a private
#     server on 127.0.0.1 by its test (scripts/mariadb-test-server.sh).
#   - chromium + chromium-driver: the serve tests load the search page in headless Chromium.
#   - python package pywb: the serve tests replay through pywb on top of `sediment serve`
#     and compare its CDX API with ours (scripts/bench-serve.sh measures both).
#   - python package wacz (py-wacz): writes the WACZ packages tests/wacz.rs imports.
#   - npm + the npm package replaywebpage (ReplayWeb.page's prebuilt ui.js and sw.js,
#     unpacked into ${SEDIMENT_NODE:-~/.cache/sediment-node}/replaywebpage; they need no
#     dependencies): tests/wacz_replayweb.rs replays an exported WACZ with it in Chromium.
#   - warcprox (pip) in its own virtual environment (${SEDIMENT_WARCPROX_VENV:-~/.cache/
#     sediment-warcprox-venv}): it pins cryptography<46, pywb's pyOpenSSL needs >=46.
#     tests/warcprox_dedup.rs has it deduplicate against `sediment serve`. curl drives it.
#   - rocksdb-tools (ldb, sst_dump) and rocksdict (pip): other tools that must read a store
#     (tests/shared_store.rs).
#   - a Bigtable emulator and Google's cbt client (tests/bigtable.rs): Google's packages
#     when their repository is configured, else an emulator built from Debian's Go client
#     (scripts/build-bigtable-emulator.sh).
#   - Java (default-jre-headless, 17 on Debian 12) and pyspark + duckdb (pip): the Spark
#     application and the readers of the Parquet capture index (tests/spark.rs, tests/parquet.rs).
#   - maturin and pytest (pip): build the Python bindings (python/) and run their tests.
#   - the bench crawl tests/relevance.rs searches: ${SEDIMENT_BENCH_WARC:-../bench-data/
#     base.warc.gz beside the checkout}, a wget crawl of Debian's python3.11-doc,
#     postgresql-doc-15, erlang-doc and debian-reference-en (scripts/make-bench-warc.sh,
#     without copies; a few minutes, once).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

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
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]} (Debian packages)" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# The documentation the bench crawl is made of, when the crawl is missing (as
# scripts/make-bench-warc.sh installs it: without recommended packages).
bench_warc="${SEDIMENT_BENCH_WARC:-$repo/../bench-data/base.warc.gz}"
need_docs=()
if [ ! -s "$bench_warc" ]; then
  for package in python3.11-doc postgresql-doc-15 erlang-doc debian-reference-en; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
      || need_docs+=("$package")
  done
fi
if [ ${#need_docs[@]} -gt 0 ]; then
  echo "setup: installing ${need_docs[*]} (Debian packages; the bench crawl's documentation)" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need_docs[@]}" >/dev/null
fi

# The Python packages live in the project's virtual environment, never in the system
# interpreter (Debian's /usr/bin/python3 refuses pip: PEP 668). scripts/env.sh puts its bin
# first on PATH, so `python3`, `wayback`, `cdxj-indexer` and `spark-submit` are the venv's.
venv="${SEDIMENT_VENV:-$HOME/.cache/sediment-venv}"
python="${SEDIMENT_PYTHON:-python3}"
# pip name => import name; pinned nothing: each is the newest release for the interpreter.
packages=(warcio surt cdxj-indexer fastwarc rocksdict cdx-toolkit pyspark duckdb pywb selectolax wacz maturin pytest)
modules=(warcio surt cdxj_indexer fastwarc rocksdict cdx_toolkit pyspark duckdb pywb selectolax wacz maturin pytest)

fail() { echo "setup: $*" >&2; exit 1; }
command -v "$python" >/dev/null 2>&1 || fail "no Python interpreter '$python' (set SEDIMENT_PYTHON, or install Debian's python3)"
# The interpreter itself, not a shim or a symlink: what the venv is made from and kept for.
want=$("$python" -c 'import os, sys; print(os.path.realpath(sys.executable))') \
  || fail "'$python' does not run"
if ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  # Debian splits venv's pip bootstrap into python3-venv (python3.X-venv for other versions).
  case "$want" in
    /usr/bin/*)
      version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
      echo "setup: installing python3-venv python$version-venv (Debian packages) for $want" >&2
      sudo_cmd=""
      [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
      $sudo_cmd apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-venv "python$version-venv" >/dev/null \
        || DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-venv >/dev/null \
        || fail "could not install python3-venv with apt-get"
      ;;
    *) fail "$want has no venv/ensurepip module; use an interpreter that has (SEDIMENT_PYTHON)" ;;
  esac
fi
marker="$venv/.sediment-python"
# Without SEDIMENT_PYTHON a working venv is kept, whatever interpreter made it; asked for
# one (as .ci/run asks for Debian's), a venv made from another is made again.
made_from=$(cat "$marker" 2>/dev/null || true)
if [ -z "${SEDIMENT_PYTHON:-}" ] && [ -n "$made_from" ] && "$venv/bin/python3" -c '' >/dev/null 2>&1; then
  want=$made_from
fi
if [ -d "$venv" ] && { [ ! -x "$venv/bin/python3" ] || [ "$(cat "$marker" 2>/dev/null)" != "$want" ] \
     || ! "$venv/bin/python3" -c '' >/dev/null 2>&1; }; then
  [ -f "$venv/pyvenv.cfg" ] || fail "$venv is not a virtual environment: remove it or set SEDIMENT_VENV"
  echo "setup: $venv was not made from $want (or is broken): making it again" >&2
  rm -rf "$venv"
fi
if [ ! -d "$venv" ]; then
  echo "setup: making the virtual environment $venv from $want" >&2
  "$want" -m venv "$venv" || fail "python -m venv $venv failed"
  echo "$want" > "$marker"
fi
# Which modules are missing: find_spec is quick (pyspark's import is not) and runs no code.
missing() {
  "$venv/bin/python3" - "${modules[@]}" <<'PY'
import importlib.util, sys
print(" ".join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))
PY
}
absent=$(missing) || fail "$venv/bin/python3 does not run"
if [ -n "$absent" ]; then
  need_pip=()
  for i in "${!modules[@]}"; do
    case " $absent " in *" ${modules[$i]} "*) need_pip+=("${packages[$i]}") ;; esac
  done
  echo "setup: installing ${need_pip[*]} into $venv (pip; reference implementations, readers and servers the tests compare against)" >&2
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check "${need_pip[@]}" >&2 \
    || fail "pip install ${need_pip[*]} into $venv failed"
  absent=$(missing)
  [ -z "$absent" ] || fail "after pip install, $venv still lacks the modules $absent"
fi

# ReplayWeb.page: the package's own bundles, not an npm install (its dependency tree is
# only needed to rebuild them).
node_dir="${SEDIMENT_NODE:-$HOME/.cache/sediment-node}"
if [ ! -f "$node_dir/replaywebpage/sw.js" ] || [ ! -f "$node_dir/replaywebpage/ui.js" ]; then
  echo "setup: unpacking the npm package replaywebpage into $node_dir" >&2
  mkdir -p "$node_dir"
  unpack=$(mktemp -d)
  (cd "$unpack" && npm pack --silent replaywebpage >/dev/null) \
    || fail "npm pack replaywebpage failed"
  tar -xzf "$unpack"/replaywebpage-*.tgz -C "$unpack" || fail "cannot unpack replaywebpage"
  rm -rf "$node_dir/replaywebpage"
  mv "$unpack/package" "$node_dir/replaywebpage"
  rm -rf "$unpack"
fi

# warcprox, apart: its cryptography pin conflicts with pywb's pyOpenSSL.
warcprox_venv="${SEDIMENT_WARCPROX_VENV:-$HOME/.cache/sediment-warcprox-venv}"
if [ ! -x "$warcprox_venv/bin/warcprox" ]; then
  echo "setup: installing warcprox into $warcprox_venv (pip)" >&2
  "$want" -m venv "$warcprox_venv" || fail "python -m venv $warcprox_venv failed"
  "$warcprox_venv/bin/python3" -m pip install -q --disable-pip-version-check warcprox >&2 \
    || fail "pip install warcprox into $warcprox_venv failed"
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
    "$(dirname "$0")/build-bigtable-emulator.sh" >&2 \
      || fail "no Bigtable emulator: scripts/build-bigtable-emulator.sh failed (tests/bigtable.rs needs one)"
  fi
fi

# The bench crawl (after the packages above): the crawl only, no copies, no crawl without PDFs.
if [ ! -s "$bench_warc" ]; then
  [ -z "${SEDIMENT_BENCH_WARC:-}" ] || fail "SEDIMENT_BENCH_WARC=$bench_warc does not exist"
  echo "setup: crawling the documentation into $(dirname "$bench_warc") (scripts/make-bench-warc.sh)" >&2
  HTML_MB=0 "$repo/scripts/make-bench-warc.sh" "$(dirname "$bench_warc")" 0 >&2 \
    || fail "scripts/make-bench-warc.sh failed: tests/relevance.rs needs its crawl"
fi
