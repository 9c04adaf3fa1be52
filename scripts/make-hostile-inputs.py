#!/usr/bin/env python3
"""Hostile inputs for the input side of Sediment (issue 11, defects 2, 3, 4, 9, 15), made
from the real fixtures, for trying the commands by hand or in a crash/fuzz harness.
tests/hostile_inputs.rs makes the same kinds of inputs itself and checks them.

    scripts/make-hostile-inputs.py OUT_DIR

OUT_DIR/entries/   the fixture WARCs and CDX files next to a FIFO, a dangling link, a
                   loop of links, an empty file and a link to a device (each named
                   .warc.gz and .cdx), for `import-warc`, `cdx`, `backfill-cdx` on the dir
OUT_DIR/cut/       gzip CDX and TSV files cut at 30/55/80 % of their length, and the
                   complete lines before each cut (`*.prefix`, decoded with zlib)
OUT_DIR/cdx/       bad later headers, a 65 MiB line, a 100 KB digest
OUT_DIR/manifest.json   what each file is and what a run should report about it
"""

import gzip
import json
import os
import shutil
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "crawl"
CORPUS = ROOT.parent / "shared" / "corpus"


def complete_lines(cut: bytes) -> bytes:
    """The complete lines zlib decodes from a cut gzip stream."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    data = d.decompress(cut)
    end = data.rfind(b"\n") + 1
    return data[:end]


def cut_files(out: Path, name: str, text: bytes, manifest: dict) -> None:
    whole = gzip.compress(text)
    for pct in (30, 55, 80):
        cut = whole[: len(whole) * pct // 100]
        path = out / f"{name}.{pct}.gz"
        path.write_bytes(cut)
        prefix = complete_lines(cut)
        (out / f"{name}.{pct}.prefix").write_bytes(prefix)
        manifest[str(path)] = {
            "problem": "truncated_input",
            "last_good_line": prefix.count(b"\n"),
        }


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    manifest: dict = {}

    entries = out / "entries"
    entries.mkdir(parents=True, exist_ok=True)
    for f in ("crawl1.warc.gz", "crawl2.warc.gz", "crawl1.cdx", "crawl2.cdx"):
        shutil.copy(FIXTURES / f, entries / f)
    for ext in (".warc.gz", ".cdx"):
        fifo = entries / f"a-fifo{ext}"
        os.mkfifo(fifo)
        os.symlink(entries / "nothing-here", entries / f"b-dangling{ext}")
        os.symlink(entries / f"c-loop2{ext}", entries / f"c-loop1{ext}")
        os.symlink(entries / f"c-loop1{ext}", entries / f"c-loop2{ext}")
        (entries / f"d-empty{ext}").write_bytes(b"")
        os.symlink("/dev/null", entries / f"e-device{ext}")
        for stem, problem in (
            ("a-fifo", "not_a_regular_file"),
            ("b-dangling", "unreadable_input"),
            ("c-loop1", "unreadable_input"),
            ("c-loop2", "unreadable_input"),
            ("d-empty", "empty_input"),
            ("e-device", "not_a_regular_file"),
        ):
            manifest[str(entries / f"{stem}{ext}")] = {"problem": problem}

    cut = out / "cut"
    cut.mkdir(exist_ok=True)
    cdx_lines = []
    for f in ("crawl1.cdx", "crawl2.cdx"):
        cdx_lines += [
            line
            for line in (FIXTURES / f).read_text().splitlines()
            if line and not line.startswith(" ")
        ]
    cdx_text = " CDX a b a m s k r M V g u\n" + "".join(
        # One capture per line: the year makes each copy's timestamp its own. The fixture
        # lines are wget's layout, named by the header.
        " ".join([f[0], f"{year}{f[1][4:]}"] + f[2:]) + "\n"
        for year in range(1990, 2030)
        for f in (line.split(" ") for line in cdx_lines)
    )
    cut_files(cut, "crawl.cdx", cdx_text.encode(), manifest)
    tsv = CORPUS / "sandcrawler" / "example_ungrobided.tsv"
    if tsv.exists():
        cut_files(cut, "dump.tsv", tsv.read_bytes() * 40, manifest)

    cdx = out / "cdx"
    cdx.mkdir(exist_ok=True)
    lines = (FIXTURES / "crawl1.cdx").read_text().splitlines()
    headers = list(lines)
    for at, header in (
        (10, " CDX N b a"),
        (20, " CDX ??? garbage"),
        (30, " CDX N b a m s k r M S V g"),
    ):
        headers.insert(at - 1, header)
        manifest.setdefault(str(cdx / "bad-headers.cdx"), {"problem": "bad_header", "lines": []})
        manifest[str(cdx / "bad-headers.cdx")]["lines"].append(at)
    (cdx / "bad-headers.cdx").write_text("\n".join(headers) + "\n")
    with open(cdx / "overlong.cdx", "w") as f:
        f.write("\n".join(lines[:19]) + "\n")
        f.write("com,example)/ 20200101000000 http://example.com/")
        chunk = "x" * (1 << 20)
        for _ in range(65):
            f.write(chunk)
        f.write("\n" + "\n".join(lines[19:]) + "\n")
    manifest[str(cdx / "overlong.cdx")] = {"problem": "line_too_long", "lines": [20]}
    first = next(line for line in lines if not line.startswith(" ")).split(" ")
    first[5] = "Q" * 100_000
    (cdx / "huge-digest.cdx").write_text(" ".join(first) + "\n")
    manifest[str(cdx / "huge-digest.cdx")] = {"problem": "bad_digest", "lines": [1]}

    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
