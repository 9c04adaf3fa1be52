//! Run reports: counters, bad-input problems, progress bars, and the closing summary.
//!
//! Worker threads count into their own [`Counts`] and merge them into the shared
//! [`Report`]; problems (bad lines, bad records) go through [`Report::problem`], which
//! prints the first few of each reason, counts all, and writes every one to the
//! optional rejects file as JSON lines.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

/// Named counters; cheap to merge.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Counts(pub BTreeMap<String, u64>);

impl Counts {
    pub fn add(&mut self, name: &str, n: u64) {
        if n == 0 {
            return;
        }
        match self.0.get_mut(name) {
            Some(v) => *v += n,
            None => {
                self.0.insert(name.to_string(), n);
            }
        }
    }

    pub fn incr(&mut self, name: &str) {
        self.add(name, 1);
    }

    pub fn get(&self, name: &str) -> u64 {
        self.0.get(name).copied().unwrap_or(0)
    }

    pub fn merge(&mut self, other: &Counts) {
        for (k, v) in &other.0 {
            self.add(k, *v);
        }
    }

    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }
}

/// Where a problem was found.
#[derive(Debug, Clone, Serialize)]
pub struct Location {
    pub file: String,
    /// 1-based line number for line formats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// Byte offset for binary formats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
}

impl Location {
    /// A line of a line-oriented file.
    pub fn line(file: impl Into<String>, line: u64) -> Location {
        Location {
            file: file.into(),
            line: Some(line),
            offset: None,
        }
    }

    /// A byte offset in a binary file.
    pub fn offset(file: impl Into<String>, offset: u64) -> Location {
        Location {
            file: file.into(),
            line: None,
            offset: Some(offset),
        }
    }

    /// A whole file, or another named thing (such as a row) without a position.
    pub fn named(name: impl Into<String>) -> Location {
        Location {
            file: name.into(),
            line: None,
            offset: None,
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(offset) = self.offset {
            write!(f, " at byte {offset}")?;
        }
        Ok(())
    }
}

#[derive(Serialize)]
struct RejectLine<'a> {
    file: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    offset: Option<u64>,
    reason: &'a str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    raw: Option<String>,
}

/// How many problems of one reason are printed before the rest are only counted.
const PRINTED_PER_REASON: u64 = 10;

pub struct Report {
    command: String,
    started: Instant,
    counts: Mutex<Counts>,
    problems: Mutex<Counts>,
    rejects: Mutex<Option<BufWriter<File>>>,
    strict: bool,
    progress: ProgressBar,
}

/// Returned by [`Report::problem`] in strict mode: the run must stop.
#[derive(Debug, thiserror::Error)]
#[error("{location}: {message} (stopping: --strict)")]
pub struct StrictStop {
    pub location: Location,
    pub message: String,
}

impl Report {
    pub fn new(command: &str) -> Report {
        Report {
            command: command.to_string(),
            started: Instant::now(),
            counts: Mutex::new(Counts::default()),
            problems: Mutex::new(Counts::default()),
            rejects: Mutex::new(None),
            strict: false,
            progress: ProgressBar::hidden(),
        }
    }

    pub fn strict(mut self, strict: bool) -> Report {
        self.strict = strict;
        self
    }

    pub fn rejects_to(self, path: Option<&Path>) -> Result<Report> {
        if let Some(path) = path {
            let file = File::create(path)
                .with_context(|| format!("cannot create the rejects file {}", path.display()))?;
            *self.rejects.lock().unwrap_or_else(|e| e.into_inner()) = Some(BufWriter::new(file));
        }
        Ok(self)
    }

    /// Shows a progress bar on a terminal (by bytes when `total_bytes` is known).
    pub fn with_progress(self, total_bytes: Option<u64>, unit: &str) -> Report {
        self.start_progress(total_bytes, unit);
        self
    }

    /// Starts showing the progress bar (when stderr is a terminal); callable once the
    /// total is known.
    pub fn start_progress(&self, total_bytes: Option<u64>, unit: &str) {
        if !std::io::stderr().is_terminal() {
            return;
        }
        let bar = &self.progress;
        match total_bytes {
            Some(total) => {
                bar.set_length(total);
                bar.set_style(
                    ProgressStyle::with_template(
                        "{spinner} {bytes}/{total_bytes} {bytes_per_sec} {wide_bar} {eta} {msg}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
            }
            None => {
                bar.set_style(
                    ProgressStyle::with_template(&format!(
                        "{{spinner}} {{pos}} {unit} {{per_sec}} {{msg}}"
                    ))
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
            }
        }
        bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
        bar.enable_steady_tick(Duration::from_millis(250));
    }

    pub fn progress(&self) -> &ProgressBar {
        &self.progress
    }

    pub fn add_counts(&self, counts: &Counts) {
        self.counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .merge(counts);
    }

    pub fn count(&self, name: &str, n: u64) {
        self.counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(name, n);
    }

    pub fn counts(&self) -> Counts {
        self.counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn problems(&self) -> Counts {
        self.problems
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Reports bad input: printed (the first few per reason), counted, written to the
    /// rejects file. In strict mode the caller must stop on the returned error.
    pub fn problem(
        &self,
        location: Location,
        reason: &str,
        message: &str,
        raw: Option<&[u8]>,
    ) -> Result<(), StrictStop> {
        let seen = {
            let mut problems = self.problems.lock().unwrap_or_else(|e| e.into_inner());
            problems.incr(reason);
            problems.get(reason)
        };
        if seen <= PRINTED_PER_REASON {
            self.progress
                .suspend(|| eprintln!("{location}: {reason}: {message}"));
        } else if seen == PRINTED_PER_REASON + 1 {
            self.progress.suspend(|| {
                eprintln!("{reason}: further problems of this kind are counted, not printed")
            });
        }
        if let Some(out) = self
            .rejects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            let line = RejectLine {
                file: &location.file,
                line: location.line,
                offset: location.offset,
                reason,
                message,
                raw: raw.map(|r| String::from_utf8_lossy(r).into_owned()),
            };
            if let Ok(json) = serde_json::to_string(&line) {
                let _ = writeln!(out, "{json}");
            }
        }
        if self.strict {
            return Err(StrictStop {
                location,
                message: format!("{reason}: {message}"),
            });
        }
        Ok(())
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Ends the progress bar, flushes the rejects file and prints the summary to stderr.
    /// `main_count` names the counter used for the rate (e.g. `lines`), `bytes` the
    /// input volume if known.
    pub fn finish(&self, main_count: &str, bytes: Option<u64>) -> Result<String> {
        self.progress.finish_and_clear();
        if let Some(out) = self
            .rejects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            out.flush().context("cannot write the rejects file")?;
        }
        let summary = self.summary(main_count, bytes);
        eprintln!("{summary}");
        Ok(summary)
    }

    pub fn summary(&self, main_count: &str, bytes: Option<u64>) -> String {
        let secs = self.elapsed().as_secs_f64().max(1e-6);
        let counts = self.counts();
        let problems = self.problems();
        let mut parts: Vec<String> = counts.0.iter().map(|(k, v)| format!("{k} {v}")).collect();
        if problems.total() == 0 {
            parts.push("problems 0".into());
        } else {
            let detail: Vec<String> = problems
                .0
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            parts.push(format!(
                "problems {} ({})",
                problems.total(),
                detail.join(", ")
            ));
        }
        let mut rate = format!(
            "{:.2} s, {:.0} {main_count}/s",
            secs,
            counts.get(main_count) as f64 / secs
        );
        if let Some(b) = bytes {
            rate.push_str(&format!(
                ", {:.1} MB in, {:.1} MB/s",
                b as f64 / 1e6,
                b as f64 / 1e6 / secs
            ));
        }
        format!("{}: {}; {}", self.command, parts.join(", "), rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_problems_and_writes_rejects() {
        let dir = tempfile::tempdir().unwrap();
        let rejects = dir.path().join("rejects.jsonl");
        let report = Report::new("test").rejects_to(Some(&rejects)).unwrap();
        let at = |line| Location::line("a.cdx", line);
        report.count("lines", 3);
        report
            .problem(at(2), "bad_digest", "not base32", Some(b"raw line"))
            .unwrap();
        report
            .problem(at(3), "bad_digest", "not base32", None)
            .unwrap();
        let summary = report.finish("lines", None).unwrap();
        assert!(summary.contains("lines 3"), "{summary}");
        assert!(summary.contains("problems 2 (bad_digest: 2)"), "{summary}");
        let text = std::fs::read_to_string(&rejects).unwrap();
        let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(first["line"], 2);
        assert_eq!(first["reason"], "bad_digest");
        assert_eq!(first["raw"], "raw line");
        assert_eq!(text.lines().count(), 2);
    }

    #[test]
    fn strict_mode_stops_on_the_first_problem() {
        let report = Report::new("test").strict(true);
        let err = report
            .problem(Location::offset("x", 7), "bad", "why", None)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "x at byte 7: bad: why (stopping: --strict)"
        );
    }
}
