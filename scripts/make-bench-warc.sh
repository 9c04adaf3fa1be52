#!/usr/bin/env bash
# Builds the WARC benchmark corpus: a real wget crawl of Debian's HTML and PDF documentation,
# served on 127.0.0.1 by scripts/fixture_server.py, then repeated to reach the wanted size.
#
# Usage: scripts/make-bench-warc.sh [DIR] [MB]      (defaults: /work/bench-data, 500)
# MB 0 makes no copies; HTML_MB=0 skips the crawl without PDFs and its copies (scripts/setup.sh
# makes only base.warc.gz, for the relevance test: HTML_MB=0 scripts/make-bench-warc.sh DIR 0).
# Writes, in DIR (outside the repository; nothing of it is committed):
#   site/                 the served tree: symlinks to the documentation plus a generated index.html
#   base.warc.gz          the crawl, gzip per record, as wget wrote it
#   base.cdx              the CDX wget wrote for it
#   bench-NNN.warc.gz     byte copies of base.warc.gz (gzip members intact), together >= MB MiB
#   bench-NNN.cdx         base.cdx with the file name column changed to bench-NNN.warc.gz
#   html.warc.gz, html.cdx  the same site crawled without its PDFs (HTML pages and requisites)
#   html-NNN.warc.gz      copies of html.warc.gz, together >= HTML_MB MiB (default 100)
# Idempotent: the crawl is skipped when base.warc.gz exists (delete it to crawl again); copies are
# added or removed to match MB. Installs the documentation packages with apt-get when missing.
set -euo pipefail

dir="${1:-/work/bench-data}"
mb="${2:-500}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ "$mb" =~ ^[0-9]+$ ]] || { echo "MB must be a whole number, not '$mb'" >&2; exit 2; }
html_mb="${HTML_MB:-100}"
[[ "$html_mb" =~ ^[0-9]+$ ]] || { echo "HTML_MB must be a whole number, not '$html_mb'" >&2; exit 2; }

# Packages with many HTML pages (Python, PostgreSQL, Erlang/OTP) and some PDFs (Erlang/OTP has 38,
# the Debian Reference one).
packages=(python3.11-doc postgresql-doc-15 erlang-doc debian-reference-en)
missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "installing ${missing[*]}"
    if [[ $(id -u) -ne 0 ]]; then
        echo "run as root, or install them first: apt-get install ${missing[*]}" >&2
        exit 1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v wget >/dev/null || { echo "wget is missing (apt-get install wget)" >&2; exit 1; }

mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

# The served tree: one symlink per documentation set and an index page linking their entry pages and
# every PDF (so the PDFs are crawled even where no HTML page links them).
site="$dir/site"
rm -rf "$site"
mkdir -p "$site"
ln -s /usr/share/doc/python3.11/html "$site/python3.11"
ln -s /usr/share/doc/postgresql-doc-15/html "$site/postgresql-15"
ln -s /usr/share/doc/erlang-doc "$site/erlang"
ln -s /usr/share/debian-reference "$site/debian-reference"
{
    echo '<!DOCTYPE html>'
    echo '<html lang="en"><head><meta charset="utf-8"><title>Debian documentation</title></head><body>'
    echo '<h1>Debian documentation</h1><ul>'
    echo '<li><a href="python3.11/index.html">Python 3.11</a></li>'
    echo '<li><a href="postgresql-15/index.html">PostgreSQL 15</a></li>'
    echo '<li><a href="erlang/doc/index.html">Erlang/OTP</a></li>'
    echo '<li><a href="debian-reference/index.en.html">Debian Reference</a></li>'
    echo '</ul><h2>PDF</h2><ul>'
    (cd "$site" && find -L . -name '*.pdf' -type f | sort | sed 's|^\./||') | while read -r pdf; do
        echo "<li><a href=\"$pdf\">$pdf</a></li>"
    done
    echo '</ul></body></html>'
} >"$site/index.html"

crawl_dir="$dir/.crawl"
server_pid=""
cleanup() {
    if [[ -n "$server_pid" ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$crawl_dir"
}
trap cleanup EXIT

# crawl NAME DESCRIPTION [WGET_ARGS…]: a wget crawl of the site into NAME.warc.gz and NAME.cdx
# in DIR, skipped when NAME.warc.gz exists.
crawl() {
    local name=$1 description=$2
    shift 2
    [[ -s "$dir/$name.warc.gz" ]] && return 0
    rm -rf "$crawl_dir"
    mkdir -p "$crawl_dir"
    python3 "$repo/scripts/fixture_server.py" "$site" --port 0 --quiet >"$crawl_dir/server.out" 2>"$crawl_dir/server.err" &
    server_pid=$!
    for _ in $(seq 50); do
        [[ -s "$crawl_dir/server.out" ]] && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$crawl_dir/server.err" >&2; exit 1; }
        sleep 0.1
    done
    base_url="$(head -1 "$crawl_dir/server.out")"
    [[ -n "$base_url" ]] || { echo "the server did not start" >&2; exit 1; }
    echo "crawling $base_url into $name.warc.gz with $(wget --version | head -1)"
    start=$(date +%s)
    status=0
    (
        cd "$crawl_dir"
        wget --no-config --recursive --level=inf --page-requisites --no-verbose -e robots=on \
            --tries=1 --timeout=30 --directory-prefix=files \
            --warc-file="$name" --warc-cdx \
            --warc-header="operator: Sediment benchmark crawler" \
            --warc-header="description: $description" \
            "$@" -o wget.log "$base_url"
    ) || status=$?
    # 8: some requests got an HTTP error (links to files the packages do not ship).
    if [[ $status -ne 0 && $status -ne 8 ]]; then
        tail -20 "$crawl_dir/wget.log" >&2
        echo "wget failed with exit status $status" >&2
        exit 1
    fi
    echo "crawl took $(($(date +%s) - start)) s; $(grep -c ' URL:' "$crawl_dir/wget.log") downloads, $(grep -c 'ERROR' "$crawl_dir/wget.log") HTTP errors"
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
    mv "$crawl_dir/$name.cdx" "$dir/$name.cdx"
    mv "$crawl_dir/$name.warc.gz" "$dir/$name.warc.gz" # last: its presence means the crawl is complete
}

crawl base "Debian documentation served on 127.0.0.1 (Python, PostgreSQL, Erlang/OTP, Debian Reference)"
# The same documentation without its PDFs: many small HTML pages and their requisites, the
# shape of most web crawls (scripts/bench-warc.sh reports it apart).
html_copies=0
if ((html_mb > 0)); then
    crawl html "Debian HTML documentation served on 127.0.0.1 (Python, PostgreSQL, Erlang/OTP, Debian Reference), no PDF" \
        --reject pdf
    html_size=$(stat -c %s "$dir/html.warc.gz")
    html_copies=$(((html_mb * 1024 * 1024 + html_size - 1) / html_size))
fi
for ((i = 0; i < html_copies; i++)); do
    name=$(printf 'html-%03d' "$i")
    if [[ ! -f "$dir/$name.warc.gz" || $(stat -c %s "$dir/$name.warc.gz") -ne $html_size ]]; then
        cp "$dir/html.warc.gz" "$dir/$name.warc.gz.tmp"
        mv "$dir/$name.warc.gz.tmp" "$dir/$name.warc.gz"
    fi
done

base_size=$(stat -c %s "$dir/base.warc.gz")
want=$((mb * 1024 * 1024))
copies=$(((want + base_size - 1) / base_size))
for ((i = 0; i < copies; i++)); do
    name=$(printf 'bench-%03d' "$i")
    if [[ ! -f "$dir/$name.warc.gz" || $(stat -c %s "$dir/$name.warc.gz") -ne $base_size ]]; then
        cp "$dir/base.warc.gz" "$dir/$name.warc.gz.tmp"
        mv "$dir/$name.warc.gz.tmp" "$dir/$name.warc.gz"
    fi
    # wget's CDX columns: a b a m s k r M V g u; g (10th) is the WARC file name.
    awk -v name="$name.warc.gz" 'NR == 1 { print; next } { $10 = name; print }' "$dir/base.cdx" >"$dir/$name.cdx"
done
# Copies beyond the wanted size, left by an earlier run with a larger MB.
for extra in "$dir"/bench-*.warc.gz; do
    [[ -e "$extra" ]] || continue
    number=$(basename "$extra" .warc.gz)
    number=$((10#${number#bench-}))
    if ((number >= copies)); then
        rm -f "$extra" "${extra%.warc.gz}.cdx"
    fi
done

python3 - "$dir" "$copies" <<'EOF'
import gzip
import os
import sys
from collections import Counter

directory, copies = sys.argv[1], int(sys.argv[2])
base = os.path.join(directory, "base.warc.gz")
kinds = Counter()
mimes = Counter()
uncompressed = 0
try:
    from warcio.archiveiterator import ArchiveIterator
except ImportError:
    ArchiveIterator = None
if ArchiveIterator is not None:
    with open(base, "rb") as f:
        for record in ArchiveIterator(f):
            kind = record.rec_type
            if kind in ("response", "revisit") and record.http_headers is not None:
                kind += " " + record.http_headers.get_statuscode()
            kinds[kind] += 1
            if record.rec_type == "response" and record.http_headers is not None:
                mime = (record.http_headers.get_header("Content-Type") or "").split(";")[0].strip()
                mimes[mime or "(none)"] += 1
with gzip.open(base, "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        uncompressed += len(block)
files = sorted(n for n in os.listdir(directory) if n.startswith("bench-") and n.endswith(".warc.gz"))
compressed = sum(os.path.getsize(os.path.join(directory, n)) for n in files)
records = sum(kinds.values())
print(f"base.warc.gz: {os.path.getsize(base):,} bytes gzip, {uncompressed:,} bytes uncompressed, {records:,} records")
for kind, n in sorted(kinds.items()):
    print(f"  {kind}: {n:,}")
print("  response Content-Types: " + ", ".join(f"{m} {n:,}" for m, n in mimes.most_common(8)))
if files:
  print(
    f"{directory}: {len(files)} files bench-000..bench-{len(files) - 1:03d}.warc.gz, "
    f"{records * len(files):,} records, {compressed:,} bytes gzip ({compressed / 1048576:.1f} MiB), "
    f"{uncompressed * len(files):,} bytes uncompressed"
)
EOF
