//! The HTML analysis the projections run on every page (decoding, text pile, links,
//! description), with and without a declared charset.
#![no_main]
use libfuzzer_sys::fuzz_target;
use url::Url;

fuzz_target!(|data: &[u8]| {
    let base = Url::parse("http://example.com/dir/page.html").expect("static URL");
    let (content_type, body) = match data.split_first() {
        Some((selector, rest)) if selector % 3 == 0 => (Some("text/html; charset=windows-1252"), rest),
        Some((selector, rest)) if selector % 3 == 1 => (Some("text/html"), rest),
        Some((_, rest)) => (None, rest),
        None => (None, data),
    };
    let _ = sediment::internals::html::analyze(body, content_type, &base);
});
