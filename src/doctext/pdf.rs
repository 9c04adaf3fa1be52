//! PDF text with a PDF library (`pdf-extract`, on `lopdf`) in a child process.
//!
//! A PDF parser can loop on a cyclic page tree, overflow its stack on deep nesting,
//! allocate without bound on a decompression bomb, or panic on a broken cross-reference
//! table; none of that may stop or bloat the summarizer. So the PDF goes to a child (the
//! `sediment` program itself, by a hidden first argument) that runs under limits of CPU
//! time and address space set before it starts, is killed when it outlives a wall-clock
//! limit, and whose output is read up to a cap. Whatever goes wrong is a [`Problem`] of
//! that payload; the summarizer goes on with the next.
//!
//! The child is the running program (`std::env::current_exe`) when that is `sediment`, or
//! the program `SEDIMENT_PDF_TEXT_HELPER` names (for embedders: a library user's program
//! is not `sediment`). Without either, PDFs are summarized without text, counted as
//! `pdf_text_no_helper`.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use super::Problem;

/// The hidden first argument that makes `sediment` the PDF text child.
pub const HELPER_COMMAND: &str = "__pdf-text";
/// The program to run as the child instead of the running one.
pub const HELPER_ENV: &str = "SEDIMENT_PDF_TEXT_HELPER";
/// What the child writes before its answer (a library writing to stdout cannot be taken
/// for the text).
const MAGIC: &[u8] = b"\n\x00sediment-pdf-text\x00";

/// The bounds of one PDF's extraction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PdfLimits {
    /// CPU seconds of the child (RLIMIT_CPU): a loop ends here.
    pub cpu_seconds: u64,
    /// Wall-clock time before the child is killed (a child that sleeps or waits).
    pub wall: Duration,
    /// Address space of the child (RLIMIT_AS): a decompression bomb ends here.
    pub memory_bytes: u64,
}

impl Default for PdfLimits {
    fn default() -> Self {
        // The slowest real PDF measured (the 3.3 MB wx manual of Erlang/OTP) takes about
        // 2 s; 20 s of CPU leave room for a slower machine without letting a loop run on.
        PdfLimits {
            cpu_seconds: 20,
            wall: Duration::from_secs(40),
            memory_bytes: 1 << 30,
        }
    }
}

/// The PDF text child: which program, with which limits.
#[derive(Clone, Debug)]
pub struct PdfReader {
    program: Option<PathBuf>,
    limits: PdfLimits,
}

/// What the child found.
#[derive(Debug, Default)]
pub struct PdfText {
    /// The document information dictionary's `/Title`.
    pub title: Option<String>,
    pub text: String,
}

impl PdfReader {
    pub fn new(limits: PdfLimits) -> PdfReader {
        PdfReader {
            program: helper_program(),
            limits,
        }
    }

    /// The text of `pdf`, at most `max_bytes` of it.
    pub fn read(&self, pdf: &[u8], max_bytes: usize) -> Result<PdfText, Problem> {
        let problem = |reason, message: String| Problem { reason, message };
        let Some(program) = &self.program else {
            return Err(problem(
                "pdf_text_no_helper",
                format!(
                    "this program is not `sediment` and {HELPER_ENV} is not set: PDF text \
                     is extracted only in a child process"
                ),
            ));
        };
        let mut command = Command::new(program);
        command
            .arg(HELPER_COMMAND)
            .arg(max_bytes.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let limits = self.limits;
        // SAFETY: between fork and exec only setrlimit, which is async-signal-safe.
        unsafe {
            use std::os::unix::process::CommandExt;
            command.pre_exec(move || {
                let set = |resource, value: u64| {
                    let limit = libc::rlimit {
                        rlim_cur: value as libc::rlim_t,
                        rlim_max: value as libc::rlim_t,
                    };
                    if libc::setrlimit(resource, &limit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                };
                set(libc::RLIMIT_CPU, limits.cpu_seconds)?;
                set(libc::RLIMIT_AS, limits.memory_bytes)?;
                set(libc::RLIMIT_CORE, 0)?;
                Ok(())
            });
        }
        let mut child = command.spawn().map_err(|e| {
            problem(
                "pdf_text_no_helper",
                format!("cannot start {}: {e}", program.display()),
            )
        })?;
        let mut stdin = child.stdin.take();
        let mut stdout = child.stdout.take();
        let mut stderr = child.stderr.take();
        let started = Instant::now();
        let out_cap = (max_bytes as u64).saturating_add(64 << 10);
        let (status, out, err) = std::thread::scope(|scope| {
            scope.spawn(move || {
                // The child may stop reading (it died): the error says nothing more.
                if let Some(mut stdin) = stdin.take() {
                    let _ = stdin.write_all(pdf);
                }
            });
            let out = scope.spawn(move || {
                let mut out = Vec::new();
                if let Some(stdout) = stdout.take() {
                    let _ = stdout.take(out_cap).read_to_end(&mut out);
                }
                out
            });
            let err = scope.spawn(move || {
                let mut err = Vec::new();
                if let Some(stderr) = stderr.take() {
                    let _ = stderr.take(4096).read_to_end(&mut err);
                }
                err
            });
            let mut pause = Duration::from_millis(1);
            let status = loop {
                match child.try_wait() {
                    Ok(Some(status)) => break Ok(status),
                    Ok(None) if started.elapsed() >= limits.wall => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break Err(());
                    }
                    Ok(None) => {}
                    Err(_) => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break Err(());
                    }
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            };
            // A child killed with its output pipe full: its readers end with the pipes.
            (
                status,
                out.join().unwrap_or_default(),
                err.join().unwrap_or_default(),
            )
        });
        let stderr_text = String::from_utf8_lossy(&err).trim().to_string();
        let Ok(status) = status else {
            return Err(problem(
                "pdf_text_timeout",
                format!(
                    "still running after {} s: killed",
                    limits.wall.as_secs_f64()
                ),
            ));
        };
        if !status.success() {
            use std::os::unix::process::ExitStatusExt;
            let (reason, what) = match (status.signal(), status.code()) {
                // SIGXCPU at the limit, SIGKILL if the child went on past it.
                (Some(libc::SIGXCPU | libc::SIGKILL), _) => (
                    "pdf_text_cpu_limit",
                    format!("stopped at the limit of {} CPU seconds", limits.cpu_seconds),
                ),
                (Some(_), _) if stderr_text.contains("memory allocation") => (
                    "pdf_text_memory_limit",
                    format!(
                        "stopped at the limit of {} MiB of memory",
                        limits.memory_bytes >> 20
                    ),
                ),
                (Some(_), _) if stderr_text.contains("overflowed its stack") => (
                    "pdf_text_crashed",
                    "the PDF nests too deeply: the parser overflowed its stack".to_string(),
                ),
                (Some(signal), _) => ("pdf_text_crashed", format!("killed by signal {signal}")),
                (None, Some(4)) => ("pdf_text_crashed", "the PDF library panicked".to_string()),
                (None, _) => ("pdf_text_failed", "the PDF library refused it".to_string()),
            };
            let detail = stderr_text.lines().next().unwrap_or("").trim();
            let message = if detail.is_empty() {
                what
            } else {
                format!("{what} ({})", cut(detail, 300))
            };
            return Err(problem(reason, message));
        }
        let Some(at) = memchr::memmem::rfind(&out, MAGIC) else {
            return Err(problem(
                "pdf_text_failed",
                "the PDF text child gave no answer".to_string(),
            ));
        };
        let answer = &out[at + MAGIC.len()..];
        let (title, text) = match memchr::memchr(0, answer) {
            Some(nul) => (&answer[..nul], &answer[nul + 1..]),
            None => (&[][..], answer),
        };
        let text = String::from_utf8_lossy(&text[..text.len().min(max_bytes)]).into_owned();
        let title = String::from_utf8_lossy(title).trim().to_string();
        Ok(PdfText {
            title: (!title.is_empty()).then_some(title),
            text,
        })
    }
}

fn cut(text: &str, max: usize) -> &str {
    crate::text::cut_at_char(text, max)
}

/// The program to run as the child, if there is one.
fn helper_program() -> Option<PathBuf> {
    if let Some(program) = std::env::var_os(HELPER_ENV).filter(|p| !p.is_empty()) {
        return Some(program.into());
    }
    let exe = std::env::current_exe().ok()?;
    let name = exe.file_stem()?.to_str()?;
    (name == "sediment").then_some(exe)
}

/// The child: reads a PDF on standard input, writes its title and text (at most the
/// number of bytes its argument says) after [`MAGIC`] on standard output. Exit code 3:
/// the library refused the PDF; 4: it panicked.
pub fn helper_main(args: &[String]) -> ExitCode {
    let max_bytes: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1 << 20);
    let mut pdf = Vec::new();
    if std::io::stdin().lock().read_to_end(&mut pdf).is_err() {
        return ExitCode::from(2);
    }
    std::panic::set_hook(Box::new(|info| {
        eprintln!("panic: {info}");
    }));
    match std::panic::catch_unwind(|| extract_here(&pdf)) {
        Ok(Ok(found)) => {
            let mut out = std::io::stdout().lock();
            let text = cut(&found.text, max_bytes);
            let written = out
                .write_all(MAGIC)
                .and_then(|()| out.write_all(found.title.unwrap_or_default().as_bytes()))
                .and_then(|()| out.write_all(b"\0"))
                .and_then(|()| out.write_all(text.as_bytes()))
                .and_then(|()| out.flush());
            if written.is_err() {
                return ExitCode::from(2);
            }
            ExitCode::SUCCESS
        }
        Ok(Err(message)) => {
            eprintln!("{message}");
            ExitCode::from(3)
        }
        Err(_) => ExitCode::from(4),
    }
}

/// Extracts in this process: only ever called in the child.
fn extract_here(pdf: &[u8]) -> Result<PdfText, String> {
    let mut doc = pdf_extract::Document::load_mem(pdf).map_err(|e| format!("cannot parse: {e}"))?;
    if doc.is_encrypted() {
        doc.decrypt("")
            .map_err(|e| format!("encrypted with a password: {e}"))?;
    }
    let title = info_title(&doc);
    let mut text = String::new();
    {
        let mut output = pdf_extract::PlainTextOutput::new(&mut text);
        pdf_extract::output_doc(&doc, &mut output).map_err(|e| format!("{e}"))?;
    }
    Ok(PdfText { title, text })
}

/// The `/Title` of the document information dictionary (a PDF text string: UTF-16BE with
/// a byte-order mark, or PDFDocEncoding, read as Latin-1).
fn info_title(doc: &pdf_extract::Document) -> Option<String> {
    use pdf_extract::Object;
    let info = match doc.trailer.get(b"Info").ok()? {
        Object::Reference(id) => doc.get_dictionary(*id).ok()?,
        Object::Dictionary(d) => d,
        _ => return None,
    };
    let bytes = match info.get(b"Title").ok()? {
        Object::String(bytes, _) => bytes,
        _ => return None,
    };
    let title = if let Some(utf16) = bytes.strip_prefix(&[0xfe, 0xff]) {
        let units: Vec<u16> = utf16
            .chunks_exact(2)
            .map(|p| u16::from_be_bytes([p[0], p[1]]))
            .collect();
        String::from_utf16_lossy(&units)
    } else if let Some(utf8) = bytes.strip_prefix(&[0xef, 0xbb, 0xbf]) {
        String::from_utf8_lossy(utf8).into_owned()
    } else {
        bytes.iter().map(|&b| b as char).collect()
    };
    let title = title.trim().to_string();
    (!title.is_empty()).then_some(title)
}
