#!/usr/bin/env bash
# Makes fixtures/crawl-run/: one wget crawl of fixtures/site/run (scripts/make-fixture-run-site.py)
# cut by --warc-max-size into several WARC files, as long crawls are:
#   run-00000.warc.gz, run-00001.warc.gz, …   the crawl's records, each file opening with the
#                                             same warcinfo record
#   run-meta.warc.gz                          wget's metadata and resource records (its log)
#   run.cdx                                   the CDX wget wrote
# Both the files and the meta file belong to one crawl run: one agent in the projections.
# Needs: wget, python3. Port: FIXTURE_PORT (default 47214). Usage: scripts/make-fixture-run.sh
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
site="$repo/fixtures/site/run"
out="$repo/fixtures/crawl-run"
port="${FIXTURE_PORT:-47214}"
base="http://127.0.0.1:$port"

command -v wget >/dev/null || { echo "wget is missing (apt-get install wget)" >&2; exit 1; }
tmp="$(mktemp -d "${TMPDIR:-/tmp}/sediment-fixture-run.XXXXXX")"
server_pid=""
cleanup() {
    if [[ -n "$server_pid" ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

rm -rf "$site"
python3 "$repo/scripts/make-fixture-run-site.py" "$site"
python3 "$repo/scripts/fixture_server.py" "$site" --port "$port" --quiet >"$tmp/server.out" 2>"$tmp/server.err" &
server_pid=$!
for _ in $(seq 50); do
    [[ -s "$tmp/server.out" ]] && break
    sleep 0.1
done
[[ -s "$tmp/server.out" ]] || { cat "$tmp/server.err" >&2; echo "fixture server did not start" >&2; exit 1; }

status=0
(
    cd "$tmp"
    wget --no-config --recursive --level=inf --page-requisites --no-verbose -e robots=on \
        --tries=1 --timeout=10 --directory-prefix=files \
        --warc-file=run --warc-cdx --warc-max-size=12k \
        --warc-header="operator: Sediment fixture crawler" \
        --warc-header="description: Sediment crawl-run fixture, one run in several files" \
        "$base/" >wget.log 2>&1
) || status=$?
# 8: some request got an HTTP error; 3: wget could not save `/guide` (the 301's body) as a file
# beside the `guide/` directory. Neither touches the WARC files.
if [[ $status -ne 0 && $status -ne 8 && $status -ne 3 ]]; then
    cat "$tmp/wget.log" >&2
    echo "wget failed with exit status $status" >&2
    exit 1
fi
rm -rf "$out"
mkdir -p "$out"
mv "$tmp"/run-*.warc.gz "$tmp"/run.cdx "$out/"
echo "made with $(wget --version | head -1) against $base/:"
ls -l "$out"
