#!/usr/bin/env bash
# HTML analysis speed (issue 15): Sediment's `html::analyze` (decoding, text pile, title,
# headings, links, canonical, robots, description, language) against selectolax (Lexbor:
# parse, text, title and every link) on the same bytes, one thread each, in the same run:
# the distinct HTML payloads (status 200, text/html) of the wget crawl of Debian's
# documentation that scripts/make-bench-warc.sh makes. Reading the pages is not timed.
# Each contender runs RUNS times (default 3), interleaved; the best time is kept.
# Usage: scripts/bench-html.sh [BENCH_DIR]    (default /work/bench-data)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
dir="${1:-/work/bench-data}"
[ -f "$dir/base.warc.gz" ] || scripts/make-bench-warc.sh "$dir"
python3 -c 'import selectolax, fastwarc' 2>/dev/null \
  || python3 -m pip install -q --disable-pip-version-check selectolax fastwarc >&2
cargo build --release --quiet --example html_bench
work=$(mktemp -d /tmp/bench-html.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The pages, once each (by payload digest), as `URL\tCONTENT-TYPE\tLENGTH\n` + bytes.
python3 - "$dir/base.warc.gz" "$work/pages.bin" <<'PY'
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

field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }
best_s=""; best_x=""
for round in $(seq "${RUNS:-3}"); do
  s=$("$CARGO_TARGET_DIR/release/examples/html_bench" "$work/pages.bin")
  x=$(python3 "$work/selectolax_bench.py" "$work/pages.bin")
  echo "round $round: sediment $s"
  echo "round $round: selectolax $x"
  t=$(echo "$s" | field seconds); u=$(echo "$x" | field seconds)
  { [ -z "$best_s" ] || (( $(echo "$t < $best_s" | bc -l) )); } && best_s=$t
  { [ -z "$best_x" ] || (( $(echo "$u < $best_x" | bc -l) )); } && best_x=$u
done
mb=$(echo "$s" | field bytes | awk '{print $1 / 1e6}')
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "$(echo "$s" | field pages) distinct HTML pages, $mb MB"
printf '%-44s %8s s %8s MB/s\n' "sediment html::analyze (1 thread)" "$best_s" "$(echo "scale=1; $mb / $best_s" | bc)"
printf '%-44s %8s s %8s MB/s\n' "selectolax parse+title+links+text (1 thread)" "$best_x" "$(echo "scale=1; $mb / $best_x" | bc)"
echo "sediment / selectolax (rate): $(echo "scale=2; $best_x / $best_s" | bc)"
# The tree builders alone, and the fast path held to html5ever's trees on every page.
"$CARGO_TARGET_DIR/release/examples/html_bench" "$work/pages.bin" --paths | tail -n1
