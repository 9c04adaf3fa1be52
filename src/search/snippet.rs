//! Snippets of search results, computed inside SQLite by an FTS5 auxiliary function,
//! `sediment_snippet(full_text_entity_index, HAS_TERMS, COLUMN, …)`.
//!
//! Its answer is, character for character, what FTS5's own `snippet(…, COLUMN, char(2),
//! char(3), '…', 24)` gives for the first of the COLUMNs with a match (without terms, or
//! without a match in any of them: the first non-empty one), which the search used to ask
//! column by column in as many queries. It costs much less on long pages, where that
//! function took most of a search's time: `snippet()` tokenizes the whole column twice
//! (once for sentence starts, once to copy the chosen window) and scores each match by
//! walking every match of the row; here the column is tokenized once, only up to a window
//! past its last match, runs of ASCII letters and digits without calling SQLite's
//! tokenizer (`Words::tokenize`), and each match is scored over the matches inside its
//! window only (the instances are in column and offset order). One difference bounds
//! its work on the longest texts (a PDF's, hundreds of thousands of tokens): only the
//! matches in a column's first [`SNIPPET_SCAN_TOKENS`] tokens are candidates for its
//! window, and a column whose matches are all past them gives its first window, as a
//! column without a match does.

use std::ffi::{c_char, c_int, c_void};
use std::ptr::null_mut;

use anyhow::{Result, bail};
use rusqlite::Connection;
use rusqlite::ffi;

/// Tokens in a snippet (FTS5's `snippet()` allows 64 at most).
pub const SNIPPET_TOKENS: i64 = 24;
/// How far into a column a snippet's window is looked for: choosing among every match of
/// a long PDF's text meant tokenizing all of it, two thirds of the CPU of the bench
/// crawl's slowest searches (p99 61 ms at 16 clients, against 37 ms without the PDFs'
/// text). About 40 pages of a book; 0.2 ms of tokenizing.
pub const SNIPPET_SCAN_TOKENS: i64 = 20_000;
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
    let api = fts5_api(conn)?;
    let words = if porter_unicode61 {
        Words::new(api).map_or(null_mut(), |words| Box::into_raw(Box::new(words)))
    } else {
        null_mut()
    };
    create_function(
        api,
        c"sediment_snippet",
        words.cast(),
        Some(sediment_snippet),
        Some(drop_words),
    )
}

/// Registers the FTS5 auxiliary function `name` with `api` (from [`fts5_api`]). FTS5 frees
/// `user` through `destroy` when the function goes, or right away when it cannot be made.
pub(super) fn create_function(
    api: *mut ffi::fts5_api,
    name: &std::ffi::CStr,
    user: *mut c_void,
    function: ffi::fts5_extension_function,
    destroy: Option<unsafe extern "C" fn(*mut c_void)>,
) -> Result<()> {
    // SAFETY: `api` is FTS5's global API object; `user` is handed to SQLite, which frees
    // it through `destroy`.
    let rc = unsafe {
        let Some(create) = (*api).xCreateFunction else {
            if let Some(destroy) = destroy {
                destroy(user);
            }
            bail!("this SQLite's FTS5 cannot register functions");
        };
        create(api, name.as_ptr(), user, function, destroy)
    };
    if rc != ffi::SQLITE_OK {
        bail!("cannot register the FTS5 function {name:?} (SQLite error {rc})");
    }
    Ok(())
}

/// FTS5's API object of `conn`'s SQLite (global: it outlives the connection).
pub(super) fn fts5_api(conn: &Connection) -> Result<*mut ffi::fts5_api> {
    // SAFETY: the handle is valid while `conn` lives; the statement is finalized before
    // returning.
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
        Ok(api)
    }
}

/// A unicode61 tokenizer of the connection's own, for the snippets' token positions.
struct Words {
    tokenizer: ffi::fts5_tokenizer,
    instance: *mut ffi::Fts5Tokenizer,
}

/// What a byte is to [`Words::tokenize`]: an ASCII separator, an ASCII letter or digit,
/// or part of a character beyond ASCII.
const SEPARATOR: u8 = 0;
const ALNUM: u8 = 1;
const OTHER: u8 = 2;
const BYTE_CLASS: [u8; 256] = {
    let mut class = [SEPARATOR; 256];
    let mut byte = 0;
    while byte < 256 {
        class[byte] = if byte >= 0x80 {
            OTHER
        } else if (byte as u8).is_ascii_alphanumeric() {
            ALNUM
        } else {
            SEPARATOR
        };
        byte += 1;
    }
    class
};

impl Words {
    /// A unicode61 tokenizer with its default options, as `porter unicode61` uses it.
    fn new(api: *mut ffi::fts5_api) -> Option<Words> {
        // SAFETY: `api` is FTS5's API object; the tokenizer made here is deleted by
        // `drop_words` (or right away when incomplete).
        unsafe {
            let find = (*api).xFindTokenizer?;
            let mut user = null_mut();
            let mut tokenizer: ffi::fts5_tokenizer = std::mem::zeroed();
            if find(api, c"unicode61".as_ptr(), &mut user, &mut tokenizer) != ffi::SQLITE_OK {
                return None;
            }
            let (Some(create), Some(_), Some(_)) =
                (tokenizer.xCreate, tokenizer.xDelete, tokenizer.xTokenize)
            else {
                return None;
            };
            let mut instance = null_mut();
            (create(user, null_mut(), 0, &mut instance) == ffi::SQLITE_OK && !instance.is_null())
                .then_some(Words {
                    tokenizer,
                    instance,
                })
        }
    }

    /// Feeds `text`'s unicode61 tokens to `callback` until it answers [`STOP`]. Runs of
    /// ASCII letters and digits are tokens here, without a call into SQLite (the
    /// tokenizer's callbacks were most of a snippet's time); a run with other bytes goes
    /// to unicode61 itself, which alone knows its Unicode classes. Splitting at ASCII
    /// separators changes nothing: unicode61 (with its default options, as the index
    /// uses it) never takes one into a token, and its UTF-8 decoding never steps over one.
    fn tokenize<F: FnMut(c_int, usize, usize) -> c_int>(
        &self,
        text: &[u8],
        callback: &mut F,
    ) -> std::result::Result<(), Code> {
        let class = |at: usize| BYTE_CLASS[usize::from(text[at])];
        let mut at = 0;
        while at < text.len() {
            if class(at) == SEPARATOR {
                at += 1;
                continue;
            }
            let start = at;
            let mut ascii = true;
            while at < text.len() {
                match class(at) {
                    SEPARATOR => break,
                    OTHER => ascii = false,
                    _ => {}
                }
                at += 1;
            }
            let rc = if ascii {
                callback(0, start, at)
            } else {
                let mut shifted =
                    |flags: c_int, s: usize, e: usize| callback(flags, start + s, start + e);
                self.tokenize_with_unicode61(&text[start..at], &mut shifted)?
            };
            match rc {
                ffi::SQLITE_OK => {}
                STOP => return Ok(()),
                rc => return Err(rc),
            }
        }
        Ok(())
    }

    /// unicode61's own tokens of `text`: the callback's last answer ([`STOP`] when it
    /// stopped the tokenizer).
    fn tokenize_with_unicode61(
        &self,
        text: &[u8],
        callback: &mut dyn FnMut(c_int, usize, usize) -> c_int,
    ) -> std::result::Result<c_int, Code> {
        // SAFETY: the tokenizer instance lives as long as the function's registration;
        // `on_token` gets the context `run_tokenizer` made.
        run_tokenizer(callback, |context| unsafe {
            Ok((self.tokenizer.xTokenize.ok_or(ffi::SQLITE_MISUSE)?)(
                self.instance,
                context,
                ffi::FTS5_TOKENIZE_AUX,
                text.as_ptr().cast(),
                text.len() as c_int,
                Some(on_token),
            ))
        })
    }
}

impl Drop for Words {
    fn drop(&mut self) {
        if let Some(delete) = self.tokenizer.xDelete {
            // SAFETY: the instance was made by this tokenizer's xCreate, and is deleted
            // once.
            unsafe { delete(self.instance) };
        }
    }
}

unsafe extern "C" fn drop_words(words: *mut c_void) {
    if !words.is_null() {
        // SAFETY: made by `Box::into_raw` in `register`; SQLite calls this once.
        drop(unsafe { Box::from_raw(words.cast::<Words>()) });
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

pub(super) type Code = c_int;

pub(super) fn check(rc: c_int) -> std::result::Result<(), Code> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}

/// A tokenizer callback's answer that stops the tokenizer early (not an error).
const STOP: c_int = ffi::SQLITE_DONE;

/// Runs an FTS5 tokenizer (`call`, given the context to pass with [`on_token`]) that
/// feeds its tokens to `callback`: SQLITE_OK when it went to the end, [`STOP`] when the
/// callback stopped it (whichever of the two the tokenizer answers then: unicode61 turns
/// the callback's answer into SQLITE_OK), else the tokenizer's error.
fn run_tokenizer(
    callback: &mut dyn FnMut(c_int, usize, usize) -> c_int,
    call: impl FnOnce(*mut c_void) -> std::result::Result<c_int, Code>,
) -> std::result::Result<c_int, Code> {
    let mut stopped = false;
    let mut watched = |flags: c_int, start: usize, end: usize| {
        let rc = callback(flags, start, end);
        stopped |= rc == STOP;
        rc
    };
    let mut watched: &mut dyn FnMut(c_int, usize, usize) -> c_int = &mut watched;
    let context: *mut c_void =
        (&mut watched as *mut &mut dyn FnMut(c_int, usize, usize) -> c_int).cast();
    let rc = call(context)?;
    match rc {
        _ if stopped => Ok(STOP),
        ffi::SQLITE_OK => Ok(ffi::SQLITE_OK),
        rc => Err(rc),
    }
}

unsafe extern "C" fn on_token(
    context: *mut c_void,
    flags: c_int,
    _token: *const c_char,
    _length: c_int,
    start: c_int,
    end: c_int,
) -> c_int {
    // SAFETY: `context` is the `&mut dyn FnMut` that `run_tokenizer` made.
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
        match self.words {
            Some(words) => words.tokenize(text, &mut callback),
            // SAFETY: the API and context are the ones FTS5 gave this call; `on_token`
            // gets the context `run_tokenizer` made.
            None => run_tokenizer(&mut callback, |context| unsafe {
                Ok((self.api.xTokenize.ok_or(ffi::SQLITE_MISUSE)?)(
                    self.fts,
                    text.as_ptr().cast(),
                    text.len() as c_int,
                    context,
                    Some(on_token),
                ))
            })
            .map(|_| ()),
        }
    }

    /// The start and end byte offsets of the first `limit` tokens of `text` (colocated
    /// tokens, which share the position before them, left out).
    fn token_offsets(
        &self,
        text: &[u8],
        limit: usize,
    ) -> std::result::Result<Vec<(usize, usize)>, Code> {
        let mut tokens = Vec::new();
        if limit > 0 {
            self.tokenize(text, |flags, start, end| {
                if flags & ffi::FTS5_TOKEN_COLOCATED == 0 {
                    tokens.push((start.min(text.len()), end.min(text.len())));
                }
                if tokens.len() >= limit {
                    STOP
                } else {
                    ffi::SQLITE_OK
                }
            })?;
        }
        Ok(tokens)
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
        let to = from + all[from..to].partition_point(|i| i.offset < SNIPPET_SCAN_TOKENS);
        let here = &all[from..to];
        let phrase_size = |p: usize| phrase_sizes.get(p).copied().unwrap_or(1);
        let text = self.text(column)?;
        let doc_size = self.size(column)?;

        // The tokens a snippet can use: up to a window past the last match (a window
        // starts at or before the match it was chosen for), the first window without one.
        let needed = here
            .last()
            .map_or(n, |last| last.offset.saturating_add(n))
            .max(0);
        let tokens = self.token_offsets(text, usize::try_from(needed).unwrap_or(usize::MAX))?;

        let mut best = (0i64, 0i64); // (score, first token)
        if let Some(last) = here.last() {
            // Sentence starts: a token after '.' or ':' and white space. Those after the
            // last match are never used.
            let mut starts: Vec<i64> = Vec::new();
            for (position, &(start, _)) in tokens.iter().enumerate() {
                let position = position as i64;
                if position > last.offset {
                    break;
                }
                if position > 0 {
                    let before = &text[..start];
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
            }
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
            // The last sentence start at or before the match (the matches are in offset
            // order: it only moves forward).
            let mut j = 0;
            for instance in here {
                if instance.offset > doc_size {
                    return Err(ffi::SQLITE_CORRUPT_VTAB);
                }
                let (total, adjusted) = score(instance.offset);
                if total > best.0 {
                    best = (total, adjusted);
                }
                if !starts.is_empty() && doc_size > n {
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
        // A window past the tokens collected (a phrase longer than the window can move
        // it there): the text again, far enough.
        let tokens = if tokens.len() == needed as usize && range_end >= needed {
            self.token_offsets(text, usize::try_from(range_end + 1).unwrap_or(usize::MAX))?
        } else {
            tokens
        };
        let first = usize::try_from(range_start).unwrap_or(usize::MAX);
        for (at, &(start, end)) in tokens.iter().enumerate().skip(first) {
            let at = at as i64;
            if at > range_end {
                break;
            }
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
        }
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
        const WORDS: [&str; 21] = [
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
            "café",
            "cafe\u{301}s",
            "¶",
            "x²",
            "“quoted”",
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

    /// Every token (flags, start, end) of `text` as [`Words::tokenize`] gives them, and
    /// as unicode61 alone does.
    fn both_tokenizings(words: &Words, text: &[u8]) -> [Vec<(c_int, usize, usize)>; 2] {
        let mut fast = Vec::new();
        words
            .tokenize(text, &mut |flags, start, end| {
                fast.push((flags, start, end));
                ffi::SQLITE_OK
            })
            .unwrap();
        let mut unicode61 = Vec::new();
        let rc = words
            .tokenize_with_unicode61(text, &mut |flags, start, end| {
                unicode61.push((flags, start, end));
                ffi::SQLITE_OK
            })
            .unwrap();
        assert_eq!(rc, ffi::SQLITE_OK);
        [fast, unicode61]
    }

    #[test]
    fn ascii_runs_are_the_tokens_unicode61_finds() {
        let conn = Connection::open_in_memory().unwrap();
        let words = Words::new(fts5_api(&conn).unwrap()).unwrap();
        // Each code point of the planes people write in, alone and inside ASCII words:
        // letters, digits, marks (which continue a token but do not start one),
        // punctuation, symbols, private use, white space.
        let mut every = String::new();
        for c in (0x80u32..0x3400)
            .chain(0xA000..0xAC00)
            .chain(0xE000..0xE100)
            .chain(0xF900..0x1_0000)
            .chain(0x1_0000..0x1_0400)
            .chain(0x1_D400..0x1_D800)
            .chain(0x1_F000..0x1_FB00)
            .filter_map(char::from_u32)
        {
            every.push('a');
            every.push(c);
            every.push_str("1 ");
            every.push(c);
            every.push_str(". ");
        }
        let texts: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"   ".to_vec(),
            b"os.path.join(a_b, 'c-d'); x=1.5e10 \tfind_package(ZLIB)\n".to_vec(),
            "Straße café cafe\u{301} naïve ¶ “quoted” x² a·b 日本語 ١٢٣ ｆｕｌｌ 😀end"
                .as_bytes()
                .to_vec(),
            // Not UTF-8: stray continuation bytes, a cut sequence, bytes never in UTF-8.
            b"ab\xffcd \x80\x80x y\xe2\x82 z\xc3 \xf0\x9f\x98 end\xe2".to_vec(),
            every.into_bytes(),
        ];
        for text in &texts {
            let [fast, unicode61] = both_tokenizings(&words, text);
            assert_eq!(fast, unicode61, "{}", String::from_utf8_lossy(text));
        }
        // Stopped early, in an ASCII run and in a run unicode61 tokenizes.
        let text = "one two café three".as_bytes();
        for stop_after in 1..=4 {
            let mut seen = 0;
            words
                .tokenize(text, &mut |_, _, _| {
                    seen += 1;
                    if seen == stop_after {
                        STOP
                    } else {
                        ffi::SQLITE_OK
                    }
                })
                .unwrap();
            assert_eq!(seen, stop_after);
        }
    }

    #[test]
    fn a_window_is_looked_for_in_the_first_tokens_of_a_column_only() {
        let conn = summary_index(true);
        // A long text (a PDF's) with "zlib" at token 100 and "gzip" past the bound.
        let long = |at: usize, word: &str| -> String {
            let mut words = vec!["filler"; SNIPPET_SCAN_TOKENS as usize + 5_000];
            words[at] = word;
            words.join(" ")
        };
        for (rowid, text) in [
            (1, long(100, "zlib")),
            (2, long(SNIPPET_SCAN_TOKENS as usize + 10, "gzip")),
        ] {
            conn.execute(
                "INSERT INTO t (rowid, c1, text) VALUES (?1, 'any', ?2)",
                rusqlite::params![rowid, text],
            )
            .unwrap();
        }
        // The match in reach: its window, as FTS5's snippet() gives it.
        assert_eq!(
            ours(&conn, "zlib", 1, true),
            builtin(&conn, "zlib", 1, true)
        );
        assert!(ours(&conn, "zlib", 1, true).contains("\u{2}zlib\u{3}"));
        // The match past it: the column's first window, without marks.
        let far = ours(&conn, "gzip", 2, true);
        assert!(!far.contains('\u{2}') && far.starts_with("filler"), "{far}");
        assert_ne!(far, builtin(&conn, "gzip", 2, true));
    }

    #[test]
    fn snippets_are_those_of_fts5_snippet_column_by_column() {
        // With the table's own tokenizer and with unicode61 for the positions.
        for porter_unicode61 in [false, true] {
            compare_with_builtin(porter_unicode61);
        }
    }

    /// An index `t` with the summary's columns, `sediment_snippet` registered.
    fn summary_index(porter_unicode61: bool) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn, porter_unicode61).unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(c0 UNINDEXED, c1, title, description, text,
                 secondary_text, big_headlines, small_headlines, code_text, quote_text,
                 url_path, tokenize='porter unicode61');",
        )
        .unwrap();
        conn
    }

    fn compare_with_builtin(porter_unicode61: bool) {
        let conn = summary_index(porter_unicode61);
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
            "café",
            "quoted x²",
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
