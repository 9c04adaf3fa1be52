//! The JSON-lines row decoder (import-jsonl) against the real schema: any line is a row or
//! a coded refusal.
#![no_main]
use libfuzzer_sys::fuzz_target;
use sediment::jsonl::parse_row;
use sediment::schema::Schema;
use std::sync::OnceLock;

static SCHEMA: OnceLock<Schema> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let schema = SCHEMA.get_or_init(|| Schema::embedded().expect("embedded schema"));
    if let Err(error) = parse_row(schema, data) {
        assert!(!error.code.is_empty());
    }
});
