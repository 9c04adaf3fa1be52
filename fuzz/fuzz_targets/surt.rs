//! SURT canonicalization of any string: never panics, and is idempotent on its own
//! output's shape (a SURT of a SURT-looking key is still a string).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let key = sediment::surt::surt(&text);
    let mut reused = String::from("left over");
    sediment::surt::surt_into(&text, &mut reused);
    assert_eq!(key, reused, "surt_into must clear and refill its buffer");
});
