//! Streams N CDX-11 lines shaped like a web archive's index to stdout, for
//! `scripts/bench-scale.sh` (issue 36): hosts Zipf-distributed over registered domains
//! (at least 200,000), URL paths and their MIME types taken from real crawls' CDX files,
//! capture times over 15 years, about 80 % status 200 and the rest 301/302/404, a quarter
//! of the payload digests seen again under another URL or time, and WARC file names per
//! monthly crawl with offsets that grow as each file fills. The output is deterministic
//! for a seed and a list of path files, and comes in SURT order of the registered domains
//! (a real CDX is sorted; within a domain the lines are in URL groups, not fully sorted).
//!
//!     cargo run --release --example gen_scale_cdx -- N [--seed S] [--domains D] CDX...

use std::io::Write;

use data_encoding::BASE32;

#[path = "support/scale.rs"]
mod scale;
use scale::{Rng, SUBDOMAINS, domain_name, mix, timestamp};

struct Domain {
    /// Labels reversed, comma-separated: what orders domains as SURTs do.
    surt_host: String,
    name: String,
    count: u64,
}

/// (path with query, MIME type) of every distinct URL of the given CDX files.
fn templates(files: &[String]) -> Vec<(String, String)> {
    let mut seen = std::collections::BTreeMap::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(file) else {
            eprintln!("gen_scale_cdx: cannot read {file}, skipped");
            continue;
        };
        for line in text.lines() {
            if line.starts_with(' ') || line.starts_with('#') || line.starts_with("CDX") {
                continue;
            }
            let cols: Vec<&str> = line.split(' ').collect();
            if cols.len() < 5 {
                continue;
            }
            let url = cols[2];
            let Some(after) = url.find("://").map(|p| &url[p + 3..]) else {
                continue;
            };
            let path = after.find('/').map_or("/", |p| &after[p..]);
            if path.len() > 200 || path.contains(char::is_whitespace) {
                continue;
            }
            let mime = match cols[3] {
                "-" | "warc/revisit" | "unk" => "text/html",
                m => m,
            };
            seen.entry(path.to_owned())
                .or_insert_with(|| mime.to_owned());
        }
    }
    if seen.is_empty() {
        seen.insert("/".to_owned(), "text/html".to_owned());
        seen.insert("/index.html".to_owned(), "text/html".to_owned());
    }
    seen.into_iter().collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut n: Option<u64> = None;
    let mut seed = 36u64;
    let mut domains: Option<u64> = None;
    let mut files = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seed" => seed = it.next().and_then(|v| v.parse().ok()).expect("--seed N"),
            "--domains" => domains = it.next().and_then(|v| v.parse().ok()),
            _ if n.is_none() => n = Some(a.replace('_', "").parse().expect("N, a number")),
            _ => files.push(a),
        }
    }
    let Some(n) = n else {
        eprintln!("usage: gen_scale_cdx N [--seed S] [--domains D] CDX-FILES...");
        std::process::exit(2);
    };
    let d_count = domains.unwrap_or((n / 40).max(250_000)).max(1);
    let templates = templates(&files);
    let p = templates.len() as u64;
    let mut rng = Rng(seed);

    // Domains in SURT order; Zipf ranks (s = 1) given by a seeded shuffle, counts by
    // carrying fractions so that they add up to exactly N.
    let mut list: Vec<Domain> = (0..d_count)
        .map(|i| {
            let name = domain_name(i);
            let surt_host = name.rsplit('.').collect::<Vec<_>>().join(",");
            Domain {
                surt_host,
                name,
                count: 0,
            }
        })
        .collect();
    list.sort_by(|a, b| a.surt_host.cmp(&b.surt_host));
    let mut ranks: Vec<u64> = (0..d_count).collect();
    for i in (1..ranks.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        ranks.swap(i, j);
    }
    let harmonic: f64 = (1..=d_count).map(|r| 1.0 / r as f64).sum();
    let mut carry = 0.0f64;
    let mut assigned = 0u64;
    for (domain, rank) in list.iter_mut().zip(&ranks) {
        let share = n as f64 / ((*rank + 1) as f64 * harmonic) + carry;
        let count = share.floor() as u64;
        carry = share - count as f64;
        domain.count = count.min(n - assigned);
        assigned += domain.count;
    }
    if let Some(last) = list.last_mut() {
        last.count += n - assigned;
    }

    // Capture times: 2010-01-01 to 2025-01-01; one crawl a month, its WARC files rolling
    // over at 1 GB.
    const START: u64 = 1_262_304_000;
    const SPAN: u64 = 15 * 365 * 86400 + 4 * 86400;
    const MONTH: u64 = SPAN / 180;
    let mut crawls: Vec<(u64, u64)> = vec![(0, 0); 181];
    // Digests that may be seen again (a ring of recent ones).
    const RING: usize = 1 << 20;
    let mut ring: Vec<u64> = Vec::with_capacity(RING);
    let mut next_digest = 0u64;

    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let mut line: Vec<u8> = Vec::with_capacity(1024);
    let mut url = String::with_capacity(512);
    let mut surt = String::with_capacity(512);
    let mut itoa = itoa::Buffer::new();
    let _ = out.write_all(b" CDX N b a m s k r M S V g\n");
    for (d, domain) in list.iter().enumerate() {
        if domain.count == 0 {
            continue;
        }
        let base = mix(seed ^ (d as u64).wrapping_mul(0x1000_0001));
        // About 2.5 captures per distinct URL; the captures of a URL come together.
        let urls = (domain.count * 2).div_ceil(5).max(1);
        for j in 0..domain.count {
            let u = j * urls / domain.count;
            let h = mix(base ^ u);
            let (path, mime) = &templates[((base >> 8).wrapping_add(u) % p) as usize];
            url.clear();
            url.push_str("http://");
            if h.is_multiple_of(10) {
                url.push_str(SUBDOMAINS[(h >> 8) as usize % SUBDOMAINS.len()]);
                url.push('.');
            } else if h % 10 < 7 {
                url.push_str("www.");
            }
            url.push_str(&domain.name);
            url.push_str(path);
            if u >= p {
                url.push(if path.contains('?') { '&' } else { '?' });
                url.push_str("p=");
                url.push_str(itoa.format(u / p));
            }
            sediment::surt::surt_into(&url, &mut surt);

            let secs = START + rng.below(SPAN);
            let roll = rng.below(100);
            let status: &[u8] = match roll {
                0..80 => b"200",
                80..88 => b"301",
                88..94 => b"302",
                _ => b"404",
            };
            let mime: &str = if roll < 80 { mime } else { "text/html" };
            let digest_id = if !ring.is_empty() && rng.below(4) == 0 {
                ring[rng.below(ring.len() as u64) as usize]
            } else {
                let id = next_digest;
                next_digest += 1;
                if ring.len() < RING {
                    ring.push(id);
                } else {
                    ring[rng.below(RING as u64) as usize] = id;
                }
                id
            };
            let mut digest = [0u8; 20];
            // The seed mixed first: with `id ^ seed`, seeds that differ in a bit give the
            // same digests for ids that differ in it, so a second seed's "new" captures
            // would repeat the first's payloads.
            let mut state = mix(digest_id ^ mix(seed ^ 0x5eed));
            for chunk in digest.chunks_mut(8) {
                state = mix(state);
                chunk.copy_from_slice(&state.to_le_bytes()[..chunk.len()]);
            }
            // Record sizes: log-uniform, 300 B to ~2 MB for 200s, small otherwise.
            let size = if roll < 80 {
                300 + (1u64 << rng.below(21)) + rng.below(4096)
            } else {
                250 + rng.below(700)
            };
            let crawl = ((secs - START) / MONTH) as usize;
            let (seq, offset) = &mut crawls[crawl];
            let at = *offset;
            *offset += size;
            let file_seq = *seq;
            if *offset > 1 << 30 {
                *seq += 1;
                *offset = 0;
            }

            line.clear();
            line.extend_from_slice(surt.as_bytes());
            line.push(b' ');
            timestamp(secs, &mut line);
            line.push(b' ');
            line.extend_from_slice(url.as_bytes());
            line.push(b' ');
            line.extend_from_slice(mime.as_bytes());
            line.push(b' ');
            line.extend_from_slice(status);
            line.push(b' ');
            let mut b32 = [0u8; 32];
            BASE32.encode_mut(&digest, &mut b32);
            line.extend_from_slice(&b32);
            line.extend_from_slice(b" - - ");
            line.extend_from_slice(itoa.format(size).as_bytes());
            line.push(b' ');
            line.extend_from_slice(itoa.format(at).as_bytes());
            line.extend_from_slice(b" SCALE-CRAWL-");
            line.extend_from_slice(itoa.format(crawl + 1000).as_bytes());
            line.extend_from_slice(b"/SCALE-CRAWL-");
            line.extend_from_slice(itoa.format(crawl + 1000).as_bytes());
            line.push(b'-');
            line.extend_from_slice(itoa.format(file_seq + 10000).as_bytes());
            line.extend_from_slice(b".warc.gz\n");
            if out.write_all(&line).is_err() {
                // A closed pipe (head, a failed load) ends the output.
                return;
            }
        }
    }
    let _ = out.flush();
}
