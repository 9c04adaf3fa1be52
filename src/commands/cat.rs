//! `sediment cat KEY`: a file's payload, read back from its WARC and checked.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::key::Sha1Key;
use crate::payload::{WarcLocator, read_payload};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment cat 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ --warc-dir /data/warcs > file.pdf
  sediment cat --decode 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ | less")]
pub struct Args {
    /// Row key: base32, 40-character hex, or sha1:BASE32.
    pub key: String,
    /// Directories holding the WARC files (the stored path is tried under each,
    /// with and without its directory part).
    #[arg(long = "warc-dir", value_name = "DIR")]
    pub warc_dirs: Vec<PathBuf>,
    /// De-chunk a chunk-encoded body (the stored bytes, which the key hashes, are
    /// written otherwise).
    #[arg(long)]
    pub decode: bool,
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let key = super::usage(Sha1Key::parse(&args.key))?;
    let store = super::open_reader(store_path)?;
    let locator = WarcLocator::new(&args.warc_dirs);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let mut write_error: Option<std::io::Error> = None;
    let read = read_payload(&store, &key, &locator, args.decode, &mut |bytes| {
        if write_error.is_none()
            && let Err(e) = out.write_all(bytes)
        {
            write_error = Some(e);
        }
    })?;
    if let Some(e) = write_error {
        return Err(e.into());
    }
    out.flush()?;
    if args.decode
        && let Some(error) = read
            .record
            .payload
            .as_ref()
            .and_then(|p| p.dechunk_error.as_ref())
    {
        crate::diag!(
            "sediment: warning: {} at byte {}: the chunked body is malformed ({error}); output stops there",
            read.warc.display(),
            read.offset
        );
    }
    super::done()
}
