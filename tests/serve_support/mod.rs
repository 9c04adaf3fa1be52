//! Running `sediment serve` on 127.0.0.1 for the tests, and talking to it with a real
//! HTTP client.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running server; stopped (SIGTERM) when dropped.
pub struct Server {
    child: Option<Child>,
    pub port: u16,
    /// Everything the server wrote on standard error so far (access log included).
    pub stderr: Arc<Mutex<String>>,
}

impl Server {
    pub fn start(store: &Path, extra: &[&str]) -> Server {
        Server::start_with(store.as_os_str(), extra, &[])
    }

    /// A server on any store (`bigtable://…` included), with extra environment.
    pub fn start_with(store: &OsStr, extra: &[&str], envs: &[(&str, &str)]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sediment"))
            .envs(envs.iter().copied())
            .arg("--store")
            .arg(store)
            .args(["serve", "--bind", "127.0.0.1:0", "--refresh", "1"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start sediment serve");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(String::new()));
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        let sink = log.clone();
        std::thread::spawn(move || {
            let mut port_tx = Some(port_tx);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(tx) = &port_tx
                    && let Some(rest) = line.split("listening on http://127.0.0.1:").nth(1)
                {
                    let port: u16 = rest.split('/').next().unwrap().parse().unwrap();
                    let _ = tx.send(port);
                    port_tx = None;
                }
                let mut text = sink.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        let port = match port_rx.recv_timeout(Duration::from_secs(60)) {
            Ok(port) => port,
            Err(_) => {
                let _ = child.kill();
                panic!("sediment serve did not start: {}", log.lock().unwrap());
            }
        };
        Server {
            child: Some(child),
            port,
            stderr: log,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn get(&self, path: &str) -> Reply {
        get(&self.url(path))
    }

    pub fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits (up to a minute) until standard error contains `needle`; whether it does.
    pub fn log_shows(&self, needle: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if self.log().contains(needle) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Sends SIGTERM and waits; returns the exit status code.
    pub fn stop(&mut self) -> i32 {
        self.stop_with("-TERM")
    }

    /// Sends a signal (`-INT`, `-TERM`) and waits; returns the exit status code.
    pub fn stop_with(&mut self, signal: &str) -> i32 {
        let mut child = self.child.take().expect("running");
        let _ = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("sediment serve did not stop on {signal}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The server's process id (for /proc).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| c.try_wait().unwrap().is_none())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn lines(&self) -> Vec<String> {
        self.text().lines().map(str::to_string).collect()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into()
}

pub fn get(url: &str) -> Reply {
    let mut response = agent()
        .get(url)
        .call()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let mut body = Vec::new();
    response
        .body_mut()
        .as_reader()
        .read_to_end(&mut body)
        .unwrap_or_else(|e| panic!("GET {url}: reading the body: {e}"));
    Reply {
        status,
        content_type,
        body,
    }
}

/// Percent-encodes a query parameter value.
pub fn enc(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// The fixture crawls copied into a fresh directory (so tests may damage or add files).
pub fn copy_crawls(dir: &Path, names: &[&str]) -> Vec<PathBuf> {
    let warcs = dir.join("warcs");
    std::fs::create_dir_all(&warcs).unwrap();
    names
        .iter()
        .map(|name| {
            let to = warcs.join(name);
            std::fs::copy(crate::common::fixture(&format!("crawl/{name}")), &to).unwrap();
            to
        })
        .collect()
}

/// Whether a program is on PATH and answers `probe`; when not, [`crate::common::skip`]
/// (the test then returns).
#[track_caller]
pub fn have(program: &str, probe: &[&str]) -> bool {
    let found = Command::new(program)
        .args(probe)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        crate::common::skip(&format!("program {program}"), crate::common::SETUP);
    }
    found
}

pub const SITE: &str = "http://127.0.0.1:47213";
