//! The fastwarc crate's view of every record, for the equivalence checks of the benchmark
//! scripts (not timed): one line per record,
//! `FILE \t WARC-Record-ID \t WARC-Type \t WARC-Target-URI \t WARC-Date \t WARC-Payload-Digest \t VERDICT \t WARC-Block-Digest`
//! (`-` for a header that is missing), where VERDICT is `ok` or `bad` when the payload digest of an HTTP response or revisit
//! could be checked against the bytes, and `-` when there was nothing to check.
//! Usage: fastwarc_list FILE…
use std::io::Write;

use fastwarc::warc::iter::ArchiveIterator;
use fastwarc::warc::record::WarcRecordType;

fn main() {
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let mut failed = false;
    for path in std::env::args().skip(1) {
        let iter = match ArchiveIterator::from_path(&path) {
            Ok(iter) => iter.with_parse_http(true),
            Err(error) => {
                eprintln!("{path}: {error}");
                failed = true;
                continue;
            }
        };
        for record in iter {
            let record = match record {
                Ok(record) => record,
                Err(error) => {
                    // A record the reference cannot read is part of what is compared; the
                    // iterator may not resynchronise after it.
                    writeln!(out, "{path}\terror\t{error}").unwrap();
                    break;
                }
            };
            let mut record = record.borrow_mut();
            let header = |name: &str| {
                record
                    .headers()
                    .get(name)
                    .map(|v| v.trim().trim_matches(['<', '>']).to_string())
                    .unwrap_or_else(|| "-".into())
            };
            let (id, kind, uri, date, digest, block) = (
                header("WARC-Record-ID"),
                header("WARC-Type"),
                header("WARC-Target-URI"),
                header("WARC-Date"),
                header("WARC-Payload-Digest"),
                header("WARC-Block-Digest"),
            );
            let verdict = if record.record_type() == WarcRecordType::Response
                && record.is_http()
                && digest != "-"
            {
                match record.verify_payload_digest(true) {
                    Ok(true) => "ok",
                    Ok(false) => "bad",
                    Err(_) => "-",
                }
            } else {
                "-"
            };
            writeln!(
                out,
                "{path}\t{id}\t{kind}\t{uri}\t{date}\t{digest}\t{verdict}\t{block}"
            )
            .unwrap();
        }
    }
    out.flush().unwrap();
    if failed {
        std::process::exit(1);
    }
}
