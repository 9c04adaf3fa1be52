//! `sediment::surt::surt` against the Python `surt` package on every URL of the corpus
//! (original URLs of the CDX/CDXJ files, target URIs of the WARC/ARC files as warcio reads
//! them) and on hand-picked tricky URLs. The reference values are computed in the test by
//! scripts/surt_reference.py.

use std::io::Write;
use std::process::{Command, Stdio};

use sediment::surt::{surt, surt_into};

mod common;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/surt_reference.py");

/// URLs chosen to exercise every canonicalization step.
const TRICKY: &[&str] = &[
    // scheme, host case, www, ports
    "http://www.example.com/",
    "HTTP://WWW.EXAMPLE.COM/",
    "http://WWW.Example.Com/Path/To/File.HTML",
    "https://www.example.com/",
    "https://www.example.com:443/",
    "http://www.example.com:80/",
    "http://example.com:8080/",
    "https://example.com:80/",
    "http://example.com:0080/",
    "http://example.com:/",
    "http://example.com::/",
    "http://example.com:0/",
    "http://example.com:abc/",
    "http://example.com:99999/",
    "http://example.com:80:90/",
    "http://example.com:+80/",
    "   ",
    "\t\n",
    "http://www1.example.com/",
    "http://www23.example.com/",
    "http://wwwexample.com/",
    "http://www.com/",
    "http://www/",
    "http://www./",
    "http://.example.com./",
    "http://example..com/",
    "http://a...b.com/",
    "ftp://ftp.example.com:21/pub/file.txt",
    "ftp://www.example.com/",
    "ws://example.com:80/",
    // user info
    "http://user:pass@www.example.com/",
    "http://user@example.com:8080/x",
    "http://a@b@example.com/",
    // no scheme, odd schemes
    "example.com",
    "example.com/",
    "www.example.com/a?b=c",
    "example.com:8080/path",
    "//example.com/path",
    "/just/a/path",
    "http:example.com/path",
    "http:/example.com/path",
    "http:///example.com/path",
    "http:////////www.vikings.com",
    "http://",
    "http:",
    "https://http://example.com/",
    "http://https://http://example.com/",
    "HTTP://http://example.com/",
    "dns:www.example.com",
    "DNS:www.example.com",
    "whois://whois.arin.net/z+%2B+132.177.133.114",
    "mailto:Someone@Example.COM",
    "mailto:a@b.com?subject=Hi%20There",
    "javascript:void(0)",
    "data:text/plain;base64,SGVsbG8=",
    "about:blank",
    "urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66",
    "file:///tmp/a b.txt",
    "file:///example with spaces.png",
    "filedesc://IAH-20080430204825-00000-blackbook.arc",
    "news:comp.lang.rust",
    "x-foo+bar.baz://Host.Example/P",
    // IPv4 / IPv6 / numeric hosts
    "http://192.168.1.1/",
    "http://192.168.1.1:8080/index.html",
    "http://3232235777/",
    "http://4294967297/",
    "http://0x7f.0.0.1/",
    "http://0177.0.0.1/",
    "http://010.1.1.1/",
    "http://1.2.3/",
    "http://10.1/",
    "http://1.2.3.08/",
    "http://1.256.3.4/",
    "http://1.2.65535/",
    "http://00.1/",
    "http://127.0.0.1:80/",
    "http://[::1]/",
    "http://[::1]:8080/",
    "http://[2001:DB8::1]:443/x",
    "https://[2001:db8::1]:443/",
    "http://[fe80::1%25eth0]/",
    "http://[::1/",
    "http://x[::1]:9/",
    // IDN
    "http://bücher.de/",
    "http://BÜCHER.de/",
    "http://www.bücher.de/Straße",
    "http://straße.de/",
    "http://例え.テスト/",
    "http://xn--bcher-kva.de/",
    "http://%E4%BE%8B%E3%81%88.jp/",
    "http://b%C3%BCcher.de/",
    "http://ｅｘａｍｐｌｅ.com/",
    "http://ex%61mple.com/",
    "http://%77ww.example.com/",
    "http://ü..de/",
    "http://münchen.de./",
    "http://παράδειγμα.δοκιμή/",
    "http://пример.испытание/path?q=1",
    "http://한국.kr/",
    "http://üüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüüü.de/",
    // percent-encoding and escaping
    "http://example.com/%7Euser/",
    "http://example.com/%7euser/",
    "http://example.com/~user/",
    "http://example.com/a%20b",
    "http://example.com/a b",
    "http://example.com/a+b",
    "http://example.com/a%2Bb",
    "http://example.com/%2541",
    "http://example.com/%25%32%35",
    "http://example.com/100%",
    "http://example.com/%zz",
    "http://example.com/%",
    "http://example.com/a%2Fb",
    "http://example.com/a%3Fb?c=d",
    "http://example.com/a%23b",
    "http://example.com/%C3%A9t%C3%A9",
    "http://example.com/été",
    "http://example.com/%FF%FE",
    "http://example.com/?q=%E2%82%AC",
    "http://example.com/?q=a%26b=c",
    "http://example.com/?q=a%20b",
    "http://example.com/?q=a b",
    "http://example.com/\"quoted\"",
    "http://example.com/<tag>",
    "http://example.com/a|b^c`d{e}f\\g",
    "http://example.com/%00%01%7F",
    // fragments, empty paths, query edge cases
    "http://example.com#frag",
    "http://example.com/#frag",
    "http://example.com/page#",
    "http://example.com/?",
    "http://example.com/page?",
    "http://example.com?",
    "http://example.com/?#",
    "http://example.com/#x?y",
    "http://example.com?a=1",
    "http://example.com/?b=2&a=1&c",
    "http://example.com/?a=2&a=1&a&a=",
    "http://example.com/?&&",
    "http://example.com/?=x",
    "http://example.com/?B=2&A=1",
    "http://example.com/?a=1;b=2",
    "http://example.com/page?z=26&y=25&x=24#top",
    "http://example.com/?a=%3D&b",
    // path normalization
    "http://example.com/a/./b/../c",
    "http://example.com/../a",
    "http://example.com/../../a/..",
    "http://example.com/a//b///c/",
    "http://example.com/a/b/",
    "http://example.com//",
    "http://example.com/.",
    "http://example.com/./",
    "http://example.com/a/..",
    "http://example.com/a/%2E%2E/b",
    "http://example.com/A/B/C.HTML",
    // session ids
    "http://example.com/page;jsessionid=0123456789ABCDEF0123456789ABCDEF",
    "http://example.com/page?jsessionid=0123456789ABCDEF0123456789ABCDEF",
    "http://example.com/page?jsessionid=0123456789ABCDEF0123456789ABCDEF&x=1",
    "http://example.com/page?x=1&jsessionid=0123456789ABCDEF0123456789ABCDEF",
    "http://example.com/page?x=1&JSESSIONID=0123456789ABCDEF0123456789ABCDEF&y=2",
    "http://example.com/page?jsessionid=0123456789ABCDEF0123456789ABCDEFG",
    "http://example.com/page?phpsessid=0123456789abcdef0123456789abcdef&a=b",
    "http://example.com/page?sid=0123456789abcdef0123456789abcdef",
    "http://example.com/page?foosid=0123456789abcdef0123456789abcdef&z=1",
    "http://example.com/page?ASPSESSIONIDABCDEFGH=ABCDEFGHIJKLMNOPQRSTUVWX&q=1",
    "http://example.com/page?cfid=1234&cftoken=5678&x=y",
    "http://example.com/page?a=1&cfid=1234&cftoken=5678",
    "http://example.com/(S(lit3py55t21z5v55vlm25s55))/default.aspx",
    "http://example.com/(a(lit3py55t21z5v55vlm25s55)b(lit3py55t21z5v55vlm25s55))/x/default.aspx?x=1",
    "http://example.com/x/(lit3py55t21z5v55vlm25s55)/default.aspx",
    "http://example.com/(lit3py55t21z5v55vlm25s55)/a/(lit3py55t21z5v55vlm25s56)/b.aspx",
    "http://example.com/(lit3py55t21z5v55vlm25s55)/default.html",
    // white space
    "  http://example.com/  ",
    "http://exa\tmple.com/a\nb\r",
    "\thttp://example.com/\x0b",
    "ht\ttp://example.com/",
    "http://example.com/a b c",
    "http://exa mple.com/",
    // robots.txt and typical crawl URLs
    "http://www.iana.org/robots.txt",
    "https://en.wikipedia.org/wiki/Main_Page",
    "http://journals.ametsoc.org/doi/pdf/10.1175/2008BAMS2370.1",
    "http://www.nejm.org:80/doi/pdf/10.1056/NEJMoa1013607",
    "https://arxiv.org/pdf/1706.03762v5.pdf",
];

/// scripts/surt_reference.py's reading of the hand-picked URLs and, with `corpus`, of the
/// corpus's; `None` after `common::skip` without python3, surt (or warcio for the corpus).
#[track_caller]
fn python_reference(
    corpus: Option<&std::path::Path>,
    urls: &[&str],
) -> Option<Vec<serde_json::Value>> {
    let modules: &[&str] = if corpus.is_some() {
        &["surt", "warcio"]
    } else {
        &["surt"]
    };
    if !common::have_python(modules) {
        return None;
    }
    let request = serde_json::json!({ "corpus": corpus, "urls": urls });
    let mut child = Command::new("python3")
        .arg(SCRIPT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python3");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(request.to_string().as_bytes())
        .expect("write request");
    let output = child.wait_with_output().expect("python3 output");
    assert!(
        output.status.success(),
        "scripts/surt_reference.py failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_slice(&output.stdout).expect("reference JSON"))
}

#[test]
fn surt_equals_the_python_package_on_corpus_and_tricky_urls() {
    // Without the corpus this is recorded as a skip, and the hand-picked URLs still run.
    let corpus = common::corpus("");
    let Some(reference) = python_reference(corpus.as_deref(), TRICKY) else {
        return;
    };
    let mut compared = 0;
    let mut corpus_urls = 0;
    let mut differences = Vec::new();
    let mut python_errors = Vec::new();
    let mut buf = String::new();
    for entry in &reference {
        let url = entry["url"].as_str().expect("url");
        let source = entry["source"].as_str().unwrap_or("");
        if source != "hand-picked" {
            corpus_urls += 1;
        }
        let ours = surt(url);
        surt_into(url, &mut buf);
        assert_eq!(buf, ours, "surt_into differs from surt for {url:?}");
        match entry["surt"].as_str() {
            Some(expected) => {
                compared += 1;
                if ours != expected {
                    differences.push(format!(
                        "{url:?} ({source}): python {expected:?}, ours {ours:?}"
                    ));
                }
            }
            None => python_errors.push(format!(
                "{url:?}: python raises ({}), ours {ours:?}",
                entry["error"].as_str().unwrap_or("?")
            )),
        }
    }
    eprintln!(
        "compared {compared} URLs ({corpus_urls} from the corpus), python raised on {}:",
        python_errors.len()
    );
    for e in &python_errors {
        eprintln!("  {e}");
    }
    if corpus.is_some() {
        assert!(corpus_urls > 400, "only {corpus_urls} corpus URLs found");
    }
    assert!(compared >= TRICKY.len() - python_errors.len());
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

/// URLs assembled from tricky pieces by a fixed pseudo-random sequence, so that the steps
/// meet each other in combinations nobody wrote down.
fn generated_urls(count: usize) -> Vec<String> {
    const SCHEMES: &[&str] = &[
        "http://",
        "https://",
        "HTTP://",
        "",
        "ftp://",
        "dns:",
        "mailto:",
        "http:///",
        "http:",
        "https://http://",
        "x+y.z://",
    ];
    const USERS: &[&str] = &["", "", "", "user@", "u:p@", "@"];
    const HOSTS: &[&str] = &[
        "example.com",
        "WWW.Example.COM",
        "www3.example.org",
        "www.",
        "a..b..c",
        ".x.y.",
        "192.168.0.1",
        "3232235521",
        "0177.1",
        "1.2.3.08",
        "10.1",
        "[::1]",
        "[2001:DB8::A]",
        "bücher.de",
        "ex%61mple.com",
        "%77ww.x.org",
        "xn--bcher-kva.de",
        "例え.jp",
        "a b.com",
        "straße.de",
        "",
        "localhost",
        "ÜBER.de",
        "x%2Ey.com",
        "%zz.com",
    ];
    const PORTS: &[&str] = &["", "", "", ":80", ":443", ":8080", ":", ":0", ":021"];
    const SEGMENTS: &[&str] = &[
        "a",
        "B",
        ".",
        "..",
        "",
        "%7E",
        "~x",
        "a%20b",
        "a b",
        "%2F",
        "%25",
        "%",
        "é",
        "%C3%A9",
        "index.aspx",
        "(S(lit3py55t21z5v55vlm25s55))",
        "(lit3py55t21z5v55vlm25s55)",
        "x;y=z",
        "%2e%2e",
        "A%2541",
        "#",
        "%23",
        "\"q\"",
        "+",
    ];
    const ARGS: &[&str] = &[
        "a=1",
        "b=2",
        "A=1",
        "a",
        "a=",
        "=x",
        "",
        "jsessionid=0123456789ABCDEF0123456789ABCDEF",
        "phpsessid=0123456789abcdef0123456789abcdef",
        "sid=0123456789abcdef0123456789abcdef",
        "ASPSESSIONIDABCDEFGH=ABCDEFGHIJKLMNOPQRSTUVWX",
        "cfid=1&cftoken=2",
        "q=%26",
        "q=a b",
        "q=%E2%82%AC",
        "z=%3D",
        "k=v#frag",
    ];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: usize| {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    };
    (0..count)
        .map(|_| {
            let mut url = String::new();
            url.push_str(SCHEMES[next(SCHEMES.len())]);
            url.push_str(USERS[next(USERS.len())]);
            url.push_str(HOSTS[next(HOSTS.len())]);
            url.push_str(PORTS[next(PORTS.len())]);
            for _ in 0..next(5) {
                url.push('/');
                url.push_str(SEGMENTS[next(SEGMENTS.len())]);
            }
            if next(3) == 0 {
                url.push('/');
            }
            if next(2) == 0 {
                url.push('?');
                for i in 0..next(4) {
                    if i > 0 {
                        url.push('&');
                    }
                    url.push_str(ARGS[next(ARGS.len())]);
                }
            }
            if next(6) == 0 {
                url.push_str("#top");
            }
            url
        })
        .collect()
}

#[test]
fn surt_equals_the_python_package_on_generated_urls() {
    let urls = generated_urls(4000);
    let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    let Some(reference) = python_reference(None, &refs) else {
        return;
    };
    let mut differences = Vec::new();
    let mut compared = 0;
    for entry in &reference {
        let url = entry["url"].as_str().expect("url");
        if let Some(expected) = entry["surt"].as_str() {
            compared += 1;
            let ours = surt(url);
            if ours != expected {
                differences.push(format!("{url:?}: python {expected:?}, ours {ours:?}"));
            }
        }
    }
    // Again in URL order, where one host follows another as in a sorted CDX: the host part
    // of the last key is kept and reused (it must depend on nothing else).
    let mut sorted: Vec<&serde_json::Value> = reference.iter().collect();
    sorted.sort_by_key(|entry| entry["url"].as_str().unwrap_or_default().to_string());
    let mut buf = String::new();
    for entry in sorted {
        let url = entry["url"].as_str().expect("url");
        if let Some(expected) = entry["surt"].as_str() {
            surt_into(url, &mut buf);
            if buf != expected {
                differences.push(format!(
                    "in URL order, {url:?}: python {expected:?}, ours {buf:?}"
                ));
            }
        }
    }
    eprintln!("compared {compared} generated URLs, in two orders");
    assert!(compared > 1000);
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
