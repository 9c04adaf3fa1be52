//! The crawl and the summary database of one store agree (issue 14): every HTTP capture
//! joins across the two databases on crawl_uuid and agent_uuid, a crawl run cut into
//! several WARC files is one agent, non-HTTP records are in neither, canonical links a
//! crawler cannot fetch are ignored by both, both record the same redirects (HTTP and
//! meta refresh) with their source, and both say the same pages are indexable. Checked on
//! real wget crawls (the two-crawl fixture and the crawl-run fixture cut by
//! `--warc-max-size`) and on a Heritrix WARC.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{corpus, fixture, ok, sediment};
use rusqlite::Connection;

struct Projected {
    _dir: tempfile::TempDir,
    crawl: PathBuf,
    summary: PathBuf,
}

fn project_both(warcs: &[PathBuf]) -> Projected {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let mut import = vec!["import-warc".to_string()];
    import.extend(warcs.iter().map(|p| p.to_str().unwrap().to_string()));
    let import: Vec<&str> = import.iter().map(String::as_str).collect();
    ok(&store, &import);
    let crawl = dir.path().join("crawl.db");
    let summary = dir.path().join("summary.db");
    for (kind, db) in [("crawl", &crawl), ("summary", &summary)] {
        let run = sediment(&store, &["project", kind, "-o", db.to_str().unwrap()]);
        assert_eq!(run.status, 0, "project {kind}: {}", run.stderr);
    }
    Projected {
        _dir: dir,
        crawl,
        summary,
    }
}

/// crawl_log.message of a failed fetch (a request record without response).
const FAILED_FETCH: &str = "no response: the archive holds the request only";

/// The crawl database with the summary database attached as `s`. Failed fetches are
/// crawl_log rows the summary has no capture for: a temporary view `crawl_log` (which
/// shadows `main.crawl_log`) leaves them out, so both sides list the same captures.
fn attached(p: &Projected) -> Connection {
    let conn = Connection::open(&p.crawl).unwrap();
    conn.execute("ATTACH DATABASE ?1 AS s", [p.summary.to_str().unwrap()])
        .unwrap();
    conn.execute_batch(&format!(
        "CREATE TEMP VIEW crawl_log AS SELECT * FROM main.crawl_log
         WHERE message IS NOT '{FAILED_FETCH}'"
    ))
    .unwrap();
    conn
}

fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn strings(conn: &Connection, sql: &str) -> BTreeSet<String> {
    let mut stmt = conn.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    stmt.query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn run_warcs() -> Vec<PathBuf> {
    let dir = fixture("crawl-run");
    let mut warcs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    warcs.sort();
    assert_eq!(warcs.len(), 4, "three data files and wget's meta file");
    warcs
}

/// Every HTTP capture is a crawl_log row and a crawl_summary row with the same crawl UUID,
/// agent UUID, time, type and exit code; nothing is left on either side.
fn assert_captures_join(conn: &Connection) {
    let crawl_rows = count(conn, "SELECT count(*) FROM crawl_log");
    let summary_rows = count(conn, "SELECT count(*) FROM s.crawl_summary");
    assert!(crawl_rows > 0);
    assert_eq!(crawl_rows, summary_rows, "one row per HTTP capture in each");
    let joined = count(
        conn,
        "SELECT count(*) FROM crawl_log l
         JOIN agent a USING (agent_id)
         JOIN s.crawl_summary cs ON cs.crawl_uuid = l.crawl_uuid
         WHERE cs.agent_uuid = a.agent_uuid
           AND cs.time_started_unix_utc = l.time_started_unix_utc
           AND cs.crawl_type = l.crawl_type
           AND cs.exit_code = l.exit_code",
    );
    assert_eq!(joined, crawl_rows, "100% of the captures join, and agree");
    // the same URL on both sides
    let same_url = count(
        conn,
        "SELECT count(*) FROM crawl_log l JOIN url u USING (url_id)
         JOIN s.crawl_summary cs ON cs.crawl_uuid = l.crawl_uuid
         JOIN s.entity_generation eg USING (entity_generation_id)
         JOIN s.url su ON su.url_id = eg.url_id
         WHERE su.str_url = u.str_url",
    );
    assert_eq!(same_url, crawl_rows);
    // request.robotstxt_approved and request_duration_ms as in the summary
    let same_request = count(
        conn,
        "SELECT count(*) FROM crawl_log l JOIN request r USING (crawl_log_id)
         JOIN s.crawl_summary cs ON cs.crawl_uuid = l.crawl_uuid
         WHERE cs.was_robotstxt_approved = r.robotstxt_approved
           AND cs.request_duration_ms IS r.request_duration_ms",
    );
    assert_eq!(same_request, crawl_rows);
}

/// Both databases record the same redirects, (from, to, information_source), and the
/// same pages are indexable: exit 20 in both, and the search index holds exactly the open,
/// non-duplicate generations with text whose captures have exit 20.
fn assert_redirects_and_indexing_agree(conn: &Connection) {
    let crawl_redirects = strings(
        conn,
        "SELECT DISTINCT u.str_url || ' -> ' || t.str_url
                || COALESCE('#' || r.to_url_fragment, '') || ' ' || r.information_source
         FROM redirect r JOIN url u ON u.url_id = r.url_id JOIN url t ON t.url_id = r.to_url_id",
    );
    let summary_redirects = strings(
        conn,
        "SELECT DISTINCT u.str_url || ' -> ' || t.str_url
                || COALESCE('#' || r.to_url_fragment, '') || ' ' || r.information_source
         FROM s.redirect_summary r JOIN s.entity_generation eg USING (entity_generation_id)
         JOIN s.url u ON u.url_id = eg.url_id JOIN s.url t ON t.url_id = r.to_url_id",
    );
    assert_eq!(crawl_redirects, summary_redirects);
    let not_indexable_in_search = count(
        conn,
        "SELECT count(*) FROM s.full_text_entity_index f
         JOIN s.crawl_summary cs ON cs.entity_generation_id = f.rowid
         WHERE cs.exit_code <> 20",
    );
    assert_eq!(not_indexable_in_search, 0);
}

#[test]
fn a_run_in_several_warc_files_joins_across_both_databases() {
    let p = project_both(&run_warcs());
    let conn = attached(&p);
    assert_captures_join(&conn);
    assert_redirects_and_indexing_agree(&conn);
    let site = "http://127.0.0.1:47214";
    // The request for /guide/ that wget wrote and never sent (run-00001) is a failed fetch:
    // a crawl_log and a request row without HTTP status (issue 34, item 3).
    assert_eq!(
        strings(
            &conn,
            &format!(
                "SELECT u.str_url || ' ' || l.exit_code || ' ' || COALESCE(r.http_status_code, '-')
                 FROM main.crawl_log l JOIN url u USING (url_id) JOIN request r USING (crawl_log_id)
                 WHERE l.message = '{FAILED_FETCH}'"
            )
        ),
        BTreeSet::from([format!("{site}/guide/ 102 -")])
    );

    // One crawl run, one agent, in both databases.
    assert_eq!(
        strings(&conn, "SELECT name FROM agent"),
        BTreeSet::from([
            "Wget/1.21.3 (linux-gnu); operator: Sediment fixture crawler; warc: run-*.warc.gz"
                .to_string()
        ])
    );
    assert_eq!(
        count(
            &conn,
            "SELECT count(DISTINCT agent_uuid) FROM s.crawl_summary"
        ),
        1
    );
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM agent a JOIN s.crawl_summary cs ON cs.agent_uuid = a.agent_uuid"
        ),
        count(&conn, "SELECT count(*) FROM s.crawl_summary")
    );
    // the run spans its files: from the first capture of run-00000 to /print.html in run-00002
    let (first, last): (i64, i64) = conn
        .query_row(
            "SELECT time_started_unix_utc, time_finished_unix_utc FROM agent",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (first, last),
        conn.query_row(
            "SELECT min(time_started_unix_utc), max(time_started_unix_utc) FROM crawl_log",
            [],
            |r| Ok((r.get(0)?, r.get(1)?))
        )
        .unwrap()
    );

    // wget's metadata:// records are crawls in neither database; the 13 responses of the
    // CDX wget wrote are.
    let cdx_lines = std::fs::read_to_string(fixture("crawl-run/run.cdx"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with(" CDX"))
        .count() as i64;
    assert_eq!(count(&conn, "SELECT count(*) FROM crawl_log"), cdx_lines);
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM url WHERE str_url NOT LIKE 'http%'"
        ),
        0
    );

    // Canonical links to file:/// are ignored: the guide pages are indexed (20) in both,
    // have no canonical URL and are in the search index; print.html names another web URL
    // and is not canonical (180) in both, and not searchable.
    let exit_of = |path: &str| -> BTreeSet<String> {
        strings(
            &conn,
            &format!(
                "SELECT l.exit_code || '/' || cs.exit_code FROM crawl_log l JOIN url u USING (url_id)
                 JOIN s.crawl_summary cs ON cs.crawl_uuid = l.crawl_uuid
                 WHERE u.str_url = '{site}{path}'"
            ),
        )
    };
    for page in [
        "intro", "sampling", "dating", "pollen", "isotopes", "archive",
    ] {
        assert_eq!(
            exit_of(&format!("/guide/{page}.html")),
            BTreeSet::from(["20/20".to_string()]),
            "{page}"
        );
    }
    assert_eq!(
        exit_of("/print.html"),
        BTreeSet::from(["180/180".to_string()])
    );
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM file WHERE canonical_url_id IS NOT NULL"
        ),
        1,
        "only print.html has a canonical URL"
    );
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM s.file_summary WHERE canonical_url_id IS NOT NULL"
        ),
        1
    );
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM url WHERE str_url LIKE 'file:%'"
        ),
        0
    );
    let searchable = strings(
        &conn,
        "SELECT u.str_url FROM s.full_text_entity_index f
         JOIN s.entity_generation eg ON eg.entity_generation_id = f.rowid
         JOIN s.url u ON u.url_id = eg.url_id",
    );
    assert!(searchable.contains(&format!("{site}/guide/intro.html")));
    assert!(!searchable.contains(&format!("{site}/print.html")));

    // Redirects: the 301 of /guide (Location header, 1) and the meta refresh of
    // /moved.html (page body, 3) in both; the delayed refresh of /later.html in neither.
    let redirects = strings(
        &conn,
        "SELECT u.str_url || ' -> ' || t.str_url || ' ' || r.information_source
                || ' ' || r.is_permanent
         FROM redirect r JOIN url u ON u.url_id = r.url_id JOIN url t ON t.url_id = r.to_url_id",
    );
    assert_eq!(
        redirects,
        BTreeSet::from([
            format!("{site}/guide -> {site}/guide/ 1 1"),
            format!("{site}/moved.html -> {site}/guide/intro.html 3 0"),
        ])
    );
    assert_eq!(
        strings(
            &conn,
            "SELECT is_permanent || ' ' || information_source FROM s.redirect_summary"
        ),
        BTreeSet::from(["1 1".to_string(), "0 3".to_string()])
    );

    // Headlines without Sphinx's permalink glyph.
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM s.text_pile WHERE big_headlines LIKE '%¶%'"
        ),
        0
    );
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM s.document_description
             WHERE title LIKE '%¶%' OR primary_headline LIKE '%¶%'"
        ),
        0
    );
    assert_eq!(
        strings(
            &conn,
            &format!(
                "SELECT primary_headline FROM s.document_description
                 JOIN s.entity_generation USING (entity_generation_id) JOIN s.url USING (url_id)
                 WHERE str_url = '{site}/guide/intro.html'"
            )
        ),
        BTreeSet::from(["Introduction to lake cores".to_string()])
    );

    // Empty text is NULL where the seed's columns allow it (the permalinks' link text "¶"
    // stays link text: it is text).
    for (table, column) in [
        ("link_summary", "text"),
        ("document_description", "title"),
        ("document_description", "description"),
        ("document_description", "primary_headline"),
    ] {
        assert_eq!(
            count(
                &conn,
                &format!("SELECT count(*) FROM s.{table} WHERE {column} = ''")
            ),
            0,
            "{table}.{column}"
        );
    }
    assert!(
        count(
            &conn,
            "SELECT count(*) FROM s.document_description WHERE description IS NULL"
        ) > 0
    );

    // wget records no fetch duration: time_taken_ms is 0 ("not recorded"), durations NULL.
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM crawl_log WHERE time_taken_ms <> 0"
        ),
        0
    );
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM request WHERE request_duration_ms IS NOT NULL"
        ),
        0
    );
}

#[test]
fn the_two_crawl_fixture_joins_across_both_databases() {
    let p = project_both(&[
        fixture("crawl/crawl1.warc.gz"),
        fixture("crawl/crawl2.warc.gz"),
    ]);
    let conn = attached(&p);
    assert_captures_join(&conn);
    assert_redirects_and_indexing_agree(&conn);
    // two crawl runs (different warcinfo), two agents in both
    assert_eq!(count(&conn, "SELECT count(*) FROM agent"), 2);
    assert_eq!(
        count(
            &conn,
            "SELECT count(DISTINCT agent_uuid) FROM s.crawl_summary"
        ),
        2
    );
    // 117 response and revisit records, no metadata:// record
    assert_eq!(count(&conn, "SELECT count(*) FROM crawl_log"), 117);
}

/// (record id of the response, fetchTimeMs of its metadata record), read with warcio;
/// `None` after `common::skip` without python3/warcio.
#[track_caller]
fn heritrix_fetch_times(warc: &Path) -> Option<Vec<(String, i64)>> {
    let script = r#"
import json, sys
from warcio.archiveiterator import ArchiveIterator
times = {}
urls = {}
with open(sys.argv[1], 'rb') as f:
    for r in ArchiveIterator(f):
        h = r.rec_headers
        if r.rec_type == 'response':
            urls[h.get_header('WARC-Record-ID')] = (h.get_header('WARC-Target-URI'), h.get_header('WARC-Date'))
        if r.rec_type == 'metadata':
            for line in r.content_stream().read().decode('utf-8', 'replace').splitlines():
                k, _, v = line.partition(':')
                if k.strip() == 'fetchTimeMs':
                    times[h.get_header('WARC-Concurrent-To')] = int(v.strip())
out = [(urls[k][0] + ' ' + urls[k][1], v) for k, v in times.items() if k in urls and urls[k][0].startswith('http')]
print(json.dumps(sorted(out)))
"#;
    let out = common::python_output(
        &["warcio"],
        ["-c".as_ref(), script.as_ref(), warc.as_os_str()],
    )?;
    Some(serde_json::from_slice(&out).expect("the script's JSON"))
}

#[test]
fn heritrix_crawl_joins_and_keeps_its_fetch_times() {
    let Some(warc) = corpus("warcbase/example.warc.gz") else {
        return;
    };
    let p = project_both(std::slice::from_ref(&warc));
    let conn = attached(&p);
    assert_captures_join(&conn);
    assert_redirects_and_indexing_agree(&conn);
    // Heritrix's dns: records are no crawls
    assert_eq!(count(&conn, "SELECT count(*) FROM crawl_log"), 261);
    // time_taken_ms is Heritrix's fetchTimeMs of the response's metadata record
    let Some(expected) = heritrix_fetch_times(&warc) else {
        return;
    };
    assert_eq!(expected.len(), 261);
    let got: Vec<(String, i64)> = conn
        .prepare(
            "SELECT u.str_url, strftime('%Y-%m-%dT%H:%M:%SZ', l.time_started_unix_utc, 'unixepoch'),
                    l.time_taken_ms, r.request_duration_ms
             FROM crawl_log l JOIN url u USING (url_id) JOIN request r USING (crawl_log_id)",
        )
        .unwrap()
        .query_map([], |r| {
            let taken: i64 = r.get(2)?;
            let duration: Option<i64> = r.get(3)?;
            assert_eq!(Some(taken), duration);
            Ok((format!("{} {}", r.get::<_, String>(0)?, r.get::<_, String>(1)?), taken))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut got = got;
    got.sort();
    // URLs as the database stores them (WHATWG-serialized) may differ in spelling from the
    // WARC's; compare the multiset of times and the totals.
    let want_times: Vec<i64> = {
        let mut v: Vec<i64> = expected.iter().map(|(_, t)| *t).collect();
        v.sort();
        v
    };
    let mut got_times: Vec<i64> = got.iter().map(|(_, t)| *t).collect();
    got_times.sort();
    assert_eq!(got_times, want_times);
    assert!(got_times.iter().any(|&t| t > 0));
}
