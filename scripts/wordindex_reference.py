#!/usr/bin/env python3
"""The latest capture of every http(s) URL of some WARC files, as warcio and Python's own
HTML parser see them: the independent reference for tests/project_locust.rs and
tests/project_jdbm.rs. Usage: wordindex_reference.py WARC...

Prints one JSON object: URL -> {"status", "date" (WARC-Date), "md5" (hex MD5 of the body,
de-chunked and decoded by warcio, for 2xx), "location" (resolved redirect target, for 3xx),
"last_modified", "links" (for 2xx HTML: the resolved http(s) targets of a[href],
area[href], link[href], img[src], iframe[src], frame[src], audio[src], video[src],
video[poster], source[src], embed[src], object[data], script[src], against the first
<base href>, without fragments and without the page itself, distinct, in order)}.
The latest capture is the one with the greatest (WARC-Date, file position, offset)."""

import hashlib
import json
import sys
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit, urlunsplit

from warcio.archiveiterator import ArchiveIterator

LINK_ATTRS = {
    "a": ["href"],
    "area": ["href"],
    "link": ["href"],
    "img": ["src"],
    "iframe": ["src"],
    "frame": ["src"],
    "audio": ["src"],
    "video": ["src", "poster"],
    "source": ["src"],
    "embed": ["src"],
    "object": ["data"],
    "script": ["src"],
}


def normalize(url):
    """http(s) URLs only, fragment removed, empty path as "/"; None otherwise."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    path = parts.path or "/"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


class Links(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.base = None
        self.values = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "base" and self.base is None and attrs.get("href"):
            self.base = attrs["href"].strip()
        for name in LINK_ATTRS.get(tag, []):
            value = attrs.get(name)
            if value and value.strip():
                self.values.append(value.strip())

    handle_startendtag = handle_starttag


def links_of(html, page_url):
    parser = Links()
    parser.feed(html)
    base = urljoin(page_url, parser.base) if parser.base else page_url
    out = []
    for value in parser.values:
        target = normalize(urljoin(base, value))
        if target and target != page_url and target not in out:
            out.append(target)
    return out


def main(paths):
    bodies = {}  # payload digest -> body of the first response with it
    captures = []
    for position, path in enumerate(paths):
        with open(path, "rb") as f:
            it = ArchiveIterator(f)
            for record in it:
                if record.rec_type not in ("response", "revisit"):
                    continue
                url = normalize(record.rec_headers.get_header("WARC-Target-URI") or "")
                if url is None or record.http_headers is None:
                    continue
                digest = record.rec_headers.get_header("WARC-Payload-Digest")
                body = None
                if record.rec_type == "response":
                    body = record.content_stream().read()
                    if digest and digest not in bodies:
                        bodies[digest] = body
                # Only after reading: asking for the offset first consumes the record.
                offset = it.get_record_offset()
                http = record.http_headers
                captures.append({
                    "url": url,
                    "key": (record.rec_headers.get_header("WARC-Date"), position, offset),
                    "status": int(http.get_statuscode() or 0),
                    "digest": digest,
                    "body": body,
                    "content_type": http.get_header("Content-Type") or "",
                    "location": http.get_header("Location"),
                    "last_modified": http.get_header("Last-Modified"),
                })
    latest = {}
    for capture in captures:
        if capture["url"] not in latest or capture["key"] > latest[capture["url"]]["key"]:
            latest[capture["url"]] = capture
    out = {}
    for url, capture in sorted(latest.items()):
        entry = {
            "status": capture["status"],
            "date": capture["key"][0],
            "last_modified": capture["last_modified"],
            "links": [],
        }
        status = capture["status"]
        if 300 <= status < 400 and capture["location"]:
            entry["location"] = normalize(urljoin(url, capture["location"]))
        if 200 <= status < 300:
            body = capture["body"]
            if body is None:
                body = bodies.get(capture["digest"])
            if body is not None:
                entry["md5"] = hashlib.md5(body).hexdigest()
                if capture["content_type"].split(";")[0].strip().lower() == "text/html":
                    entry["links"] = links_of(body.decode("utf-8", "replace"), url)
        out[url] = entry
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
