//! Run reports: counters, bad-input problems, progress bars, the closing summary, the
//! JSON report and the exit status.
//!
//! Worker threads count into their own [`Counts`] and merge them into the shared
//! [`Report`]; problems (bad lines, bad records, unreadable bodies) go through
//! [`Report::problem`] or [`Report::bulk_problem`], which print the first few of each
//! reason, count all, and write every one to the optional rejects file as JSON lines.
//!
//! Everything written to stderr here (progress, problems, the summary) goes through
//! [`diagnostic`], which ignores write errors: a closed pipe or a full disk on stderr
//! never stops a run or loses its commit.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use serde::Serialize;

/// Exit statuses (README, "Exit status and reports").
pub mod exit {
    /// Done, nothing skipped.
    pub const OK: u8 = 0;
    /// Failed.
    pub const FAILED: u8 = 1;
    /// Usage error (the command line was wrong; nothing was done).
    pub const USAGE: u8 = 2;
    /// Done, but inputs or records were skipped or unresolved (bad lines, corrupt
    /// records, WARC files not found).
    pub const PROBLEMS: u8 = 3;
}

/// Writes one line to stderr. A failed write (closed pipe, full disk) is ignored:
/// diagnostics must never abort the work they describe.
pub fn diagnostic(args: std::fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let mut line = args.to_string();
    line.push('\n');
    let _ = err.write_all(line.as_bytes());
    let _ = err.flush();
}

/// `eprintln!` that never panics: formats a line for `report::diagnostic` (internal).
#[doc(hidden)]
#[macro_export]
macro_rules! diag {
    ($($arg:tt)*) => {
        $crate::report::diagnostic(format_args!($($arg)*))
    };
}

/// `--rejects FILE` as it is written.
struct RejectsFile {
    out: BufWriter<File>,
    path: PathBuf,
    /// The first write that failed, reported when the run finishes.
    error: Option<std::io::Error>,
}

/// How a long command reports its results; flattened into the arguments of each.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ReportArgs {
    /// Print one JSON object with the run's counts, problems and exit status on standard
    /// output when done (the one-line summary stays on standard error).
    #[arg(long)]
    pub json: bool,
    /// Write the same JSON object to FILE (also when the run fails).
    #[arg(long = "report", value_name = "FILE")]
    pub report_file: Option<PathBuf>,
    /// No progress bar and no per-problem lines: only the closing summary line (the
    /// problems still go to --rejects and the JSON report).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

impl ReportArgs {
    /// Whether a JSON report is wanted somewhere.
    pub fn wants_json(&self) -> bool {
        self.json || self.report_file.is_some()
    }

    /// The JSON object of a run that failed before it could finish: its error, nothing
    /// counted. Written where the JSON report was asked for; errors writing it are
    /// ignored (the failure itself is what the caller reports).
    pub fn write_failure(&self, command: &str, error: &str) {
        if !self.wants_json() {
            return;
        }
        let object = serde_json::json!({
            "command": command,
            "status": Outcome::Failed.name(),
            "exit_code": exit::FAILED,
            "error": error,
        });
        let _ = self.write_json(&object);
    }

    fn write_json(&self, object: &serde_json::Value) -> Result<()> {
        let text = serde_json::to_string(object)?;
        if let Some(path) = &self.report_file {
            std::fs::write(path, format!("{text}\n"))
                .with_context(|| format!("cannot write the report file {}", path.display()))?;
        }
        if self.json {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{text}")?;
            out.flush()?;
        }
        Ok(())
    }
}

/// How a finished run went; decides the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Done, nothing skipped or unresolved.
    Clean,
    /// Done, but problems were found (skipped or unresolved inputs or records).
    Problems,
    /// Stopped by an error.
    Failed,
}

impl Outcome {
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Clean => exit::OK,
            Outcome::Problems => exit::PROBLEMS,
            Outcome::Failed => exit::FAILED,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Clean => "ok",
            Outcome::Problems => "problems",
            Outcome::Failed => "failed",
        }
    }
}

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

/// How many problems the JSON report lists with their location.
const EXAMPLES: usize = 20;

/// A problem as the JSON report lists it.
#[derive(Debug, Clone, Serialize)]
pub struct ProblemExample {
    #[serde(flatten)]
    pub location: Location,
    pub reason: String,
    pub message: String,
}

pub struct Report {
    command: String,
    started: Instant,
    counts: Mutex<Counts>,
    problems: Mutex<Counts>,
    examples: Mutex<Vec<ProblemExample>>,
    rejects: Mutex<Option<RejectsFile>>,
    strict: bool,
    output: ReportArgs,
    progress: ProgressBar,
    /// Whether progress lines for a log were started (once a run).
    progress_logged: AtomicBool,
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
            examples: Mutex::new(Vec::new()),
            rejects: Mutex::new(None),
            strict: false,
            output: ReportArgs::default(),
            progress: ProgressBar::hidden(),
            progress_logged: AtomicBool::new(false),
        }
    }

    pub fn strict(mut self, strict: bool) -> Report {
        self.strict = strict;
        self
    }

    /// Where and how the results go: `--json`, `--report FILE`, `--quiet`.
    pub fn output(mut self, output: &ReportArgs) -> Report {
        self.output = output.clone();
        self
    }

    pub fn rejects_to(self, path: Option<&Path>) -> Result<Report> {
        if let Some(path) = path {
            let file = File::create(path)
                .with_context(|| format!("cannot create the rejects file {}", path.display()))?;
            *self.rejects.lock().unwrap_or_else(|e| e.into_inner()) = Some(RejectsFile {
                out: BufWriter::new(file),
                path: path.to_path_buf(),
                error: None,
            });
        }
        Ok(self)
    }

    /// Shows a progress bar on a terminal (see [`Report::start_progress`]).
    pub fn with_progress(self, total: Option<u64>, unit: &str) -> Report {
        self.start_progress(total, unit);
        self
    }

    /// Starts the progress bar; callable once the total is known. `unit` `bytes` counts
    /// bytes; any other unit counts items (`captures`, `lines`, …). With a total the bar
    /// shows how far the run is and an ETA, without one a spinner and the rate. The bar
    /// is drawn only when stderr is a terminal and the run is not `--quiet`.
    pub fn start_progress(&self, total: Option<u64>, unit: &str) {
        if self.output.quiet {
            return;
        }
        let bar = &self.progress;
        let template = match (total, unit) {
            (Some(_), "bytes") => {
                "{spinner} {bytes}/{total_bytes} {bytes_per_sec} {wide_bar} {eta_left} {msg}"
                    .to_string()
            }
            (Some(_), unit) => {
                format!(
                    "{{spinner}} {{human_pos}}/{{human_len}} {unit} {{wide_bar}} {{elapsed}} {{eta_left}} {{msg}}"
                )
            }
            (None, "bytes") => "{spinner} {bytes} {bytes_per_sec} {msg}".to_string(),
            (None, unit) => format!("{{spinner}} {{human_pos}} {unit} {{elapsed}} {{msg}}"),
        };
        if let Some(total) = total {
            bar.set_length(total);
        }
        bar.set_style(
            ProgressStyle::with_template(&template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .with_key(
                    "eta_left",
                    |state: &ProgressState, out: &mut dyn std::fmt::Write| {
                        let _ = out.write_str(&eta_text(state.pos(), state.len(), state.eta()));
                    },
                ),
        );
        if std::io::stderr().is_terminal() {
            bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
            bar.enable_steady_tick(Duration::from_millis(250));
        } else if !self.progress_logged.swap(true, Ordering::Relaxed) {
            // A log file or a pipe: a line now and then instead of a bar, from the first
            // minute on (a short run prints its summary only). The thread ends with the
            // bar: when the run finishes, or the report is dropped.
            let bar = bar.downgrade();
            let (command, unit) = (self.command.clone(), unit.to_string());
            let spawned = std::thread::Builder::new()
                .name("progress-log".into())
                .spawn(move || {
                    let mut next = Instant::now() + PROGRESS_LOG_EVERY;
                    loop {
                        std::thread::sleep(Duration::from_millis(250));
                        let Some(bar) = bar.upgrade() else { break };
                        if bar.is_finished() {
                            break;
                        }
                        if Instant::now() >= next {
                            next += PROGRESS_LOG_EVERY;
                            eprintln!("{}", progress_line(&command, &bar, &unit));
                        }
                    }
                });
            // No thread, no lines: the run itself goes on.
            drop(spawned);
        }
    }

    pub fn progress(&self) -> &ProgressBar {
        &self.progress
    }

    /// Says on the progress bar which step of the run is under way (the steps after the
    /// counted work, when the bar alone would sit at its end): `""` clears it.
    pub fn phase(&self, what: &str) {
        self.progress.set_message(what.to_string());
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

    /// The first problems, with their locations (as the JSON report lists them).
    pub fn problem_examples(&self) -> Vec<ProblemExample> {
        self.examples
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A line for the user on stderr, above the progress bar; not printed when quiet.
    pub fn note(&self, line: &str) {
        if !self.output.quiet {
            self.progress.suspend(|| diagnostic(format_args!("{line}")));
        }
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
            self.note(&format!("{location}: {reason}: {message}"));
        } else if seen == PRINTED_PER_REASON + 1 {
            self.note(&format!(
                "{reason}: further problems of this kind are counted, not printed"
            ));
        }
        self.keep_example(&location, reason, message);
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
            if let Ok(json) = serde_json::to_string(&line)
                && let Err(e) = writeln!(out.out, "{json}")
            {
                out.error.get_or_insert(e);
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

    /// Reports `n` problems of one reason that were counted in bulk rather than met one by
    /// one (e.g. bodies whose WARC file was not found): one message for all of them, and
    /// `examples` (e.g. the first missing files) for the JSON report. Never stops a run.
    pub fn bulk_problem(&self, reason: &str, n: u64, message: &str, examples: &[Location]) {
        if n == 0 {
            return;
        }
        self.problems
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(reason, n);
        self.note(message);
        for location in examples {
            self.keep_example(location, reason, message);
        }
    }

    fn keep_example(&self, location: &Location, reason: &str, message: &str) {
        let mut examples = self.examples.lock().unwrap_or_else(|e| e.into_inner());
        if examples.len() < EXAMPLES {
            examples.push(ProblemExample {
                location: location.clone(),
                reason: reason.to_string(),
                message: message.to_string(),
            });
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// How the run went so far; the one place the exit status is decided from
    /// (`commands::finished`): any problem makes it [`Outcome::Problems`].
    pub fn outcome(&self) -> Outcome {
        if self.problems().total() > 0 {
            Outcome::Problems
        } else {
            Outcome::Clean
        }
    }

    /// Ends the progress bar, flushes the rejects file, prints the summary to stderr and
    /// writes the JSON report when asked for. `main_count` names the counter used for the
    /// rate (e.g. `lines`), `bytes` the input volume if known.
    pub fn finish(&self, main_count: &str, bytes: Option<u64>) -> Result<String> {
        self.progress.finish_and_clear();
        if let Some(out) = self
            .rejects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            // The first failed write (a full disk) fails the run, naming the file: the
            // rejects it lost would otherwise go unnoticed.
            let failed = match out.error.take() {
                Some(e) => Err(e),
                None => out.out.flush(),
            };
            failed
                .with_context(|| format!("cannot write the rejects file {}", out.path.display()))?;
        }
        let summary = self.summary(main_count, bytes);
        diagnostic(format_args!("{summary}"));
        if self.output.wants_json() {
            self.output.write_json(&self.json(bytes))?;
        }
        Ok(summary)
    }

    /// Ends a run that is failing: the progress bar goes, the summary of what was done
    /// before the error is printed; the JSON report is left to the error path.
    pub fn abandon(&self, main_count: &str) {
        self.progress.finish_and_clear();
        if let Some(out) = self
            .rejects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            let _ = out.out.flush();
        }
        diagnostic(format_args!("{}", self.summary(main_count, None)));
    }

    /// The JSON report: the same counts as the summary line, the problems by reason and
    /// the first few of them, the exit status.
    pub fn json(&self, bytes: Option<u64>) -> serde_json::Value {
        let outcome = self.outcome();
        let problems = self.problems();
        let mut object = serde_json::json!({
            "command": self.command,
            "status": outcome.name(),
            "exit_code": outcome.exit_code(),
            "counts": self.counts(),
            "problems_total": problems.total(),
            "problems": problems,
            "problem_examples": self.problem_examples(),
            "seconds": self.elapsed().as_secs_f64(),
        });
        if let Some(b) = bytes {
            object["bytes_in"] = b.into();
        }
        object
    }

    pub fn summary(&self, main_count: &str, bytes: Option<u64>) -> String {
        let secs = self.elapsed().as_secs_f64().max(1e-6);
        let counts = self.counts();
        let problems = self.problems();
        // Timings of the run's steps (`ms_…`) are for --json: the line is for people.
        let mut parts: Vec<String> = counts
            .0
            .iter()
            .filter(|(k, _)| !is_timing(k))
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
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

/// Counters named `ms_…` are milliseconds spent in a step: in the JSON report only.
fn is_timing(name: &str) -> bool {
    name.starts_with("ms_")
}

/// How often a run whose stderr is not a terminal says how far it is.
const PROGRESS_LOG_EVERY: Duration = Duration::from_secs(60);

/// A progress line for a log: `project summary: 120,000 of 1,000,000 captures (12.0 %),
/// 10m 2s, ETA 1h 13m, writing`.
fn progress_line(command: &str, bar: &ProgressBar, unit: &str) -> String {
    let amount = |n: u64| match unit {
        "bytes" => indicatif::HumanBytes(n).to_string(),
        _ => indicatif::HumanCount(n).to_string(),
    };
    let unit = if unit == "bytes" { "" } else { unit };
    let position = bar.position();
    let mut line = format!("{command}: {}", amount(position));
    if let Some(total) = bar.length().filter(|&total| total > 0) {
        let percent = 100.0 * position as f64 / total as f64;
        line.push_str(&format!(" of {} {unit} ({percent:.1} %)", amount(total)));
    } else if !unit.is_empty() {
        line.push_str(&format!(" {unit}"));
    }
    line.push_str(&format!(", {:#}", indicatif::HumanDuration(bar.elapsed())));
    let eta = eta_text(position, bar.length(), bar.eta());
    if !eta.is_empty() {
        line.push_str(&format!(", {eta}"));
    }
    let message = bar.message();
    if !message.is_empty() {
        line.push_str(&format!(", {message}"));
    }
    line
}

/// The ETA on a progress bar. Once the count reaches its total (an estimate, for the
/// projections) no time is promised: the work after the count is named by the bar's
/// message instead. Less than a second left reads `<1s`, never `0s` while work remains.
pub fn eta_text(position: u64, total: Option<u64>, eta: Duration) -> String {
    match total {
        Some(total) if position < total => {
            if eta < Duration::from_secs(1) {
                "ETA <1s".to_string()
            } else {
                format!("ETA {:#}", indicatif::HumanDuration(eta))
            }
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_progress_line_for_a_log_says_how_far_the_run_is() {
        let bar = ProgressBar::hidden();
        bar.set_length(1_000_000);
        bar.set_position(120_000);
        bar.set_message("writing");
        let line = progress_line("project summary", &bar, "captures");
        assert!(
            line.starts_with("project summary: 120,000 of 1,000,000 captures (12.0 %), "),
            "{line}"
        );
        assert!(line.ends_with(", writing"), "{line}");
        let bytes = ProgressBar::hidden();
        bytes.set_position(3 * 1024 * 1024);
        let line = progress_line("import-warc", &bytes, "bytes");
        assert!(line.starts_with("import-warc: 3.00 MiB, "), "{line}");
    }

    #[test]
    fn eta_never_says_zero_while_work_remains() {
        let s = Duration::from_secs;
        assert_eq!(eta_text(10, Some(100), s(42)), "ETA 42s");
        assert_eq!(eta_text(99, Some(100), Duration::ZERO), "ETA <1s");
        assert_eq!(
            eta_text(100, Some(100), Duration::ZERO),
            "",
            "at the total: no ETA"
        );
        assert_eq!(
            eta_text(120, Some(100), Duration::ZERO),
            "",
            "past an estimate"
        );
        assert_eq!(eta_text(5, None, s(3)), "");
    }

    #[test]
    fn the_end_of_run_line_leaves_timings_to_the_json_report() {
        let report = Report::new("project summary");
        report.count("captures", 10);
        report.count("ms_analysing", 1234);
        report.count("ms_writing", 56);
        let line = report.summary("captures", None);
        assert!(line.contains("captures 10"), "{line}");
        assert!(!line.contains("ms_"), "{line}");
        let json = report.json(None);
        assert_eq!(json["counts"]["ms_analysing"], 1234);
        assert_eq!(json["counts"]["ms_writing"], 56);
    }

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
    fn the_outcome_and_the_json_report_follow_the_problems() {
        let report = Report::new("test");
        report.count("lines", 5);
        assert_eq!(report.outcome(), Outcome::Clean);
        assert_eq!(report.json(None)["exit_code"], 0);
        assert_eq!(report.json(None)["status"], "ok");
        report
            .problem(Location::line("a.cdx", 3), "bad_digest", "not base32", None)
            .unwrap();
        report.bulk_problem(
            "warc_not_found",
            7,
            "7 bodies were not read",
            &[Location::named("x.warc.gz")],
        );
        report.bulk_problem("nothing", 0, "not counted", &[]);
        assert_eq!(report.outcome(), Outcome::Problems);
        assert_eq!(report.outcome().exit_code(), exit::PROBLEMS);
        let json = report.json(Some(10));
        assert_eq!(json["command"], "test");
        assert_eq!(json["status"], "problems");
        assert_eq!(json["exit_code"], 3);
        assert_eq!(json["problems_total"], 8);
        assert_eq!(json["problems"]["warc_not_found"], 7);
        assert_eq!(json["counts"]["lines"], 5);
        assert_eq!(json["bytes_in"], 10);
        assert_eq!(json["problem_examples"][0]["file"], "a.cdx");
        assert_eq!(json["problem_examples"][0]["line"], 3);
        assert_eq!(json["problem_examples"][1]["file"], "x.warc.gz");
        assert_eq!(json["problem_examples"][1]["reason"], "warc_not_found");
        assert!(report.summary("lines", None).contains("problems 8"));
    }

    #[test]
    fn the_report_file_gets_the_json_object() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("report.json");
        let args = ReportArgs {
            report_file: Some(file.clone()),
            ..Default::default()
        };
        let report = Report::new("test").output(&args);
        report.count("rows", 2);
        report.finish("rows", None).unwrap();
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(written["counts"]["rows"], 2);
        assert_eq!(written["status"], "ok");
        args.write_failure("test", "it broke");
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(written["status"], "failed");
        assert_eq!(written["exit_code"], 1);
        assert_eq!(written["error"], "it broke");
    }

    #[test]
    fn progress_bars_know_their_total_unless_quiet() {
        let report = Report::new("test");
        report.start_progress(Some(120), "captures");
        assert_eq!(report.progress().length(), Some(120));
        let bytes = Report::new("test");
        bytes.start_progress(Some(4096), "bytes");
        assert_eq!(bytes.progress().length(), Some(4096));
        let quiet = Report::new("test").output(&ReportArgs {
            quiet: true,
            ..Default::default()
        });
        quiet.start_progress(Some(120), "captures");
        assert_eq!(quiet.progress().length(), None, "no bar at all");
        assert!(quiet.progress().is_hidden());
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
