//! The HTML fast path against html5ever: wherever the fast path accepts a document, its tree
//! must be html5ever's (the long-running form of tests/html_fast_path.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;
use sediment::internals::html::dom::{compare_trees, parse_fast, parse_with_html5ever};

fuzz_target!(|data: &[u8]| {
    let html = String::from_utf8_lossy(data);
    if let Ok(fast) = parse_fast(&html) {
        let full = parse_with_html5ever(&html);
        if let Err(difference) = compare_trees(&fast, &full) {
            panic!("the fast path's tree differs from html5ever's: {difference}");
        }
    }
});
