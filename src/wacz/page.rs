//! The pages a WACZ listed (`pages/*.jsonl`), as the store keeps them in its meta family:
//! a leaf that the package reader, `export-wacz` and the JSON-lines form of a store share.

/// What `pages/*.jsonl` said about a page, as kept under [`page_key`].
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct StoredPage {
    pub url: String,
    pub ts: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The package file name and the page list member it came from.
    pub wacz: String,
    pub list: String,
}

/// The meta key of a listed page: `page/SURT 0x00 TIMESTAMP`.
pub fn page_key(surt: &str, ts: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(6 + surt.len() + ts.len());
    key.extend_from_slice(PAGE_PREFIX);
    key.extend_from_slice(surt.as_bytes());
    key.push(0);
    key.extend_from_slice(ts.as_bytes());
    key
}

/// Where the listed pages are in the meta family.
pub const PAGE_PREFIX: &[u8] = b"page/";
