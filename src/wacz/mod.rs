//! WACZ (Webrecorder's web archive package, spec 1.1.1): a zip holding WARC files under
//! `archive/`, an index under `indexes/`, page lists under `pages/` and a
//! `datapackage.json` that lists every member with its SHA-256.
//!
//! Reading (`read`) goes through the package once, in the order its members' data lie in
//! the file, and hands each WARC member to the WARC importer as a stream: nothing is
//! unpacked to disk. A stored member (what the spec asks for WARCs) is a contiguous run of
//! the package's bytes, so its captures are located by the package's path and the
//! record's offset in the package, and `cat` and `serve` read them like any WARC. A
//! deflated member has no such offsets: its captures name `PACKAGE.wacz#MEMBER` and the
//! offset inside the inflated member, which [`open_member_at`] finds by streaming.
//!
//! Writing (`write`) makes a package from a capture selection (`export-wacz`).

pub(crate) mod page;
pub(crate) mod read;
pub(crate) mod write;

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

pub use page::page_key;

/// The version of the spec written into `datapackage.json`. 1.1.1, not the 1.2 draft:
/// the draft's `profile` value makes current ReplayWeb.page loaders refuse the package.
pub const WACZ_VERSION: &str = "1.1.1";

/// Whether a path names a WACZ package (by its name: directory expansion and the
/// choice of reader in `import-warc`).
pub fn is_wacz_name(path: &Path) -> bool {
    path.file_name()
        .map(|n| n.to_string_lossy().to_lowercase().ends_with(".wacz"))
        .unwrap_or(false)
}

/// A member name that stays inside the package: relative, no `..` component, no
/// backslash or drive letter (which other unzip tools turn into paths), no NUL.
pub fn is_safe_member_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('/')
        && !name.contains('\\')
        && !name.contains('\0')
        && name.as_bytes().get(1) != Some(&b':')
        && name.split('/').all(|part| part != "..")
}

/// `PACKAGE.wacz#MEMBER`: how captures of a deflated member name where they are.
pub fn member_location(package: &str, member: &str) -> String {
    format!("{package}#{member}")
}

/// The package and member of a `PACKAGE.wacz#MEMBER` location whose package is a file.
pub fn split_member_location(location: &Path) -> Option<(PathBuf, String)> {
    let text = location.to_str()?;
    let (package, member) = text.rsplit_once(".wacz#")?;
    let package = PathBuf::from(format!("{package}.wacz"));
    (package.is_file() && is_safe_member_name(member)).then(|| (package, member.to_string()))
}

/// The inflated bytes of `member` of `package` from `offset` on (the bytes before it are
/// inflated and dropped: a deflated member cannot be entered in the middle). Reads at
/// most the member's declared size.
pub fn open_member_at(package: &Path, member: &str, offset: u64) -> Result<Box<dyn Read>> {
    let file = File::open(package).with_context(|| format!("cannot open {}", package.display()))?;
    let mut archive = zip::ZipArchive::new(BufReader::new(file))
        .with_context(|| format!("{} is not a readable zip", package.display()))?;
    let index = archive
        .index_for_name(member)
        .with_context(|| format!("{} has no member {member}", package.display()))?;
    let (data_start, compressed, size, method) = {
        let entry = archive
            .by_index_raw(index)
            .with_context(|| format!("{}: cannot read member {member}", package.display()))?;
        (
            entry.data_start().unwrap_or(0),
            entry.compressed_size(),
            entry.size(),
            entry.compression(),
        )
    };
    let mut file = File::open(package)?;
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(data_start))?;
    let raw = BufReader::with_capacity(256 << 10, file).take(compressed);
    let mut inflated: Box<dyn Read> = match method {
        zip::CompressionMethod::Stored => Box::new(raw),
        m if m == zip::CompressionMethod::DEFLATE => {
            Box::new(flate2::read::DeflateDecoder::new(raw).take(size))
        }
        other => bail!(
            "{}: member {member} is compressed with {other:?}, which WACZ does not use",
            package.display()
        ),
    };
    let skipped = std::io::copy(&mut (&mut inflated).take(offset), &mut std::io::sink())?;
    if skipped < offset {
        bail!(
            "{}: member {member} ends at byte {skipped}, before offset {offset}",
            package.display()
        );
    }
    Ok(inflated)
}

/// `2020-10-07T21:22:36Z` (or with fractions, or an offset) → `20201007212236`; a
/// timestamp of 14 digits is kept.
pub fn timestamp14(text: &str) -> Option<String> {
    let text = text.trim();
    if text.len() == 14 && text.bytes().all(|b| b.is_ascii_digit()) {
        return Some(text.to_string());
    }
    let time = chrono::DateTime::parse_from_rfc3339(text).ok()?;
    Some(
        time.with_timezone(&chrono::Utc)
            .format("%Y%m%d%H%M%S")
            .to_string(),
    )
}

/// The title of a page a WACZ's `pages/*.jsonl` listed, by SURT and 14-digit timestamp
/// (kept in the meta family by `import-warc`; `export-wacz` writes it back out).
pub fn page_title(store: &crate::store::Store, surt: &str, ts: &str) -> Result<Option<String>> {
    let value = store.get(crate::store::Space::Meta, &page_key(surt, ts))?;
    Ok(value
        .and_then(|v| serde_json::from_slice::<page::StoredPage>(&v).ok())
        .and_then(|p| p.title))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_names_that_escape_the_package_are_refused() {
        for bad in [
            "../x.warc",
            "archive/../../x",
            "/etc/passwd",
            "a\\b",
            "C:x",
            "",
            "a\0b",
        ] {
            assert!(!is_safe_member_name(bad), "{bad:?}");
        }
        for good in [
            "archive/data.warc.gz",
            "pages/pages.jsonl",
            "datapackage.json",
            "a..b",
        ] {
            assert!(is_safe_member_name(good), "{good:?}");
        }
    }

    #[test]
    fn page_times_become_wayback_timestamps() {
        assert_eq!(
            timestamp14("2020-10-07T21:22:36Z").as_deref(),
            Some("20201007212236")
        );
        assert_eq!(
            timestamp14("2020-10-07T21:22:36.123Z").as_deref(),
            Some("20201007212236")
        );
        assert_eq!(
            timestamp14("20201007212236").as_deref(),
            Some("20201007212236")
        );
        assert_eq!(timestamp14("yesterday"), None);
    }
}
