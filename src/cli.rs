//! Command-line interface: global options and dispatch to one module per subcommand.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::commands;

#[derive(Parser)]
#[command(
    name = "sediment",
    version,
    about = "Web archives (WARC, CDX) into a content-addressed wide-column store on RocksDB, and out again as JSON lines, SQLite databases and word indexes."
)]
pub struct Cli {
    /// The store directory (an embedded RocksDB).
    #[arg(
        long,
        global = true,
        env = "SEDIMENT_STORE",
        default_value = "./sediment-store"
    )]
    pub store: PathBuf,

    /// When another process is writing the store, wait for it instead of failing.
    #[arg(long, global = true)]
    pub wait: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Print the table schema (families, qualifiers, types, versions, compression).
    Schema(commands::schema::Args),
    /// Print one row as a JSON object.
    Get(commands::get::Args),
    /// Write rows as JSON lines.
    Export(commands::export::Args),
    /// Read rows from JSON lines written by `export`.
    ImportJsonl(commands::import_jsonl::Args),
    /// Read rows from tab-separated dumps of the original HBase table.
    ImportHbaseTsv(commands::import_hbase_tsv::Args),
    /// Print counts: rows, cells per column, MIME types, payload bytes, captures, disk size.
    Stats(commands::stats::Args),
    /// Backfill the store from CDX / CDXJ files (no WARC needed).
    BackfillCdx(commands::backfill_cdx::Args),
    /// Import WARC files: every capture, and a file row per distinct payload.
    ImportWarc(commands::import_warc::Args),
    /// List captures (every fetch, whatever its status) by URL, SURT prefix or payload.
    Captures(commands::captures::Args),
    /// List the WARC files the captures name, and whether each is found.
    Warcs(commands::warcs::Args),
    /// Re-point the WARC files of a moved collection (no re-import).
    Relocate(commands::relocate::Args),
    /// Index WARC files to sorted 11-column CDX or CDXJ.
    Cdx(commands::cdx::Args),
    /// Write a file's payload, read back from its WARC and checked against its SHA-1.
    Cat(commands::cat::Args),
    /// Send the store's PDFs to a GROBID server and keep the results in grobid0.
    Grobid(commands::grobid::Args),
    /// Load GROBID TEI files named by the SHA-1 of their PDF into grobid0.
    ImportTei(commands::import_tei::Args),
    /// The bibliographic catalog used by `match`: load records, look them up.
    Catalog(commands::catalog::Args),
    /// Match every row's grobid0:metadata against the catalog into match0.
    Match(commands::match_catalog::Args),
    /// Project the store into other systems' layouts (crawl and summary databases, word indexes).
    Project(commands::project::Args),
    /// Print the pages of a `project jdbm` output that contain a word (URL, frequency).
    LookupJdbm(commands::lookup_jdbm::Args),
    /// Full-text search over a summary database made by `project summary`.
    Search(commands::search::Args),
    /// Distributed ingest, map side: one input's captures as record lines (stdout).
    Extract(commands::extract::Args),
    /// Distributed ingest: one sorted key range of record lines into SST files.
    WriteSst(commands::write_sst::Args),
    /// Distributed ingest: key ranges of SST files into the store, inputs recorded.
    IngestSst(commands::ingest_sst::Args),
    /// The capture index as Parquet files (Common Crawl's columnar URL index layout).
    ExportCaptures(commands::export_captures::Args),
    /// Serve the store over HTTP: CDX server API, rows, payloads, captures, search.
    Serve(commands::serve::Args),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    commands::set_wait_for_writer(cli.wait);
    let result = match cli.command {
        Command::Schema(args) => commands::schema::run(args),
        Command::Get(args) => commands::get::run(&cli.store, args),
        Command::Export(args) => commands::export::run(&cli.store, args),
        Command::ImportJsonl(args) => commands::import_jsonl::run(&cli.store, args),
        Command::ImportHbaseTsv(args) => commands::import_hbase_tsv::run(&cli.store, args),
        Command::Stats(args) => commands::stats::run(&cli.store, args),
        Command::BackfillCdx(args) => commands::backfill_cdx::run(&cli.store, args),
        Command::ImportWarc(args) => commands::import_warc::run(&cli.store, args),
        Command::Cdx(args) => commands::cdx::run(args),
        Command::Captures(args) => commands::captures::run(&cli.store, args),
        Command::Cat(args) => commands::cat::run(&cli.store, args),
        Command::Warcs(args) => commands::warcs::run(&cli.store, args),
        Command::Relocate(args) => commands::relocate::run(&cli.store, args),
        Command::Grobid(args) => commands::grobid::run(&cli.store, args),
        Command::ImportTei(args) => commands::import_tei::run(&cli.store, args),
        Command::Catalog(args) => commands::catalog::run(&cli.store, args),
        Command::Match(args) => commands::match_catalog::run(&cli.store, args),
        Command::Project(args) => commands::project::run(&cli.store, args),
        Command::LookupJdbm(args) => commands::lookup_jdbm::run(args),
        Command::Search(args) => commands::search::run(args),
        Command::Extract(args) => commands::extract::run(args),
        Command::WriteSst(args) => commands::write_sst::run(args),
        Command::IngestSst(args) => commands::ingest_sst::run(&cli.store, args),
        Command::ExportCaptures(args) => commands::export_captures::run(&cli.store, args),
        Command::Serve(args) => commands::serve::run(&cli.store, args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            // A closed pipe (`sediment export | head`) is not an error worth a message.
            if let Some(io) = err.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::BrokenPipe
            {
                return ExitCode::SUCCESS;
            }
            eprintln!("sediment: error: {err:#}");
            if err.downcast_ref::<commands::UsageError>().is_some() {
                return ExitCode::from(2);
            }
            ExitCode::FAILURE
        }
    }
}
