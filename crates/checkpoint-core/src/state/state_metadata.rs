//! The `state-metadata` source of Spark's State Data Source (`StateMetadataSource.scala`): one row per operator
//! and store.

use super::*;
use crate::archive::Archive;
use crate::dir_index::DirIndex;

/// Reads the `state-metadata` view: one row per operator and store. Operator name, store names and partition
/// counts come from the operator metadata (v2 for the latest batch if present, else v1); when a checkpoint has
/// none (Spark 3.5), from the folders on disk, where Spark's source returns no row at all
/// ([`StateMetadataRow::metadata_file`] is `None`: a front end says so). `minBatchId`/`maxBatchId` are the first
/// and last batches in `commits/`.
pub fn read_state_metadata(a: &mut dyn Archive, root: &str) -> Result<Vec<StateMetadataRow>, StateError> {
    let batches = committed_batches(a, root);
    let (min_b, max_b) = (batches.first().copied().unwrap_or(-1), batches.last().copied().unwrap_or(-1));
    let mut out = Vec::new();
    let dirs = DirIndex::build(a.entries());
    for op in list_operators(a, root) {
        let parts = list_partitions_in(a, &dirs, root, op);
        let meta_path = operator_metadata_path(a, root, op);
        let provider_of = |a: &dyn Archive, store: &str| {
            let first = parts.first();
            first.map(|&p| detect_provider_in(a, &dirs, &store_dir(root, op, p, store))).unwrap_or(Provider::Unknown)
        };
        if let Some(path) = meta_path {
            let bytes = a.read(&path, 16 << 20).map_err(|e| {
                StateError::new(&path, format!("cannot read operator metadata: {e}"))
                    .class("STDS_FAILED_TO_READ_OPERATOR_METADATA")
            })?;
            let m = operator_metadata::parse_operator_metadata(&bytes).map_err(|e| {
                StateError::new(&path, e.message.clone()).at(e.offset).class("STDS_FAILED_TO_READ_OPERATOR_METADATA")
            })?;
            for s in &m.stores {
                out.push(StateMetadataRow {
                    operator_id: m.operator_id,
                    operator_name: Some(m.operator_name.clone()),
                    state_store_name: s.store_name.clone(),
                    num_partitions: s.num_partitions,
                    min_batch_id: min_b,
                    max_batch_id: max_b,
                    operator_properties: m.operator_properties_json.clone(),
                    num_cols_prefix_key: s.num_cols_prefix_key,
                    provider: provider_of(a, &s.store_name),
                    operator_name_inferred: false,
                    metadata_file: Some(path.clone()),
                });
            }
            continue;
        }
        // No metadata: stores are the folders under the partitions (or `default` when files sit directly there).
        let stores = store_names_in(a, &dirs, root, op);
        let inferred = infer_operator_name(a, &dirs, root, op, &stores);
        for s in stores {
            out.push(StateMetadataRow {
                operator_id: op,
                operator_name: inferred.clone(),
                operator_name_inferred: inferred.is_some(),
                provider: provider_of(a, &s),
                state_store_name: s,
                num_partitions: parts.len() as i64,
                min_batch_id: min_b,
                max_batch_id: max_b,
                operator_properties: None,
                num_cols_prefix_key: 0,
                metadata_file: None,
            });
        }
    }
    Ok(out)
}
