//! The capture index as Parquet, in the layout of Common Crawl's columnar URL index
//! (`cc-index-table`'s flat schema, its columns in its order, and its partition directories
//! `crawl=NAME/subset=SUBSET/`), so the SQL written for Common Crawl's index runs unchanged
//! in Spark SQL, DuckDB, Athena and the like, plus what Sediment knows beyond a CDX line
//! (payload size, capture kind and origin, whether the capture locates a file row, ETag,
//! Last-Modified, user agent, the WARC's canonical location) after Common Crawl's columns.
//!
//! As in Common Crawl's index, `crawl` and `subset` are partition columns: they are the
//! directory names, not columns inside the files, so readers see them with partition
//! discovery (Spark's default, DuckDB's `hive_partitioning=1`, Athena's partitions).
//!
//! Captures are written in URL-then-time order (the store's capture order) into files of
//! at most `file_rows` rows per subset, each cut into row groups of about `row_group_bytes`:
//! a file and every row group covers a SURT range, so a query by `url_surtkey` prefix reads
//! few of them (min/max statistics). Memory stays flat: per subset (three at most), one
//! batch of rows and one row group being encoded.
//!
//! Differences from Common Crawl's types: offsets and lengths are 64-bit (WARC files past
//! 2 GiB exist), `warc_record_id` is the `urn:uuid:…` text, and columns Sediment does not
//! know are null: `content_languages` (no language detection), `content_truncated` (the
//! store keeps no WARC-Truncated), `warc_segment` unless the WARC's name is Common
//! Crawl's (`crawl-data/CRAWL/segments/SEGMENT/…`).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, Int16Builder, Int32Builder, Int64Builder, StringBuilder,
    TimestampMillisecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::capture::{Capture, CaptureKind, Origin};

/// How the files are cut.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub file_rows: u64,
    pub row_group_bytes: usize,
    /// Rows per Arrow batch handed to the writer.
    pub batch_rows: usize,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            file_rows: 4 << 20,
            // What the writer holds grows with this (pages, dictionaries): at 8 MiB an
            // export of millions of captures peaks within 1.3× one of 100 k (at 64 MiB,
            // 2.4×), at no cost in time.
            row_group_bytes: 8 << 20,
            batch_rows: 8192,
        }
    }
}

/// The URL parts of the `url_*` columns.
#[derive(Default)]
struct UrlParts {
    host: Option<String>,
    /// Host labels, last first (`com`, `example`, `www`), for domain names only.
    labels: Vec<String>,
    protocol: Option<String>,
    /// Only when the URL names one (as Common Crawl's `url_port`).
    port: Option<u16>,
    path: Option<String>,
    query: Option<String>,
}

impl UrlParts {
    fn of(text: &str) -> UrlParts {
        let Ok(url) = url::Url::parse(text) else {
            return UrlParts::default();
        };
        let labels = match url.host() {
            Some(url::Host::Domain(domain)) => domain
                .trim_end_matches('.')
                .rsplit('.')
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        };
        UrlParts {
            host: url.host_str().map(str::to_string),
            labels,
            protocol: Some(url.scheme().to_string()),
            port: url.port(),
            path: Some(url.path().to_string()),
            query: url.query().map(str::to_string),
        }
    }
}

/// The media type and charset of a Content-Type value.
fn media_type(content_type: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(value) = content_type else {
        return (None, None);
    };
    let mut parts = value.split(';');
    let media = parts
        .next()
        .map(|m| m.trim().to_ascii_lowercase())
        .filter(|m| !m.is_empty());
    let charset = parts.find_map(|p| {
        let (name, v) = p.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches('"').to_string())
            .filter(|v| !v.is_empty())
    });
    (media, charset)
}

/// The public-suffix columns of a host name, as Common Crawl computes them (its
/// `HostName`, on crawler-commons' suffix finder): the private suffix is the longest rule
/// of the whole Public Suffix List (`blogspot.com`), the registry suffix the longest of its
/// ICANN section (`com`); each domain is one label more than its suffix, null when the host
/// is the suffix itself. All null for hosts under no known suffix (`localhost`) and for IP
/// addresses.
#[derive(Debug, Default, PartialEq)]
struct Suffixes {
    registry_suffix: Option<String>,
    registered_domain: Option<String>,
    private_suffix: Option<String>,
    private_domain: Option<String>,
}

impl Suffixes {
    /// From host labels, last first.
    fn of(labels: &[String]) -> Suffixes {
        // The labels of the longest known rule matching the last `k` labels, and its section.
        let rule = |k: usize| -> Option<(usize, psl::Type)> {
            let info = psl::Psl::find(&psl::List, labels[..k].iter().map(|l| l.as_bytes()));
            let typ = info.typ?;
            let mut bytes = 0;
            for (i, label) in labels[..k].iter().enumerate() {
                bytes += label.len() + usize::from(i > 0);
                if bytes == info.len {
                    return Some((i + 1, typ));
                }
            }
            None
        };
        let name = |n: usize| -> Option<String> {
            (n <= labels.len()).then(|| {
                let mut parts: Vec<&str> = labels[..n].iter().map(String::as_str).collect();
                parts.reverse();
                parts.join(".")
            })
        };
        let Some((private, typ)) = (!labels.is_empty()).then(|| rule(labels.len())).flatten()
        else {
            return Suffixes::default();
        };
        // The longest ICANN rule is shorter than a private one that matches: look again
        // within fewer labels, past any shorter private rules.
        let mut registry = None;
        if typ == psl::Type::Icann || private == 1 {
            registry = Some(private);
        } else {
            let mut k = private - 1;
            while k > 0 {
                match rule(k) {
                    Some((n, psl::Type::Icann)) => {
                        registry = Some(n);
                        break;
                    }
                    Some((n, psl::Type::Private)) => k = n - 1,
                    None => break,
                }
            }
        }
        Suffixes {
            registry_suffix: registry.and_then(name),
            registered_domain: registry.and_then(|n| name(n + 1)),
            private_suffix: name(private),
            private_domain: name(private + 1),
        }
    }
}

/// Common Crawl's subsets: successful captures (with revisits of them, which its crawler
/// writes into the same WARC files), robots.txt, and the rest (redirects, 404s…).
fn subset(capture: &Capture, path: Option<&str>) -> &'static str {
    if path == Some("/robots.txt") {
        "robotstxt"
    } else if capture.kind == CaptureKind::Resource || capture.status == Some(200) {
        "warc"
    } else {
        "crawldiagnostics"
    }
}

/// The subsets, in the order of `Subset` indexes.
const SUBSETS: [&str; 3] = ["warc", "crawldiagnostics", "robotstxt"];

/// The segment of a WARC named as Common Crawl's
/// (`…crawl-data/CC-MAIN-2018-05/segments/1516084886237.6/warc/CC-MAIN-….warc.gz`).
fn warc_segment(name: &str) -> Option<&str> {
    let (_, rest) = name.rsplit_once("crawl-data/")?;
    let (crawl, rest) = rest.split_once("/segments/")?;
    let (segment, file) = rest.split_once('/')?;
    (!crawl.is_empty() && !crawl.contains('/') && !segment.is_empty() && file.contains('/'))
        .then_some(segment)
}

fn fetch_time_ms(ts: &str) -> Option<i64> {
    chrono::NaiveDateTime::parse_from_str(ts, "%Y%m%d%H%M%S")
        .ok()
        .map(|t| t.and_utc().timestamp_millis())
}

fn to_i64(v: Option<u64>) -> Option<i64> {
    v.and_then(|v| i64::try_from(v).ok())
}

/// One capture with what its columns are computed from.
struct Row<'c> {
    capture: &'c Capture,
    url: UrlParts,
    host_reversed: Option<String>,
    media_type: Option<String>,
    charset: Option<String>,
    suffixes: Suffixes,
    digest: Option<String>,
    dechunked: Option<String>,
    segment: Option<&'c str>,
    subset: &'static str,
}

impl<'c> Row<'c> {
    fn of(capture: &'c Capture) -> Row<'c> {
        let url = UrlParts::of(&capture.url);
        let host_reversed = (!url.labels.is_empty()).then(|| url.labels.join("."));
        let (media_type, charset) = media_type(capture.content_type.as_deref());
        let subset = subset(capture, url.path.as_deref());
        let segment = [&capture.warc, &capture.location]
            .into_iter()
            .find_map(|name| warc_segment(name.as_deref()?));
        Row {
            suffixes: Suffixes::of(&url.labels),
            capture,
            url,
            host_reversed,
            media_type,
            charset,
            segment,
            digest: capture.digest.map(|d| d.to_base32()),
            dechunked: capture.dechunked.map(|d| d.to_base32()),
            subset,
        }
    }

    fn label(&self, i: usize) -> Option<&str> {
        self.url.labels.get(i).map(String::as_str)
    }
}

type Text = for<'a> fn(&'a Row<'a>) -> Option<&'a str>;
type Number = fn(&Row<'_>) -> Option<i64>;
type Flag = fn(&Row<'_>) -> Option<bool>;

/// A column: its builder and how a row fills it.
enum Column {
    Text(StringBuilder, Text),
    Int64(Int64Builder, Number),
    Int32(Int32Builder, Number),
    Int16(Int16Builder, Number),
    Time(TimestampMillisecondBuilder, Number),
    Bool(BooleanBuilder, Flag),
}

impl Column {
    fn push(&mut self, row: &Row<'_>) {
        match self {
            Column::Text(b, f) => b.append_option(f(row)),
            Column::Int64(b, f) => b.append_option(f(row)),
            Column::Int32(b, f) => b.append_option(f(row).and_then(|v| i32::try_from(v).ok())),
            Column::Int16(b, f) => b.append_option(f(row).and_then(|v| i16::try_from(v).ok())),
            Column::Time(b, f) => b.append_option(f(row)),
            Column::Bool(b, f) => b.append_option(f(row)),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Column::Text(b, _) => Arc::new(b.finish()),
            Column::Int64(b, _) => Arc::new(b.finish()),
            Column::Int32(b, _) => Arc::new(b.finish()),
            Column::Int16(b, _) => Arc::new(b.finish()),
            Column::Time(b, _) => Arc::new(b.finish()),
            Column::Bool(b, _) => ArrayBuilder::finish(b),
        }
    }
}

/// The columns, in order: the schema and how each is filled, in one table.
fn columns() -> Vec<(Field, Column)> {
    fn text(name: &str, nullable: bool, f: Text) -> (Field, Column) {
        (
            Field::new(name, DataType::Utf8, nullable),
            Column::Text(StringBuilder::new(), f),
        )
    }
    fn int64(name: &str, f: Number) -> (Field, Column) {
        (
            Field::new(name, DataType::Int64, true),
            Column::Int64(Int64Builder::new(), f),
        )
    }
    fn flag(name: &str, nullable: bool, f: Flag) -> (Field, Column) {
        (
            Field::new(name, DataType::Boolean, nullable),
            Column::Bool(BooleanBuilder::new(), f),
        )
    }
    vec![
        text("url_surtkey", false, |r| Some(&r.capture.surt)),
        text("url", false, |r| Some(&r.capture.url)),
        text("url_host_name", true, |r| r.url.host.as_deref()),
        text("url_host_tld", true, |r| r.label(0)),
        text("url_host_2nd_last_part", true, |r| r.label(1)),
        text("url_host_3rd_last_part", true, |r| r.label(2)),
        text("url_host_4th_last_part", true, |r| r.label(3)),
        text("url_host_5th_last_part", true, |r| r.label(4)),
        text("url_host_registry_suffix", true, |r| {
            r.suffixes.registry_suffix.as_deref()
        }),
        text("url_host_registered_domain", true, |r| {
            r.suffixes.registered_domain.as_deref()
        }),
        text("url_host_private_suffix", true, |r| {
            r.suffixes.private_suffix.as_deref()
        }),
        text("url_host_private_domain", true, |r| {
            r.suffixes.private_domain.as_deref()
        }),
        text("url_host_name_reversed", true, |r| {
            r.host_reversed.as_deref()
        }),
        text("url_protocol", true, |r| r.url.protocol.as_deref()),
        (
            Field::new("url_port", DataType::Int32, true),
            Column::Int32(Int32Builder::new(), |r| r.url.port.map(i64::from)),
        ),
        text("url_path", true, |r| r.url.path.as_deref()),
        text("url_query", true, |r| r.url.query.as_deref()),
        (
            Field::new(
                "fetch_time",
                DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
                true,
            ),
            Column::Time(
                TimestampMillisecondBuilder::new().with_timezone("UTC"),
                |r| fetch_time_ms(&r.capture.ts),
            ),
        ),
        (
            Field::new("fetch_status", DataType::Int16, true),
            Column::Int16(Int16Builder::new(), |r| r.capture.status.map(i64::from)),
        ),
        text("fetch_redirect", true, |r| r.capture.redirect.as_deref()),
        text("content_digest", true, |r| r.digest.as_deref()),
        text("content_mime_type", true, |r| r.media_type.as_deref()),
        text("content_mime_detected", true, |r| r.capture.mime.as_deref()),
        text("content_charset", true, |r| r.charset.as_deref()),
        text("content_languages", true, |_| None),
        text("content_truncated", true, |_| None),
        text("warc_record_id", true, |r| r.capture.record_id.as_deref()),
        text("warc_filename", true, |r| r.capture.warc.as_deref()),
        int64("warc_record_offset", |r| to_i64(r.capture.offset)),
        int64("warc_record_length", |r| to_i64(r.capture.c_size)),
        text("warc_segment", true, |r| r.segment),
        // Then `crawl` and `subset`, the partition directories. Sediment's own:
        int64("content_length", |r| to_i64(r.capture.size)),
        text("capture_kind", false, |r| {
            Some(match r.capture.kind {
                CaptureKind::Response => "response",
                CaptureKind::Resource => "resource",
                CaptureKind::Revisit => "revisit",
            })
        }),
        text("capture_origin", false, |r| {
            Some(match r.capture.origin {
                Origin::Cdx => "cdx",
                Origin::Warc => "warc",
            })
        }),
        flag("capture_locates_file", false, |r| {
            Some(r.capture.locates_file())
        }),
        flag("content_digest_ok", true, |r| r.capture.digest_ok),
        text("content_digest_dechunked", true, |r| r.dechunked.as_deref()),
        text("http_etag", true, |r| r.capture.etag.as_deref()),
        text("http_last_modified", true, |r| {
            r.capture.last_modified.as_deref()
        }),
        text("request_user_agent", true, |r| r.capture.ua.as_deref()),
        text("warc_location", true, |r| r.capture.location.as_deref()),
        text("capture_source", false, |r| Some(&r.capture.source)),
        int64("capture_source_line", |r| to_i64(r.capture.line)),
    ]
}

/// The Arrow schema of the files.
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(
        columns().into_iter().map(|(f, _)| f).collect::<Vec<_>>(),
    ))
}

/// What an export wrote.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct ExportStats {
    pub rows: u64,
    pub files: Vec<PathBuf>,
    pub row_groups: u64,
}

/// Whether `name` can be a crawl's partition directory (`crawl=NAME`) as readers parse it.
fn check_crawl_name(name: &str) -> Result<()> {
    let bad = name.is_empty()
        || name.starts_with('.')
        || name
            .chars()
            .any(|c| c.is_control() || matches!(c, '/' | '\\' | '=' | '%' | '*' | '?'));
    if bad {
        bail!(
            "crawl name {name:?} cannot name a partition directory: use letters, digits, \
             `-`, `_` or `.` (as CC-MAIN-2018-05)"
        );
    }
    Ok(())
}

/// One subset's directory and the file being written into it.
struct Partition {
    dir: PathBuf,
    columns: Vec<Column>,
    rows_in_batch: usize,
    file: Option<(ArrowWriter<File>, PathBuf, u64)>,
    files: usize,
}

impl Partition {
    fn create(dir: PathBuf) -> Result<Partition> {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Partition {
            dir,
            columns: columns().into_iter().map(|(_, c)| c).collect(),
            rows_in_batch: 0,
            file: None,
            files: 0,
        })
    }

    fn push(&mut self, row: &Row<'_>, out: &Out<'_>, stats: &mut ExportStats) -> Result<()> {
        for column in &mut self.columns {
            column.push(row);
        }
        self.rows_in_batch += 1;
        let file_rows = self.file.as_ref().map_or(0, |(_, _, rows)| *rows);
        if self.rows_in_batch >= out.layout.batch_rows
            || file_rows + self.rows_in_batch as u64 >= out.layout.file_rows
        {
            self.write_batch(out, stats)?;
        }
        Ok(())
    }

    fn write_batch(&mut self, out: &Out<'_>, stats: &mut ExportStats) -> Result<()> {
        if self.rows_in_batch == 0 {
            return Ok(());
        }
        let arrays: Vec<ArrayRef> = self.columns.iter_mut().map(Column::finish).collect();
        let batch = RecordBatch::try_new(out.schema.clone(), arrays)?;
        let rows = self.rows_in_batch as u64;
        self.rows_in_batch = 0;
        if self.file.is_none() {
            self.file = Some(self.open_file(out)?);
        }
        let (writer, path, written) = self.file.as_mut().expect("opened above");
        writer
            .write(&batch)
            .with_context(|| format!("cannot write {}", temporary_of(path).display()))?;
        *written += rows;
        stats.rows += rows;
        if *written >= out.layout.file_rows {
            self.close_file(stats)?;
        }
        Ok(())
    }

    fn open_file(&self, out: &Out<'_>) -> Result<(ArrowWriter<File>, PathBuf, u64)> {
        let name = format!("part-{:05}.parquet", self.files);
        let path = self.dir.join(&name);
        let temporary = temporary_of(&path);
        let file = File::create(&temporary)
            .with_context(|| format!("cannot create {}", temporary.display()))?;
        let properties = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_bytes(Some(out.layout.row_group_bytes))
            .set_created_by(format!("sediment {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = ArrowWriter::try_new(file, out.schema.clone(), Some(properties))
            .with_context(|| format!("cannot write {}", temporary.display()))?;
        Ok((writer, path, 0))
    }

    fn close_file(&mut self, stats: &mut ExportStats) -> Result<()> {
        let Some((writer, path, _)) = self.file.take() else {
            return Ok(());
        };
        let temporary = temporary_of(&path);
        let metadata = match writer.close() {
            Ok(metadata) => metadata,
            Err(e) => {
                let _ = std::fs::remove_file(&temporary);
                return Err(e).with_context(|| format!("cannot write {}", temporary.display()));
            }
        };
        stats.row_groups += metadata.num_row_groups() as u64;
        std::fs::rename(&temporary, &path)
            .with_context(|| format!("cannot rename {}", temporary.display()))?;
        self.files += 1;
        stats.files.push(path);
        Ok(())
    }

    fn finish(&mut self, out: &Out<'_>, stats: &mut ExportStats) -> Result<()> {
        self.write_batch(out, stats)?;
        self.close_file(stats)
    }
}

/// A file that failed half-written (a full disk) is removed with its partition: the
/// export stops with an error, and the space goes back at once.
impl Drop for Partition {
    fn drop(&mut self) {
        if let Some((_, path, _)) = self.file.take() {
            let _ = std::fs::remove_file(temporary_of(&path));
        }
    }
}

/// The name a Parquet file has while it is written: hidden from readers' globs until it
/// is complete.
fn temporary_of(path: &Path) -> PathBuf {
    path.with_file_name(format!(
        ".{}.tmp",
        path.file_name().unwrap_or_default().to_string_lossy()
    ))
}

/// What every partition writes with.
struct Out<'a> {
    layout: &'a Layout,
    schema: &'a SchemaRef,
}

/// Writes captures, given in capture order, as Parquet files
/// `crawl=NAME/subset=SUBSET/part-NNNNN.parquet` under a directory; each file appears
/// (renamed from a temporary name) only when complete.
pub struct ParquetWriter {
    crawl_dir: PathBuf,
    layout: Layout,
    schema: SchemaRef,
    /// By index in `SUBSETS`, made at the subset's first capture.
    partitions: [Option<Partition>; 3],
    stats: ExportStats,
}

impl ParquetWriter {
    /// Starts an export of crawl `crawl` into `dir` (created when missing), which may hold
    /// exports of other crawls but not of this one.
    pub fn create(dir: &Path, crawl: &str, layout: Layout) -> Result<ParquetWriter> {
        check_crawl_name(crawl)?;
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let crawl_dir = dir.join(format!("crawl={crawl}"));
        let taken = SUBSETS.iter().any(|subset| {
            std::fs::read_dir(crawl_dir.join(format!("subset={subset}"))).is_ok_and(|entries| {
                entries
                    .flatten()
                    .any(|e| e.file_name().to_string_lossy().starts_with("part-"))
            })
        });
        if taken {
            bail!(
                "{} already holds an export of crawl {crawl}: remove it, or name another crawl \
                 (--crawl) or directory",
                crawl_dir.display()
            );
        }
        Ok(ParquetWriter {
            crawl_dir,
            layout,
            schema: schema(),
            partitions: [None, None, None],
            stats: ExportStats::default(),
        })
    }

    pub fn push(&mut self, capture: &Capture) -> Result<()> {
        let row = Row::of(capture);
        let index = SUBSETS
            .iter()
            .position(|s| *s == row.subset)
            .expect("subset() returns one of SUBSETS");
        if self.partitions[index].is_none() {
            let dir = self.crawl_dir.join(format!("subset={}", row.subset));
            self.partitions[index] = Some(Partition::create(dir)?);
        }
        let out = Out {
            layout: &self.layout,
            schema: &self.schema,
        };
        let partition = self.partitions[index].as_mut().expect("made above");
        partition.push(&row, &out, &mut self.stats)
    }

    /// Writes what is left and closes the last files.
    pub fn finish(mut self) -> Result<ExportStats> {
        let out = Out {
            layout: &self.layout,
            schema: &self.schema,
        };
        for partition in self.partitions.iter_mut().flatten() {
            partition.finish(&out, &mut self.stats)?;
        }
        Ok(self.stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_parts_follow_common_crawl() {
        let parts = UrlParts::of("https://www.Example.com:8443/a/b.html?q=1&x=2#frag");
        assert_eq!(parts.host.as_deref(), Some("www.example.com"));
        assert_eq!(parts.labels, ["com", "example", "www"]);
        assert_eq!(parts.port, Some(8443));
        assert_eq!(parts.path.as_deref(), Some("/a/b.html"));
        assert_eq!(parts.query.as_deref(), Some("q=1&x=2"));
        assert_eq!(UrlParts::of("http://example.com:80/").port, None);
        assert!(UrlParts::of("http://127.0.0.1/").labels.is_empty());
        assert_eq!(
            media_type(Some("Text/HTML; charset=\"UTF-8\"")),
            (Some("text/html".into()), Some("UTF-8".into()))
        );
        assert_eq!(fetch_time_ms("19700101000001"), Some(1000));
        assert_eq!(schema().fields().len(), columns().len());
    }

    fn suffixes(host: &str) -> [Option<String>; 4] {
        let s = Suffixes::of(&UrlParts::of(&format!("http://{host}/")).labels);
        [
            s.registry_suffix,
            s.registered_domain,
            s.private_suffix,
            s.private_domain,
        ]
    }

    fn some(names: [&str; 4]) -> [Option<String>; 4] {
        names.map(|n| (!n.is_empty()).then(|| n.to_string()))
    }

    /// Hand-checked against the Public Suffix List and the examples of Common Crawl's
    /// schema (registry `com, co.uk`; private `s3.amazonaws.com`, `blogspot.com`).
    #[test]
    fn suffixes_follow_the_public_suffix_list_as_common_crawl_does() {
        let cases = [
            (
                "www.example.com",
                ["com", "example.com", "com", "example.com"],
            ),
            (
                "news.bbc.co.uk",
                ["co.uk", "bbc.co.uk", "co.uk", "bbc.co.uk"],
            ),
            (
                "myblog.blogspot.com",
                ["com", "blogspot.com", "blogspot.com", "myblog.blogspot.com"],
            ),
            (
                "a.b.mypublicbucket.s3.amazonaws.com",
                [
                    "com",
                    "amazonaws.com",
                    "s3.amazonaws.com",
                    "mypublicbucket.s3.amazonaws.com",
                ],
            ),
            // The host is its private suffix: no private domain.
            ("blogspot.com", ["com", "blogspot.com", "blogspot.com", ""]),
            ("co.uk", ["co.uk", "", "co.uk", ""]),
            // Wildcard and exception rules of the ICANN section (`*.ck`, `!www.ck`).
            ("a.b.ck", ["b.ck", "a.b.ck", "b.ck", "a.b.ck"]),
            ("www.ck", ["ck", "www.ck", "ck", "www.ck"]),
            // IDN hosts are compared in their ASCII form (`公司.cn` is a suffix).
            (
                "例子.公司.cn",
                [
                    "xn--55qx5d.cn",
                    "xn--fsqu00a.xn--55qx5d.cn",
                    "xn--55qx5d.cn",
                    "xn--fsqu00a.xn--55qx5d.cn",
                ],
            ),
            ("www.iana.org.", ["org", "iana.org", "org", "iana.org"]),
            ("localhost", ["", "", "", ""]),
            ("127.0.0.1", ["", "", "", ""]),
        ];
        for (host, expected) in cases {
            assert_eq!(suffixes(host), some(expected), "{host}");
        }
    }

    #[test]
    fn subsets_and_segments_follow_common_crawl() {
        let capture = |kind, status, url: &str| Capture {
            kind,
            status,
            url: url.to_string(),
            ..Capture::default()
        };
        let subset_of = |c: &Capture| subset(c, UrlParts::of(&c.url).path.as_deref());
        let page = "http://example.com/";
        assert_eq!(
            subset_of(&capture(CaptureKind::Response, Some(200), page)),
            "warc"
        );
        // Its crawler writes revisits of unchanged pages next to the pages.
        assert_eq!(
            subset_of(&capture(CaptureKind::Revisit, Some(200), page)),
            "warc"
        );
        assert_eq!(
            subset_of(&capture(CaptureKind::Revisit, Some(304), page)),
            "crawldiagnostics"
        );
        assert_eq!(
            subset_of(&capture(CaptureKind::Response, Some(404), page)),
            "crawldiagnostics"
        );
        assert_eq!(
            subset_of(&capture(
                CaptureKind::Response,
                Some(200),
                "http://example.com/robots.txt"
            )),
            "robotstxt"
        );
        assert_eq!(
            warc_segment(
                "crawl-data/CC-MAIN-2018-05/segments/1516084886237.6/warc/\
                 CC-MAIN-20180116070444-20180116090444-00000.warc.gz"
            ),
            Some("1516084886237.6")
        );
        assert_eq!(warc_segment("/data/crawl1.warc.gz"), None);
        assert!(check_crawl_name("CC-MAIN-2018-05").is_ok());
        for bad in ["", "a/b", "x=y", ".hidden"] {
            assert!(check_crawl_name(bad).is_err(), "{bad:?}");
        }
    }
}
