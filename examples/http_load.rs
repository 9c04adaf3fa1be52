//! A closed-loop load generator for `sediment serve`: CLIENTS threads, each with one
//! keep-alive connection, send the requests of a file (one path and query a line, already
//! URL-encoded, such as `/cdx?url=example.com/&output=json`), taken in turn, until REQUESTS
//! have been answered. The latency of every request is kept: median, p90, p99 and maximum,
//! and the rate. Every answer must be a 200 (and, with MUST_CONTAIN, hold that text);
//! anything else is counted and makes the exit status 1. Used by scripts/bench-search.sh
//! and scripts/bench-serve-disk.sh, so that neither needs oha.
//!
//! Usage: http_load BASE_URL PATHS CLIENTS REQUESTS [MUST_CONTAIN]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !(5..=6).contains(&args.len()) {
        eprintln!("usage: http_load BASE_URL PATHS CLIENTS REQUESTS [MUST_CONTAIN]");
        std::process::exit(2);
    }
    let base = args[1].trim_end_matches('/').to_string();
    let paths: Arc<Vec<String>> = Arc::new(
        std::fs::read_to_string(&args[2])
            .unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", args[2])))
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|path| format!("{base}{path}"))
            .collect(),
    );
    if paths.is_empty() {
        fail(&format!("no requests in {}", args[2]));
    }
    let clients: usize = args[3]
        .parse()
        .unwrap_or_else(|_| fail("CLIENTS: a number"));
    let requests: usize = args[4]
        .parse()
        .unwrap_or_else(|_| fail("REQUESTS: a number"));
    let must_contain: Arc<Option<String>> = Arc::new(args.get(5).cloned());
    let next = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let threads: Vec<_> = (0..clients.max(1))
        .map(|_| {
            let (paths, next, failures, must_contain) = (
                paths.clone(),
                next.clone(),
                failures.clone(),
                must_contain.clone(),
            );
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .timeout_global(Some(Duration::from_secs(60)))
                    .build()
                    .into();
                let mut times = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= requests {
                        return times;
                    }
                    let url = &paths[i % paths.len()];
                    let sent = Instant::now();
                    let ok = match agent.get(url).call() {
                        Ok(mut response) => {
                            let status = response.status().as_u16();
                            // Read the whole answer: its time is part of the latency.
                            let body = response
                                .body_mut()
                                .with_config()
                                .limit(1 << 30)
                                .read_to_string()
                                .unwrap_or_default();
                            status == 200
                                && must_contain
                                    .as_deref()
                                    .is_none_or(|text| body.contains(text))
                        }
                        Err(_) => false,
                    };
                    times.push(sent.elapsed().as_secs_f64() * 1000.0);
                    if !ok {
                        failures.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    let mut times: Vec<f64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap_or_default())
        .collect();
    let wall = started.elapsed().as_secs_f64();
    if times.is_empty() {
        fail("no request was answered");
    }
    times.sort_by(f64::total_cmp);
    let at = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    let failed = failures.load(Ordering::Relaxed);
    println!(
        "clients {clients}, requests {}, failed {failed}, {:.0} requests/s; latency median {:.2} ms, \
         p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        times.len(),
        times.len() as f64 / wall,
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0)
    );
    if failed > 0 {
        std::process::exit(1);
    }
}

fn fail(message: &str) -> ! {
    eprintln!("http_load: {message}");
    std::process::exit(2);
}
