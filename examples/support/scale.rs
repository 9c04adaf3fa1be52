//! What the scale generators share (examples/gen_scale_cdx.rs, examples/gen_scale_warc.rs):
//! the random numbers, the registered domains and the 14-digit timestamps, so that both
//! shape hosts and times the same way.
#![allow(dead_code)]

/// SplitMix64: small, fast, and good enough to shape synthetic data.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub const SYLLABLES: [&str; 40] = [
    "ka", "lo", "mi", "ne", "ru", "ta", "vo", "si", "pe", "da", "gor", "lin", "mar", "tek", "sol",
    "ber", "cal", "fin", "hal", "jun", "kor", "lum", "nor", "pax", "quin", "ros", "sun", "tor",
    "ul", "ven", "wes", "xan", "yor", "zen", "ar", "el", "is", "on", "ux", "bri",
];
/// Top-level domains with rough weights (out of 100).
pub const TLDS: [(&str, u64); 14] = [
    ("com", 46),
    ("org", 10),
    ("net", 7),
    ("de", 6),
    ("uk", 5),
    ("edu", 4),
    ("fr", 4),
    ("jp", 4),
    ("ru", 3),
    ("br", 3),
    ("it", 2),
    ("nl", 2),
    ("gov", 2),
    ("info", 2),
];
pub const SUBDOMAINS: [&str; 8] = ["blog", "news", "static", "lib", "docs", "shop", "m", "cdn"];

pub fn domain_name(i: u64) -> String {
    let mut name = String::new();
    let mut rest = i;
    let mut digits = 0;
    while rest > 0 || digits < 2 {
        name.push_str(SYLLABLES[(rest % 40) as usize]);
        rest /= 40;
        digits += 1;
    }
    let mut pick = mix(i ^ 0x5eed) % 100;
    let tld = TLDS
        .iter()
        .find(|(_, w)| {
            if pick < *w {
                true
            } else {
                pick -= w;
                false
            }
        })
        .map_or("com", |(t, _)| t);
    if tld == "uk" {
        format!("{name}.co.uk")
    } else {
        format!("{name}.{tld}")
    }
}

/// `yyyyMMddHHmmss` of a Unix time (days to civil date: Howard Hinnant's algorithm).
pub fn timestamp(secs: u64, out: &mut Vec<u8>) {
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let two = |v: u64, out: &mut Vec<u8>| {
        out.extend_from_slice(&[b'0' + (v / 10) as u8, b'0' + (v % 10) as u8])
    };
    let y = y as u64;
    two(y / 100, out);
    two(y % 100, out);
    two(m as u64, out);
    two(d as u64, out);
    two(rem / 3600, out);
    two(rem / 60 % 60, out);
    two(rem % 60, out);
}

/// Zipf (s = 1) over ranks 0..n: rank r is drawn with probability proportional to
/// 1 / (r + 1), by a binary search of the cumulative shares scaled to `u64`.
pub struct Zipf {
    cumulative: Vec<u64>,
}

impl Zipf {
    pub fn new(n: u64) -> Zipf {
        let harmonic: f64 = (1..=n).map(|r| 1.0 / r as f64).sum();
        let mut sum = 0.0f64;
        let cumulative = (1..=n)
            .map(|r| {
                sum += 1.0 / (r as f64 * harmonic);
                (sum.min(1.0) * u64::MAX as f64) as u64
            })
            .collect();
        Zipf { cumulative }
    }

    /// A rank, from one number of `rng`.
    pub fn draw(&self, rng: &mut Rng) -> usize {
        let u = rng.next();
        let i = self.cumulative.partition_point(|&c| c < u);
        i.min(self.cumulative.len().saturating_sub(1))
    }
}
