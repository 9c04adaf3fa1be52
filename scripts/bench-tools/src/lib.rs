//! Shared by the reference programs: run a per-file job on N threads, report MB/s of input.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

/// `PROGRAM [--threads N] FILE…` → (threads, files).
pub fn args() -> (usize, Vec<PathBuf>) {
    let mut threads = 1;
    let mut files = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        if a == "--threads" {
            threads = it.next().and_then(|n| n.parse().ok()).unwrap_or(1);
        } else {
            files.push(PathBuf::from(a));
        }
    }
    (threads, files)
}

/// Runs `job` on every file with `threads` workers; prints a summary line.
pub fn run(name: &str, job: impl Fn(&PathBuf) -> u64 + Sync) {
    let (threads, files) = args();
    let input: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0))
        .sum();
    let queue = Mutex::new(files.iter());
    let total = Mutex::new(0u64);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let next = queue.lock().unwrap().next();
                    let Some(file) = next else { break };
                    let n = job(file);
                    *total.lock().unwrap() += n;
                }
            });
        }
    });
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{name}: threads {threads}, {} files, {:.1} MB in, {:.2} s, {:.1} MB/s, count {}",
        files.len(),
        input as f64 / 1e6,
        secs,
        input as f64 / 1e6 / secs,
        total.into_inner().unwrap()
    );
}
