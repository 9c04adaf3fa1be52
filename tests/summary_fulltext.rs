//! `sediment project summary` makes every full-text type searchable, not only HTML: PDF
//! (the shared corpus's and the fixture crawl's, read by the PDF library in a bounded
//! child), plain text, Markdown, XML and zipped office documents; hostile PDFs finish in
//! bounded time as counted problems, and the pages around them stay searchable.

mod common;
mod summary_support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use common::{json_lines, sediment};
use summary_support::*;

const HOST: &str = "http://docs.example.org";

/// Runs `project summary --json`; the whole report.
fn summarize_report(store: &Path, db: &Path) -> serde_json::Value {
    let run = sediment(
        store,
        &["project", "summary", "-o", db.to_str().unwrap(), "--json"],
    );
    let report: serde_json::Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("no JSON report ({e}); exit {}: {}", run.status, run.stderr));
    let status = if report["problems_total"] == 0 { 0 } else { 3 };
    assert_eq!(run.status, status, "{}", run.stderr);
    report
}

/// `sediment search --json`: the URLs of the hits, best first.
fn search(store: &Path, db: &Path, query: &str) -> Vec<String> {
    let run = sediment(
        store,
        &[
            "search",
            "--db",
            db.to_str().unwrap(),
            "--json",
            "--limit",
            "50",
            "--",
            query,
        ],
    );
    assert_eq!(run.status, 0, "search {query:?}: {}", run.stderr);
    json_lines(&run.stdout)
        .iter()
        .map(|h| h["url"].as_str().unwrap().to_string())
        .collect()
}

fn url(path: &str) -> String {
    format!("{HOST}{path}")
}

fn typed<'a>(path: &'a str, mime: &'a str, body: Vec<u8>) -> Response<'a> {
    Response {
        url: path,
        date: "2024-03-01T10:00:00Z",
        status: 200,
        headers: vec![("Content-Type", mime)],
        body,
    }
}

/// A zip of stored members (office documents are zips of XML).
fn zip_of(members: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(&mut out));
    for (name, text) in members {
        w.start_file(
            *name,
            zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Stored),
        )
        .unwrap();
        w.write_all(text.as_bytes()).unwrap();
    }
    w.finish().unwrap();
    out
}

/// Where each URL's text came from (`summary_payload.text_source`).
fn text_source(conn: &rusqlite::Connection, u: &str) -> Option<String> {
    rows(
        conn,
        "SELECT sp.text_source FROM entity_generation eg JOIN url USING (url_id)
         JOIN summary_payload sp ON sp.text_pile_id = eg.text_pile_id
         WHERE url.str_url = ?1",
        &[&u],
    )
    .first()
    .map(|r| r[0].clone())
}

struct Site {
    _dir: tempfile::TempDir,
    store: PathBuf,
    db: PathBuf,
    report: serde_json::Value,
    seconds: f64,
}

fn summarized(responses: &[Response]) -> Site {
    let dir = tempfile::tempdir().unwrap();
    let (store, db, warc) = (
        dir.path().join("store"),
        dir.path().join("summary.db"),
        dir.path().join("site.warc"),
    );
    let urls: Vec<String> = responses.iter().map(|r| url(r.url)).collect();
    let absolute: Vec<Response> = responses
        .iter()
        .zip(&urls)
        .map(|(r, u)| Response {
            url: u,
            date: r.date,
            status: r.status,
            headers: r.headers.clone(),
            body: r.body.clone(),
        })
        .collect();
    write_warc(&warc, &absolute);
    common::ok(
        &store,
        &["import-warc", "--all-types", warc.to_str().unwrap()],
    );
    let started = Instant::now();
    let report = summarize_report(&store, &db);
    Site {
        _dir: dir,
        store,
        db,
        report,
        seconds: started.elapsed().as_secs_f64(),
    }
}

const JATS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<article><front><article-meta><title-group><article-title>Varve chronology of Lake Zurich</article-title></title-group>
<abstract><p>Annual laminae counted in twelve piston cores.</p></abstract></article-meta></front>
<body><sec><title>Methods</title><p>Thin sections were scanned at <italic>high</italic> resolution.</p></sec></body></article>"#;

const MARKDOWN: &str = "# Coring handbook\n\nKeep the liner upright while extruding.\n\n```sh\nextrude --liner 80mm\n```\n";

#[test]
fn every_full_text_type_gets_a_text_pile_and_is_searchable() {
    let Some(dummy) = common::corpus("sandcrawler/dummy.pdf") else {
        return;
    };
    let docx = zip_of(&[
        (
            "docProps/core.xml",
            r#"<cp:coreProperties xmlns:cp="c" xmlns:dc="d"><dc:title>Field season plan</dc:title></cp:coreProperties>"#,
        ),
        (
            "word/document.xml",
            r#"<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>Bring the grav</w:t></w:r><w:r><w:t>ity corer.</w:t></w:r></w:p></w:body></w:document>"#,
        ),
    ]);
    let odt = zip_of(&[(
        "content.xml",
        r#"<office:document-content xmlns:office="o" xmlns:text="t"><office:body><office:text><text:h>Budget</text:h><text:p>Radiocarbon dates cost most.</text:p></office:text></office:body></office:document-content>"#,
    )]);
    let site = summarized(&[
        typed(
            "/dummy.pdf",
            "application/pdf",
            std::fs::read(&dummy).unwrap(),
        ),
        typed(
            "/readme.txt",
            "text/plain; charset=utf-8",
            b"Zymurgy notes: the lab brews no beer.\n".to_vec(),
        ),
        typed(
            "/handbook.md",
            "text/markdown",
            MARKDOWN.as_bytes().to_vec(),
        ),
        typed("/article.xml", "application/xml", JATS.as_bytes().to_vec()),
        typed(
            "/plan.docx",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            docx,
        ),
        typed(
            "/budget.odt",
            "application/vnd.oasis.opendocument.text",
            odt,
        ),
        typed(
            "/robots.txt",
            "text/plain",
            b"User-agent: *\nDisallow: /zymurgy\n".to_vec(),
        ),
        Response::html(
            "/index.html",
            "2024-03-01T10:00:00Z",
            "<title>Lab</title><p>The lab home page.</p>",
        ),
    ]);
    assert_eq!(site.report["problems_total"], 0, "{}", site.report);
    let (store, db) = (&site.store, &site.db);

    // Each type's own words, under its own type.
    assert_eq!(search(store, db, "dummy"), vec![url("/dummy.pdf")]);
    assert_eq!(
        search(store, db, "mime:application/pdf dummy"),
        vec![url("/dummy.pdf")]
    );
    assert_eq!(search(store, db, "dummy mime:pdf"), vec![url("/dummy.pdf")]);
    assert!(search(store, db, "dummy mime:text/html").is_empty());
    assert_eq!(
        search(store, db, "zymurgy"),
        vec![url("/readme.txt")],
        "robots.txt is no document"
    );
    assert_eq!(
        search(store, db, "zymurgy mime:text/plain"),
        vec![url("/readme.txt")]
    );
    assert_eq!(search(store, db, "extruding"), vec![url("/handbook.md")]);
    assert_eq!(search(store, db, "liner"), vec![url("/handbook.md")]);
    assert_eq!(
        search(store, db, "\"varve chronology\" mime:xml"),
        vec![url("/article.xml")]
    );
    assert_eq!(search(store, db, "scanned"), vec![url("/article.xml")]);
    assert_eq!(search(store, db, "gravity corer"), vec![url("/plan.docx")]);
    assert_eq!(search(store, db, "radiocarbon"), vec![url("/budget.odt")]);
    assert_eq!(search(store, db, "lab home"), vec![url("/index.html")]);

    let conn = open(db);
    for (path, source) in [
        ("/dummy.pdf", "pdf_text_library"),
        ("/readme.txt", "plain"),
        ("/handbook.md", "markdown"),
        ("/article.xml", "xml"),
        ("/plan.docx", "office"),
        ("/budget.odt", "office"),
        ("/index.html", "html"),
    ] {
        assert_eq!(
            text_source(&conn, &url(path)).as_deref(),
            Some(source),
            "{path}"
        );
    }
    assert_eq!(text_source(&conn, &url("/robots.txt")), None);
    // Titles and headings are kept apart from the body text.
    let titles = rows(
        &conn,
        "SELECT url.str_url, dd.title FROM document_description dd
         JOIN entity_generation eg USING (entity_generation_id) JOIN url USING (url_id)
         WHERE dd.title IS NOT NULL ORDER BY url.str_url",
        &[],
    );
    for (path, title) in [
        ("/article.xml", "Varve chronology of Lake Zurich"),
        ("/handbook.md", "Coring handbook"),
        ("/plan.docx", "Field season plan"),
    ] {
        assert!(
            titles.contains(&vec![url(path), title.to_string()]),
            "{path}: {titles:?}"
        );
    }
    let code: String = conn
        .query_row(
            "SELECT tp.code_text FROM text_pile tp JOIN entity_generation eg USING (text_pile_id)
             JOIN url USING (url_id) WHERE url.str_url = ?1",
            [url("/handbook.md")],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(code, "extrude --liner 80mm");
    assert_eq!(
        count(&site.report["counts"], "texts_from_pdf_text_library"),
        1
    );
    assert_eq!(count(&site.report["counts"], "texts_from_office"), 2);
    assert_sound(&conn);
}

#[test]
fn fixture_crawl_pdfs_are_found_by_their_text() {
    let dir = tempfile::tempdir().unwrap();
    let (store, db) = (dir.path().join("store"), dir.path().join("summary.db"));
    import_and_summarize(
        &store,
        &db,
        &[&crawl("crawl1.warc.gz"), &crawl("crawl2.warc.gz")],
    );
    let report = "http://127.0.0.1:47213/papers/report-2021.pdf";
    // Of the PDFs only the revised report (crawl 2) says "caesium" (blog posts do too).
    assert!(search(&store, &db, "caesium").contains(&report.to_string()));
    assert_eq!(
        search(&store, &db, "mime:application/pdf caesium"),
        vec![report.to_string()]
    );
    let pdfs = search(&store, &db, "core mime:application/pdf");
    assert!(pdfs.contains(&report.to_string()), "{pdfs:?}");
    let conn = open(&db);
    let title: String = conn
        .query_row(
            "SELECT dd.title FROM document_description dd
             JOIN entity_generation eg USING (entity_generation_id) JOIN url USING (url_id)
             WHERE url.str_url = ?1 AND eg.confirmed_end_unix_utc IS NULL",
            [report],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(title, "Annual report 2021 (revised)");
    assert_sound(&conn);
}

/// Hostile PDFs, each of a kind that makes PDF parsers loop, recurse, allocate or fail.
fn hostile_pdfs() -> Vec<(&'static str, Vec<u8>)> {
    fn pdf(objects: &[Vec<u8>], xref_at: Option<usize>) -> Vec<u8> {
        let mut out = b"%PDF-1.4\n".to_vec();
        let mut offsets = Vec::new();
        for (i, body) in objects.iter().enumerate() {
            offsets.push(out.len());
            out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
            out.extend_from_slice(body);
            out.extend_from_slice(b"\nendobj\n");
        }
        let xref = out.len();
        out.extend_from_slice(
            format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
        );
        for o in &offsets {
            out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
        }
        out.extend_from_slice(
            format!(
                "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{}\n%%EOF\n",
                objects.len() + 1,
                xref_at.unwrap_or(xref)
            )
            .as_bytes(),
        );
        out
    }
    let catalog = b"<< /Type /Catalog /Pages 2 0 R >>".to_vec();
    let pages = b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec();
    let page = |contents: &str| {
        format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {contents} /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>").into_bytes()
    };
    let stream = |dict: &str, data: &[u8]| {
        let mut s = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
        s.extend_from_slice(data);
        s.extend_from_slice(b"\nendstream");
        s
    };
    // Nested arrays a million deep: a recursive parser overflows its stack.
    let deep = format!("{}{}", "[".repeat(1_000_000), "]".repeat(1_000_000));
    // Inflates to 1.5 GiB of spaces (1.5 MB compressed): more than the child may hold.
    let bomb = {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        let block = vec![b' '; 1 << 20];
        for _ in 0..1536 {
            z.write_all(&block).unwrap();
        }
        z.finish().unwrap()
    };
    // A content stream whose /Length says a terabyte.
    let huge_length =
        b"<< /Length 1099511627776 >>\nstream\nBT /F1 12 Tf (x) Tj ET\nendstream".to_vec();
    vec![
        (
            "deep-nesting",
            pdf(
                &[
                    catalog.clone(),
                    pages.clone(),
                    page("4 0 R"),
                    deep.into_bytes(),
                ],
                None,
            ),
        ),
        (
            "decompression-bomb",
            pdf(
                &[
                    catalog.clone(),
                    pages.clone(),
                    page("4 0 R"),
                    stream("/Filter /FlateDecode", &bomb),
                ],
                None,
            ),
        ),
        (
            "huge-stream-length",
            pdf(
                &[catalog.clone(), pages.clone(), page("4 0 R"), huge_length],
                None,
            ),
        ),
        (
            "broken-xref",
            pdf(
                &[
                    catalog.clone(),
                    pages.clone(),
                    page("4 0 R"),
                    stream("", b"BT /F1 12 Tf 72 700 Td (orphaned words) Tj ET"),
                ],
                Some(3),
            ),
        ),
        (
            "cyclic-page-tree",
            pdf(
                &[
                    catalog.clone(),
                    b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>".to_vec(),
                    b"<< /Type /Pages /Parent 2 0 R /Kids [3 0 R 2 0 R] /Count 1 >>".to_vec(),
                ],
                None,
            ),
        ),
        (
            "not-a-pdf",
            b"<html><body>404 Not Found</body></html>".to_vec(),
        ),
    ]
}

#[test]
fn hostile_pdfs_finish_in_bounded_time_as_problems_and_spare_their_neighbours() {
    let Some(dummy) = common::corpus("sandcrawler/dummy.pdf") else {
        return;
    };
    let hostile = hostile_pdfs();
    let paths: Vec<String> = hostile
        .iter()
        .map(|(name, _)| format!("/hostile/{name}.pdf"))
        .collect();
    let mut responses: Vec<Response> = hostile
        .iter()
        .zip(&paths)
        .map(|((_, body), path)| typed(path, "application/pdf", body.clone()))
        .collect();
    responses.insert(
        0,
        typed(
            "/before.pdf",
            "application/pdf",
            std::fs::read(&dummy).unwrap(),
        ),
    );
    responses.push(Response::html(
        "/after.html",
        "2024-03-01T10:00:00Z",
        "<title>After</title><p>Sediment survives hostile files.</p>",
    ));
    let site = summarized(&responses);
    // Each child is stopped at 20 CPU seconds or 40 wall seconds at the latest; these
    // fail much sooner (a parse error, a stack overflow, the memory limit).
    assert!(
        site.seconds < 120.0,
        "summarizing took {:.1} s",
        site.seconds
    );
    let problems = &site.report["problems"];
    let counts = &site.report["counts"];
    // What the library refuses or the limits stop is a problem of that payload; what it
    // tolerates (nesting past its depth limit, a cyclic page tree) gives no text, counted.
    assert_eq!(problems["pdf_text_memory_limit"], 1, "the bomb: {problems}");
    assert_eq!(
        problems["pdf_text_failed"], 2,
        "broken xref, not a PDF: {problems}"
    );
    let pdf_problems: u64 = problems
        .as_object()
        .unwrap()
        .iter()
        .filter(|(reason, _)| reason.starts_with("pdf_text_"))
        .map(|(_, n)| n.as_u64().unwrap())
        .sum();
    assert_eq!(
        site.report["problems_total"].as_u64().unwrap(),
        pdf_problems,
        "{problems}"
    );
    assert_eq!(count(counts, "texts_from_pdf_text_library"), 7);
    assert!(
        pdf_problems + count(counts, "texts_empty_pdf_text_library") >= 5,
        "{}",
        site.report
    );
    // The valid documents around them are searchable.
    assert_eq!(
        search(&site.store, &site.db, "dummy"),
        vec![url("/before.pdf")]
    );
    assert_eq!(
        search(&site.store, &site.db, "survives"),
        vec![url("/after.html")]
    );
    let conn = open(&site.db);
    assert_sound(&conn);
    // A failed PDF is a file without text: no search row, but its capture is summarized.
    let summarized: i64 = conn
        .query_row("SELECT count(*) FROM crawl_summary", [], |r| r.get(0))
        .unwrap();
    assert_eq!(summarized as usize, responses.len());
}

#[test]
fn a_database_from_before_text_sources_opens_and_gets_the_column() {
    let site = summarized(&[Response::html(
        "/index.html",
        "2024-03-01T10:00:00Z",
        "<title>Lab</title><p>The lab home page.</p>",
    )]);
    {
        // The database as sediment-summary-2 made it: no text_source column.
        let conn = open(&site.db);
        conn.execute_batch(
            "ALTER TABLE summary_payload DROP COLUMN text_source;
             UPDATE unobtanium_database_info SET value = 'sediment-summary-2'
             WHERE key = 'sediment_summary_schema';",
        )
        .unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("more.warc");
    write_warc(
        &warc,
        &[typed(
            &url("/notes.txt"),
            "text/plain",
            b"Second run notes.".to_vec(),
        )],
    );
    common::ok(&site.store, &["import-warc", warc.to_str().unwrap()]);
    summarize_report(&site.store, &site.db);
    let conn = open(&site.db);
    assert_eq!(
        text_source(&conn, &url("/index.html")).as_deref(),
        Some("html")
    );
    assert_eq!(
        text_source(&conn, &url("/notes.txt")).as_deref(),
        Some("plain")
    );
    assert_eq!(
        search(&site.store, &site.db, "notes"),
        vec![url("/notes.txt")]
    );
}

#[test]
fn a_pdf_grobid_has_read_takes_its_text_from_the_tei() {
    use sha1::Digest;
    let (Some(dummy), Some(tei)) = (
        common::corpus("sandcrawler/dummy.pdf"),
        common::corpus("grobid/062RoisinAronAmericanNaturalist03.grobid.tei.xml"),
    ) else {
        return;
    };
    let pdf = std::fs::read(&dummy).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (store, db, warc, teis) = (
        dir.path().join("store"),
        dir.path().join("summary.db"),
        dir.path().join("site.warc"),
        dir.path().join("tei"),
    );
    let u = url("/paper.pdf");
    write_warc(&warc, &[typed(&u, "application/pdf", pdf.clone())]);
    common::ok(&store, &["import-warc", warc.to_str().unwrap()]);
    // GROBID's TEI of another paper, filed under this PDF's SHA-1: the text must be the TEI's.
    std::fs::create_dir_all(&teis).unwrap();
    let hex = hex::encode(sha1::Sha1::digest(&pdf));
    std::fs::copy(&tei, teis.join(format!("{hex}.tei.xml"))).unwrap();
    common::ok(&store, &["import-tei", teis.to_str().unwrap()]);
    summarize_report(&store, &db);
    assert_eq!(search(&store, &db, "hymenoptera mime:pdf"), vec![u.clone()]);
    assert!(search(&store, &db, "dummy").is_empty());
    let conn = open(&db);
    assert_eq!(text_source(&conn, &u).as_deref(), Some("grobid_tei"));
    let title: String = conn
        .query_row(
            "SELECT dd.title FROM document_description dd
             JOIN entity_generation eg USING (entity_generation_id) JOIN url USING (url_id)
             WHERE url.str_url = ?1",
            [&u],
            |r| r.get(0),
        )
        .unwrap();
    assert!(title.starts_with("Split Sex Ratios"), "{title}");
}
