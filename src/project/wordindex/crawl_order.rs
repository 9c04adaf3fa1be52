//! The order in which a breadth-first crawler would have met the URLs (see the module
//! documentation of [`super`]): seeds first, then every node by link depth, each with the
//! node it was discovered from.

use std::collections::HashSet;

use anyhow::Result;
use rusqlite::{OptionalExtension, params};

use super::{Snapshot, Spill};

/// One node in crawl order, as [`Snapshot::for_each_in_order`] gives it.
pub struct Entry {
    /// Position in crawl order, from 0.
    pub position: u32,
    pub url: String,
    /// Where the page record is (None: a URL only known as a link or redirect target);
    /// read it with [`Snapshot::page`].
    pub page: Option<(u64, u64)>,
    /// Link depth from the seeds.
    pub hops: u32,
    /// Position of the node it was discovered from (None for seeds).
    pub referrer: Option<u32>,
}

/// The crawl order, once [`Snapshot::crawl_order`] has placed every node.
#[derive(Debug, Clone, Copy)]
pub struct CrawlOrder {
    /// Nodes placed (every node).
    pub len: u32,
}

impl Snapshot {
    /// The breadth-first crawl order; see the module documentation. Seeds and the starts
    /// of further crawls come from one external sort of the pages by (first capture
    /// time, URL); the crawl queue is the `ord` table itself, read from its head.
    pub fn crawl_order(&mut self) -> Result<CrawlOrder> {
        let starts: HashSet<u32> = self.crawl_starts.values().map(|s| s.3).collect();
        let mut sorter = self.sorter();
        {
            let mut stmt = self
                .db
                .prepare("SELECT id, url, linked, first_ts FROM node WHERE page IS NOT NULL")?;
            let mut rows = stmt.query([])?;
            let mut record = Vec::new();
            while let Some(row) = rows.next()? {
                let id: u32 = row.get(0)?;
                let linked: bool = row.get(2)?;
                record.clear();
                record.extend_from_slice(row.get_ref(3)?.as_str()?.as_bytes());
                record.push(0);
                record.extend_from_slice(row.get_ref(1)?.as_str()?.as_bytes());
                record.push(0);
                record.extend_from_slice(&id.to_be_bytes());
                record.push(u8::from(starts.contains(&id) || !linked));
                sorter.push(&record)?;
            }
        }
        let mut sorted = sorter.finish()?;
        let mut rest = Spill::create(self.scratch.path())?;
        while let Some(record) = sorted.next()? {
            let n = record.len();
            let id = u32::from_be_bytes(record[n - 5..n - 1].try_into()?);
            if record[n - 1] == 1 {
                self.place(id, 0, None)?;
            } else {
                rest.append(&id.to_le_bytes())?;
            }
        }
        drop(sorted);
        self.breadth_first()?;
        rest.flush()?;
        let mut id = Vec::new();
        for at in (0..rest.len).step_by(4) {
            rest.read((at, 4), &mut id)?;
            let node = u32::from_le_bytes(id[..4].try_into()?);
            if !self.is_placed(node)? {
                self.place(node, 0, None)?;
                self.breadth_first()?;
            }
        }
        // Only link targets of pages exist besides pages, and every page was reached.
        loop {
            let unplaced: Vec<u32> = self
                .db
                .prepare_cached("SELECT id FROM node WHERE pos IS NULL ORDER BY id LIMIT 4096")?
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            if unplaced.is_empty() {
                break;
            }
            for node in unplaced {
                self.place(node, 0, None)?;
            }
        }
        Ok(CrawlOrder { len: self.placed })
    }

    fn is_placed(&self, node: u32) -> Result<bool> {
        Ok(self
            .db
            .prepare_cached("SELECT pos IS NOT NULL FROM node WHERE id = ?1")?
            .query_row([node], |r| r.get(0))?)
    }

    fn place(&mut self, node: u32, hops: u32, referrer: Option<u32>) -> Result<()> {
        self.db
            .prepare_cached("UPDATE node SET pos = ?2, hops = ?3, referrer = ?4 WHERE id = ?1")?
            .execute(params![node, self.placed, hops, referrer])?;
        self.db
            .prepare_cached("INSERT INTO ord (pos, node) VALUES (?1, ?2)")?
            .execute(params![self.placed, node])?;
        self.placed += 1;
        Ok(())
    }

    /// Follows the links of the queued nodes until the queue is empty.
    fn breadth_first(&mut self) -> Result<()> {
        let mut record = Vec::new();
        while self.head < self.placed {
            let (node, hops, page): (u32, u32, Option<(i64, i64)>) = self
                .db
                .prepare_cached(
                    "SELECT n.id, n.hops, n.page, n.page_len FROM ord o JOIN node n ON n.id = o.node
                     WHERE o.pos = ?1 AND n.edges > 0",
                )?
                .query_row([self.head], |r| {
                    Ok((r.get(0)?, r.get(1)?, Some((r.get(2)?, r.get(3)?))))
                })
                .optional()?
                .unwrap_or((0, 0, None));
            self.head += 1;
            let Some((offset, len)) = page else {
                continue;
            };
            let page = self.read_page((offset as u64, len as u64), &mut record)?;
            for target in page.edges() {
                if !self.is_placed(target)? {
                    self.place(target, hops + 1, Some(node))?;
                }
            }
        }
        Ok(())
    }

    /// Calls `visit` with every node in crawl order (after [`Snapshot::crawl_order`]).
    pub fn for_each_in_order(
        &self,
        mut visit: impl FnMut(&Snapshot, Entry) -> Result<()>,
    ) -> Result<()> {
        let mut stmt = self.db.prepare(
            "SELECT o.pos, n.url, n.page, n.page_len, n.hops, r.pos
             FROM ord o JOIN node n ON n.id = o.node LEFT JOIN node r ON r.id = n.referrer
             ORDER BY o.pos",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let page: Option<i64> = row.get(2)?;
            let page_len: Option<i64> = row.get(3)?;
            visit(
                self,
                Entry {
                    position: row.get(0)?,
                    url: row.get(1)?,
                    page: page.zip(page_len).map(|(at, len)| (at as u64, len as u64)),
                    hops: row.get(4)?,
                    referrer: row.get(5)?,
                },
            )?;
        }
        Ok(())
    }
}
