#!/usr/bin/env python3
"""Writes fixtures/site/run/: a small documentation site built like Sphinx output, for the
crawl-run fixture (scripts/make-fixture-run.sh).

What it exercises (issue 14):
  * pages large enough that wget's --warc-max-size cuts one crawl into several WARC files;
  * `<link rel="canonical" href="file:///usr/share/doc/…">` on every guide page, as Sphinx
    writes into locally built documentation (a canonical a crawler cannot fetch);
  * `<a class="headerlink" href="#…">¶</a>` permalinks in the headlines;
  * an immediate meta refresh (moved.html → guide/intro.html) and a delayed one (later.html);
  * a page whose canonical is another web URL (print.html → guide/intro.html);
  * `/guide` without its trailing slash: the server answers 301 to `/guide/`.
Deterministic: the filler text comes from a fixed vocabulary and a seeded generator.

usage: make-fixture-run-site.py DIR
"""

import os
import random
import sys

WORDS = (
    "sediment core layer varve lake basin pollen charcoal isotope radiocarbon sample depth "
    "diatom silt clay sand gravel flood drought season deposit profile boring drill survey "
    "chronology calibration tephra marker horizon organic mineral density magnetic "
    "susceptibility grain size sorting turbidite slump erosion catchment inflow outflow"
).split()

GUIDE = [
    ("intro", "Introduction to lake cores"),
    ("sampling", "Sampling a sediment core"),
    ("dating", "Dating the layers"),
    ("pollen", "Pollen and charcoal counts"),
    ("isotopes", "Stable isotopes"),
    ("archive", "Archiving the cores"),
]


def paragraphs(rng, n, words=90):
    out = []
    for _ in range(n):
        sentence = " ".join(rng.choice(WORDS) for _ in range(words))
        out.append(f"<p>{sentence.capitalize()}.</p>")
    return "\n".join(out)


def page(title, body, head=""):
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{title} — Lake Docs</title>\n{head}</head>\n<body>\n"
        "<nav><a href=\"/\">Lake Docs</a> · <a href=\"/guide/\">Guide</a></nav>\n"
        f"<main>\n{body}\n</main>\n<footer>Lake Docs, built with a documentation generator.</footer>\n"
        "</body>\n</html>\n"
    )


def headline(level, text, anchor):
    return (
        f"<h{level} id=\"{anchor}\">{text}<a class=\"headerlink\" href=\"#{anchor}\" "
        f"title=\"Permalink to this headline\">¶</a></h{level}>"
    )


def main():
    root = sys.argv[1]
    rng = random.Random(14)
    files = {}
    links = "\n".join(
        f"<li><a href=\"/guide/{slug}.html\">{title}</a></li>" for slug, title in GUIDE
    )
    files["index.html"] = page(
        "Lake Docs",
        headline(1, "Lake Docs", "lake-docs")
        + "\n<ul>\n" + links + "\n</ul>\n"
        + "<p>See also <a href=\"/guide\">the guide</a>, <a href=\"/moved.html\">the old "
        + "introduction</a>, <a href=\"/later.html\">the notice</a> and "
        + "<a href=\"/print.html\">the printable introduction</a>.</p>\n"
        + paragraphs(rng, 4),
    )
    files["guide/index.html"] = page(
        "Guide",
        headline(1, "Guide", "guide") + "\n<ul>\n" + links + "\n</ul>\n" + paragraphs(rng, 2),
    )
    for slug, title in GUIDE:
        canonical = f"<link rel=\"canonical\" href=\"file:///usr/share/doc/lake-docs/html/guide/{slug}.html\">\n"
        body = [headline(1, title, slug)]
        for i in range(3):
            body.append(headline(2, f"Part {i + 1}", f"{slug}-part-{i + 1}"))
            body.append(paragraphs(rng, 3))
        files[f"guide/{slug}.html"] = page(title, "\n".join(body), canonical)
    files["moved.html"] = page(
        "Moved",
        "<h1>This page has moved</h1>\n<p>Go to <a href=\"/guide/intro.html\">the introduction</a>.</p>",
        "<meta http-equiv=\"refresh\" content=\"0; url=/guide/intro.html\">\n",
    )
    files["later.html"] = page(
        "Notice",
        "<h1>Notice</h1>\n<p>The front page will load in a moment.</p>",
        "<meta http-equiv=\"refresh\" content=\"30; url=/\">\n",
    )
    files["print.html"] = page(
        "Introduction (printable)",
        headline(1, "Introduction to lake cores", "print") + "\n" + paragraphs(rng, 2),
        "<link rel=\"canonical\" href=\"/guide/intro.html\">\n",
    )
    files["robots.txt"] = "User-agent: *\nDisallow: /private/\n"
    for name, text in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
