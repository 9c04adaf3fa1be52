//! A Bigtable emulator (`cbtemulator`) on a free 127.0.0.1 port for one test, stopped by
//! its PID when dropped.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

pub struct Emulator {
    child: Child,
    /// `127.0.0.1:PORT`, for BIGTABLE_EMULATOR_HOST.
    pub host: String,
}

/// What installs the emulator and `cbt`.
const INSTALL: &str = "scripts/setup.sh installs Google's google-cloud-cli-bigtable-emulator \
                       and google-cloud-cli-cbt, or builds an emulator with \
                       scripts/build-bigtable-emulator.sh";

/// The emulator binary: $SEDIMENT_CBTEMULATOR, on PATH, or where Google's Cloud SDK puts it.
fn binary() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("SEDIMENT_CBTEMULATOR") {
        return Some(PathBuf::from(path));
    }
    let candidates = [
        "/usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator",
        "/usr/local/bin/cbtemulator",
    ];
    super::find_program("cbtemulator")
        .or_else(|| candidates.iter().map(PathBuf::from).find(|p| p.is_file()))
}

impl Emulator {
    /// Starts an emulator; `None` after [`super::skip`] when there is none (the test then
    /// returns). An emulator that is there but does not start fails the test.
    #[track_caller]
    pub fn start() -> Option<Emulator> {
        let Some(binary) = binary() else {
            super::skip("the Bigtable emulator cbtemulator", INSTALL);
            return None;
        };
        let mut child = Command::new(&binary)
            .args(["-host", "127.0.0.1", "-port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", binary.display()));
        // It prints "Cloud Bigtable emulator running on 127.0.0.1:PORT" when it listens.
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the emulator's first line");
        let host = line.trim().rsplit(' ').next().unwrap_or("").to_string();
        if !host.starts_with("127.0.0.1:") {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{} did not start: it said {line:?}", binary.display());
        }
        Some(Emulator { child, host })
    }

    /// A `bigtable://` store on this emulator.
    pub fn store(&self, table: &str) -> String {
        format!("bigtable://test-project/test-instance/{table}")
    }

    /// Runs sediment against this emulator.
    pub fn sediment(&self, store: &str, args: &[&str]) -> super::Run {
        let output = Command::new(env!("CARGO_BIN_EXE_sediment"))
            .env("BIGTABLE_EMULATOR_HOST", &self.host)
            .arg("--store")
            .arg(store)
            .args(args)
            .output()
            .expect("run sediment");
        super::Run {
            status: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Runs sediment and asserts success, returning stdout.
    pub fn ok(&self, store: &str, args: &[&str]) -> String {
        let run = self.sediment(store, args);
        assert!(
            run.status == 0,
            "sediment {args:?} on {store} failed ({}):\n{}",
            run.status,
            run.stderr
        );
        run.stdout
    }

    /// Runs Google's `cbt` client against this emulator; `None` after [`super::skip`]
    /// when it is not installed.
    #[track_caller]
    pub fn cbt(&self, args: &[&str]) -> Option<String> {
        if !super::have_program("cbt", INSTALL) {
            return None;
        }
        let output = Command::new("cbt")
            .env("BIGTABLE_EMULATOR_HOST", &self.host)
            .args(["-project", "test-project", "-instance", "test-instance"])
            .args(args)
            .output()
            .expect("run cbt");
        assert!(
            output.status.success(),
            "cbt {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        Some(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
