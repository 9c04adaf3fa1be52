//! A closed-loop load generator for `sediment serve`'s search: CLIENTS threads, each with
//! one keep-alive connection, send the queries of a file (one a line, taken in turn, each
//! as `/search?q=…&format=json`) until REQUESTS have been answered, and the latency of
//! every request is kept: median, p90, p99 and maximum, and the rate. Every answer must be
//! a 200 whose JSON has a `total` (anything else is counted and makes the exit status 1).
//! Used by scripts/bench-search.sh (oha is not needed).
//!
//! Usage: search_load BASE_URL QUERIES CLIENTS REQUESTS

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: search_load BASE_URL QUERIES CLIENTS REQUESTS");
        std::process::exit(2);
    }
    let base = args[1].trim_end_matches('/').to_string();
    let queries: Arc<Vec<String>> = Arc::new(
        std::fs::read_to_string(&args[2])
            .expect("read the queries")
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|q| {
                format!(
                    "{base}/search?format=json&q={}",
                    url::form_urlencoded::byte_serialize(q.as_bytes()).collect::<String>()
                )
            })
            .collect(),
    );
    assert!(!queries.is_empty(), "no queries in {}", args[2]);
    let clients: usize = args[3].parse().expect("CLIENTS");
    let requests: usize = args[4].parse().expect("REQUESTS");
    let next = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let threads: Vec<_> = (0..clients.max(1))
        .map(|_| {
            let (queries, next, failures) = (queries.clone(), next.clone(), failures.clone());
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
                    let url = &queries[i % queries.len()];
                    let sent = Instant::now();
                    let ok = match agent.get(url).call() {
                        Ok(mut response) => {
                            let status = response.status().as_u16();
                            let body = response.body_mut().read_to_string().unwrap_or_default();
                            status == 200 && body.contains("\"total\":")
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
        .flat_map(|t| t.join().expect("client thread"))
        .collect();
    let wall = started.elapsed().as_secs_f64();
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
