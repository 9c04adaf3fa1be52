-- Summary database (seed: unobtanium 3.0, "Data: Summary Database" and "Summary schema as of
-- release 3.0"), created on top of the base tables of schemas/base.sql (origin, url,
-- mimetype, mime_parameter, database_info).
--
-- Conventions of the seed: times are INTEGER unix seconds UTC, durations INTEGER
-- milliseconds, UUIDs 16-byte BLOBs, BOOL is 0/1. Every table hangs off an entity generation
-- (one version of one URL over a time span); text piles are shared between generations and
-- stored once per BLAKE2b-512 digest.
--
-- Table names, column names, declared types, NULL rules and index names and columns follow
-- the seed (the DDL of unobtanium 3.0's summary database, `initalize_summary_database`).
-- database_info holds unobtanium_database_kind = summary and
-- unobtanium_summary_schema_version = 0.0.0 (the seed's values), plus sediment_* keys.
-- Deliberate differences, each marked "sediment:" below:
-- * content_key, summary_payload and summary_work: a later run continues the work of an
--   earlier one (incremental summarizing) without re-reading every payload.
-- * CHECKs on the conventions, REFERENCES clauses (documentation, checked by
--   `PRAGMA foreign_key_check`), the UNIQUE index on crawl_uuid and the one-open-generation
--   index.
-- * file_summary.canonical_url_fragment: the fragment of the canonical URL (the seed keeps
--   fragments next to url ids everywhere else).
-- * token_statistics is clustered by (text_pile_id, token_id) (WITHOUT ROWID): the same
--   uniqueness as the seed's UNIQUE(token_id, text_pile_id), and its index by pile.
-- * entity_generation_by_active: the seed's code names this index but, by a slip, creates
--   entity_generation_by_text_pile a second time; it is created here under its name.
-- * crawl_summary_by_entity_generation: the lookups of a generation's captures.
-- * A CHECK that allows more than two values spells them out (`x = 0 OR x = 1 OR x = 2`)
--   instead of `x IN (0, 1, 2)`: SQLite builds a lookup table for such an IN list each time
--   the statement runs, which for an INSERT is every row (2 µs a link_summary row: more
--   than half of the time SQLite needs for the links of an HTML crawl).
-- Empty text is stored as NULL where the seed's column allows NULL (link text, titles,
-- descriptions), as the seed's own code does with its Option values.

-- One version of the resource at a URL: the span of captures that had the same content.
-- A generation is open while confirmed_end_unix_utc is NULL; it is closed at the first_seen
-- of the generation that replaced it. A closed generation is never reopened: content that
-- comes back after a change opens a new generation.
CREATE TABLE IF NOT EXISTS entity_generation (
    entity_generation_id   INTEGER NOT NULL PRIMARY KEY,
    url_id                 INTEGER NOT NULL REFERENCES url (url_id),
    first_seen_unix_utc    INTEGER NOT NULL,
    last_seen_unix_utc     INTEGER NOT NULL,
    confirmed_end_unix_utc INTEGER NULL,
    -- Follows duplicate_summary: 1 while an open duplicate_summary row names this
    -- generation as its subject.
    marked_duplicate       BOOL NOT NULL DEFAULT 0,
    entity_generation_uuid BLOB(16) UNIQUE NOT NULL,
    -- NULL: the generation is about the whole document.
    url_fragment           TEXT NULL,
    text_pile_id           INTEGER NULL REFERENCES text_pile (text_pile_id),
    -- sediment: what makes two captures the same generation: 'P' + text pile digest (HTML,
    -- and files with text: PDF, plain text, XML, office), 'F' + payload SHA-1 (other files), 'R' + permanence + target (redirects),
    -- 'S' + status code (errors).
    content_key            BLOB NOT NULL,
    CHECK (first_seen_unix_utc <= last_seen_unix_utc),
    CHECK (confirmed_end_unix_utc IS NULL OR confirmed_end_unix_utc >= last_seen_unix_utc),
    CHECK (marked_duplicate IN (0, 1)),
    CHECK (length(entity_generation_uuid) = 16)
);
CREATE INDEX IF NOT EXISTS entity_generation_by_uuid
    ON entity_generation (entity_generation_uuid);
CREATE INDEX IF NOT EXISTS entity_generation_by_first_seen
    ON entity_generation (url_id, url_fragment, first_seen_unix_utc);
-- Open generations of a text pile.
CREATE INDEX IF NOT EXISTS entity_generation_by_text_pile
    ON entity_generation (text_pile_id, confirmed_end_unix_utc);
-- Open, non-duplicate generations (the search index's candidates).
CREATE INDEX IF NOT EXISTS entity_generation_by_active
    ON entity_generation (marked_duplicate, confirmed_end_unix_utc);
-- sediment: no URL ever has two open generations.
CREATE UNIQUE INDEX IF NOT EXISTS entity_generation_one_open_per_url
    ON entity_generation (url_id)
    WHERE confirmed_end_unix_utc IS NULL AND url_fragment IS NULL;

-- Exact duplicates: generations of different URLs with the same text pile. While both are
-- live, the one whose URL sorts first is the original (duplicate_of); every other one is a
-- subject. The end is set when either stops being live (or another original takes over).
CREATE TABLE IF NOT EXISTS duplicate_summary (
    subject_entity_generation_id      INTEGER NOT NULL REFERENCES entity_generation (entity_generation_id),
    duplicate_of_entity_generation_id INTEGER NOT NULL REFERENCES entity_generation (entity_generation_id),
    duplicate_status_start_unix_utc   INTEGER NOT NULL,
    duplicate_status_end_unix_utc     INTEGER NULL,
    CHECK (subject_entity_generation_id <> duplicate_of_entity_generation_id),
    CHECK (duplicate_status_end_unix_utc IS NULL
           OR duplicate_status_end_unix_utc >= duplicate_status_start_unix_utc)
);
CREATE INDEX IF NOT EXISTS duplicate_summary_by_duplicate
    ON duplicate_summary (subject_entity_generation_id, duplicate_status_end_unix_utc);
-- sediment: the duplicates of an original.
CREATE INDEX IF NOT EXISTS duplicate_summary_by_duplicate_of
    ON duplicate_summary (duplicate_of_entity_generation_id);

-- One row per capture (the crawl log of the seed's crawler). crawl_uuid and agent_uuid are
-- crawl_log.crawl_uuid and agent.agent_uuid of the crawl database projected from the same
-- store (one derivation, `project::identity`); request_duration_ms is the fetch duration
-- the archive records (Heritrix's fetchTimeMs), else NULL; was_robotstxt_approved as
-- request.robotstxt_approved of the crawl database.
-- crawl_type: 0 file_crawl, 1 robotstxt_fetch, 2 metadata_crawl.
CREATE TABLE IF NOT EXISTS crawl_summary (
    crawl_summary_id            INTEGER NOT NULL PRIMARY KEY,
    entity_generation_id        INTEGER NOT NULL REFERENCES entity_generation (entity_generation_id),
    crawl_uuid                  BLOB(16) NOT NULL,
    agent_uuid                  BLOB(16) NOT NULL,
    crawl_type                  INTEGER NOT NULL,
    time_started_unix_utc       INTEGER NOT NULL,
    exit_code                   INTEGER NOT NULL,
    time_last_modified_unix_utc INTEGER NULL,
    request_duration_ms         INTEGER NULL,
    was_robotstxt_approved      BOOL NOT NULL,
    CHECK (crawl_type = 0 OR crawl_type = 1 OR crawl_type = 2),
    CHECK (exit_code = -999 OR exit_code = -3 OR exit_code = -2 OR exit_code = -1
           OR exit_code = 20 OR exit_code = 29 OR exit_code = 31 OR exit_code = 32
           OR exit_code = 34 OR exit_code = 40 OR exit_code = 41 OR exit_code = 42
           OR exit_code = 44 OR exit_code = 49 OR exit_code = 50 OR exit_code = 100
           OR exit_code = 101 OR exit_code = 102 OR exit_code = 170 OR exit_code = 171
           OR exit_code = 172 OR exit_code = 173 OR exit_code = 174 OR exit_code = 180
           OR exit_code = 181),
    CHECK (was_robotstxt_approved IN (0, 1)),
    CHECK (request_duration_ms IS NULL OR request_duration_ms >= 0)
);
-- sediment: UNIQUE (the seed's index is plain): a capture is summarized once. One index,
-- not a UNIQUE column and an index on the same key.
CREATE UNIQUE INDEX IF NOT EXISTS crawl_summary_by_crawl_uuid ON crawl_summary (crawl_uuid);
-- sediment: the captures of a generation.
CREATE INDEX IF NOT EXISTS crawl_summary_by_entity_generation
    ON crawl_summary (entity_generation_id, time_started_unix_utc);

-- Present only when the crawl got an HTTP response.
CREATE TABLE IF NOT EXISTS http_summary (
    crawl_summary_id INTEGER NOT NULL PRIMARY KEY REFERENCES crawl_summary (crawl_summary_id),
    status_code      INTEGER NOT NULL,
    etag             TEXT NULL,
    CHECK (status_code >= 100 AND status_code <= 999)
);

-- The file a content generation was made from.
CREATE TABLE IF NOT EXISTS file_summary (
    entity_generation_id  INTEGER NOT NULL PRIMARY KEY REFERENCES entity_generation (entity_generation_id),
    file_size             INTEGER NULL,
    mimetype_id           INTEGER NULL REFERENCES mimetype (mimetype_id),
    canonical_url_id      INTEGER NULL REFERENCES url (url_id),
    -- sediment: the canonical URL's fragment.
    canonical_url_fragment TEXT NULL,
    CHECK (file_size IS NULL OR file_size >= 0)
);

-- Where a redirect generation points.
-- information_source: 0 unknown, 1 response_header, 2 file_metadata, 3 file_body, 4 summary.
CREATE TABLE IF NOT EXISTS redirect_summary (
    entity_generation_id INTEGER NOT NULL PRIMARY KEY REFERENCES entity_generation (entity_generation_id),
    to_url_id            INTEGER NOT NULL REFERENCES url (url_id),
    information_source   INTEGER NOT NULL,
    is_permanent         BOOL NOT NULL,
    by_security_policy   BOOL NOT NULL,
    to_url_fragment      VARCHAR(255) NULL,
    CHECK (information_source = 0 OR information_source = 1 OR information_source = 2
           OR information_source = 3 OR information_source = 4),
    CHECK (is_permanent IN (0, 1)),
    CHECK (by_security_policy IN (0, 1))
);
CREATE INDEX IF NOT EXISTS redirect_summary_by_to_url ON redirect_summary (to_url_id);

-- Every link of a document, with where it sits (the location signature flags), what it
-- points to (destination_type: 0 file, 1 document, 2 feed, 3 stylesheet, 4 script,
-- 100 media, 101 image, 102 audio, 103 video, 1000 communication) and how far
-- (link_locality: 0 same document, 1 same site, 2 other site). link_to_url is a url_id.
-- Choices where the seed is silent (src/html/mod.rs has the full rules):
-- * a link is every URL-valued attribute a browser would fetch or follow: a[href],
--   area[href], link[href], img/iframe/frame/audio/video/source/embed[src], video[poster],
--   object[data] and script[src]; so `<script src>` is a link (html_tag_name 'script',
--   destination_type 4), as are images and stylesheets, not only anchors.
-- * an empty value (`href=""`, or only white space) is no link and makes no row: HTML
--   resolves it to the document itself, which says nothing about the page. Values that do
--   not parse, and javascript:, data:, about:, blob:, vbscript: URLs, make no row either.
-- * the in_* flags come from the link's ancestors, and ARIA landmark roles count like their
--   elements: role="navigation" sets in_nav, "main" in_main, "banner" in_header,
--   "contentinfo" in_footer, "complementary" in_aside, "article" in_article, "form"
--   in_form (the first of these tokens in the role attribute). The same roles mark the
--   main region whose text goes to text_pile.text.
CREATE TABLE IF NOT EXISTS link_summary (
    link_summary_id      INTEGER NOT NULL PRIMARY KEY,
    entity_generation_id INTEGER NOT NULL REFERENCES entity_generation (entity_generation_id),
    link_to_url          INTEGER NOT NULL REFERENCES url (url_id),
    rel_nofollow         BOOL NOT NULL DEFAULT 0,
    rel_me               BOOL NOT NULL DEFAULT 0,
    rel_tag              BOOL NOT NULL DEFAULT 0,
    in_header            BOOL NOT NULL DEFAULT 0,
    in_footer            BOOL NOT NULL DEFAULT 0,
    in_aside             BOOL NOT NULL DEFAULT 0,
    in_nav               BOOL NOT NULL DEFAULT 0,
    in_form              BOOL NOT NULL DEFAULT 0,
    in_main              BOOL NOT NULL DEFAULT 0,
    in_article           BOOL NOT NULL DEFAULT 0,
    in_section           BOOL NOT NULL DEFAULT 0,
    in_table             BOOL NOT NULL DEFAULT 0,
    in_figure            BOOL NOT NULL DEFAULT 0,
    in_address           BOOL NOT NULL DEFAULT 0,
    in_code              BOOL NOT NULL DEFAULT 0,
    in_headline          BOOL NOT NULL DEFAULT 0,
    in_list              BOOL NOT NULL DEFAULT 0,
    in_paragraph         BOOL NOT NULL DEFAULT 0,
    contains_headline    BOOL NOT NULL DEFAULT 0,
    destination_type     INTEGER NULL,
    link_locality        INTEGER NOT NULL,
    html_tag_name        VARCHAR(31) NULL,
    link_to_fragment     VARCHAR(255) NULL,
    -- NULL: the link has no text (nor aria-label, title or alt).
    text                 TEXT NULL,
    CHECK (destination_type IS NULL
           OR destination_type = 0 OR destination_type = 1 OR destination_type = 2
           OR destination_type = 3 OR destination_type = 4 OR destination_type = 100
           OR destination_type = 101 OR destination_type = 102 OR destination_type = 103
           OR destination_type = 1000),
    CHECK (link_locality = 0 OR link_locality = 1 OR link_locality = 2),
    CHECK (rel_nofollow IN (0, 1) AND rel_me IN (0, 1) AND rel_tag IN (0, 1)),
    CHECK (in_header IN (0, 1) AND in_footer IN (0, 1) AND in_aside IN (0, 1)
           AND in_nav IN (0, 1) AND in_form IN (0, 1) AND in_main IN (0, 1)
           AND in_article IN (0, 1) AND in_section IN (0, 1) AND in_table IN (0, 1)
           AND in_figure IN (0, 1) AND in_address IN (0, 1) AND in_code IN (0, 1)
           AND in_headline IN (0, 1) AND in_list IN (0, 1) AND in_paragraph IN (0, 1)
           AND contains_headline IN (0, 1))
);
-- sediment: the links of a generation, the links to a URL.
CREATE INDEX IF NOT EXISTS link_summary_by_entity_generation
    ON link_summary (entity_generation_id);
CREATE INDEX IF NOT EXISTS link_summary_by_link_to_url ON link_summary (link_to_url);

-- What a document says about itself, on a best effort basis (NULL: the document does not
-- say). Choices where the seed is silent:
-- * primary_headline: the text of the first visible `<h1>`. title: the longer of `<title>`
--   and that headline, so a page whose `<h1>` says more than its `<title>` (or that has no
--   `<title>`) has title = primary_headline (the longer text names the page better in
--   search results; the headline column keeps the page's own headline either way).
-- * indexiness > 0: an index page (lists of links), < 0: running text. It is fractional:
--   the number of distinct targets of the main region's links (a, area) that sit in a list,
--   table or headline or hold a headline, other than the page itself, minus the words of
--   the main region's text outside links divided by 50. The seed declares the column
--   INTEGER, whose affinity keeps fractional scores as REAL values (not rounded).
CREATE TABLE IF NOT EXISTS document_description (
    entity_generation_id  INTEGER NOT NULL PRIMARY KEY REFERENCES entity_generation (entity_generation_id),
    time_created_unix_utc INTEGER NULL,
    time_updated_unix_utc INTEGER NULL,
    primary_language      VARCHAR(31) NULL,
    title                 TEXT NULL,
    primary_headline      TEXT NULL,
    description           TEXT NULL,
    indexiness            INTEGER NOT NULL
);

-- The text of a document sorted by meaning, once per digest: BLAKE2b-512 over the six
-- fields joined by "\n\n\n" in the order text, secondary_text, big_headlines,
-- small_headlines, code_text, quote_text.
CREATE TABLE IF NOT EXISTS text_pile (
    text_pile_id      INTEGER NOT NULL PRIMARY KEY,
    blake2b512_digest BLOB UNIQUE NOT NULL,
    text              TEXT NOT NULL DEFAULT '',
    secondary_text    TEXT NOT NULL DEFAULT '',
    big_headlines     TEXT NOT NULL DEFAULT '',
    small_headlines   TEXT NOT NULL DEFAULT '',
    code_text         TEXT NOT NULL DEFAULT '',
    quote_text        TEXT NOT NULL DEFAULT '',
    CHECK (length(blake2b512_digest) = 64)
);

-- Every token of every text pile: lower-cased and stemmed by the full-text index's own
-- tokenizer (porter over unicode61).
CREATE TABLE IF NOT EXISTS token (
    token_id   INTEGER NOT NULL PRIMARY KEY,
    token_text TEXT NOT NULL,
    UNIQUE (token_text)
);

-- The forward index: how often each token occurs in each text pile (all six fields),
-- clustered by pile (the full-text index is the inverted one). The column name is the
-- seed's spelling.
CREATE TABLE IF NOT EXISTS token_statistics (
    token_id     INTEGER NOT NULL REFERENCES token (token_id),
    text_pile_id INTEGER NOT NULL REFERENCES text_pile (text_pile_id),
    occurances   INTEGER NOT NULL,
    PRIMARY KEY (text_pile_id, token_id),
    CHECK (occurances > 0)
) WITHOUT ROWID;

-- The search index: one row per open, non-duplicate generation with a non-empty text pile
-- whose page may be indexed (exit code 20: not noindex, not canonical elsewhere), rowid =
-- entity_generation_id. `any` holds the literal word "any" in every row, so that a query
-- made only of exclusions can be written `any : any NOT …`. sediment: `url_path` holds the
-- URL's path without `index.html` and `.html` (`/library/os.path.html` → `/library/os.path`),
-- for ranking; a database whose index lacks it gets its index made again (see
-- src/project/summary/mod.rs).
CREATE VIRTUAL TABLE IF NOT EXISTS full_text_entity_index USING fts5(
    text_pile_id UNINDEXED, any, title, description, text, secondary_text, big_headlines,
    small_headlines, code_text, quote_text, url_path, tokenize='porter unicode61'
);

-- sediment: the text pile made from each payload with text (by payload SHA-1), so a later
-- run knows the generation a capture belongs to without reading the payload again.
CREATE TABLE IF NOT EXISTS summary_payload (
    payload_sha1 BLOB NOT NULL PRIMARY KEY,
    text_pile_id INTEGER NOT NULL REFERENCES text_pile (text_pile_id),
    -- <meta name=robots content=noindex>: exit code 171, kept out of the search index.
    robots_noindex BOOL NOT NULL DEFAULT 0,
    -- Where the text came from: 'html' (the HTML analysis), 'grobid_tei' (a PDF's
    -- grobid0:tei_json: title, abstract, body, acknowledgement, annex),
    -- 'pdf_text_library' (a PDF read by the PDF text library in a bounded child process;
    -- an empty pile when it failed, reported as a problem), 'plain' (text/plain, TeX),
    -- 'markdown', 'xml' (JATS, TEI, other XML: the text of the elements) or 'office'
    -- (docx, xlsx, odt, ods, epub). Added in sediment-summary-3: a database made before
    -- gets the column on opening, with 'html' for its rows (then only HTML had piles).
    text_source TEXT NOT NULL DEFAULT 'html',
    CHECK (length(payload_sha1) = 20),
    CHECK (robots_noindex IN (0, 1))
) WITHOUT ROWID;

-- sediment: work a run still has to finish (crash-safe: written in the same transaction as
-- the change that caused it). kind 1: a generation whose search row must be checked;
-- 2: a text pile whose duplicates must be recomputed; 3: a text pile to count tokens of.
CREATE TABLE IF NOT EXISTS summary_work (
    kind INTEGER NOT NULL,
    id   INTEGER NOT NULL,
    PRIMARY KEY (kind, id),
    CHECK (kind = 1 OR kind = 2 OR kind = 3)
) WITHOUT ROWID;
