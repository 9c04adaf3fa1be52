#!/bin/sh
# Makes fixtures/wget-cdx/: a small real crawl by GNU wget with --warc-cdx, against a local
# web server (python3 -m http.server on 127.0.0.1) serving a page that links to a PDF, a
# text file whose name has a space, a directory without its trailing slash (301 redirect)
# and a missing page (404). Outputs crawl.cdx (wget's ` CDX a b a m s k r M V g u` format)
# and crawl.warc.gz. Usage: scripts/make-wget-cdx-fixture.sh  (from the repository root)
set -eu
out="$(pwd)/fixtures/wget-cdx"
corpus="$(pwd)/../shared/corpus"
work="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/site/sub" "$out"
cp "$corpus/sandcrawler/dummy.pdf" "$work/site/paper.pdf"
printf 'hello\n' > "$work/site/notes one.txt"
printf '<html><body>sub</body></html>\n' > "$work/site/sub/index.html"
cat > "$work/site/index.html" <<'HTML'
<!DOCTYPE html>
<html><head><title>fixture</title></head><body>
<a href="paper.pdf">paper</a> <a href="notes%20one.txt">notes</a>
<a href="sub">sub</a> <a href="missing.html">missing</a>
</body></html>
HTML
port=8766
(cd "$work/site" && exec python3 -m http.server "$port" --bind 127.0.0.1) >/dev/null 2>&1 &
server=$!
sleep 1
cd "$work"
wget -q -r -l 2 --no-verbose --warc-file=crawl --warc-cdx \
  "http://127.0.0.1:$port/" || true   # 404s make wget exit non-zero
cp crawl.cdx crawl.warc.gz "$out/"
echo "wrote $out/crawl.cdx ($(wc -l < "$out/crawl.cdx") lines) and $out/crawl.warc.gz"
