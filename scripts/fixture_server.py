#!/usr/bin/env python3
"""A small HTTP/1.1 server on 127.0.0.1 for the fixture crawls and the benchmark corpus.

Serves one directory (one version of the fixture site, or a tree of documentation) and adds the
routes a crawl should meet besides plain pages:
  /old-page   301 to /about.html (absolute Location)
  /moved      302 to /docs/guide.html (path-only Location)
  /temp       307 to /news.html
  /gone       410 Gone
  anything else that is not a file: 404 with a small HTML body.
Pages named with --chunked (default /news.html and /stream/live.html) are sent with
`Transfer-Encoding: chunked` in several chunks and no Content-Length, so that a crawler stores a
chunk-encoded body. Static files carry an ETag and a Last-Modified date derived from their content
(not from the file's mtime), so two crawls of the same bytes see the same validators.

Usage: fixture_server.py DIR [--port N] [--autoindex] [--chunked PATH]... [--quiet]
With --port 0 (the default) a free port is chosen. The first line on stdout is the base URL.
"""

import argparse
import hashlib
import html
import os
import posixpath
import shutil
import sys
import urllib.parse
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REDIRECTS = {
    "/old-page": (301, "/about.html", True),
    "/moved": (302, "/docs/guide.html", False),
    "/temp": (307, "/news.html", False),
}
GONE = {"/gone"}
DEFAULT_CHUNKED = ["/news.html", "/stream/live.html"]
CHUNK_SIZE = 512

CONTENT_TYPES = {
    ".html": "text/html",
    ".htm": "text/html",
    ".css": "text/css",
    ".js": "application/javascript",
    ".xml": "application/rss+xml",
    ".txt": "text/plain; charset=utf-8",
    ".png": "image/png",
    ".gif": "image/gif",
    ".jpg": "image/jpeg",
    ".svg": "image/svg+xml",
    ".pdf": "application/pdf",
    ".gz": "application/gzip",
    ".json": "application/json",
}

# Last-Modified dates are spread over three years from 2020-01-01, chosen by the content's digest.
VALIDATOR_EPOCH = 1577836800
VALIDATOR_SPAN = 3 * 365 * 86400


def content_type(path: str, head: bytes) -> str:
    ext = os.path.splitext(path)[1].lower()
    kind = CONTENT_TYPES.get(ext, "application/octet-stream")
    if kind == "text/html":
        # Declare UTF-8 only for pages that are UTF-8; others (the windows-1252 page) rely on
        # their own <meta charset>, as many old servers made pages do.
        try:
            head.decode("utf-8")
            return "text/html; charset=utf-8"
        except UnicodeDecodeError as err:
            if err.start < len(head) - 4:  # not just a character cut at the end of `head`
                return "text/html"
            return "text/html; charset=utf-8"
    return kind


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "SedimentFixture/1.0"
    sys_version = ""

    def version_string(self):
        return self.server_version

    # set on the class by main()
    root = "."
    autoindex = False
    chunked_paths = frozenset()
    quiet = False
    digest_cache = {}

    def log_message(self, format, *args):
        if not self.quiet:
            sys.stderr.write("%s %s\n" % (self.log_date_time_string(), format % args))

    def do_GET(self):
        self.respond(send_body=True)

    def do_HEAD(self):
        self.respond(send_body=False)

    # ------------------------------------------------------------ routing

    def respond(self, send_body):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        if not path.startswith("/"):
            return self.send_small(400, "Bad request", "The request target is not a path.", send_body)
        if path in REDIRECTS:
            status, target, absolute = REDIRECTS[path]
            if absolute:
                target = "http://%s%s" % (self.headers.get("Host", "127.0.0.1"), target)
            return self.send_small(status, "Moved", "This page is now at %s." % target, send_body, location=target)
        if path in GONE:
            return self.send_small(410, "Gone", "This page was removed on purpose and will not come back.", send_body)

        normalized = posixpath.normpath(path)
        if normalized.startswith("/..") or "\x00" in normalized:
            return self.not_found(send_body)
        local = os.path.join(self.root, normalized.lstrip("/"))
        if os.path.isdir(local):
            if not path.endswith("/"):
                return self.send_small(301, "Moved", "Directory.", send_body, location=path + "/")
            index = os.path.join(local, "index.html")
            if os.path.isfile(index):
                return self.send_file(index, path + "index.html", send_body)
            if self.autoindex:
                return self.send_listing(local, path, send_body)
            return self.not_found(send_body)
        if os.path.isfile(local):
            return self.send_file(local, normalized, send_body)
        return self.not_found(send_body)

    # ------------------------------------------------------------ responses

    def not_found(self, send_body):
        self.send_small(404, "Not found", "There is no page at this address.", send_body)

    def send_small(self, status, title, text, send_body, location=None):
        body = (
            '<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>%d %s</title></head>\n'
            "<body><h1>%s</h1><p>%s</p></body>\n</html>\n" % (status, title, title, html.escape(text))
        ).encode("utf-8")
        self.send_response(status)
        if location is not None:
            self.send_header("Location", location)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def validators(self, local):
        stat = os.stat(local)
        key = (local, stat.st_size, stat.st_mtime_ns)
        cached = self.digest_cache.get(key)
        if cached is None:
            sha1 = hashlib.sha1()
            with open(local, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    sha1.update(block)
            hexdigest = sha1.hexdigest()
            seconds = VALIDATOR_EPOCH + int(hexdigest[:12], 16) % VALIDATOR_SPAN
            cached = ('"%s"' % hexdigest[:16], formatdate(seconds, usegmt=True))
            self.digest_cache[key] = cached
        return cached

    def send_file(self, local, url_path, send_body):
        with open(local, "rb") as f:
            head = f.read(4096)
            kind = content_type(local, head)
            if url_path in self.chunked_paths:
                return self.send_chunked(f, head, kind, send_body)
            size = os.fstat(f.fileno()).st_size
            etag, last_modified = self.validators(local)
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(size))
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", last_modified)
            self.end_headers()
            if send_body:
                self.wfile.write(head)
                shutil.copyfileobj(f, self.wfile, 1 << 20)

    def send_chunked(self, f, head, kind, send_body):
        # A generated page: no validators, no length, the body in CHUNK_SIZE pieces.
        data = head + f.read()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if not send_body:
            return
        for start in range(0, len(data), CHUNK_SIZE):
            piece = data[start : start + CHUNK_SIZE]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n\r\n")

    def send_listing(self, local, url_path, send_body):
        names = []
        for name in sorted(os.listdir(local)):
            if os.path.isdir(os.path.join(local, name)):
                name += "/"
            names.append(name)
        items = "\n".join(
            '<li><a href="%s">%s</a></li>' % (urllib.parse.quote(name), html.escape(name)) for name in names
        )
        body = (
            '<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>Index of %s</title></head>\n'
            "<body><h1>Index of %s</h1>\n<ul>\n%s\n</ul>\n</body>\n</html>\n"
            % (html.escape(url_path), html.escape(url_path), items)
        ).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", help="directory to serve")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (default)")
    parser.add_argument("--autoindex", action="store_true", help="list directories that have no index.html")
    parser.add_argument(
        "--chunked", action="append", metavar="PATH", help="URL path sent chunk-encoded (repeatable)"
    )
    parser.add_argument("--quiet", action="store_true", help="do not log requests to stderr")
    args = parser.parse_args()

    if not os.path.isdir(args.root):
        parser.error("%s is not a directory" % args.root)
    Handler.root = os.path.abspath(args.root)
    Handler.autoindex = args.autoindex
    Handler.chunked_paths = frozenset(args.chunked if args.chunked is not None else DEFAULT_CHUNKED)
    Handler.quiet = args.quiet

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    host, port = server.server_address[:2]
    print("http://%s:%d/" % (host, port), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
