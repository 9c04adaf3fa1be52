//! Search latency over a summary database: runs every query of a file (one a line) through
//! the library's parser and `search`, the same path as `sediment search`, and prints the
//! median, p90, p99 and maximum time per query (top 10 hits with titles, snippets and
//! capture dates), as wall time and as CPU time of the thread (Linux schedstat, so that
//! other processes on a shared machine do not count). Used by scripts/bench-summary.sh.
//!
//! Usage: search_latency DB QUERIES [ROUNDS]   (ROUNDS: passes over the file, default 1,
//! after one warm-up pass that is not counted)

use std::time::Instant;

use sediment::internals::search::{Query, open, search};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: search_latency DB QUERIES [ROUNDS]");
        std::process::exit(2);
    }
    let conn = open(std::path::Path::new(&args[1])).expect("open database");
    let text = std::fs::read_to_string(&args[2]).expect("read queries");
    let rounds: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(1);
    let queries: Vec<Query> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| Query::parse(l).expect("query"))
        .collect();
    for q in &queries {
        search(&conn, q, 10).expect("search");
    }
    let mut wall = Vec::with_capacity(queries.len() * rounds);
    let mut cpu = Vec::with_capacity(queries.len() * rounds);
    let mut with_hits = 0;
    let mut hits_total = 0;
    for _ in 0..rounds {
        for q in &queries {
            let cpu0 = cpu_seconds();
            let start = Instant::now();
            let hits = search(&conn, q, 10).expect("search");
            let elapsed = start.elapsed().as_secs_f64();
            wall.push(elapsed * 1000.0);
            cpu.push(match (cpu0, cpu_seconds()) {
                (Some(a), Some(b)) => (b - a) * 1000.0,
                _ => elapsed * 1000.0,
            });
            with_hits += usize::from(!hits.is_empty());
            hits_total += hits.len();
        }
    }
    println!(
        "queries {} (with hits {with_hits}, hits {hits_total})",
        wall.len()
    );
    for (what, mut times) in [("wall", wall), ("CPU", cpu)] {
        times.sort_by(f64::total_cmp);
        let at = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        println!(
            "  {what:>4}: median {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms, mean {:.2} ms",
            at(0.5),
            at(0.9),
            at(0.99),
            times[times.len() - 1],
            mean
        );
    }
}

/// Time this thread spent on a CPU (Linux: /proc/thread-self/schedstat).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}
