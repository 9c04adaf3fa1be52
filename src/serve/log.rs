//! The access log: one line per request, in the Common Log Format with the time taken
//! appended (`peer - - [time] "request" status bytes millis`). Lines are buffered and
//! written at least once a second (and at shutdown), not one write per request.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};

type Sink = Arc<Mutex<BufWriter<Box<dyn Write + Send>>>>;

#[derive(Clone)]
pub struct AccessLog {
    sink: Option<Sink>,
}

impl std::fmt::Debug for AccessLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.sink.is_some() {
            "AccessLog"
        } else {
            "AccessLog(off)"
        })
    }
}

impl AccessLog {
    /// `-` for standard error, `off` for none, else a file to append to.
    pub fn open(spec: &str) -> Result<AccessLog> {
        let writer: Box<dyn Write + Send> = match spec {
            "-" | "stderr" => Box::new(std::io::stderr()),
            "off" | "none" => return Ok(AccessLog { sink: None }),
            path => Box::new(
                File::options()
                    .create(true)
                    .append(true)
                    .open(Path::new(path))
                    .with_context(|| format!("cannot open the access log {path}"))?,
            ),
        };
        Ok(AccessLog {
            sink: Some(Arc::new(Mutex::new(BufWriter::with_capacity(
                64 << 10,
                writer,
            )))),
        })
    }

    pub fn request(&self, peer: &str, line: &str, status: u16, bytes: &str, took: Duration) {
        let Some(sink) = &self.sink else {
            return;
        };
        let time = chrono::Utc::now().format("%d/%b/%Y:%H:%M:%S %z");
        let entry = format!(
            "{peer} - - [{time}] \"{}\" {status} {bytes} {:.3}\n",
            line.escape_debug(),
            took.as_secs_f64() * 1000.0
        );
        if let Ok(mut sink) = sink.lock() {
            let _ = sink.write_all(entry.as_bytes());
        }
    }

    pub fn flush(&self) {
        if let Some(sink) = &self.sink
            && let Ok(mut sink) = sink.lock()
        {
            let _ = sink.flush();
        }
    }
}
