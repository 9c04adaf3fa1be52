//! HTTP requests to `sediment serve`: the request line, the headers, and every
//! endpoint's parameter parsing, as the server runs them before a handler does any work.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sediment::internals::parse_request_for_fuzzing(data);
});
