#!/usr/bin/env bash
# Makes the fixture crawls in fixtures/crawl/ with Debian's GNU wget against scripts/fixture_server.py:
#   crawl1.warc.gz + crawl1.cdx              the v1 site, gzip per record
#   crawl1-plain.warc + crawl1-plain.cdx     the v1 site again, --no-warc-compression
#   crawl2.warc.gz + crawl2.cdx              the v2 site, --warc-dedup=crawl1.cdx (unchanged payloads
#                                            become revisit records)
# Both crawls use the same port (FIXTURE_PORT, default 47213) so that their URLs are equal.
# Idempotent: replaces the previous outputs and removes its temporary directory.
# Needs: wget, python3 (warcio optional, for the summary). Usage: scripts/make-fixtures.sh
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$repo/scripts/env.sh" # warcio from the project's virtual environment, when setup made it
site="$repo/fixtures/site"
out="$repo/fixtures/crawl"
port="${FIXTURE_PORT:-47213}"
base="http://127.0.0.1:$port"

command -v wget >/dev/null || { echo "wget is missing (apt-get install wget)" >&2; exit 1; }
python3 - "$port" <<'EOF' || { echo "port $port on 127.0.0.1 is in use; set FIXTURE_PORT" >&2; exit 1; }
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # only a listener makes the port busy
s.bind(("127.0.0.1", int(sys.argv[1])))
s.close()
EOF

tmp="$(mktemp -d "${TMPDIR:-/tmp}/sediment-fixtures.XXXXXX")"
server_pid=""
stop_server() {
    if [[ -n "$server_pid" ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    fi
}
cleanup() {
    stop_server
    rm -rf "$tmp"
}
trap cleanup EXIT

start_server() { # VERSION_DIR
    python3 "$repo/scripts/fixture_server.py" "$1" --port "$port" --quiet >"$tmp/server.out" 2>"$tmp/server.err" &
    server_pid=$!
    for _ in $(seq 50); do
        if [[ -s "$tmp/server.out" ]]; then
            return 0
        fi
        if ! kill -0 "$server_pid" 2>/dev/null; then
            cat "$tmp/server.err" >&2
            echo "fixture server did not start" >&2
            exit 1
        fi
        sleep 0.1
    done
    echo "fixture server did not start within 5 s" >&2
    exit 1
}

# Seeds: the home page plus the odd URLs, so that the redirects, the 410 and the 404s are captured
# even if no page linked them. docs/old-notes.html exists in v1 and is removed in v2.
cat >"$tmp/urls.txt" <<EOF
$base/
$base/old-page
$base/moved
$base/temp
$base/gone
$base/missing.html
$base/docs/old-notes.html
EOF

crawl() { # NAME DESCRIPTION EXTRA_WGET_ARGS...
    local name="$1" description="$2"
    shift 2
    mkdir -p "$tmp/$name"
    local status=0
    # Relative file names, so that the WARC's warcinfo and wget_arguments record name no temp path.
    (
        cd "$tmp/$name"
        cp "$tmp/urls.txt" urls.txt
        wget --no-config --recursive --level=inf --page-requisites --no-verbose -e robots=on \
            --tries=1 --timeout=10 --directory-prefix=files \
            --warc-file="$name" --warc-cdx \
            --warc-header="operator: Sediment fixture crawler" \
            --warc-header="description: $description" \
            "$@" -i urls.txt >wget.log 2>&1
    ) || status=$?
    # wget exits 8 when the server answered some request with an error (the 404s and the 410).
    if [[ $status -ne 0 && $status -ne 8 ]]; then
        cat "$tmp/$name/wget.log" >&2
        echo "wget failed for $name with exit status $status" >&2
        exit 1
    fi
}

python3 "$repo/scripts/make-fixture-site.py" "$site" >/dev/null

start_server "$site/v1"
crawl crawl1 "Sediment fixture site v1, first crawl"
crawl crawl1-plain "Sediment fixture site v1, uncompressed WARC" --no-warc-compression
stop_server

start_server "$site/v2"
mkdir -p "$tmp/crawl2"
cp "$tmp/crawl1/crawl1.cdx" "$tmp/crawl2/crawl1.cdx"
crawl crawl2 "Sediment fixture site v2, second crawl, deduplicated against crawl1" --warc-dedup=crawl1.cdx
stop_server

mkdir -p "$out"
rm -f "$out"/crawl1.warc.gz "$out"/crawl1.cdx "$out"/crawl1-plain.warc "$out"/crawl1-plain.cdx \
    "$out"/crawl2.warc.gz "$out"/crawl2.cdx
for made in crawl1/crawl1.warc.gz crawl1/crawl1.cdx crawl1-plain/crawl1-plain.warc crawl1-plain/crawl1-plain.cdx \
    crawl2/crawl2.warc.gz crawl2/crawl2.cdx; do
    if [[ ! -s "$tmp/$made" ]]; then
        echo "wget did not write $made; it wrote:" >&2
        ls -la "$tmp"/crawl* >&2
        exit 1
    fi
    mv "$tmp/$made" "$out/"
done

echo "made with $(wget --version | head -1) against $base/:"
(cd "$out" && ls -l crawl1.warc.gz crawl1.cdx crawl1-plain.warc crawl1-plain.cdx crawl2.warc.gz crawl2.cdx)
if python3 -c "import warcio" 2>/dev/null; then
    python3 - "$out"/crawl1.warc.gz "$out"/crawl1-plain.warc "$out"/crawl2.warc.gz <<'EOF'
import sys
from collections import Counter
from warcio.archiveiterator import ArchiveIterator

for path in sys.argv[1:]:
    counts = Counter()
    with open(path, "rb") as f:
        for record in ArchiveIterator(f):
            status = ""
            if record.rec_type in ("response", "revisit") and record.http_headers is not None:
                status = " " + record.http_headers.get_statuscode()
            counts[record.rec_type + status] += 1
    print(path.rsplit("/", 1)[-1] + ": " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
EOF
fi
