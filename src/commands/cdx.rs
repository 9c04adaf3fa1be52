//! `sediment cdx`: index WARC files to sorted CDX (11 columns) or CDXJ.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::cdx::writer::{CDX11_HEADER, CdxFormat, LineSorter, index_entry, index_filename};
use crate::ingest::thread_count;
use crate::ingest::warc::record_despite;
use crate::ingest::warc_files::is_warc_name;
use crate::input::{expand_paths, open_raw};
use crate::report::{Location, Report, ReportArgs};
use crate::warc::WarcReader;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment cdx crawl.warc.gz -o crawl.cdx
  sediment cdx --cdxj /data/warcs/ > index.cdxj
  curl -s https://example.org/crawl.warc.gz | sediment cdx - > crawl.cdx")]
pub struct Args {
    /// WARC files, directories (searched for *.warc, *.warc.gz), or `-` for standard
    /// input.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Write CDXJ (`SURT timestamp {json}`) instead of 11-column CDX.
    #[arg(long)]
    pub cdxj: bool,
    /// Output file (default: standard output).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Memory for sorting before spilling to temporary files, in MB.
    #[arg(long, default_value_t = 512)]
    pub sort_memory_mb: usize,
    /// Write every problem to this file (JSON lines: file, offset, reason).
    #[arg(long)]
    pub rejects: Option<PathBuf>,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    if args.reporting.json && args.output.is_none() {
        crate::usage_error!(
            "--json prints to standard output, which carries the CDX lines here: write them to a file with -o FILE, or the report with --report FILE"
        );
    }
    let format = if args.cdxj {
        CdxFormat::Cdxj
    } else {
        CdxFormat::Cdx11
    };
    let report = Report::new("cdx")
        .output(&args.reporting)
        .rejects_to(args.rejects.as_deref())?;
    let files = expand_paths(&args.inputs, is_warc_name, &report)?;
    let total: u64 = files
        .iter()
        .filter_map(|f| f.metadata().ok())
        .map(|m| m.len())
        .sum();
    report.start_progress(Some(total), "bytes");
    let sorter = Mutex::new(LineSorter::new(args.sort_memory_mb << 20));
    if format == CdxFormat::Cdx11 {
        sorter
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(CDX11_HEADER.to_string())?;
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(thread_count(args.threads))
        .build()?;
    pool.install(|| {
        files.par_iter().try_for_each(|path| -> Result<()> {
            let name = path.display().to_string();
            let filename = index_filename(&name);
            // `-` is standard input, as for the import commands.
            let file = open_raw(path)?;
            let at = |offset| Location::offset(name.clone(), offset);
            let mut reader = match WarcReader::new(file) {
                Ok(r) => r,
                Err(e) => {
                    report.problem(at(e.offset), e.kind.name(), &e.message, None)?;
                    return Ok(());
                }
            };
            let mut lines = Vec::new();
            let mut last = 0;
            while let Some(item) = reader.next_record(None) {
                // The position moves back when the reader reads damaged stretches again.
                if reader.position() > last {
                    report.progress().inc(reader.position() - last);
                    last = reader.position();
                }
                let record = match item {
                    Ok(record) => record,
                    Err(mut e) => {
                        report.problem(at(e.offset), e.kind.name(), &e.message, None)?;
                        match record_despite(&mut e) {
                            Some(record) => record,
                            None => continue,
                        }
                    }
                };
                match index_entry(&record, &filename) {
                    Ok(Some(entry)) => lines.push(entry.line(format)),
                    Ok(None) => {}
                    Err(skip) => {
                        report.problem(at(record.offset), skip.reason, &skip.message, None)?
                    }
                }
            }
            report.count("lines", lines.len() as u64);
            if reader.resyncs() > 0 {
                report.count("resyncs", reader.resyncs());
            }
            let mut sorter = sorter.lock().unwrap_or_else(|e| e.into_inner());
            for line in lines {
                sorter.push(line)?;
            }
            Ok(())
        })
    })?;
    let sink: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(super::NamedWriter::new(
            File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
            path,
        )),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = BufWriter::with_capacity(1 << 20, sink);
    let sorter = sorter.into_inner().unwrap_or_else(|e| e.into_inner());
    sorter.finish(&mut out)?;
    out.flush()?;
    report.count("files", files.len() as u64);
    report.finish("lines", Some(total))?;
    super::finished(&report)
}
