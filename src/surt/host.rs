//! The host part of a SURT key: host and port split from the authority, percent-decoding
//! aside (the caller does it), dots collapsed and trimmed, numeric hosts as dotted IPv4 the
//! way `inet_aton` reads them, a leading `www.`/`wwwN.` removed, and IDNA 2003-style
//! conversion of non-ASCII names.

/// Host and port of a network location, following Python's `urllib` rules for
/// `hostname` and `port` (user info dropped, IPv6 brackets removed). A port that is not a
/// number in 1..=65535 is ignored (Python raises there).
pub(super) fn split_host_port(netloc: &[u8]) -> (Option<&[u8]>, Option<u32>) {
    // A host followed by a bare colon has no port.
    let trailing = netloc.iter().rev().take_while(|&&b| b == b':').count();
    let netloc = &netloc[..netloc.len() - trailing];
    let hostinfo = match netloc.iter().rposition(|&b| b == b'@') {
        Some(at) => &netloc[at + 1..],
        None => netloc,
    };
    let (host, port) = match hostinfo.iter().position(|&b| b == b'[') {
        Some(open) => {
            let bracketed = &hostinfo[open + 1..];
            match bracketed.iter().position(|&b| b == b']') {
                Some(close) => {
                    let after = &bracketed[close + 1..];
                    let port = match after.iter().position(|&b| b == b':') {
                        Some(c) => &after[c + 1..],
                        None => &[][..],
                    };
                    (&bracketed[..close], port)
                }
                None => (bracketed, &[][..]),
            }
        }
        None => match hostinfo.iter().position(|&b| b == b':') {
            Some(c) => (&hostinfo[..c], &hostinfo[c + 1..]),
            None => (hostinfo, &[][..]),
        },
    };
    let port = parse_port(port);
    ((!host.is_empty()).then_some(host), port)
}

fn parse_port(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut value: u32 = 0;
    for &d in digits {
        value = value.checked_mul(10)?.checked_add(u32::from(d - b'0'))?;
    }
    // Port 0 counts as no port.
    (1..=65535).contains(&value).then_some(value)
}

/// Replaces each non-overlapping `..` with `.`, scanning once from the left.
pub(super) fn collapse_double_dots(host: &mut Vec<u8>, tmp: &mut Vec<u8>) {
    if !host.windows(2).any(|w| w == b"..") {
        return;
    }
    tmp.clear();
    let mut i = 0;
    while i < host.len() {
        if host[i] == b'.' && host.get(i + 1) == Some(&b'.') {
            tmp.push(b'.');
            i += 2;
        } else {
            tmp.push(host[i]);
            i += 1;
        }
    }
    std::mem::swap(host, tmp);
}

pub(super) fn trim_dots(host: &mut Vec<u8>) {
    let end = host.iter().rposition(|&b| b != b'.').map_or(0, |p| p + 1);
    host.truncate(end);
    let start = host.iter().position(|&b| b != b'.').unwrap_or(host.len());
    host.drain(..start);
}

/// Drops a leading `www.` or `www<digits>.`.
pub(super) fn strip_www_prefix(host: &mut Vec<u8>) {
    if !host.starts_with(b"www") {
        return;
    }
    let digits = host[3..].iter().take_while(|b| b.is_ascii_digit()).count();
    if host.get(3 + digits) == Some(&b'.') {
        host.drain(..4 + digits);
    }
}

/// A host written as a number is an IPv4 address: all digits (any size, masked to 32 bits),
/// or 1–4 dot-separated decimal parts starting with `[1-9]`, or octal parts starting with `0`,
/// resolved with the C library's `inet_aton` rules (what the package's resolver call does).
pub(super) fn numeric_host_to_ipv4(host: &[u8]) -> Option<u32> {
    if host.is_empty() {
        return None;
    }
    if host.iter().all(u8::is_ascii_digit) {
        let mut v: u32 = 0;
        for &d in host {
            v = v.wrapping_mul(10).wrapping_add(u32::from(d - b'0'));
        }
        return Some(v);
    }
    let parts = host.split(|&b| b == b'.');
    let count = parts.clone().count();
    if count > 4 {
        return None;
    }
    let octal_shape = host[0] == b'0';
    let first_ok = if octal_shape {
        true
    } else {
        (b'1'..=b'9').contains(&host[0])
    };
    let digit_ok = |b: &u8| {
        if octal_shape {
            (b'0'..=b'7').contains(b)
        } else {
            b.is_ascii_digit()
        }
    };
    if !first_ok {
        return None;
    }
    for part in parts.clone() {
        if part.is_empty() || !part.iter().all(digit_ok) {
            return None;
        }
    }
    inet_aton(parts, count)
}

/// `inet_aton` on digit-only parts: a leading `0` means octal; all parts but the last are
/// bytes, the last fills the remaining bits.
fn inet_aton<'a>(parts: impl Iterator<Item = &'a [u8]>, count: usize) -> Option<u32> {
    let mut values = [0u64; 4];
    for (i, part) in parts.enumerate() {
        let (radix, digits) = if part.len() > 1 && part[0] == b'0' {
            (8u64, &part[1..])
        } else {
            (10u64, part)
        };
        let mut v: u64 = 0;
        for &d in digits {
            let d = u64::from(d - b'0');
            if d >= radix {
                return None;
            }
            v = v.checked_mul(radix)?.checked_add(d)?;
        }
        values[i] = v;
    }
    let last = values[count - 1];
    let last_max: u64 = match count {
        1 => 0xffff_ffff,
        2 => 0xff_ffff,
        3 => 0xffff,
        _ => 0xff,
    };
    if values[..count - 1].iter().any(|&v| v > 0xff) || last > last_max {
        return None;
    }
    let mut addr: u64 = last;
    for (i, &v) in values[..count - 1].iter().enumerate() {
        addr |= v << (24 - 8 * i);
    }
    u32::try_from(addr).ok()
}

pub(super) fn write_dotted_quad(ip: u32, out: &mut Vec<u8>) {
    for (i, octet) in ip.to_be_bytes().iter().enumerate() {
        if i > 0 {
            out.push(b'.');
        }
        out.extend_from_slice(itoa::Buffer::new().format(*octet).as_bytes());
    }
}

/// IDNA 2003 ToASCII of a host (as Python's `idna` codec does), or None when it fails (the
/// caller then keeps the raw bytes, percent-escaped). Invalid UTF-8 is skipped, like
/// Python's `decode('utf-8', 'ignore')`.
pub(super) fn idna_to_ascii(host: &[u8]) -> Option<String> {
    let text = decode_utf8_ignoring_errors(host);
    if text.is_empty() {
        return Some(String::new());
    }
    let is_dot = |c: char| matches!(c, '.' | '\u{3002}' | '\u{ff0e}' | '\u{ff61}');
    if text.is_ascii() {
        // Only reachable when invalid bytes were dropped: Python's ASCII fast path.
        let labels: Vec<&str> = text.split('.').collect();
        let (last, init) = labels.split_last()?;
        if init.iter().any(|l| l.is_empty() || l.len() >= 64) || last.len() >= 64 {
            return None;
        }
        return Some(text);
    }
    let mut labels: Vec<&str> = text.split(is_dot).collect();
    let trailing_dot = labels.last().is_some_and(|l| l.is_empty());
    if trailing_dot {
        labels.pop();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for label in labels {
        if !out.is_empty() {
            out.push('.');
        }
        let ascii = idna_label_to_ascii(label)?;
        if ascii.is_empty() || ascii.len() >= 64 {
            return None;
        }
        out.push_str(&ascii);
    }
    if trailing_dot {
        out.push('.');
    }
    Some(out)
}

/// One label: ASCII labels are kept as they are; others are mapped (case folding, NFKC) and
/// Punycode-encoded. The UTS 46 mapping of the `idna` crate is IDNA 2008-based; the four
/// characters where IDNA 2003 differs are mapped first the 2003 way.
fn idna_label_to_ascii(label: &str) -> Option<String> {
    if label.is_ascii() {
        return Some(label.to_string());
    }
    if label
        .get(..4)
        .is_some_and(|p| p.eq_ignore_ascii_case("xn--"))
    {
        return None;
    }
    let mut mapped = String::with_capacity(label.len());
    for c in label.chars() {
        match c {
            'ß' => mapped.push_str("ss"),
            'ς' => mapped.push('σ'),
            '\u{200c}' | '\u{200d}' => {}
            _ => mapped.push(c),
        }
    }
    let ascii = idna::uts46::Uts46::new()
        .to_ascii(
            mapped.as_bytes(),
            idna::uts46::AsciiDenyList::EMPTY,
            idna::uts46::Hyphens::Allow,
            idna::uts46::DnsLength::Ignore,
        )
        .ok()?;
    // A label must stay one label.
    (!ascii.contains('.')).then(|| ascii.into_owned())
}

fn decode_utf8_ignoring_errors(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (good, bad) = bytes.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                match e.error_len() {
                    Some(n) => bytes = &bad[n..],
                    None => return out,
                }
            }
        }
    }
}
