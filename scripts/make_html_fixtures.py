#!/usr/bin/env python3
"""Writes the HTML fixtures whose bytes are not UTF-8 (charset tests) into fixtures/html/.

Run from the repository root: python3 scripts/make_html_fixtures.py
The hand-written UTF-8 fixtures next to them are edited directly.
"""
import pathlib

OUT = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "html"

LATIN = "<p>\u201cQuoted\u201d price: 5\u20ac na\u00efve caf\u00e9</p>"
JAPANESE = "<p>\u3053\u3093\u306b\u3061\u306f\u4e16\u754c\u3001\u30c6\u30b9\u30c8\u3067\u3059\u3002</p>"


def page(head: str, title: str, body: str) -> str:
    return f"<!DOCTYPE html>\n<html><head>{head}<title>{title}</title></head>\n<body>{body}</body></html>\n"


FIXTURES = {
    # windows-1252 declared in <meta charset>
    "charset-meta-windows-1252.html": page('<meta charset="windows-1252">', "Caf\u00e9", LATIN).encode("cp1252"),
    # windows-1252 bytes with no declaration: the test passes the charset in the Content-Type header
    "charset-header-windows-1252.html": page("", "Caf\u00e9", LATIN).encode("cp1252"),
    # Shift_JIS declared with http-equiv
    "charset-meta-shift_jis.html": page(
        '<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">', "\u65e5\u672c\u8a9e", JAPANESE
    ).encode("shift_jis"),
    # Shift_JIS bytes with no declaration: charset from the header
    "charset-header-shift_jis.html": page("", "\u65e5\u672c\u8a9e", JAPANESE).encode("shift_jis"),
    # UTF-8 with a byte-order mark and a <meta> that lies: the BOM wins
    "charset-bom-utf-8.html": b"\xef\xbb\xbf" + page('<meta charset="windows-1252">', "Caf\u00e9", LATIN).encode("utf-8"),
    # UTF-16LE with a byte-order mark
    "charset-bom-utf-16le.html": b"\xff\xfe" + page("", "\u65e5\u672c\u8a9e", JAPANESE).encode("utf-16-le"),
}

for name, data in FIXTURES.items():
    (OUT / name).write_bytes(data)
    print(f"{name}: {len(data)} bytes")
