//! The Cloud Bigtable backend (`--store bigtable://PROJECT/INSTANCE/TABLE`).

use std::path::Path;

use anyhow::{Result, bail};

use super::backend::{Backend, Batch, CellFilter, KeyVisitor, RowVisitor, Space};
use crate::key::Sha1Key;
use crate::schema::Schema;

/// `bigtable://PROJECT/INSTANCE/TABLE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    pub project: String,
    pub instance: String,
    pub table: String,
}

impl Address {
    /// The address in a `--store` value, `None` when it names a directory.
    pub fn parse(store: &Path) -> Result<Option<Address>> {
        let Some(text) = store.to_str() else {
            return Ok(None);
        };
        let Some(rest) = text.strip_prefix("bigtable://") else {
            return Ok(None);
        };
        let parts: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
        match parts.as_slice() {
            [project, instance, table]
                if [project, instance, table].iter().all(|p| !p.is_empty()) =>
            {
                Ok(Some(Address {
                    project: project.to_string(),
                    instance: instance.to_string(),
                    table: table.to_string(),
                }))
            }
            _ => bail!("a Bigtable store is bigtable://PROJECT/INSTANCE/TABLE, not {text}"),
        }
    }
}

pub struct BigtableBackend {}

impl BigtableBackend {
    pub fn open(_address: &Address, _schema: &Schema, _writer: bool) -> Result<BigtableBackend> {
        bail!("the Bigtable backend is not built yet")
    }
}

impl Backend for BigtableBackend {
    fn describe(&self) -> String {
        String::new()
    }
    fn exclusive_writer(&self) -> bool {
        false
    }
    fn read_rows(&self, _: &[Sha1Key], _: &CellFilter, _: &mut RowVisitor<'_>) -> Result<()> {
        unimplemented!()
    }
    fn scan_rows(
        &self,
        _: &CellFilter,
        _: Option<&[u8]>,
        _: Option<&[u8]>,
        _: &mut RowVisitor<'_>,
    ) -> Result<()> {
        unimplemented!()
    }
    fn get(&self, _: Space, _: &[u8]) -> Result<Option<Vec<u8>>> {
        unimplemented!()
    }
    fn scan(&self, _: Space, _: &[u8], _: Option<&[u8]>, _: &mut KeyVisitor<'_>) -> Result<()> {
        unimplemented!()
    }
    fn write(&self, _: &Batch) -> Result<()> {
        unimplemented!()
    }
    fn check_and_set(
        &self,
        _: Space,
        _: &[u8],
        _: Option<&[u8]>,
        _: Option<&[u8]>,
    ) -> Result<bool> {
        unimplemented!()
    }
    fn flush(&self) -> Result<()> {
        Ok(())
    }
    fn publish(&self) -> Result<Option<u64>> {
        Ok(None)
    }
    fn publish_if_due(&self, _: std::time::Duration) -> Result<()> {
        Ok(())
    }
    fn mark_inconsistent(&self) -> Result<()> {
        Ok(())
    }
    fn mark_consistent(&self) -> Result<()> {
        Ok(())
    }
    fn close(&self) -> Result<()> {
        Ok(())
    }
    fn version(&self) -> Option<u64> {
        None
    }
    fn size_on_disk(&self) -> Option<u64> {
        None
    }
}
