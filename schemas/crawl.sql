-- Crawl database (seed: "Crawler schema as of release 3.0" of the unobtanium search engine,
-- crawler schema version 1.0.0, on top of the base tables of schemas/base.sql).
-- `sediment project crawl` writes it; the binary embeds this file.
--
-- Conventions (those of the seed's reference implementation): times are INTEGER unix seconds UTC, durations
-- INTEGER milliseconds, UUIDs 16-byte BLOBs, BOOL is 0/1, URLs are url_id references (URLs
-- stored without fragment).
--
-- Table and column names, declared types, NULL rules and the index crawl_log_quickinfo
-- follow the seed. Sediment additions, which change no column of the seed's tables:
-- REFERENCES clauses (SQLite does not enforce them unless `PRAGMA foreign_keys` is on;
-- `PRAGMA foreign_key_check` verifies them), CHECKs on the conventions above, and
-- redirect.to_url_fragment, a column the seed's own reading code selects but its DDL lacks.
--
-- How the store's captures map to rows (one capture = one fetch of one URL at one time,
-- from a WARC record or a CDX line). Only fetches of web pages are crawl log entries:
-- captures whose URL is not http(s) (wget's metadata:// log and arguments, Heritrix's dns:
-- lookups) are left out and counted as captures_skipped_not_http, as in the summary
-- database. The UUIDs, the exit codes, the canonical and redirect rules are computed by the
-- same code as the summary database's (src/project/identity.rs, exit_code.rs,
-- signals.rs), so crawl_log.crawl_uuid joins crawl_summary.crawl_uuid and agent.agent_uuid
-- joins crawl_summary.agent_uuid for every capture.
--   agent            one per crawl run. The WARC files of one run are those whose names
--                    are equal once every run of five or more digits between separators
--                    (serial numbers, file timestamps: wget's NAME-00000.warc.gz, Heritrix's
--                    PREFIX-TIMESTAMP-SERIAL-HOST.warc.gz) is read as `*`, and whose
--                    warcinfo records carry the same fields (software, hostname, operator,
--                    isPartOf, wget-arguments, … all of them). A CDX file is an agent of its
--                    own. name: warcinfo software, `operator: …`, and `warc: ` the file name
--                    with `*` for the serial parts (`cdx: FILE` for CDX). agent_uuid is a UUID
--                    v5 of that run key; times are the first and last capture time seen,
--                    http_user_agent the most frequent User-Agent of its request records
--                    (else warcinfo `http-header-user-agent`), NULL for CDX sources.
--   crawl_log        one per http(s) capture. crawl_uuid is a UUID v5 of the capture key
--                    (SURT, timestamp, WARC or CDX file name, offset or line), so projecting
--                    again skips captures already present. time_taken_ms (NOT NULL in the
--                    seed) is the fetch duration the archive records (Heritrix's
--                    `fetchTimeMs` in the metadata record of the response), else 0, which
--                    stands for "not recorded" (wget and CDX files record no duration).
--                    message says why a body could not be read (`body not read: REASON`;
--                    a later run projects the capture again when the reason is
--                    warc_not_found or warc_read_error), else NULL.
--                    A failed fetch (a request record the WARC holds no response for, as
--                    wget writes after "No data received") is a crawl_log row too:
--                    exit_code 102 error_reading_response, message `no response: the
--                    archive holds the request only` (the archive does not say why).
--                    crawl_type: 1 robotstxt_fetch for `/robots.txt`, else 0 file_crawl
--                    (archives do not record HEAD-only crawls, type 2).
--   request          one per capture, time_sent = capture time, request_duration_ms the
--                    recorded fetch duration (fetchTimeMs), else NULL; one per failed fetch,
--                    http_status_code NULL (no response).
--   file             one per capture that has a body: HTTP 2xx, or a record without HTTP
--                    status (resource records, dns: responses), with a payload digest;
--                    revisits included (their body is the earlier payload; a revisit
--                    that names no type, like a CDX `warc/revisit` line, takes the type of
--                    the original's file row). file_size is the payload length (the
--                    original's for revisits; NULL when unknown, e.g. from CDX).
--                    canonical_url_id: the first usable one of `<link rel=canonical>` and the
--                    HTTP `Link: <…>; rel="canonical"` header; usable = an http(s) URL with a
--                    host (Sphinx writes `file:///usr/share/doc/…` canonicals into local
--                    documentation: ignored, as if absent).
--   file_text        the whole HTML document decoded to UTF-8 (charset from the HTTP header,
--                    a BOM or `<meta charset>`), read back from the WARC; absent when the
--                    WARC is not found (counted in the run report). Capped per page: the
--                    decoded body at --max-body-bytes (16 MiB) and at 100 times its encoded
--                    size beyond 1 MiB (compression bombs; counted html_bodies_cut_expansion),
--                    the stored text at --max-text-bytes (1 MiB, cut at a character
--                    boundary; counted file_texts_cut_at_max_text_bytes).
--   redirect         one per 3xx capture with a Location (or CDX redirect field), target
--                    resolved against the URL: information_source 1 (response_header),
--                    is_permanent for 301/308; and one per HTML capture whose page has a
--                    `<meta http-equiv=refresh>` with delay 0 to another http(s) URL:
--                    information_source 3 (file_body), is_permanent 0. by_security_policy 0.
--                    The summary database records the same redirects (redirect_summary).
--   crawl_candidate  every http(s) URL captured or discovered (links, canonicals, redirect
--                    targets), with the last crawl and last contentful crawl of the URL
--                    when it was captured itself. Links are those of summary.sql's
--                    link_summary: `href=""` is none, `<script src>` and the other
--                    embedding attributes (img, iframe, link, …) are.
--
-- Values the archives do not record:
--   request.robotstxt_approved: 1 unless the WARC's warcinfo says `robots: ignore` (then 0).
--     Crawlers archive what they fetched, and "unknown" is not representable in this NOT
--     NULL column; Heritrix and wget obey robots.txt by default and say so in warcinfo
--     (`robots: classic` / `obey`). CDX-only captures: 1.
--   exit_code: from the HTTP status (the seed's mapping): 2xx → 20 for HTML (171 when
--     `<meta name=robots>` says noindex, else 180 when the usable canonical URL is another
--     URL; pages with 171 or 180 are kept out of the summary database's search index),
--     29 for other types; 301/308 → 31; 302/303/307 → 32 (other 3xx: 32 with a Location,
--     else 42); 304 → 34; 401/403 → 171; 404 → 44; 410 → 41; 429 → 49; other 4xx → 40;
--     502–505 → 100; other 5xx → 50; no HTTP status but a payload (resource records, dns:
--     responses, CDX revisit lines with status `-`) → as 2xx;
--     no status and no payload, 1xx, or anything else → 42 (did_not_understand_answer).

CREATE TABLE IF NOT EXISTS agent (
    agent_id               INTEGER NOT NULL PRIMARY KEY,
    time_started_unix_utc  INTEGER NOT NULL,
    time_finished_unix_utc INTEGER NULL,
    agent_uuid             BLOB(16) NOT NULL CHECK (length(agent_uuid) = 16),
    name                   TEXT NOT NULL,
    http_user_agent        TEXT NULL,
    CHECK (time_finished_unix_utc IS NULL OR time_started_unix_utc <= time_finished_unix_utc)
);

CREATE TABLE IF NOT EXISTS crawl_log (
    crawl_log_id          INTEGER NOT NULL PRIMARY KEY,
    agent_id              INTEGER NOT NULL REFERENCES agent (agent_id),
    url_id                INTEGER NOT NULL REFERENCES url (url_id),
    -- 0 file_crawl, 1 robotstxt_fetch, 2 metadata_crawl
    crawl_type            INTEGER NOT NULL CHECK (crawl_type >= 0),
    crawl_uuid            BLOB(16) UNIQUE NOT NULL CHECK (length(crawl_uuid) = 16),
    time_started_unix_utc INTEGER NOT NULL,
    -- The fetch duration the archive records (Heritrix's fetchTimeMs), else 0: not recorded.
    time_taken_ms         INTEGER NOT NULL CHECK (time_taken_ms >= 0),
    exit_code             INTEGER NOT NULL,
    message               TEXT NULL
);
-- The last crawl results of a URL.
CREATE INDEX IF NOT EXISTS crawl_log_quickinfo
    ON crawl_log (url_id, time_started_unix_utc, exit_code);

CREATE TABLE IF NOT EXISTS request (
    request_id                    INTEGER NOT NULL PRIMARY KEY,
    crawl_log_id                  INTEGER NOT NULL REFERENCES crawl_log (crawl_log_id),
    url_id                        INTEGER NOT NULL REFERENCES url (url_id),
    time_sent_unix_utc            INTEGER NOT NULL,
    request_duration_ms           INTEGER NULL,
    robotstxt_approved            BOOL NOT NULL CHECK (robotstxt_approved IN (0, 1)),
    exit_code                     INTEGER NOT NULL,
    server_last_modified_unix_utc INTEGER NULL,
    http_status_code              INTEGER NULL,
    http_etag                     VARCHAR(63) NULL
);

CREATE TABLE IF NOT EXISTS file (
    file_id                INTEGER NOT NULL PRIMARY KEY,
    crawl_log_id           INTEGER NOT NULL REFERENCES crawl_log (crawl_log_id),
    request_id             INTEGER NULL REFERENCES request (request_id),
    url_id                 INTEGER NOT NULL REFERENCES url (url_id),
    last_modified_unix_utc INTEGER NULL,
    -- NULL when the size is not known (a file not fully fetched, or a CDX-only capture).
    file_size              INTEGER NULL CHECK (file_size IS NULL OR file_size >= 0),
    mimetype_id            INTEGER NOT NULL REFERENCES mimetype (mimetype_id),
    canonical_url_id       INTEGER NULL REFERENCES url (url_id)
);

CREATE TABLE IF NOT EXISTS redirect (
    redirect_id            INTEGER NOT NULL PRIMARY KEY,
    crawl_log_id           INTEGER NOT NULL REFERENCES crawl_log (crawl_log_id),
    request_id             INTEGER NULL REFERENCES request (request_id),
    url_id                 INTEGER NOT NULL REFERENCES url (url_id),
    last_modified_unix_utc INTEGER NULL,
    to_url_id              INTEGER NOT NULL REFERENCES url (url_id),
    -- 0 unknown, 1 response_header, 2 file_metadata, 3 file_body, 4 summary
    information_source     INTEGER NOT NULL CHECK (information_source >= 0),
    is_permanent           BOOL NOT NULL CHECK (is_permanent IN (0, 1)),
    by_security_policy     BOOL NOT NULL CHECK (by_security_policy IN (0, 1)),
    -- The target's fragment, without '#' (sediment addition, see above).
    to_url_fragment        TEXT NULL
);

CREATE TABLE IF NOT EXISTS file_text (
    file_id INTEGER NOT NULL PRIMARY KEY REFERENCES file (file_id),
    text    TEXT NOT NULL
);

-- The crawl results needed for scheduling, duplicated here so the table stands on its own.
CREATE TABLE IF NOT EXISTS crawl_candidate (
    url_id                              INTEGER NOT NULL PRIMARY KEY REFERENCES url (url_id),
    last_crawl_time_unix_utc            INTEGER NULL,
    last_crawl_exit_code                INTEGER NULL,
    last_contentful_crawl_time_unix_utc INTEGER NULL,
    last_contentful_http_etag           TEXT NULL
);
