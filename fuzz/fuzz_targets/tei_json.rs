//! GROBID TEI to JSON in both shapes, then the metadata view; errors are values.
#![no_main]
use libfuzzer_sys::fuzz_target;
use sediment::internals::tei::{TeiOptions, TeiShape, metadata, tei_to_json};

fuzz_target!(|data: &[u8]| {
    for shape in [TeiShape::Current, TeiShape::Legacy2018] {
        if let Ok(json) = tei_to_json(data, TeiOptions::with_shape(shape)) {
            let _ = metadata(&json);
        }
    }
});
