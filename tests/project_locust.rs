//! `sediment project locust` on the fixture crawls, loaded into a real MariaDB server
//! (Debian's packages, started privately by scripts/mariadb-test-server.sh), and checked
//! against warcio's view of the same WARCs (scripts/wordindex_reference.py) and the
//! fixture site's files.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{fixture, ok};
use serde_json::Value;

const SITE: &str = "http://127.0.0.1:47213";

fn crawls() -> Vec<PathBuf> {
    vec![
        fixture("crawl/crawl1.warc.gz"),
        fixture("crawl/crawl2.warc.gz"),
    ]
}

/// A store with both fixture crawls and the locust files written from it.
fn project(tmp: &Path, threads: &str) -> PathBuf {
    let store = tmp.join("store");
    if !store.exists() {
        let mut args = vec!["import-warc".to_string()];
        args.extend(crawls().iter().map(|p| p.display().to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(&store, &args);
    }
    let out = tmp.join(format!("locust-{threads}"));
    let warc_dir = fixture("crawl").display().to_string();
    let out_arg = out.display().to_string();
    ok(
        &store,
        &[
            "project",
            "locust",
            "-o",
            &out_arg,
            "--warc-dir",
            &warc_dir,
            "--threads",
            threads,
        ],
    );
    out
}

/// warcio's latest capture of every URL; `None` after `common::skip` without
/// python3/warcio.
#[track_caller]
pub fn reference() -> Option<BTreeMap<String, Value>> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/wordindex_reference.py"
    );
    let mut args = vec![PathBuf::from(script)];
    args.extend(crawls());
    let out = common::python_output(&["warcio"], args)?;
    Some(serde_json::from_slice(&out).expect("reference JSON"))
}

/// The private MariaDB server; stopped when dropped.
struct Server {
    dir: PathBuf,
    port: String,
}

impl Server {
    /// Starts the server; `None` after `common::skip` when MariaDB cannot run here.
    #[track_caller]
    fn start(dir: &Path) -> Option<Server> {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/mariadb-test-server.sh"
        );
        let output = Command::new("bash")
            .arg(script)
            .arg("start")
            .arg(dir)
            .stderr(Stdio::piped())
            .output()
            .expect("run mariadb-test-server.sh");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let port = stdout
            .lines()
            .find_map(|l| l.strip_prefix("PORT="))
            .map(str::to_string);
        match (output.status.code(), port) {
            (Some(0), Some(port)) => Some(Server {
                dir: dir.to_path_buf(),
                port,
            }),
            // The script's "cannot run here": no packages and no root or apt-get.
            (Some(2), _) => {
                common::skip(
                    "a MariaDB server (Debian's mariadb-server and mariadb-client)",
                    "scripts/setup.sh installs them; scripts/mariadb-test-server.sh does as root",
                );
                None
            }
            _ => panic!(
                "scripts/mariadb-test-server.sh start failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ),
        }
    }

    fn mysql(&self, db: Option<&str>, input: &[u8], extra: &[&str]) -> (bool, String) {
        use std::io::Write;
        let mut cmd = Command::new("mysql");
        cmd.args([
            "--no-defaults",
            "--protocol=tcp",
            "-h",
            "127.0.0.1",
            "-u",
            "root",
        ])
        .args(["-P", &self.port])
        .args(extra)
        .args(db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("run mysql");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(input).expect("write to mysql");
        drop(stdin);
        let out = child.wait_with_output().expect("mysql output");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    /// Rows of a query, tab-separated columns (use HEX() for binary values).
    fn query(&self, sql: &str) -> Vec<Vec<String>> {
        let (ok, text) = self.mysql(Some("locust"), sql.as_bytes(), &["-N", "-B"]);
        assert!(ok, "{sql}: {text}");
        text.lines()
            .map(|l| l.split('\t').map(str::to_string).collect())
            .collect()
    }

    fn one(&self, sql: &str) -> String {
        self.query(sql)
            .first()
            .and_then(|r| r.first().cloned())
            .unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/mariadb-test-server.sh"
        );
        let _ = Command::new("bash")
            .arg(script)
            .arg("stop")
            .arg(&self.dir)
            .output();
    }
}

fn unpack(blob: &[u8]) -> Vec<u8> {
    let length = u32::from_le_bytes(blob[..4].try_into().expect("4 bytes"));
    if length == u32::MAX {
        return blob[4..].to_vec();
    }
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(&blob[4..])
        .read_to_end(&mut out)
        .expect("zlib");
    assert_eq!(out.len(), length as usize, "length prefix");
    out
}

fn md5_hex(bytes: &[u8]) -> String {
    use md5::{Digest, Md5};
    hex::encode(Md5::digest(bytes))
}

#[test]
fn locust_sql_loads_into_mariadb_without_warnings_and_matches_the_crawl() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = project(tmp.path(), "2");
    let Some(server) = Server::start(&tmp.path().join("mariadb")) else {
        return;
    };
    let (created, text) = server.mysql(None, b"CREATE DATABASE locust", &[]);
    assert!(created, "{text}");

    // schema.sql, then the data files in name order; --show-warnings prints every note
    // and warning after its statement.
    let mut files: Vec<PathBuf> = std::fs::read_dir(&out)
        .expect("read output")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("data-"))
        })
        .collect();
    files.sort();
    assert!(!files.is_empty());
    files.insert(0, out.join("schema.sql"));
    for file in &files {
        let sql = std::fs::read(file).expect("read SQL");
        let (loaded, text) = server.mysql(Some("locust"), &sql, &["--show-warnings"]);
        assert!(loaded, "{} failed: {text}", file.display());
        assert!(
            !text.contains("Warning") && !text.contains("Note") && !text.contains("ERROR"),
            "{} reported: {text}",
            file.display()
        );
    }

    // Every table of the schema exists; stat is empty.
    let tables: BTreeSet<String> = server
        .query("SHOW TABLES")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    let mut expected: BTreeSet<String> = ["wordurl", "urlword", "robots", "sites", "stat"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    expected.extend((0..16).map(|i| format!("urlwords{i:02}")));
    assert_eq!(tables, expected);
    assert_eq!(server.one("SELECT COUNT(*) FROM stat"), "0");

    // urlword: unique URLs and ids; captured URLs are those of the crawl (38 per the
    // fixture README) with warcio's status and MD5 of the latest capture.
    assert_eq!(
        server.one("SELECT COUNT(*) = COUNT(DISTINCT url) AND MIN(url_id) = 1 AND MAX(url_id) = COUNT(*) FROM urlword"),
        "1"
    );
    let captured: BTreeMap<String, (String, String)> = server
        .query("SELECT url, status, crc FROM urlword WHERE status <> 0")
        .into_iter()
        .map(|r| (r[0].clone(), (r[1].clone(), r[2].clone())))
        .collect();
    assert_eq!(captured.len(), 38);
    let documents = server.one(
        "SELECT (SELECT COUNT(*) FROM urlwords00) + (SELECT COUNT(*) FROM urlwords01) + (SELECT COUNT(*) FROM urlwords02) + (SELECT COUNT(*) FROM urlwords03) + (SELECT COUNT(*) FROM urlwords04) + (SELECT COUNT(*) FROM urlwords05) + (SELECT COUNT(*) FROM urlwords06) + (SELECT COUNT(*) FROM urlwords07) + (SELECT COUNT(*) FROM urlwords08) + (SELECT COUNT(*) FROM urlwords09) + (SELECT COUNT(*) FROM urlwords10) + (SELECT COUNT(*) FROM urlwords11) + (SELECT COUNT(*) FROM urlwords12) + (SELECT COUNT(*) FROM urlwords13) + (SELECT COUNT(*) FROM urlwords14) + (SELECT COUNT(*) FROM urlwords15)",
    );
    let reference = reference();
    if let Some(reference) = &reference {
        let want: BTreeMap<String, (String, String)> = reference
            .iter()
            .map(|(url, e)| {
                (
                    url.clone(),
                    (
                        e["status"].to_string(),
                        e["md5"].as_str().unwrap_or("").to_string(),
                    ),
                )
            })
            .collect();
        assert_eq!(captured, want);
        let with_body = reference
            .values()
            .filter(|e| e.get("md5").is_some())
            .count();
        assert_eq!(documents, with_body.to_string());
    }

    // Each document sits in urlwords(url_id mod 16); its words blob is the document.
    let mut id_to_url: HashMap<u32, String> = HashMap::new();
    for row in server.query("SELECT url_id, url FROM urlword") {
        id_to_url.insert(row[0].parse().expect("id"), row[1].clone());
    }
    let mut hrefs_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut checked_blobs = 0;
    for nn in 0..16 {
        for row in server.query(&format!(
            "SELECT w.url_id, u.url, u.crc, HEX(w.words), HEX(w.hrefs), w.docsize, w.url_id % 16 FROM urlwords{nn:02} w JOIN urlword u USING (url_id)"
        )) {
            assert_eq!(row[6], nn.to_string(), "row in the wrong table");
            let document = unpack(&hex::decode(&row[3]).expect("hex words"));
            assert_eq!(md5_hex(&document), row[2], "{}: words blob vs crc", row[1]);
            assert_eq!(document.len().to_string(), row[5], "{}: docsize", row[1]);
            checked_blobs += 1;
            let hrefs = hex::decode(&row[4]).expect("hex hrefs");
            assert_eq!(hrefs.len() % 4, 0);
            let ids: Vec<u32> = hrefs
                .chunks(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect();
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "{}: hrefs not sorted", row[1]);
            let urls = ids.iter().map(|id| id_to_url[id].clone()).collect();
            hrefs_of.insert(row[1].clone(), urls);
            // The fixture site's own bytes for pages the second crawl fetched unchanged
            // or changed: the latest version is v2.
            let path = row[1].strip_prefix(SITE).unwrap_or("");
            let file = if path.ends_with('/') {
                format!("{path}index.html")
            } else {
                path.to_string()
            };
            let site_file = fixture(&format!("site/v2{file}"));
            if path == "/about.html" || path == "/legacy/windows-1252.html" || path == "/news.html" {
                assert_eq!(document, std::fs::read(&site_file).expect("site file"), "{path}");
            }
        }
    }
    assert_eq!(checked_blobs.to_string(), documents);

    // hrefs decode to the links Python's HTML parser finds in the same documents.
    if let Some(reference) = &reference {
        for (url, entry) in reference {
            let Some(links) = entry["links"].as_array() else {
                continue;
            };
            if entry.get("md5").is_none() {
                continue;
            }
            let want: BTreeSet<String> = links
                .iter()
                .map(|l| l.as_str().unwrap_or("").to_string())
                .collect();
            let got: BTreeSet<String> = hrefs_of
                .get(url)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .collect();
            assert_eq!(got, want, "hrefs of {url}");
        }
        // The index page links to 32 distinct other URLs (fixture README).
        assert_eq!(hrefs_of[&format!("{SITE}/")].len(), 32);
    }

    // Redirects point at their targets; error statuses are deleted; robots.txt
    // disallows the never-fetched /secret/ page.
    let redirect = server.query(
        "SELECT t.url FROM urlword r JOIN urlword t ON t.url_id = r.redir WHERE r.url LIKE '%/old-page'",
    );
    assert_eq!(redirect, [[format!("{SITE}/about.html")]]);
    assert_eq!(
        server.one("SELECT deleted FROM urlword WHERE url LIKE '%/missing.html'"),
        "1"
    );
    assert_eq!(
        server.one("SELECT deleted FROM urlword WHERE url LIKE '%/about.html'"),
        "0"
    );
    assert_eq!(
        server.query("SELECT status, deleted FROM urlword WHERE url LIKE '%/secret/plans.html'"),
        [["0", "1"]]
    );
    let robots: BTreeSet<Vec<String>> = server
        .query("SELECT hostinfo, path FROM robots")
        .into_iter()
        .collect();
    let want: BTreeSet<Vec<String>> = ["/secret/", "/contact/send"]
        .iter()
        .map(|p| vec![format!("{SITE}/"), p.to_string()])
        .collect();
    assert_eq!(robots, want);

    // sites, site_id of every URL.
    let sites: BTreeSet<String> = server
        .query("SELECT site FROM sites")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(
        sites,
        [
            format!("{SITE}/"),
            "http://example.com/".into(),
            "https://example.org/".into()
        ]
        .into_iter()
        .collect()
    );
    assert_eq!(
        server.one("SELECT COUNT(*) FROM urlword u LEFT JOIN sites s USING (site_id) WHERE s.site IS NULL OR LEFT(u.url, LENGTH(s.site)) <> s.site"),
        "0"
    );

    // Clones: /blog/ and /blog/index.html, /legal/ and /policies/terms.html have the same
    // bytes; the one with the lower url_id is the original.
    let clones: Vec<Vec<String>> = server.query(
        "SELECT url, origin FROM urlword WHERE url LIKE '%terms.html' OR url LIKE '%/blog/' OR url LIKE '%/blog/index.html' ORDER BY url_id",
    );
    let origins: Vec<&str> = clones.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(
        origins.iter().filter(|o| **o == "1").count(),
        2,
        "{clones:?}"
    );
    assert_eq!(
        server.one("SELECT COUNT(*) FROM urlword WHERE status = 0 AND origin IS NOT NULL"),
        "0"
    );

    // hops and referrers form the crawl tree: a URL is one hop below its referrer.
    assert_eq!(
        server.one("SELECT COUNT(*) FROM urlword c JOIN urlword p ON p.url_id = c.referrer WHERE c.hops <> p.hops + 1"),
        "0"
    );
    assert_eq!(
        server.one("SELECT COUNT(*) FROM urlword WHERE referrer = 0 AND hops <> 0"),
        "0"
    );
    assert_eq!(
        server.one("SELECT hops FROM urlword WHERE url LIKE '%/docs/api/intro.html'"),
        "2"
    );

    // The dictionary: word ids in byte order; words keep their diacritics.
    let words: Vec<String> = server
        .query("SELECT HEX(word) FROM wordurl ORDER BY word_id")
        .into_iter()
        .map(|r| String::from_utf8(hex::decode(&r[0]).expect("hex")).expect("UTF-8 word"))
        .collect();
    let mut sorted = words.clone();
    sorted.sort();
    assert_eq!(words, sorted);
    for word in ["großer", "führte", "café", "sediment", "stationstagebuch"] {
        assert!(words.contains(&word.to_string()), "{word} missing");
    }
    assert!(words.iter().all(|w| *w == w.to_lowercase()));

    // Page text columns of the windows-1252 page, decoded.
    let id: u32 = server
        .one("SELECT url_id FROM urlword WHERE url LIKE '%windows-1252.html'")
        .parse()
        .expect("url_id");
    let row = server.query(&format!(
        "SELECT HEX(title), charset, lang, HEX(description) FROM urlwords{:02} WHERE url_id = {id}",
        id % 16
    ));
    assert_eq!(row.len(), 1);
    let text = |h: &str| String::from_utf8(hex::decode(h).expect("hex")).expect("UTF-8");
    assert_eq!(
        text(&row[0][0]),
        "Stationstagebuch 2004 – Lakeshore Sediment Lab"
    );
    assert_eq!(row[0][1], "windows-1252");
    assert_eq!(row[0][2], "de");
    assert_eq!(
        text(&row[0][3]),
        "Das alte Stationstagebuch von 2004, Seite für Seite abgeschrieben."
    );
    // txt: the first 255 characters of the body text in document order, the h1 first —
    // here the page's <main> with its tags removed and white space collapsed.
    let txt = server.query(&format!(
        "SELECT HEX(txt) FROM urlwords{:02} WHERE url_id = {id}",
        id % 16
    ));
    let page = std::fs::read(fixture("site/v2/legacy/windows-1252.html")).expect("page");
    let (page, _, _) = encoding_rs::WINDOWS_1252.decode(&page);
    let main = &page[page.find("<main>").unwrap()..page.find("</main>").unwrap()];
    let mut stripped = String::new();
    let mut in_tag = false;
    for c in main.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                stripped.push(' ');
            }
            _ if !in_tag => stripped.push(c),
            _ => {}
        }
    }
    let collapsed = stripped.split_whitespace().collect::<Vec<_>>().join(" ");
    let want: String = collapsed
        .chars()
        .take(255)
        .collect::<String>()
        .trim_end()
        .to_string();
    assert!(want.starts_with("Stationstagebuch 2004 „Der See"));
    assert_eq!(text(&txt[0][0]), want);
    // next_index_time: the capture time plus the one-week re-index period; 0 (due now) for
    // URLs never fetched.
    assert_eq!(
        server.one(
            "SELECT COUNT(*) FROM urlword WHERE status > 0
                 AND next_index_time <> last_index_time + 604800"
        ),
        "0"
    );
    assert_eq!(
        server.one("SELECT COUNT(*) FROM urlword WHERE status = 0 AND next_index_time <> 0"),
        "0"
    );
    assert!(server.one("SELECT COUNT(*) FROM urlword WHERE status > 0") != "0");
}

/// The files are the same whatever the number of threads.
#[test]
fn locust_files_do_not_depend_on_threads() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let one = project(tmp.path(), "1");
    let two = project(tmp.path(), "3");
    let names = |dir: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("read")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&one), names(&two));
    for name in names(&one) {
        assert!(
            std::fs::read(one.join(&name)).expect("read")
                == std::fs::read(two.join(&name)).expect("read"),
            "{name} differs"
        );
    }
}
