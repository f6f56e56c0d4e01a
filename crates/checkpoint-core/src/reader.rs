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
/// Budget for the offsets and commits files read per checkpoint (newest batches first); files beyond it are
/// listed with [`LogError::NotRead`].
pub const MAX_TOTAL_LOG_BYTES: u64 = 64 * 1024 * 1024;
/// Number of newest readable offsets files whose source offsets are kept whole (a restart reads the latest and
/// the one before it); older ones are elided.
pub const KEEP_FULL_OFFSETS: usize = 2;
/// Cap for one sidecar file.
pub const MAX_SIDECAR_BYTES: u64 = 1024 * 1024;
/// Cap for one state file read for integrity checks.
pub const MAX_STATE_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Default byte budget for reading state files (chain verification and row checks) in one diagnosis.
pub const DEFAULT_VERIFY_BUDGET: u64 = 256 * 1024 * 1024;

/// What [`read_checkpoint_with`] reads beyond the listing and the small log files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Read the state files a restart loads (integrity, sidecars).
    pub verify_state: bool,
    /// Decode the rows of the stores a restart loads (schema validation, event-time keys).
    pub check_rows: bool,
    /// Bytes of state that may be processed for both: stored bytes read, or decompressed bytes when larger
    /// (`u64::MAX` = no budget). Files beyond it are listed in [`Checkpoint::unverified`].
    pub budget_bytes: u64,
    /// Bytes of offsets and commits files that may be read, newest batches first (default
    /// [`MAX_TOTAL_LOG_BYTES`]); older files are listed with [`LogError::NotRead`].
    pub log_budget_bytes: u64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            verify_state: true,
            check_rows: true,
            budget_bytes: DEFAULT_VERIFY_BUDGET,
            log_budget_bytes: MAX_TOTAL_LOG_BYTES,
        }
    }
}

struct Ctx<'a> {
    archive: &'a mut dyn Archive,
    prefix: String,
    /// Bytes of state files that may still be read.
    budget_left: u64,
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
    match e {
        // The path is the evidence's; the reason says where the inflated stream broke.
        ArchiveError::Corrupt { offset, reason, .. } => LogError::Unreadable {
            reason: format!("the zip entry does not unpack: inflated stream broken at byte {offset}: {reason}"),
            archive_damaged: true,
        },
        // Inflates past the size the zip declares (below the read cap): the entry's header lies.
        ArchiveError::OverLimit { what, limit, .. } if what.contains("declares") && *limit < MAX_LOG_BYTES => {
            LogError::Unreadable { reason: e.to_string(), archive_damaged: true }
        }
        _ => LogError::Unreadable { reason: e.to_string(), archive_damaged: false },
    }
}

/// `.<batch>.<uuid>.tmp` → the batch id an offsets temp file was meant to become.
fn temp_target_batch(name: &str) -> Option<i64> {
    if !state_files::is_temp_file(name) {
        return None;
    }
    let inner = name.get(1..name.len().saturating_sub(4))?;
    let target = match inner.rfind('.') {
        Some(i) if i > 0 => &inner[..i],
        _ => inner,
    };
    log::parse_batch_file_name(target, false).map(|(b, _)| b)
}

/// Keeps memory bounded by what a check needs, per offsets file as it is read (newest first): the source
/// offsets of the newest [`KEEP_FULL_OFFSETS`] readable files, of the last committed batch (the restart plan's
/// start) and of the batches an `offsets/` temp file targets stay whole (`whole`); elsewhere valid JSON offsets
/// are dropped (`elided`) and invalid ones cut to 1 KiB (still reported). Recorded confs are kept only for the
/// latest readable file (`drop_conf` for the others).
fn elide(o: &mut crate::log::offsets::OffsetSeq, drop_conf: bool, whole: bool) {
    if drop_conf {
        if let Some(m) = &mut o.metadata {
            m.conf = BTreeMap::new();
        }
    }
    if whole {
        return;
    }
    for s in &mut o.offsets {
        if s.json.is_some() {
            s.json = None;
            s.raw = None;
            s.elided = true;
        } else if let Some(r) = &mut s.raw {
            if r.len() > 1024 {
                let mut end = 1024;
                while !r.is_char_boundary(end) {
                    end -= 1;
                }
                r.truncate(end);
            }
        }
    }
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

/// Reads one checkpoint root. `verify_state` = also read the state files a restart loads (and their rows),
/// within [`DEFAULT_VERIFY_BUDGET`].
pub fn read_checkpoint(archive: &mut dyn Archive, root: &Root, verify_state: bool) -> Checkpoint {
    read_checkpoint_with(
        archive,
        root,
        &ReadOptions { verify_state, check_rows: verify_state, ..ReadOptions::default() },
    )
}

/// Reads one checkpoint root: the listing, the small log files (metadata, offsets, commits, file source and
/// sink logs, operator metadata, schema files) and, per `opts`, the state files a restart loads, within the
/// byte budget.
pub fn read_checkpoint_with(archive: &mut dyn Archive, root: &Root, opts: &ReadOptions) -> Checkpoint {
    let prefix = if root.path.is_empty() { String::new() } else { format!("{}/", root.path) };
    let mut files = Vec::new();
    let mut dirs = BTreeSet::new();
    let mut modified_ms = BTreeMap::new();
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
            if let Some(ms) = e.modified_ms {
                modified_ms.insert(rel.to_string(), ms);
            }
            let mut d = dir_of(rel);
            while !d.is_empty() && dirs.insert(d.to_string()) {
                d = dir_of(d);
            }
        }
        listing.push((rel.to_string(), e.size, e.is_dir));
    }
    let file_sizes = files.iter().map(|f: &FileRef| (f.path.clone(), f.size)).collect();
    let mut cp = Checkpoint {
        root: root.path.clone(),
        kind: Kind(root.kind),
        files,
        dirs,
        file_sizes,
        modified_ms,
        ..Default::default()
    };
    let mut cx = Ctx { archive, prefix, budget_left: opts.budget_bytes };
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
    // Newest batches first, commits before offsets of the same batch, within a total byte budget: a restart
    // reads only the latest offsets/commits, so older ones beyond the budget are listed, not read.
    let mut todo: Vec<(i64, bool, String, u64)> = batch_files(&cp, "offsets", false)
        .into_iter()
        .map(|(id, _, p, s)| (id, true, p, s))
        .chain(batch_files(&cp, "commits", false).into_iter().map(|(id, _, p, s)| (id, false, p, s)))
        .collect();
    todo.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut log_budget = opts.log_budget_bytes;
    // Bounded memory: decided per file while reading (see `elide`), so at most the kept batches and one being
    // parsed are held whole.
    let last_commit_listed = todo.iter().filter(|t| !t.1).map(|t| t.0).max();
    let temp_targets: BTreeSet<i64> = cp
        .files
        .iter()
        .filter(|f| dir_of(&f.path) == "offsets")
        .filter_map(|f| temp_target_batch(name_of(&f.path)))
        .collect();
    let mut readable_seen = 0usize;
    let mut start_found = false;
    for (id, is_offsets, path, size) in todo {
        let bytes = if size > log_budget {
            Err(LogError::NotRead { budget: opts.log_budget_bytes })
        } else {
            log_budget -= size;
            cx.read(&path, MAX_LOG_BYTES).map_err(|e| unreadable(&e))
        };
        if let Ok(b) = &bytes {
            verify_sidecars(&mut cp, &mut cx, &path, b);
        }
        if is_offsets {
            let mut content = bytes.and_then(|b| log::offsets::parse(&b));
            if let Ok(o) = &mut content {
                let is_start = !start_found && last_commit_listed.is_some_and(|c| id <= c);
                start_found |= is_start;
                let whole = readable_seen < KEEP_FULL_OFFSETS || is_start || temp_targets.contains(&id);
                elide(o, readable_seen > 0, whole);
                readable_seen += 1;
            }
            cp.offsets.insert(id, LogFile { batch_id: id, compact: false, file: ReadFile { path, size, content } });
        } else {
            let content = bytes.and_then(|b| log::commits::parse(&b));
            cp.commits.insert(id, LogFile { batch_id: id, compact: false, file: ReadFile { path, size, content } });
        }
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
    if opts.verify_state {
        read_state_chains(&mut cp, &mut cx);
        if opts.check_rows {
            read_store_rows(&mut cp, &mut cx);
        }
        read_state_growth(&mut cp, &mut cx);
    }
    cp.verify_budget = (opts.budget_bytes, opts.budget_bytes.saturating_sub(cx.budget_left));
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
    let size = cp.file_size(path).unwrap_or(0);
    if size > cx.budget_left {
        cp.unverified.push(Unverified { path: path.to_string(), bytes: size, what: "not read".into() });
        return;
    }
    cx.budget_left -= size;
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
                    records: None,
                    num_keys: None,
                    decompressed_bytes: None,
                },
            );
            return;
        }
    };
    verify_sidecars(cp, cx, path, &bytes);
    let integrity = match kind {
        state_files::ChainFileKind::Zip => {
            let abs_dir = cx.abs(&store.dir);
            let abs_zip = cx.abs(path);
            let budget = cx.budget_left;
            let prefix = cx.prefix.clone();
            let z = crate::state_integrity::check_rocksdb_zip(cx.archive, &abs_dir, &abs_zip, &bytes, &prefix, budget);
            if z.ssts_decoded {
                cx.budget_left = cx.budget_left.saturating_sub(z.sst_bytes);
            } else if z.sst_bytes > budget && z.problem.is_none() {
                cp.unverified.push(Unverified {
                    path: path.to_string(),
                    bytes: z.sst_bytes,
                    what: "the SST files it lists: present with the recorded sizes, blocks not decoded".into(),
                });
            }
            StateFileIntegrity {
                path: path.to_string(),
                problem: z.problem,
                exception: z.exception,
                lineage: None,
                payload_corrupt: false,
                error_class: z.error_class.map(str::to_string),
                records: None,
                num_keys: z.num_keys,
                decompressed_bytes: None,
            }
        }
        k => {
            let c = crate::state_integrity::check_stream_file(
                path,
                &bytes,
                k == state_files::ChainFileKind::Snapshot,
                k == state_files::ChainFileKind::Changelog,
            );
            StateFileIntegrity {
                path: path.to_string(),
                problem: c.problem,
                exception: c.exception,
                lineage: c.lineage,
                payload_corrupt: c.payload_corrupt,
                error_class: c.error_class.map(str::to_string),
                records: c.records,
                num_keys: None,
                decompressed_bytes: c.decompressed_bytes,
            }
        }
    };
    // The budget bounds work: a stream costs its decompressed bytes.
    if let Some(d) = integrity.decompressed_bytes {
        cx.budget_left = cx.budget_left.saturating_sub(d.saturating_sub(size));
    }
    cp.state_integrity.insert(path.to_string(), integrity);
}

/// Most stores whose rows are decoded in one diagnosis (each costs a listing scan besides its bytes).
const MAX_ROW_CHECK_STORES: usize = 256;

/// For the stores a restart loads whose chain is intact: decodes every row at the restart version (within the
/// byte budget), validates key and value rows against the stored schema (partition 0's schema file) the way
/// `StateStoreProvider.validateStateRowFormat` does, and collects event-time keys (`window.end`).
fn read_store_rows(cp: &mut Checkpoint, cx: &mut Ctx<'_>) {
    use crate::state::schema::{DataType, StructType};
    let Some(version) = restart_batch(cp).filter(|v| *v > 0) else {
        return;
    };
    // Watermark of the batch that wrote this version (eviction in batch v-1 used it).
    let wm_ms = cp
        .offsets
        .get(&(version - 1))
        .and_then(|o| o.file.content.as_ref().ok())
        .and_then(|o| o.metadata.as_ref())
        .and_then(|m| m.batch_watermark_ms)
        .unwrap_or(0);
    let root = cp.root.clone();
    let mut stores_read = 0usize;
    let ops: Vec<i64> = cp.state.operators.keys().copied().collect();
    for op in ops {
        let provider = operator_provider(cp, op);
        let names: BTreeSet<String> =
            cp.state.operators[&op].partitions.values().flat_map(|p| p.stores.keys().cloned()).collect();
        for name in names {
            let Ok((ks, vs)) = crate::state::store_schemas(cx.archive, &root, op, &name) else {
                continue; // no readable schema file: nothing to validate against
            };
            // Deduplication without watermark stores a dummy value Spark does not validate.
            let check_value = !(vs.fields.len() == 1 && vs.fields[0].data_type == DataType::Null);
            let window_end: Option<usize> = ks.fields.iter().position(|f| {
                f.name == "window"
                    && matches!(&f.data_type, DataType::Struct(StructType { fields })
                        if fields.len() == 2 && fields[1].name == "end" && fields[1].data_type == DataType::Timestamp)
            });
            let parts: Vec<u32> = cp.state.operators[&op].partitions.keys().copied().collect();
            for part in parts {
                let Some(store) = cp.state.operators[&op].partitions[&part].stores.get(&name).cloned() else {
                    continue;
                };
                if store.is_empty() {
                    continue;
                }
                let all_names: Vec<String> = cp.state.operators[&op].partitions[&part].stores.keys().cloned().collect();
                let uid = unique_id_for(cp, op, part, store_index(&all_names, &name), version);
                let top = uid.as_ref().and_then(|u| {
                    store.changelogs.get(&version)?.iter().find(|f| f.unique_id.as_deref() == Some(u.as_str()))
                });
                let lineage: Option<Vec<(i64, String)>> =
                    top.and_then(|t| cp.lineage_of(&t.file.path)).map(|l| l.to_vec());
                let chain =
                    state_files::load_chain(&store, version, &provider, uid.as_deref(), lineage.as_deref(), &[]);
                let intact = chain.missing.is_none()
                    && !chain.base_not_found
                    && chain.steps.iter().all(|s| cp.integrity_of(&s.path).is_some_and(|i| i.problem.is_none()));
                if !intact {
                    continue;
                }
                // Cost: the decompressed bytes the verification saw (else the stored size).
                let mut bytes: u64 = chain
                    .steps
                    .iter()
                    .map(|s| {
                        let stored = cp.file_size(&s.path).unwrap_or(0);
                        cp.integrity_of(&s.path).and_then(|i| i.decompressed_bytes).unwrap_or(stored).max(stored)
                    })
                    .sum();
                if chain.steps.iter().any(|s| s.kind == state_files::ChainFileKind::Zip) {
                    bytes = bytes.saturating_add(store.ssts.iter().fold(0u64, |a, f| a.saturating_add(f.size)));
                }
                if bytes > cx.budget_left || stores_read >= MAX_ROW_CHECK_STORES {
                    cp.unverified.push(Unverified {
                        path: store.dir.clone(),
                        bytes,
                        what: format!("rows of state version {version} not decoded (schema and watermark checks)"),
                    });
                    continue;
                }
                cx.budget_left -= bytes;
                stores_read += 1;
                let abs = cx.abs(&store.dir);
                let mut sr = StoreRows { store_dir: store.dir.clone(), version, ..Default::default() };
                match crate::state::load_raw_store(cx.archive, &abs, version, &crate::state::StateLimits::default()) {
                    Err(e) => sr.error = Some(e.to_string()),
                    Ok(raw) => {
                        for (i, (k, v)) in raw.pairs.iter().enumerate() {
                            let k = k.get(raw.key_prefix_len..).unwrap_or(&[]);
                            let v = v.get(raw.value_prefix_len..).unwrap_or(&[]);
                            sr.rows += 1;
                            sr.bytes += (k.len() + v.len()) as u64;
                            let mut bad = false;
                            if let Err(e) = crate::state::unsafe_row::validate_structure(k, &ks) {
                                bad = true;
                                sr.bad_key.get_or_insert((i as u64, e.offset, e.message));
                            }
                            if check_value {
                                if let Err(e) = crate::state::unsafe_row::validate_structure(v, &vs) {
                                    bad = true;
                                    sr.bad_value.get_or_insert((i as u64, e.offset, e.message));
                                }
                            }
                            if bad {
                                sr.bad_rows += 1;
                                continue;
                            }
                            if let Some(end_ms) = window_end.and_then(|idx| window_end_ms(k, ks.fields.len(), idx)) {
                                sr.window_end_min_ms = Some(sr.window_end_min_ms.map_or(end_ms, |m| m.min(end_ms)));
                                if wm_ms > 0 && end_ms <= wm_ms {
                                    sr.keys_behind_watermark += 1;
                                }
                            }
                        }
                    }
                }
                if provider == "hdfs" {
                    if let Some(first) = chain.steps.first() {
                        sr.first_row_invalid = first_row_check(cx, first, &ks, &vs, check_value);
                    }
                }
                cp.store_rows.insert(store.dir.clone(), sr);
            }
        }
    }
}

/// `window.end` (ms since the epoch) of a key UnsafeRow whose field `idx` (of `n` top-level fields) is the
/// `struct<start: timestamp, end: timestamp>` a time window groups by; `None` when null or out of bounds.
fn window_end_ms(row: &[u8], n: usize, idx: usize) -> Option<i64> {
    let word =
        |at: usize| -> Option<u64> { Some(u64::from_le_bytes(row.get(at..at.checked_add(8)?)?.try_into().ok()?)) };
    let bitset = n.div_ceil(64) * 8;
    if word((idx / 64) * 8)? & (1u64 << (idx % 64)) != 0 {
        return None;
    }
    let slot = word(bitset.checked_add(idx.checked_mul(8)?)?)?;
    let off = (slot >> 32) as usize;
    // Nested row: one bitset word for 2 fields, then start, end.
    let nested_null = word(off)?;
    if nested_null & 0b10 != 0 {
        return None;
    }
    let micros = word(off.checked_add(16)?)? as i64;
    Some(micros.div_euclid(1000))
}

/// Most partitions per operator whose RocksDB zip metadata is read for the growth series.
const MAX_GROWTH_PARTITIONS: usize = 8;

/// State size per version and operator: HDFS from the listing (snapshot and delta sizes); RocksDB from the
/// listing (changelog sizes) and the `metadata` of each `<v>.zip` of the first partitions (SST bytes,
/// `numKeys`), each zip charged to the byte budget.
fn read_state_growth(cp: &mut Checkpoint, cx: &mut Ctx<'_>) {
    let ops: Vec<i64> = cp.state.operators.keys().copied().collect();
    for op in ops {
        let mut points: BTreeMap<i64, GrowthPoint> = BTreeMap::new();
        let stores: Vec<(u32, state_files::StoreFiles)> = cp.state.operators[&op]
            .partitions
            .iter()
            .flat_map(|(p, pf)| pf.stores.values().map(move |s| (*p, s.clone())))
            .collect();
        let mut zip_parts: BTreeSet<u32> = BTreeSet::new();
        for (part, s) in &stores {
            for (v, f) in &s.deltas {
                points.entry(*v).or_insert_with(|| GrowthPoint { version: *v, ..Default::default() }).delta_bytes +=
                    f.size;
            }
            for (v, fs) in &s.changelogs {
                let size: u64 = fs.iter().map(|f| f.file.size).sum();
                points.entry(*v).or_insert_with(|| GrowthPoint { version: *v, ..Default::default() }).delta_bytes +=
                    size;
            }
            for (v, f) in &s.snapshots {
                let g = points.entry(*v).or_insert_with(|| GrowthPoint { version: *v, ..Default::default() });
                g.partitions += 1;
                g.snapshot_bytes = g.snapshot_bytes.saturating_add(f.size);
            }
            if s.zips.is_empty() || (zip_parts.len() >= MAX_GROWTH_PARTITIONS && !zip_parts.contains(part)) {
                continue;
            }
            zip_parts.insert(*part);
            for (v, fs) in &s.zips {
                // Several zips of one version exist only with checkpoint format v2 retries: take the first.
                let Some(f) = fs.first() else { continue };
                if f.file.size > cx.budget_left {
                    cp.unverified.push(Unverified {
                        path: f.file.path.clone(),
                        bytes: f.file.size,
                        what: "zip metadata not read for the state growth series".into(),
                    });
                    continue;
                }
                cx.budget_left -= f.file.size;
                let meta = cx
                    .read(&f.file.path, MAX_STATE_FILE_BYTES)
                    .ok()
                    .and_then(|b| crate::state::rocksdb::zip_meta::read_version_zip(&b, Default::default()).ok())
                    .map(|z| z.metadata);
                let g = points.entry(*v).or_insert_with(|| GrowthPoint { version: *v, ..Default::default() });
                g.partitions += 1;
                match meta {
                    Some(m) => {
                        g.snapshot_bytes = g
                            .snapshot_bytes
                            .saturating_add(m.sst_files.iter().fold(0u64, |a, f| a.saturating_add(f.size_bytes)));
                        g.keys =
                            if g.partitions == 1 { m.num_keys } else { g.keys.zip(m.num_keys).map(|(a, b)| a + b) };
                    }
                    None => g.keys = None,
                }
            }
        }
        cp.state_growth.insert(op, points.into_values().collect());
    }
}

/// The row `validateStateRowFormat` checks on an HDFS restart: the first put of the first file of the chain
/// (`isValidated` is set after it). `Some` when it violates the key or value schema.
fn first_row_check(
    cx: &mut Ctx<'_>,
    step: &state_files::ChainStep,
    ks: &crate::state::schema::StructType,
    vs: &crate::state::schema::StructType,
    check_value: bool,
) -> Option<(String, u64, &'static str, String)> {
    use crate::state::hdfs::{for_each_record, unwrap_value, RecordFileKind};
    let bytes = cx.read(&step.path, MAX_STATE_FILE_BYTES).ok()?;
    let data = crate::codec::decompress(&bytes, 1 << 30).ok()?;
    let kind = if step.kind == state_files::ChainFileKind::Snapshot {
        RecordFileKind::Snapshot
    } else {
        RecordFileKind::Delta
    };
    let mut first: Option<(u64, &[u8], &[u8])> = None;
    let _ = for_each_record(&data, kind, |r| {
        if first.is_none() {
            if let Some(v) = r.value {
                first = Some((r.offset, r.key, unwrap_value(r.key, v)));
            }
        }
    });
    let (off, k, v) = first?;
    if let Err(e) = crate::state::unsafe_row::validate_structure(k, ks) {
        return Some((step.path.clone(), off, "key", format!("byte {} of the key row: {}", e.offset, e.message)));
    }
    if check_value {
        // Spark floors the value to a multiple of 8 (rows written before 2.3).
        let v = &v[..v.len() / 8 * 8];
        if let Err(e) = crate::state::unsafe_row::validate_structure(v, vs) {
            return Some((
                step.path.clone(),
                off,
                "value",
                format!("byte {} of the value row: {}", e.offset, e.message),
            ));
        }
    }
    None
}
