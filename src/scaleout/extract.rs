//! Extracting one input (or one part of a CDX input) into record lines: the map side of
//! a distributed ingest. The parsers are the ones `import-warc` and `backfill-cdx` use
//! ([`WarcImporter`], [`parse_chunk`]); only where their captures go differs.

use std::io::{Read, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::capture::CaptureRef;
use crate::filter::FileFilter;
use crate::ingest::CaptureSink;
use crate::ingest::cdx::{CdxChunks, parse_chunk};
use crate::ingest::warc::{WarcImporter, WarcInfo};
use crate::input::PlannedInput;
use crate::report::{Counts, Report};
use crate::scaleout::records::{
    InputPart, KeySample, LineCoverage, RecordCounts, partition_key, push_capture_line,
    push_index_line,
};
use crate::store::keys::{IndexEntry, by_digest_key, capture_key};
use crate::store::registry::ContentHash;

/// Sampled partition keys per key space and input part.
const SAMPLE_KEYS: usize = 64;

/// Prints the records of captures as they come ([`CaptureSink`] for the parsers).
pub struct RecordSink<W: Write> {
    out: W,
    line: Vec<u8>,
    key: Vec<u8>,
    digest_key: Vec<u8>,
    entry: Vec<u8>,
    value: Vec<u8>,
    records: RecordCounts,
    captures_sample: KeySample,
    index_sample: KeySample,
    warcinfo: Vec<WarcInfo>,
    /// The first write error; `add_capture` cannot return it.
    error: Option<std::io::Error>,
}

impl<W: Write> RecordSink<W> {
    pub fn new(out: W) -> Self {
        RecordSink {
            out,
            line: Vec::with_capacity(4096),
            key: Vec::new(),
            digest_key: Vec::new(),
            entry: Vec::new(),
            value: Vec::new(),
            records: RecordCounts::default(),
            captures_sample: KeySample::new(SAMPLE_KEYS),
            index_sample: KeySample::new(SAMPLE_KEYS),
            warcinfo: Vec::new(),
            error: None,
        }
    }

    fn write_line(&mut self) {
        if self.error.is_none()
            && let Err(e) = self.out.write_all(&self.line)
        {
            self.error = Some(e);
        }
    }

    /// Prints the summary line of `part` (with what this sink printed) and flushes.
    pub fn finish(mut self, mut part: InputPart) -> Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e).context("cannot write records");
        }
        part.records = self.records;
        part.warcinfo = std::mem::take(&mut self.warcinfo);
        part.sample = self.captures_sample.entries();
        part.sample.extend(self.index_sample.entries());
        self.out.write_all(&part.to_line()?)?;
        self.out.flush().context("cannot write records")?;
        Ok(())
    }
}

impl<W: Write> CaptureSink for RecordSink<W> {
    fn add_capture(&mut self, capture: &CaptureRef<'_>) {
        self.value.clear();
        capture.encode(&mut self.value);
        capture_key(capture, &mut self.key);
        self.line.clear();
        push_capture_line(&self.key, &self.value, &mut self.line);
        self.captures_sample
            .offer(partition_key(key_field(&self.line)));
        self.records.captures += 1;
        self.write_line();
        if let Some(digest) = capture.digest {
            by_digest_key(&digest, capture, &mut self.digest_key);
            self.entry.clear();
            IndexEntry::encode(IndexEntry::flags_of(capture), &self.key, &mut self.entry);
            self.line.clear();
            push_index_line(&self.digest_key, &self.entry, &self.value, &mut self.line);
            self.index_sample
                .offer(partition_key(key_field(&self.line)));
            self.records.index_entries += 1;
            self.write_line();
        }
    }

    fn end_record(&mut self) -> Result<()> {
        match self.error.take() {
            Some(e) => Err(e).context("cannot write records"),
            None => Ok(()),
        }
    }

    fn warcinfo(&mut self, info: WarcInfo) -> Result<()> {
        self.warcinfo.push(info);
        Ok(())
    }
}

/// The key field of a record line.
fn key_field(line: &[u8]) -> &[u8] {
    let end = memchr::memchr(b'\t', line).unwrap_or(line.len());
    &line[..end]
}

/// What to extract and how.
pub struct Extraction<'a> {
    pub command: &'static str,
    pub filter: &'a FileFilter,
    pub report: &'a Report,
    /// The input: a file, or `-` for standard input.
    pub input: &'a Path,
    /// The name of the input read from standard input.
    pub name: Option<String>,
    /// Which part of a CDX input (by chunks of lines), of how many.
    pub part: u32,
    pub parts: u32,
    /// Inputs completed before (`sediment ingest-sst --plan`): one of them is skipped.
    pub completed: &'a [Completed],
}

/// An input the store completed, as `ingest-sst --plan` lists it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Completed {
    pub command: String,
    pub options: String,
    pub size: u64,
    pub content_hash: String,
}

impl Extraction<'_> {
    fn planned(&self) -> Result<PlannedInput> {
        PlannedInput::new(self.input.to_path_buf())
    }

    /// The name captures and the registry give the input: as given, or for standard
    /// input the name the caller gave it (the command makes sure there is one).
    fn path_as_given(&self, input: &PlannedInput) -> Result<String> {
        match (&self.name, input.is_stdin()) {
            (Some(name), true) => Ok(name.clone()),
            (None, true) => bail!("an input read from standard input needs a name"),
            (_, false) => Ok(input.display()),
        }
    }

    /// The summary of this part before anything is read.
    fn part(&self, path: String, options: String) -> InputPart {
        InputPart {
            command: self.command.to_string(),
            path,
            options,
            part: self.part,
            parts: self.parts,
            ..Default::default()
        }
    }

    /// True when the store completed this input with the same options: like
    /// `IngestRun::should_apply`, only an input whose size equals a completed one's is
    /// hashed first.
    fn done_before(&self, input: &PlannedInput, options: &str) -> Result<bool> {
        let Some(size) = input.size else {
            return Ok(false);
        };
        let candidates: Vec<&Completed> = self
            .completed
            .iter()
            .filter(|c| c.command == self.command && c.options == options && c.size == size)
            .collect();
        if candidates.is_empty() {
            return Ok(false);
        }
        let Some(hash) = input.content()? else {
            return Ok(false);
        };
        Ok(candidates.iter().any(|c| c.content_hash == hash.to_hex()))
    }

    /// Prints the records of a WARC input and its summary.
    pub fn warc(&self, out: impl Write) -> Result<()> {
        if self.parts != 1 {
            bail!("a WARC input is read whole: --part is for CDX inputs");
        }
        let input = self.planned()?;
        let path = self.path_as_given(&input)?;
        let options = self.filter.describe();
        let mut part = self.part(path.clone(), options.clone());
        let mut sink = RecordSink::new(out);
        if self.skip(&input, &options, &mut part)? {
            return sink.finish(part);
        }
        let location = match input.is_stdin() {
            true => location_of_name(&path),
            false => canonical(&input.path),
        };
        let importer = WarcImporter {
            report: self.report,
            filter: self.filter,
            path,
            location,
        };
        let mut reader = CountingHasher::new(crate::input::open_raw(&input.path)?);
        let counts = importer.import(&mut reader, &mut sink)?;
        reader.finish()?;
        self.fill_identity(&mut part, &reader);
        self.fill_counts(&mut part, &counts);
        sink.finish(part)
    }

    /// Prints the records of one part of a CDX input and its summary. Every part reads the
    /// whole input in the chunks `backfill-cdx` cuts (so line numbers, the dialect and the
    /// content hash are those of the whole file) and parses the chunks `i` with
    /// `i % parts == part`.
    pub fn cdx(&self, out: impl Write) -> Result<()> {
        if self.parts == 0 || self.part >= self.parts {
            bail!(
                "--part {}/{}: the part must be below the count",
                self.part,
                self.parts
            );
        }
        let input = self.planned()?;
        let path = self.path_as_given(&input)?;
        let options = self.filter.describe();
        let mut part = self.part(path.clone(), options.clone());
        let mut sink = RecordSink::new(out);
        if self.skip(&input, &options, &mut part)? {
            return sink.finish(part);
        }
        let mut reader = CountingHasher::new(crate::input::open_raw(&input.path)?);
        let mut counts = Counts::default();
        let mut coverage = LineCoverage::default();
        {
            let mut chunks = CdxChunks::new(&mut reader, path)
                .with_context(|| format!("cannot read {}", input.display()))?;
            let mut index: u64 = 0;
            while let Some(chunk) = chunks
                .next_chunk()
                .with_context(|| format!("cannot read {}", input.display()))?
            {
                let lines = line_count(&chunk.data);
                coverage.total = chunk.first_line + lines - 1;
                if index % u64::from(self.parts) == u64::from(self.part) && lines > 0 {
                    coverage.ranges.push((chunk.first_line, coverage.total));
                    parse_chunk(&chunk, self.filter, self.report, &mut counts, |capture| {
                        sink.add_capture(capture);
                        sink.end_record()
                    })?;
                }
                index += 1;
            }
        }
        reader.finish()?;
        self.fill_identity(&mut part, &reader);
        self.fill_counts(&mut part, &counts);
        part.lines = Some(coverage);
        sink.finish(part)
    }

    /// Marks `part` skipped (and says so) when the store completed the input before.
    fn skip(&self, input: &PlannedInput, options: &str, part: &mut InputPart) -> Result<bool> {
        if !self.done_before(input, options)? {
            return Ok(false);
        }
        input.announce_skipped(
            self.report,
            "already ingested with the same options, skipped (use --force to apply again)",
        );
        part.skipped = true;
        part.size = input.size.unwrap_or(0);
        part.content_hash = input
            .content()?
            .map(ContentHash::to_hex)
            .unwrap_or_default();
        Ok(true)
    }

    fn fill_identity<R>(&self, part: &mut InputPart, reader: &CountingHasher<R>) {
        part.size = reader.bytes;
        part.content_hash = ContentHash(reader.hasher.digest128()).to_hex();
    }

    fn fill_counts(&self, part: &mut InputPart, counts: &Counts) {
        part.counts = counts.0.clone();
        part.problems = self.report.problems().0;
        self.report.add_counts(counts);
    }
}

/// Lines in a chunk of whole lines (the last may lack its line break).
fn line_count(data: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', data).count() as u64 + u64::from(!data.ends_with(b"\n"))
}

/// Reads an input while hashing it (the registry's content hash) and counting its bytes,
/// standard input included: a distributed ingest streams inputs it cannot open by path.
struct CountingHasher<R> {
    inner: R,
    hasher: xxhash_rust::xxh3::Xxh3,
    bytes: u64,
}

impl<R: Read> CountingHasher<R> {
    fn new(inner: R) -> Self {
        CountingHasher {
            inner,
            hasher: xxhash_rust::xxh3::Xxh3::new(),
            bytes: 0,
        }
    }

    /// Reads what the parser left unread, so the hash covers the whole input.
    fn finish(&mut self) -> Result<()> {
        std::io::copy(self, &mut std::io::sink()).context("cannot read the input to its end")?;
        Ok(())
    }
}

impl<R: Read> Read for CountingHasher<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}

/// The canonical absolute path of an input file (as `import-warc` records it).
fn canonical(path: &Path) -> Option<String> {
    std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.to_str().map(str::to_string))
}

/// Where an input read from standard input is: a URL as it is (`hdfs://…`, `s3a://…`), a
/// file name made absolute (as `import-warc -` records it).
fn location_of_name(name: &str) -> Option<String> {
    if name.contains("://") {
        return Some(name.to_string());
    }
    std::path::absolute(name)
        .ok()
        .and_then(|p| p.to_str().map(str::to_string))
}
