//! Builds a [`Checkpoint`] from an [`Archive`] for one root: lists everything, reads the small log files,
//! verifies sidecars of what it reads, and reads the state files a restart would load (for their
//! checksums and integrity). Per-file reads are capped; a file that cannot be read becomes a problem
//! (path, offset, reason) and reading goes on.

use crate::archive::{Archive, ArchiveError};
use crate::layout::{dstream_time, Root};
use crate::log::{self, LogError};
use crate::model::*;
use crate::report::CheckpointKind;
use crate::state_files::{self, FileRef};
use std::collections::{BTreeMap, BTreeSet};

/// Cap for one log file (offsets, commits, file logs, metadata).
pub const MAX_LOG_BYTES: u64 = 16 * 1024 * 1024;
/// Cap for one sidecar file.
pub const MAX_SIDECAR_BYTES: u64 = 1024 * 1024;
/// Cap for one state file read for integrity checks.
pub const MAX_STATE_FILE_BYTES: u64 = 256 * 1024 * 1024;

struct Ctx<'a> {
    archive: &'a mut dyn Archive,
    prefix: String,
}

impl Ctx<'_> {
    fn abs(&self, rel: &str) -> String {
        format!("{}{}", self.prefix, rel)
    }
    fn read(&mut self, rel: &str, cap: u64) -> Result<Vec<u8>, ArchiveError> {
        let p = self.abs(rel);
        self.archive.read(&p, cap)
    }
}

fn unreadable(e: &ArchiveError) -> LogError {
    LogError::Unreadable { reason: e.to_string() }
}

fn name_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn dir_of(path: &str) -> &str {
    path.rfind('/').map(|i| &path[..i]).unwrap_or("")
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Reads one checkpoint root. `verify_state` = also read the state files a restart loads.
pub fn read_checkpoint(archive: &mut dyn Archive, root: &Root, verify_state: bool) -> Checkpoint {
    let prefix = if root.path.is_empty() { String::new() } else { format!("{}/", root.path) };
    let mut files = Vec::new();
    let mut dirs = BTreeSet::new();
    let mut listing: Vec<(String, u64, bool)> = Vec::new();
    for e in archive.entries() {
        let Some(rel) = e.path.strip_prefix(&prefix) else {
            continue;
        };
        if rel.is_empty() {
            continue;
        }
        if e.is_dir {
            dirs.insert(rel.to_string());
        } else {
            files.push(FileRef { path: rel.to_string(), size: e.size });
            let mut d = dir_of(rel);
            while !d.is_empty() && dirs.insert(d.to_string()) {
                d = dir_of(d);
            }
        }
        listing.push((rel.to_string(), e.size, e.is_dir));
    }
    let file_sizes = files.iter().map(|f: &FileRef| (f.path.clone(), f.size)).collect();
    let mut cp =
        Checkpoint { root: root.path.clone(), kind: Kind(root.kind), files, dirs, file_sizes, ..Default::default() };
    let mut cx = Ctx { archive, prefix };
    let file_set: BTreeSet<String> = cp.files.iter().map(|f| f.path.clone()).collect();

    // Sidecars, from the listing.
    for f in &cp.files {
        let name = name_of(&f.path);
        let dir = dir_of(&f.path);
        if let Some(main) = crate::hadoop::main_name(name) {
            let main = join(dir, main);
            let main_exists = file_set.contains(&main);
            cp.hadoop_crcs.insert(main.clone(), CrcSidecar { path: f.path.clone(), main, main_exists, verified: None });
        } else if let Some(main) = crate::checksum::main_name(name) {
            let main = join(dir, main);
            let main_exists = file_set.contains(&main);
            cp.spark_checksums
                .insert(main.clone(), ChecksumSidecar { path: f.path.clone(), main, main_exists, verified: None });
        }
    }

    if root.kind == CheckpointKind::Dstream {
        let mut times: Vec<i64> =
            cp.files.iter().filter(|f| !f.path.contains('/')).filter_map(|f| dstream_time(&f.path)).collect();
        times.sort_unstable();
        times.dedup();
        cp.dstream_times_ms = times;
        return cp;
    }

    // metadata
    if let Some(size) = cp.file_size("metadata") {
        let content = match cx.read("metadata", MAX_LOG_BYTES) {
            Ok(b) => {
                verify_sidecars(&mut cp, &mut cx, "metadata", &b);
                log::metadata::parse(&b)
            }
            Err(e) => Err(unreadable(&e)),
        };
        cp.metadata = Some(ReadFile { path: "metadata".into(), size, content });
    }

    // offsets and commits
    let batch_files = |cp: &Checkpoint, dir: &str, compact: bool| -> Vec<(i64, bool, String, u64)> {
        let mut v: Vec<(i64, bool, String, u64)> = cp
            .files
            .iter()
            .filter(|f| dir_of(&f.path) == dir)
            .filter_map(|f| {
                log::parse_batch_file_name(name_of(&f.path), compact).map(|(id, c)| (id, c, f.path.clone(), f.size))
            })
            .collect();
        v.sort();
        v
    };
    for (id, _, path, size) in batch_files(&cp, "offsets", false) {
        let content = match cx.read(&path, MAX_LOG_BYTES) {
            Ok(b) => {
                verify_sidecars(&mut cp, &mut cx, &path, &b);
                log::offsets::parse(&b)
            }
            Err(e) => Err(unreadable(&e)),
        };
        cp.offsets.insert(id, LogFile { batch_id: id, compact: false, file: ReadFile { path, size, content } });
    }
    for (id, _, path, size) in batch_files(&cp, "commits", false) {
        let content = match cx.read(&path, MAX_LOG_BYTES) {
            Ok(b) => {
                verify_sidecars(&mut cp, &mut cx, &path, &b);
                log::commits::parse(&b)
            }
            Err(e) => Err(unreadable(&e)),
        };
        cp.commits.insert(id, LogFile { batch_id: id, compact: false, file: ReadFile { path, size, content } });
    }

    // Files in offsets/ and commits/ that Spark's listing ignores (not a batch id, not a sidecar or temp file).
    for f in &cp.files {
        let dir = dir_of(&f.path);
        let name = name_of(&f.path);
        if (dir == "offsets" || dir == "commits")
            && log::parse_batch_file_name(name, false).is_none()
            && !name.ends_with(".crc")
            && !state_files::is_temp_file(name)
        {
            cp.problems.push(Problem {
                path: f.path.clone(),
                offset: None,
                reason: if name.parse::<i64>().is_ok() {
                    format!(
                        "{name:?} is a batch id Spark never writes (outside 0..2^60); a hand-made file, not read here"
                    )
                } else {
                    format!("{name:?} is not a batch file name; Spark's log listing ignores it")
                },
            });
        }
    }
    // temp files anywhere (outside state/, whose temp files are listed per store)
    let temps: Vec<FileRef> =
        cp.files.iter().filter(|f| state_files::is_temp_file(name_of(&f.path))).cloned().collect();
    let mut temp_targets: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    for t in temps {
        let name = name_of(&t.path);
        let dir = dir_of(&t.path).to_string();
        // `.<final>.<uuid>.tmp`
        let inner = name.get(1..name.len().saturating_sub(4)).unwrap_or("");
        let target = match inner.rfind('.') {
            Some(i) if i > 0 => inner[..i].to_string(),
            _ => inner.to_string(),
        };
        let in_file_log = dir.starts_with("sources/") || dir.ends_with("_spark_metadata");
        let target_batch = log::parse_batch_file_name(&target, in_file_log).map(|(b, _)| b);
        let mut tf = TempFile {
            path: t.path.clone(),
            size: t.size,
            dir: dir.clone(),
            target,
            target_batch,
            offsets: None,
            file_log: None,
        };
        if dir == "offsets" || in_file_log {
            let parsed = cx.read(&t.path, MAX_LOG_BYTES);
            if dir == "offsets" {
                tf.offsets = Some(parsed.map_err(|e| unreadable(&e)).and_then(|b| log::offsets::parse(&b)));
            } else {
                tf.file_log = Some(parsed.map_err(|e| unreadable(&e)).and_then(|b| log::file_log::parse(&b)));
                if let Some(b) = target_batch {
                    temp_targets.entry(dir.clone()).or_default().insert(b);
                }
            }
        }
        cp.temp_files.push(tf);
    }

    // sources/<n>/ and any _spark_metadata/ below the root
    let mut log_dirs: BTreeSet<String> = BTreeSet::new();
    for f in &cp.files {
        let d = dir_of(&f.path);
        let parts: Vec<&str> = d.split('/').collect();
        if parts.len() == 2 && parts[0] == "sources" && parts[1].parse::<u32>().is_ok() {
            log_dirs.insert(d.to_string());
        }
        if d == "_spark_metadata" || d.ends_with("/_spark_metadata") {
            log_dirs.insert(d.to_string());
        }
    }
    // Which sources are file sources: from the latest readable offsets; without one, by sniffing the
    // newest file of the directory (file source entries carry a "path").
    let source_kinds: BTreeMap<u32, crate::source::SourceKind> = cp
        .latest_readable_offsets()
        .map(|(_, o)| o.offsets.iter().enumerate().map(|(i, s)| (i as u32, s.kind)).collect())
        .unwrap_or_default();
    for d in log_dirs {
        let listed_v = batch_files(&cp, &d, true);
        if let Some(n) = d.strip_prefix("sources/").and_then(|n| n.parse::<u32>().ok()) {
            use crate::source::SourceKind as K;
            let is_file_source = match source_kinds.get(&n) {
                Some(K::File) => true,
                Some(K::None) | None => match listed_v.last() {
                    Some((_, _, p, _)) => {
                        cx.read(p, MAX_LOG_BYTES).map(|b| b.windows(7).any(|w| w == b"\"path\"")).unwrap_or(true)
                    }
                    None => false,
                },
                Some(_) => false,
            };
            if !is_file_source {
                // Kafka's initial offsets (`sources/<n>/0`) and other sources' own metadata: listed only.
                cp.other_source_dirs.insert(n, cp.files.iter().filter(|f| dir_of(&f.path) == d).cloned().collect());
                continue;
            }
        }
        let compact_ids: Vec<i64> = listed_v.iter().filter(|x| x.1).map(|x| x.0).collect();
        let interval = log::file_log::infer_compact_interval(&compact_ids, 10);
        let listed: BTreeMap<i64, (String, u64, bool)> =
            listed_v.iter().map(|(id, c, p, s)| (*id, (p.clone(), *s, *c))).collect();
        // Small logs are read whole; big ones: what Spark reads on restart (newest compaction and the
        // batches after it) plus the latest two files.
        let mut want: BTreeSet<i64> = if listed.len() <= 64 {
            listed.keys().copied().collect()
        } else {
            let latest = listed.keys().next_back().copied().unwrap_or(0);
            let (c, range) = log::file_log::files_needed(latest, interval);
            let mut w: BTreeSet<i64> = if range.start() <= range.end() {
                listed.range(range).map(|(i, _)| *i).take(1000).collect()
            } else {
                BTreeSet::new()
            };
            w.extend(c);
            w.extend(listed.keys().rev().take(2).copied());
            w
        };
        if let Some(t) = temp_targets.get(&d) {
            want.extend(t.iter().copied());
        }
        let mut read = BTreeMap::new();
        for id in want {
            let Some((path, size, compact)) = listed.get(&id).cloned() else {
                continue;
            };
            let content = match cx.read(&path, MAX_LOG_BYTES) {
                Ok(b) => {
                    verify_sidecars(&mut cp, &mut cx, &path, &b);
                    log::file_log::parse(&b)
                }
                Err(e) => Err(unreadable(&e)),
            };
            read.insert(id, LogFile { batch_id: id, compact, file: ReadFile { path, size, content } });
        }
        let fl = FileLog { dir: d.clone(), listed, compact_interval: interval, read };
        if let Some(n) = d.strip_prefix("sources/").and_then(|n| n.parse::<u32>().ok()) {
            cp.source_logs.insert(n, fl);
        } else {
            cp.sink_logs.push(fl);
        }
    }

    // state/
    cp.state = state_files::list_state(&listing);
    let op_meta: Vec<(i64, FileRef)> = cp
        .state
        .operators
        .values()
        .filter_map(|o| {
            o.metadata_v2.values().next_back().cloned().or_else(|| o.metadata_v1.clone()).map(|f| (o.operator_id, f))
        })
        .collect();
    for (op, f) in op_meta {
        let content = match cx.read(&f.path, MAX_LOG_BYTES) {
            Ok(b) => {
                verify_sidecars(&mut cp, &mut cx, &f.path, &b);
                log::operator_metadata::parse(&b)
            }
            Err(e) => Err(unreadable(&e)),
        };
        cp.operator_metadata.insert(op, ReadFile { path: f.path, size: f.size, content });
    }

    // Schema files of partition 0 (small; needed to explain schema errors).
    let schema_files: Vec<FileRef> = cp
        .state
        .operators
        .values()
        .filter_map(|o| o.partitions.get(&0))
        .flat_map(|p| p.stores.values().filter_map(|s| s.schema.clone()))
        .collect();
    for f in schema_files {
        let parsed = match cx.read(&f.path, MAX_SIDECAR_BYTES) {
            Ok(b) => crate::state::schema::parse_schema_file(&b)
                .map(|s| (s.key.simple_string(), s.value.simple_string()))
                .map_err(|e| Problem { path: f.path.clone(), offset: Some(e.offset), reason: e.to_string() }),
            Err(e) => Err(Problem { path: f.path.clone(), offset: None, reason: e.to_string() }),
        };
        cp.state_schemas.insert(f.path.clone(), parsed);
    }
    if verify_state {
        read_state_chains(&mut cp, &mut cx);
    }
    cp
}

/// Verifies the Hadoop and Spark sidecars of a file whose bytes were read.
fn verify_sidecars(cp: &mut Checkpoint, cx: &mut Ctx<'_>, main: &str, bytes: &[u8]) {
    if let Some(side) = cp.hadoop_crcs.get(main).map(|c| c.path.clone()) {
        let r = match cx.read(&side, MAX_SIDECAR_BYTES) {
            Ok(s) => crate::hadoop::parse(&s).and_then(|c| crate::hadoop::verify(&c, bytes)),
            Err(e) => Err(crate::hadoop::CrcError::Malformed { offset: 0, reason: e.to_string() }),
        };
        if let Some(c) = cp.hadoop_crcs.get_mut(main) {
            c.verified = Some(r);
        }
    }
    if let Some(side) = cp.spark_checksums.get(main).map(|c| c.path.clone()) {
        let r = match cx.read(&side, MAX_SIDECAR_BYTES) {
            Ok(s) => match crate::checksum::parse(&s) {
                Ok(sum) => crate::checksum::verify(&sum, bytes).map_err(|m| {
                    format!(
                        "Expected (file size: {}, checksum: {}), Computed (file size: {}, checksum: {})",
                        m.expected.0, m.expected.1, m.computed.0, m.computed.1
                    )
                }),
                Err((off, why)) => Err(format!("checksum file unreadable at byte {off}: {why}")),
            },
            Err(e) => Err(e.to_string()),
        };
        if let Some(c) = cp.spark_checksums.get_mut(main) {
            c.verified = Some(r);
        }
    }
}

/// The state version a restart loads and the batch it runs first (FORMATS.md §1, §16): after the last
/// committed batch C with offsets up to C, batch C+1 runs and loads version C+1; when offsets go beyond
/// the last commit, the latest planned batch L is re-run and loads version L.
pub fn restart_batch(cp: &Checkpoint) -> Option<i64> {
    let last = cp.last_batch_id();
    let committed = cp.last_committed_batch_id();
    match (last, committed) {
        (None, None) => None,
        (None, Some(c)) => Some(c + 1),
        (Some(l), None) => Some(l),
        (Some(l), Some(c)) if c >= l => Some(c + 1),
        (Some(l), Some(_)) => Some(l),
    }
}

/// The checkpoint unique id of (operator, partition, store index) for `version`, from the commit of batch
/// `version - 1` (checkpoint format v2).
pub fn unique_id_for(cp: &Checkpoint, op: i64, part: u32, store_index: usize, version: i64) -> Option<String> {
    let c = cp.commits.get(&(version - 1))?.file.content.as_ref().ok()?;
    c.state_unique_ids.get(&op)?.get(part as usize)?.get(store_index).cloned()
}

/// The store index Spark uses in `stateUniqueIds` (stores in name order of the join manager).
pub fn store_index(names: &[String], name: &str) -> usize {
    const JOIN: [&str; 4] =
        ["left-keyToNumValues", "left-keyWithIndexToValue", "right-keyToNumValues", "right-keyWithIndexToValue"];
    JOIN.iter().position(|n| *n == name).or_else(|| names.iter().position(|n| n == name)).unwrap_or(0)
}

/// Provider of an operator from files on disk, else from the recorded provider class.
pub fn operator_provider(cp: &Checkpoint, op: i64) -> String {
    if let Some(o) = cp.state.operators.get(&op) {
        for p in o.partitions.values() {
            for s in p.stores.values() {
                let pr = s.provider();
                if pr != "unknown" {
                    return pr.to_string();
                }
            }
        }
    }
    provider_from_conf(&cp.recorded_conf()).to_string()
}

/// `hdfs` / `rocksdb` / `unknown` from `spark.sql.streaming.stateStore.providerClass`.
pub fn provider_from_conf(conf: &BTreeMap<String, String>) -> &'static str {
    match conf.get("spark.sql.streaming.stateStore.providerClass") {
        Some(c) if c.contains("RocksDB") => "rocksdb",
        Some(c) if c.contains("HDFSBacked") => "hdfs",
        Some(_) => "unknown",
        None => "hdfs",
    }
}

/// For every store, computes the chain for the restart version and reads its files (sidecars, integrity).
/// When a snapshot/zip in the chain is damaged, the chain without it is read too (4.3 snapshot repair).
fn read_state_chains(cp: &mut Checkpoint, cx: &mut Ctx<'_>) {
    let Some(version) = restart_batch(cp) else {
        return;
    };
    let mut to_read: Vec<(String, state_files::ChainFileKind)> = Vec::new();
    let ops: Vec<i64> = cp.state.operators.keys().copied().collect();
    let mut done: BTreeSet<String> = BTreeSet::new();
    for op in ops {
        let provider = operator_provider(cp, op);
        let parts: Vec<u32> = cp.state.operators[&op].partitions.keys().copied().collect();
        for part in parts {
            let names: Vec<String> = cp.state.operators[&op].partitions[&part].stores.keys().cloned().collect();
            for name in &names {
                let store = cp.state.operators[&op].partitions[&part].stores[name].clone();
                if store.is_empty() {
                    continue;
                }
                let uid = unique_id_for(cp, op, part, store_index(&names, name), version);
                // Checkpoint format v2: the changelog of the loaded version names its lineage; read it first.
                let top = uid.as_ref().and_then(|u| {
                    store
                        .changelogs
                        .get(&version)?
                        .iter()
                        .find(|f| f.unique_id.as_deref() == Some(u.as_str()))
                        .map(|f| f.file.path.clone())
                });
                if let Some(t) = &top {
                    if done.insert(t.clone()) {
                        check_state_file(cp, cx, t, state_files::ChainFileKind::Changelog, &store);
                    }
                }
                let lineage: Option<Vec<(i64, String)>> =
                    top.as_deref().and_then(|t| cp.lineage_of(t)).map(|l| l.to_vec());
                let mut skip: Vec<i64> = Vec::new();
                for _round in 0..4 {
                    let chain =
                        state_files::load_chain(&store, version, &provider, uid.as_deref(), lineage.as_deref(), &skip);
                    to_read.clear();
                    for s in &chain.steps {
                        to_read.push((s.path.clone(), s.kind));
                    }
                    let mut damaged_base: Option<i64> = None;
                    for (path, kind) in to_read.clone() {
                        if done.insert(path.clone()) {
                            check_state_file(cp, cx, &path, kind, &store);
                        }
                        let bad = cp.integrity_of(&path).is_some_and(|i| i.problem.is_some())
                            || cp.crc_of(&path).is_some_and(|c| matches!(c.verified, Some(Err(_))))
                            || cp.checksum_of(&path).is_some_and(|c| matches!(c.verified, Some(Err(_))));
                        if bad && matches!(kind, state_files::ChainFileKind::Snapshot | state_files::ChainFileKind::Zip)
                        {
                            damaged_base = chain.steps.iter().find(|s| s.path == path).map(|s| s.version);
                        }
                    }
                    match damaged_base {
                        Some(v) if !skip.contains(&v) => skip.push(v),
                        _ => break,
                    }
                }
            }
        }
    }
}

fn check_state_file(
    cp: &mut Checkpoint,
    cx: &mut Ctx<'_>,
    path: &str,
    kind: state_files::ChainFileKind,
    store: &state_files::StoreFiles,
) {
    let bytes = match cx.read(path, MAX_STATE_FILE_BYTES) {
        Ok(b) => b,
        Err(e) => {
            cp.state_integrity.insert(
                path.to_string(),
                StateFileIntegrity {
                    path: path.to_string(),
                    problem: Some(Problem { path: path.to_string(), offset: None, reason: e.to_string() }),
                    exception: Some("java.io.IOException".into()),
                    lineage: None,
                    payload_corrupt: false,
                    error_class: None,
                },
            );
            return;
        }
    };
    verify_sidecars(cp, cx, path, &bytes);
    let (problem, exception, lineage, payload_corrupt, error_class) = match kind {
        state_files::ChainFileKind::Zip => {
            let (p, e) = crate::state_integrity::check_rocksdb_zip(path, &bytes, store);
            (p, e, None, false, None)
        }
        k => {
            let c = crate::state_integrity::check_stream_file(
                path,
                &bytes,
                k == state_files::ChainFileKind::Snapshot,
                k == state_files::ChainFileKind::Changelog,
            );
            (c.problem, c.exception, c.lineage, c.payload_corrupt, c.error_class.map(str::to_string))
        }
    };
    cp.state_integrity.insert(
        path.to_string(),
        StateFileIntegrity { path: path.to_string(), problem, exception, lineage, payload_corrupt, error_class },
    );
}
