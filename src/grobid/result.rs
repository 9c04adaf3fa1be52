//! What one GROBID call (or one imported TEI file) becomes in `grobid0`.
//!
//! | outcome | `status_code` | `status` | TEI cells and `quality` |
//! |---|---|---|---|
//! | 200 with a TEI document | 200 | `{"status":"success"}` | all |
//! | a TEI file imported (`import-tei`) | absent: no call was made | `{"status":"success"}` | all |
//! | 200 with something else | 200 | `{"status":"fail","reason":…}` | none |
//! | any other HTTP status | that status | `{"status":"error","description":<GROBID's message>}` | none |
//! | no reply within the timeout | −4 | `{"status":"error-timeout","description":…}` | none |
//! | file above the size limit (not sent) | 413 | `{"status":"oversize","size":…,"limit":…}` | none |
//!
//! −4 is Heritrix's fetch status for "HTTP timeout" (no HTTP status exists); 413 is HTTP's
//! "Content Too Large", which sediment answers itself for a file it does not send. See
//! `schemas/grobid-status.md`.

use serde_json::{Value, json};

use crate::codec::canonical_json;
use crate::schema::{ColumnId, Schema};
use crate::tei::{self, Quality, TeiError, TeiOptions};

/// `grobid0:status_code` of a call that got no reply in time (Heritrix's fetch status
/// for an HTTP timeout).
pub const STATUS_CODE_TIMEOUT: i64 = -4;
/// `grobid0:status_code` of a file not sent because it is above the size limit (HTTP
/// 413 Content Too Large, decided by sediment, not by the server).
pub const STATUS_CODE_OVERSIZE: i64 = 413;

/// GROBID's error messages are kept up to this many characters.
const MAX_DESCRIPTION_CHARS: usize = 2000;

/// The `grobid0` cells of one processed file.
#[derive(Debug, Clone, PartialEq)]
pub struct GrobidCells {
    /// The HTTP status of the GROBID call; `None` for an imported TEI file (no call was
    /// made, and TEI records no status).
    pub status_code: Option<i64>,
    /// `grobid0:status`: an object with `status` and details.
    pub status: Value,
    pub tei_xml: Option<Vec<u8>>,
    pub tei_json: Option<Value>,
    pub metadata: Option<Value>,
    pub quality: Option<Quality>,
}

impl GrobidCells {
    /// A TEI document, converted (an imported file: no status code). Fails (with the
    /// position and reason) when the bytes are not a GROBID TEI document.
    pub fn from_tei(xml: &[u8], options: TeiOptions) -> Result<GrobidCells, TeiError> {
        GrobidCells::from_tei_owned(xml.to_vec(), options)
    }

    /// [`GrobidCells::from_tei`] keeping `xml` as the `tei_xml` cell without a copy (TEI
    /// documents run to tens of megabytes).
    pub fn from_tei_owned(xml: Vec<u8>, options: TeiOptions) -> Result<GrobidCells, TeiError> {
        let json = tei::tei_to_json(&xml, options)?;
        Ok(GrobidCells {
            status_code: None,
            status: json!({"status": "success"}),
            tei_xml: Some(xml),
            metadata: Some(tei::metadata(&json)),
            quality: Some(tei::quality(&json)),
            tei_json: Some(json),
        })
    }

    /// GROBID's reply to `processFulltextDocument`.
    pub fn from_reply(http_status: u16, body: &[u8], options: TeiOptions) -> GrobidCells {
        if http_status == 200 {
            return match GrobidCells::from_tei(body, options) {
                Ok(cells) => GrobidCells {
                    status_code: Some(200),
                    ..cells
                },
                Err(e) => GrobidCells {
                    status_code: Some(200),
                    status: json!({"status": "fail", "reason": format!("the reply is not TEI: {e}")}),
                    tei_xml: None,
                    tei_json: None,
                    metadata: None,
                    quality: None,
                },
            };
        }
        let text = String::from_utf8_lossy(body);
        let mut description: String = text.trim().chars().take(MAX_DESCRIPTION_CHARS).collect();
        if description.is_empty() {
            description = format!("HTTP status {http_status} without a message");
        }
        GrobidCells::without_tei(
            i64::from(http_status),
            json!({"status": "error", "description": description}),
        )
    }

    /// No reply within `seconds`.
    pub fn timeout(seconds: f64) -> GrobidCells {
        GrobidCells::without_tei(
            STATUS_CODE_TIMEOUT,
            json!({
                "status": "error-timeout",
                "description": format!("GROBID did not answer within {seconds} s"),
            }),
        )
    }

    /// Not sent: `size` bytes is above `limit`.
    pub fn oversize(size: u64, limit: u64) -> GrobidCells {
        GrobidCells::without_tei(
            STATUS_CODE_OVERSIZE,
            json!({"status": "oversize", "size": size, "limit": limit}),
        )
    }

    fn without_tei(status_code: i64, status: Value) -> GrobidCells {
        GrobidCells {
            status_code: Some(status_code),
            status,
            tei_xml: None,
            tei_json: None,
            metadata: None,
            quality: None,
        }
    }

    /// The `status` name: success, fail, error, error-timeout, oversize.
    pub fn status_name(&self) -> &str {
        self.status
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The cells to store, as (column, stored bytes).
    pub fn to_cells(&self, schema: &Schema) -> Vec<(ColumnId, Vec<u8>)> {
        self.clone().into_cells(schema)
    }

    /// [`GrobidCells::to_cells`] without copying the TEI document; each JSON tree is freed
    /// as soon as it is encoded.
    pub fn into_cells(self, schema: &Schema) -> Vec<(ColumnId, Vec<u8>)> {
        let column = |name: &str| {
            schema
                .column_id(name)
                .unwrap_or_else(|| panic!("the embedded schema has {name}"))
        };
        let mut cells = vec![(column("grobid0:status"), canonical_json(&self.status))];
        if let Some(code) = self.status_code {
            cells.push((column("grobid0:status_code"), code.to_be_bytes().to_vec()));
        }
        if let Some(xml) = self.tei_xml {
            cells.push((column("grobid0:tei_xml"), xml));
        }
        if let Some(json) = self.tei_json {
            cells.push((column("grobid0:tei_json"), canonical_json(&json)));
        }
        if let Some(metadata) = &self.metadata {
            cells.push((column("grobid0:metadata"), canonical_json(metadata)));
        }
        if let Some(quality) = self.quality {
            cells.push((
                column("grobid0:quality"),
                quality.as_str().as_bytes().to_vec(),
            ));
        }
        cells
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_become_cells() {
        let schema = Schema::embedded().unwrap();
        let Some(small) = crate::prerequisites::corpus("sandcrawler/small.xml") else {
            return;
        };
        let xml = std::fs::read(small).unwrap();
        let ok = GrobidCells::from_reply(200, &xml, TeiOptions::default());
        assert_eq!(ok.status_name(), "success");
        assert_eq!(ok.quality, Some(Quality::Marginal));
        assert_eq!(ok.to_cells(&schema).len(), 6);
        let metadata = ok.metadata.as_ref().unwrap();
        assert!(metadata.get("body").is_none());
        assert_eq!(metadata["title"], "Dummy Example File");

        let fail = GrobidCells::from_reply(200, b"[NO_BLOCKS] nothing", TeiOptions::default());
        assert_eq!(fail.status_name(), "fail");
        assert!(fail.status["reason"].as_str().unwrap().contains("not TEI"));
        assert_eq!(fail.to_cells(&schema).len(), 2);

        let error = GrobidCells::from_reply(
            500,
            b" [BAD_INPUT_DATA] PDF is broken \n",
            TeiOptions::default(),
        );
        assert_eq!(error.status_code, Some(500));
        assert_eq!(
            error.status["description"],
            "[BAD_INPUT_DATA] PDF is broken"
        );
        let empty = GrobidCells::from_reply(502, b"", TeiOptions::default());
        assert_eq!(
            empty.status["description"],
            "HTTP status 502 without a message"
        );

        assert_eq!(
            GrobidCells::timeout(2.0).status_code,
            Some(STATUS_CODE_TIMEOUT)
        );
        assert_eq!(GrobidCells::timeout(2.0).status_name(), "error-timeout");
        let big = GrobidCells::oversize(5_000_000, 4_000_000);
        assert_eq!(
            big.status,
            json!({"status": "oversize", "size": 5_000_000, "limit": 4_000_000})
        );
        assert_eq!(big.to_cells(&schema).len(), 2);
    }
}
