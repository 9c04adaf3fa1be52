#!/usr/bin/env python3
"""Independent reference for `sediment project crawl` (used by tests/project_crawl.rs).

Reads WARC files with warcio and prints, as one JSON object, what the crawl database of
those WARCs must hold (the mapping is documented in schemas/crawl.sql):

  captures   one entry per response/revisit/resource record of an http(s) URL (a crawl log
             entry is a fetch of a web page: wget's metadata:// records and Heritrix's dns:
             records are not): URL, time, status, exit code, whether it has a file row, the
             decoded HTML text, the redirect target (Location, or a <meta http-equiv=refresh>
             with delay 0), ...
  candidates every http(s) URL captured or discovered (links, canonicals, redirect targets)
  agents     one per WARC file (each file given here is its own crawl run): name,
             User-Agent, first and last capture time

Written from the seed's rules and the HTML standard, with Python's own parsers (html.parser,
urllib), not from sediment's code.

usage: crawl_reference.py FILE.warc[.gz]...
"""

import base64
import gzip
import hashlib
import json
import os
import re
import sys
import zlib
from collections import Counter
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from html.parser import HTMLParser
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

from warcio.archiveiterator import ArchiveIterator

DEFAULT_PORTS = {"http": 80, "https": 443}
HTML_TYPES = ("text/html", "application/xhtml+xml")
# The other types whose text is had (README, "What the search finds"): such a document is
# ingested (exit code 20) like an HTML page; anything else is a file of unknown type (29).
TEXT_TYPES = {
    "application/pdf", "text/plain", "text/x-tex", "text/markdown", "text/x-markdown",
    "text/xml", "application/xml", "application/jats+xml", "application/tei+xml",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.oasis.opendocument.text", "application/vnd.oasis.opendocument.spreadsheet",
    "application/vnd.oasis.opendocument.presentation", "application/epub+zip",
}
with open(os.path.join(os.path.dirname(__file__), "..", "schemas", "mime-aliases.json")) as aliases_file:
    MIME_ALIASES = {a["alias"]: a["canonical"] for a in json.load(aliases_file)["aliases"]}
MAX_TEXT_BYTES = 1 << 20
# element -> attributes holding a URL (the set the crawl projection collects links from)
LINK_ATTRIBUTES = {
    "a": ["href"], "area": ["href"], "link": ["href"], "img": ["src"], "iframe": ["src"],
    "frame": ["src"], "audio": ["src"], "video": ["src", "poster"], "source": ["src"],
    "embed": ["src"], "object": ["data"], "script": ["src"],
}
# Content the HTML parser of a browser does not turn into elements (scripting on).
OPAQUE = {"noscript", "template", "svg"}


def normalize(url):
    """WHATWG-like serialization without fragment, for http(s) URLs; None otherwise."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname.lower()
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    if parts.username:
        netloc = parts.username + (":" + parts.password if parts.password else "") + "@" + netloc
    # the WHATWG path and (special-scheme) query percent-encode sets
    path = quote(parts.path or "/", safe="!$%&'()*+,-./:;=@[]^_|~")
    query = quote(parts.query, safe="!$%&()*+,-./:;=?@[]^_`{|}~")
    return urlunsplit((scheme, netloc, path, query, ""))


def unix(dt):
    return int(dt.replace(tzinfo=dt.tzinfo or timezone.utc).timestamp())


def warc_date(value):
    digits = re.sub(r"[^0-9]", "", value.split(".")[0].rstrip("Z"))[:14]
    return unix(datetime.strptime(digits, "%Y%m%d%H%M%S"))


def http_date(value):
    try:
        return unix(parsedate_to_datetime(value))
    except (TypeError, ValueError, IndexError):
        return None


def dechunk(data):
    out, pos = bytearray(), 0
    while pos < len(data):
        end = data.find(b"\r\n", pos)
        if end < 0:
            break
        try:
            size = int(data[pos:end].split(b";")[0].strip() or b"0", 16)
        except ValueError:
            break
        if size == 0:
            break
        out += data[end + 2:end + 2 + size]
        pos = end + 2 + size + 2
    return bytes(out)


def http_body(raw, http):
    """The body as the server meant it: de-chunked, Content-Encoding removed."""
    if "chunked" in (http.get_header("Transfer-Encoding") or "").lower():
        raw = dechunk(raw)
    encoding = (http.get_header("Content-Encoding") or "").strip().lower()
    if encoding in ("gzip", "x-gzip"):
        raw = gzip.decompress(raw)
    elif encoding == "deflate":
        try:
            raw = zlib.decompress(raw)
        except zlib.error:
            raw = zlib.decompress(raw, -15)
    return raw


def charset_of(content_type):
    for param in (content_type or "").split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            value = value.strip().strip("\"'").strip()
            if value:
                return value
    return None


def decode_1252(data):
    """WHATWG windows-1252: Python's cp1252 plus the five bytes it leaves undefined."""
    return "".join(
        bytes([b]).decode("cp1252") if b not in (0x81, 0x8D, 0x8F, 0x90, 0x9D) else chr(b)
        for b in data
    )


WINDOWS_1252_LABELS = {"iso-8859-1", "iso8859-1", "latin1", "l1", "us-ascii", "ascii",
                       "windows-1252", "cp1252", "iso_8859-1", "x-cp1252", "cp819"}


def decode_with(label, data):
    label = label.strip().lower()
    if label in WINDOWS_1252_LABELS:
        return decode_1252(data)
    try:
        return data.decode(label, errors="replace")
    except LookupError:
        return None


def decode_html(data, content_type):
    """BOM, then the Content-Type charset, then <meta> in the first 1024 bytes, then UTF-8."""
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"),
                       (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            return data[len(bom):].decode(codec, errors="replace")
    label = charset_of(content_type)
    if label:
        text = decode_with(label, data)
        if text is not None:
            return text
    head = data[:1024].decode("latin-1")
    match = re.search(r"<meta[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9_:.\-]+)", head, re.I)
    if match:
        label = match.group(1)
        if label.lower().startswith("utf-16"):
            label = "utf-8"
        text = decode_with(label, data)
        if text is not None:
            return text
    return data.decode("utf-8", errors="replace")


class PageParser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.base = None
        self.canonical = None
        self.refresh = None
        self.noindex = False
        self.hrefs = []
        self.opaque = 0

    def handle_starttag(self, tag, attrs):
        if tag in OPAQUE:
            self.opaque += 1
            return
        if self.opaque:
            return
        attrs = {k: (v or "") for k, v in attrs}
        if tag == "base" and self.base is None and attrs.get("href", "").strip():
            self.base = attrs["href"].strip()
        if tag == "link" and self.canonical is None and "href" in attrs:
            if "canonical" in attrs.get("rel", "").lower().split():
                self.canonical = attrs["href"].strip()
        if (tag == "meta" and self.refresh is None
                and attrs.get("http-equiv", "").strip().lower() == "refresh"):
            self.refresh = attrs.get("content", "")
        if tag == "meta" and attrs.get("name", "").strip().lower() == "robots":
            tokens = re.split(r"[\s,]+", attrs.get("content", "").lower())
            if "noindex" in tokens or "none" in tokens:
                self.noindex = True
        for attribute in LINK_ATTRIBUTES.get(tag, []):
            value = attrs.get(attribute, "").strip()
            if value:
                self.hrefs.append(value)

    def handle_startendtag(self, tag, attrs):
        if tag not in OPAQUE:
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag in OPAQUE and self.opaque:
            self.opaque -= 1


def usable(url):
    """A canonical or refresh target a crawler can fetch: http(s) with a host."""
    parts = urlsplit(url)
    return parts.scheme.lower() in DEFAULT_PORTS and bool(parts.hostname)


def refresh_target(content, base):
    """The target of a <meta http-equiv=refresh> with delay 0, else None."""
    match = re.match(r"\s*(\d+)(?:\.[\d.]*)?\s*[;,]?\s*(.*)$", content or "", re.S)
    if not match or int(match.group(1)) != 0:
        return None
    rest = match.group(2)
    url_match = re.match(r"url\s*=\s*(.*)$", rest, re.I | re.S)
    if url_match:
        rest = url_match.group(1)
    rest = rest.strip()
    if rest[:1] in ("'", '"'):
        quote = rest[0]
        rest = rest[1:].split(quote, 1)[0]
    rest = rest.strip()
    if not rest:
        return None
    return urljoin(base, rest)


def exit_code(status, has_payload, has_location, html_verdict):
    if status is None:
        return content_exit(html_verdict) if has_payload else 42
    if 200 <= status <= 299:
        return content_exit(html_verdict)
    table = {301: 31, 308: 31, 302: 32, 303: 32, 307: 32, 304: 34, 401: 171, 403: 171,
             404: 44, 410: 41, 429: 49}
    if status in table:
        return table[status]
    if 300 <= status <= 399:
        return 32 if has_location else 42
    if 400 <= status <= 499:
        return 40
    if 502 <= status <= 505:
        return 100
    if 500 <= status <= 599:
        return 50
    return 42


def content_exit(html_verdict):
    if html_verdict is None:
        return 29
    if html_verdict == "noindex":
        return 171
    if html_verdict == "canonical":
        return 180
    return 20


def main(paths):
    records = []
    payloads = {}  # digest -> (raw payload length, decoded body, content type)
    agents = []
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        info, user_agents, times = {}, Counter(), []
        with open(path, "rb") as f:
            for record in ArchiveIterator(f):
                kind = record.rec_type
                headers = record.rec_headers
                if kind == "warcinfo":
                    for line in record.content_stream().read().decode("utf-8", "replace").splitlines():
                        key, sep, value = line.partition(":")
                        if sep:
                            info.setdefault(key.strip().lower(), value.strip())
                    continue
                if kind == "request":
                    ua = record.http_headers and record.http_headers.get_header("User-Agent")
                    if ua:
                        user_agents[ua] += 1
                    continue
                if kind not in ("response", "revisit", "resource"):
                    continue
                http = record.http_headers if kind != "resource" else None
                status = int(http.get_statuscode()) if http and http.get_statuscode() else None
                content_type = (http.get_header("Content-Type") if http
                                else headers.get_header("Content-Type"))
                if kind == "revisit":
                    declared = headers.get_header("WARC-Payload-Digest") or ""
                    digest = declared.split(":", 1)[-1] if declared else None
                    size = None
                else:
                    raw = record.raw_stream.read()
                    digest = base64.b32encode(hashlib.sha1(raw).digest()).decode()
                    size = len(raw)
                    body = http_body(raw, http) if http else raw
                    payloads.setdefault(digest, (size, body, content_type))
                time = warc_date(headers.get_header("WARC-Date"))
                target = headers.get_header("WARC-Target-URI").strip("<>")
                if urlsplit(target).scheme.lower() not in DEFAULT_PORTS:
                    continue
                times.append(time)
                records.append({
                    "url": target,
                    "time": time, "kind": kind, "status": status, "digest": digest,
                    "size": size, "content_type": content_type,
                    "location": http.get_header("Location") if http else None,
                    "etag": http.get_header("ETag") if http else None,
                    "last_modified": http.get_header("Last-Modified") if http else None,
                })
        parts = [info[k] if k == "software" else f"operator: {info[k]}"
                 for k in ("software", "operator") if info.get(k)]
        agents.append({
            "name": "; ".join(parts + [f"warc: {name}"]),
            # the most frequent request User-Agent, ties to the smallest
            "http_user_agent": (sorted(user_agents.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
                                if user_agents else info.get("http-header-user-agent")),
            "time_started": min(times), "time_finished": max(times),
        })

    captures, candidates = [], set()
    for r in records:
        url, status = r["url"], r["status"]
        essence = (r["content_type"] or "").split(";")[0].strip().lower()
        has_payload = r["digest"] is not None
        content = has_payload and (status is None or 200 <= status <= 299)
        original = payloads.get(r["digest"]) if has_payload else None
        verdict, text, links, canonical, refresh = None, None, [], None, None
        stored = None
        if content and essence in HTML_TYPES:
            verdict = "indexed"
            if original is not None:
                text = decode_html(original[1], original[2])
                # file_text is cut at 1 MiB (the default of --max-text-bytes), at a
                # character boundary; the links come from the whole document.
                stored = text.encode("utf-8")[:MAX_TEXT_BYTES].decode("utf-8", "ignore")
                parser = PageParser()
                parser.feed(text)
                parser.close()
                base = urljoin(url, parser.base) if parser.base else url
                links = [urljoin(base, h) for h in parser.hrefs]
                if parser.canonical and usable(urljoin(base, parser.canonical)):
                    canonical = urljoin(base, parser.canonical)
                    links.append(canonical)
                here = urlsplit(url)._replace(fragment="").geturl()
                if parser.refresh is not None:
                    target = refresh_target(parser.refresh, base)
                    if target and usable(target) and normalize(target) != normalize(here):
                        refresh = target
                if parser.noindex:
                    verdict = "noindex"
                elif canonical and normalize(canonical) != normalize(here):
                    verdict = "canonical"
        canonical_type = MIME_ALIASES.get(essence, essence)
        if (content and verdict is None and canonical_type in TEXT_TYPES
                and urlsplit(url).path != "/robots.txt"):
            verdict = "indexed"
        code = exit_code(status, has_payload, r["location"] is not None, verdict)
        redirect = None
        permanent = None
        if status is not None and 300 <= status <= 399 and r["location"]:
            redirect = urljoin(url, r["location"].strip())
            links.append(redirect)
            permanent = status in (301, 308)
        elif refresh is not None:
            redirect = refresh
            links.append(redirect)
            permanent = False
        size = r["size"] if r["size"] is not None else (original[0] if original else None)
        captures.append({
            "url": normalize(url) or url, "time": r["time"], "status": status, "exit": code,
            "crawl_type": 1 if urlsplit(url).path == "/robots.txt" else 0,
            "file": content, "file_size": size if content else None,
            "text": stored if text is not None else None,
            "redirect": normalize(redirect) if redirect else None,
            "permanent": permanent,
            "etag": r["etag"],
            "last_modified": http_date(r["last_modified"]) if r["last_modified"] else None,
        })
        for u in [url] + links:
            n = normalize(u)
            if n:
                candidates.add(n)
    json.dump({"captures": captures, "candidates": sorted(candidates), "agents": agents},
              sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main(sys.argv[1:])
