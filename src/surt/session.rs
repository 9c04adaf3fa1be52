//! Session ids removed from paths (ASP.NET cookieless segments) and from queries
//! (`jsessionid`, `phpsessid`, `sid`, `aspsessionid`, ColdFusion's `cfid`/`cftoken`), as
//! the wayback machine's URL canonicalizer removes them.

fn starts_with_ignore_case(text: &[u8], prefix: &[u8]) -> bool {
    text.len() >= prefix.len() && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// Whether `needle` (lower-case ASCII) occurs in `text`, ignoring ASCII case. Candidates
/// are found with `memchr2` on the first byte, as this runs on every path and query.
fn contains_ignore_case(text: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), text).any(|i| {
        text.get(i + 1..i + needle.len())
            .is_some_and(|t| t.eq_ignore_ascii_case(rest))
    })
}

/// Removes ASP.NET cookieless session segments: `/(S(24 chars))/…x.aspx` (one or more
/// `X(24 chars)` groups inside parentheses) and `/(24 chars)/…x.aspx`.
pub(super) fn strip_path_session_ids(path: &mut Vec<u8>, tmp: &mut Vec<u8>) {
    if !contains_ignore_case(path, b".aspx") {
        return;
    }
    for grouped in [true, false] {
        if let Some((at, len)) = find_path_session_id(path, grouped) {
            tmp.clear();
            tmp.extend_from_slice(&path[..at]);
            tmp.extend_from_slice(&path[at + len..]);
            std::mem::swap(path, tmp);
        }
    }
}

/// The segment removed by one of the two path patterns: its start (just after a `/`; the
/// last such start that matches, as the greedy pattern picks) and length.
fn find_path_session_id(path: &[u8], grouped: bool) -> Option<(usize, usize)> {
    let is_id = |s: &[u8]| s.len() == 24 && s.iter().all(u8::is_ascii_alphanumeric);
    (1..path.len()).rev().find_map(|at| {
        if path[at - 1] != b'/' || path[at] != b'(' {
            return None;
        }
        let mut i = at + 1;
        if grouped {
            let mut groups = 0;
            while path.get(i).is_some_and(u8::is_ascii_alphabetic)
                && path.get(i + 1) == Some(&b'(')
                && path.get(i + 2..i + 26).is_some_and(is_id)
                && path.get(i + 26) == Some(&b')')
            {
                i += 27;
                groups += 1;
            }
            if groups == 0 || path.get(i) != Some(&b')') {
                return None;
            }
            i += 1;
        } else {
            if !path.get(i..i + 24).is_some_and(is_id) || path.get(i + 24) != Some(&b')') {
                return None;
            }
            i += 25;
        }
        if path.get(i) != Some(&b'/') {
            return None;
        }
        i += 1;
        // What follows must be `[^?]+\.aspx.*`: an `.aspx` after at least one byte, with no
        // `?` before it.
        let rest = &path[i..];
        let limit = rest.iter().position(|&b| b == b'?').unwrap_or(rest.len());
        let aspx = (1..)
            .take_while(|k| k + 5 <= limit)
            .any(|k| starts_with_ignore_case(&rest[k..], b".aspx"));
        aspx.then_some((at, i - at))
    })
}

/// Session-id query patterns, applied in this order.
#[derive(Clone, Copy)]
enum QuerySession {
    JSessionId,
    PhpSessId,
    Sid,
    AspSessionId,
    ColdFusion,
}

/// Removes session ids from a query: `jsessionid=`, `phpsessid=`, `sid=` followed by 32
/// alphanumerics, `ASPSESSIONID` + 8 letters `=` 24 letters, and `cfid=…&cftoken=…`, each
/// only when it ends the query or is followed by `&`.
pub(super) fn strip_query_session_ids(query: &mut Vec<u8>, tmp: &mut Vec<u8>) {
    for kind in [
        QuerySession::JSessionId,
        QuerySession::PhpSessId,
        QuerySession::Sid,
        QuerySession::AspSessionId,
        QuerySession::ColdFusion,
    ] {
        let anchor: &[u8] = match kind {
            QuerySession::JSessionId => b"jsessionid=",
            QuerySession::PhpSessId => b"phpsessid=",
            QuerySession::Sid => b"sid=",
            QuerySession::AspSessionId => b"aspsessionid",
            QuerySession::ColdFusion => b"cfid=",
        };
        if !contains_ignore_case(query, anchor) {
            continue;
        }
        // The greedy prefix means the last position where the pattern matches wins.
        let found = (0..query.len())
            .rev()
            .find_map(|at| query_session_len(&query[at..], kind).map(|len| (at, len)));
        if let Some((at, len)) = found {
            tmp.clear();
            tmp.extend_from_slice(&query[..at]);
            // After the id: the end, or `&` and the rest (kept only when not empty).
            if query.get(at + len) == Some(&b'&') {
                tmp.extend_from_slice(&query[at + len + 1..]);
            }
            std::mem::swap(query, tmp);
        }
    }
}

/// Length of the session id starting `text` when it is followed by the end or `&`.
fn query_session_len(text: &[u8], kind: QuerySession) -> Option<usize> {
    let run =
        |from: usize, pred: fn(&u8) -> bool| text[from..].iter().take_while(|b| pred(b)).count();
    let fixed = |prefix: &[u8], n: usize| -> Option<usize> {
        if !starts_with_ignore_case(text, prefix) {
            return None;
        }
        let p = prefix.len();
        (run(p, u8::is_ascii_alphanumeric) >= n).then_some(p + n)
    };
    let len = match kind {
        QuerySession::JSessionId => fixed(b"jsessionid=", 32)?,
        QuerySession::PhpSessId => fixed(b"phpsessid=", 32)?,
        QuerySession::Sid => fixed(b"sid=", 32)?,
        QuerySession::AspSessionId => {
            let p = b"aspsessionid".len();
            if !starts_with_ignore_case(text, b"aspsessionid")
                || run(p, u8::is_ascii_alphabetic) < 8
                || text.get(p + 8) != Some(&b'=')
                || run(p + 9, u8::is_ascii_alphabetic) < 24
            {
                return None;
            }
            p + 9 + 24
        }
        QuerySession::ColdFusion => {
            if !starts_with_ignore_case(text, b"cfid=") {
                return None;
            }
            let v1 = run(5, |&b| b != b'&');
            let after = 5 + v1;
            if v1 == 0 || !starts_with_ignore_case(&text[after..], b"&cftoken=") {
                return None;
            }
            let v2_start = after + b"&cftoken=".len();
            let v2 = run(v2_start, |&b| b != b'&');
            if v2 == 0 {
                return None;
            }
            v2_start + v2
        }
    };
    match text.get(len) {
        None | Some(b'&') => Some(len),
        _ => None,
    }
}
