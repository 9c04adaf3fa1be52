//! `html::outline` against `html::analyze`. The crawl projection takes a page's links and
//! directives from the outline (one pass, no text pile), the summary projection from the full
//! analysis; on every page they must give the same distinct link URLs in the same order, the same
//! canonical URL, robots flags and refresh, the same decoded text and the same limits.
//! Pages: every HTML payload of the shared corpus and of the fixture crawls (read with
//! warcio), the HTML fixtures, and snippets for each rule links are collected by.

mod common;

use std::path::Path;

use sediment::internals::html::{MAX_LINKS, analyze, outline};
use url::Url;

fn check(label: &str, body: &[u8], content_type: Option<&str>, url: &Url) {
    let full = analyze(body, content_type, url);
    let outlined = outline(body, content_type, url);
    let mut distinct = std::collections::HashSet::new();
    let full_links: Vec<&str> = full
        .links
        .iter()
        .map(|l| l.url.as_str())
        .filter(|u| distinct.insert(*u))
        .collect();
    let outline_links: Vec<&str> = outlined.links.iter().map(Url::as_str).collect();
    assert_eq!(outline_links, full_links, "{label}: links");
    assert_eq!(
        outlined.directives, full.description.directives,
        "{label}: directives"
    );
    assert!(
        outlined.text_utf8 == full.text_utf8,
        "{label}: decoded text"
    );
    assert_eq!(outlined.limits, full.limits, "{label}: limits");
}

fn page_url(url: &str) -> Url {
    Url::parse(url).unwrap_or_else(|_| Url::parse("http://example.org/").unwrap())
}

#[test]
fn corpus_pages_outline_as_analysed() {
    let Some(pages) = common::corpus_html_pages() else {
        return;
    };
    assert!(
        pages.len() >= 50,
        "{} HTML pages in the corpus",
        pages.len()
    );
    let with_links = pages
        .iter()
        .filter(|p| {
            let ct = Some(p.content_type.as_str()).filter(|c| !c.is_empty());
            check(&p.label, &p.body, ct, &page_url(&p.url));
            !outline(&p.body, ct, &page_url(&p.url)).links.is_empty()
        })
        .count();
    assert!(
        with_links * 2 > pages.len(),
        "{with_links} pages with links"
    );
}

#[test]
fn fixture_crawls_and_pages_outline_as_analysed() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let pages =
        common::warc_html_pages(&fixtures.join("crawl")).expect("warcio reads the fixtures");
    let more =
        common::warc_html_pages(&fixtures.join("wget-cdx")).expect("warcio reads the fixtures");
    assert!(pages.len() + more.len() >= 10);
    for p in pages.iter().chain(&more) {
        let ct = Some(p.content_type.as_str()).filter(|c| !c.is_empty());
        check(&p.label, &p.body, ct, &page_url(&p.url));
    }
    let url = Url::parse("http://example.org/dir/page.html").unwrap();
    let mut count = 0;
    for entry in std::fs::read_dir(fixtures.join("html")).expect("fixtures/html") {
        let path = entry.expect("entry").path();
        let body = std::fs::read(&path).expect("read fixture");
        check(&path.display().to_string(), &body, None, &url);
        count += 1;
    }
    assert!(count >= 20, "{count} HTML fixtures");
}

/// One snippet or more per rule of link collection (see the `html` module documentation).
const RULES: &[&str] = &[
    "",
    "no markup at all",
    // every element and attribute that holds a link, in document order
    r#"<a href="a.html">a</a><area href="area.html"><link rel="stylesheet" href="s.css">
       <img src="i.png"><iframe src="f.html"></iframe>
       <audio src="au.ogg"></audio><video src="v.webm" poster="p.jpg"><source src="so.webm"></video>
       <embed src="e.swf"><object data="o.swf"></object><script src="j.js"></script>"#,
    r#"<html><head></head><frameset><frame src="fr.html"><frame src="second.html"></frameset></html>"#,
    // the first <base href> counts wherever it is, resolved against the document URL
    r#"<a href="x.html">x</a><base href="/sub/"><base href="/other/"><a href="y.html#f">y</a>"#,
    r#"<base href=""><a href="x.html">x</a>"#,
    r#"<base href="http://[bad"><a href="x.html">x</a>"#,
    // values not reported: empty, white space only, unparsable, ignored schemes
    r#"<a href="">e</a><a href="  ">w</a><a href="http://[::1">bad</a><a href="javascript:void(0)">j</a>
       <img src="data:image/png;base64,AA=="><a href="about:blank">b</a><a href="blob:x">b</a>
       <a href="vbscript:x">v</a><a href=" mailto:a@example.org ">m</a><a href="ftp://example.org/f">f</a>"#,
    // fragments are dropped; duplicates are kept (the crawl removes them itself)
    r##"<a href="#top">t</a><a href="a.html#x">1</a><a href="a.html#y">2</a><a href="a.html">3</a>"##,
    // a target parsed once stands for every value with the same part before `#`; control
    // characters at the end are trimmed from a whole value, kept before a `#`
    "<a href=\"a.html\u{1}\">1</a><a href=\"a.html\u{1}#x\">2</a><a href=\"a.html\u{b}\">3</a>\
     <a href=\"a.html\u{b}#y\">4</a><a href=\"a.html#\">5</a><a href=\"#\">6</a><a href=\"?q#f\">7</a>\
     <a href=\"?q\">8</a><a href=\"b c.html#z\">9</a><a href=\"b c.html\">10</a><a href=\"b%20c.html\">11</a>\
     <a href=\"javascript:x#y\">12</a><a href=\"javascript:x\">13</a><a href=\"http://[::1#x\">14</a>",
    // hidden elements, head, nav and footer are looked at
    r#"<head><link rel="canonical" href="/c.html"><script src="h.js"></script></head><body>
       <nav><a href="n.html">n</a></nav><div hidden><a href="h.html">h</a></div>
       <p style="display:none"><a href="s.html">s</a></p><footer><a href="f.html">f</a></footer>"#,
    // svg, template contents and noscript are not
    r#"<svg><a href="svg.html"><image href="i.png"/></a></svg><a href="after-svg.html">a</a>
       <template><a href="t.html">t</a></template><noscript><a href="ns.html">n</a></noscript>
       <math><mi><a href="in-math.html">m</a></mi></math>"#,
    // mis-nested and implied structure: links land where html5ever puts them
    r#"<table><a href="foster.html">f</a><tr><td><a href="cell.html">c</a></table>
       <a href="outer.html"><a href="inner.html">i</a></a><p><a href="p.html"><div>d</div></a>"#,
    // directives
    r#"<meta name="robots" content="NOINDEX, nofollow"><meta name="robots" content="none">
       <meta http-equiv="refresh" content="0; url='/next.html#n'">
       <link rel="canonical alternate" href=" /canonical.html#c "><link rel="canonical" href="/second.html">"#,
    r#"<meta http-equiv="Refresh" content="5"><link rel="canonical" href="">"#,
    // attributes in upper case and with entities
    r#"<A HREF="Upper.html">u</A><img SRC="a&amp;b.png"><a href="q?a=1&amp;b=2">q</a>"#,
];

#[test]
fn rules_of_link_collection_outline_as_analysed() {
    let url = Url::parse("http://example.org/dir/page.html#here").unwrap();
    for (i, html) in RULES.iter().enumerate() {
        check(&format!("rule {i}"), html.as_bytes(), None, &url);
        check(
            &format!("rule {i} in windows-1252"),
            html.as_bytes(),
            Some("text/html; charset=windows-1252"),
            &url,
        );
    }
    let every = outline(RULES[2].as_bytes(), None, &url);
    assert_eq!(every.links.len(), 12, "{:?}", every.links);
    assert_eq!(outline(RULES[3].as_bytes(), None, &url).links.len(), 2);
    let based = outline(RULES[4].as_bytes(), None, &url);
    assert_eq!(
        based.links.iter().map(Url::as_str).collect::<Vec<_>>(),
        [
            "http://example.org/sub/x.html",
            "http://example.org/sub/y.html"
        ]
    );
}

#[test]
fn repeated_targets_count_towards_the_limit() {
    let url = Url::parse("http://example.org/").unwrap();
    let mut html = String::new();
    for i in 0..MAX_LINKS / 2 {
        html.push_str(&format!(
            "<a href=\"/same#{i}\">{i}</a><a href=\"/p{}\">d</a>",
            i % 7
        ));
    }
    html.push_str("<a href=\"/after-the-limit\">late</a>");
    check("repeated targets", html.as_bytes(), None, &url);
    let outlined = outline(html.as_bytes(), None, &url);
    assert_eq!(outlined.links.len(), 8, "{:?}", outlined.links);
    assert!(outlined.limits.links_truncated);
}

#[test]
fn links_past_the_limit_are_cut_the_same_way() {
    let mut html = String::from(r#"<a href="">empty</a><a href="javascript:x">j</a>"#);
    for i in 0..MAX_LINKS + 3 {
        html.push_str(&format!("<a href=\"/p{i}\">{i}</a>"));
    }
    let url = Url::parse("http://example.org/").unwrap();
    check("many links", html.as_bytes(), None, &url);
    let outlined = outline(html.as_bytes(), None, &url);
    assert_eq!(outlined.links.len(), MAX_LINKS);
    assert!(outlined.limits.links_truncated);
}
