#!/usr/bin/env python3
"""Writes the generated files of the fixture web site into fixtures/site/v1 and v2.

The HTML, CSS, JS, RSS and robots.txt files of the site are written by hand and committed.
This script makes the files that are awkward to write by hand, byte-for-byte reproducibly:
  - images/*.png            tiny valid PNG images (zlib + struct, no imaging library)
  - papers/*.pdf            small valid PDF 1.4 files with text (hand-built objects and xref)
  - legacy/windows-1252.html  a page encoded in windows-1252, declared only by <meta charset>

Every file is identical in v1 and v2 except papers/report-2021.pdf, which is revised in v2.
Usage: scripts/make-fixture-site.py [SITE_DIR]   (default: fixtures/site next to this script)
"""

import struct
import sys
import zlib
from pathlib import Path


# ---------------------------------------------------------------- PNG


def png_chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def make_png(width: int, height: int, pixel) -> bytes:
    """An 8-bit RGB PNG; pixel(x, y) returns (r, g, b). Each scanline uses filter type 0."""
    rows = bytearray()
    for y in range(height):
        rows.append(0)
        for x in range(width):
            rows.extend(pixel(x, y))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", header)
        + png_chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + png_chunk(b"IEND", b"")
    )


def logo_pixel(x, y):
    # a brown disc (the lake seen from above) on a pale background
    inside = (x - 7.5) ** 2 + (y - 7.5) ** 2 <= 36
    return (138, 109, 75) if inside else (244, 239, 232)


CORE_BANDS = [(92, 70, 50), (120, 96, 70), (200, 190, 170), (92, 70, 50), (60, 48, 36), (150, 130, 100)]


def core_chart_pixel(x, y):
    return CORE_BANDS[(x * len(CORE_BANDS)) // 32]


def stripe_pixel(x, y):
    return (138, 109, 75) if y % 2 == 0 else (201, 183, 156)


# ---------------------------------------------------------------- PDF


def pdf_string(text: str) -> bytes:
    """A PDF literal string in PDFDocEncoding-compatible Latin-1, with ( ) \\ escaped."""
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return b"(" + escaped.encode("latin-1") + b")"


def make_pdf(title: str, author: str, created: str, pages: list) -> bytes:
    """A PDF 1.4 file: one Helvetica font, one page per entry of `pages` (a list of text lines;
    the first line of each page is set larger as a heading), an Info dictionary and a correct
    cross-reference table. `created` is a PDF date such as D:20210314092653Z."""
    objects = []  # object bodies; object number = index + 1

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in once the page tree number is known
    pages_obj = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    page_numbers = []
    for lines in pages:
        ops = [b"BT", b"/F1 18 Tf", b"72 760 Td", pdf_string(lines[0]) + b" Tj", b"/F1 11 Tf", b"0 -14 TL", b"T*"]
        for line in lines[1:]:
            ops.append(b"T*")
            ops.append(pdf_string(line) + b" Tj")
        ops.append(b"ET")
        stream = b"\n".join(ops) + b"\n"
        content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"endstream")
        page = add(
            b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>" % (pages_obj, font, content)
        )
        page_numbers.append(page)
    kids = b" ".join(b"%d 0 R" % n for n in page_numbers)
    objects[pages_obj - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(page_numbers))
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_obj
    info = add(
        b"<< /Title "
        + pdf_string(title)
        + b" /Author "
        + pdf_string(author)
        + b" /Producer (Sediment fixture generator) /CreationDate "
        + pdf_string(created)
        + b" >>"
    )

    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref_at = len(out)
    out += b"xref\n0 %d\n" % (len(objects) + 1)
    out += b"0000000000 65535 f \n"
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\n" % (len(objects) + 1, catalog, info)
    out += b"startxref\n%d\n%%%%EOF\n" % xref_at
    return bytes(out)


OVERVIEW_PDF = dict(
    title="An overview of varved sediments",
    author="Ana Verhoeven",
    created="D:20190610120000Z",
    pages=[
        [
            "An overview of varved sediments",
            "Ana Verhoeven, Lakeshore Sediment Lab",
            "",
            "Varves are annual layers: a light summer lamina of silt and diatoms",
            "followed by a dark winter lamina of clay and organic matter.",
            "Counting varves gives an age for every depth in a core, as long as",
            "no layer was eroded and no flood deposit is mistaken for a year.",
        ],
        [
            "Where varves form",
            "Varves survive only where the bottom water lacks oxygen, so that",
            "worms and other burrowing animals cannot mix the layers.",
            "Deep, sheltered basins such as the north basin of Lake Merrow qualify.",
        ],
    ],
)

LAYERS_PDF = dict(
    title="Counting layers by hand",
    author="Tomasz Krol",
    created="D:20200302083000Z",
    pages=[
        [
            "Counting layers by hand",
            "Tomasz Krol, Lakeshore Sediment Lab",
            "",
            "A hand lens, a steady table and a fresh surface are all it takes.",
            "Count each couplet of light and dark laminae once, mark every tenth",
            "with a pin, and have a second person count the same interval.",
            "Disagreements larger than three percent mean the surface needs cleaning.",
        ]
    ],
)

REPORT_2021_PDF = dict(
    title="Annual report 2021",
    author="Lakeshore Sediment Lab",
    created="D:20211220100000Z",
    pages=[
        [
            "Annual report 2021",
            "Four cores were taken in spring and none in winter (thin ice).",
            "Core LM-2021-C shows a sand layer at 11 cm, probably the 1987 flood.",
            "The new freezer holds forty cores.",
        ]
    ],
)

# v2 revises the report: a corrected sentence and one more line.
REPORT_2021_REVISED_PDF = dict(
    title="Annual report 2021 (revised)",
    author="Lakeshore Sediment Lab",
    created="D:20220115100000Z",
    pages=[
        [
            "Annual report 2021 (revised)",
            "Four cores were taken in spring and none in winter (thin ice).",
            "Core LM-2021-C shows a sand layer at 11 cm, dated to the 1987 flood.",
            "The new freezer holds forty cores.",
            "Revision: the flood date was confirmed by caesium-137 dating in January 2022.",
        ]
    ],
)


# ---------------------------------------------------------------- windows-1252 page

# Characters outside Latin-1 that windows-1252 maps into 0x80-0x9F (euro sign, curly quotes,
# dashes, ellipsis) make a wrong decoding (as Latin-1 or UTF-8) visible in tests.
WINDOWS_1252_PAGE = """<!DOCTYPE html>
<html lang="de">
<head>
<meta charset="windows-1252">
<title>Stationstagebuch 2004 \u2013 Lakeshore Sediment Lab</title>
<meta name="description" content="Das alte Stationstagebuch von 2004, Seite f\u00fcr Seite abgeschrieben.">
</head>
<body>
<main>
<h1>Stationstagebuch 2004</h1>
<p>\u201eDer See vergisst nichts\u201c, schrieb der damalige Leiter \u2013 und f\u00fchrte das Tagebuch
mit gro\u00dfer Sorgfalt.</p>
<ul>
<li>12. M\u00e4rz 2004: Eisdicke 21\u00a0cm, Bohrkern LM-2004-A gezogen\u2026</li>
<li>3. Juni 2004: Neues Boot f\u00fcr 4\u00a0800\u00a0\u20ac gekauft; \u00bbendlich kein Leck mehr\u00ab.</li>
<li>9. Oktober 2004: Caf\u00e9 am F\u00e4hranleger geschlossen \u2014 Kaffee jetzt aus der Thermoskanne.</li>
</ul>
<p>Transkribiert von Priya Raman. <a href="/news.html">Zur\u00fcck zu den Neuigkeiten</a></p>
</main>
</body>
</html>
"""


def write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_bytes() == data:
        return
    path.write_bytes(data)
    print(f"wrote {path} ({len(data)} bytes)")


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "fixtures" / "site"
    common = {
        "images/logo.png": make_png(16, 16, logo_pixel),
        "images/core-chart.png": make_png(32, 8, core_chart_pixel),
        "images/stripe.png": make_png(1, 4, stripe_pixel),
        "papers/sediment-overview.pdf": make_pdf(**OVERVIEW_PDF),
        "papers/layers.pdf": make_pdf(**LAYERS_PDF),
        "legacy/windows-1252.html": WINDOWS_1252_PAGE.encode("cp1252"),
    }
    versions = {
        "v1": {"papers/report-2021.pdf": make_pdf(**REPORT_2021_PDF)},
        "v2": {"papers/report-2021.pdf": make_pdf(**REPORT_2021_REVISED_PDF)},
    }
    for version, own in versions.items():
        for name, data in {**common, **own}.items():
            write(root / version / name, data)


if __name__ == "__main__":
    main()
