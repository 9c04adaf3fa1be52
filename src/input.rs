//! Opening inputs (files, gzip, stdin) and deciding which ones a run must apply.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result};
use flate2::bufread::MultiGzDecoder;
use xxhash_rust::xxh3::Xxh3;

use crate::cdx::lines::{LineReader, Overlong, lines};
use crate::report::{Location, Report, StrictStop};
use crate::store::Store;
use crate::store::registry::{ContentHash, InputRecord, content_hash};

const READ_BUFFER: usize = 1 << 20;

/// True for the gzip magic bytes.
pub fn is_gzip(prefix: &[u8]) -> bool {
    prefix.starts_with(&[0x1f, 0x8b])
}

/// Opens a line-oriented input: `-` is stdin; gzip is detected from the bytes, not the name.
pub fn open_lines(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    let raw = open_raw(path)?;
    let mut reader = BufReader::with_capacity(READ_BUFFER, raw);
    let head = reader
        .fill_buf()
        .with_context(|| format!("cannot read {}", path.display()))?;
    if is_gzip(head) {
        Ok(Box::new(BufReader::with_capacity(
            READ_BUFFER,
            MultiGzDecoder::new(reader),
        )))
    } else {
        Ok(Box::new(reader))
    }
}

/// An input of a run. Its content hash is computed when first asked for (right before the
/// input is read, so that a large file is read from the page cache the second time).
#[derive(Debug)]
pub struct PlannedInput {
    pub path: PathBuf,
    /// `None` for stdin.
    pub size: Option<u64>,
    content: OnceLock<ContentHash>,
}

impl PlannedInput {
    pub fn new(path: PathBuf) -> Result<PlannedInput> {
        let size = if path == Path::new("-") {
            None
        } else {
            Some(
                std::fs::metadata(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?
                    .len(),
            )
        };
        Ok(PlannedInput::with_size(path, size))
    }

    fn with_size(path: PathBuf, size: Option<u64>) -> PlannedInput {
        PlannedInput {
            path,
            size,
            content: OnceLock::new(),
        }
    }

    pub fn display(&self) -> String {
        self.path.display().to_string()
    }

    pub fn is_stdin(&self) -> bool {
        self.size.is_none()
    }

    /// The content hash; `None` for stdin, which cannot be recognized again.
    pub fn content(&self) -> Result<Option<ContentHash>> {
        if self.is_stdin() {
            return Ok(None);
        }
        if let Some(hash) = self.content.get() {
            return Ok(Some(*hash));
        }
        let hash = content_hash(&self.path)?;
        Ok(Some(*self.content.get_or_init(|| hash)))
    }

    /// Wraps the reader of this input's bytes so that reading them also hashes them
    /// (see [`HashingReader::finish`]).
    pub fn hashing<R: Read>(&self, inner: R) -> HashingReader<'_, R> {
        HashingReader {
            inner,
            input: self,
            hasher: Xxh3::new(),
        }
    }

    /// True when this input is to be skipped: not `force`d, and the store already ingested
    /// its content with `options`. A skipped input is announced on stderr with `reason`
    /// and counted in `inputs_skipped`.
    pub fn skip_if_done(
        &self,
        store: &Store,
        command: &str,
        options: &str,
        force: bool,
        report: &Report,
        reason: &str,
    ) -> Result<bool> {
        if force || self.done_before(store, command, options)?.is_none() {
            return Ok(false);
        }
        self.announce_skipped(report, reason);
        Ok(true)
    }

    /// Says on stderr why this input is skipped and counts it in `inputs_skipped`.
    pub fn announce_skipped(&self, report: &Report, reason: &str) {
        report.note(&format!("{}: {reason}", self.display()));
        report.count("inputs_skipped", 1);
    }

    /// The registry record when the store already ingested this content with `options`.
    pub fn done_before(
        &self,
        store: &Store,
        command: &str,
        options: &str,
    ) -> Result<Option<InputRecord>> {
        match self.content()? {
            Some(hash) => store.completed_input(command, &hash, options),
            None => Ok(None),
        }
    }
}

/// Reads an input while computing its content hash, so that a new input is read once: when
/// the end is reached (or [`HashingReader::finish`] is called), the hash becomes the input's
/// (for the registry) without a second pass. An input read only in part keeps no hash and
/// is hashed from the file when the registry needs it.
pub struct HashingReader<'i, R> {
    inner: R,
    input: &'i PlannedInput,
    hasher: Xxh3,
}

impl<R: Read> Read for HashingReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        if n == 0 && !buf.is_empty() {
            // The end: every byte went through the hasher.
            let _ = self.input.content.set(ContentHash(self.hasher.digest128()));
        }
        Ok(n)
    }
}

impl<R: Read> HashingReader<'_, R> {
    /// Reads what the consumer left unread (a reader may stop before the end of the file)
    /// and gives the input its content hash.
    pub fn finish(mut self) -> Result<()> {
        io::copy(&mut self, &mut io::sink())
            .with_context(|| format!("cannot read {}", self.input.display()))?;
        let hash = ContentHash(self.hasher.digest128());
        let _ = self.input.content.set(hash);
        Ok(())
    }
}

/// Expands directories (recursively, files whose name passes `accept`); see
/// [`expand_paths`] for what is left out and reported.
pub fn plan_inputs(
    paths: &[PathBuf],
    accept: impl Fn(&Path) -> bool,
    report: &Report,
) -> Result<Vec<PlannedInput>> {
    Ok(list_inputs(paths, accept, report)?
        .into_iter()
        .map(|(path, size)| PlannedInput::with_size(path, size))
        .collect())
}

/// The files named on a command line, directories replaced by the files under them
/// (recursively, in name order) whose name passes `accept`.
///
/// An entry that cannot be read is left out and reported as a problem (counted, so the
/// run ends with exit status 3), never opened and never allowed to stop the other files:
/// a FIFO, socket or device (opening one waits for a writer, or reads forever), a dangling
/// symbolic link, a directory reached through a symbolic link (not followed), a file or
/// directory that cannot be opened, and an empty file (which holds no record, and must
/// not be recorded as ingested). `-` (standard input) is kept as it is. The error
/// returned is `--strict` stopping the run at the first such problem.
pub fn expand_paths(
    paths: &[PathBuf],
    accept: impl Fn(&Path) -> bool,
    report: &Report,
) -> Result<Vec<PathBuf>> {
    Ok(list_inputs(paths, accept, report)?
        .into_iter()
        .map(|(path, _)| path)
        .collect())
}

/// Why an entry is not read: a stable reason for reports, and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub path: PathBuf,
    pub reason: &'static str,
    pub message: String,
}

impl Refused {
    fn new(path: &Path, reason: &'static str, message: impl Into<String>) -> Refused {
        Refused {
            path: path.to_path_buf(),
            reason,
            message: message.into(),
        }
    }

    pub fn report(&self, report: &Report) -> Result<(), StrictStop> {
        let at = Location::named(self.path.display().to_string());
        report.problem(at, self.reason, &self.message, None)
    }
}

/// The inputs to read with their sizes (`None` for stdin); refused entries are reported.
fn list_inputs(
    paths: &[PathBuf],
    accept: impl Fn(&Path) -> bool,
    report: &Report,
) -> Result<Vec<(PathBuf, Option<u64>)>> {
    let mut files = Vec::new();
    let mut refused = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            files.push((path.clone(), None));
        } else if path.is_dir() {
            collect_dir(path, &accept, &mut files, &mut refused);
        } else {
            match check_file(path) {
                Ok(size) => files.push((path.clone(), Some(size))),
                Err(r) => refused.push(r),
            }
        }
    }
    for r in &refused {
        r.report(report)?;
    }
    Ok(files)
}

fn collect_dir(
    dir: &Path,
    accept: &impl Fn(&Path) -> bool,
    out: &mut Vec<(PathBuf, Option<u64>)>,
    refused: &mut Vec<Refused>,
) {
    let listing = match std::fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(e) => {
            refused.push(Refused::new(
                dir,
                "unreadable_input",
                format!("cannot list the directory: {e}"),
            ));
            return;
        }
    };
    let mut entries = Vec::new();
    for entry in listing {
        match entry {
            Ok(entry) => entries.push(entry),
            Err(e) => refused.push(Refused::new(
                dir,
                "unreadable_input",
                format!("cannot read an entry of the directory: {e}"),
            )),
        }
    }
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => collect_dir(&path, accept, out, refused),
            Ok(_) if !accept(&path) => {}
            Ok(_) => match check_file(&path) {
                Ok(size) => out.push((path, Some(size))),
                Err(r) => refused.push(r),
            },
            Err(e) => refused.push(Refused::new(
                &path,
                "unreadable_input",
                format!("cannot read the directory entry: {e}"),
            )),
        }
    }
}

/// The size of a file that can be read as an input, or why it cannot.
fn check_file(path: &Path) -> Result<u64, Refused> {
    let unreadable = |message: String| Refused::new(path, "unreadable_input", message);
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) => {
            let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
            return Err(unreadable(if link {
                format!("symbolic link to nothing readable: {e}")
            } else {
                format!("cannot read: {e}")
            }));
        }
    };
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(Refused::new(
            path,
            "not_a_regular_file",
            format!(
                "{}: not read (only regular files and `-` for standard input are inputs)",
                describe_kind(kind)
            ),
        ));
    }
    // Opening finds a file the run may not read now rather than in the middle of it.
    open_file(path).map_err(|e| unreadable(format!("cannot open: {e}")))?;
    if meta.len() == 0 {
        return Err(Refused::new(
            path,
            "empty_input",
            "empty file (0 bytes): nothing to read, not recorded as ingested",
        ));
    }
    Ok(meta.len())
}

fn describe_kind(kind: std::fs::FileType) -> &'static str {
    if kind.is_fifo() {
        "a FIFO (named pipe), which would wait for a writer"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_dir() {
        "a directory reached through a symbolic link (links to directories are not followed)"
    } else {
        "not a regular file"
    }
}

/// Opens an input file for reading, refusing anything but a regular file: the type is
/// checked before opening (opening a FIFO waits there for a writer) and again on the open
/// file, so that an entry swapped in between is refused too, if only once opened.
pub fn open_file(path: &Path) -> io::Result<File> {
    let refuse = |kind| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not read", describe_kind(kind)),
        )
    };
    let kind = std::fs::metadata(path)?.file_type();
    if !kind.is_file() {
        return Err(refuse(kind));
    }
    let file = File::open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(refuse(kind));
    }
    Ok(file)
}

/// Records a finished input in the registry (no-op for stdin).
pub fn record_done(
    store: &Store,
    command: &str,
    options: &str,
    input: &PlannedInput,
    summary: serde_json::Value,
) -> Result<()> {
    let (Some(content), Some(size)) = (input.content()?, input.size) else {
        return Ok(());
    };
    store.record_input(
        &content,
        &InputRecord {
            command: command.to_string(),
            path: input.display(),
            size,
            content_hash: content.to_hex(),
            options: options.to_string(),
            completed_ms: crate::store::writer::now_millis(),
            summary,
        },
    )
}

/// A block of whole lines read from an input, for parallel parsing.
pub struct LineChunk {
    /// 1-based number of the first line in the chunk.
    pub first_line: u64,
    pub data: Vec<u8>,
}

impl LineChunk {
    /// (line number, line without its `\n` / `\r\n`).
    pub fn lines(&self) -> impl Iterator<Item = (u64, &[u8])> {
        lines(&self.data, self.first_line)
    }
}

/// Reads an input in chunks of about `chunk_bytes`, each ending at a line boundary, through
/// the one line reader ([`LineReader`]): lines longer than its cap are skipped and reported
/// with their byte offsets, the lines around them kept.
pub struct LineChunks<'r> {
    reader: LineReader<'r>,
    chunk_bytes: usize,
    /// Set by [`LineChunks::next_reported`] when the input ended empty or cut short.
    incomplete: bool,
}

impl<'r> LineChunks<'r> {
    /// Lines of plain (or already decompressed, see [`open_lines`]) input.
    pub fn new(reader: impl Read + Send + 'r, chunk_bytes: usize) -> Self {
        LineChunks {
            reader: LineReader::plain(reader),
            chunk_bytes,
            incomplete: false,
        }
    }

    /// Bytes read so far (uncompressed).
    pub fn bytes_read(&self) -> u64 {
        self.reader.bytes_consumed()
    }

    /// [`LineChunks::next_chunk`] for an input that is recorded as ingested when read
    /// whole: an input with no data and a read error are problems of `file` that end it,
    /// and [`LineChunks::complete`] then says not to record it (so that a run over the
    /// repaired file applies it). Lines skipped for their length are reported too (see
    /// [`LineChunks::report_overlong`]).
    pub fn next_reported(
        &mut self,
        report: &Report,
        file: &str,
    ) -> Result<Option<LineChunk>, StrictStop> {
        let next = self.next_chunk();
        self.report_overlong(report, file)?;
        match next {
            Ok(Some(chunk)) => Ok(Some(chunk)),
            Ok(None) if self.bytes_read() == 0 && !self.incomplete => {
                self.incomplete = true;
                report_empty(report, file)?;
                Ok(None)
            }
            Ok(None) => Ok(None),
            Err(e) => {
                self.incomplete = true;
                report_cut_short(report, file, self.last_line(), &e)?;
                Ok(None)
            }
        }
    }

    /// Reports the lines skipped for their length since the last call (`line_too_long`,
    /// at the line and its byte offset), counting each in `lines`.
    pub fn report_overlong(&mut self, report: &Report, file: &str) -> Result<(), StrictStop> {
        for skipped in self.reader.take_overlong() {
            report.count("lines", 1);
            report_overlong(report, file, &skipped, self.reader.max_line())?;
        }
        Ok(())
    }

    /// Whether the input was read to its end and held data (see [`LineChunks::next_reported`]).
    pub fn complete(&self) -> bool {
        !self.incomplete
    }

    /// The next chunk, `None` at the end of the input. A read error (a gzip file cut
    /// short, say) comes after the complete lines read before it, so that they can be
    /// kept; the incomplete line it interrupted is dropped, and [`LineChunks::last_line`]
    /// is then the last complete line. After an error the input ends. Lines skipped for
    /// their length are not in any chunk (see [`LineChunks::report_overlong`]).
    pub fn next_chunk(&mut self) -> io::Result<Option<LineChunk>> {
        let mut data = Vec::with_capacity(self.chunk_bytes + 4096);
        Ok(self
            .reader
            .next_chunk(self.chunk_bytes, &mut data)?
            .map(|first_line| LineChunk { first_line, data }))
    }

    /// The number of the last line given or skipped (0 before the first).
    pub fn last_line(&self) -> u64 {
        self.reader.last_line()
    }
}

/// Reports a line skipped for being longer than `max_line`: `line_too_long` at its line
/// and byte offset in `file`.
pub fn report_overlong(
    report: &Report,
    file: &str,
    skipped: &Overlong,
    max_line: usize,
) -> Result<(), StrictStop> {
    let at = Location {
        offset: Some(skipped.offset),
        ..Location::line(file, skipped.line)
    };
    report.problem(at, "line_too_long", &skipped.describe(max_line), None)
}

/// Reports an input that could not be read to its end (see `cut_short` of the line
/// reader) at its last complete line: `truncated_input` when the data ended early (a gzip
/// file cut short), `unreadable_input` for other read errors.
pub fn report_cut_short(
    report: &Report,
    file: &str,
    last_line: u64,
    error: &io::Error,
) -> Result<(), StrictStop> {
    let reason = if error.kind() == io::ErrorKind::UnexpectedEof {
        "truncated_input"
    } else {
        "unreadable_input"
    };
    let at = if last_line == 0 {
        Location::named(file)
    } else {
        Location::line(file, last_line)
    };
    report.problem(at, reason, &error.to_string(), None)
}

/// Reports an input that held no data at all (e.g. an empty standard input, or a gzip
/// file of nothing); empty files are refused before (see [`expand_paths`]).
pub fn report_empty(report: &Report, file: &str) -> Result<(), StrictStop> {
    report.problem(
        Location::named(file),
        "empty_input",
        "no data: nothing to read, not recorded as ingested",
        None,
    )
}

/// What a file holds, as its first bytes tell (through gzip): enough to name the
/// command a file given to the wrong one belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    Warc,
    /// A CDX or CDXJ index (a ` CDX` legend, or a first line `SURT TIMESTAMP …`).
    Cdx,
}

impl InputKind {
    /// Why a file of this kind is refused by a command for the other kind.
    pub fn refusal(self) -> &'static str {
        match self {
            InputKind::Warc => "this is a WARC file; use import-warc",
            InputKind::Cdx => "this is a CDX file; use backfill-cdx",
        }
    }
}

/// The kind of a file, or `None` when its first bytes say neither (or cannot be read:
/// the run's reader reports that properly). Standard input is never read ahead.
pub fn sniff_kind(path: &Path) -> Option<InputKind> {
    if path == Path::new("-") {
        return None;
    }
    // Small buffers: open_lines' 1 MiB ones would read and inflate up to 1 MiB of every
    // input to look at its first line.
    const HEAD: usize = 1024;
    let mut head = Vec::with_capacity(HEAD);
    let mut raw = BufReader::with_capacity(16 << 10, open_raw(path).ok()?);
    if is_gzip(raw.fill_buf().ok()?) {
        BufReader::with_capacity(HEAD, MultiGzDecoder::new(raw))
            .take(HEAD as u64)
            .read_to_end(&mut head)
            .ok()?;
    } else {
        raw.take(HEAD as u64).read_to_end(&mut head).ok()?;
    }
    if head.starts_with(b"WARC/") {
        return Some(InputKind::Warc);
    }
    if head.starts_with(b" CDX ") || head.starts_with(b"CDX ") {
        return Some(InputKind::Cdx);
    }
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let mut fields = line.split(|b| *b == b' ');
    let (key, ts) = (fields.next()?, fields.next()?);
    let is_time = (4..=14).contains(&ts.len()) && ts.iter().all(u8::is_ascii_digit);
    (is_time && !key.is_empty() && fields.next().is_some()).then_some(InputKind::Cdx)
}

/// Takes out of `inputs` the files of kind `wrong` (reported as problems, with the
/// command to use instead).
pub fn refuse_kind(
    inputs: &mut Vec<PlannedInput>,
    wrong: InputKind,
    report: &Report,
) -> Result<(), StrictStop> {
    let mut kept = Vec::with_capacity(inputs.len());
    for input in inputs.drain(..) {
        if sniff_kind(&input.path) == Some(wrong) {
            Refused::new(&input.path, "wrong_input_kind", wrong.refusal()).report(report)?;
        } else {
            kept.push(input);
        }
    }
    *inputs = kept;
    Ok(())
}

/// Reports each directory among `paths` under which no input was found (`what`: "WARC
/// files (*.warc, *.warc.gz)"), so that a mistyped directory is not a silent success.
pub fn report_empty_directories(
    paths: &[PathBuf],
    inputs: &[PlannedInput],
    what: &str,
    report: &Report,
) -> Result<(), StrictStop> {
    for dir in paths.iter().filter(|p| p.as_os_str() != "-" && p.is_dir()) {
        if !inputs.iter().any(|i| i.path.starts_with(dir)) {
            Refused::new(
                dir,
                "no_inputs",
                format!("no {what} found in this directory"),
            )
            .report(report)?;
        }
    }
    Ok(())
}

/// Opens an input for reading as it is (no decompression): `-` is stdin.
pub fn open_raw(path: &Path) -> Result<Box<dyn Read + Send>> {
    if path == Path::new("-") {
        return Ok(Box::new(io::stdin()));
    }
    Ok(Box::new(open_file(path).with_context(|| {
        format!("cannot open {}", path.display())
    })?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_told_by_their_first_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/crawl");
        for (name, kind) in [
            ("crawl1.warc.gz", Some(InputKind::Warc)),
            ("crawl1-plain.warc", Some(InputKind::Warc)),
            ("crawl1.cdx", Some(InputKind::Cdx)),
            ("README.md", None),
        ] {
            assert_eq!(sniff_kind(&root.join(name)), kind, "{name}");
        }
        let cdxj = dir.path().join("index.cdxj");
        std::fs::write(
            &cdxj,
            "com,example)/ 20200101000000 {\"url\": \"http://example.com/\"}\n",
        )
        .unwrap();
        assert_eq!(sniff_kind(&cdxj), Some(InputKind::Cdx));
        assert_eq!(sniff_kind(Path::new("-")), None);
    }

    #[test]
    fn chunks_keep_line_numbers() {
        let text = b"a\nbb\r\n\nccc";
        let mut chunks = LineChunks::new(&text[..], 3);
        let mut seen = Vec::new();
        while let Some(chunk) = chunks.next_chunk().unwrap() {
            for (n, line) in chunk.lines() {
                seen.push((n, String::from_utf8(line.to_vec()).unwrap()));
            }
        }
        assert_eq!(
            seen,
            vec![
                (1, "a".into()),
                (2, "bb".into()),
                (3, "".into()),
                (4, "ccc".into())
            ]
        );
        assert_eq!(chunks.bytes_read(), text.len() as u64);
    }

    #[test]
    fn hashing_while_reading_gives_the_content_hash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("input");
        let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let input = PlannedInput::new(path.clone()).unwrap();
        let mut reader = input.hashing(File::open(&path).unwrap());
        // The consumer stops early; finish reads the rest.
        let mut head = vec![0u8; 1000];
        reader.read_exact(&mut head).unwrap();
        reader.finish().unwrap();
        assert_eq!(input.content().unwrap(), Some(content_hash(&path).unwrap()));

        // A consumer that reads to the end needs no finish.
        let input = PlannedInput::new(path.clone()).unwrap();
        let mut all = Vec::new();
        let mut reader = input.hashing(File::open(&path).unwrap());
        reader.read_to_end(&mut all).unwrap();
        drop(reader);
        assert_eq!(
            input.content.get().copied(),
            Some(content_hash(&path).unwrap())
        );
    }

    #[test]
    fn opens_gzip_by_content() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lines.txt");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"one\ntwo\n").unwrap();
        std::fs::write(&path, gz.finish().unwrap()).unwrap();
        let mut text = String::new();
        open_lines(&path)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "one\ntwo\n");
    }
    fn problems(report: &Report) -> Vec<(String, String)> {
        report
            .problem_examples()
            .into_iter()
            .map(|p| (p.location.file, p.reason))
            .collect()
    }

    #[test]
    fn listing_leaves_out_and_reports_what_cannot_be_an_input() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.cdx"), b"x\n").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/b.cdx"), b"y\n").unwrap();
        std::fs::write(root.join("empty.cdx"), b"").unwrap();
        std::fs::write(root.join("ignored.txt"), b"").unwrap();
        let fifo = root.join("fifo.cdx");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let _socket = std::os::unix::net::UnixListener::bind(root.join("socket.cdx")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("dangling.cdx")).unwrap();
        std::os::unix::fs::symlink(root.join("loop2.cdx"), root.join("loop1.cdx")).unwrap();
        std::os::unix::fs::symlink(root.join("loop1.cdx"), root.join("loop2.cdx")).unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("linked.cdx")).unwrap();

        let report = Report::new("test");
        let accept = |p: &Path| p.extension().is_some_and(|e| e == "cdx");
        let named = [root.to_path_buf(), PathBuf::from("-"), fifo.clone()];
        let inputs = plan_inputs(&named, accept, &report).unwrap();
        let listed: Vec<(PathBuf, Option<u64>)> =
            inputs.iter().map(|i| (i.path.clone(), i.size)).collect();
        assert_eq!(
            listed,
            vec![
                (root.join("a.cdx"), Some(2)),
                (root.join("sub/b.cdx"), Some(2)),
                (PathBuf::from("-"), None),
            ]
        );
        let at = |name: &str| root.join(name).display().to_string();
        let mut got = problems(&report);
        got.sort();
        let mut want = vec![
            (at("dangling.cdx"), "unreadable_input".to_string()),
            (at("empty.cdx"), "empty_input".to_string()),
            (at("fifo.cdx"), "not_a_regular_file".to_string()),
            (at("fifo.cdx"), "not_a_regular_file".to_string()),
            (at("linked.cdx"), "not_a_regular_file".to_string()),
            (at("loop1.cdx"), "unreadable_input".to_string()),
            (at("loop2.cdx"), "unreadable_input".to_string()),
            (at("socket.cdx"), "not_a_regular_file".to_string()),
        ];
        want.sort();
        assert_eq!(got, want);
        assert_eq!(report.problems().total(), 8);

        // Named, a missing file is refused the same way; --strict stops at it.
        let strict = Report::new("test").strict(true);
        let missing = [root.join("missing.cdx"), root.join("a.cdx")];
        assert!(expand_paths(&missing, accept, &strict).is_err());
        let lenient = Report::new("test");
        let found = expand_paths(&missing, accept, &lenient).unwrap();
        assert_eq!(found, vec![root.join("a.cdx")]);
        assert_eq!(lenient.problems().get("unreadable_input"), 1);

        // Opening refuses what is not a regular file, without waiting on a FIFO.
        let e = open_file(&fifo).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
    }

    #[test]
    fn a_read_error_comes_after_the_complete_lines_before_it() {
        use std::io::Write;
        let text: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text.as_bytes()).unwrap();
        let whole = gz.finish().unwrap();
        let cut = &whole[..whole.len() * 2 / 3];
        let reader = BufReader::new(MultiGzDecoder::new(cut));
        let mut chunks = LineChunks::new(reader, 1000);
        let mut seen = Vec::new();
        let error = loop {
            match chunks.next_chunk() {
                Ok(Some(chunk)) => {
                    for (n, line) in chunk.lines() {
                        assert_eq!(line, format!("line {n}").as_bytes());
                        seen.push(n);
                    }
                }
                Ok(None) => panic!("a cut gzip stream must end in an error"),
                Err(e) => break e,
            }
        };
        assert!(seen.len() > 1000, "{} lines before the cut", seen.len());
        assert_eq!(seen, (1..=seen.len() as u64).collect::<Vec<_>>());
        assert_eq!(chunks.last_line(), seen.len() as u64);
        assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);
        let message = error.to_string();
        assert!(
            message.contains(&format!("cannot read past line {}", seen.len())),
            "{message}"
        );
        assert!(
            chunks.next_chunk().unwrap().is_none(),
            "the input ends there"
        );
    }
}
