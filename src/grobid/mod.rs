//! The `grobid0` stage: PDFs of the store through a GROBID server, or GROBID outputs
//! already made elsewhere, into `grobid0` cells.
//!
//! * [`result`]: what a reply (or a TEI file) becomes: status code, status, TEI, JSON,
//!   metadata, quality;
//! * [`client`]: the HTTP client (multipart upload, timeout, retries on 503);
//! * [`stage`]: the run over the store (which rows, payloads from the WARCs, worker
//!   threads, resumable writes);
//! * [`tei_file_key`]: the naming rule of TEI files for `import-tei`.

pub mod client;
pub mod multipart;
pub mod result;
pub mod stage;

use std::path::Path;

use crate::key::Sha1Key;

pub use client::GrobidOptions;
pub use result::GrobidCells;
pub use stage::{GrobidStage, run_stage};

/// The row a TEI file belongs to, from its name: `<sha1 hex>.tei.xml` or
/// `<sha1 hex>.xml` (hex in either case), as GROBID outputs are stored by the SHA-1 of
/// their PDF, flat or in the `xx/yy/<sha1hex>.tei.xml` blob layout.
pub fn tei_file_key(path: &Path) -> Option<Sha1Key> {
    let name = path.file_name()?.to_str()?;
    let lower = name.to_ascii_lowercase();
    let stem = lower
        .strip_suffix(".tei.xml")
        .or_else(|| lower.strip_suffix(".xml"))?;
    if stem.len() != 40 {
        return None;
    }
    Sha1Key::from_hex(stem.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tei_file_names() {
        let hex = "23b29ea36382680716be08fc71aa81bd226e8a85";
        let key = Sha1Key::from_hex(hex.as_bytes()).unwrap();
        assert_eq!(
            tei_file_key(Path::new(&format!("{hex}.tei.xml"))),
            Some(key)
        );
        assert_eq!(
            tei_file_key(Path::new(&format!("23/b2/{}.TEI.XML", hex.to_uppercase()))),
            Some(key)
        );
        assert_eq!(tei_file_key(Path::new(&format!("/x/{hex}.xml"))), Some(key));
        assert_eq!(tei_file_key(Path::new("example.tei.xml")), None);
        assert_eq!(tei_file_key(Path::new(&format!("{hex}.pdf"))), None);
        assert_eq!(
            tei_file_key(Path::new(&format!("{}g.tei.xml", &hex[..39]))),
            None
        );
    }
}
