//! The JSON-lines row decoder (import-jsonl) against the real schema: any line is a row or
//! a coded refusal, the same as the reference reader's; and a text the canonical-JSON check
//! accepts is what serde_json writes back.
#![no_main]
use libfuzzer_sys::fuzz_target;
use sediment::internals::{canonical_json, is_canonical_json};
use sediment::internals::{parse_row, parse_row_as_value};
use sediment::internals::Schema;
use std::sync::OnceLock;

static SCHEMA: OnceLock<Schema> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let schema = SCHEMA.get_or_init(|| Schema::embedded().expect("embedded schema"));
    let row = parse_row(schema, data);
    if let Err(error) = &row {
        assert!(!error.code.is_empty());
    }
    assert_eq!(row, parse_row_as_value(schema, data));
    if let Ok(text) = std::str::from_utf8(data)
        && is_canonical_json(text)
    {
        let value: serde_json::Value = serde_json::from_str(text).expect("canonical is JSON");
        assert_eq!(canonical_json(&value), data);
    }
});
