//! The captures of a URL prefix as CDXJ lines (`SURT TIMESTAMP {json}`), the index
//! format of pywb and WACZ. Written against Sediment's public API only.
//!
//!     cargo run --release --example prefix_cdxj -- STORE http://example.com/docs/

use std::io::Write;

use sediment::{CaptureQuery, MatchType, Store};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, store, prefix] = args.as_slice() else {
        eprintln!("usage: prefix_cdxj STORE URL-PREFIX");
        std::process::exit(2);
    };
    let store = Store::open_reader(store)?;
    let query = CaptureQuery::url(prefix).match_type(MatchType::Prefix);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut failed = None;
    store.for_each_capture(&query, |capture| {
        let mut fields = serde_json::Map::new();
        fields.insert("url".into(), capture.url.into());
        let optional = [
            ("mime", capture.mime),
            ("status", capture.status.map(|s| s.to_string())),
            ("digest", capture.digest.map(|d| format!("sha1:{d}"))),
            ("length", capture.length.map(|l| l.to_string())),
            ("offset", capture.offset.map(|o| o.to_string())),
            ("filename", capture.filename),
        ];
        for (name, value) in optional {
            if let Some(value) = value {
                fields.insert(name.into(), value.into());
            }
        }
        let json = serde_json::Value::Object(fields);
        match writeln!(out, "{} {} {json}", capture.urlkey, capture.timestamp) {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    out.flush()?;
    Ok(())
}
