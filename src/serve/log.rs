//! The access log: one line per request, in the Common Log Format with the time taken
//! appended (`peer - - [time] "request" status bytes millis`).

use std::fs::File;
use std::io::{LineWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};

#[derive(Clone, Debug)]
pub enum AccessLog {
    Stderr,
    File(Arc<Mutex<LineWriter<File>>>),
    Off,
}

impl AccessLog {
    /// `-` for standard error, `off` for none, else a file to append to.
    pub fn open(spec: &str) -> Result<AccessLog> {
        Ok(match spec {
            "-" | "stderr" => AccessLog::Stderr,
            "off" | "none" => AccessLog::Off,
            path => {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(Path::new(path))
                    .with_context(|| format!("cannot open the access log {path}"))?;
                AccessLog::File(Arc::new(Mutex::new(LineWriter::new(file))))
            }
        })
    }

    pub fn request(&self, peer: &str, line: &str, status: u16, bytes: &str, took: Duration) {
        if matches!(self, AccessLog::Off) {
            return;
        }
        let time = chrono::Utc::now().format("%d/%b/%Y:%H:%M:%S %z");
        let entry = format!(
            "{peer} - - [{time}] \"{}\" {status} {bytes} {:.3}\n",
            line.escape_debug(),
            took.as_secs_f64() * 1000.0
        );
        match self {
            AccessLog::Stderr => {
                let _ = std::io::stderr().lock().write_all(entry.as_bytes());
            }
            AccessLog::File(file) => {
                if let Ok(mut file) = file.lock() {
                    let _ = file.write_all(entry.as_bytes());
                }
            }
            AccessLog::Off => {}
        }
    }

    pub fn flush(&self) {
        if let AccessLog::File(file) = self
            && let Ok(mut file) = file.lock()
        {
            let _ = file.flush();
        }
    }
}
