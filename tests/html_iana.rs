//! HTML analysis on real pages: the iana.org captures of pywb's sample archive, extracted with
//! Python's warcio (an independent WARC reader), and the throughput on them.

mod common;

use std::time::Instant;

use sediment::internals::html::{DestinationType, EncodingSource, LinkLocality, analyze};
use url::Url;

const WARC: &str = "pywb/sample_archive/warcs/iana.warc.gz";

#[test]
fn iana_pages() {
    let Some(warc) = common::corpus(WARC) else {
        return;
    };
    let Some(pages) = common::warc_html_pages(&warc) else {
        return;
    };
    let bodies: Vec<(Url, String, Vec<u8>)> = pages
        .into_iter()
        .filter(|p| !p.body.is_empty())
        .map(|p| (Url::parse(&p.url).unwrap(), p.content_type, p.body))
        .collect();
    assert_eq!(bodies.len(), 18);

    for (url, ct, body) in &bodies {
        let d = analyze(body, Some(ct), url);
        assert_eq!(
            d.encoding_source,
            EncodingSource::ContentTypeHeader,
            "{url}"
        );
        assert!(!d.had_decoding_errors, "{url}");
        // Decoding is lossless for these UTF-8 and ASCII pages.
        assert_eq!(d.text_utf8.as_bytes(), body.as_slice(), "{url}");
        assert!(d.limits == Default::default(), "{url}");
        if body.len() > 1000 {
            assert!(d.description.title.is_some(), "{url}");
            assert!(!d.pile.text.is_empty(), "{url}");
            assert!(
                d.links
                    .iter()
                    .any(|l| l.destination_type == DestinationType::Stylesheet),
                "{url}"
            );
            assert!(
                d.links.iter().any(|l| l.locality == LinkLocality::SameSite),
                "{url}"
            );
        }
    }

    // The home page, checked in detail.
    let (url, ct, body) = bodies
        .iter()
        .find(|(u, _, _)| u.as_str() == "http://www.iana.org/")
        .unwrap();
    let d = analyze(body, Some(ct), url);
    assert_eq!(
        d.description.title.as_deref(),
        Some("Internet Assigned Numbers Authority")
    );
    assert_eq!(d.description.primary_language, None);
    assert_eq!(
        d.description.primary_headline.as_deref(),
        Some("Internet Assigned Numbers Authority")
    );
    // No main or article element: the page header's text is secondary, the rest is text.
    assert!(
        d.pile
            .secondary_text
            .starts_with("The Internet Assigned Numbers Authority (IANA) is responsible")
    );
    assert!(d.pile.text.starts_with("IANA manages the DNS Root Zone"));
    assert!(
        d.description.indexiness > 0.0,
        "{}",
        d.description.indexiness
    );
    // The site map sits in a table in the footer.
    let footer_links = d
        .links
        .iter()
        .filter(|l| l.location.in_footer && l.location.in_table)
        .count();
    assert_eq!(footer_links, 17);
    assert_eq!(d.links.iter().filter(|l| l.tag == "a").count(), 33);
    let domains = d
        .links
        .iter()
        .find(|l| l.url.as_str() == "http://www.iana.org/domains")
        .unwrap();
    assert_eq!(domains.destination_type, DestinationType::Document);

    // Throughput: the typical pages (under 20 kB) many times, then all pages once.
    let small: Vec<&(Url, String, Vec<u8>)> =
        bodies.iter().filter(|(_, _, b)| b.len() < 20_000).collect();
    let rounds = 100;
    let start = Instant::now();
    let mut checksum = 0usize;
    for _ in 0..rounds {
        for (url, ct, body) in &small {
            checksum += analyze(body, Some(ct), url).links.len();
        }
    }
    let took = start.elapsed().as_secs_f64();
    let bytes: usize = small.iter().map(|(_, _, b)| b.len()).sum();
    eprintln!(
        "iana pages under 20 kB: {} pages x {rounds} in {took:.2} s = {:.0} pages/s, {:.1} MB/s (avg {} bytes; {checksum} links)",
        small.len(),
        (small.len() * rounds) as f64 / took,
        (bytes * rounds) as f64 / took / 1e6,
        bytes / small.len(),
    );
    let start = Instant::now();
    for (url, ct, body) in &bodies {
        analyze(body, Some(ct), url);
    }
    let took = start.elapsed().as_secs_f64();
    let bytes: usize = bodies.iter().map(|(_, _, b)| b.len()).sum();
    eprintln!(
        "all {} iana pages ({:.2} MB): {took:.3} s = {:.1} MB/s",
        bodies.len(),
        bytes as f64 / 1e6,
        bytes as f64 / took / 1e6
    );
}
