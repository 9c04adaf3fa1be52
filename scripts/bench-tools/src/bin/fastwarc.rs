//! The fastwarc crate: iterate every record, parse HTTP, verify payload digests.
use fastwarc::warc::iter::ArchiveIterator;
use fastwarc::warc::record::WarcRecordType;

fn main() {
    sediment_bench_tools::run(
        "fastwarc crate (parse_http + verify_payload_digest)",
        |path| {
            let mut verified = 0u64;
            let iter = ArchiveIterator::from_path(path)
                .expect("open")
                .with_parse_http(true);
            for record in iter {
                let Ok(record) = record else { continue };
                let mut record = record.borrow_mut();
                if record.record_type() == WarcRecordType::Response
                    && let Ok(true) = record.verify_payload_digest(true)
                {
                    verified += 1;
                }
            }
            verified
        },
    );
}
