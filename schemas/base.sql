-- Base tables shared by the crawl and summary databases (seed: "Base schema as of release
-- 3.0" of the unobtanium search engine). URLs are stored without their fragment; the
-- fragment is kept next to a url_id where it matters.

-- Schema names and versions, "schemaless" key/value data.
CREATE TABLE IF NOT EXISTS database_info (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
-- The seed's own name for the same table, for its tools.
CREATE VIEW IF NOT EXISTS unobtanium_database_info AS SELECT key, value FROM database_info;

-- URL origins, queryable by component. port NULL = the scheme's well-known default.
CREATE TABLE IF NOT EXISTS origin (
    origin_id  INTEGER PRIMARY KEY NOT NULL,
    port       INTEGER CHECK (port IS NULL OR (port >= 0 AND port <= 65535)),
    scheme     VARCHAR NOT NULL,
    host       VARCHAR,
    str_origin TEXT NOT NULL UNIQUE
);

-- URLs without fragment; str_url is the WHATWG serialization.
CREATE TABLE IF NOT EXISTS url (
    url_id    INTEGER PRIMARY KEY NOT NULL,
    origin_id INTEGER NOT NULL REFERENCES origin (origin_id),
    path      TEXT,
    query     TEXT,
    username  TEXT,
    password  TEXT,
    str_url   TEXT NOT NULL UNIQUE
);
CREATE INDEX IF NOT EXISTS url_origin ON url (origin_id);

-- Media types split into their components; parameters live in mime_parameter.
CREATE TABLE IF NOT EXISTS mimetype (
    mimetype_id  INTEGER PRIMARY KEY NOT NULL,
    type         VARCHAR NOT NULL,
    subtype      VARCHAR NOT NULL,
    suffix       VARCHAR,
    charset      VARCHAR,
    str_mimetype TEXT NOT NULL UNIQUE
);

CREATE TABLE IF NOT EXISTS mime_parameter (
    mimetype_id INTEGER NOT NULL REFERENCES mimetype (mimetype_id),
    key         VARCHAR NOT NULL,
    value       TEXT NOT NULL,
    PRIMARY KEY (mimetype_id, key)
);
