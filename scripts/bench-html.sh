#!/usr/bin/env bash
# HTML analysis speed (issue 15): Sediment's `html::analyze` (decoding, text pile, title,
# headings, links, canonical, robots, description, language) against selectolax (Lexbor:
# parse, text, title and every link) on the same bytes, one thread each, in the same run:
# the distinct HTML payloads (status 200, text/html) of the wget crawl of Debian's
# documentation that scripts/make-bench-warc.sh makes. Reading the pages is not timed.
# Each contender runs RUNS times (default 3), interleaved; the best time is kept.
# Checked (scripts/bench-lib.sh; status 1 otherwise): both read the same pages, and an
# untimed selectolax pass that counts what Sediment counts comes within a stated tolerance
# of Sediment's totals: links (the elements and attributes of src/html/mod.rs's list, the
# value trimmed, not empty, resolved against <base href>, none of the ignored schemes; links
# in svg, template and noscript not counted) within LINK_TOLERANCE % (default 2), and the
# bytes of text (the body without head, nav, footer, script, style and the other elements
# Sediment drops, hidden ones too; white space collapsed) within TEXT_TOLERANCE % (default
# 5). The two parsers (html5ever's rules against Lexbor's) and the text separators between
# inline and block elements differ in small ways, hence a tolerance and not equality (on
# the fixture crawls and pywb's sample, 40 pages: links equal, text 0.2 % apart).
# BENCH_CORRUPT=html doubles Sediment's link count on purpose, to show the check failing.
# Usage: scripts/bench-html.sh [BENCH_DIR]    (default /work/bench-data)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
. scripts/bench-lib.sh
dir="${1:-/work/bench-data}"
[ -f "$dir/base.warc.gz" ] || scripts/make-bench-warc.sh "$dir"
python=$(bench_python)
"$python" -c 'import selectolax, fastwarc' 2>/dev/null \
  || "$python" -m pip install -q --disable-pip-version-check selectolax fastwarc >&2
cargo build --release --quiet --example html_bench
work=$(mktemp -d /tmp/bench-html.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The pages, once each (by payload digest), as `URL\tCONTENT-TYPE\tLENGTH\n` + bytes.
"$python" - "$dir/base.warc.gz" "$work/pages.bin" <<'PY'
import sys
from fastwarc.warc import ArchiveIterator, WarcRecordType
seen = set()
with open(sys.argv[2], "wb") as out:
    for record in ArchiveIterator(open(sys.argv[1], "rb"), record_types=WarcRecordType.response,
                                  parse_http=True):
        http = record.http_headers
        content_type = http.get("Content-Type", "") if http else ""
        if not http or http.status_code != 200 or "html" not in content_type.lower():
            continue
        body = record.reader.read()
        digest = record.headers.get("WARC-Payload-Digest")
        if digest in seen:
            continue
        seen.add(digest)
        url = record.headers.get("WARC-Target-URI").strip("<>")
        out.write(f"{url}\t{content_type}\t{len(body)}\n".encode() + body)
PY

cat > "$work/selectolax_bench.py" <<'PY'
import sys, time
from selectolax.lexbor import LexborHTMLParser
data = open(sys.argv[1], "rb").read()
pages, at = [], 0
while at < len(data):
    end = data.index(b"\n", at)
    url, content_type, length = data[at:end].decode().split("\t")
    pages.append(data[end + 1:end + 1 + int(length)])
    at = end + 1 + int(length)
start = time.perf_counter()
links = text = 0
for body in pages:
    tree = LexborHTMLParser(body)
    title = tree.css_first("title")
    _ = title.text() if title else None
    links += sum(1 for a in tree.css("a[href], link[href], img[src]"))
    text += len(tree.body.text(separator=" ") if tree.body else "")
seconds = time.perf_counter() - start
total = sum(map(len, pages))
print(f"pages={len(pages)} bytes={total} seconds={seconds:.3f} mb_per_s={total / 1e6 / seconds:.1f} links={links} text_bytes={text}")
PY

# What Sediment counts, counted with selectolax (not timed).
cat > "$work/selectolax_counts.py" <<'PY'
import re, sys
from urllib.parse import urljoin, urlsplit
from selectolax.lexbor import LexborHTMLParser
LINKS = {"a": ("href",), "area": ("href",), "link": ("href",), "img": ("src",),
         "iframe": ("src",), "frame": ("src",), "audio": ("src",), "video": ("src", "poster"),
         "source": ("src",), "embed": ("src",), "object": ("data",), "script": ("src",)}
IGNORED = {"javascript", "data", "about", "blob", "vbscript"}
DROPPED = ("head, nav, footer, [role=navigation], [role=contentinfo], script, style, template, "
           "noscript, svg, canvas, iframe, object, embed, video, audio, select, datalist, textarea, "
           "[hidden], [aria-hidden=true]")
HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
data = open(sys.argv[1], "rb").read()
pages = links = text = 0
at = 0
while at < len(data):
    end = data.index(b"\n", at)
    url, content_type, length = data[at:end].decode().split("\t")
    body = data[end + 1:end + 1 + int(length)]
    at = end + 1 + int(length)
    pages += 1
    tree = LexborHTMLParser(body)
    base = url
    first_base = tree.css_first("base[href]")
    if first_base is not None:
        base = urljoin(url, first_base.attributes.get("href") or "")
    skip = {n.mem_id for sel in ("svg", "template", "noscript") for t in tree.css(sel) for n in t.traverse()}
    for tag, attributes in LINKS.items():
        for node in tree.css(tag):
            if node.mem_id in skip:
                continue
            for attribute in attributes:
                value = (node.attributes.get(attribute) or "").strip(" \t\n\f\r")
                if not value:
                    continue
                try:
                    scheme = urlsplit(urljoin(base, value)).scheme
                except ValueError:
                    continue
                if scheme not in IGNORED:
                    links += 1
    if tree.body is None:
        continue
    dropped = tree.body.css(DROPPED) + [n for n in tree.body.css("[style]")
                                          if HIDDEN_STYLE.search(n.attributes.get("style") or "")]
    ids = {n.mem_id for n in dropped}
    def under_dropped(node):
        parent = node.parent
        while parent is not None:
            if parent.mem_id in ids:
                return True
            parent = parent.parent
        return False
    # The outermost dropped elements only: a descendant goes with its ancestor.
    for node in [n for n in dropped if not under_dropped(n)]:
        node.decompose()
    text += len(" ".join(tree.body.text(separator=" ").split()).encode())
print(f"pages={pages} links={links} text_bytes={text}")
PY

field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }
best_s=""; best_x=""
for round in $(seq "${RUNS:-3}"); do
  s=$("$CARGO_TARGET_DIR/release/examples/html_bench" "$work/pages.bin")
  x=$("$python" "$work/selectolax_bench.py" "$work/pages.bin")
  echo "round $round: sediment $s"
  echo "round $round: selectolax $x"
  t=$(echo "$s" | field seconds); u=$(echo "$x" | field seconds)
  { [ -z "$best_s" ] || (( $(echo "$t < $best_s" | bc -l) )); } && best_s=$t
  { [ -z "$best_x" ] || (( $(echo "$u < $best_x" | bc -l) )); } && best_x=$u
done
reference=$("$python" "$work/selectolax_counts.py" "$work/pages.bin")
echo "selectolax, counting what Sediment counts (not timed): $reference"
check_equal "pages analysed" "$(echo "$s" | field pages)" "$(echo "$reference" | field pages)"
check_within "links" "$(bench_corrupt_value html "$(echo "$s" | field links)")" \
  "$(echo "$reference" | field links)" "${LINK_TOLERANCE:-2}"
check_within "bytes of text" "$(echo "$s" | field text_bytes)" "$(echo "$reference" | field text_bytes)" \
  "${TEXT_TOLERANCE:-5}"
mb=$(echo "$s" | field bytes | awk '{print $1 / 1e6}')
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "$(echo "$s" | field pages) distinct HTML pages, $mb MB"
printf '%-44s %8s s %8s MB/s\n' "sediment html::analyze (1 thread)" "$best_s" "$(echo "scale=1; $mb / $best_s" | bc)"
printf '%-44s %8s s %8s MB/s\n' "selectolax parse+title+links+text (1 thread)" "$best_x" "$(echo "scale=1; $mb / $best_x" | bc)"
echo "sediment / selectolax (rate): $(echo "scale=2; $best_x / $best_s" | bc)"
# The tree builders alone, and the fast path held to html5ever's trees on every page.
"$CARGO_TARGET_DIR/release/examples/html_bench" "$work/pages.bin" --paths | tail -n1
