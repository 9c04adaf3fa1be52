//! HTML analysis on hand-written fixtures (fixtures/html/, one per feature) and on the HTML
//! pages of webarchive-commons' link-extraction test WARC.

use sediment::internals::html::{
    DestinationType, Document, EncodingSource, Link, LinkLocality, LinkLocation, Refresh, Rel,
    analyze,
};
use url::Url;

mod common;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/fixtures/html/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

fn analyze_fixture(name: &str, page_url: &str) -> Document {
    analyze(&fixture(name), Some("text/html"), &url(page_url))
}

/// The names of the location flags that are set.
fn flags(l: &LinkLocation) -> Vec<&'static str> {
    let all = [
        (l.in_header, "header"),
        (l.in_footer, "footer"),
        (l.in_aside, "aside"),
        (l.in_nav, "nav"),
        (l.in_form, "form"),
        (l.in_main, "main"),
        (l.in_article, "article"),
        (l.in_section, "section"),
        (l.in_table, "table"),
        (l.in_figure, "figure"),
        (l.in_address, "address"),
        (l.in_code, "code"),
        (l.in_headline, "headline"),
        (l.in_list, "list"),
        (l.in_paragraph, "paragraph"),
    ];
    all.iter()
        .filter(|(set, _)| *set)
        .map(|(_, name)| *name)
        .collect()
}

fn pile_fields(d: &Document) -> [&str; 6] {
    d.pile.fields()
}

/// BLAKE2b-512 of `data`, hex, computed by Python's hashlib; `None` after `common::skip`
/// when python3 is missing.
#[track_caller]
fn python_blake2b(data: &str) -> Option<String> {
    if !common::have_python(&[]) {
        return None;
    }
    let mut child = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, hashlib; print(hashlib.blake2b(sys.stdin.buffer.read()).hexdigest())",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run python3");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(data.as_bytes())
        .expect("write to python3");
    let out = child.wait_with_output().expect("python3's output");
    assert!(out.status.success(), "python3's blake2b failed");
    Some(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[test]
fn landmarks_text_pile() {
    let d = analyze_fixture("landmarks.html", "http://example.com/landmarks.html");
    let expected = [
        // Inline code stays in its sentence (it once left "Call now.").
        "By the author\nFirst paragraph with emphasis and a link.\nSecond paragraph\nafter a break.\nCall run() now.\nHe said twice.\ncell one cell two",
        "Site banner\nMain aside\nAside text",
        "Main headline\nSection headline\nAside headline",
        "Small headline",
        "let x = 1;\nlet y = 2;",
        "A block quote.\nhello",
    ];
    assert_eq!(pile_fields(&d), expected);
    let joined = expected.join("\n\n\n");
    assert_eq!(d.pile.joined(), joined);
    // Without python3 this is recorded as a skip: the digest is not cross-checked.
    if let Some(hex) = python_blake2b(&joined) {
        assert_eq!(hex::encode(d.pile.digest), hex);
    }

    let links: Vec<(&str, Vec<&str>, &str)> = d
        .links
        .iter()
        .map(|l| (l.url.as_str(), flags(&l.location), l.text.as_str()))
        .collect();
    assert_eq!(
        links,
        [
            ("http://example.com/", vec!["header", "nav"], "Home"),
            ("http://example.com/about", vec!["header", "nav"], "About"),
            (
                "http://example.com/other",
                vec!["main", "paragraph"],
                "link"
            ),
        ]
    );
    assert_eq!(d.description.title.as_deref(), Some("Landmarks test"));
    assert_eq!(
        d.description.primary_headline.as_deref(),
        Some("Main headline")
    );
    assert_eq!(d.description.primary_language.as_deref(), Some("en-gb"));
    // No counted links; 24 words of text outside links.
    assert_eq!(d.description.indexiness, -0.48);
    assert_eq!(d.encoding, "UTF-8");
    assert_eq!(d.encoding_source, EncodingSource::MetaElement);
    assert_eq!(d.text_utf8.as_bytes(), fixture("landmarks.html").as_slice());
}

#[test]
fn digest_changes_with_any_field_and_ignores_markup() {
    let page = |body: &str| analyze(body.as_bytes(), None, &url("http://example.com/")).pile;
    let a = page("<main><p>Same words</p></main>");
    let b = page("<main>\n  <div><span>Same</span>   words</div>\n</main>");
    assert_eq!(a.digest, b.digest);
    let c = page("<main><p>Same words</p></main><p>more</p>");
    assert_ne!(a.digest, c.digest);
    // Moving text between fields changes the digest even when the words are equal.
    let d = page("<main><h2>Same words</h2></main>");
    assert_ne!(a.digest, d.digest);
    // The empty pile's digest is BLAKE2b-512 of five separators.
    let empty = page("");
    assert!(empty.is_empty());
    if let Some(hex) = python_blake2b(&"\n\n\n".repeat(5)) {
        assert_eq!(hex::encode(empty.digest), hex);
    }
}

#[test]
fn main_region_beats_an_earlier_article() {
    let d = analyze_fixture("region-main.html", "http://example.com/");
    assert_eq!(
        pile_fields(&d),
        [
            "Main text",
            "Article before main\nSecond main",
            "",
            "",
            "",
            ""
        ]
    );
}

#[test]
fn first_article_outside_asides_is_the_region() {
    let d = analyze_fixture("region-article.html", "http://example.com/");
    assert_eq!(
        pile_fields(&d),
        [
            "Byline\nPost body",
            "Header text\nRelated article\nPull quote\nSecond article\nLoose text",
            "Post",
            "",
            "",
            ""
        ]
    );
}

#[test]
fn without_landmarks_the_body_is_the_region() {
    let d = analyze_fixture("region-none.html", "http://example.com/");
    assert_eq!(
        pile_fields(&d),
        [
            "Body text\nMore body",
            "Header text\nAside text\nRole banner",
            "",
            "",
            "",
            ""
        ]
    );
}

#[test]
fn every_location_flag() {
    let d = analyze_fixture("locations.html", "http://example.com/locations.html");
    let got: Vec<(&str, Vec<&str>, bool)> = d
        .links
        .iter()
        .map(|l| (l.url.path(), flags(&l.location), l.contains_headline))
        .collect();
    let expected: Vec<(&str, Vec<&str>, bool)> = vec![
        ("/header", vec!["header"], false),
        ("/footer", vec!["footer"], false),
        ("/aside", vec!["aside"], false),
        ("/nav", vec!["nav"], false),
        ("/form", vec!["form"], false),
        ("/main", vec!["main"], false),
        ("/article", vec!["article"], false),
        ("/section", vec!["section"], false),
        ("/table", vec!["table"], false),
        ("/figure", vec!["figure"], false),
        ("/address", vec!["address"], false),
        ("/code", vec!["code"], false),
        ("/headline", vec!["headline"], false),
        ("/list", vec!["list"], false),
        ("/paragraph", vec!["paragraph"], false),
        ("/wraps", vec![], true),
        ("/role-nav", vec!["nav"], false),
        ("/nested", vec!["article", "section", "paragraph"], false),
        ("/none", vec![], false),
    ];
    assert_eq!(got, expected);
    assert!(
        d.links
            .iter()
            .all(|l| l.tag == "a" && l.locality == LinkLocality::SameSite)
    );
}

#[test]
fn every_destination_type() {
    use DestinationType::*;
    let d = analyze_fixture(
        "destinations.html",
        "http://example.com/d/destinations.html",
    );
    let got: Vec<(&str, &str, &str, i64)> = d
        .links
        .iter()
        .map(|l| {
            (
                l.tag,
                l.attribute,
                l.url.as_str(),
                l.destination_type.code(),
            )
        })
        .collect();
    let e = |tag, attribute, u, t: DestinationType| (tag, attribute, u, t.code());
    let expected = vec![
        e("link", "href", "http://example.com/style", Stylesheet),
        e("link", "href", "http://example.com/feed", Feed),
        e("link", "href", "http://example.com/atom", Feed),
        e("link", "href", "http://example.com/favicon", Image),
        e("link", "href", "http://example.com/preloaded", Script),
        e("link", "href", "http://example.com/page2", Document),
        e("script", "src", "http://example.com/app.js", Script),
        e("a", "href", "http://example.com/doc", Document),
        e("a", "href", "http://example.com/page.html", Document),
        e("a", "href", "http://example.com/paper.pdf", File),
        e("a", "href", "http://example.com/download", File),
        e("a", "href", "http://example.com/pic.JPG", Image),
        e("a", "href", "http://example.com/song.mp3", Audio),
        e("a", "href", "http://example.com/clip.mp4", Video),
        e("a", "href", "http://example.com/news.rss", Feed),
        e("a", "href", "http://example.com/movie.swf", Media),
        e("a", "href", "mailto:someone@example.com", Communication),
        e("a", "href", "tel:+1-555-0100", Communication),
        e("a", "href", "sms:+15550100", Communication),
        e("a", "href", "xmpp:someone@example.com", Communication),
        e("img", "src", "http://example.com/img", Image),
        e("audio", "src", "http://example.com/audio", Audio),
        e("video", "src", "http://example.com/video", Video),
        e("video", "poster", "http://example.com/poster", Image),
        e("source", "src", "http://example.com/video-source", Video),
        e("source", "src", "http://example.com/audio-source", Audio),
        e("source", "src", "http://example.com/picture-source", Image),
        e("img", "src", "http://example.com/pic.png", Image),
        e("source", "src", "http://example.com/typed-source", Audio),
        e("iframe", "src", "http://example.com/frame", Document),
        e("embed", "src", "http://example.com/embed", Media),
        e("object", "data", "http://example.com/object.svg", Image),
    ];
    assert_eq!(got, expected);
    assert_eq!(d.links[1].text, "RSS feed");
    assert_eq!(d.links[20].text, "an image");
    let mail = &d.links[16];
    assert_eq!(mail.locality, LinkLocality::OtherSite);
    // The codes the summary database stores.
    let codes: Vec<i64> = [
        File,
        Document,
        Feed,
        Stylesheet,
        Script,
        Media,
        Image,
        Audio,
        Video,
        Communication,
    ]
    .iter()
    .map(|t| t.code())
    .collect();
    assert_eq!(codes, [0, 1, 2, 3, 4, 100, 101, 102, 103, 1000]);
}

#[test]
fn rel_flags() {
    let d = analyze_fixture("rel.html", "http://example.com/");
    let rels: Vec<(&str, &Rel)> = d.links.iter().map(|l| (l.url.path(), &l.rel)).collect();
    let rel = |nofollow, me, tag, other: &[&str]| Rel {
        nofollow,
        me,
        tag,
        other: other.iter().map(|s| s.to_string()).collect(),
    };
    assert_eq!(
        rels,
        [
            ("/author", &rel(false, true, false, &["author"])),
            ("/", &rel(true, false, false, &[])),
            ("/", &rel(false, true, false, &[])),
            ("/tags/rust", &rel(false, false, true, &[])),
            (
                "/x",
                &rel(true, false, false, &["noopener", "ugc", "sponsored"])
            ),
            ("/y", &rel(false, false, false, &[])),
        ]
    );
    assert_eq!(d.links[1].url.as_str(), "https://other.example/");
}

#[test]
fn base_href_fragments_and_locality() {
    use LinkLocality::*;
    let d = analyze_fixture("base-href.html", "http://example.com/dir/page.html");
    assert_eq!(d.base_url.as_str(), "http://example.com/base/sub/");
    let got: Vec<(&str, Option<&str>, LinkLocality)> = d
        .links
        .iter()
        .map(|l| (l.url.as_str(), l.fragment.as_deref(), l.locality))
        .collect();
    assert_eq!(
        got,
        [
            ("http://example.com/base/sub/rel.html", None, SameSite),
            ("http://example.com/base/up.html", Some("frag"), SameSite),
            ("http://example.com/base/sub/", Some("top"), SameSite),
            (
                "http://example.com/dir/page.html",
                Some("sec"),
                SelfDocument
            ),
            ("http://example.com/dir/page.html", Some(""), SelfDocument),
            ("http://www.example.com/x", None, SameSite),
            ("https://example.org/", None, OtherSite),
            ("http://cdn.example.com/lib.js", None, OtherSite),
            ("http://example.com/base/sub/?q=1", None, SameSite),
        ]
    );
    assert_eq!(d.links[7].destination_type, DestinationType::Script);
    let codes: Vec<i64> = [SelfDocument, SameSite, OtherSite]
        .iter()
        .map(|l| l.code())
        .collect();
    assert_eq!(codes, [0, 1, 2]);
}

#[test]
fn link_text_sources() {
    let d = analyze_fixture("link-text.html", "http://example.com/");
    let got: Vec<(&str, &str, &str)> = d
        .links
        .iter()
        .map(|l| (l.tag, l.url.path(), l.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("a", "/nav", "Nav link"),
            ("a", "/image-link", "Logo Home"),
            ("img", "/logo.png", "Logo"),
            ("a", "/aria", "Close dialog"),
            ("a", "/title", "Titled"),
            ("a", "/script", "Text after"),
            ("area", "/area", "Area alt"),
            ("link", "/help", "Help page"),
            ("a", "/headline-link", "Headline text"),
        ]
    );
    assert!(d.links[8].contains_headline);
    assert_eq!(flags(&d.links[8].location), Vec::<&str>::new());
}

#[test]
fn description_fallbacks() {
    let d = analyze_fixture("description-og.html", "http://example.com/");
    assert_eq!(
        d.description.description.as_deref(),
        Some("Open Graph description")
    );
    assert_eq!(d.description.primary_language.as_deref(), Some("de-at"));
    let d = analyze_fixture("description-meta.html", "http://example.com/");
    assert_eq!(
        d.description.description.as_deref(),
        Some("Meta description")
    );
    assert_eq!(d.description.primary_language, None);
    let d = analyze_fixture("description-dc.html", "http://example.com/");
    assert_eq!(
        d.description.description.as_deref(),
        Some("Dublin Core description")
    );
    assert_eq!(d.description.primary_language.as_deref(), Some("fr-ca"));
    let d = analyze_fixture("landmarks.html", "http://example.com/");
    assert_eq!(d.description.description, None);
}

#[test]
fn canonical_robots_refresh() {
    let d = analyze_fixture("canonical-robots.html", "http://example.com/a/b/page.html");
    assert_eq!(
        d.description.directives.canonical.as_ref().map(Url::as_str),
        Some("http://example.com/a/canonical/page?id=7")
    );
    assert!(d.description.directives.robots.noindex);
    assert!(!d.description.directives.robots.nofollow);
    assert_eq!(
        d.description.directives.refresh,
        Some(Refresh {
            delay_seconds: 10,
            url: Some(url("http://example.com/next"))
        })
    );
    let d = analyze_fixture("robots-none.html", "http://example.com/");
    assert!(d.description.directives.robots.noindex && d.description.directives.robots.nofollow);
    assert_eq!(d.description.directives.canonical, None);
    let d = analyze_fixture("landmarks.html", "http://example.com/");
    assert!(!d.description.directives.robots.noindex && !d.description.directives.robots.nofollow);
}

#[test]
fn created_and_updated_times() {
    let d = analyze_fixture("dates-article.html", "http://example.com/2000/01/01/");
    assert_eq!(d.description.created, Some(1_615_723_200)); // 2021-03-14T12:00:00Z
    assert_eq!(d.description.updated, Some(1_615_809_600)); // 2021-03-15T12:00:00Z
    let d = analyze_fixture("dates-dc.html", "http://example.com/");
    assert_eq!(d.description.created, Some(1_582_934_400)); // 2020-02-29
    assert_eq!(d.description.updated, Some(1_583_051_400)); // 2020-03-01T08:30:00Z
    let d = analyze_fixture("dates-url.html", "http://example.com/2021/03/14/pi-day/");
    assert_eq!(d.description.created, Some(1_615_680_000)); // 2021-03-14
    assert_eq!(d.description.updated, None);
    let d = analyze_fixture("dates-url.html", "http://example.com/pi-day/");
    assert_eq!(d.description.created, None);
}

#[test]
fn title_prefers_a_longer_first_h1() {
    let d = analyze_fixture("title-h1.html", "http://example.com/");
    assert_eq!(
        d.description.title.as_deref(),
        Some("A much longer headline")
    );
    assert_eq!(
        d.description.primary_headline.as_deref(),
        Some("A much longer headline")
    );
    assert_eq!(
        d.pile.big_headlines,
        "A much longer headline\nSecond headline"
    );
    let d = analyze(b"<title>x</title>", None, &url("http://example.com/"));
    assert_eq!(d.description.title.as_deref(), Some("x"));
    assert_eq!(d.description.primary_headline, None);
    let d = analyze(b"<p>nothing", None, &url("http://example.com/"));
    assert_eq!(d.description.title, None);
}

#[test]
fn indexiness_separates_index_pages_from_articles() {
    let d = analyze_fixture("index-page.html", "http://example.com/index.html");
    // Five distinct targets in headlines, lists and tables of the main region; 19 words of
    // text outside links.
    assert!(
        (d.description.indexiness - (5.0 - 19.0 / 50.0)).abs() < 1e-9,
        "{}",
        d.description.indexiness
    );
    let d = analyze_fixture("landmarks.html", "http://example.com/landmarks.html");
    assert!(d.description.indexiness < 0.0);
}

// ---- Encodings ----

const LATIN_TEXT: &str = "\u{201c}Quoted\u{201d} price: 5\u{20ac} na\u{ef}ve caf\u{e9}";
const JAPANESE_TEXT: &str = "こんにちは世界、テストです。";

#[test]
fn windows_1252_from_meta() {
    let d = analyze_fixture("charset-meta-windows-1252.html", "http://example.com/");
    assert_eq!(
        (d.encoding, d.encoding_source),
        ("windows-1252", EncodingSource::MetaElement)
    );
    assert!(!d.had_decoding_errors);
    assert_eq!(d.description.title.as_deref(), Some("Café"));
    assert_eq!(d.pile.text, LATIN_TEXT);
    assert_eq!(
        d.text_utf8,
        format!(
            "<!DOCTYPE html>\n<html><head><meta charset=\"windows-1252\"><title>Café</title></head>\n<body><p>{LATIN_TEXT}</p></body></html>\n"
        )
    );
}

#[test]
fn windows_1252_from_header() {
    let body = fixture("charset-header-windows-1252.html");
    let base = url("http://example.com/");
    let d = analyze(&body, Some("text/html; charset=windows-1252"), &base);
    assert_eq!(
        (d.encoding, d.encoding_source),
        ("windows-1252", EncodingSource::ContentTypeHeader)
    );
    assert_eq!(d.pile.text, LATIN_TEXT);
    // ISO-8859-1 is decoded as windows-1252, as browsers do (0x80 is the euro sign).
    let d = analyze(&body, Some("text/html;charset=\"ISO-8859-1\""), &base);
    assert_eq!(d.encoding, "windows-1252");
    assert_eq!(d.pile.text, LATIN_TEXT);
    // Without any declaration the bytes are read as UTF-8 with replacement characters.
    let d = analyze(&body, Some("text/html"), &base);
    assert_eq!(
        (d.encoding, d.encoding_source),
        ("UTF-8", EncodingSource::Default)
    );
    assert!(d.had_decoding_errors);
    assert_eq!(
        d.pile.text,
        "\u{fffd}Quoted\u{fffd} price: 5\u{fffd} na\u{fffd}ve caf\u{fffd}"
    );
}

#[test]
fn shift_jis_from_meta_and_header() {
    let d = analyze_fixture("charset-meta-shift_jis.html", "http://example.jp/");
    assert_eq!(
        (d.encoding, d.encoding_source),
        ("Shift_JIS", EncodingSource::MetaElement)
    );
    assert_eq!(d.description.title.as_deref(), Some("日本語"));
    assert_eq!(d.pile.text, JAPANESE_TEXT);
    let d = analyze(
        &fixture("charset-header-shift_jis.html"),
        Some("text/html; charset=shift_jis"),
        &url("http://example.jp/"),
    );
    assert_eq!(
        (d.encoding, d.encoding_source),
        ("Shift_JIS", EncodingSource::ContentTypeHeader)
    );
    assert!(!d.had_decoding_errors);
    assert_eq!(d.pile.text, JAPANESE_TEXT);
}

#[test]
fn byte_order_marks() {
    // The UTF-8 BOM wins over a header and a <meta> that both say windows-1252.
    let d = analyze(
        &fixture("charset-bom-utf-8.html"),
        Some("text/html; charset=windows-1252"),
        &url("http://example.com/"),
    );
    assert_eq!(
        (d.encoding, d.encoding_source),
        ("UTF-8", EncodingSource::ByteOrderMark)
    );
    assert!(d.text_utf8.starts_with("<!DOCTYPE html>"));
    assert_eq!(d.description.title.as_deref(), Some("Café"));
    assert_eq!(d.pile.text, LATIN_TEXT);
    let d = analyze_fixture("charset-bom-utf-16le.html", "http://example.jp/");
    assert_eq!(
        (d.encoding, d.encoding_source),
        ("UTF-16LE", EncodingSource::ByteOrderMark)
    );
    assert_eq!(d.description.title.as_deref(), Some("日本語"));
    assert_eq!(d.pile.text, JAPANESE_TEXT);
}

// ---- webarchive-commons link-extraction-test.warc ----

/// A response record's target URI, Content-Type and HTTP body.
struct Page {
    uri: Option<String>,
    content_type: Option<String>,
    body: Vec<u8>,
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Splits the WARC at its record starts. Its Content-Length values do not match the bodies
/// (on purpose or not: warcio stops after four records), so a record's block is taken to run
/// to the next `WARC/1.0` line.
fn response_pages(warc: &[u8]) -> Vec<Page> {
    let mut starts = vec![0];
    let mut at = 0;
    while let Some(p) = find(warc, b"\r\nWARC/1.0\r\n", at + 1) {
        starts.push(p + 2);
        at = p + 2;
    }
    starts.push(warc.len());
    let mut pages = Vec::new();
    for pair in starts.windows(2) {
        let record = &warc[pair[0]..pair[1]];
        let Some(head_end) = find(record, b"\r\n\r\n", 0) else {
            continue;
        };
        let warc_head = String::from_utf8_lossy(&record[..head_end]);
        if header(&warc_head, "WARC-Type") != Some("response") {
            continue;
        }
        let block = &record[head_end + 4..];
        let Some(http_end) = find(block, b"\r\n\r\n", 0) else {
            continue;
        };
        let http_head = String::from_utf8_lossy(&block[..http_end]);
        let mut body = &block[http_end + 4..];
        while let Some(rest) = body.strip_suffix(b"\r\n") {
            body = rest;
        }
        pages.push(Page {
            uri: header(&warc_head, "WARC-Target-URI").map(str::to_owned),
            content_type: header(&http_head, "Content-Type").map(str::to_owned),
            body: body.to_vec(),
        });
    }
    pages
}

/// (TAG@/attribute, URL with fragment) of our links, sorted.
fn link_keys(links: &[Link]) -> Vec<(String, String)> {
    let mut keys: Vec<(String, String)> = links
        .iter()
        .map(|l| {
            let mut u = l.url.clone();
            u.set_fragment(l.fragment.as_deref());
            (
                format!("{}@/{}", l.tag.to_uppercase(), l.attribute),
                u.to_string(),
            )
        })
        .collect();
    keys.sort();
    keys
}

/// The links webarchive-commons' ExtractingParseObserverTest expects from each page, as
/// (path, raw value), restricted to the elements and attributes analysed here and resolved
/// against the page's base. Its parser leaves entities undecoded (`&amp;`); an HTML5 parser
/// decodes them.
fn expected_keys(expected: &[(&str, &str)], base: &Url) -> Vec<(String, String)> {
    const ANALYSED: [&str; 13] = [
        "A@/href",
        "AREA@/href",
        "LINK@/href",
        "IMG@/src",
        "IFRAME@/src",
        "FRAME@/src",
        "AUDIO@/src",
        "VIDEO@/src",
        "VIDEO@/poster",
        "SOURCE@/src",
        "EMBED@/src",
        "OBJECT@/data",
        "SCRIPT@/src",
    ];
    let mut keys: Vec<(String, String)> = expected
        .iter()
        .filter(|(path, _)| ANALYSED.contains(path))
        .map(|(path, raw)| {
            (
                path.to_string(),
                base.join(&raw.replace("&amp;", "&")).unwrap().to_string(),
            )
        })
        .collect();
    keys.sort();
    keys
}

#[test]
fn webarchive_commons_link_extraction_warc() {
    let Some(path) = common::corpus(
        "webarchive-commons/src/test/resources/org/archive/resource/html/link-extraction-test.warc",
    ) else {
        return;
    };
    let warc = std::fs::read(path).unwrap();
    let pages = response_pages(&warc);
    assert_eq!(pages.len(), 7);
    let docs: Vec<Document> = pages
        .iter()
        .map(|p| {
            let uri = p
                .uri
                .as_deref()
                .unwrap_or("http://www.example.com/onclick.html");
            analyze(&p.body, p.content_type.as_deref(), &url(uri))
        })
        .collect();

    // What the reference test expects per page (all its entries, including the ones for
    // attributes not analysed here, which `expected_keys` filters out).
    let html4: &[(&str, &str)] = &[
        ("__base__", "http://www.example.com/"),
        ("__meta_refresh__", "http://www.example.com/redirected.html"),
        ("BODY@/background", "background.jpg"),
        ("A@/href", "http://www.example.com/a-href.html"),
        ("A@/href", "#anchor"),
        ("IMG@/src", "image.png"),
        ("IMG@/src", "image.gif"),
        (
            "IMG@/longdesc",
            "http://example.com/image-description.html#image.gif",
        ),
        ("OBJECT@/data", "helloworld.swf"),
        ("Q@/cite", "http://www.example.com/shakespeare.html"),
        (
            "BLOCKQUOTE@/cite",
            "http://www.example.com/shakespeare-long.html",
        ),
    ];
    let video: &[(&str, &str)] = &[
        ("LINK@/href", "http:///www.example.com/video.html"),
        ("LINK@/href", "video.rss"),
        (
            "VIDEO@/poster",
            "https://archive.org/download/WebmVp8Vorbis/webmvp8.gif",
        ),
        (
            "SOURCE@/src",
            "https://archive.org/download/WebmVp8Vorbis/webmvp8.webm",
        ),
        (
            "SOURCE@/src",
            "https://archive.org/download/WebmVp8Vorbis/webmvp8_512kb.mp4",
        ),
        (
            "SOURCE@/src",
            "https://archive.org/download/WebmVp8Vorbis/webmvp8.ogv",
        ),
    ];
    let poor: &[(&str, &str)] = &[("A@/href", "http://www.example.com/")];
    let fb_video: &[(&str, &str)] = &[
        (
            "BLOCKQUOTE@/cite",
            "https://www.facebook.com/facebook/videos/10153231379946729/",
        ),
        (
            "A@/href",
            "https://www.facebook.com/facebook/videos/10153231379946729/",
        ),
        ("A@/href", "https://www.facebook.com/facebook/"),
        (
            "DIV@/data-href",
            "https://www.facebook.com/facebook/videos/10153231379946729/",
        ),
    ];
    let data_href: &[(&str, &str)] = &[
        ("LINK@/href", "standard.css"),
        (
            "DIV@/data-href",
            "https://www.facebook.com/elegantthemes/videos/10153760379211923/",
        ),
        (
            "DIV@/data-href",
            "https://www.facebook.com/facebook/videos/10153231379946729/",
        ),
        (
            "BLOCKQUOTE@/cite",
            "https://www.facebook.com/facebook/videos/10153231379946729/",
        ),
        (
            "A@/href",
            "https://www.facebook.com/facebook/videos/10153231379946729/",
        ),
        ("A@/href", "https://www.facebook.com/facebook/"),
        ("SOURCE@/src", "//edge.flowplayer.org/bauhaus.webm"),
        ("SOURCE@/src", "//edge.flowplayer.org/bauhaus.mp4"),
        ("BUTTON@/data-href", "//edge.flowplayer.org/functional.webm"),
        ("ARTICLE@/data-href", "/content-page"),
        ("A@/href", "/content-page"),
        ("A@/href", "/tags/content"),
        ("A@/href", "/tags/headlines"),
        ("DIV@/data-href", "http://grabaperch.com"),
        ("LINK@/data-href", "green.css"),
        ("LINK@/data-href", "blue.css"),
        ("A@/data-href", "http://codecanyon.net/user/CodingJack"),
        ("IMG@/src", "jackbox/img/thumbs/4.jpg"),
        ("A@/data-href", "//venobox-destination"),
        ("A@/href", "#"),
        (
            "DIV@/data-href",
            "http://www.youtube.com/v/itTskyFLSS8&amp;rel=0&amp;autohide=1&amp;showinfo=0&amp;autoplay=1",
        ),
        ("A@/href", "#"),
        (
            "IFRAME@/src",
            "http://www.youtube.com/v/itTskyFLSS8&amp;rel=0&amp;autohide=1&amp;showinfo=0",
        ),
    ];
    let fb_social: &[(&str, &str)] = &[
        ("DIV@/data-uri", "http://www.your-domain.com/your-page.html"),
        (
            "DIV@/data-href",
            "https://developers.facebook.com/docs/plugins/comments#configurator",
        ),
        ("DIV@/data-href", "https://www.facebook.com/zuck"),
        ("BLOCKQUOTE@/cite", "https://www.facebook.com/facebook"),
        ("A@/href", "https://www.facebook.com/facebook"),
    ];
    let onclick: &[(&str, &str)] = &[];
    for (i, expected) in [html4, video, poor, fb_video, data_href, fb_social, onclick]
        .iter()
        .enumerate()
    {
        assert_eq!(
            link_keys(&docs[i].links),
            expected_keys(expected, &docs[i].base_url),
            "page {i}"
        );
    }

    // The non-link expectations of the reference test, as this analysis reports them.
    let html4 = &docs[0];
    assert_eq!(html4.base_url.as_str(), "http://www.example.com/");
    assert_eq!(
        html4.description.directives.refresh,
        Some(Refresh {
            delay_seconds: 5,
            url: Some(url("http://www.example.com/redirected.html"))
        })
    );
    assert_eq!(
        html4.description.title.as_deref(),
        Some("Test XHTML Link Extraction")
    );
    assert_eq!(html4.pile.text, "A@/href\nanchor only");
    assert_eq!(
        html4.pile.quote_text,
        "To be or not to be.\nTo be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\nThe slings and arrows of outrageous fortune, \u{2026}"
    );
    let anchor = html4
        .links
        .iter()
        .find(|l| l.fragment.as_deref() == Some("anchor"))
        .unwrap();
    // "#anchor" resolves against <base href>, which is another document than the page.
    assert_eq!(anchor.locality, LinkLocality::SameSite);
    let object = html4.links.iter().find(|l| l.tag == "object").unwrap();
    assert_eq!(object.destination_type, DestinationType::Media);

    let video = &docs[1];
    assert_eq!(
        video
            .description
            .directives
            .canonical
            .as_ref()
            .map(Url::as_str),
        Some("http://www.example.com/video.html")
    );
    let types: Vec<DestinationType> = video.links.iter().map(|l| l.destination_type).collect();
    assert_eq!(
        types,
        [
            DestinationType::Document,
            DestinationType::Feed,
            DestinationType::Image,
            DestinationType::Video,
            DestinationType::Video,
            DestinationType::Video
        ]
    );
    assert_eq!(video.links[1].text, "Videos");

    let poor = &docs[2];
    assert_eq!(
        poor.description.title.as_deref(),
        Some("Testing poor HTML5")
    );
    assert_eq!(
        poor.description.description.as_deref(),
        Some("A bad but valid HTML5 document")
    );
    assert_eq!(
        poor.pile.text,
        "This is valid HTML5!\nparagraph one with link."
    );
    assert_eq!(poor.pile.secondary_text, "header");
    assert_eq!(poor.pile.big_headlines, "headline");
    assert_eq!(flags(&poor.links[0].location), ["paragraph"]);

    let fb_video = &docs[3];
    assert_eq!(
        fb_video.pile.quote_text,
        "How to Share With Just Friends\nHow to share with just friends.\nPosted by Facebook on Friday, December 5, 2014"
    );

    let data_href = &docs[4];
    assert_eq!(
        data_href.pile.text,
        "And here goes a bit of copy about the content of the article.\nTags: content, headlines"
    );
    let content_page = data_href
        .links
        .iter()
        .find(|l| l.url.path() == "/content-page")
        .unwrap();
    assert_eq!(flags(&content_page.location), ["article", "headline"]);
    let iframe = data_href.links.iter().find(|l| l.tag == "iframe").unwrap();
    assert_eq!(
        iframe.url.as_str(),
        "http://www.youtube.com/v/itTskyFLSS8&rel=0&autohide=1&showinfo=0"
    );
    let self_links = data_href
        .links
        .iter()
        .filter(|l| l.locality == LinkLocality::SelfDocument)
        .count();
    assert_eq!(self_links, 2);

    assert_eq!(
        docs[6].description.title.as_deref(),
        Some("Test Extraction of URLs from INPUT onClick Attributes")
    );
}
