//! The table schema as data: families, qualifiers, value types, versions, compression.
//!
//! `schemas/table.json` is the single source of truth. The binary embeds it; every
//! load validates it, so a broken edit fails loudly instead of corrupting a store.

use std::collections::HashMap;
use std::fmt;

use serde::Deserialize;

use crate::codec::ValueType;

/// The schema shipped with this build.
pub const EMBEDDED_SCHEMA: &str = include_str!("../schemas/table.json");

/// Why a schema document was refused.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("schema is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("schema has no families")]
    NoFamilies,
    #[error("family name {0:?} is not a lower-case identifier ([a-z][a-z0-9_]*)")]
    BadFamilyName(String),
    #[error("family {0:?} is declared twice")]
    DuplicateFamily(String),
    #[error(
        "qualifier {qualifier:?} is used in families {first:?} and {second:?}: qualifier names must be unique across families"
    )]
    DuplicateQualifier {
        qualifier: String,
        first: String,
        second: String,
    },
    #[error("qualifier {0:?} in family {1:?} is not an identifier ([a-z][a-z0-9_]*)")]
    BadQualifierName(String, String),
    #[error(
        "column {family}:{qualifier} has unknown type {value_type:?} (known: json, string, u64, i64)"
    )]
    UnknownType {
        family: String,
        qualifier: String,
        value_type: String,
    },
    #[error("family {0:?} has max_versions {1}: must be between 1 and 1000")]
    BadVersions(String, i64),
    #[error("family {0:?} has compression {1:?}: only \"snappy\" is supported")]
    BadCompression(String, String),
    #[error("family {0:?} has no columns")]
    NoColumns(String),
}

#[derive(Deserialize)]
struct RawSchema {
    table: String,
    #[serde(default)]
    description: String,
    families: Vec<RawFamily>,
}

#[derive(Deserialize)]
struct RawFamily {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default = "default_versions")]
    max_versions: i64,
    #[serde(default = "default_compression")]
    compression: String,
    columns: Vec<RawColumn>,
}

#[derive(Deserialize)]
struct RawColumn {
    qualifier: String,
    #[serde(rename = "type")]
    value_type: String,
    #[serde(default)]
    description: String,
}

fn default_versions() -> i64 {
    1
}

fn default_compression() -> String {
    "snappy".to_string()
}

/// A validated schema.
#[derive(Debug, Clone)]
pub struct Schema {
    pub table: String,
    pub description: String,
    pub families: Vec<Family>,
    by_name: HashMap<String, ColumnId>,
}

#[derive(Debug, Clone)]
pub struct Family {
    pub name: String,
    pub description: String,
    pub max_versions: usize,
    pub compression: String,
    pub columns: Vec<Column>,
}

#[derive(Debug, Clone)]
pub struct Column {
    pub family: String,
    pub qualifier: String,
    pub value_type: ValueType,
    pub description: String,
}

impl Column {
    /// `family:qualifier`, the spelling used in exports and on the command line.
    pub fn full_name(&self) -> String {
        format!("{}:{}", self.family, self.qualifier)
    }
}

/// Index of a column: (family index, column index within the family).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ColumnId {
    pub family: usize,
    pub column: usize,
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('a'..='z'))
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
}

impl Schema {
    /// The schema embedded in the binary. It is validated by a test, so this cannot fail
    /// in a released build; a broken edit is reported with its reason.
    pub fn embedded() -> Result<Schema, SchemaError> {
        Schema::parse(EMBEDDED_SCHEMA)
    }

    pub fn parse(text: &str) -> Result<Schema, SchemaError> {
        let raw: RawSchema = serde_json::from_str(text)?;
        if raw.families.is_empty() {
            return Err(SchemaError::NoFamilies);
        }
        let mut families = Vec::with_capacity(raw.families.len());
        let mut by_name: HashMap<String, ColumnId> = HashMap::new();
        let mut owner_of_qualifier: HashMap<String, String> = HashMap::new();
        for (family_index, fam) in raw.families.into_iter().enumerate() {
            if !is_identifier(&fam.name) {
                return Err(SchemaError::BadFamilyName(fam.name));
            }
            if families.iter().any(|f: &Family| f.name == fam.name) {
                return Err(SchemaError::DuplicateFamily(fam.name));
            }
            if !(1..=1000).contains(&fam.max_versions) {
                return Err(SchemaError::BadVersions(fam.name, fam.max_versions));
            }
            if fam.compression != "snappy" {
                return Err(SchemaError::BadCompression(fam.name, fam.compression));
            }
            if fam.columns.is_empty() {
                return Err(SchemaError::NoColumns(fam.name));
            }
            let mut columns = Vec::with_capacity(fam.columns.len());
            for (column_index, col) in fam.columns.into_iter().enumerate() {
                if !is_identifier(&col.qualifier) {
                    return Err(SchemaError::BadQualifierName(col.qualifier, fam.name));
                }
                if let Some(first) = owner_of_qualifier.get(&col.qualifier) {
                    return Err(SchemaError::DuplicateQualifier {
                        qualifier: col.qualifier,
                        first: first.clone(),
                        second: fam.name,
                    });
                }
                let value_type = ValueType::from_name(&col.value_type).ok_or_else(|| {
                    SchemaError::UnknownType {
                        family: fam.name.clone(),
                        qualifier: col.qualifier.clone(),
                        value_type: col.value_type.clone(),
                    }
                })?;
                owner_of_qualifier.insert(col.qualifier.clone(), fam.name.clone());
                by_name.insert(
                    format!("{}:{}", fam.name, col.qualifier),
                    ColumnId {
                        family: family_index,
                        column: column_index,
                    },
                );
                columns.push(Column {
                    family: fam.name.clone(),
                    qualifier: col.qualifier,
                    value_type,
                    description: col.description,
                });
            }
            families.push(Family {
                name: fam.name,
                description: fam.description,
                max_versions: fam.max_versions as usize,
                compression: fam.compression,
                columns,
            });
        }
        Ok(Schema {
            table: raw.table,
            description: raw.description,
            families,
            by_name,
        })
    }

    /// Looks up `family:qualifier`.
    pub fn column_id(&self, full_name: &str) -> Option<ColumnId> {
        self.by_name.get(full_name).copied()
    }

    pub fn column(&self, id: ColumnId) -> &Column {
        &self.families[id.family].columns[id.column]
    }

    pub fn family_index(&self, name: &str) -> Option<usize> {
        self.families.iter().position(|f| f.name == name)
    }

    /// Finds a column by its qualifier within one family (qualifiers are stored in keys).
    pub fn qualifier_in_family(&self, family: usize, qualifier: &[u8]) -> Option<ColumnId> {
        self.families[family]
            .columns
            .iter()
            .position(|c| c.qualifier.as_bytes() == qualifier)
            .map(|column| ColumnId { family, column })
    }

    /// All columns in schema order (family order, then declaration order).
    pub fn column_ids(&self) -> impl Iterator<Item = ColumnId> + '_ {
        self.families.iter().enumerate().flat_map(|(family, f)| {
            (0..f.columns.len()).map(move |column| ColumnId { family, column })
        })
    }
}

impl fmt::Display for Schema {
    /// The schema as a plain-text table, for `sediment schema`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "table {}: {}", self.table, self.description)?;
        writeln!(
            f,
            "{:<8} {:<12} {:<7} {:>8} {:<11} description",
            "family", "qualifier", "type", "versions", "compression"
        )?;
        for fam in &self.families {
            for col in &fam.columns {
                writeln!(
                    f,
                    "{:<8} {:<12} {:<7} {:>8} {:<11} {}",
                    fam.name,
                    col.qualifier,
                    col.value_type.name(),
                    fam.max_versions,
                    fam.compression,
                    col.description
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_schema_is_valid_and_complete() {
        let schema = Schema::embedded().unwrap();
        let names: Vec<_> = schema.families.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["f", "file", "grobid0", "match0"]);
        for name in [
            "f:c",
            "file:size",
            "file:mime",
            "file:cdx",
            "grobid0:status_code",
            "grobid0:quality",
            "grobid0:status",
            "grobid0:tei_xml",
            "grobid0:tei_json",
            "grobid0:metadata",
            "match0:mstatus",
            "match0:doi",
            "match0:minfo",
        ] {
            assert!(schema.column_id(name).is_some(), "{name} missing");
        }
        let size = schema.column(schema.column_id("file:size").unwrap());
        assert_eq!(size.value_type, ValueType::U64);
        let status = schema.column(schema.column_id("grobid0:status_code").unwrap());
        assert_eq!(status.value_type, ValueType::I64);
        assert!(schema.families.iter().all(|f| f.max_versions == 1));
        let table = schema.to_string();
        assert!(table.contains("grobid0  tei_json"), "{table}");
    }

    fn schema_with(families: &str) -> Result<Schema, SchemaError> {
        Schema::parse(&format!(r#"{{"table":"t","families":[{families}]}}"#))
    }

    #[test]
    fn rejects_a_qualifier_used_in_two_families() {
        let err = schema_with(
            r#"{"name":"a","columns":[{"qualifier":"x","type":"json"}]},
               {"name":"b","columns":[{"qualifier":"x","type":"string"}]}"#,
        )
        .unwrap_err();
        assert!(
            matches!(err, SchemaError::DuplicateQualifier { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("\"x\""), "{err}");
    }

    #[test]
    fn rejects_unknown_types_and_bad_versions() {
        let err = schema_with(r#"{"name":"a","columns":[{"qualifier":"x","type":"float"}]}"#)
            .unwrap_err();
        assert!(matches!(err, SchemaError::UnknownType { .. }), "{err}");
        assert!(err.to_string().contains("a:x"), "{err}");
        for bad in ["0", "-1", "1001"] {
            let err = schema_with(&format!(
                r#"{{"name":"a","max_versions":{bad},"columns":[{{"qualifier":"x","type":"json"}}]}}"#
            ))
            .unwrap_err();
            assert!(matches!(err, SchemaError::BadVersions(_, _)), "{err}");
        }
        let ok = schema_with(
            r#"{"name":"a","max_versions":3,"columns":[{"qualifier":"x","type":"json"}]}"#,
        )
        .unwrap();
        assert_eq!(ok.families[0].max_versions, 3);
    }

    #[test]
    fn rejects_other_structural_errors() {
        assert!(matches!(schema_with(""), Err(SchemaError::NoFamilies)));
        assert!(matches!(
            schema_with(r#"{"name":"A","columns":[{"qualifier":"x","type":"json"}]}"#),
            Err(SchemaError::BadFamilyName(_))
        ));
        assert!(matches!(
            schema_with(
                r#"{"name":"a","columns":[{"qualifier":"x","type":"json"}]},
                   {"name":"a","columns":[{"qualifier":"y","type":"json"}]}"#
            ),
            Err(SchemaError::DuplicateFamily(_))
        ));
        assert!(matches!(
            schema_with(
                r#"{"name":"a","compression":"lz4","columns":[{"qualifier":"x","type":"json"}]}"#
            ),
            Err(SchemaError::BadCompression(_, _))
        ));
        assert!(matches!(
            schema_with(r#"{"name":"a","columns":[]}"#),
            Err(SchemaError::NoColumns(_))
        ));
        assert!(matches!(Schema::parse("{"), Err(SchemaError::Json(_))));
    }
}
