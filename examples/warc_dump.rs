//! Print one line per record or error of a WARC file (a debugging aid).
//!
//! Usage: warc_dump FILE

use std::fs::File;

use sediment::warc::WarcReader;

fn main() {
    let path = std::env::args().nth(1).expect("usage: warc_dump FILE");
    let reader = match WarcReader::new(File::open(&path).expect("open")) {
        Ok(reader) => reader,
        Err(error) => {
            println!("error {error}");
            return;
        }
    };
    for item in reader {
        match item {
            Ok(r) => println!(
                "{} +{} len {} {} {} {:?} {} {:?}",
                r.offset,
                r.skip,
                r.length,
                r.warc_type,
                r.record_id().unwrap_or("-"),
                r.target_uri(),
                r.digest_check.name(),
                r.warnings
            ),
            Err(e) => println!("error {e}"),
        }
    }
}
