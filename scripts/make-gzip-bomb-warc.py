#!/usr/bin/env python3
"""Writes a small WARC of hostile pages: HTTP responses whose body is a gzip bomb.

Each of the N pages (default 100) is `Content-Encoding: gzip` HTML that decodes to about
16 MiB (a paragraph of one repeated letter), stored as the WARC payload in its compressed
form, one gzip member per record, so the whole file is a few tens of kilobytes. Used by
tests/project_crawl.rs to check that `project crawl` caps what it decodes and stores per
page (issue 11, item 12). Deterministic: gzip headers carry no time, record ids and dates
derive from the page number.

usage: make-gzip-bomb-warc.py OUT.warc.gz [PAGES] [DECODED_MIB]
"""

import base64
import gzip
import hashlib
import io
import sys
import uuid
import zlib


def bomb(page, decoded_mib):
    """The compressed body of one page (an HTML document of about DECODED_MIB MiB)."""
    head = f"<!DOCTYPE html><html><head><title>Bomb {page}</title></head><body><p>".encode()
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip wrapper, mtime 0
    out = [compressor.compress(head)]
    chunk = b"A" * (1 << 20)
    for _ in range(decoded_mib):
        out.append(compressor.compress(chunk))
    out.append(compressor.compress(b"</p></body></html>\n"))
    out.append(compressor.flush())
    return b"".join(out)


def record(page, body):
    url = f"http://bomb.example/page-{page:03d}.html"
    http = (
        b"HTTP/1.1 200 OK\r\n"
        b"Content-Type: text/html; charset=utf-8\r\n"
        b"Content-Encoding: gzip\r\n"
        + f"Content-Length: {len(body)}\r\n".encode()
        + b"\r\n"
        + body
    )
    digest = hashlib.sha1(body).digest()
    payload_digest = "sha1:" + base64.b32encode(digest).decode()
    block_digest = "sha1:" + base64.b32encode(hashlib.sha1(http).digest()).decode()
    record_id = uuid.UUID(int=page + 1, version=4)
    headers = (
        "WARC/1.0\r\n"
        "WARC-Type: response\r\n"
        f"WARC-Record-ID: <urn:uuid:{record_id}>\r\n"
        f"WARC-Date: 2024-05-01T10:{page // 60:02d}:{page % 60:02d}Z\r\n"
        f"WARC-Target-URI: {url}\r\n"
        f"WARC-Payload-Digest: {payload_digest}\r\n"
        f"WARC-Block-Digest: {block_digest}\r\n"
        "Content-Type: application/http; msgtype=response\r\n"
        f"Content-Length: {len(http)}\r\n"
        "\r\n"
    ).encode()
    raw = headers + http + b"\r\n\r\n"
    member = io.BytesIO()
    with gzip.GzipFile(fileobj=member, mode="wb", mtime=0) as gz:
        gz.write(raw)
    return member.getvalue()


def main():
    out = sys.argv[1]
    pages = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    decoded_mib = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    with open(out, "wb") as f:
        for page in range(pages):
            f.write(record(page, bomb(page, decoded_mib)))


if __name__ == "__main__":
    main()
