//! How a projection fills a database from empty: without the indexes whose keys arrive in
//! no order, which are then built by sorting.
//!
//! URL strings and random UUIDs land on random pages of their B-trees: once an index
//! outgrows SQLite's page cache, every insert reads a page and dirties it, and every commit
//! writes them all again. At three million captures that was a third of a projection's
//! time, and growing. `CREATE INDEX` on a loaded table sorts the keys and writes each page
//! once. Plain indexes are simply dropped for the load and made again from the schema
//! ([`defer_indexes`]); a UNIQUE column constraint of the seed schema cannot be dropped, so
//! the table is made without the keyword for the load, and afterwards its index is built
//! under a name of ours and given the constraint's place in the schema
//! ([`UniqueColumn::restore`]: SQLite's documented way of changing a table's definition
//! through `PRAGMA writable_schema`, with the index the new definition needs already in
//! place). Opening a database restores a constraint an interrupted load left out, so the
//! seed's definitions are missing only while a first run is under way.

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OptionalExtension};

/// Makes SQLite's page cache small before the indexes are built at the end of a load.
/// `CREATE INDEX` sorts in a buffer as large as the page cache, on top of it: at the end of
/// a run, with the projection's caches freed but not handed back to the system, that was
/// the run's peak. Small sorted runs cost nothing here (a 3 M-row index builds as fast
/// with 2 MiB as with 7).
pub fn shrink_for_index_builds(conn: &Connection) -> Result<()> {
    conn.execute_batch("PRAGMA shrink_memory; PRAGMA cache_size = -4096;")?;
    Ok(())
}

/// Drops secondary indexes of a database that is about to be filled from empty; running
/// the schema again (`CREATE INDEX IF NOT EXISTS`) builds them. Lookups during the load
/// must not need them: each has a UNIQUE index on the same key, or none is made.
pub fn defer_indexes(conn: &Connection, names: &[&str]) -> Result<()> {
    for name in names {
        conn.execute_batch(&format!("DROP INDEX IF EXISTS {name}"))?;
    }
    Ok(())
}

/// A column the seed schema declares UNIQUE, whose table a fresh database is filled
/// without the constraint.
#[derive(Debug, Clone, Copy)]
pub struct UniqueColumn {
    pub table: &'static str,
    pub column: &'static str,
    /// SQLite's name of the constraint's index (`sqlite_autoindex_TABLE_N`, N counting
    /// the table's UNIQUE and non-integer PRIMARY KEY constraints in order).
    pub index: &'static str,
    /// The SQL that creates the whole database, in order.
    pub schema: &'static [&'static str],
}

impl UniqueColumn {
    /// Makes the table again without the constraint if it is empty (a table with rows is
    /// left as it is); the schema is run again afterwards, for the table's indexes.
    pub fn load_without(&self, conn: &Connection) -> Result<()> {
        let schema = self.schema.join("\n");
        let seed = self.seed_definition(&schema)?;
        let rows: bool = conn.query_row(
            &format!("SELECT EXISTS (SELECT 1 FROM {})", self.table),
            [],
            |r| r.get(0),
        )?;
        if rows || self.stored_definition(conn)? != Some(seed.clone()) {
            return Ok(());
        }
        conn.execute_batch(&format!(
            "BEGIN; DROP TABLE {}; {}; COMMIT;",
            self.table,
            self.load_definition(&seed)?
        ))?;
        conn.execute_batch(&schema)?;
        Ok(())
    }

    /// Gives the table its constraint back if a load left it out: the index is built by
    /// sorting, then the table's definition and the index's name become the seed's.
    /// Refuses (naming the column) a table that holds a value twice.
    pub fn restore(&self, conn: &Connection) -> Result<()> {
        let Some(stored) = self.stored_definition(conn)? else {
            return Ok(());
        };
        // Only the exact definition a load makes is changed: a table made by an older
        // build (its text may differ in comments) or altered by hand is left as it is.
        let seed = self.seed_definition(&self.schema.join("\n"))?;
        if stored != self.load_definition(&seed)? {
            return Ok(());
        }
        let ours = format!("sediment_unique_{}_{}", self.table, self.column);
        conn.execute_batch(&format!(
            "DROP INDEX IF EXISTS {ours}; CREATE UNIQUE INDEX {ours} ON {} ({});",
            self.table, self.column
        ))
        .with_context(|| format!("{}.{} holds a value twice", self.table, self.column))?;
        let version: i64 = conn.query_row("PRAGMA schema_version", [], |r| r.get(0))?;
        conn.execute_batch("BEGIN IMMEDIATE; PRAGMA writable_schema = ON;")?;
        let patched = (|| -> Result<()> {
            conn.execute(
                "UPDATE sqlite_schema SET sql = ?1 WHERE type = 'table' AND name = ?2",
                [&seed, self.table],
            )?;
            conn.execute(
                "UPDATE sqlite_schema SET name = ?1, sql = NULL WHERE type = 'index' AND name = ?2",
                [self.index, &ours],
            )?;
            conn.execute_batch(&format!("PRAGMA schema_version = {}", version + 1))?;
            Ok(())
        })();
        match patched {
            Ok(()) => conn.execute_batch("COMMIT; PRAGMA writable_schema = RESET;")?,
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK; PRAGMA writable_schema = RESET;");
                return Err(e);
            }
        }
        let bound: bool = conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM pragma_index_list(?1) WHERE name = ?2 AND origin = 'u')",
            [self.table, self.index],
            |r| r.get(0),
        )?;
        if !bound {
            bail!(
                "{} did not become the UNIQUE index of {}.{}",
                self.index,
                self.table,
                self.column
            );
        }
        Ok(())
    }

    fn stored_definition(&self, conn: &Connection) -> Result<Option<String>> {
        Ok(conn
            .query_row(
                "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                [self.table],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The table's definition as SQLite stores it when `schema` creates it.
    fn seed_definition(&self, schema: &str) -> Result<String> {
        let scratch = Connection::open_in_memory()?;
        scratch.execute_batch(schema)?;
        self.stored_definition(&scratch)?
            .with_context(|| format!("the schema does not create {}", self.table))
    }

    /// `seed` without the UNIQUE keyword of the column's definition.
    fn load_definition(&self, seed: &str) -> Result<String> {
        let mut out = Vec::new();
        let mut removed = 0;
        for line in seed.split('\n') {
            let is_column = line
                .trim_start()
                .strip_prefix(self.column)
                .is_some_and(|rest| rest.starts_with(char::is_whitespace));
            if is_column && line.contains(" UNIQUE ") {
                out.push(line.replacen(" UNIQUE ", " ", 1));
                removed += 1;
            } else {
                out.push(line.to_string());
            }
        }
        if removed != 1 {
            bail!(
                "the schema's definition of {} does not declare {} UNIQUE on a line of its own",
                self.table,
                self.column
            );
        }
        Ok(out.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS t (
        id   INTEGER NOT NULL PRIMARY KEY,
        uuid BLOB(16) UNIQUE NOT NULL CHECK (length(uuid) = 16),
        n    INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS t_by_n ON t (n);";

    const UUID: UniqueColumn = UniqueColumn {
        table: "t",
        column: "uuid",
        index: "sqlite_autoindex_t_1",
        schema: &[SCHEMA],
    };

    fn schema_rows(conn: &Connection) -> Vec<(String, String, Option<String>)> {
        let mut stmt = conn
            .prepare("SELECT type, name, sql FROM sqlite_schema ORDER BY type, name")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    }

    fn fill(conn: &Connection, from: u8, to: u8) {
        for i in from..to {
            conn.execute(
                "INSERT INTO t (uuid, n) VALUES (?1, ?2)",
                rusqlite::params![vec![i.wrapping_mul(37); 16], i % 3],
            )
            .unwrap();
        }
    }

    #[test]
    fn a_table_loaded_without_its_constraint_gets_the_seed_definition_back() {
        let dir = tempfile::tempdir().unwrap();
        let reference = Connection::open_in_memory().unwrap();
        reference.execute_batch(SCHEMA).unwrap();
        fill(&reference, 0, 200);

        let path = dir.path().join("t.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        UUID.load_without(&conn).unwrap();
        assert_ne!(schema_rows(&conn), schema_rows(&reference));
        fill(&conn, 0, 200);
        UUID.restore(&conn).unwrap();
        assert_eq!(schema_rows(&conn), schema_rows(&reference));
        // The index is the constraint's: SQLite enforces it, lists it as made by a UNIQUE
        // constraint, and finds nothing amiss; a second restore changes nothing.
        let twice = conn.execute("INSERT INTO t (uuid, n) VALUES (?1, 1)", [vec![0u8; 16]]);
        assert!(twice.is_err());
        let origin: String = conn
            .query_row(
                "SELECT origin FROM pragma_index_list('t') WHERE name = 'sqlite_autoindex_t_1'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(origin, "u");
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
        UUID.restore(&conn).unwrap();
        drop(conn);
        // Another connection reads the same schema and contents.
        let again = Connection::open(&path).unwrap();
        assert_eq!(schema_rows(&again), schema_rows(&reference));
        let sql = "SELECT id, uuid, n FROM t ORDER BY uuid";
        let all = |c: &Connection| -> Vec<(i64, Vec<u8>, i64)> {
            let mut stmt = c.prepare(sql).unwrap();
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .map(|r| r.unwrap())
                .collect()
        };
        assert_eq!(all(&again), all(&reference));
    }

    #[test]
    fn a_table_defined_otherwise_is_left_alone() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        conn.execute_batch("ALTER TABLE t ADD COLUMN note TEXT")
            .unwrap();
        let before = schema_rows(&conn);
        UUID.restore(&conn).unwrap();
        assert_eq!(schema_rows(&conn), before);
    }

    #[test]
    fn a_value_held_twice_is_refused_by_name() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        UUID.load_without(&conn).unwrap();
        fill(&conn, 0, 3);
        fill(&conn, 0, 1);
        let err = UUID.restore(&conn).unwrap_err();
        assert!(
            format!("{err:#}").contains("t.uuid holds a value twice"),
            "{err:#}"
        );
    }

    #[test]
    fn a_table_with_rows_keeps_its_constraint() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        fill(&conn, 0, 1);
        let before = schema_rows(&conn);
        UUID.load_without(&conn).unwrap();
        assert_eq!(schema_rows(&conn), before);
    }
}
