//! Helpers shared by the integration tests: running the binary, finding the corpus.
#![allow(dead_code)]

pub mod emulator;
mod prerequisites;

pub use prerequisites::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(relative)
}

pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn sediment(store: &Path, args: &[&str]) -> Run {
    sediment_in(store, args, None)
}

pub fn sediment_in(store: &Path, args: &[&str], stdin: Option<&[u8]>) -> Run {
    use std::io::Write;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sediment"));
    cmd.arg("--store").arg(store).args(args);
    let output: Output = match stdin {
        None => cmd.output().expect("run sediment"),
        Some(input) => {
            cmd.stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            let mut child = cmd.spawn().expect("spawn sediment");
            // A command that stops before reading its input closes the pipe early.
            if let Err(e) = child.stdin.take().expect("stdin").write_all(input) {
                assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
            }
            child.wait_with_output().expect("wait sediment")
        }
    };
    Run {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs in another working directory and asserts success, returning stdout.
pub fn ok_in_dir(dir: &Path, store: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .current_dir(dir)
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .expect("run sediment");
    assert!(
        output.status.success(),
        "sediment {args:?} in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Runs and asserts success, returning stdout.
pub fn ok(store: &Path, args: &[&str]) -> String {
    let run = sediment(store, args);
    assert_eq!(
        run.status, 0,
        "sediment {args:?} failed\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    run.stdout
}

pub fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}")))
        .collect()
}

/// Runs and asserts the run finished (exit status 0, or 3: done with problems), returning
/// stdout; for runs over real files whose damage is not what the test is about.
pub fn finished(store: &Path, args: &[&str]) -> String {
    let run = sediment(store, args);
    assert!(
        run.status == 0 || run.status == 3,
        "sediment {args:?} failed with {}\nstdout:\n{}\nstderr:\n{}",
        run.status,
        run.stdout,
        run.stderr
    );
    run.stdout
}

/// A projection's SQLite database is consistent: `integrity_check` (which also evaluates
/// every CHECK and NOT NULL constraint) is ok and every reference resolves. The
/// projections do not have SQLite enforce foreign keys while they write: this is where
/// they are checked.
pub fn assert_consistent_database(conn: &rusqlite::Connection, what: &str) {
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok", "{what}");
    let mut check = conn.prepare("PRAGMA foreign_key_check").unwrap();
    let dangling: Vec<String> = check
        .query_map([], |r| {
            Ok(format!(
                "{} row {:?}",
                r.get::<_, String>(0)?,
                r.get::<_, Option<i64>>(1)?
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(
        dangling.is_empty(),
        "{what}: dangling references: {dangling:?}"
    );
}

/// An HTML payload of a WARC or ARC file, as warcio reads it.
pub struct HtmlPage {
    /// The file and the target URI, for messages.
    pub label: String,
    pub url: String,
    /// The HTTP Content-Type (empty when absent).
    pub content_type: String,
    /// The de-chunked, decoded body.
    pub body: Vec<u8>,
}

/// The HTML payloads of every WARC and ARC file of the shared corpus; `None` after
/// [`skip`] without the corpus or warcio.
pub fn corpus_html_pages() -> Option<Vec<HtmlPage>> {
    warc_html_pages(&corpus("")?)
}

/// The HTML payloads of every WARC and ARC file under `dir` (or of the one file `dir`),
/// read with Python's warcio (an independent reader); `None` after [`skip`] without
/// warcio.
pub fn warc_html_pages(dir: &Path) -> Option<Vec<HtmlPage>> {
    let script = r#"
import os, sys
from warcio.archiveiterator import ArchiveIterator
out = sys.stdout.buffer
top = sys.argv[1]
walked = [(os.path.dirname(top), [], [os.path.basename(top)])] if os.path.isfile(top) else sorted(os.walk(top))
for root, _, files in walked:
    for name in sorted(files):
        if not any(x in name for x in ('.warc', '.arc')) or name.endswith('.bad'):
            continue
        path = os.path.join(root, name)
        try:
            with open(path, 'rb') as f:
                for r in ArchiveIterator(f, arc2warc=True):
                    if r.rec_type not in ('response', 'resource'):
                        continue
                    ct = (r.http_headers.get_header('Content-Type') if r.http_headers
                          else r.rec_headers.get_header('Content-Type')) or ''
                    if 'html' not in ct.lower():
                        continue
                    body = r.content_stream().read()
                    uri = r.rec_headers.get_header('WARC-Target-URI') or ''
                    head = '\t'.join((name, uri, ct)).encode()
                    out.write(b'%d %d\n' % (len(head), len(body)) + head + body)
        except Exception as e:
            sys.stderr.write('%s: %s\n' % (path, e))
"#;
    if !have_python(&["warcio"]) {
        return None;
    }
    let output = Command::new("python3")
        .args(["-c", script])
        .arg(dir)
        .output()
        .expect("run python3");
    assert!(
        output.status.success(),
        "warcio failed on {}: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    Some(parse_html_pages(&output.stdout).expect("the script's output is length-framed"))
}

fn parse_html_pages(data: &[u8]) -> Option<Vec<HtmlPage>> {
    let mut pages = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let end = at + data[at..].iter().position(|&b| b == b'\n')?;
        let sizes = std::str::from_utf8(&data[at..end]).ok()?;
        let (head_len, body_len) = sizes.split_once(' ')?;
        let (head_len, body_len): (usize, usize) = (head_len.parse().ok()?, body_len.parse().ok()?);
        let head = String::from_utf8_lossy(&data[end + 1..end + 1 + head_len]).into_owned();
        let mut fields = head.splitn(3, '\t').map(str::to_string);
        let (name, url, content_type) = (fields.next()?, fields.next()?, fields.next()?);
        let body_start = end + 1 + head_len;
        pages.push(HtmlPage {
            label: format!("{name} {url}"),
            url,
            content_type,
            body: data.get(body_start..body_start + body_len)?.to_vec(),
        });
        at = body_start + body_len;
    }
    Some(pages)
}

/// A free TCP port on 127.0.0.1 (for a server a test starts).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process (a server, a browser driver) killed when dropped.
pub struct KilledOnDrop(pub std::process::Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
