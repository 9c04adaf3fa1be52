//! Hostile HTML: analysis must not panic, must not exhaust the stack, and must stay fast.
//! Each case prints its time; the bound asserted is generous (the machine is shared), the
//! printed times are what to look at.

use std::time::{Duration, Instant};

use sediment::internals::html::{Document, analyze};
use url::Url;

/// Far above what any case takes; a quadratic blow-up takes hours.
const TIME_BOUND: Duration = Duration::from_secs(60);

fn run(name: &str, body: &[u8]) -> Document {
    let base = Url::parse("http://example.com/hostile/").unwrap();
    let start = Instant::now();
    let d = analyze(body, None, &base);
    let took = start.elapsed();
    eprintln!(
        "{name}: {:.1} MB in {:.3} s ({:.1} MB/s); links {}, text {} bytes, limits {:?}",
        body.len() as f64 / 1e6,
        took.as_secs_f64(),
        body.len() as f64 / 1e6 / took.as_secs_f64(),
        d.links.len(),
        d.pile.joined().len(),
        d.limits
    );
    assert!(took < TIME_BOUND, "{name} took {took:?}");
    d
}

fn repeat(unit: &str, n: usize) -> String {
    unit.repeat(n)
}

#[test]
fn deep_nesting() {
    let n = 100_000;
    for tag in [
        "div",
        "span",
        "b",
        "a",
        "blockquote",
        "li",
        "table",
        "template",
        "svg",
        "math",
        "select",
    ] {
        let html = format!(
            "{}deep text{}",
            repeat(&format!("<{tag}>"), n),
            repeat(&format!("</{tag}>"), n)
        );
        let d = run(&format!("{n} nested <{tag}>"), html.as_bytes());
        if !matches!(tag, "template" | "svg" | "select") {
            assert!(d.pile.joined().contains("deep text"), "<{tag}>");
        }
    }
    let html = repeat("<div><span><p><b><i><table><tr><td>", 30_000);
    run("30,000 nested mixed groups", html.as_bytes());
}

#[test]
fn stack_scans_under_a_deep_stack() {
    // Each of these tokens makes the tree builder scan the whole stack of open elements.
    let html = format!("{}{}", repeat("<span>", 600), repeat("</x>", 2_500_000));
    let d = run("10 MB of end tags under 600 spans", html.as_bytes());
    // The work budget cuts it short.
    assert!(d.limits.truncated);
    let html = format!("<ul>{}{}", repeat("<span>", 480), repeat("<li>", 2_500_000));
    run("10 MB of <li> under 480 spans", html.as_bytes());
    let html = format!("{}{}", repeat("<div>", 480), repeat("<p>", 3_300_000));
    run("10 MB of <p> under 480 divs", html.as_bytes());
}

#[test]
fn formatting_element_reconstruction() {
    // Distinct unclosed formatting elements that every paragraph must reopen.
    let mut html = String::new();
    for i in 0..100_000 {
        html.push_str(&format!("<p><b id={i}>x</p>"));
    }
    let d = run("100,000 reopened formatting elements", html.as_bytes());
    assert!(d.pile.text.starts_with("x\nx\nx"));
    let html = repeat("<a href=/x>", 100_000);
    let d = run("100,000 unclosed <a>", html.as_bytes());
    assert_eq!(d.links.len(), 100_000);
}

#[test]
fn unclosed_and_misnested_tags() {
    let html = repeat(
        "<p>para <li>item <dt>term <option>opt <tr>row <td>cell <h1>head <b><i>bi</b></i>",
        50_000,
    );
    run("misnested soup", html.as_bytes());
    let html = repeat("<table><caption><table><td>", 50_000);
    run("tables in captions", html.as_bytes());
    let html = format!("<p>{}", repeat("<!--", 1_000_000));
    run("unclosed comments", html.as_bytes());
    let html = format!("<script>{}", repeat("x<y;", 2_000_000));
    let d = run("unclosed script", html.as_bytes());
    assert!(d.pile.is_empty());
}

#[test]
fn huge_attribute_and_many_attributes() {
    let html = format!("<a href=\"/{}\">long</a>", "x".repeat(20_000_000));
    let d = run("20 MB attribute value", html.as_bytes());
    assert_eq!(d.links.len(), 1);
    assert_eq!(
        d.links[0].url.as_str().len(),
        "http://example.com/".len() + 20_000_000
    );

    let mut html = String::from("<div");
    for i in 0..1_000_000 {
        html.push_str(&format!(" a{i}=1"));
    }
    html.push_str(">after</div>");
    let d = run("1,000,000 attributes on one tag", html.as_bytes());
    assert_eq!(d.pile.text, "after");
    assert_eq!(d.limits.cut_attribute_tags, 1);

    let html = repeat("<body a b c d e f g h>", 100_000);
    run("100,000 <body> tags merging attributes", html.as_bytes());
}

#[test]
fn binary_garbage() {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let bytes: Vec<u8> = (0..8_000_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    let d = run("8 MB random bytes", &bytes);
    assert!(d.had_decoding_errors);
    // Random bytes with a bias towards markup characters.
    let biased: Vec<u8> = bytes
        .iter()
        .map(|&b| b"<>/=\"' a!-&#;\0"[(b % 14) as usize])
        .collect();
    run("8 MB random markup characters", &biased);
}

#[test]
fn fifty_megabyte_document() {
    let page = std::fs::read(format!(
        "{}/fixtures/html/landmarks.html",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let page = String::from_utf8(page).unwrap();
    let body_start = page.find("<body>").unwrap() + "<body>".len();
    let body_end = page.find("</body>").unwrap();
    let unit = &page[body_start..body_end];
    let mut html = String::from("<!DOCTYPE html><title>big</title><body>");
    while html.len() < 50_000_000 {
        html.push_str(unit);
    }
    let d = run("50 MB document", html.as_bytes());
    assert!(d.pile.text.starts_with("By the author"));
    // The node limit stops parsing part of the way through.
    assert!(d.limits.truncated);
    assert!(d.links.len() >= 50_000, "{}", d.links.len());
}

#[test]
fn random_tag_soup_does_not_panic() {
    // Fragments chosen to reach the unusual parts of tree construction: tables and foster
    // parenting, templates, foreign content, formatting elements, frames, base and meta.
    const PIECES: [&str; 48] = [
        "<a href=x>",
        "</a>",
        "<b>",
        "</b>",
        "<i id=1>",
        "</i>",
        "<p>",
        "</p>",
        "<div>",
        "</div>",
        "<table>",
        "</table>",
        "<tr>",
        "<td>",
        "</td>",
        "<th>",
        "<caption>",
        "<colgroup>",
        "<template>",
        "</template>",
        "<svg>",
        "</svg>",
        "<math>",
        "<mi>",
        "<foreignObject>",
        "<desc>",
        "<select>",
        "<option>",
        "<frameset>",
        "<frame src=f>",
        "<base href=/b/>",
        "<meta charset=utf-8>",
        "<main>",
        "<article>",
        "<nav>",
        "<h1>",
        "</h2>",
        "<pre>",
        "<q>",
        "<br>",
        "</br>",
        "text ",
        "&amp;",
        "&#0;",
        "\0",
        "<!--",
        "-->",
        "<script>",
    ];
    let base = Url::parse("http://example.com/").unwrap();
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let start = Instant::now();
    for _ in 0..3000 {
        let mut html = String::new();
        for _ in 0..150 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            html.push_str(PIECES[(state % PIECES.len() as u64) as usize]);
        }
        analyze(html.as_bytes(), None, &base);
    }
    eprintln!(
        "3000 random tag soups in {:.2} s",
        start.elapsed().as_secs_f64()
    );
}
