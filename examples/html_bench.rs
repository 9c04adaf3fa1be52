//! Sediment's HTML analysis over a set of pages, one thread, timed apart from reading them.
//! Used by scripts/bench-html.sh, which runs selectolax over the same bytes.
//!
//! Usage: html_bench PAGES [--paths]
//!   PAGES: records `URL\tCONTENT-TYPE\tLENGTH\n` + LENGTH bytes.
//!   --paths: also time the two tree builders alone (the fast path, html5ever's), count the
//!   pages the fast path gives up on by reason, and check that its tree is html5ever's on
//!   every page it accepts.

use std::collections::BTreeMap;
use std::time::Instant;

use sediment::internals::html::dom;
use url::Url;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: html_bench PAGES [--paths]");
    let paths = args.next().is_some_and(|a| a == "--paths");
    let data = std::fs::read(&path).expect("read PAGES");
    let mut pages: Vec<(Url, String, &[u8])> = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let end = at
            + data[at..]
                .iter()
                .position(|&b| b == b'\n')
                .expect("header line");
        let header = std::str::from_utf8(&data[at..end]).expect("UTF-8 header");
        let mut fields = header.split('\t');
        let url = Url::parse(fields.next().expect("url")).expect("URL");
        let content_type = fields.next().expect("content type").to_string();
        let length: usize = fields.next().expect("length").parse().expect("length");
        pages.push((url, content_type, &data[end + 1..end + 1 + length]));
        at = end + 1 + length;
    }
    let bytes: usize = pages.iter().map(|(_, _, body)| body.len()).sum();
    let start = Instant::now();
    let (mut links, mut text) = (0usize, 0usize);
    for (url, content_type, body) in &pages {
        let document = sediment::internals::html::analyze(body, Some(content_type), url);
        links += document.links.len();
        text += document
            .pile
            .fields()
            .iter()
            .map(|f| f.len())
            .sum::<usize>();
    }
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "pages={} bytes={bytes} seconds={seconds:.3} mb_per_s={:.1} links={links} text_bytes={text}",
        pages.len(),
        bytes as f64 / 1e6 / seconds
    );
    if paths {
        compare_paths(&pages);
    }
}

fn compare_paths(pages: &[(Url, String, &[u8])]) {
    // The trees of the bytes read as UTF-8 (the bench's pages are): decoding is not timed.
    let texts: Vec<String> = pages
        .iter()
        .map(|(_, _, body)| String::from_utf8_lossy(body).into_owned())
        .collect();
    let start = Instant::now();
    let mut given_up: BTreeMap<&str, usize> = BTreeMap::new();
    let mut accepted = 0;
    for text in &texts {
        match dom::parse_fast(text) {
            Ok(_) => accepted += 1,
            Err(reason) => *given_up.entry(reason.0).or_default() += 1,
        }
    }
    let fast_seconds = start.elapsed().as_secs_f64();
    let start = Instant::now();
    for text in &texts {
        dom::parse_with_html5ever(text);
    }
    let full_seconds = start.elapsed().as_secs_f64();
    let mut differing = 0;
    for (text, (url, _, _)) in texts.iter().zip(pages) {
        if let Ok(fast) = dom::parse_fast(text)
            && let Err(difference) = dom::compare_trees(&fast, &dom::parse_with_html5ever(text))
        {
            differing += 1;
            eprintln!("{url}: {difference}");
        }
    }
    println!(
        "fast_path_pages={accepted} fast_path_seconds={fast_seconds:.3} html5ever_seconds={full_seconds:.3} differing_trees={differing} given_up={given_up:?}"
    );
}
