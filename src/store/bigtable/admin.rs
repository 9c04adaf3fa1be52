//! Table administration: the files table and its companion tables, created or completed
//! with the families and GC policies of the schema (the Bigtable admin API, not the data
//! API the backend uses).

use std::collections::HashMap;

use anyhow::{Context, Result};
use googleapis_tonic_google_bigtable_admin_v2::google::bigtable::admin::v2::{
    ColumnFamily, CreateTableRequest, GcRule, GetTableRequest, ModifyColumnFamiliesRequest, Table,
    bigtable_table_admin_client::BigtableTableAdminClient,
    gc_rule,
    modify_column_families_request::{Modification, modification},
};
use tonic::transport::{Channel, ClientTlsConfig};

use super::{Address, SPACE_FAMILY, runtime};
use crate::schema::Schema;
use crate::store::backend::Space;

fn family(max_versions: usize) -> ColumnFamily {
    ColumnFamily {
        gc_rule: Some(GcRule {
            rule: Some(gc_rule::Rule::MaxNumVersions(
                max_versions.min(i32::MAX as usize) as i32,
            )),
        }),
        ..Default::default()
    }
}

/// What each table must have: its id and families with their GC policies.
fn wanted(address: &Address, schema: &Schema) -> Vec<(String, HashMap<String, ColumnFamily>)> {
    let mut tables = vec![(
        address.table_id(None),
        schema
            .families
            .iter()
            .map(|f| (f.name.clone(), family(f.max_versions)))
            .collect(),
    )];
    for space in Space::ALL {
        // One version per cell: merged values are distinct cells, not versions.
        tables.push((
            address.table_id(Some(space)),
            HashMap::from([(SPACE_FAMILY.to_string(), family(1))]),
        ));
    }
    tables
}

/// Adds the bearer token to each admin request (none for the emulator).
type Interceptor =
    Box<dyn FnMut(tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> + Send>;
type Client =
    BigtableTableAdminClient<tonic::service::interceptor::InterceptedService<Channel, Interceptor>>;

async fn connect() -> Result<Client> {
    let (channel, token) = match super::emulator_host()? {
        Some(host) => (
            Channel::from_shared(format!("http://{host}"))?
                .connect()
                .await
                .with_context(|| format!("cannot reach the Bigtable emulator at {host}"))?,
            None,
        ),
        None => {
            let provider = gcp_auth::provider()
                .await
                .context("no Google credentials for Bigtable's admin API")?;
            let token = provider
                .token(&["https://www.googleapis.com/auth/bigtable.admin.table"])
                .await
                .context("cannot get a token for Bigtable's admin API")?;
            let channel = Channel::from_static("https://bigtableadmin.googleapis.com")
                .tls_config(ClientTlsConfig::new().with_native_roots())?
                .connect()
                .await
                .context("cannot reach bigtableadmin.googleapis.com")?;
            (channel, Some(format!("Bearer {}", token.as_str())))
        }
    };
    let interceptor: Interceptor = Box::new(move |mut request: tonic::Request<()>| {
        if let Some(token) = &token {
            let value = token
                .parse()
                .map_err(|_| tonic::Status::unauthenticated("bad token"))?;
            request.metadata_mut().insert("authorization", value);
        }
        Ok(request)
    });
    Ok(BigtableTableAdminClient::with_interceptor(
        channel,
        interceptor,
    ))
}

pub fn create_tables(address: &Address, schema: &Schema) -> Result<Vec<String>> {
    let runtime = runtime()?;
    runtime.block_on(async {
        let mut client = connect().await?;
        let mut report = Vec::new();
        for (table_id, families) in wanted(address, schema) {
            let name = format!("{}/tables/{table_id}", address.instance_name());
            let existing = client
                .get_table(GetTableRequest {
                    name: name.clone(),
                    view: 2, // SCHEMA_VIEW: families and GC rules
                })
                .await;
            match existing {
                Err(status) if status.code() == tonic::Code::NotFound => {
                    client
                        .create_table(CreateTableRequest {
                            parent: address.instance_name(),
                            table_id: table_id.clone(),
                            table: Some(Table {
                                column_families: families,
                                ..Default::default()
                            }),
                            ..Default::default()
                        })
                        .await
                        .with_context(|| format!("cannot create table {table_id}"))?;
                    report.push(format!("created {table_id}"));
                }
                Err(status) => {
                    return Err(anyhow::anyhow!("{}: {}", status.code(), status.message()))
                        .with_context(|| format!("cannot look up table {table_id}"));
                }
                Ok(table) => {
                    let table = table.into_inner();
                    let mut modifications = Vec::new();
                    for (id, wanted) in families {
                        let change = match table.column_families.get(&id) {
                            None => Some(modification::Mod::Create(wanted)),
                            Some(have) if have.gc_rule != wanted.gc_rule => {
                                Some(modification::Mod::Update(wanted))
                            }
                            Some(_) => None,
                        };
                        if let Some(change) = change {
                            modifications.push(Modification {
                                id,
                                r#mod: Some(change),
                                ..Default::default()
                            });
                        }
                    }
                    if modifications.is_empty() {
                        report.push(format!("{table_id} is up to date"));
                    } else {
                        let n = modifications.len();
                        client
                            .modify_column_families(ModifyColumnFamiliesRequest {
                                name,
                                modifications,
                                ignore_warnings: false,
                            })
                            .await
                            .with_context(|| format!("cannot update table {table_id}"))?;
                        report.push(format!("{table_id}: {n} families added or updated"));
                    }
                }
            }
        }
        Ok(report)
    })
}
