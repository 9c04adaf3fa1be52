#!/usr/bin/env bash
# Builds a second WARC benchmark corpus, of small records: a wget crawl of several HTML
# documentation sets from Debian packages (SQLite, the Apache HTTP Server manual in its
# languages, Linux-PAM, GLib/GIO/GObject), served on 127.0.0.1 by scripts/fixture_server.py,
# keeping only the files of at most SMALL_KB (default 10) KiB: thousands of records, every
# payload under 10 KiB (a few requisites that are larger are left out and answered 404). The
# scripts that measure ingest (scripts/bench-warc.sh, scripts/bench-cdx.sh) use it as the
# corpus next to scripts/make-bench-warc.sh's, so that each ratio is measured on two crawls.
#
# Usage: scripts/make-bench-warc-small-records.sh [DIR] [MB]   (defaults: /work/bench-data/small-records, 100)
# Environment: SMALL_KB (largest file served, default 10), MAX_PAGES (at most this many HTML
# pages per documentation set, for a quick try; default all).
# Writes, in DIR (outside the repository; nothing of it is committed):
#   site/                 the served tree: symlinks to the small files, index pages
#   small.warc.gz         the crawl, gzip per record, as wget wrote it
#   small.cdx             the CDX wget wrote for it
#   small-NNN.warc.gz     byte copies of small.warc.gz, together >= MB MiB
#   small-NNN.cdx         small.cdx with the file name column changed to small-NNN.warc.gz
# Idempotent like scripts/make-bench-warc.sh: the crawl is skipped when small.warc.gz exists.
# Installs the documentation packages with apt-get when missing.
set -euo pipefail

dir="${1:-/work/bench-data/small-records}"
mb="${2:-100}"
small_kb="${SMALL_KB:-10}"
max_pages="${MAX_PAGES:-0}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ "$mb" =~ ^[0-9]+$ && "$mb" -gt 0 ]] || { echo "MB must be a positive whole number, not '$mb'" >&2; exit 2; }

# name, package, directory of its HTML
sets=(
    "sqlite sqlite3-doc /usr/share/doc/sqlite3"
    "apache apache2-doc /usr/share/doc/apache2-doc/manual"
    "pam libpam-doc /usr/share/doc/libpam-doc/html"
    "glib libglib2.0-doc /usr/share/gtk-doc/html"
)
missing=()
for set in "${sets[@]}"; do
    read -r _ package _ <<<"$set"
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

if [[ ! -s "$dir/small.warc.gz" ]]; then
    # The served tree: a symlink per small file (pages and their style sheets, scripts and
    # images), and index pages of at most 100 links each (so that they are small too) that
    # reach every small page even where only a large page links it.
    site="$dir/site"
    rm -rf "$site"
    mkdir -p "$site"
    python3 - "$site" "$small_kb" "$max_pages" "${sets[@]}" <<'EOF'
import html, os, sys

site, small_kb, max_pages, sets = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
limit = small_kb * 1024
lists = []
for entry in sets:
    name, package, root = entry.split(" ", 2)
    pages, others = [], []
    for top, dirs, files in os.walk(root, followlinks=True):
        dirs.sort()
        for f in sorted(files):
            path = os.path.join(top, f)
            try:
                size = os.stat(path).st_size
            except OSError:
                continue
            if size > limit or size == 0:
                continue
            rel = os.path.relpath(path, root)
            (pages if f.endswith((".html", ".htm")) else others).append(rel)
    if max_pages:
        pages = pages[:max_pages]
    for rel in pages + others:
        target = os.path.join(site, name, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.symlink(os.path.join(root, rel), target)
    chunks = [pages[i:i + 100] for i in range(0, len(pages), 100)]
    for n, chunk in enumerate(chunks):
        list_name = f"list-{name}-{n:03d}.html"
        with open(os.path.join(site, list_name), "w") as out:
            out.write(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{name} {n}</title></head><body><ul>\n')
            for rel in chunk:
                out.write(f'<li><a href="{html.escape(name + "/" + rel)}">{html.escape(rel)}</a></li>\n')
            out.write("</ul></body></html>\n")
        lists.append(list_name)
    print(f"{name} ({package}): {len(pages)} pages and {len(others)} other files of at most {small_kb} KiB", file=sys.stderr)
with open(os.path.join(site, "index.html"), "w") as out:
    out.write('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Small documentation pages</title></head><body><ul>\n')
    for list_name in lists:
        out.write(f'<li><a href="{list_name}">{list_name}</a></li>\n')
    out.write("</ul></body></html>\n")
EOF

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
    echo "crawling $base_url into small.warc.gz with $(wget --version | head -1)"
    start=$(date +%s)
    status=0
    (
        cd "$crawl_dir"
        # Level 2: the index, the lists, the pages (and their requisites); the links of the
        # pages to pages left out are not followed, so the crawl is not mostly 404s.
        wget --no-config --recursive --level=2 --page-requisites --no-verbose -e robots=on \
            --tries=1 --timeout=30 --directory-prefix=files \
            --warc-file=small --warc-cdx \
            --warc-header="operator: Sediment benchmark crawler" \
            --warc-header="description: small pages of Debian documentation served on 127.0.0.1 (SQLite, Apache HTTP Server, Linux-PAM, GLib)" \
            -o wget.log "$base_url"
    ) || status=$?
    # 8: some requests got an HTTP error (requisites left out).
    if [[ $status -ne 0 && $status -ne 8 ]]; then
        tail -20 "$crawl_dir/wget.log" >&2
        echo "wget failed with exit status $status" >&2
        exit 1
    fi
    echo "crawl took $(($(date +%s) - start)) s; $(grep -c ' URL:' "$crawl_dir/wget.log") downloads, $(grep -c 'ERROR' "$crawl_dir/wget.log") HTTP errors"
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
    mv "$crawl_dir/small.cdx" "$dir/small.cdx"
    mv "$crawl_dir/small.warc.gz" "$dir/small.warc.gz" # last: its presence means the crawl is complete
fi

size=$(stat -c %s "$dir/small.warc.gz")
copies=$(((mb * 1024 * 1024 + size - 1) / size))
for ((i = 0; i < copies; i++)); do
    name=$(printf 'small-%03d' "$i")
    if [[ ! -f "$dir/$name.warc.gz" || $(stat -c %s "$dir/$name.warc.gz") -ne $size ]]; then
        cp "$dir/small.warc.gz" "$dir/$name.warc.gz.tmp"
        mv "$dir/$name.warc.gz.tmp" "$dir/$name.warc.gz"
    fi
    # wget's CDX columns: a b a m s k r M V g u; g (10th) is the WARC file name.
    awk -v name="$name.warc.gz" 'NR == 1 { print; next } { $10 = name; print }' "$dir/small.cdx" >"$dir/$name.cdx"
done
for extra in "$dir"/small-*.warc.gz; do
    [[ -e "$extra" ]] || continue
    number=$(basename "$extra" .warc.gz)
    number=$((10#${number#small-}))
    if ((number >= copies)); then
        rm -f "$extra" "${extra%.warc.gz}.cdx"
    fi
done

python3 - "$dir" <<'EOF'
import gzip, os, sys
from collections import Counter
directory = sys.argv[1]
base = os.path.join(directory, "small.warc.gz")
# Record sizes from the uncompressed stream: each record's Content-Length.
kinds, sizes = Counter(), []
with gzip.open(base, "rb") as f:
    while True:
        line = f.readline()
        if not line:
            break
        if not line.startswith(b"WARC/"):
            continue
        headers = {}
        for line in iter(f.readline, b"\r\n"):
            if not line:
                break
            k, _, v = line.decode("utf-8", "replace").partition(":")
            headers[k.strip().lower()] = v.strip()
        length = int(headers.get("content-length", "0"))
        f.read(length)
        kinds[headers.get("warc-type", "?")] += 1
        sizes.append(length)
files = sorted(n for n in os.listdir(directory) if n.startswith("small-") and n.endswith(".warc.gz"))
compressed = sum(os.path.getsize(os.path.join(directory, n)) for n in files)
sizes.sort()
print(f"small.warc.gz: {os.path.getsize(base):,} bytes gzip, {len(sizes):,} records "
      + ", ".join(f"{k} {n:,}" for k, n in sorted(kinds.items())))
print(f"  record blocks: median {sizes[len(sizes) // 2]:,} bytes, {sum(s < 10240 for s in sizes):,} of {len(sizes):,} under 10 KiB (HTTP headers included), largest {sizes[-1]:,}")
print(f"{directory}: {len(files)} files small-000..small-{len(files) - 1:03d}.warc.gz, {compressed:,} bytes gzip ({compressed / 1048576:.1f} MiB)")
EOF
