//! Sediment's HTML analysis over a set of pages, one thread, timed apart from reading them.
//! Used by scripts/bench-html.sh, which runs selectolax over the same bytes.
//!
//! Usage: html_bench PAGES     (PAGES: records `URL\tCONTENT-TYPE\tLENGTH\n` + LENGTH bytes)

use std::time::Instant;

use url::Url;

fn main() {
    let path = std::env::args().nth(1).expect("usage: html_bench PAGES");
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
        let document = sediment::html::analyze(body, Some(content_type), url);
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
}
