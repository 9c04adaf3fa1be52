//! Command-line interface: global options, dispatch to one module per subcommand, and the
//! exit status (README, "Exit status and reports"): 0 done, 1 failed, 2 usage error,
//! 3 done with skipped or unresolved input.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{CommandFactory, Parser, Subcommand};

use crate::commands::{self, UsageError};
use crate::report::{ReportArgs, exit};

#[derive(Parser)]
#[command(
    name = "sediment",
    version,
    about = "Web archives (WARC, CDX) into a content-addressed wide-column store on RocksDB, and out again as JSON lines, SQLite databases and word indexes.",
    after_help = "Exit status: 0 done, nothing skipped; 1 failed; 2 usage error; 3 done, but inputs or records were skipped or unresolved (bad lines, corrupt records, WARC files not found).\n\nExamples:\n  sediment import-warc /data/warcs/\n  sediment project summary -o summary.db && sediment search --db summary.db 'web archive'"
)]
pub struct Cli {
    /// The store: a directory (an embedded RocksDB), or bigtable://PROJECT/INSTANCE/TABLE
    /// for Cloud Bigtable (BIGTABLE_EMULATOR_HOST points at an emulator).
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
    /// Create the tables of a Bigtable store (`--store bigtable://PROJECT/INSTANCE/TABLE`).
    #[cfg(feature = "bigtable")]
    Bigtable(commands::bigtable::Args),
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
    /// Import WARC files: every capture, and a file row per distinct full-text payload.
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
    /// Distributed ingest: record lines cut into blocks, one per key range.
    SplitRanges(commands::split_ranges::Args),
    /// Distributed ingest: one key range of record lines into SST files.
    WriteSst(commands::write_sst::Args),
    /// Distributed ingest into a shared store (Bigtable): one key range written directly.
    WriteRange(commands::write_range::Args),
    /// Distributed ingest: key ranges of SST files into the store (or, on Bigtable, the
    /// ranges' rows finished), inputs recorded.
    IngestSst(commands::ingest_sst::Args),
    /// The capture index as Parquet files (Common Crawl's columnar URL index layout).
    #[cfg(feature = "parquet")]
    ExportCaptures(commands::export_captures::Args),
    /// A capture selection (the options of `captures`) as a WACZ package.
    ExportWacz(commands::export_wacz::Args),
    /// Serve the store over HTTP: CDX server API, rows, payloads, captures, search.
    #[cfg(feature = "server")]
    Serve(commands::serve::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Print the manual page (roff), or write one page per command to a directory.
    Manpage(ManpageArgs),
}

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment completions bash > ~/.local/share/bash-completion/completions/sediment
  sediment completions zsh > ~/.zfunc/_sediment")]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment manpage > sediment.1 && man ./sediment.1
  sediment manpage --dir /usr/local/share/man/man1")]
pub struct ManpageArgs {
    /// Write sediment.1 and a page per command (sediment-import-warc.1, …) into this
    /// directory instead of printing sediment.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

impl Command {
    /// The command's name and its `--json` / `--report` options, for the JSON object of a
    /// run that fails; `None` for commands without a run report.
    fn reporting(&self) -> Option<(&'static str, &ReportArgs)> {
        use commands::catalog::CatalogCommand;
        use commands::project::ProjectCommand;
        Some(match self {
            Command::Export(a) => ("export", &a.reporting),
            Command::ImportJsonl(a) => ("import-jsonl", &a.reporting),
            Command::ImportHbaseTsv(a) => ("import-hbase-tsv", &a.reporting),
            Command::BackfillCdx(a) => ("backfill-cdx", &a.reporting),
            Command::ImportWarc(a) => ("import-warc", &a.reporting),
            Command::Cdx(a) => ("cdx", &a.reporting),
            Command::Grobid(a) => ("grobid", &a.reporting),
            Command::ImportTei(a) => ("import-tei", &a.reporting),
            Command::Match(a) => ("match", &a.reporting),
            #[cfg(feature = "parquet")]
            Command::ExportCaptures(a) => ("export-captures", &a.reporting),
            Command::ExportWacz(a) => ("export-wacz", &a.reporting),
            Command::IngestSst(a) => ("ingest-sst", &a.reporting),
            Command::Catalog(a) => match &a.command {
                CatalogCommand::Load(a) => ("catalog load", &a.reporting),
                CatalogCommand::Get(_) => return None,
            },
            Command::Project(a) => match &a.command {
                ProjectCommand::Crawl(a) => ("project crawl", &a.reporting),
                ProjectCommand::Summary(a) => ("project summary", &a.reporting),
                ProjectCommand::Locust(a) => ("project locust", &a.reporting),
                ProjectCommand::Jdbm(a) => ("project jdbm", &a.reporting),
            },
            _ => return None,
        })
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Schema(args) => commands::schema::run(args),
        #[cfg(feature = "bigtable")]
        Command::Bigtable(args) => commands::bigtable::run(&cli.store, args),
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
        Command::SplitRanges(args) => commands::split_ranges::run(args),
        Command::WriteSst(args) => commands::write_sst::run(args),
        Command::WriteRange(args) => commands::write_range::run(&cli.store, args),
        Command::IngestSst(args) => commands::ingest_sst::run(&cli.store, args),
        #[cfg(feature = "parquet")]
        Command::ExportCaptures(args) => commands::export_captures::run(&cli.store, args),
        Command::ExportWacz(args) => commands::export_wacz::run(&cli.store, args),
        #[cfg(feature = "server")]
        Command::Serve(args) => commands::serve::run(&cli.store, args),
        Command::Completions(args) => completions(args),
        Command::Manpage(args) => manpage(args),
    }
}

fn completions(args: CompletionsArgs) -> Result<ExitCode> {
    // Generated into memory first: clap_complete panics when its writer fails (a closed
    // pipe), and a failed write here must be an ordinary error.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "sediment", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    commands::done()
}

fn manpage(args: ManpageArgs) -> Result<ExitCode> {
    let cmd = Cli::command();
    match args.dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd, &dir)
                .with_context(|| format!("cannot write the manual pages to {}", dir.display()))?;
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page)?;
            let mut out = std::io::stdout().lock();
            out.write_all(&page)?;
            out.flush()?;
        }
    }
    commands::done()
}

pub fn main() -> ExitCode {
    limit_malloc_arenas();
    // clap itself exits with 2 on a usage error (0 for --help and --version).
    let cli = Cli::parse();
    commands::set_wait_for_writer(cli.wait);
    let reporting = cli
        .command
        .reporting()
        .map(|(name, args)| (name, args.clone()));
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            // A closed pipe (`sediment export | head`) is not an error worth a message.
            if let Some(io) = err.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::BrokenPipe
            {
                return ExitCode::SUCCESS;
            }
            if let Some(usage) = err.downcast_ref::<UsageError>() {
                crate::diag!("sediment: error: {usage}\n\nFor more information, try '--help'.");
                return ExitCode::from(exit::USAGE);
            }
            crate::diag!("sediment: error: {err:#}");
            if let Some((name, args)) = reporting {
                args.write_failure(name, &format!("{err:#}"));
            }
            ExitCode::from(exit::FAILED)
        }
    }
}

/// One glibc malloc arena per core and two more, unless `MALLOC_ARENA_MAX` says otherwise.
/// glibc makes up to eight per core, one for each thread that allocates, and keeps what is
/// freed in the arena it came from: with pages analysed on one thread and dropped on
/// another, `project summary` of an HTML crawl peaked at 214–284 MB where a few arenas hold
/// it to 180–240 MB in the same time. One per core was too few: the analysis threads, the
/// writing thread and the checkpoint thread then share arenas, and when two busy threads
/// drew the same one, `project crawl` waited on its lock 20,000 times and took a fifth
/// longer (BENCHMARKS.md, issue 15).
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let arenas = libc::c_int::try_from(cores + 2).unwrap_or(libc::c_int::MAX);
        // SAFETY: sets one allocator parameter, before the program starts any thread.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, arenas);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command (and subcommand) has a help that ends with examples.
    #[test]
    fn every_command_has_examples() {
        fn check(cmd: &mut clap::Command, path: &str) {
            let help = cmd.render_long_help().to_string();
            let examples = help
                .find("Examples:")
                .unwrap_or_else(|| panic!("`{path} --help` has no examples"));
            assert!(
                help[examples..].contains("sediment "),
                "`{path} --help` examples name no command"
            );
            for sub in cmd.get_subcommands_mut().filter(|s| s.get_name() != "help") {
                let name = format!("{path} {}", sub.get_name());
                check(sub, &name);
            }
        }
        let mut cmd = Cli::command();
        cmd.build();
        check(&mut cmd, "sediment");
    }

    #[test]
    #[cfg(feature = "server")]
    fn serve_binds_loopback_unless_told_otherwise() {
        let cli = Cli::try_parse_from(["sediment", "serve"]).unwrap();
        let Command::Serve(args) = cli.command else {
            panic!("serve parses as serve");
        };
        assert!(args.bind.ip().is_loopback(), "{}", args.bind);
    }

    #[test]
    fn the_cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
