//! Reads a Delta table's `_delta_log` from an [`Archive`] into a [`DeltaLog`]: commits (`<v>.json`),
//! checkpoints (classic, multi-part, v2 with sidecars), `_last_checkpoint`, compacted files. File names as
//! delta-io/delta `util/FileNames.scala` writes them. Pure: it reads only through the archive, each file
//! capped; a file that does not read or parse becomes a [`Problem`] (path, byte offset, why).

use super::actions::{actions_of, Action};
use super::parquet::for_each_row;
use super::table::{Checkpoint, CheckpointLayout, Commit, DeltaLog, LastCheckpoint};
use crate::archive::{Archive, Entry};
use crate::model::Problem;
use std::collections::BTreeMap;

/// Cap for one commit file.
pub const MAX_COMMIT_BYTES: u64 = 16 * 1024 * 1024;
/// Cap for one checkpoint file (a part or a sidecar).
pub const MAX_CHECKPOINT_BYTES: u64 = 256 * 1024 * 1024;
/// Bytes of commit files read per log, newest first; older commits beyond it are listed in `not_read`.
pub const COMMIT_BUDGET_BYTES: u64 = 256 * 1024 * 1024;
/// `add`/`remove` actions kept per log (paths for the VACUUM checks); beyond it only counts are kept.
pub const MAX_FILE_ACTIONS: usize = 200_000;

/// What a file name in `_delta_log/` is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogFileName {
    /// `<v>.json`.
    Commit(i64),
    /// `<v>.checkpoint.parquet`.
    ClassicCheckpoint(i64),
    /// `<v>.checkpoint.<part>.<parts>.parquet`.
    MultiPartCheckpoint(i64, u32, u32),
    /// `<v>.checkpoint.<uuid>.{json,parquet}`.
    V2Checkpoint(i64),
    /// `<a>.<b>.compacted.json`.
    Compacted(i64, i64),
    /// `_last_checkpoint`.
    LastCheckpoint,
    /// Anything else (`<v>.crc`, `_commits/…`, temp files).
    Other,
}

/// Missing parts of a multi-part checkpoint named one by one; the rest are counted in one last entry
/// (`and N more parts of M`).
pub const MAX_MISSING_NAMED: usize = 20;

fn version(s: &str) -> Option<i64> {
    (s.len() == 20 && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
}

/// Classifies a file name of `_delta_log/` (the name only, no folder).
pub fn classify(name: &str) -> LogFileName {
    if name == "_last_checkpoint" {
        return LogFileName::LastCheckpoint;
    }
    let parts: Vec<&str> = name.split('.').collect();
    match parts.as_slice() {
        [v, "json"] => version(v).map(LogFileName::Commit),
        [v, "checkpoint", "parquet"] => version(v).map(LogFileName::ClassicCheckpoint),
        [v, "checkpoint", part, n, "parquet"] if part.len() == 10 && n.len() == 10 => {
            match (version(v), part.parse::<u32>(), n.parse::<u32>()) {
                (Some(v), Ok(p), Ok(n)) if p >= 1 && p <= n => Some(LogFileName::MultiPartCheckpoint(v, p, n)),
                _ => None,
            }
        }
        [v, "checkpoint", _uuid, "json" | "parquet"] => version(v).map(LogFileName::V2Checkpoint),
        [a, b, "compacted", "json"] => match (version(a), version(b)) {
            (Some(a), Some(b)) if a <= b => Some(LogFileName::Compacted(a, b)),
            _ => None,
        },
        _ => None,
    }
    .unwrap_or(LogFileName::Other)
}

/// The `_delta_log` folders of an archive (paths without a trailing `/`, `""` for a log at the top level:
/// an archive or folder whose top level holds commit or checkpoint files).
pub fn find_delta_logs(entries: &[Entry]) -> Vec<String> {
    let mut dirs: Vec<String> = entries
        .iter()
        .filter(|e| !e.is_dir && !crate::layout::is_finder_metadata(&e.path))
        .filter_map(|e| {
            let i = e.path.rfind("_delta_log/")?;
            let dir = &e.path[..i + "_delta_log".len()];
            (i == 0 || e.path.as_bytes()[i - 1] == b'/').then(|| dir.to_string())
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    if dirs.is_empty()
        && entries.iter().any(|e| {
            !e.is_dir
                && !e.path.contains('/')
                && !matches!(classify(&e.path), LogFileName::Other | LogFileName::Compacted(..))
        })
    {
        dirs.push(String::new());
    }
    dirs
}

/// Reads every `_delta_log` of an archive. Each log's files are found by a binary search of the listing sorted
/// once (a scan of the listing per log grows with logs times entries).
pub fn read_delta_logs(archive: &mut dyn Archive) -> Vec<DeltaLog> {
    let dirs = find_delta_logs(archive.entries());
    let entries = archive.entries();
    let mut sorted: Vec<usize> = (0..entries.len()).filter(|&i| !entries[i].is_dir).collect();
    sorted.sort_by(|a, b| entries[*a].path.cmp(&entries[*b].path));
    let mut logs = Vec::with_capacity(dirs.len());
    for dir in &dirs {
        let prefix = log_prefix(dir);
        let entries = archive.entries();
        let path = |i: &usize| entries.get(*i).map(|e| e.path.as_str()).unwrap_or("");
        let start = sorted.partition_point(|i| path(i) < prefix.as_str());
        let mut below: Vec<usize> =
            sorted[start..].iter().copied().take_while(|i| path(i).starts_with(prefix.as_str())).collect();
        below.sort_unstable(); // listing order
        logs.push(read_delta_log_at(archive, dir, &below));
    }
    logs
}

/// `<dir>/`, or `""` for a log at the top level.
fn log_prefix(dir: &str) -> String {
    if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    }
}

struct Listed {
    path: String,
    size: u64,
    modified_ms: Option<i64>,
    name: LogFileName,
}

/// Reads one `_delta_log` folder (`dir` from [`find_delta_logs`]).
pub fn read_delta_log(archive: &mut dyn Archive, dir: &str) -> DeltaLog {
    let prefix = log_prefix(dir);
    let below: Vec<usize> = (archive.entries().iter().enumerate())
        .filter(|(_, e)| !e.is_dir && e.path.starts_with(&prefix))
        .map(|(i, _)| i)
        .collect();
    read_delta_log_at(archive, dir, &below)
}

/// [`read_delta_log`] of the files at `below` in [`Archive::entries`] (the files below `dir`, in listing
/// order).
fn read_delta_log_at(archive: &mut dyn Archive, dir: &str, below: &[usize]) -> DeltaLog {
    let prefix = log_prefix(dir);
    let mut log = DeltaLog { input: archive.name().to_string(), dir: dir.to_string(), ..DeltaLog::default() };
    let mut listed = Vec::new();
    let mut sidecar_files: BTreeMap<String, u64> = BTreeMap::new();
    let entries = archive.entries();
    for e in below.iter().filter_map(|&i| entries.get(i)).filter(|e| !e.is_dir) {
        let Some(rest) = e.path.strip_prefix(&prefix) else { continue };
        if let Some(sc) = rest.strip_prefix("_sidecars/") {
            sidecar_files.insert(sc.to_string(), e.size);
            continue;
        }
        let name = if rest.contains('/') { LogFileName::Other } else { classify(rest) };
        listed.push(Listed { path: e.path.clone(), size: e.size, modified_ms: e.modified_ms, name });
    }
    let mut budget = COMMIT_BUDGET_BYTES;
    let mut kept_actions = 0usize;
    let mut commits: Vec<&Listed> = listed.iter().filter(|l| matches!(l.name, LogFileName::Commit(_))).collect();
    commits.sort_by_key(|l| std::cmp::Reverse(if let LogFileName::Commit(v) = l.name { v } else { 0 }));
    for l in commits {
        let LogFileName::Commit(v) = l.name else { continue };
        if l.size > budget {
            log.not_read.push(v);
            continue;
        }
        budget -= l.size;
        let commit = read_commit(archive, l, v, (&mut log.problems, &mut log.not_verified), &mut kept_actions);
        log.commits.insert(v, commit);
    }
    for l in &listed {
        match l.name {
            LogFileName::Compacted(a, b) => log.compacted.push((a, b, l.path.clone())),
            LogFileName::Other => log.other_files.push((l.path.clone(), l.size)),
            LogFileName::LastCheckpoint => {
                log.last_checkpoint = read_last_checkpoint(archive, &l.path, &mut log.problems)
            }
            _ => {}
        }
    }
    read_checkpoints(archive, &prefix, &listed, &sidecar_files, &mut log, &mut kept_actions);
    log
}

/// `(problems, not_verified)` of the log being read ([`DeltaLog::problems`], [`DeltaLog::not_verified`]).
type Met<'a> = (&'a mut Vec<Problem>, &'a mut Vec<Problem>);

fn read_commit(archive: &mut dyn Archive, l: &Listed, v: i64, met: Met<'_>, kept: &mut usize) -> Commit {
    let (problems, not_verified) = met;
    let mut c =
        Commit { version: v, path: l.path.clone(), size: l.size, modified_ms: l.modified_ms, ..Commit::default() };
    let bytes = match archive.read(&l.path, MAX_COMMIT_BYTES) {
        Ok(b) => b,
        Err(e) if e.is_content_unseen() => {
            not_verified.push(Problem { path: l.path.clone(), offset: None, reason: e.to_string() });
            return c;
        }
        Err(e) => {
            problems.push(Problem { path: l.path.clone(), offset: None, reason: e.to_string() });
            c.damaged = true;
            return c;
        }
    };
    let mut offset = 0u64;
    for line in bytes.split(|b| *b == b'\n') {
        let start = offset;
        offset += line.len() as u64 + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let value: serde_json::Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                problems.push(Problem {
                    path: l.path.clone(),
                    offset: Some(start + e.column().saturating_sub(1) as u64),
                    reason: format!("line {} is not a JSON action: {e}", e.line()),
                });
                c.damaged = true;
                break;
            }
        };
        for a in actions_of(&value) {
            match a {
                Action::CommitInfo(ci) => c.commit_info = Some(ci),
                Action::Metadata(m) => c.metadata = Some(m),
                Action::Protocol(p) => c.protocol = Some(p),
                Action::Add(f) | Action::Remove(f) if *kept >= MAX_FILE_ACTIONS => {
                    let _ = f;
                }
                Action::Add(f) => {
                    *kept += 1;
                    c.adds.push(f)
                }
                Action::Remove(f) => {
                    *kept += 1;
                    c.removes.push(f)
                }
                Action::Cdc => c.cdc_files += 1,
                Action::Sidecar(_) | Action::CheckpointMetadata => {}
            }
        }
    }
    c
}

fn read_last_checkpoint(archive: &mut dyn Archive, path: &str, problems: &mut Vec<Problem>) -> Option<LastCheckpoint> {
    let parsed = archive
        .read(path, 1024 * 1024)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).map_err(|e| format!("not JSON: {e}")));
    match parsed {
        Ok(v) => match v.get("version").and_then(serde_json::Value::as_i64) {
            Some(version) => Some(LastCheckpoint {
                version,
                parts: v.get("parts").and_then(serde_json::Value::as_i64),
                v2: v.get("v2Checkpoint").is_some_and(|x| !x.is_null()),
            }),
            None => {
                problems.push(Problem { path: path.to_string(), offset: Some(0), reason: "no \"version\"".into() });
                None
            }
        },
        Err(reason) => {
            problems.push(Problem { path: path.to_string(), offset: Some(0), reason });
            None
        }
    }
}

/// Reads one checkpoint file (parquet, or the JSON form of a v2 top file) into `k`.
fn read_checkpoint_file(
    archive: &mut dyn Archive,
    path: &str,
    k: &mut Checkpoint,
    sidecars: &mut Vec<String>,
    met: Met<'_>,
    kept: &mut usize,
) {
    let (problems, not_verified) = met;
    let bytes = match archive.read(path, MAX_CHECKPOINT_BYTES) {
        Ok(b) => b,
        Err(e) if e.is_content_unseen() => {
            not_verified.push(Problem { path: path.to_string(), offset: None, reason: e.to_string() });
            k.not_verified = true;
            return;
        }
        Err(e) => {
            problems.push(Problem { path: path.to_string(), offset: None, reason: e.to_string() });
            k.damaged = true;
            return;
        }
    };
    let mut take = |v: serde_json::Value| {
        for a in actions_of(&v) {
            match a {
                Action::Metadata(m) => k.metadata = Some(m),
                Action::Protocol(p) => k.protocol = Some(p),
                Action::Add(_) => k.num_adds += 1,
                Action::Remove(f) if *kept < MAX_FILE_ACTIONS => {
                    *kept += 1;
                    k.removes.push(f)
                }
                Action::Sidecar(s) => sidecars.push(s),
                _ => {}
            }
        }
    };
    let result = if path.ends_with(".json") {
        let mut r = Ok(0);
        let mut offset = 0u64;
        for line in bytes.split(|b| *b == b'\n') {
            let start = offset;
            offset += line.len() as u64 + 1;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice(line) {
                Ok(v) => take(v),
                Err(e) => {
                    r = Err(super::parquet::ParquetError {
                        offset: Some(start),
                        reason: format!("not a JSON action: {e}"),
                    });
                    break;
                }
            }
        }
        r
    } else {
        for_each_row(bytes, take)
    };
    if let Err(e) = result {
        problems.push(Problem { path: path.to_string(), offset: e.offset, reason: e.reason });
        k.damaged = true;
    }
}

/// One checkpoint instance on disk: its layout, its files, and the files its layout needs that are absent.
type Instance = (CheckpointLayout, Vec<String>, Vec<String>);

fn read_checkpoints(
    archive: &mut dyn Archive,
    prefix: &str,
    listed: &[Listed],
    sidecar_files: &BTreeMap<String, u64>,
    log: &mut DeltaLog,
    kept: &mut usize,
) {
    // Group by version: every instance (classic, each multi-part set, each v2 file) is a candidate.
    let mut instances: BTreeMap<i64, Vec<Instance>> = BTreeMap::new();
    let mut multipart: BTreeMap<(i64, u32), BTreeMap<u32, String>> = BTreeMap::new();
    for l in listed {
        match l.name {
            LogFileName::ClassicCheckpoint(v) => {
                instances.entry(v).or_default().push((CheckpointLayout::Classic, vec![l.path.clone()], vec![]))
            }
            LogFileName::V2Checkpoint(v) => instances.entry(v).or_default().push((
                CheckpointLayout::V2 { sidecars: vec![] },
                vec![l.path.clone()],
                vec![],
            )),
            LogFileName::MultiPartCheckpoint(v, p, n) => {
                multipart.entry((v, n)).or_default().insert(p, l.path.clone());
            }
            _ => {}
        }
    }
    for ((v, n), parts) in multipart {
        // The part count comes from a file name (up to u32::MAX): name the first missing parts only, count the
        // rest (the parts present are at most the files listed, so the search for the first ones is bounded).
        let present = parts.keys().filter(|p| (1..=n).contains(*p)).count() as u64;
        let mut missing: Vec<String> = (1..=n)
            .filter(|p| !parts.contains_key(p))
            .take(MAX_MISSING_NAMED)
            .map(|p| format!("{prefix}{v:020}.checkpoint.{p:010}.{n:010}.parquet"))
            .collect();
        let more = u64::from(n).saturating_sub(present).saturating_sub(missing.len() as u64);
        if more > 0 {
            missing.push(format!("and {more} more parts of {n}"));
        }
        instances.entry(v).or_default().push((
            CheckpointLayout::MultiPart { parts: n },
            parts.into_values().collect(),
            missing,
        ));
    }
    for (v, cands) in instances {
        let mut best: Option<Checkpoint> = None;
        for (layout, files, missing) in cands {
            let mut k = Checkpoint {
                version: v,
                layout,
                files: files.clone(),
                missing,
                metadata: None,
                protocol: None,
                num_adds: 0,
                removes: vec![],
                damaged: false,
                not_verified: false,
            };
            let mut sidecars = Vec::new();
            if k.missing.is_empty() {
                for f in &files {
                    let met = (&mut log.problems, &mut log.not_verified);
                    read_checkpoint_file(archive, f, &mut k, &mut sidecars, met, kept);
                }
            }
            if matches!(k.layout, CheckpointLayout::V2 { .. }) {
                let mut names = Vec::new();
                for s in &sidecars {
                    let name = s.rsplit('/').next().unwrap_or(s).to_string();
                    if sidecar_files.contains_key(&name) {
                        let path = format!("{prefix}_sidecars/{name}");
                        let mut ignored = Vec::new();
                        let met = (&mut log.problems, &mut log.not_verified);
                        read_checkpoint_file(archive, &path, &mut k, &mut ignored, met, kept);
                        k.files.push(path);
                    } else {
                        k.missing.push(format!("{prefix}_sidecars/{name}"));
                    }
                    names.push(name);
                }
                k.layout = CheckpointLayout::V2 { sidecars: names };
            }
            let better = match &best {
                None => true,
                Some(b) => !b.complete() && k.complete(),
            };
            if better {
                best = Some(k);
            }
        }
        if let Some(b) = best {
            log.checkpoints.insert(v, b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_log_file_names() {
        assert_eq!(classify("00000000000000000040.json"), LogFileName::Commit(40));
        assert_eq!(classify("00000000000000000050.checkpoint.parquet"), LogFileName::ClassicCheckpoint(50));
        assert_eq!(
            classify("00000000000000000010.checkpoint.0000000002.0000000003.parquet"),
            LogFileName::MultiPartCheckpoint(10, 2, 3)
        );
        assert_eq!(
            classify("00000000000000000002.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json"),
            LogFileName::V2Checkpoint(2)
        );
        assert_eq!(classify("00000000000000000004.00000000000000000006.compacted.json"), LogFileName::Compacted(4, 6));
        assert_eq!(classify("_last_checkpoint"), LogFileName::LastCheckpoint);
        assert_eq!(classify("00000000000000000003.crc"), LogFileName::Other);
        assert_eq!(classify("40.json"), LogFileName::Other);
    }
}
