//! Opening inputs (files, gzip, stdin) and deciding which ones a run must apply.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result};
use flate2::bufread::MultiGzDecoder;
use xxhash_rust::xxh3::Xxh3;

use crate::report::Report;
use crate::store::Store;
use crate::store::registry::{ContentHash, InputRecord, content_hash};

const READ_BUFFER: usize = 1 << 20;

/// True for the gzip magic bytes.
pub fn is_gzip(prefix: &[u8]) -> bool {
    prefix.starts_with(&[0x1f, 0x8b])
}

/// Opens a line-oriented input: `-` is stdin; gzip is detected from the bytes, not the name.
pub fn open_lines(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    let raw: Box<dyn Read + Send> = if path == Path::new("-") {
        Box::new(io::stdin())
    } else {
        Box::new(File::open(path).with_context(|| format!("cannot open {}", path.display()))?)
    };
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
        Ok(PlannedInput {
            path,
            size,
            content: OnceLock::new(),
        })
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

/// Expands directories (recursively, files whose name passes `accept`).
pub fn plan_inputs(paths: &[PathBuf], accept: impl Fn(&Path) -> bool) -> Result<Vec<PlannedInput>> {
    expand_paths(paths, accept)?
        .into_iter()
        .map(PlannedInput::new)
        .collect()
}

/// The files named on a command line, directories replaced by the files under them
/// (recursively, in name order) whose name passes `accept`.
pub fn expand_paths(paths: &[PathBuf], accept: impl Fn(&Path) -> bool) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            collect_dir(path, &accept, &mut files)
                .with_context(|| format!("cannot list {}", path.display()))?;
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

fn collect_dir(
    dir: &Path,
    accept: &impl Fn(&Path) -> bool,
    out: &mut Vec<PathBuf>,
) -> io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            collect_dir(&path, accept, out)?;
        } else if accept(&path) {
            out.push(path);
        }
    }
    Ok(())
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
        let data = self.data.as_slice();
        let body = data.strip_suffix(b"\n").unwrap_or(data);
        let mut n = self.first_line;
        (!data.is_empty())
            .then(|| body.split(|&b| b == b'\n'))
            .into_iter()
            .flatten()
            .map(move |line| {
                let number = n;
                n += 1;
                (number, line.strip_suffix(b"\r").unwrap_or(line))
            })
    }
}

/// Reads an input in chunks of about `chunk_bytes`, each ending at a line boundary.
pub struct LineChunks<R> {
    reader: R,
    chunk_bytes: usize,
    next_line: u64,
    /// Bytes read so far (uncompressed), for progress.
    pub bytes_read: u64,
}

impl<R: BufRead> LineChunks<R> {
    pub fn new(reader: R, chunk_bytes: usize) -> Self {
        LineChunks {
            reader,
            chunk_bytes,
            next_line: 1,
            bytes_read: 0,
        }
    }

    /// The next chunk, `None` at the end of the input.
    pub fn next_chunk(&mut self) -> io::Result<Option<LineChunk>> {
        let mut data = Vec::with_capacity(self.chunk_bytes + 4096);
        while data.len() < self.chunk_bytes {
            let n = self.reader.read_until(b'\n', &mut data)?;
            if n == 0 {
                break;
            }
        }
        if data.is_empty() {
            return Ok(None);
        }
        self.bytes_read += data.len() as u64;
        let lines =
            memchr::memchr_iter(b'\n', &data).count() as u64 + u64::from(!data.ends_with(b"\n"));
        let chunk = LineChunk {
            first_line: self.next_line,
            data,
        };
        self.next_line += lines;
        Ok(Some(chunk))
    }
}

/// Opens an input for reading as it is (no decompression): `-` is stdin.
pub fn open_raw(path: &Path) -> Result<Box<dyn Read + Send>> {
    if path == Path::new("-") {
        return Ok(Box::new(io::stdin()));
    }
    Ok(Box::new(File::open(path).with_context(|| {
        format!("cannot open {}", path.display())
    })?))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(chunks.bytes_read, text.len() as u64);
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
}
