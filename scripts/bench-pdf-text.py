#!/usr/bin/env python3
"""PDF text quality and speed of the Rust PDF libraries against poppler's pdftotext.

    python3 scripts/bench-pdf-text.py TEXT_DIR TIMES.tsv FILE.pdf...

TEXT_DIR and TIMES.tsv are what `cargo run --release --example pdf_text_bench -- TEXT_DIR
FILE.pdf... > TIMES.tsv` wrote. For each PDF, pdftotext's text is the reference: the
words (lower-cased runs of letters and digits) each library found of it (recall, counted
with multiplicity) and the share of the library's words that are in it (precision), and
the CPU time of each (best of 3). Prints a Markdown table for BENCHMARKS.md.
"""

import collections
import os
import re
import resource
import subprocess
import sys

WORD = re.compile(r"[^\W_]+", re.UNICODE)


def words(text):
    return collections.Counter(w.lower() for w in WORD.findall(text))


def overlap(reference, candidate):
    common = sum((reference & candidate).values())
    recall = common / max(1, sum(reference.values()))
    precision = common / max(1, sum(candidate.values()))
    return recall, precision


def pdftotext(path):
    best, text = None, ""
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        text = subprocess.run(
            ["pdftotext", "-q", "-enc", "UTF-8", path, "-"], capture_output=True
        ).stdout.decode("utf-8", "replace")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = cpu if best is None else min(best, cpu)
    return text, best


def main():
    text_dir, times_path, pdfs = sys.argv[1], sys.argv[2], sys.argv[3:]
    times = {}
    with open(times_path) as f:
        next(f)
        for line in f:
            stem, size, pe_s, pe_ok, lo_s, lo_ok = line.rstrip("\n").split("\t")
            times[stem] = (int(size), float(pe_s), pe_ok == "true", float(lo_s), lo_ok == "true")
    totals = collections.defaultdict(float)
    rows = []
    for path in pdfs:
        stem = os.path.splitext(os.path.basename(path))[0]
        ref_text, ref_s = pdftotext(path)
        ref = words(ref_text)
        size, pe_s, pe_ok, lo_s, lo_ok = times[stem]
        row = {"stem": stem, "size": size, "ref_words": sum(ref.values()), "pdftotext_s": ref_s}
        for lib, secs, ok in (("pdf_extract", pe_s, pe_ok), ("lopdf", lo_s, lo_ok)):
            with open(os.path.join(text_dir, f"{stem}.{lib}.txt"), encoding="utf-8", errors="replace") as f:
                cand = words(f.read())
            recall, precision = overlap(ref, cand)
            row[lib] = (recall, precision, secs, ok)
            totals[f"{lib}_s"] += secs
            totals[f"{lib}_ok"] += ok
            totals[f"{lib}_common"] += recall * row["ref_words"]
            totals[f"{lib}_words"] += sum(cand.values())
        totals["pdftotext_s"] += ref_s
        totals["ref_words"] += row["ref_words"]
        totals["bytes"] += size
        rows.append(row)
    n = len(rows)
    print(f"{n} PDFs, {totals['bytes'] / 1e6:.1f} MB, {int(totals['ref_words'])} words by pdftotext\n")
    print("| library | PDFs read | word recall | word precision | CPU s (all) | MB/s |")
    print("|---|---|---|---|---|---|")
    print(f"| pdftotext (poppler, reference) | {n} | 1.000 | 1.000 | {totals['pdftotext_s']:.2f} "
          f"| {totals['bytes'] / 1e6 / max(totals['pdftotext_s'], 1e-9):.1f} |")
    for lib, label in (("pdf_extract", "pdf-extract 0.12.1"), ("lopdf", "lopdf 0.42 extract_text")):
        recall = totals[f"{lib}_common"] / max(1, totals["ref_words"])
        precision = totals[f"{lib}_common"] / max(1, totals[f"{lib}_words"])
        secs = totals[f"{lib}_s"]
        print(f"| {label} | {int(totals[f'{lib}_ok'])} | {recall:.3f} | {precision:.3f} | {secs:.2f} "
              f"| {totals['bytes'] / 1e6 / max(secs, 1e-9):.1f} |")
    print("\nper PDF (recall pdf-extract / lopdf):")
    for row in rows:
        print(f"  {row['stem'][:12]} {row['size']:>8} {row['pdf_extract'][0]:.3f} {row['lopdf'][0]:.3f}")


if __name__ == "__main__":
    main()
