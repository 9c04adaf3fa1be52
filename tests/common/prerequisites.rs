//! What a test needs and may lack (a tool, a Python package, a service, the shared
//! corpus), and strict mode. Shared by the integration tests (tests/common) and the
//! library's unit tests (src/lib.rs includes this file under cfg(test)).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Strict mode: under `CI=true` or `SEDIMENT_STRICT=1` a test that lacks what it needs (a
/// tool, a Python package, a service, the shared corpus) fails instead of skipping.
pub fn strict() -> bool {
    let on = |name: &str| {
        std::env::var(name).is_ok_and(|v| {
            let v = v.trim().to_ascii_lowercase();
            !v.is_empty() && v != "0" && v != "false"
        })
    };
    on("SEDIMENT_STRICT") || on("CI")
}

/// The running test cannot do its work because `what` is missing; `install` says what
/// provides it (usually `scripts/setup.sh`). In strict mode the test fails here with that
/// message. Otherwise the skip is recorded in `$SEDIMENT_SKIP_LOG` (one line per test:
/// `scripts/test.sh` counts skipped tests from it and takes them out of the passed) and
/// printed; the caller then returns.
#[track_caller]
pub fn skip(what: &str, install: &str) {
    let test = current_test();
    if strict() {
        panic!(
            "{test}: {what} is missing ({install}); strict mode (CI=true or SEDIMENT_STRICT=1) \
             does not let a test pass without it"
        );
    }
    eprintln!("{test}: SKIPPED: {what} is missing ({install})");
    if let Some(log) = std::env::var_os("SEDIMENT_SKIP_LOG") {
        use std::io::Write;
        // One short line per write with O_APPEND: lines of parallel tests do not mix.
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            let _ = file.write_all(format!("{test}\t{what}\n").as_bytes());
        }
    }
}

/// `binary::test_name` of the running test: libtest names each test's thread after it,
/// and the binary's name (without cargo's hash) tells tests of the same name apart.
fn current_test() -> String {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let binary = match binary.rsplit_once('-') {
        Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
        _ => binary,
    };
    let thread = std::thread::current();
    format!("{binary}::{}", thread.name().unwrap_or("main"))
}

/// What installs the tools and Python packages the tests compare against.
pub const SETUP: &str =
    "scripts/setup.sh installs it; scripts/env.sh puts its virtual environment first on PATH";

/// `program` as found on PATH (an executable file), like the shell would find it.
pub fn find_program(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Whether `program` is on PATH; when not, [`skip`] (`install` says what provides it).
#[track_caller]
pub fn have_program(program: &str, install: &str) -> bool {
    let found = find_program(program).is_some();
    if !found {
        skip(&format!("program {program} (not on PATH)"), install);
    }
    found
}

/// Whether `python3` on PATH can import every one of `modules` (none: just python3);
/// when not, [`skip`] naming the interpreter and the modules it lacks. A test that passes
/// this and whose Python then fails has found a real failure, not a missing package.
#[track_caller]
pub fn have_python(modules: &[&str]) -> bool {
    let Some(python) = find_program("python3") else {
        skip("python3 (not on PATH)", SETUP);
        return false;
    };
    // find_spec, not import: it is quick for pyspark too, and imports no package code.
    let check = "import importlib.util, sys\n\
                 print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))";
    let output = Command::new(&python)
        .args(["-c", check])
        .args(modules)
        .output();
    let missing = match output {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => format!(
            "(the check failed: {})",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => format!("(python3 did not run: {e})"),
    };
    if !missing.is_empty() {
        skip(
            &format!("Python module(s) {missing} for {}", python.display()),
            SETUP,
        );
    }
    missing.is_empty()
}

/// Runs `python3 ARGS` (a reference script) that imports `modules` and returns its
/// stdout; `None` after [`skip`] when python3 or a module is missing. Once they are
/// there, the script failing fails the test.
#[track_caller]
pub fn python_output<I, S>(modules: &[&str], args: I) -> Option<Vec<u8>>
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    if !have_python(modules) {
        return None;
    }
    let args: Vec<std::ffi::OsString> = args.into_iter().map(|a| a.as_ref().into()).collect();
    let output = Command::new("python3")
        .args(&args)
        .output()
        .expect("run python3");
    assert!(
        output.status.success(),
        "python3 {args:?} failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    Some(output.stdout)
}

/// Whether Java (for Spark) is on PATH; when not, [`skip`].
#[track_caller]
pub fn have_java() -> bool {
    have_program(
        "java",
        "Debian's default-jre-headless, which scripts/setup.sh installs",
    )
}

/// Where the shared corpus of real files is: `$SEDIMENT_CORPUS`, else `../shared/corpus`
/// beside the checkout.
pub fn corpus_root() -> PathBuf {
    match std::env::var_os("SEDIMENT_CORPUS") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
    }
}

/// A file (or directory) of the shared corpus; `None` when this machine lacks it, after
/// [`skip`] (which fails the test in strict mode).
#[track_caller]
pub fn corpus(relative: &str) -> Option<PathBuf> {
    let path = corpus_root().join(relative);
    if path.exists() {
        Some(path)
    } else {
        let what = if relative.is_empty() {
            format!("the shared corpus {}", path.display())
        } else {
            format!("corpus file {}", path.display())
        };
        skip(
            &what,
            "the shared corpus: ../shared/corpus beside the checkout, or $SEDIMENT_CORPUS",
        );
        None
    }
}
