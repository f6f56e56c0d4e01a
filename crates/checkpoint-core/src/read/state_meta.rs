//! Stage 4, the small state files: operator metadata (v1, or the newest v2 file) and the schema files of
//! partition 0 (small; needed to explain schema errors).

use super::{sidecars, unreadable, Reader, MAX_LOG_BYTES, MAX_SIDECAR_BYTES};
use crate::log;
use crate::model::{Checkpoint, NotVerified, Problem, ReadFile};
use crate::state::schema::SchemaRead;
use crate::state_files::FileRef;

/// Reads each operator's metadata file (v1 `_metadata/metadata`, or the newest `_metadata/v2/<batch>`).
pub(crate) fn read_operator_metadata(cp: &mut Checkpoint, rd: &mut Reader<'_>) {
    let op_meta: Vec<(i64, FileRef)> = cp
        .state
        .operators
        .values()
        .filter_map(|o| {
            o.metadata_v2.values().next_back().cloned().or_else(|| o.metadata_v1.clone()).map(|f| (o.operator_id, f))
        })
        .collect();
    for (op, f) in op_meta {
        let content = match rd.read(&f.path, MAX_LOG_BYTES) {
            Ok(b) => {
                sidecars::verify(cp, rd, &f.path, &b);
                log::operator_metadata::parse(&b)
            }
            Err(e) => Err(unreadable(&e)),
        };
        cp.operator_metadata.insert(op, ReadFile { path: f.path, size: f.size, content });
    }
}

/// Reads the v1/v2 schema files of partition 0 of every store.
pub(crate) fn read_schema_files(cp: &mut Checkpoint, rd: &mut Reader<'_>) {
    let schema_files: Vec<FileRef> = cp
        .state
        .operators
        .values()
        .filter_map(|o| o.partitions.get(&0))
        .flat_map(|p| p.stores.values().filter_map(|s| s.schema.clone()))
        .collect();
    for f in schema_files {
        let parsed = match rd.read(&f.path, MAX_SIDECAR_BYTES) {
            Ok(b) => {
                match crate::state::schema::spark_read(&b) {
                    SchemaRead::Fails(fault) => {
                        cp.state_schema_faults.insert(f.path.clone(), fault);
                    }
                    SchemaRead::NotVerified(reason) => {
                        cp.not_verified.push(NotVerified { path: f.path.clone(), reason, restart_reads: true })
                    }
                    SchemaRead::Reads => {}
                }
                crate::state::schema::parse_schema_file(&b)
                    .map(|s| (s.key.simple_string(), s.value.simple_string()))
                    .map_err(|e| Problem { path: f.path.clone(), offset: Some(e.offset), reason: e.to_string() })
            }
            Err(e) => {
                // A zip entry that does not unpack (or a folder's file that does not open): that says nothing
                // of the file, which a restart reads (`archive-entry-unreadable`, the verdict unknown).
                if e.is_entry_damage() {
                    cp.archive_unreadable.insert(f.path.clone(), e.clone());
                } else if let Some(reason) = super::not_verified_reason(&e) {
                    // Over the read cap (a schema file of megabytes): Spark reads it; this inspector did not.
                    cp.not_verified.push(NotVerified { path: f.path.clone(), reason, restart_reads: true });
                }
                Err(Problem { path: f.path.clone(), offset: None, reason: e.to_string() })
            }
        };
        cp.state_schemas.insert(f.path.clone(), parsed);
    }
}
