//! The Bigtable backend on a network that fails (issue 33, item 4): a TCP proxy between
//! sediment and the emulator resets its first connections part-way, and the import must
//! still succeed with the table an import without the proxy makes; a writer that finds
//! the lease of a writer that died says what it waits for.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::emulator::Emulator;
use common::{fixture, json_lines};

fn emulator() -> Option<Emulator> {
    let emulator = Emulator::start();
    if emulator.is_none() {
        common::skip(
            "cbtemulator (the Cloud Bigtable emulator)",
            "scripts/setup.sh installs it (google-cloud-cli-bigtable-emulator)",
        );
    }
    emulator
}

/// Runs sediment with BIGTABLE_EMULATOR_HOST=`host`.
fn sediment(host: &str, store: &str, args: &[&str]) -> common::Run {
    let output = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .env("BIGTABLE_EMULATOR_HOST", host)
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .expect("run sediment");
    common::Run {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Closes a socket with a TCP reset (SO_LINGER 0), as a dropped connection looks.
fn reset(stream: &TcpStream) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket and a linger struct of the size given.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &linger as *const libc::linger as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    let _ = stream.shutdown(Shutdown::Both);
}

/// A proxy to `target` on a free loopback port that resets the connection numbered `i`
/// (from 0) after `limits[i]` bytes (both directions), and forwards the others.
struct Proxy {
    host: String,
    connections: Arc<AtomicUsize>,
    resets: Arc<AtomicUsize>,
}

impl Proxy {
    fn start(target: String, limits: Vec<usize>) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let host = listener.local_addr().unwrap().to_string();
        let connections = Arc::new(AtomicUsize::new(0));
        let resets = Arc::new(AtomicUsize::new(0));
        let (count, reset_count) = (connections.clone(), resets.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                let n = count.fetch_add(1, Ordering::SeqCst);
                let limit = limits.get(n).copied();
                let resets = reset_count.clone();
                std::thread::spawn(move || forward(client, server, limit, resets));
            }
        });
        Proxy {
            host,
            connections,
            resets,
        }
    }
}

/// Copies both ways until either side closes, or resets both after `limit` bytes.
fn forward(client: TcpStream, server: TcpStream, limit: Option<usize>, resets: Arc<AtomicUsize>) {
    let moved = Arc::new(AtomicUsize::new(0));
    let pipe = |mut from: TcpStream, mut to: TcpStream, moved: Arc<AtomicUsize>| {
        let resets = resets.clone();
        move || {
            let mut buffer = [0u8; 4096];
            loop {
                let n = match from.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let total = moved.fetch_add(n, Ordering::SeqCst) + n;
                if limit.is_some_and(|limit| total >= limit) {
                    // Only the first of the two directions to get there counts it.
                    if total - n < limit.unwrap_or(0) {
                        resets.fetch_add(1, Ordering::SeqCst);
                    }
                    reset(&from);
                    reset(&to);
                    return;
                }
                if to.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
            let _ = to.shutdown(Shutdown::Write);
        }
    };
    let up = std::thread::spawn(pipe(
        client.try_clone().unwrap(),
        server.try_clone().unwrap(),
        moved.clone(),
    ));
    let down = std::thread::spawn(pipe(server, client, moved));
    let _ = up.join();
    let _ = down.join();
}

#[test]
fn an_import_through_connections_that_reset_gives_the_table_of_one_without() {
    let Some(emulator) = emulator() else {
        return;
    };
    let warcs = [
        fixture("crawl/crawl1.warc.gz").display().to_string(),
        fixture("crawl/crawl2.warc.gz").display().to_string(),
    ];
    let (plain, flaky) = (emulator.store("plain"), emulator.store("flaky"));
    for store in [&plain, &flaky] {
        emulator.ok(store, &["bigtable", "create"]);
    }
    let mut args = vec!["import-warc"];
    args.extend(warcs.iter().map(String::as_str));
    emulator.ok(&plain, &args);
    let expected = emulator.ok(&plain, &["export"]);
    assert!(json_lines(&expected).len() > 5, "{expected}");

    // Resets early (while the tables are checked), mid-import, and later on new channels.
    let proxy = Proxy::start(emulator.host.clone(), vec![3_000, 6_000, 9_000, 12_000]);
    let started = Instant::now();
    let run = sediment(&proxy.host, &flaky, &args);
    assert_eq!(
        run.status,
        0,
        "the import failed through the proxy ({} connections, {} reset):\n{}",
        proxy.connections.load(Ordering::SeqCst),
        proxy.resets.load(Ordering::SeqCst),
        run.stderr
    );
    let resets = proxy.resets.load(Ordering::SeqCst);
    assert!(
        resets >= 2,
        "the proxy reset {resets} of {} connections: the test shows nothing",
        proxy.connections.load(Ordering::SeqCst)
    );
    eprintln!(
        "{resets} resets of {} connections, import in {:.1} s",
        proxy.connections.load(Ordering::SeqCst),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(emulator.ok(&flaky, &["export"]), expected, "export");
    // Reads through the proxy too (its reset connections are used up by now).
    assert_eq!(
        sediment(&proxy.host, &flaky, &["export"]).stdout,
        expected,
        "export through the proxy"
    );
}

#[test]
fn a_writer_that_finds_a_dead_writers_lease_says_what_it_waits_for() {
    let Some(emulator) = emulator() else {
        return;
    };
    let store = emulator.store("leased");
    emulator.ok(&store, &["bigtable", "create"]);
    // The lease a writer killed while deriving rows leaves behind, as the store keeps it.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let lease = format!(
        r#"v:={{"owner":"dead-writer-4242","expires_ms":{},"last_ts":1}}"#,
        now_ms + 3_000
    );
    if emulator
        .cbt(&["set", "leased_meta", "lease/derive", &lease])
        .is_none()
    {
        common::skip(
            "cbt (Google's Bigtable client)",
            "scripts/setup.sh installs it",
        );
        return;
    }
    let started = Instant::now();
    let run = emulator.sediment(
        &store,
        &[
            "import-warc",
            &fixture("crawl/crawl1.warc.gz").display().to_string(),
        ],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let waits: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("waiting for the lease"))
        .collect();
    assert_eq!(waits.len(), 1, "said once:\n{}", run.stderr);
    assert!(
        waits[0].contains("held by dead-writer-4242") && waits[0].contains("expires in"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("took the lease after waiting"),
        "{}",
        run.stderr
    );
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "it waited for the lease"
    );
    assert!(json_lines(&emulator.ok(&store, &["export"])).len() > 5);
}
