//! Stage: the Delta source's schema tracking logs under the checkpoint (`_schema_log_<tableId>/<seq>`), read
//! into [`Checkpoint::delta_schema_logs`] (format: [`crate::delta::schema_log`]).

use super::{Reader, MAX_LOG_BYTES};
use crate::delta::schema_log::{
    parse_entry, table_id_of_dir, SchemaLog, SchemaLogEntry, SchemaLogFault, SchemaLogProblem,
};
use crate::model::{Checkpoint, Problem};
use std::collections::BTreeMap;

/// Reads every schema tracking log folder of the listing.
pub(crate) fn read_delta_schema_logs(cp: &mut Checkpoint, rd: &mut Reader<'_>) {
    let mut logs: BTreeMap<String, SchemaLog> = BTreeMap::new();
    let mut files: Vec<(String, String, i64)> = Vec::new();
    for f in &cp.files {
        let Some((dir, name)) = f.path.rsplit_once('/') else { continue };
        let folder = dir.rsplit('/').next().unwrap_or(dir);
        let (Some(id), Ok(seq)) = (table_id_of_dir(folder), name.parse::<i64>()) else { continue };
        logs.entry(dir.to_string()).or_insert_with(|| SchemaLog {
            dir: dir.to_string(),
            dir_table_id: id.to_string(),
            ..SchemaLog::default()
        });
        files.push((dir.to_string(), f.path.clone(), seq));
    }
    files.sort_by_key(|(d, _, s)| (d.clone(), *s));
    for (dir, path, seq) in files {
        let Some(log) = logs.get_mut(&dir) else { continue };
        match rd.read(&path, MAX_LOG_BYTES) {
            Ok(bytes) => match parse_entry(&bytes) {
                Ok((table_id, delta_commit_version, data_schema_json, previous_seq)) => log
                    .entries
                    .push(SchemaLogEntry { seq, path, table_id, delta_commit_version, data_schema_json, previous_seq }),
                Err((offset, reason, fault)) => log.problems.push(SchemaLogProblem {
                    seq,
                    problem: Problem { path, offset: Some(offset), reason },
                    fault,
                }),
            },
            Err(e) => log.problems.push(SchemaLogProblem {
                seq,
                problem: Problem { path, offset: None, reason: e.to_string() },
                fault: SchemaLogFault::Unreadable,
            }),
        }
    }
    cp.delta_schema_logs = logs.into_values().collect();
}
