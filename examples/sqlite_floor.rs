//! The floor of a projection's writing: the rows of a finished crawl or summary database,
//! held in memory, inserted again into an empty database of the same schema (every table
//! and the full-text index, the indexes built after the rows) with prepared statements in
//! one transaction, the way a program that had nothing else to do would write them. Used by
//! scripts/bench-projection-floor.sh to tell how far a projection is from SQLite itself.
//!
//! Usage: sqlite_floor SOURCE.db TARGET.db [CACHE_KIB]

use std::time::Instant;

use rusqlite::types::Value;
use rusqlite::{Connection, params_from_iter};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(source), Some(target)) = (args.next(), args.next()) else {
        eprintln!("usage: sqlite_floor SOURCE.db TARGET.db [CACHE_KIB]");
        std::process::exit(2);
    };
    let cache_kib: u64 = args.next().map_or(7168, |v| v.parse().expect("CACHE_KIB"));
    let source = Connection::open(source).expect("open SOURCE");
    let _ = std::fs::remove_file(&target);
    let target = Connection::open(&target).expect("open TARGET");
    // The connection the projections write with (project::base::open_projection_db).
    target
        .execute_batch(&format!(
            "PRAGMA page_size = 16384; \
             PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
             PRAGMA foreign_keys = OFF; \
             PRAGMA cache_size = -{cache_kib}; PRAGMA temp_store = FILE;"
        ))
        .expect("pragmas");

    // Tables in creation order (parents before the tables that refer to them), then the
    // indexes; the full-text index's shadow tables come with its CREATE VIRTUAL TABLE.
    let schema: Vec<(String, String, String)> = query(
        &source,
        "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
         ORDER BY rowid",
    )
    .into_iter()
    .map(|row| (text(&row[0]), text(&row[1]), text(&row[2])))
    .collect();
    let virtual_tables: Vec<&str> = schema
        .iter()
        .filter(|(kind, _, sql)| kind == "table" && sql.starts_with("CREATE VIRTUAL TABLE"))
        .map(|(_, name, _)| name.as_str())
        .collect();
    let is_shadow = |name: &str| {
        virtual_tables.iter().any(|v| {
            name.len() > v.len() && name.starts_with(v) && name.as_bytes()[v.len()] == b'_'
        })
    };
    let mut tables: Vec<&str> = schema
        .iter()
        .filter(|(kind, name, _)| kind == "table" && !is_shadow(name))
        .map(|(_, name, _)| name.as_str())
        .collect();
    // Parents before the tables that refer to them, so that each foreign key is checked
    // by one lookup when its row goes in.
    let parents_of: Vec<Vec<String>> = tables.iter().map(|t| parents(&source, t)).collect();
    let mut waiting: Vec<(&str, Vec<String>)> = tables.drain(..).zip(parents_of).collect();
    let mut ordered: Vec<&str> = Vec::new();
    while !waiting.is_empty() {
        let ready = waiting
            .iter()
            .position(|(t, parents)| {
                parents
                    .iter()
                    .all(|p| p == t || !waiting.iter().any(|(w, _)| w == p))
            })
            .unwrap_or(0);
        ordered.push(waiting.remove(ready).0);
    }
    let tables = ordered;
    // Indexes are made after the rows, as a bulk load would (the projections do the same
    // for the indexes whose keys arrive in no order).
    for (kind, name, sql) in &schema {
        if kind != "index" && !is_shadow(name) {
            target.execute_batch(sql).expect("schema");
        }
    }

    // Scan order: rowid or primary key order, as the projection left them. An INTEGER
    // PRIMARY KEY column carries the rowid; the full-text index's rowid is given apart.
    let mut held: Vec<Held> = Vec::new();
    let mut rows_total = 0;
    for table in &tables {
        let fts = virtual_tables.contains(table);
        let select = if fts { "rowid, *" } else { "*" };
        let rows = query(&source, &format!("SELECT {select} FROM \"{table}\""));
        let mut names = column_names(&target, table);
        if fts {
            names.insert(0, "rowid".to_string());
        }
        rows_total += rows.len();
        held.push((table, names, rows));
    }

    let start = Instant::now();
    target.execute_batch("BEGIN").expect("BEGIN");
    for (table, names, rows) in &held {
        if rows.is_empty() {
            continue;
        }
        let marks: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "INSERT INTO \"{table}\" ({}) VALUES ({})",
            names.join(", "),
            marks.join(", ")
        );
        let mut insert = target.prepare(&sql).expect("prepare");
        let table_start = Instant::now();
        for row in rows {
            insert
                .execute(params_from_iter(row.iter()))
                .expect("insert");
        }
        eprintln!(
            "{table}: {} rows, {:.3} s",
            rows.len(),
            table_start.elapsed().as_secs_f64()
        );
    }
    let index_start = Instant::now();
    for (kind, _, sql) in &schema {
        if kind == "index" {
            target.execute_batch(sql).expect("index");
        }
    }
    eprintln!("indexes: {:.3} s", index_start.elapsed().as_secs_f64());
    target.execute_batch("COMMIT").expect("COMMIT");
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "rows {rows_total} tables {} seconds {seconds:.3}",
        held.len()
    );
}

/// A table's name, its column names and its rows.
type Held<'t> = (&'t str, Vec<String>, Vec<Vec<Value>>);

fn query(conn: &Connection, sql: &str) -> Vec<Vec<Value>> {
    let mut stmt = conn.prepare(sql).expect("prepare query");
    let n = stmt.column_count();
    stmt.query_map([], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect())
        .expect("query")
        .map(|row| row.expect("row"))
        .collect()
}

/// The tables `table`'s foreign keys refer to.
fn parents(conn: &Connection, table: &str) -> Vec<String> {
    query(
        conn,
        &format!("SELECT \"table\" FROM pragma_foreign_key_list('{table}')"),
    )
    .iter()
    .map(|row| text(&row[0]))
    .collect()
}

fn column_names(conn: &Connection, table: &str) -> Vec<String> {
    let stmt = conn
        .prepare(&format!("SELECT * FROM \"{table}\" LIMIT 0"))
        .expect("columns");
    stmt.column_names().map(|c| format!("\"{c}\"")).collect()
}

fn text(value: &Value) -> String {
    match value {
        Value::Text(s) => s.clone(),
        other => format!("{other:?}"),
    }
}
