//! Which files rebuild a RocksDB store version: the inputs of the one planner ([`crate::restart_chain::plan`])
//! gathered from the store directory (the unique id, the lineage of the loaded changelog's header), and a broken
//! chain worded as Spark's `RocksDB.load` / `loadWithCheckpointId` errors.

use super::*;
use crate::archive::Archive;
use crate::restart_chain::{ChainFileKind, LoadChain, PlanInput};

/// Works out which snapshot and changelogs rebuild `version` (Spark's `RocksDB.load` / `loadWithCheckpointId`).
///
/// Errors: the exact zip missing without changelog checkpointing
/// (`CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE`), a changelog missing in the replay range (same
/// class), no base snapshot reachable through the lineage (`CANNOT_FIND_BASE_SNAPSHOT_CHECKPOINT`), an ambiguous
/// unique id.
pub fn plan_load(
    archive: &mut dyn Archive,
    store_dir: &str,
    version: i64,
    opts: &LoadOptions,
) -> Result<LoadPlan, RocksDbError> {
    let store = crate::state_files::store_files(archive.entries(), store_dir);
    plan_load_skipping(archive, &store, version, opts, &[])
}

/// [`plan_load`] ignoring the snapshot zips in `skip` (unreadable ones, for auto snapshot repair). The chain is the
/// one planner's ([`crate::restart_chain::plan`]); here the inputs are gathered (the unique id, the lineage from
/// the loaded changelog's header) and a broken chain is worded as Spark's error. `store`: the store folder's
/// listing ([`crate::state_files::store_files`]).
pub(super) fn plan_load_skipping(
    archive: &mut dyn Archive,
    store: &crate::state_files::StoreFiles,
    version: i64,
    opts: &LoadOptions,
    skip: &[String],
) -> Result<LoadPlan, RocksDbError> {
    let limits = opts.limits.unwrap_or_default();
    let dir = store.dir.clone();
    if version < 0 {
        return Err(rerr(&dir, None, format!("version {version} is negative"), None));
    }
    if version == 0 {
        return Ok(LoadPlan::default());
    }
    let skip_v: Vec<i64> =
        store.zips.iter().filter(|(_, fs)| fs.iter().any(|f| skip.contains(&f.file.path))).map(|(v, _)| *v).collect();
    let all = || store.zips.values().chain(store.changelogs.values()).flatten();
    let input = PlanInput { skip: &skip_v, ..PlanInput::new("rocksdb") };
    if !all().any(|f| f.unique_id.is_some()) {
        let chain = crate::restart_chain::plan(store, version, &input);
        if let Some(m) = &chain.missing {
            let path = &m.path;
            let start = chain.steps.first().filter(|s| s.kind == ChainFileKind::Zip).map_or(0, |s| s.version);
            return Err(rerr(
                path,
                None,
                if !store.changelogs.is_empty() {
                    format!("Error reading streaming state file of {path} does not exist (needed to replay version {version} from snapshot {start})")
                } else {
                    format!("Error reading streaming state file of {path} does not exist: version {version} has no snapshot {dir}/{version}.zip and the store has no changelog files (changelog checkpointing off)")
                },
                Some("CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"),
            ));
        }
        return Ok(load_plan_of(&chain));
    }
    // Checkpoint format v2.
    let unique_id = match &opts.unique_id {
        Some(u) => u.clone(),
        None => {
            let mut ids: Vec<&String> = store
                .zips
                .get(&version)
                .into_iter()
                .chain(store.changelogs.get(&version))
                .flatten()
                .filter(|f| !skip.contains(&f.file.path))
                .filter_map(|f| f.unique_id.as_ref())
                .collect();
            ids.sort();
            ids.dedup();
            match ids.as_slice() {
                [one] => (*one).clone(),
                [] => {
                    return Err(rerr(
                        &dir,
                        None,
                        format!("no file of version {version} (`{version}_<uniqueId>.zip/.changelog`) in the store"),
                        Some("CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"),
                    ))
                }
                many => {
                    return Err(rerr(
                        &dir,
                        None,
                        format!(
                        "version {version} has {} candidate unique ids ({}); the commit log's stateUniqueIds decides",
                        many.len(),
                        many.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                        None,
                    ))
                }
            }
        }
    };
    let by_id = PlanInput { unique_id: Some(&unique_id), ..input };
    let first = crate::restart_chain::plan(store, version, &by_id);
    if let Some(m) = &first.missing {
        let path = &m.path;
        return Err(rerr(
            path,
            None,
            format!("Error reading streaming state file of {path} does not exist"),
            Some("CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"),
        ));
    }
    let Some(top) = first.steps.last().filter(|s| s.kind == ChainFileKind::Changelog && s.version == version) else {
        return Ok(load_plan_of(&first)); // the zip of the version itself
    };
    let cl_path = top.path.clone();
    let cl = read_changelog_file(archive, &cl_path, &limits)?;
    let mut lineage: Vec<(i64, String)> =
        cl.lineage.iter().map(|l| (l.version, l.checkpoint_unique_id.clone())).collect();
    lineage.push((version, unique_id.clone()));
    lineage.sort_by_key(|(v, _)| *v);
    let chain = crate::restart_chain::plan(store, version, &PlanInput { lineage: Some(&lineage), ..by_id });
    if chain.base_not_found {
        return Err(broken_lineage(store, &chain, &lineage, &skip_v, &cl_path, version));
    }
    Ok(load_plan_of(&chain))
}

/// The chain's files as the loader reads them.
pub(super) fn load_plan_of(chain: &LoadChain) -> LoadPlan {
    let mut plan = LoadPlan::default();
    for s in &chain.steps {
        match s.kind {
            ChainFileKind::Zip => plan.snapshot = Some((s.version, s.path.clone())),
            _ => plan.changelogs.push((s.version, s.path.clone())),
        }
    }
    plan
}

/// [`load_plan_of`] with archive paths: `prefix` (the checkpoint root in the archive) before each path.
pub(super) fn load_plan_in(chain: &LoadChain, prefix: &str) -> LoadPlan {
    let mut plan = load_plan_of(chain);
    if let Some((_, p)) = &mut plan.snapshot {
        *p = format!("{prefix}{p}");
    }
    for (_, p) in &mut plan.changelogs {
        *p = format!("{prefix}{p}");
    }
    plan
}

/// Spark's error for a format v2 chain that does not reach a snapshot (`RocksDB.loadWithCheckpointId`): a zip of
/// the lineage exists but a changelog above it is missing, or the lineage skips a version, or no zip of the lineage
/// exists (`CANNOT_FIND_BASE_SNAPSHOT_CHECKPOINT`).
pub(super) fn broken_lineage(
    store: &crate::state_files::StoreFiles,
    chain: &LoadChain,
    lineage: &[(i64, String)],
    skip: &[i64],
    cl_path: &str,
    version: i64,
) -> RocksDbError {
    let dir = &store.dir;
    let zip_of = |v: i64, id: &str| {
        !skip.contains(&v) && store.zips.get(&v).is_some_and(|fs| fs.iter().any(|f| f.unique_id.as_deref() == Some(id)))
    };
    let base = lineage.iter().rev().find(|(v, id)| zip_of(*v, id)).map(|(v, _)| *v);
    let Some(start) = base else {
        let items: Vec<String> = lineage.iter().map(|(v, id)| format!("{v}:{id}")).collect();
        return rerr(
            cl_path,
            None,
            format!(
                "Cannot find a base snapshot checkpoint in lineage [{}]; no `<v>_<uniqueId>.zip` of it exists",
                items.join(", ")
            ),
            Some("CANNOT_LOAD_STATE_STORE.CANNOT_FIND_BASE_SNAPSHOT_CHECKPOINT"),
        );
    };
    // The chain stopped below its lowest file: that version has neither a usable zip nor the changelog.
    let v = chain.steps.first().map_or(version, |s| s.version) - 1;
    match lineage.iter().find(|(lv, _)| *lv == v) {
        None => rerr(
            cl_path,
            None,
            format!("the lineage has no entry for version {v} between snapshot {start} and {version}"),
            Some("CANNOT_LOAD_STATE_STORE.INVALID_CHECKPOINT_LINEAGE"),
        ),
        Some((_, id)) => {
            let path = format!("{dir}/{v}_{id}.changelog");
            rerr(
                &path,
                None,
                format!("Error reading streaming state file of {path} does not exist"),
                Some("CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"),
            )
        }
    }
}
