#!/usr/bin/env python3
"""Writes the summary-database benchmark corpus: two crawls of a generated web site as WARC
files (gzip per record, written with warcio) and a list of search queries.

The site has PAGES distinct HTML pages (default 12,000) over 8 hosts. Their text is real prose:
paragraphs taken from the HTML documentation installed on this machine (Python, PostgreSQL,
Erlang/OTP; see scripts/make-bench-warc.sh), else from /usr/share/common-licenses, mixed per
page by a seeded random generator, so every page is different and the word statistics are
those of real text. Each page has a header with a nav bar, a main article (h1, h2/h3
sections, paragraphs, lists, sometimes code and a blockquote), an aside and a footer, links to
other pages of its host and sometimes to other hosts; every 20th page is an index page (a
list of links); 1 in 50 pages exists under a second URL with identical bytes.

crawl 2 (a day later) re-fetches every page: 10 % changed (a paragraph added), 2 % gone
(404), 2 % new pages; the rest unchanged (same bytes).

Usage: scripts/make-summary-bench.py [--pages N] [--out DIR] [--seed S] [--queries N]
Writes DIR/crawl1.warc.gz, DIR/crawl2.warc.gz, DIR/queries.txt (one query a line).
DIR defaults to /work/bench-data/summary (outside the repository; nothing of it is committed).
"""

import argparse
import glob
import html
import io
import os
import random
import re
import sys
from datetime import datetime, timedelta, timezone

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

DOC_GLOBS = [
    "/usr/share/doc/python3.11/html/**/*.html",
    "/usr/share/doc/postgresql-doc-15/html/*.html",
    "/usr/share/doc/erlang-doc/**/*.html",
]
TAG = re.compile(r"<[^>]+>")
PARAGRAPH = re.compile(r"<p[^>]*>(.*?)</p>", re.S | re.I)
SPACE = re.compile(r"\s+")
LANGUAGES = ["en", "en", "en", "en", "en-GB", "de", "fr"]


def paragraphs(limit_files=4000):
    """Real paragraphs of prose (40-800 characters) from installed documentation."""
    found = []
    files = []
    for pattern in DOC_GLOBS:
        files.extend(sorted(glob.glob(pattern, recursive=True)))
    for path in files[:limit_files]:
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        for raw in PARAGRAPH.findall(text):
            p = SPACE.sub(" ", html.unescape(TAG.sub("", raw))).strip()
            if 40 <= len(p) <= 800:
                found.append(p)
    if len(found) < 1000:
        for path in sorted(glob.glob("/usr/share/common-licenses/*")):
            try:
                text = open(path, encoding="utf-8", errors="replace").read()
            except OSError:
                continue
            for block in text.split("\n\n"):
                p = SPACE.sub(" ", block).strip()
                if 40 <= len(p) <= 800:
                    found.append(p)
    if not found:
        sys.exit("no prose found (install python3.11-doc or postgresql-doc-15)")
    return found


def words_of(paragraph):
    return [w for w in re.findall(r"[A-Za-z][A-Za-z-]{2,}", paragraph)]


class Site:
    def __init__(self, rng, pool, pages, hosts=8):
        self.rng = rng
        self.pool = pool
        self.hosts = [f"http://docs{i}.bench.example" for i in range(hosts)]
        self.pages = []  # (url, host index, is_index)
        for n in range(pages):
            host = n % hosts
            section = rng.choice(["guide", "reference", "notes", "blog", "manual", "faq"])
            url = f"{self.hosts[host]}/{section}/page-{n:06d}.html"
            self.pages.append((url, host, n % 20 == 0))

    def title(self, rng):
        words = words_of(rng.choice(self.pool))
        if len(words) < 3:
            words = ["Untitled", "page", "notes"]
        start = rng.randrange(max(1, len(words) - 4))
        return " ".join(words[start : start + rng.randint(2, 6)]).capitalize()

    def links(self, rng, host, count):
        same = [p for p in rng.sample(self.pages, min(len(self.pages), count * 3)) if p[1] == host]
        chosen = same[:count] or rng.sample(self.pages, 1)
        if rng.random() < 0.3:
            chosen.append(rng.choice(self.pages))
        return [(url, self.title(rng)) for url, _, _ in chosen]

    def page(self, n, extra_paragraph=None):
        url, host, is_index = self.pages[n]
        rng = random.Random(n * 7919 + 17)
        lang = LANGUAGES[n % len(LANGUAGES)]
        title = self.title(rng)
        nav = "".join(
            f'<a href="{u}">{html.escape(t)}</a> ' for u, t in self.links(rng, host, 6)
        )
        out = io.StringIO()
        out.write(f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">')
        out.write(f"<title>{html.escape(title)} - Docs {host}</title>")
        out.write(f'<meta name="description" content="{html.escape(rng.choice(self.pool)[:150])}">')
        if n % 7 == 0:
            day = datetime(2020, 1, 1) + timedelta(days=n % 1500)
            out.write(f'<meta property="article:published_time" content="{day:%Y-%m-%d}T09:00:00Z">')
        out.write('<link rel="stylesheet" href="/static/site.css"></head><body>')
        out.write(f'<header><a href="{self.hosts[host]}/">Docs {host}</a><nav>{nav}</nav></header>')
        out.write("<main>")
        out.write(f"<h1>{html.escape(title)}</h1>")
        if is_index:
            out.write("<ul>")
            for u, t in self.links(rng, host, 40):
                out.write(f'<li><a href="{u}">{html.escape(t)}</a></li>')
            out.write("</ul>")
        else:
            out.write("<article>")
            for _ in range(rng.randint(2, 5)):
                out.write(f"<h2>{html.escape(self.title(rng))}</h2>")
                for _ in range(rng.randint(2, 5)):
                    p = html.escape(rng.choice(self.pool))
                    if rng.random() < 0.3:
                        u, t = self.links(rng, host, 1)[0]
                        p += f' See <a href="{u}">{html.escape(t)}</a>.'
                    out.write(f"<p>{p}</p>")
                if rng.random() < 0.3:
                    out.write("<ul>")
                    for _ in range(rng.randint(2, 6)):
                        out.write(f"<li>{html.escape(self.title(rng))}</li>")
                    out.write("</ul>")
                if rng.random() < 0.2:
                    code = " ".join(words_of(rng.choice(self.pool))[:8]).lower()
                    out.write(f"<pre><code>{html.escape(code)}()</code></pre>")
                if rng.random() < 0.1:
                    out.write(f"<blockquote><p>{html.escape(rng.choice(self.pool))}</p></blockquote>")
            if extra_paragraph:
                out.write(f"<p>{html.escape(extra_paragraph)}</p>")
            out.write("</article>")
        out.write("</main>")
        out.write(f"<aside><h3>Related</h3><p>{html.escape(rng.choice(self.pool)[:200])}</p></aside>")
        out.write(f"<footer><p>Docs {host} - generated benchmark page {n}</p></footer>")
        out.write("</body></html>\n")
        return url, out.getvalue().encode("utf-8")


def write_crawl(path, records, start):
    """records: (url, status, body bytes); one second between fetches."""
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        info = writer.create_warcinfo_record(
            os.path.basename(path),
            {"software": "make-summary-bench.py", "operator": "Sediment benchmark"},
        )
        writer.write_record(info)
        for i, (url, status, body) in enumerate(records):
            date = (start + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
            reason = "OK" if status == 200 else "Not Found"
            headers = StatusAndHeaders(
                f"{status} {reason}",
                [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))],
                protocol="HTTP/1.1",
            )
            record = writer.create_warc_record(
                url,
                "response",
                payload=io.BytesIO(body),
                http_headers=headers,
                warc_headers_dict={"WARC-Date": date},
            )
            writer.write_record(record)


def queries(rng, pool, count):
    out = []
    while len(out) < count:
        words = words_of(rng.choice(pool))
        if len(words) < 4:
            continue
        kind = len(out) % 10
        a = rng.randrange(len(words) - 3)
        if kind < 4:
            q = words[a].lower()
        elif kind < 7:
            q = f"{words[a].lower()} {rng.choice(words).lower()}"
        elif kind == 7:
            q = '"' + " ".join(words[a : a + 2]) + '"'
        elif kind == 8:
            q = f'{words[a].lower()} -"{rng.choice(words).lower()}"'
        else:
            q = f"{words[a].lower()} lang:en site:docs{rng.randrange(8)}.bench.example"
        out.append(q)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=12000)
    parser.add_argument("--out", default="/work/bench-data/summary")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--queries", type=int, default=1000)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    pool = paragraphs()
    site = Site(rng, pool, args.pages)
    duplicate_of = {n: n for n in range(args.pages) if n % 50 == 25}

    crawl1 = []
    bodies = {}
    for n in range(args.pages):
        url, body = site.page(n)
        bodies[n] = body
        crawl1.append((url, 200, body))
        if n in duplicate_of:
            crawl1.append((url.replace(".html", "-copy.html"), 200, body))
    start = datetime(2024, 3, 1, tzinfo=timezone.utc)
    write_crawl(os.path.join(args.out, "crawl1.warc.gz"), crawl1, start)

    crawl2 = []
    change_rng = random.Random(args.seed + 1)
    for n in range(args.pages):
        url = site.pages[n][0]
        roll = change_rng.random()
        if roll < 0.02:
            crawl2.append((url, 404, b"<html><title>Not found</title><p>Not found.</p></html>"))
        elif roll < 0.12:
            _, body = site.page(n, extra_paragraph="Update: " + change_rng.choice(pool))
            crawl2.append((url, 200, body))
        else:
            crawl2.append((url, 200, bodies[n]))
        if n in duplicate_of:
            crawl2.append((url.replace(".html", "-copy.html"), 200, bodies[n]))
    extra = Site(random.Random(args.seed + 2), pool, args.pages // 50)
    for n in range(len(extra.pages)):
        url, body = extra.page(n)
        crawl2.append((url.replace("/page-", "/new-page-"), 200, body))
    write_crawl(os.path.join(args.out, "crawl2.warc.gz"), crawl2, start + timedelta(days=1))

    with open(os.path.join(args.out, "queries.txt"), "w", encoding="utf-8") as f:
        for q in queries(random.Random(args.seed + 3), pool, args.queries):
            f.write(q + "\n")
    print(
        f"{args.out}: crawl1 {len(crawl1)} responses, crawl2 {len(crawl2)} responses, "
        f"{len(pool)} source paragraphs"
    )


if __name__ == "__main__":
    main()
