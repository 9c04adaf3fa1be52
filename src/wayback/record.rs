//! The CDX view of a stored capture: the 11 fields of an `N b a m s k r M S V g` line,
//! written exactly as `sediment cdx` writes them for the WARC record the capture came
//! from (see `cdx::writer`), so a wayback machine that reads our index finds the same
//! lines it would find in a CDX built by re-reading the WARCs.

use crate::capture::{Capture, CaptureKind};
use crate::cdx::writer::push_python_json_string;

/// A CDX field, by the names IA's wayback-cdx-server and pywb use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    UrlKey,
    Timestamp,
    Original,
    MimeType,
    StatusCode,
    Digest,
    Redirect,
    RobotFlags,
    Length,
    Offset,
    Filename,
}

impl Field {
    /// Column order of the 11-column CDX line.
    pub const ALL: [Field; 11] = [
        Field::UrlKey,
        Field::Timestamp,
        Field::Original,
        Field::MimeType,
        Field::StatusCode,
        Field::Digest,
        Field::Redirect,
        Field::RobotFlags,
        Field::Length,
        Field::Offset,
        Field::Filename,
    ];

    /// Accepts IA's names (`original`, `mimetype`, `statuscode`) and pywb's (`url`,
    /// `mime`, `status`), as both servers do for `fl`, `filter` and `collapse`.
    pub fn parse(name: &str) -> Option<Field> {
        Some(match name {
            "urlkey" => Field::UrlKey,
            "timestamp" => Field::Timestamp,
            "original" | "url" => Field::Original,
            "mimetype" | "mime" => Field::MimeType,
            "statuscode" | "status" => Field::StatusCode,
            "digest" => Field::Digest,
            "redirect" => Field::Redirect,
            "robotflags" => Field::RobotFlags,
            "length" => Field::Length,
            "offset" => Field::Offset,
            "filename" => Field::Filename,
            _ => return None,
        })
    }

    /// The name in IA's JSON header row.
    pub fn ia_name(self) -> &'static str {
        match self {
            Field::UrlKey => "urlkey",
            Field::Timestamp => "timestamp",
            Field::Original => "original",
            Field::MimeType => "mimetype",
            Field::StatusCode => "statuscode",
            Field::Digest => "digest",
            Field::Redirect => "redirect",
            Field::RobotFlags => "robotflags",
            Field::Length => "length",
            Field::Offset => "offset",
            Field::Filename => "filename",
        }
    }

    /// The key in a CDXJ line's JSON (pywb's names); `None` for the two fields that lead
    /// the line and for the two cdxj-indexer never writes.
    fn cdxj_key(self) -> Option<&'static str> {
        match self {
            Field::Original => Some("url"),
            Field::MimeType => Some("mime"),
            Field::StatusCode => Some("status"),
            Field::Digest => Some("digest"),
            Field::Length => Some("length"),
            Field::Offset => Some("offset"),
            Field::Filename => Some("filename"),
            _ => None,
        }
    }

    /// Every accepted name, for error messages.
    pub const NAMES: &'static str = "urlkey, timestamp, original (url), mimetype (mime), \
        statuscode (status), digest, redirect, robotflags, length, offset, filename";
}

/// The CDX fields of one capture; `None` is written `-`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CdxRecord {
    pub urlkey: String,
    pub timestamp: String,
    pub original: String,
    pub mime: Option<String>,
    pub status: Option<String>,
    /// Base32 SHA-1, without `sha1:`.
    pub digest: Option<String>,
    pub length: Option<String>,
    pub offset: Option<String>,
    pub filename: Option<String>,
}

/// `text/html; charset=utf-8` → `text/html`, as cdxj-indexer cuts a Content-Type.
fn cut_parameters(value: &str) -> &str {
    let end = value
        .find(|c: char| c == ';' || c.is_whitespace())
        .unwrap_or(value.len());
    value[..end].trim()
}

impl CdxRecord {
    pub fn of(capture: &Capture) -> CdxRecord {
        let mime = match capture.kind {
            CaptureKind::Revisit => Some("warc/revisit".to_string()),
            _ => capture
                .content_type
                .as_deref()
                .map(cut_parameters)
                .filter(|m| !m.is_empty() && *m != "-")
                .map(str::to_string),
        };
        CdxRecord {
            urlkey: capture.surt.clone(),
            timestamp: capture.ts.clone(),
            original: capture.url.clone(),
            mime,
            status: capture.status.map(|s| s.to_string()),
            digest: capture.cdx_digest().map(|d| d.to_base32()),
            length: capture.c_size.map(|l| l.to_string()),
            offset: capture.offset.map(|o| o.to_string()),
            filename: capture.warc_name().map(str::to_string),
        }
    }

    pub fn get(&self, field: Field) -> Option<&str> {
        match field {
            Field::UrlKey => Some(&self.urlkey),
            Field::Timestamp => Some(&self.timestamp),
            Field::Original => Some(&self.original),
            Field::MimeType => self.mime.as_deref(),
            Field::StatusCode => self.status.as_deref(),
            Field::Digest => self.digest.as_deref(),
            // `sediment cdx` writes neither; a stored redirect target is a capture
            // detail (`captures` shows it), not part of the index line.
            Field::Redirect | Field::RobotFlags => None,
            Field::Length => self.length.as_deref(),
            Field::Offset => self.offset.as_deref(),
            Field::Filename => self.filename.as_deref(),
        }
    }

    /// The value as the plain and JSON outputs show it (`-` when absent).
    pub fn shown(&self, field: Field) -> &str {
        self.get(field).unwrap_or("-")
    }

    /// The space-separated line of the given fields (all 11 in CDX order by default).
    pub fn write_plain(&self, fields: &[Field], out: &mut Vec<u8>) {
        for (i, field) in fields.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            out.extend_from_slice(self.shown(*field).as_bytes());
        }
    }

    /// One JSON array of the given fields' values (strings, `-` when absent, as IA).
    pub fn write_json_row(&self, fields: &[Field], out: &mut Vec<u8>) {
        let mut text = String::from("[");
        for (i, field) in fields.iter().enumerate() {
            if i > 0 {
                text.push_str(", ");
            }
            push_python_json_string(self.shown(*field), &mut text);
        }
        text.push(']');
        out.extend_from_slice(text.as_bytes());
    }

    /// `urlkey timestamp {json}` with the keys and spelling cdxj-indexer (and `sediment
    /// cdx --format cdxj`) uses; `fields` narrows the JSON part.
    pub fn write_cdxj(&self, fields: &[Field], out: &mut Vec<u8>) {
        let mut json = String::from("{");
        let mut first = true;
        for field in Field::ALL {
            let Some(key) = field.cdxj_key() else {
                continue;
            };
            if !fields.contains(&field) {
                continue;
            }
            let value = match field {
                // cdxj-indexer keeps the digest as the WARC header spells it.
                Field::Digest => self.digest.as_ref().map(|d| format!("sha1:{d}")),
                _ => self.get(field).map(str::to_string),
            };
            if let Some(value) = value {
                if !first {
                    json.push_str(", ");
                }
                first = false;
                push_python_json_string(key, &mut json);
                json.push_str(": ");
                push_python_json_string(&value, &mut json);
            }
        }
        json.push('}');
        out.extend_from_slice(self.urlkey.as_bytes());
        out.push(b' ');
        out.extend_from_slice(self.timestamp.as_bytes());
        out.push(b' ');
        out.extend_from_slice(json.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Origin;
    use crate::key::Sha1Key;

    fn capture() -> Capture {
        Capture {
            surt: "org,example)/a".into(),
            ts: "20200101000000".into(),
            url: "http://example.org/a".into(),
            content_type: Some("text/html; charset=UTF-8".into()),
            status: Some(200),
            digest: Sha1Key::parse("MQHD36X5MNZPWFNMD5LFOYZSFGCHUN3V").ok(),
            c_size: Some(1234),
            offset: Some(99),
            warc: Some("/data/crawl.warc.gz".into()),
            origin: Origin::Warc,
            source: "/data/crawl.warc.gz".into(),
            ..Default::default()
        }
    }

    #[test]
    fn plain_line_has_the_cdx_fields_of_the_writer() {
        let mut out = Vec::new();
        CdxRecord::of(&capture()).write_plain(&Field::ALL, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "org,example)/a 20200101000000 http://example.org/a text/html 200 \
             MQHD36X5MNZPWFNMD5LFOYZSFGCHUN3V - - 1234 99 crawl.warc.gz"
        );
    }

    #[test]
    fn revisits_uncompressed_lengths_and_absent_fields() {
        let mut c = capture();
        c.kind = CaptureKind::Revisit;
        c.warc = Some("crawl.warc".into());
        c.status = None;
        let r = CdxRecord::of(&c);
        assert_eq!(r.shown(Field::MimeType), "warc/revisit");
        // Stored in the CDX convention at import, whatever the compression.
        assert_eq!(r.shown(Field::Length), "1234");
        assert_eq!(r.shown(Field::StatusCode), "-");
    }

    #[test]
    fn cdxj_and_json_rows() {
        let r = CdxRecord::of(&capture());
        let mut out = Vec::new();
        r.write_cdxj(&Field::ALL, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"org,example)/a 20200101000000 {"url": "http://example.org/a", "mime": "text/html", "status": "200", "digest": "sha1:MQHD36X5MNZPWFNMD5LFOYZSFGCHUN3V", "length": "1234", "offset": "99", "filename": "crawl.warc.gz"}"#
        );
        let mut out = Vec::new();
        r.write_json_row(&[Field::Timestamp, Field::Redirect], &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"["20200101000000", "-"]"#
        );
    }

    #[test]
    fn field_names_of_both_servers() {
        assert_eq!(Field::parse("mime"), Some(Field::MimeType));
        assert_eq!(Field::parse("mimetype"), Some(Field::MimeType));
        assert_eq!(Field::parse("original"), Field::parse("url"));
        assert_eq!(Field::parse("size"), None);
    }
}
