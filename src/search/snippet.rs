//! Snippets of search results, computed inside SQLite by an FTS5 auxiliary function,
//! `sediment_snippet(full_text_entity_index, HAS_TERMS, COLUMN, …)`.
//!
//! Its answer is, character for character, what FTS5's own `snippet(…, COLUMN, char(2),
//! char(3), '…', 24)` gives for the first of the COLUMNs with a match (without terms, or
//! without a match in any of them: the first non-empty one), which the search used to ask
//! column by column in as many queries. It costs much less on long pages, where that
//! function took most of a search's time: `snippet()` tokenizes the whole column twice
//! (once for sentence starts, once to copy the chosen window) and scores each match by
//! walking every match of the row; here the column is tokenized only up to its last match
//! (sentence starts) and up to the end of the chosen window (the copy), and each match is
//! scored over the matches inside its window only (the instances are in column and
//! offset order).

use std::ffi::{c_char, c_int, c_void};
use std::ptr::null_mut;

use anyhow::{Result, bail};
use rusqlite::Connection;
use rusqlite::ffi;

/// Tokens in a snippet (FTS5's `snippet()` allows 64 at most).
pub const SNIPPET_TOKENS: i64 = 24;
/// Between the parts of a page a snippet leaves out.
const ELLIPSIS: &[u8] = "…".as_bytes();
/// Marks around a match (see [`super::MATCH_START`] for what is shown).
const OPEN: &[u8] = b"\x02";
const CLOSE: &[u8] = b"\x03";

/// Registers `sediment_snippet` on `conn`. `porter_unicode61`: the index is tokenized by
/// `porter unicode61` (with unicode61's default options), so that the snippets find token
/// positions with unicode61 alone: the stemmer turns each token into one token at the
/// same offsets, and stemming was two thirds of the time spent tokenizing.
pub fn register(conn: &Connection, porter_unicode61: bool) -> Result<()> {
    // SAFETY: the handle is valid while `conn` lives; the statement is finalized before
    // returning, and the pointer it fills is FTS5's global API object, which outlives
    // the connection.
    unsafe {
        let db = conn.handle();
        let mut statement = null_mut();
        if ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut statement,
            null_mut(),
        ) != ffi::SQLITE_OK
        {
            bail!("this SQLite has no FTS5");
        }
        let mut api: *mut ffi::fts5_api = null_mut();
        ffi::sqlite3_bind_pointer(
            statement,
            1,
            (&mut api as *mut *mut ffi::fts5_api).cast(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        ffi::sqlite3_step(statement);
        ffi::sqlite3_finalize(statement);
        if api.is_null() || (*api).iVersion < 2 {
            bail!("this SQLite's FTS5 is too old for snippets");
        }
        let Some(create) = (*api).xCreateFunction else {
            bail!("this SQLite's FTS5 cannot register functions");
        };
        let mut words: *mut Words = null_mut();
        if porter_unicode61 && let Some(find) = (*api).xFindTokenizer {
            let mut user = null_mut();
            let mut tokenizer: ffi::fts5_tokenizer = std::mem::zeroed();
            if find(api, c"unicode61".as_ptr(), &mut user, &mut tokenizer) == ffi::SQLITE_OK
                && let (Some(create), Some(_), Some(_)) =
                    (tokenizer.xCreate, tokenizer.xDelete, tokenizer.xTokenize)
            {
                let mut instance = null_mut();
                if create(user, null_mut(), 0, &mut instance) == ffi::SQLITE_OK
                    && !instance.is_null()
                {
                    words = Box::into_raw(Box::new(Words {
                        tokenizer,
                        instance,
                    }));
                }
            }
        }
        let rc = create(
            api,
            c"sediment_snippet".as_ptr(),
            words.cast(),
            Some(sediment_snippet),
            Some(drop_words),
        );
        if rc != ffi::SQLITE_OK {
            bail!("cannot register the snippet function (SQLite error {rc})");
        }
    }
    Ok(())
}

/// A unicode61 tokenizer of the connection's own, for the snippets' token positions.
struct Words {
    tokenizer: ffi::fts5_tokenizer,
    instance: *mut ffi::Fts5Tokenizer,
}

unsafe extern "C" fn drop_words(words: *mut c_void) {
    if !words.is_null() {
        // SAFETY: made by `Box::into_raw` in `register`; SQLite calls this once.
        let words = unsafe { Box::from_raw(words.cast::<Words>()) };
        if let Some(delete) = words.tokenizer.xDelete {
            // SAFETY: the instance was made by this tokenizer's xCreate.
            unsafe { delete(words.instance) };
        }
    }
}

unsafe extern "C" fn sediment_snippet(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_values: c_int,
    values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 passes a valid API, context and `n_values` argument values.
    let arguments: Vec<i64> = (0..n_values.max(0) as usize)
        .map(|i| unsafe { ffi::sqlite3_value_int64(*values.add(i)) })
        .collect();
    let api = unsafe { &*api };
    // SAFETY: the user data is the `Words` that `register` made, or null.
    let words = api
        .xUserData
        .map(|user| unsafe { user(fts) }.cast::<Words>().cast_const())
        .filter(|w| !w.is_null())
        .map(|w| unsafe { &*w });
    let row = Row { api, fts, words };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        match arguments.split_first() {
            Some((has_terms, columns)) if !columns.is_empty() => {
                row.snippet(*has_terms != 0, columns)
            }
            _ => Err(ffi::SQLITE_MISUSE),
        }
    }));
    // SAFETY: `ctx` is the function's result context; the text is copied (TRANSIENT).
    unsafe {
        match result {
            Ok(Ok(text)) => ffi::sqlite3_result_text(
                ctx,
                text.as_ptr().cast(),
                text.len() as c_int,
                ffi::SQLITE_TRANSIENT(),
            ),
            Ok(Err(code)) => ffi::sqlite3_result_error_code(ctx, code),
            Err(_) => ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_INTERNAL),
        }
    }
}

/// One match: phrase, column, token offset (FTS5's instance).
#[derive(Clone, Copy)]
struct Instance {
    phrase: usize,
    column: i64,
    offset: i64,
}

/// The row being shown, through FTS5's extension API.
struct Row<'a> {
    api: &'a ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    words: Option<&'a Words>,
}

type Code = c_int;

fn check(rc: c_int) -> std::result::Result<(), Code> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}

/// A tokenizer callback's answer that stops the tokenizer early (not an error).
const STOP: c_int = ffi::SQLITE_DONE;

unsafe extern "C" fn on_token(
    context: *mut c_void,
    flags: c_int,
    _token: *const c_char,
    _length: c_int,
    start: c_int,
    end: c_int,
) -> c_int {
    // SAFETY: `context` is the `&mut dyn FnMut` that `Row::tokenize` passed.
    let callback = unsafe { &mut *context.cast::<&mut dyn FnMut(c_int, usize, usize) -> c_int>() };
    callback(flags, start.max(0) as usize, end.max(0) as usize)
}

impl Row<'_> {
    fn instances(&self) -> std::result::Result<Vec<Instance>, Code> {
        let mut count = 0;
        // SAFETY: the API functions are called with the context FTS5 gave.
        unsafe {
            check((self.api.xInstCount.ok_or(ffi::SQLITE_MISUSE)?)(
                self.fts, &mut count,
            ))?;
            let inst = self.api.xInst.ok_or(ffi::SQLITE_MISUSE)?;
            (0..count)
                .map(|i| {
                    let (mut phrase, mut column, mut offset) = (0, 0, 0);
                    check(inst(self.fts, i, &mut phrase, &mut column, &mut offset))?;
                    Ok(Instance {
                        phrase: phrase.max(0) as usize,
                        column: i64::from(column),
                        offset: i64::from(offset),
                    })
                })
                .collect()
        }
    }

    fn phrase_sizes(&self) -> std::result::Result<Vec<i64>, Code> {
        // SAFETY: as above.
        unsafe {
            let count = (self.api.xPhraseCount.ok_or(ffi::SQLITE_MISUSE)?)(self.fts);
            let size = self.api.xPhraseSize.ok_or(ffi::SQLITE_MISUSE)?;
            Ok((0..count.max(0))
                .map(|p| i64::from(size(self.fts, p)))
                .collect())
        }
    }

    fn text(&self, column: i64) -> std::result::Result<&[u8], Code> {
        let (mut text, mut length): (*const c_char, c_int) = (std::ptr::null(), 0);
        // SAFETY: the text stays valid until the next call for this row, after the
        // snippet is made.
        unsafe {
            check((self.api.xColumnText.ok_or(ffi::SQLITE_MISUSE)?)(
                self.fts,
                column as c_int,
                &mut text,
                &mut length,
            ))?;
            Ok(if text.is_null() || length <= 0 {
                &[]
            } else {
                std::slice::from_raw_parts(text.cast(), length as usize)
            })
        }
    }

    fn size(&self, column: i64) -> std::result::Result<i64, Code> {
        let mut tokens = 0;
        // SAFETY: as above.
        unsafe {
            check((self.api.xColumnSize.ok_or(ffi::SQLITE_MISUSE)?)(
                self.fts,
                column as c_int,
                &mut tokens,
            ))?;
        }
        Ok(i64::from(tokens))
    }

    /// Feeds `text`'s tokens (flags, start and end byte offsets) to `callback` until it
    /// answers [`STOP`].
    fn tokenize(
        &self,
        text: &[u8],
        mut callback: impl FnMut(c_int, usize, usize) -> c_int,
    ) -> std::result::Result<(), Code> {
        let mut callback: &mut dyn FnMut(c_int, usize, usize) -> c_int = &mut callback;
        let context: *mut c_void =
            (&mut callback as *mut &mut dyn FnMut(c_int, usize, usize) -> c_int).cast();
        // SAFETY: `on_token` is called only during this call, with this context; the
        // tokenizer instance lives as long as the function's registration.
        let rc = unsafe {
            match self.words {
                Some(words) => (words.tokenizer.xTokenize.ok_or(ffi::SQLITE_MISUSE)?)(
                    words.instance,
                    context,
                    ffi::FTS5_TOKENIZE_AUX,
                    text.as_ptr().cast(),
                    text.len() as c_int,
                    Some(on_token),
                ),
                None => (self.api.xTokenize.ok_or(ffi::SQLITE_MISUSE)?)(
                    self.fts,
                    text.as_ptr().cast(),
                    text.len() as c_int,
                    context,
                    Some(on_token),
                ),
            }
        };
        if rc == STOP { Ok(()) } else { check(rc) }
    }

    fn snippet(&self, has_terms: bool, columns: &[i64]) -> std::result::Result<Vec<u8>, Code> {
        let instances = self.instances()?;
        let sizes = self.phrase_sizes()?;
        let mut fallback = Vec::new();
        for &column in columns {
            let snippet = self.column_snippet(&instances, &sizes, column)?;
            if has_terms && snippet.contains(&OPEN[0]) {
                return Ok(snippet);
            }
            if fallback.is_empty() {
                fallback = snippet;
            }
            if !has_terms && !fallback.is_empty() {
                break;
            }
        }
        Ok(fallback)
    }

    /// FTS5's `snippet()` of one column (see fts5SnippetFunction in SQLite's fts5_aux.c):
    /// the window of [`SNIPPET_TOKENS`] tokens with the most distinct phrases (ties to the
    /// earlier), a window that starts a sentence preferred.
    fn column_snippet(
        &self,
        all: &[Instance],
        phrase_sizes: &[i64],
        column: i64,
    ) -> std::result::Result<Vec<u8>, Code> {
        let n = SNIPPET_TOKENS;
        let from = all.partition_point(|i| i.column < column);
        let to = from + all[from..].partition_point(|i| i.column == column);
        let here = &all[from..to];
        let phrase_size = |p: usize| phrase_sizes.get(p).copied().unwrap_or(1);
        let text = self.text(column)?;
        let doc_size = self.size(column)?;

        let mut best = (0i64, 0i64); // (score, first token)
        if let Some(last) = here.last() {
            // Sentence starts: a token after '.' or ':' and white space. Those after the
            // last match are never used.
            let mut starts: Vec<i64> = Vec::new();
            let mut position = 0i64;
            self.tokenize(text, |flags, start, _| {
                if flags & ffi::FTS5_TOKEN_COLOCATED != 0 {
                    return ffi::SQLITE_OK;
                }
                if position > last.offset {
                    return STOP;
                }
                if position > 0 {
                    let before = &text[..start.min(text.len())];
                    let gap = before
                        .iter()
                        .rev()
                        .take_while(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
                        .count();
                    if gap > 0
                        && matches!(
                            before.len().checked_sub(gap + 1).map(|i| before[i]),
                            Some(b'.' | b':')
                        )
                    {
                        starts.push(position);
                    }
                } else {
                    starts.push(0);
                }
                position += 1;
                ffi::SQLITE_OK
            })?;
            let mut seen = vec![false; phrase_sizes.len().max(1)];
            // The score of the window at `start` and where a window around its matches
            // starts.
            let mut score = |start: i64| {
                seen.iter_mut().for_each(|s| *s = false);
                let end = start + n;
                let mut total = 0i64;
                let (mut first, mut last_end) = (-1i64, 0i64);
                let lower = here.partition_point(|i| i.offset < start);
                for i in here[lower..].iter().take_while(|i| i.offset < end) {
                    let seen = seen.get_mut(i.phrase);
                    total += if seen.as_deref() == Some(&true) {
                        1
                    } else {
                        1000
                    };
                    if let Some(seen) = seen {
                        *seen = true;
                    }
                    if first < 0 {
                        first = i.offset;
                    }
                    last_end = i.offset + phrase_size(i.phrase);
                }
                let mut adjusted = first - (n - (last_end - first)) / 2;
                if adjusted + n > doc_size {
                    adjusted = doc_size - n;
                }
                (total, adjusted.max(0))
            };
            for instance in here {
                if instance.offset > doc_size {
                    return Err(ffi::SQLITE_CORRUPT_VTAB);
                }
                let (total, adjusted) = score(instance.offset);
                if total > best.0 {
                    best = (total, adjusted);
                }
                if !starts.is_empty() && doc_size > n {
                    let mut j = 0;
                    while j + 1 < starts.len() && starts[j + 1] <= instance.offset {
                        j += 1;
                    }
                    if starts[j] < instance.offset {
                        let (total, _) = score(starts[j]);
                        let total = total + if starts[j] == 0 { 120 } else { 100 };
                        if total > best.0 {
                            best = (total, starts[j]);
                        }
                    }
                }
            }
        }

        // The window copied with its matches marked (fts5HighlightCb), coalescing
        // overlapping matches.
        let mut matches: Vec<(i64, i64)> = Vec::new();
        for i in here {
            let end = i.offset - 1 + phrase_size(i.phrase);
            match matches.last_mut() {
                Some(m) if i.offset <= m.1 => m.1 = m.1.max(end),
                _ => matches.push((i.offset, end)),
            }
        }
        let (range_start, range_end) = (best.1, best.1 + n - 1);
        let mut next = matches.partition_point(|m| m.0 < range_start);
        let current = |next: usize| matches.get(next).copied().unwrap_or((-1, -1));
        let mut out: Vec<u8> = Vec::new();
        if range_start > 0 {
            out.extend_from_slice(ELLIPSIS);
        }
        let (mut copied, mut open) = (0usize, false);
        let mut position = 0i64;
        self.tokenize(text, |flags, start, end| {
            if flags & ffi::FTS5_TOKEN_COLOCATED != 0 {
                return ffi::SQLITE_OK;
            }
            let at = position;
            position += 1;
            if at < range_start {
                return ffi::SQLITE_OK;
            }
            if at > range_end {
                return STOP;
            }
            let (start, end) = (start.min(text.len()), end.min(text.len()));
            if range_start > 0 && at == range_start {
                copied = start;
            }
            let (m_start, m_end) = current(next);
            if open && (at <= m_start || m_start < 0) && start > copied {
                out.extend_from_slice(CLOSE);
                open = false;
            }
            if at == m_start && !open {
                out.extend_from_slice(&text[copied.min(start)..start]);
                out.extend_from_slice(OPEN);
                copied = start;
                open = true;
            }
            if at == m_end {
                if !open {
                    out.extend_from_slice(OPEN);
                    open = true;
                }
                out.extend_from_slice(&text[copied.min(end)..end]);
                copied = end;
                next += 1;
            }
            if at == range_end {
                let (m_start, _) = current(next);
                if open {
                    if m_start >= 0 && at >= m_start {
                        out.extend_from_slice(&text[copied.min(end)..end]);
                        copied = end;
                    }
                    out.extend_from_slice(CLOSE);
                    open = false;
                }
                out.extend_from_slice(&text[copied.min(end)..end]);
                copied = end;
            }
            ffi::SQLITE_OK
        })?;
        if open {
            out.extend_from_slice(CLOSE);
        }
        if range_end >= doc_size - 1 {
            out.extend_from_slice(&text[copied.min(text.len())..]);
        } else {
            out.extend_from_slice(ELLIPSIS);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column order of the search (see `SNIPPET_COLUMNS`).
    const COLUMNS: [i64; 7] = [4, 5, 6, 7, 9, 8, 3];

    /// What the search did before: FTS5's `snippet()` column by column.
    fn builtin(conn: &Connection, expression: &str, rowid: i64, has_terms: bool) -> String {
        let mut fallback = String::new();
        for column in COLUMNS {
            let snippet: Option<String> = conn
                .query_row(
                    "SELECT snippet(t, ?3, char(2), char(3), '…', 24) FROM t
                     WHERE t MATCH ?1 AND rowid = ?2",
                    rusqlite::params![expression, rowid, column],
                    |r| r.get(0),
                )
                .unwrap();
            let snippet = snippet.unwrap_or_default();
            if has_terms && snippet.contains('\u{2}') {
                return snippet;
            }
            if fallback.is_empty() {
                fallback = snippet;
            }
            if !has_terms && !fallback.is_empty() {
                break;
            }
        }
        fallback
    }

    fn ours(conn: &Connection, expression: &str, rowid: i64, has_terms: bool) -> String {
        conn.query_row(
            "SELECT sediment_snippet(t, ?3, 4, 5, 6, 7, 9, 8, 3) FROM t
             WHERE t MATCH ?1 AND rowid = ?2",
            rusqlite::params![expression, rowid, has_terms],
            |r| r.get(0),
        )
        .unwrap()
    }

    /// Texts of every shape: empty, shorter and longer than a snippet, sentences ('.' and
    /// ':' before white space, or not), words that stem alike, repeated and adjacent
    /// matches, non-ASCII words, white space at the start.
    fn text(seed: &mut u64, tokens: usize) -> String {
        const WORDS: [&str; 16] = [
            "running",
            "runs",
            "run",
            "python",
            "path",
            "join",
            "os",
            "cmake",
            "find_package",
            "Straße",
            "日本語",
            "the",
            "a",
            "of",
            "zlib",
            "gzip",
        ];
        const AFTER: [&str; 8] = [" ", " ", " ", ". ", ": ", ".", "\n\n", " — "];
        let mut next = || {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (*seed >> 33) as usize
        };
        let mut out = String::new();
        if next() % 5 == 0 {
            out.push_str("  ");
        }
        for _ in 0..tokens {
            out.push_str(WORDS[next() % WORDS.len()]);
            out.push_str(AFTER[next() % AFTER.len()]);
        }
        out
    }

    #[test]
    fn snippets_are_those_of_fts5_snippet_column_by_column() {
        // With the table's own tokenizer and with unicode61 for the positions.
        for porter_unicode61 in [false, true] {
            compare_with_builtin(porter_unicode61);
        }
    }

    fn compare_with_builtin(porter_unicode61: bool) {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn, porter_unicode61).unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(c0 UNINDEXED, c1, title, description, text,
                 secondary_text, big_headlines, small_headlines, code_text, quote_text,
                 url_path, tokenize='porter unicode61');",
        )
        .unwrap();
        let mut seed = 37u64;
        let lengths = [0usize, 1, 5, 23, 24, 25, 60, 400, 3000];
        let mut rows = 0i64;
        for (i, &body) in lengths.iter().enumerate() {
            for &other in &lengths[..lengths.len() - 2] {
                rows += 1;
                let mut values: Vec<Option<String>> = vec![Some("0".into()), Some("any".into())];
                for column in 2..11 {
                    let tokens = match column {
                        4 => body,
                        2 | 10 => 3,
                        _ => (other + column + i) % (other + 1),
                    };
                    // Some columns NULL, as optional text piles are.
                    values.push((tokens > 0 || column % 3 == 0).then(|| text(&mut seed, tokens)));
                }
                conn.execute(
                    "INSERT INTO t (rowid, c0, c1, title, description, text, secondary_text,
                         big_headlines, small_headlines, code_text, quote_text, url_path)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                    rusqlite::params_from_iter(
                        std::iter::once(Some(rows.to_string())).chain(values),
                    ),
                )
                .unwrap();
            }
        }
        let expressions = [
            "run",
            "python",
            "\"os\" \"path\"",
            "\"path join\"",
            "zlib NOT gzip",
            "cmake OR find_package",
            "ru*",
            "straße",
            "日本語",
            "\"the a of\"",
            "{title} : python",
            "run python path join os cmake zlib",
        ];
        let mut compared = 0;
        for expression in expressions {
            let ids: Vec<i64> = conn
                .prepare("SELECT rowid FROM t WHERE t MATCH ?1")
                .unwrap()
                .query_map([expression], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            for id in ids {
                for has_terms in [true, false] {
                    assert_eq!(
                        ours(&conn, expression, id, has_terms),
                        builtin(&conn, expression, id, has_terms),
                        "{expression} in row {id}, has_terms {has_terms}"
                    );
                    compared += 1;
                }
            }
        }
        assert!(compared > 500, "{compared}");
    }
}
