-- Base tables shared by the crawl and summary databases (seed: "Base schema as of release
-- 3.0" of the unobtanium search engine, base schema version 0.1.0). URLs are stored without
-- their fragment; the fragment is kept next to a url_id where it matters.
--
-- Table and column names, declared types and NULL rules follow the seed. Sediment additions,
-- which change no column: REFERENCES clauses (documentation; SQLite does not enforce them
-- unless `PRAGMA foreign_keys` is on, and `PRAGMA foreign_key_check` verifies them), the
-- CHECK on origin.port, the unique index on mime_parameter (so parameters are stored once),
-- and the `database_info` view.

-- Schema names and versions, "schemaless" key/value data. Keys written by sediment:
-- unobtanium_base_schema_version (0.1.0), unobtanium_database_kind (crawler | summary),
-- unobtanium_<kind>_schema_version, and sediment_* keys describing the projection run.
CREATE TABLE IF NOT EXISTS unobtanium_database_info (
    key   TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);
-- The name the design brief uses for the same table; writable through the triggers.
CREATE VIEW IF NOT EXISTS database_info AS SELECT key, value FROM unobtanium_database_info;
CREATE TRIGGER IF NOT EXISTS database_info_insert INSTEAD OF INSERT ON database_info
BEGIN
    INSERT OR REPLACE INTO unobtanium_database_info (key, value) VALUES (NEW.key, NEW.value);
END;
CREATE TRIGGER IF NOT EXISTS database_info_update INSTEAD OF UPDATE ON database_info
BEGIN
    UPDATE unobtanium_database_info SET key = NEW.key, value = NEW.value WHERE key = OLD.key;
END;
CREATE TRIGGER IF NOT EXISTS database_info_delete INSTEAD OF DELETE ON database_info
BEGIN
    DELETE FROM unobtanium_database_info WHERE key = OLD.key;
END;

-- URL origins, queryable by component. port NULL = the scheme's well-known default;
-- host NULL = the URL has no host (e.g. `dns:example.org`).
CREATE TABLE IF NOT EXISTS origin (
    origin_id  INTEGER NOT NULL PRIMARY KEY,
    port       INTEGER NULL CHECK (port IS NULL OR (port >= 0 AND port <= 65535)),
    scheme     VARCHAR(7) NOT NULL,
    host       VARCHAR(255) NULL,
    str_origin TEXT UNIQUE NOT NULL
);
CREATE INDEX IF NOT EXISTS origin_by_host ON origin (host, origin_id);

-- URLs without fragment; str_url is the WHATWG serialization. path/query/username/password
-- NULL = absent from the URL.
CREATE TABLE IF NOT EXISTS url (
    url_id    INTEGER NOT NULL PRIMARY KEY,
    origin_id INTEGER NOT NULL REFERENCES origin (origin_id),
    path      TEXT NULL,
    query     TEXT NULL,
    username  TEXT NULL,
    password  TEXT NULL,
    str_url   TEXT UNIQUE NOT NULL
);
CREATE INDEX IF NOT EXISTS url_string ON url (str_url, url_id);

-- Media types split into their components. str_mimetype is the canonical form (lower-case
-- essence, then the parameters sorted by name); charset gets its own column and is not
-- repeated in mime_parameter, which holds the other parameters.
CREATE TABLE IF NOT EXISTS mimetype (
    mimetype_id  INTEGER NOT NULL PRIMARY KEY,
    mime_type    TEXT NOT NULL,
    mime_subtype TEXT NOT NULL,
    mime_suffix  TEXT NULL,
    charset      TEXT NULL,
    str_mimetype TEXT UNIQUE NOT NULL
);
CREATE INDEX IF NOT EXISTS mimetype_string ON mimetype (str_mimetype, mimetype_id);

CREATE TABLE IF NOT EXISTS mime_parameter (
    mime_parameter_id INTEGER NOT NULL PRIMARY KEY,
    mimetype_id       INTEGER NOT NULL REFERENCES mimetype (mimetype_id),
    key               TEXT NOT NULL,
    value             TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS mime_parameter_by_mimetype ON mime_parameter (mimetype_id, key);
