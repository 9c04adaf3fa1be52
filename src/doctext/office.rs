//! Office documents that are zips of XML: Word (docx), Excel (xlsx), OpenDocument text and
//! spreadsheets (odt, ods) and EPUB books. The members holding the text are inflated with
//! flate2 (as WACZ members are: the zip crate here has no codec of its own), each to at
//! most the page's text limit times [`INFLATE_FACTOR`], so a zip bomb costs a bounded
//! amount of work.

use std::io::{Cursor, Read};

use super::{DocText, Field, Piler, Problem, Source, xml};

/// Bytes of XML inflated per byte of text kept, at most: markup is most of an office
/// document's XML (Word's runs and properties are 5–20 times its text).
const INFLATE_FACTOR: usize = 32;
/// Members of one EPUB read at most.
const MAX_MEMBERS: usize = 2000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    Docx,
    Xlsx,
    /// OpenDocument text and spreadsheets: the text is in `content.xml`.
    OpenDocument,
    Epub,
}

impl Format {
    pub(super) fn of_mime(mime: &str) -> Option<Format> {
        Some(match mime {
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => {
                Format::Docx
            }
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => Format::Xlsx,
            "application/vnd.oasis.opendocument.text"
            | "application/vnd.oasis.opendocument.spreadsheet"
            | "application/vnd.oasis.opendocument.presentation" => Format::OpenDocument,
            "application/epub+zip" => Format::Epub,
            _ => return None,
        })
    }

    /// The members whose text is the document's, and the one that holds its title.
    fn members(self) -> (&'static [&'static str], &'static str) {
        match self {
            Format::Docx => (&["word/document.xml"], "docProps/core.xml"),
            Format::Xlsx => (&["xl/sharedStrings.xml"], "docProps/core.xml"),
            Format::OpenDocument => (&["content.xml"], "meta.xml"),
            // EPUB chapters are found by their names.
            Format::Epub => (&[], ""),
        }
    }
}

fn problem(message: String) -> Option<Problem> {
    Some(Problem {
        reason: "office_text_unreadable",
        message,
    })
}

/// Inflates one member, at most `cap` bytes of it.
fn member<R: Read + std::io::Seek>(
    archive: &mut zip::ZipArchive<R>,
    index: usize,
    cap: usize,
) -> Result<Vec<u8>, String> {
    let mut entry = archive
        .by_index_raw(index)
        .map_err(|e| format!("member {index}: {e}"))?;
    let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
    let compressed = entry.compressed_size().min(cap as u64 * 2 + 1024);
    let mut raw = Vec::new();
    (&mut entry)
        .take(compressed)
        .read_to_end(&mut raw)
        .map_err(|e| format!("{name}: {e}"))?;
    let mut out = Vec::new();
    let method = entry.compression();
    if method == zip::CompressionMethod::Stored {
        raw.truncate(cap);
        return Ok(raw);
    }
    if method != zip::CompressionMethod::DEFLATE {
        return Err(format!("{name}: compressed with {method:?}"));
    }
    let read = flate2::read::DeflateDecoder::new(&raw[..])
        .take(cap as u64)
        .read_to_end(&mut out);
    // A member cut at the cap ends inside the stream: what was inflated is kept.
    if let Err(e) = read
        && out.is_empty()
    {
        return Err(format!("{name}: {e}"));
    }
    Ok(out)
}

pub(super) fn text(format: Format, body: &[u8], limit: usize) -> DocText {
    let mut piler = Piler::new(limit);
    let mut title = None;
    let mut trouble = None;
    let cap = limit.saturating_mul(INFLATE_FACTOR).max(1 << 16);
    match zip::ZipArchive::new(Cursor::new(body)) {
        Err(e) => trouble = problem(format!("not a readable zip: {e}")),
        Ok(mut archive) => {
            let (text_members, title_member) = format.members();
            let names: Vec<(usize, String)> = (0..archive.len().min(MAX_MEMBERS * 4))
                .filter_map(|i| Some((i, archive.name_for_index(i)?.ok()?.into_owned())))
                .collect();
            let chosen: Vec<usize> = if format == Format::Epub {
                names
                    .iter()
                    .filter(|(_, n)| {
                        let n = n.to_ascii_lowercase();
                        n.ends_with(".xhtml") || n.ends_with(".html") || n.ends_with(".htm")
                    })
                    .map(|(i, _)| *i)
                    .take(MAX_MEMBERS)
                    .collect()
            } else {
                text_members
                    .iter()
                    .filter_map(|m| names.iter().find(|(_, n)| n == m).map(|(i, _)| *i))
                    .collect()
            };
            if chosen.is_empty() {
                trouble = problem(format!("no {text_members:?} member: not a {format:?} file"));
            }
            if let Some((i, _)) = names.iter().find(|(_, n)| n == title_member) {
                let mut scratch = Piler::new(1 << 16);
                if let Ok(xml) = member(&mut archive, *i, 1 << 20) {
                    title = xml::text(&xml, &mut scratch).title;
                }
            }
            for i in chosen {
                if !piler.has_room() {
                    break;
                }
                match member(&mut archive, i, cap) {
                    Ok(xml) => {
                        let read = xml::text(&xml, &mut piler);
                        if title.is_none() {
                            title = read.title;
                        }
                        piler.separate(Field::Text, true);
                    }
                    Err(e) => {
                        trouble = problem(e);
                    }
                }
            }
        }
    }
    DocText {
        pile: piler.finish(),
        title,
        description: None,
        source: Source::Office,
        problem: trouble,
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn zip_of(members: &[(&str, &str)]) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut w = zip::ZipWriter::new(Cursor::new(&mut out));
            for (name, text) in members {
                w.start_file(
                    *name,
                    zip::write::SimpleFileOptions::default()
                        .compression_method(zip::CompressionMethod::Stored),
                )
                .unwrap();
                w.write_all(text.as_bytes()).unwrap();
            }
            w.finish().unwrap();
        }
        out
    }

    #[test]
    fn docx_text_and_title() {
        let docx = zip_of(&[
            (
                "docProps/core.xml",
                r#"<cp:coreProperties xmlns:dc="d" xmlns:cp="c"><dc:title>Lake report</dc:title></cp:coreProperties>"#,
            ),
            (
                "word/document.xml",
                r#"<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>Varved </w:t></w:r><w:r><w:t>clay</w:t></w:r></w:p><w:p><w:r><w:t>layers</w:t></w:r></w:p></w:body></w:document>"#,
            ),
        ]);
        let d = text(Format::Docx, &docx, 1 << 20);
        assert_eq!(d.title.as_deref(), Some("Lake report"));
        assert_eq!(d.pile.text, "Varved clay\nlayers");
        assert!(d.problem.is_none());
    }

    #[test]
    fn not_a_zip_is_a_problem() {
        let d = text(Format::OpenDocument, b"PK\x03\x04 broken", 1 << 20);
        assert!(d.pile.is_empty());
        assert_eq!(d.problem.unwrap().reason, "office_text_unreadable");
    }
}
