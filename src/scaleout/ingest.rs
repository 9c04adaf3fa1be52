//! `ingest-sst`: the key ranges `write-sst` wrote, ingested into the store by its one
//! writer — the LoadIncrementalHFiles of an HBase bulk load — then the file rows the ranges
//! could not derive, the input registry, and a published version.
//!
//! Before anything is written the pieces are checked against each other: every part of
//! every input is there once, the CDX parts cover their input's lines exactly, the ranges
//! hold every record the extracts printed, and no two ranges of one key space overlap.
//! A run stopped in the middle leaves the store marked inconsistent, and the next writer
//! rolls it back to the last version (see `Store::mark_inconsistent`).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail, ensure};
use rocksdb::WriteBatch;
use serde::Serialize;

use crate::cdx::lines::LineReader;
use crate::key::Sha1Key;
use crate::report::Report;
use crate::scaleout::extract::Completed;
use crate::scaleout::records::InputPart;
use crate::scaleout::sst::{Manifest, read_manifest};
use crate::store::backend::{Batch, Op};
use crate::store::captures::DerivedColumns;
use crate::store::cells::cell_key;
use crate::store::keys::writer_token;
use crate::store::materialize::materialize_dirty;
use crate::store::registry::{ContentHash, InputRecord};
use crate::store::sst::ingest_files;
use crate::store::{CF_BY_DIGEST, CF_CAPTURE, Space, Store, directory};

/// What a distributed ingest needs to know of the store before it starts.
#[derive(Debug, Serialize)]
pub struct StorePlan {
    /// No capture yet: key ranges may derive file rows themselves.
    pub empty: bool,
    /// The inputs completed, for extract tasks to skip.
    pub completed: Vec<Completed>,
}

/// Reads the newest published version of the store (nothing when there is no store yet).
pub fn store_plan(path: &Path) -> Result<StorePlan> {
    let shared = crate::store::is_shared_address(path);
    if !shared && !directory::is_store(path) {
        return Ok(StorePlan {
            empty: true,
            completed: Vec::new(),
        });
    }
    let store = Store::open_reader(path)?;
    let completed = store
        .inputs()?
        .into_iter()
        .map(|r| Completed {
            command: r.command,
            options: r.options,
            size: r.size,
            content_hash: r.content_hash,
        })
        .collect();
    Ok(StorePlan {
        empty: holds_no_capture(&store)?,
        completed,
    })
}

fn holds_no_capture(store: &Store) -> Result<bool> {
    let mut empty = true;
    for space in [Space::Capture, Space::ByDigest] {
        store.scan_prefix(space, &[], &mut |_, _| {
            empty = false;
            Ok(false)
        })?;
    }
    Ok(empty)
}

/// One input, its parts put together.
#[derive(Debug, Clone)]
pub struct InputGroup {
    pub part: InputPart,
    pub counts: BTreeMap<String, u64>,
}

/// Reads the input summaries (JSON lines) and checks that every input is whole. Inputs
/// keep the order of their first summary: inputs with the same content (copies under
/// other names) share one registry entry, and the last one recorded names it, as with
/// the ingest commands.
pub fn load_inputs(read: impl Read + Send) -> Result<Vec<InputGroup>> {
    type Key = (String, String, String, String);
    let mut order: Vec<Key> = Vec::new();
    let mut parts: BTreeMap<Key, Vec<InputPart>> = BTreeMap::new();
    let mut lines = LineReader::plain(read).overlong_is_error();
    while let Some((n, line)) = lines
        .next_line()
        .context("cannot read the input summaries")?
    {
        let line = std::str::from_utf8(line)
            .with_context(|| format!("input summary line {n} is not UTF-8"))?
            .trim();
        if line.is_empty() {
            continue;
        }
        let part: InputPart = serde_json::from_str(line.strip_prefix("s\t").unwrap_or(line))
            .with_context(|| format!("input summary line {n} is not one"))?;
        let (command, hash, options) = part.identity();
        let key = (
            command.to_string(),
            hash.to_string(),
            options.to_string(),
            part.path.clone(),
        );
        if !parts.contains_key(&key) {
            order.push(key.clone());
        }
        parts.entry(key).or_default().push(part);
    }
    order
        .into_iter()
        .filter_map(|key| parts.remove(&key))
        .map(group_parts)
        .collect()
}

fn group_parts(mut parts: Vec<InputPart>) -> Result<InputGroup> {
    parts.sort_by_key(|p| p.part);
    // A task retried after its summary was taken would give the same part twice.
    parts.dedup();
    let first = parts[0].clone();
    let name = &first.path;
    let of = first.parts;
    ensure!(
        !first.content_hash.is_empty(),
        "{name}: the summary has no content hash"
    );
    let numbers: Vec<u32> = parts.iter().map(|p| p.part).collect();
    ensure!(
        parts.iter().all(|p| p.parts == of) && numbers == (0..of).collect::<Vec<_>>(),
        "{name}: expected parts 0..{of} once each, got {numbers:?} (a task's output is \
         missing or was taken twice)"
    );
    let skipped = parts.iter().any(|p| p.skipped);
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut group = first.clone();
    group.warcinfo.clear();
    group.records = Default::default();
    for part in &parts {
        for (k, v) in &part.counts {
            *counts.entry(k.clone()).or_default() += v;
        }
        group.warcinfo.extend(part.warcinfo.iter().cloned());
        group.records.captures += part.records.captures;
        group.records.index_entries += part.records.index_entries;
    }
    if !skipped && first.lines.is_some() {
        check_line_coverage(name, &parts)?;
    }
    group.skipped = skipped;
    Ok(InputGroup {
        part: group,
        counts,
    })
}

/// The parts of a line input parse every line once.
fn check_line_coverage(name: &str, parts: &[InputPart]) -> Result<()> {
    let totals: Vec<u64> = parts
        .iter()
        .map(|p| p.lines.as_ref().map_or(0, |l| l.total))
        .collect();
    ensure!(
        totals.windows(2).all(|w| w[0] == w[1]),
        "{name}: its parts read different numbers of lines {totals:?}"
    );
    let mut ranges: Vec<(u64, u64)> = parts
        .iter()
        .flat_map(|p| p.lines.iter().flat_map(|l| l.ranges.iter().copied()))
        .collect();
    ranges.sort_unstable();
    let mut next = 1;
    for (start, end) in ranges {
        ensure!(
            start == next && end >= start,
            "{name}: its parts do not cover its lines once each (line {next} expected, \
             a part starts at {start})"
        );
        next = end + 1;
    }
    ensure!(
        next == totals[0] + 1,
        "{name}: its parts end at line {}, the input has {}",
        next - 1,
        totals[0]
    );
    Ok(())
}

/// A key range written by `write-sst`.
pub struct Range {
    pub dir: PathBuf,
    pub manifest: Manifest,
}

/// Reads the manifests of the range directories and checks that the ranges of each key
/// space are disjoint.
pub fn load_ranges(dirs: &[PathBuf]) -> Result<Vec<Range>> {
    let ranges: Vec<Range> = dirs
        .iter()
        .map(|dir| {
            Ok(Range {
                dir: dir.clone(),
                manifest: read_manifest(dir)?,
            })
        })
        .collect::<Result<_>>()?;
    let mut by_cf: BTreeMap<&str, Vec<(&str, &str, &Path)>> = BTreeMap::new();
    for range in &ranges {
        for file in &range.manifest.files {
            by_cf
                .entry(&file.cf)
                .or_default()
                .push((&file.first, &file.last, &range.dir));
        }
    }
    for (cf, mut spans) in by_cf {
        spans.sort();
        for pair in spans.windows(2) {
            ensure!(
                pair[0].1 < pair[1].0,
                "the {cf} files of {} and {} overlap: the records were not partitioned by \
                 key range",
                pair[0].2.display(),
                pair[1].2.display()
            );
        }
    }
    Ok(ranges)
}

#[derive(Debug, Default, Clone, Copy)]
pub struct IngestStats {
    pub inputs: u64,
    pub inputs_skipped: u64,
    pub sst_files: u64,
    pub rows_derived_in_ranges: bool,
    pub rows: u64,
    pub duplicates: u64,
}

/// Checks that the ranges hold every record the extracts printed, once.
pub fn check_complete(ranges: &[Range], inputs: &[InputGroup]) -> Result<()> {
    let printed: u64 = inputs
        .iter()
        .filter(|g| !g.part.skipped)
        .map(|g| g.part.records.captures + g.part.records.index_entries)
        .sum();
    let read: u64 = ranges.iter().map(|r| r.manifest.records).sum();
    ensure!(
        printed == read,
        "the extracts printed {printed} records but the ranges read {read}: a task's output \
         is missing or was taken twice"
    );
    Ok(())
}

/// Ingests `ranges` and records `inputs` (checked with [`check_complete`]); the store is
/// consistent again when it returns.
pub fn ingest(
    store: &Store,
    report: &Report,
    ts: u64,
    ranges: &[Range],
    inputs: &[InputGroup],
) -> Result<IngestStats> {
    let mut stats = IngestStats::default();
    store.mark_inconsistent()?;
    let derived = holds_no_capture(store)?
        && ranges
            .iter()
            .all(|r| r.manifest.derived && r.manifest.ts == ts);
    stats.rows_derived_in_ranges = derived;
    let mut families = vec![CF_CAPTURE, CF_BY_DIGEST];
    if derived {
        families.extend(["f", "file"]);
    }
    for cf in families {
        let paths: Vec<PathBuf> = ranges
            .iter()
            .flat_map(|r| {
                r.manifest
                    .files
                    .iter()
                    .filter(|f| f.cf == cf)
                    .map(|f| r.dir.join(&f.file))
            })
            .collect();
        stats.sst_files += paths.len() as u64;
        ingest_files(store, cf, paths)?;
    }
    if derived {
        for range in ranges {
            stats.rows += range.manifest.rows.rows;
            stats.duplicates += range.manifest.rows.duplicates;
        }
        let recheck: Vec<Sha1Key> = ranges
            .iter()
            .flat_map(|r| r.manifest.recheck.iter())
            .filter_map(|hex| Sha1Key::parse(hex).ok())
            .collect();
        unset_derived_rows(store, &recheck, ts)?;
        mark_dirty(store, ts, recheck.iter().map(|d| *d.as_bytes()))?;
    } else {
        for range in ranges {
            let Some(name) = &range.manifest.digests else {
                continue;
            };
            mark_dirty(store, ts, digests_in(&range.dir.join(name))?)?;
        }
    }
    report
        .progress()
        .set_message("deriving the file rows of the touched digests");
    let materialized = materialize_dirty(store, ts)?;
    if !derived {
        stats.rows = materialized.rows;
        stats.duplicates = materialized.duplicates;
    }
    for group in inputs.iter().filter(|g| !g.part.skipped) {
        for info in &group.part.warcinfo {
            store.put_warcinfo(info)?;
        }
    }
    store.flush()?;
    for group in inputs {
        if group.part.skipped {
            stats.inputs_skipped += 1;
            continue;
        }
        record_input(store, group)?;
        stats.inputs += 1;
    }
    store.mark_consistent()?;
    Ok(stats)
}

/// Finishes a distributed ingest whose ranges were written straight into a shared store
/// (`write-range`): derives what a range left marked (a task that died after writing),
/// then records `inputs` as [`ingest`] does. `records_written`: the records the ranges
/// reported, checked against what the extracts printed.
pub fn finish_written(
    store: &Store,
    report: &Report,
    ts: u64,
    records_written: u64,
    inputs: &[InputGroup],
) -> Result<IngestStats> {
    let printed: u64 = inputs
        .iter()
        .filter(|g| !g.part.skipped)
        .map(|g| g.part.records.captures + g.part.records.index_entries)
        .sum();
    ensure!(
        printed == records_written,
        "the extracts printed {printed} records but the ranges wrote {records_written}: a \
         task's output is missing or was taken twice"
    );
    let mut stats = IngestStats::default();
    report
        .progress()
        .set_message("deriving the file rows the ranges left marked");
    loop {
        let derived = materialize_dirty(store, ts)?;
        stats.rows += derived.rows;
        stats.duplicates += derived.duplicates;
        let mut marked = false;
        store.scan_prefix(Space::Dirty, &[], &mut |_, _| {
            marked = true;
            Ok(false)
        })?;
        if !marked {
            break;
        }
    }
    for group in inputs.iter().filter(|g| !g.part.skipped) {
        for info in &group.part.warcinfo {
            store.put_warcinfo(info)?;
        }
    }
    for group in inputs {
        if group.part.skipped {
            stats.inputs_skipped += 1;
            continue;
        }
        record_input(store, group)?;
        stats.inputs += 1;
    }
    store.flush()?;
    Ok(stats)
}

/// Records an input as `import-warc` or `backfill-cdx` would have.
fn record_input(store: &Store, group: &InputGroup) -> Result<()> {
    let part = &group.part;
    let hash = parse_content_hash(&part.content_hash)?;
    store.record_input(
        &hash,
        &InputRecord {
            command: part.command.clone(),
            path: part.path.clone(),
            size: part.size,
            content_hash: part.content_hash.clone(),
            options: part.options.clone(),
            completed_ms: crate::store::writer::now_millis(),
            summary: serde_json::to_value(&group.counts)?,
        },
    )
}

fn parse_content_hash(text: &str) -> Result<ContentHash> {
    let hex = text
        .strip_prefix("xxh3-128:")
        .with_context(|| format!("{text:?} is not a content hash"))?;
    Ok(ContentHash(u128::from_str_radix(hex, 16).with_context(
        || format!("{text:?} is not a content hash"),
    )?))
}

/// The digests listed in a range's digest file, streamed.
fn digests_in(path: &Path) -> Result<impl Iterator<Item = [u8; 20]>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() % 20 != 0 {
        bail!("{} is damaged (not a list of digests)", path.display());
    }
    Ok((0..bytes.len() / 20).map(move |i| {
        let mut digest = [0u8; 20];
        digest.copy_from_slice(&bytes[i * 20..(i + 1) * 20]);
        digest
    }))
}

/// Marks digests for the derivation of their rows (`materialize_dirty`).
fn mark_dirty(store: &Store, ts: u64, digests: impl IntoIterator<Item = [u8; 20]>) -> Result<()> {
    let token = writer_token(ts);
    let mut batch = Batch::default();
    for digest in digests {
        batch.push(Op::Put {
            space: Space::Dirty,
            key: digest.to_vec(),
            value: token.clone(),
        });
        if batch.bytes() >= 4 << 20 {
            store.write(&batch)?;
            batch.clear();
        }
    }
    store.write(&batch)
}

/// Removes the cells a range derived for `rows` at `ts`, so that deriving them again
/// from the store leaves no stale cell (a row that should not exist, a MIME type the
/// store's capture lacks).
fn unset_derived_rows(store: &Store, rows: &[Sha1Key], ts: u64) -> Result<()> {
    let columns = DerivedColumns::resolve(store)?;
    let schema = store.schema();
    let rocks = store.rocks("ingest-sst")?;
    let mut batch = WriteBatch::default();
    for row in rows {
        for column in [columns.dedupe, columns.cdx, columns.mime, columns.size] {
            let key = cell_key(row, schema.column(column).qualifier.as_bytes(), ts);
            batch.delete_cf(rocks.family_cf(column.family), key);
        }
    }
    rocks.db().write(batch)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{Capture, CaptureKind, Origin};
    use crate::ingest::CaptureSink;
    use crate::scaleout::extract::RecordSink;
    use crate::scaleout::ranges::RecordLines;
    use crate::scaleout::records::partition_key;
    use crate::scaleout::sst::RangeWriter;
    use crate::schema::Schema;
    use crate::store::materialize::materialize_dirty;
    use crate::store::rocks::total_order;
    use crate::store::writer::Writer;

    /// Captures of 30 digests, several per digest, revisits, filtered-out ones, and the
    /// cases a range cannot derive alone: one capture named with two digests (a CDX line
    /// and its WARC record disagreeing) and one by-digest key from two SURT spellings.
    fn captures() -> Vec<Capture> {
        let mut out = Vec::new();
        for i in 0..300u64 {
            let mut capture = Capture {
                surt: format!("org,example)/p{}", i % 71),
                ts: format!("2020{:02}01000000", 1 + i % 12),
                url: format!("http://example.org/p{}", i % 71),
                source: "x.cdx".into(),
                warc: Some(format!("ITEM/x-{}.warc.gz", i % 3)),
                offset: Some(i * 1000),
                c_size: Some(100 + i),
                status: Some(if i % 11 == 0 { 404 } else { 200 }),
                mime: (i % 5 != 0).then(|| "application/pdf".into()),
                size: (i % 4 == 0).then_some(i),
                digest: Some(Sha1Key([((i * 7919) % 30) as u8; 20])),
                passes: i % 11 != 0,
                ..Default::default()
            };
            if i % 13 == 0 {
                capture.kind = CaptureKind::Revisit;
                capture.passes = false;
            }
            out.push(capture);
        }
        let mut warc = out[5].clone();
        warc.origin = Origin::Warc;
        warc.digest = Some(Sha1Key([200; 20]));
        warc.size = Some(77);
        out.push(warc);
        let mut respelled = out[8].clone();
        respelled.surt = format!("{}/", out[8].surt);
        out.push(respelled);
        out
    }

    fn contents(store: &Store) -> Vec<(&'static str, Vec<u8>, Vec<u8>)> {
        let rocks = store.rocks("the test").unwrap();
        let mut all = Vec::new();
        for cf in ["f", "file", CF_CAPTURE, CF_BY_DIGEST, "dirty"] {
            for item in rocks.db().iterator_cf_opt(
                rocks.cf(cf),
                total_order(),
                rocksdb::IteratorMode::Start,
            ) {
                let (k, v) = item.unwrap();
                all.push((cf, k.to_vec(), v.to_vec()));
            }
        }
        all
    }

    /// Record lines of the captures, sorted, cut into `ranges` key ranges.
    fn ranges(dir: &Path, ranges: usize, derive: bool, ts: u64) -> Vec<Range> {
        let schema = Schema::embedded().unwrap();
        std::fs::create_dir_all(dir).unwrap();
        let mut out = Vec::new();
        let mut sink = RecordSink::new(&mut out);
        for capture in captures() {
            sink.add_capture(&capture.view());
        }
        sink.finish(InputPart::default()).unwrap();
        let mut lines: Vec<&[u8]> = out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty() && !l.starts_with(b"s\t"))
            .collect();
        lines.sort();
        let key = |l: &&[u8]| partition_key(l.split(|&b| b == b'\t').next().unwrap()).to_vec();
        let per = lines.len().div_ceil(ranges);
        let mut dirs = Vec::new();
        let mut start = 0;
        while start < lines.len() {
            let mut end = (start + per).min(lines.len());
            while end < lines.len() && key(&lines[end]) == key(&lines[end - 1]) {
                end += 1;
            }
            let out = dir.join(format!("r{}", dirs.len()));
            let text: Vec<u8> = lines[start..end].join(&b"\n"[..]);
            RangeWriter::create(&out, &schema, ts, derive)
                .unwrap()
                .write_all(&mut RecordLines::new(&text[..]))
                .unwrap();
            dirs.push(out);
            start = end;
        }
        load_ranges(&dirs).unwrap()
    }

    #[test]
    fn ranges_ingested_equal_the_write_path_with_and_without_derived_rows() {
        let dir = tempfile::tempdir().unwrap();
        let ts = 1_600_000_000_000;
        let normal = Store::open(&dir.path().join("normal")).unwrap();
        let mut writer = Writer::new(&normal, ts);
        for capture in captures() {
            writer.add_capture(&capture.view());
            writer.end_record().unwrap();
        }
        writer.finish().unwrap();
        materialize_dirty(&normal, ts).unwrap();
        let expected = contents(&normal);
        assert!(expected.iter().filter(|(cf, _, _)| *cf == "f").count() > 20);

        for (name, derive) in [("derived", true), ("from-store", false)] {
            let ranges = ranges(&dir.path().join(format!("{name}-ranges")), 4, derive, ts);
            assert!(ranges.len() >= 3);
            if derive {
                let recheck: usize = ranges.iter().map(|r| r.manifest.recheck.len()).sum();
                assert!(recheck >= 2, "the conflicting digests are rechecked");
            }
            let store = Store::open(&dir.path().join(name)).unwrap();
            let stats = ingest(&store, &Report::new("test"), ts, &ranges, &[]).unwrap();
            assert_eq!(stats.rows_derived_in_ranges, derive);
            assert_eq!(contents(&store), expected, "{name}");
        }
    }
}
