//! Payloads with text (HTML, and the other full-text types of [`crate::doctext`]): read
//! back from their WARCs, analysed (in parallel), kept for the generations that need them,
//! and remembered as "payload → text pile" so a later run does not read them again.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use anyhow::Result;
use rayon::prelude::*;
use rusqlite::{Connection, OptionalExtension, params};
use url::Url;

use crate::doctext::pdf::PdfReader;
use crate::doctext::{DocText, Kind, Problem, Source};
use crate::html::{DocumentDescription, Link, TextPile, analyze};
use crate::key::Sha1Key;
use crate::project::limits::{BodyCuts, cut_pile};
use crate::project::signals::PageSignals;
use crate::project::source::{BodyReader, Unavailable};
use crate::store::Store;

/// What the summarizer keeps of one analysed HTML payload.
#[derive(Debug)]
pub struct Analysis {
    /// The document URL links and dates were resolved against.
    pub url: String,
    pub pile: TextPile,
    pub description: DocumentDescription,
    pub links: Vec<Link>,
    /// Canonical, noindex and meta-refresh redirect (shared with the crawl database).
    pub signals: PageSignals,
    pub body_len: u64,
    /// How the body was cut before analysis (size limit, compression bomb).
    pub cuts: BodyCuts,
    /// The text pile was cut at `--max-text-bytes`.
    pub text_cut: bool,
    /// Where the text came from.
    pub source: Source,
    /// Why some or all of the text could not be had (reported as a problem).
    pub problem: Option<Problem>,
}

/// One payload to analyse, for the URL of the capture that needs it.
#[derive(Debug, Clone)]
pub struct Job {
    pub digest: Sha1Key,
    pub url: Url,
    pub content_type: Option<String>,
    /// How its text is had (from the capture's type, or its original's).
    pub kind: Kind,
}

/// How payloads are read back and analysed: the body reader (and its limit), and how much
/// text one page keeps.
#[derive(Clone)]
pub struct Pages {
    pub bodies: BodyReader,
    pub max_text_bytes: usize,
    /// PDF text in a bounded child process.
    pub pdf: PdfReader,
}

/// Reads and analyses one payload.
pub fn analyse(store: &Store, pages: &Pages, job: &Job) -> Result<Result<Analysis, Unavailable>> {
    let body = match pages.bodies.read(store, &job.digest)? {
        Ok(body) => body,
        Err(unavailable) => return Ok(Err(unavailable)),
    };
    let content_type = body.content_type.as_deref().or(job.content_type.as_deref());
    if job.kind != Kind::Html {
        let mut doc = match job.kind {
            Kind::Pdf => match grobid_text(store, &job.digest, pages.max_text_bytes)? {
                Some(doc) => doc,
                None => pdf_text(pages, &body.bytes),
            },
            kind => crate::doctext::extract(kind, &body.bytes, content_type, pages.max_text_bytes),
        };
        let text_cut = cut_pile(&mut doc.pile, pages.max_text_bytes);
        let words = doc.pile.text.split_whitespace().count();
        return Ok(Ok(Analysis {
            url: job.url.as_str().to_string(),
            signals: PageSignals::of(&Default::default(), body.link.as_deref(), &job.url),
            description: DocumentDescription {
                title: doc.title,
                description: doc.description,
                // Running text, as the HTML rule would rate a page of these words.
                indexiness: -(words as f64) / 50.0,
                ..Default::default()
            },
            pile: doc.pile,
            links: Vec::new(),
            body_len: body.bytes.len() as u64,
            cuts: BodyCuts::of(&body),
            text_cut,
            source: doc.source,
            problem: doc.problem,
        }));
    }
    let mut document = analyze(&body.bytes, content_type, &job.url);
    let text_cut = cut_pile(&mut document.pile, pages.max_text_bytes);
    let signals = PageSignals::of(
        &document.description.directives,
        body.link.as_deref(),
        &job.url,
    );
    Ok(Ok(Analysis {
        url: job.url.as_str().to_string(),
        signals,
        pile: document.pile,
        description: document.description,
        links: document.links,
        body_len: body.bytes.len() as u64,
        cuts: BodyCuts::of(&body),
        text_cut,
        source: Source::Html,
        problem: None,
    }))
}

/// A PDF's text from GROBID's TEI (`grobid0:tei_json`) when GROBID has run for it: title,
/// abstract (also the description), body, acknowledgement and annex.
fn grobid_text(store: &Store, digest: &Sha1Key, limit: usize) -> Result<Option<DocText>> {
    use crate::doctext::{Field, Piler, short};
    use crate::store::cells::Projection;
    let Some(column) = store.schema().column_id("grobid0:tei_json") else {
        return Ok(None);
    };
    let projection = Projection {
        families: vec![column.family],
        columns: Some(vec![column]),
        versions: 1,
    };
    let Some(row) = store.read_row(digest, &projection)? else {
        return Ok(None);
    };
    let Some(json) = row
        .latest(column)
        .and_then(|v| serde_json::from_slice::<serde_json::Value>(v).ok())
    else {
        return Ok(None);
    };
    let field = |name: &str| json.get(name).and_then(|v| v.as_str()).unwrap_or("");
    let (title, abstract_text, body) = (field("title"), field("abstract"), field("body"));
    if body.trim().is_empty() && abstract_text.trim().is_empty() {
        // GROBID read no text (a scanned PDF, or a failed run): the library may do better.
        return Ok(None);
    }
    let mut piler = Piler::new(limit);
    piler.push(Field::BigHeadlines, title);
    piler.push(Field::Text, abstract_text);
    piler.separate(Field::Text, true);
    piler.push(Field::Text, body);
    piler.push(Field::Secondary, field("acknowledgement"));
    piler.separate(Field::Secondary, true);
    piler.push(Field::Secondary, field("annex"));
    Ok(Some(DocText {
        pile: piler.finish(),
        title: short(title),
        description: short(abstract_text),
        source: Source::GrobidTei,
        problem: None,
    }))
}

/// A PDF's text from the PDF library, or an empty pile and the problem.
fn pdf_text(pages: &Pages, pdf: &[u8]) -> DocText {
    use crate::doctext::{Field, Piler, short};
    let mut piler = Piler::new(pages.max_text_bytes.saturating_add(1));
    let (title, problem) = match pages.pdf.read(pdf, pages.max_text_bytes.saturating_add(1)) {
        Ok(found) => {
            piler.push(Field::Text, &found.text);
            (found.title.as_deref().and_then(short), None)
        }
        Err(problem) => (None, Some(problem)),
    };
    DocText {
        pile: piler.finish(),
        title,
        description: None,
        source: Source::PdfTextLibrary,
        problem,
    }
}

/// One payload's analysis, or why its body could not be read (or the store failed).
pub type AnalysisResult = Result<Result<Analysis, Unavailable>>;

/// Analyses many payloads on the rayon pool; results in job order.
pub fn analyse_all(store: &Store, pages: &Pages, jobs: &[Job]) -> Vec<AnalysisResult> {
    jobs.par_iter()
        .map(|job| analyse(store, pages, job))
        .collect()
}

/// A payload's text pile as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PileRef {
    pub text_pile_id: i64,
    pub digest: [u8; 64],
    /// `<meta name=robots content=noindex>`: such pages are kept out of the search index.
    pub noindex: bool,
}

impl PileRef {
    /// The pile holds no text (a scanned PDF, a document the library could not read).
    pub fn is_empty(&self) -> bool {
        static EMPTY: std::sync::OnceLock<[u8; 64]> = std::sync::OnceLock::new();
        self.digest == *EMPTY.get_or_init(|| crate::doctext::Piler::new(0).finish().digest)
    }
}

/// Stores a pile once per digest and remembers which payload made it. Returns the pile and
/// whether it is new.
pub fn store_pile(
    conn: &Connection,
    payload: &Sha1Key,
    analysis: &Analysis,
) -> Result<(PileRef, bool)> {
    let pile = &analysis.pile;
    let inserted = conn
        .prepare_cached(
            "INSERT INTO text_pile (blake2b512_digest, text, secondary_text, big_headlines,
                 small_headlines, code_text, quote_text)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (blake2b512_digest) DO NOTHING",
        )?
        .execute(params![
            pile.digest.as_slice(),
            pile.text,
            pile.secondary_text,
            pile.big_headlines,
            pile.small_headlines,
            pile.code_text,
            pile.quote_text
        ])?;
    let text_pile_id: i64 = if inserted == 1 {
        conn.last_insert_rowid()
    } else {
        conn.prepare_cached("SELECT text_pile_id FROM text_pile WHERE blake2b512_digest = ?1")?
            .query_row([pile.digest.as_slice()], |r| r.get(0))?
    };
    let noindex = analysis.description.directives.robots.noindex;
    conn.prepare_cached(
        "INSERT INTO summary_payload (payload_sha1, text_pile_id, robots_noindex, text_source)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (payload_sha1) DO UPDATE SET text_pile_id = excluded.text_pile_id,
             robots_noindex = excluded.robots_noindex, text_source = excluded.text_source",
    )?
    .execute(params![
        payload.0.as_slice(),
        text_pile_id,
        noindex,
        analysis.source.as_str()
    ])?;
    Ok((
        PileRef {
            text_pile_id,
            digest: pile.digest,
            noindex,
        },
        inserted == 1,
    ))
}

/// The pile an earlier run made from a payload.
pub fn stored_pile(conn: &Connection, payload: &Sha1Key) -> Result<Option<PileRef>> {
    Ok(conn
        .prepare_cached(
            "SELECT p.text_pile_id, t.blake2b512_digest, p.robots_noindex
             FROM summary_payload p JOIN text_pile t ON t.text_pile_id = p.text_pile_id
             WHERE p.payload_sha1 = ?1",
        )?
        .query_row([payload.0.as_slice()], |r| {
            let digest: Vec<u8> = r.get(1)?;
            Ok((r.get::<_, i64>(0)?, digest, r.get::<_, bool>(2)?))
        })
        .optional()?
        .and_then(|(text_pile_id, digest, noindex)| {
            Some(PileRef {
                text_pile_id,
                digest: digest.try_into().ok()?,
                noindex,
            })
        }))
}

/// A bounded first-in-first-out map: analyses and pile references live here between the
/// batch that made them and the generations that need them.
pub struct Fifo<V> {
    map: HashMap<Sha1Key, (V, usize)>,
    order: VecDeque<Sha1Key>,
    capacity: usize,
    /// The sizes given with the values, together at most `byte_limit`.
    bytes: usize,
    byte_limit: usize,
}

impl<V> Fifo<V> {
    pub fn new(capacity: usize) -> Fifo<V> {
        Fifo::with_byte_limit(capacity, usize::MAX)
    }

    /// At most `capacity` values whose sizes (see [`Fifo::insert_sized`]) add up to at
    /// most `byte_limit`.
    pub fn with_byte_limit(capacity: usize, byte_limit: usize) -> Fifo<V> {
        Fifo {
            map: HashMap::new(),
            order: VecDeque::new(),
            capacity: capacity.max(1),
            bytes: 0,
            byte_limit,
        }
    }

    pub fn get(&self, key: &Sha1Key) -> Option<&V> {
        self.map.get(key).map(|(value, _)| value)
    }

    pub fn contains(&self, key: &Sha1Key) -> bool {
        self.map.contains_key(key)
    }

    pub fn insert(&mut self, key: Sha1Key, value: V) {
        drop(self.insert_sized(key, value, 0));
    }

    /// Inserts a value that holds about `size` bytes, evicting the oldest values while the
    /// cache is over either limit (a value larger than the byte limit is not kept). Returns
    /// the values it let go, for the caller to free where it likes.
    pub fn insert_sized(&mut self, key: Sha1Key, value: V, size: usize) -> Vec<V> {
        let mut evicted = Vec::new();
        self.bytes += size;
        match self.map.insert(key, (value, size)) {
            Some((replaced, old)) => {
                self.bytes -= old;
                evicted.push(replaced);
            }
            None => self.order.push_back(key),
        }
        while self.order.len() > self.capacity || self.bytes > self.byte_limit {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some((value, size)) = self.map.remove(&old) {
                self.bytes -= size;
                evicted.push(value);
            }
        }
        evicted
    }
}

impl Analysis {
    /// About the bytes an analysis holds (its links are most of it on pages of many links).
    pub fn approx_bytes(&self) -> usize {
        let links: usize = self
            .links
            .iter()
            .map(|l| {
                std::mem::size_of::<Link>()
                    + l.url.as_str().len()
                    + l.text.len()
                    + l.fragment.as_ref().map_or(0, String::len)
            })
            .sum();
        let pile: usize = self.pile.fields().iter().map(|f| f.len()).sum();
        std::mem::size_of::<Analysis>() + self.url.len() + pile + links
    }
}

/// Analyses kept per payload digest.
pub type AnalysisCache = Fifo<Arc<Analysis>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_evicts_the_oldest() {
        let mut f = Fifo::new(2);
        let k = |b: u8| Sha1Key([b; 20]);
        f.insert(k(1), 1);
        f.insert(k(2), 2);
        f.insert(k(1), 10);
        assert_eq!(f.get(&k(1)), Some(&10));
        f.insert(k(3), 3);
        assert!(!f.contains(&k(1)));
        assert_eq!(f.get(&k(2)), Some(&2));
        assert_eq!(f.get(&k(3)), Some(&3));
    }

    #[test]
    fn fifo_keeps_its_sizes_under_the_byte_limit() {
        let mut f = Fifo::with_byte_limit(10, 100);
        let k = |b: u8| Sha1Key([b; 20]);
        assert!(f.insert_sized(k(1), 1, 60).is_empty());
        assert!(f.insert_sized(k(2), 2, 30).is_empty());
        assert_eq!(f.insert_sized(k(2), 20, 40), [2], "the value it replaced");
        assert!(f.contains(&k(1)) && f.contains(&k(2)));
        assert_eq!(
            f.insert_sized(k(3), 3, 20),
            [1],
            "60 + 40 + 20 is over 100: the oldest goes"
        );
        assert!(f.contains(&k(2)) && f.contains(&k(3)));
        assert_eq!(
            f.insert_sized(k(4), 4, 500),
            [20, 3, 4],
            "larger than the limit: not kept, and the others went first"
        );
        assert!(!f.contains(&k(4)));
    }
}
