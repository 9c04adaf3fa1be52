//! Where WARC files are: relocation rules recorded by `sediment relocate`, so that a
//! collection moved to another disk or mount point is found again without re-import.
//!
//! Captures keep the WARC's name as given (`warc`, shown in CDX output) and, for WARC
//! imports, its canonical absolute path at import time (`location`). A rule says "what
//! started with FROM now starts with TO"; rules apply in the order they were made, each to
//! the result of the previous ones, so a collection moved twice is still found.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use crate::store::Store;
use crate::store::backend::{Batch, Op, Space};

const PREFIX: &str = "relocate/";

/// One re-pointing of a path prefix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relocation {
    pub from: String,
    pub to: String,
}

impl Relocation {
    /// `path` with the rule applied (unchanged when it does not start with `from`).
    pub fn apply(&self, path: &str) -> String {
        match path.strip_prefix(self.from.as_str()) {
            Some(rest) => format!("{}{rest}", self.to),
            None => path.to_string(),
        }
    }
}

/// Applies every rule, in order.
pub fn relocate(rules: &[Relocation], path: &str) -> String {
    rules
        .iter()
        .fold(path.to_string(), |path, rule| rule.apply(&path))
}

/// A WARC file that captures name: its name as given and where it was imported from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct KnownWarc {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    pub captures: u64,
}

impl Store {
    /// Every WARC file the captures name, with how many captures each holds, by name.
    /// Reads every capture once; memory grows with the number of WARC files only.
    pub fn known_warcs(&self) -> Result<Vec<KnownWarc>> {
        let mut counts: std::collections::BTreeMap<(String, Option<String>), u64> =
            Default::default();
        self.for_each_capture(|capture| {
            if let Some(name) = capture.warc {
                *counts.entry((name, capture.location)).or_default() += 1;
            }
            Ok(true)
        })?;
        Ok(counts
            .into_iter()
            .map(|((name, location), captures)| KnownWarc {
                name,
                location,
                captures,
            })
            .collect())
    }

    /// The relocation rules, oldest first.
    pub fn relocations(&self) -> Result<Vec<Relocation>> {
        let mut out = Vec::new();
        self.scan_prefix(Space::Meta, PREFIX.as_bytes(), &mut |_, value| {
            if let Ok(rule) = serde_json::from_slice(value) {
                out.push(rule);
            }
            Ok(true)
        })?;
        Ok(out)
    }

    /// Records a new rule after the existing ones.
    pub fn add_relocation(&self, rule: &Relocation) -> Result<()> {
        if rule.from.is_empty() {
            bail!("the old prefix of a relocation cannot be empty");
        }
        let n = self.relocations()?.len();
        let mut batch = Batch::default();
        batch.push(Op::Put {
            space: Space::Meta,
            key: format!("{PREFIX}{n:010}").into_bytes(),
            value: serde_json::to_vec(rule)?,
        });
        self.write(&batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_apply_in_order_to_prefixes_only() {
        let rules = vec![
            Relocation {
                from: "/mnt/old/".into(),
                to: "/mnt/new/".into(),
            },
            Relocation {
                from: "/mnt/new/crawl".into(),
                to: "/data/crawl".into(),
            },
        ];
        assert_eq!(
            relocate(&rules, "/mnt/old/crawl/a.warc.gz"),
            "/data/crawl/a.warc.gz"
        );
        assert_eq!(
            relocate(&rules, "/mnt/old/other/b.warc"),
            "/mnt/new/other/b.warc"
        );
        assert_eq!(
            relocate(&rules, "/elsewhere/mnt/old/c.warc"),
            "/elsewhere/mnt/old/c.warc"
        );
        assert_eq!(relocate(&[], "x"), "x");
    }

    #[test]
    fn rules_are_kept_in_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert!(store.relocations().unwrap().is_empty());
        let first = Relocation {
            from: "/a/".into(),
            to: "/b/".into(),
        };
        let second = Relocation {
            from: "ITEM/".into(),
            to: "/items/ITEM/".into(),
        };
        store.add_relocation(&first).unwrap();
        store.add_relocation(&second).unwrap();
        assert_eq!(store.relocations().unwrap(), vec![first, second]);
        assert!(
            store
                .add_relocation(&Relocation {
                    from: String::new(),
                    to: "/x".into()
                })
                .is_err()
        );
    }
}
