//! Writing the store as JSON lines: rows in key order, then (for a whole-store export)
//! the capture index, failed fetches and crawl descriptions, so that `import-jsonl`
//! rebuilds an equal store. What `sediment export` and the library's
//! `Store::export_jsonl` run.

use std::io::Write;

use anyhow::Result;

use crate::capture::Capture;
use crate::ingest::warc::WarcInfo;
use crate::jsonl::{write_capture, write_failed_fetch, write_page, write_row, write_warcinfo};
use crate::report::{Location, Report};
use crate::store::cells::Projection;
use crate::store::{Space, Store};
use crate::wacz::page::{PAGE_PREFIX, StoredPage};

/// The rows the arguments select: columns, versions and key range.
pub struct Selection {
    pub projection: Projection,
    /// First key (inclusive).
    pub start: Option<Vec<u8>>,
    /// End key (exclusive).
    pub end: Option<Vec<u8>>,
}

impl Selection {
    /// Every cell (newest version) of every row.
    pub fn all(store: &Store) -> Selection {
        Selection {
            projection: Projection::all(store.schema()),
            start: None,
            end: None,
        }
    }
}

/// What an export writes besides the selected rows.
pub struct ExportOptions {
    /// Write the rows (false: only the captures).
    pub rows: bool,
    /// At most this many rows.
    pub limit: Option<u64>,
    /// Every version of a cell with its timestamp (`--versions`).
    pub with_versions: bool,
    /// After the rows, the captures, failed fetches and crawl descriptions.
    pub captures: bool,
}

/// Writes the selected rows (and with `options.captures` the captures) of `store` to
/// `out`, as JSON lines; counts and problems go to `report`.
pub fn export_jsonl(
    store: &Store,
    selection: Selection,
    options: &ExportOptions,
    out: &mut dyn Write,
    report: &Report,
) -> Result<()> {
    let schema = store.schema();
    let Selection {
        projection,
        start,
        end,
    } = selection;
    let mut line = Vec::with_capacity(4096);
    let mut bad_cells = Vec::new();
    let mut rows = 0u64;
    let limit = if options.rows {
        options.limit.unwrap_or(u64::MAX)
    } else {
        0
    };
    store.scan_rows(&projection, start.as_deref(), end.as_deref(), |row| {
        if rows >= limit {
            return Ok(false);
        }
        line.clear();
        write_row(
            schema,
            &row,
            options.with_versions,
            &mut line,
            &mut bad_cells,
        );
        out.write_all(&line)?;
        rows += 1;
        if rows.is_multiple_of(4096) {
            report.progress().set_position(rows);
        }
        Ok(true)
    })?;
    if options.captures {
        let mut captures = 0u64;
        let mut damaged = Vec::new();
        store
            .backend()
            .scan_once(Space::Capture, &[], None, &mut |key, value| {
                match Capture::decode(value) {
                    Ok(capture) => {
                        line.clear();
                        write_capture(&capture, &mut line);
                        out.write_all(&line)?;
                        captures += 1;
                    }
                    Err(e) => damaged.push(format!(
                        "capture {}: {e}",
                        String::from_utf8_lossy(key).replace('\0', " ")
                    )),
                }
                Ok(true)
            })?;
        let mut failed = 0u64;
        store.for_each_failed_fetch(|fetch| {
            line.clear();
            write_failed_fetch(&fetch, &mut line);
            out.write_all(&line)?;
            failed += 1;
            Ok(true)
        })?;
        let mut warcinfo = 0u64;
        store.scan_prefix(Space::Meta, b"warcinfo/", &mut |key, value| {
            match serde_json::from_slice::<WarcInfo>(value) {
                Ok(info) => {
                    line.clear();
                    write_warcinfo(&info, &mut line);
                    out.write_all(&line)?;
                    warcinfo += 1;
                }
                Err(e) => damaged.push(format!("{}: {e}", String::from_utf8_lossy(key))),
            }
            Ok(true)
        })?;
        let mut pages = 0u64;
        store.scan_prefix(Space::Meta, PAGE_PREFIX, &mut |key, value| {
            match serde_json::from_slice::<StoredPage>(value) {
                Ok(page) => {
                    line.clear();
                    write_page(&page, &mut line);
                    out.write_all(&line)?;
                    pages += 1;
                }
                Err(e) => damaged.push(format!(
                    "{}: {e}",
                    String::from_utf8_lossy(key).replace('\0', " ")
                )),
            }
            Ok(true)
        })?;
        for key in damaged {
            let at = Location::named(key);
            report.problem(at, "undecodable_value", "left out of the export", None)?;
        }
        report.count("captures", captures);
        report.count("warcinfo", warcinfo);
        report.count("pages", pages);
        report.count("failed_fetches", failed);
    }
    out.flush()?;
    for cell in &bad_cells {
        let at = Location::named(format!("cell {cell}"));
        let _ = report.problem(at, "undecodable_cell", "left out of the export", None);
    }
    report.count("rows", rows);
    Ok(())
}
