//! Limits of this inspector and zips it cannot read, never reported as damage (issue 12): entries with a
//! compression method other than deflate (one finding for the whole zip), overlapping entries (a zip bomb),
//! and files not verified because they are over a limit (entry size, compression ratio, the inflate budget).
//! When a restart reads such a file the verdict is `unknown` (see `predict`), with the file named.

use crate::archive::ArchiveError;
use crate::log::LogError;
use crate::model::Checkpoint;
use crate::report::{Code, Finding, Severity};
use crate::Context;
use std::collections::BTreeSet;

/// Files named in the evidence of one grouped finding.
const MAX_EVIDENCE: usize = 10;

/// The files a restart reads among the log files (`metadata`, the latest two offsets files, the latest
/// commit, the file source logs' needed files), the stores' schema files, and the state files of its chains
/// that were not verified.
pub(super) fn restart_reads(cp: &Checkpoint) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    out.insert("metadata".to_string());
    for f in cp.offsets.values().rev().take(2) {
        out.insert(f.file.path.clone());
    }
    if let Some(f) = cp.commits.values().next_back() {
        out.insert(f.file.path.clone());
    }
    for log in cp.source_logs.values() {
        let latest = log.listed.keys().next_back().copied().unwrap_or(0);
        let (compact, range) = crate::log::file_log::files_needed(latest, log.compact_interval);
        for (id, f) in &log.read {
            if Some(*id) == compact || range.contains(id) {
                out.insert(f.file.path.clone());
            }
        }
    }
    out.extend(cp.not_verified.iter().filter(|n| n.restart_reads).map(|n| n.path.clone()));
    // The stores' schema files (`state/<op>/0/[<store>/]_metadata/schema`): `StateSchemaCompatibilityChecker`
    // reads each when a restart first loads the operator's state.
    out.extend(cp.state_schemas.keys().cloned());
    out
}

/// The severity of a limit finding: a warning (and an `unknown` verdict) when a restart reads one of the
/// files, else info.
fn severity(paths: &[&str], reads: &BTreeSet<String>) -> (Severity, bool) {
    let needed = paths.iter().any(|p| reads.contains(*p));
    (if needed { Severity::Warning } else { Severity::Info }, needed)
}

/// Entries stored with a compression method the inspector does not inflate: one finding for all of them.
pub fn check_compression(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    let files: Vec<(&str, u16)> = cp
        .archive_unreadable
        .iter()
        .filter_map(|(p, e)| match e {
            ArchiveError::UnsupportedCompression { method, .. } => Some((p.as_str(), *method)),
            _ => None,
        })
        .collect();
    if files.is_empty() {
        return vec![];
    }
    let methods: BTreeSet<u16> = files.iter().map(|f| f.1).collect();
    let names: Vec<String> = methods.iter().map(|m| crate::archive::method_name(*m)).collect();
    let reads = restart_reads(cp);
    let paths: Vec<&str> = files.iter().map(|f| f.0).collect();
    let (sev, needed) = severity(&paths, &reads);
    let mut f = Finding::new(
        Code::ArchiveCompressionUnsupported,
        sev,
        format!(
            "{} file(s) of the zip use {}, which this inspector does not unpack: re-zip with deflate",
            files.len(),
            names.join(", ")
        ),
    )
    .why(if needed {
        "The files are not damaged: the zip was made with a compression method other than deflate, so they were not read. A restart reads some of them, so the verdict is unknown until the zip is re-made with deflate."
    } else {
        "The files are not damaged: the zip was made with a compression method other than deflate, so they were not read. A restart does not read them."
    })
    .fix(&["Re-create the zip with deflate, the default of zip tools (e.g. `cd <checkpoint> && zip -r ../checkpoint.zip .`; 7-Zip: -mm=Deflate), and run the inspector again."]);
    let mut ordered = paths.clone();
    ordered.sort_by_key(|p| !reads.contains(*p));
    for p in ordered.iter().take(MAX_EVIDENCE) {
        let m = files.iter().find(|f| f.0 == *p).map(|f| f.1).unwrap_or(0);
        f = f.evidence_sized(*p, cp.file_size(p).unwrap_or(0), crate::archive::method_name(m), None);
    }
    vec![f]
}

/// Entries whose compressed bytes overlap another entry's: one finding for all of them.
pub fn check_overlap(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    let files: Vec<(&str, &ArchiveError)> = cp
        .archive_unreadable
        .iter()
        .filter(|(_, e)| matches!(e, ArchiveError::Overlapping { .. }))
        .map(|(p, e)| (p.as_str(), e))
        .collect();
    if files.is_empty() {
        return vec![];
    }
    let reads = restart_reads(cp);
    let paths: Vec<&str> = files.iter().map(|f| f.0).collect();
    let (sev, _) = severity(&paths, &reads);
    let mut f = Finding::new(
        Code::ArchiveEntriesOverlap,
        sev,
        format!("{} zip entr(y/ies) share compressed bytes with another entry (an overlapping-entry zip bomb or a broken zip); not unpacked", files.len()),
    )
    .why("In a zip made by a zip tool every entry has bytes of its own. Entries whose data reaches into the next entry's header inflate the same bytes many times over (a zip bomb); they were not unpacked, and the rest of the zip was read.")
    .fix(&["Re-create the zip from the checkpoint folder (e.g. `cd <checkpoint> && zip -r ../checkpoint.zip .`) and run the inspector again."]);
    for (p, e) in files.iter().take(MAX_EVIDENCE) {
        let offset = match e {
            ArchiveError::Overlapping { offset, .. } => Some(*offset),
            _ => None,
        };
        f = f.evidence_sized(*p, cp.file_size(p).unwrap_or(0), e.to_string(), offset);
    }
    vec![f]
}

/// Every file of the model that a limit kept from being read: (path, reason).
fn not_verified_files(cp: &Checkpoint) -> Vec<(String, String)> {
    fn nv<T>(path: &str, c: &Result<T, LogError>, out: &mut Vec<(String, String)>) {
        if let Err(LogError::NotVerified { reason }) = c {
            out.push((path.to_string(), reason.clone()));
        }
    }
    let mut out = Vec::new();
    if let Some(m) = &cp.metadata {
        nv(&m.path, &m.content, &mut out);
    }
    for f in cp.offsets.values().rev() {
        nv(&f.file.path, &f.file.content, &mut out);
    }
    for f in cp.commits.values().rev() {
        nv(&f.file.path, &f.file.content, &mut out);
    }
    for log in cp.source_logs.values().chain(cp.sink_logs.iter()) {
        for f in log.read.values().rev() {
            nv(&f.file.path, &f.file.content, &mut out);
        }
    }
    for m in cp.operator_metadata.values() {
        nv(&m.path, &m.content, &mut out);
    }
    out.extend(cp.not_verified.iter().map(|n| (n.path.clone(), n.reason.clone())));
    // Files of the zip-level findings are reported there.
    out.retain(|(p, _)| !cp.archive_unreadable.contains_key(p));
    out
}

/// Files not verified because of a limit of this inspector: one finding naming them and the limit.
pub fn check_not_verified(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    let mut files = not_verified_files(cp);
    if files.is_empty() {
        return vec![];
    }
    let reads = restart_reads(cp);
    files.sort_by_key(|(p, _)| !reads.contains(p));
    let paths: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    let (sev, needed) = severity(&paths, &reads);
    let mut f = Finding::new(
        Code::FileNotVerified,
        sev,
        if needed {
            format!("{} not verified: over a limit of this inspector; the restart verdict is unknown", files[0].0)
        } else {
            format!("{} file(s) not verified: over a limit of this inspector", files.len())
        },
    )
    .why(if needed {
        "A limit of this inspector (size of one file, compression ratio, bytes unpacked in all, or a reader's own: an SST block or table, a state file's stream) kept it from reading a file a restart reads. That says nothing about the file: it is not verified, so the verdict is unknown."
    } else {
        "A limit of this inspector (size of one file, compression ratio, bytes unpacked in all, or a reader's own: an SST block or table, a state file's stream) kept it from reading these files. That says nothing about them; a restart does not read them."
    })
    .fix(&["Check the named file by hand (its size, e.g. with `unzip -l`), or inspect a zip holding fewer files; the other findings stand."]);
    for (p, reason) in files.iter().take(MAX_EVIDENCE) {
        f = f.evidence_sized(p, cp.file_size(p).unwrap_or(0), reason, None);
    }
    if files.len() > MAX_EVIDENCE {
        f = f.evidence("", format!("and {} more file(s)", files.len() - MAX_EVIDENCE), None);
    }
    vec![f]
}

/// Top folders of a root whose listing a restart reads (the latest batch and commit come from listing `offsets/`
/// and `commits/`; `metadata` is a file, but a folder of that name hides it).
const LISTED_FOLDERS: &[&str] = &["offsets", "commits", "metadata"];

/// Whether a restart may read an entry the input could not give: a file a restart reads (the latest logs, a
/// source log's needed files, a file of a store's restart chain or its missing step, an SST of a restart
/// store), or a folder whose listing a restart reads (`offsets/`, `commits/`, `state/`, `state/<op>/`) or that
/// holds (or is) such a file, a restart store's folder or its `SSTs/`. Anything else (a
/// dangling link in a partition Spark does not load, an editor's lock file in `state/`) is no reason for an
/// unknown verdict.
pub(super) fn restart_may_read(cp: &Checkpoint, path: &str, folder: bool, reads: &BTreeSet<String>) -> bool {
    let chain_files = cp.restart_chains.values().flat_map(|rc| rc.chain.steps.iter().chain(&rc.chain.missing));
    if !folder {
        let in_ssts = |rc: &crate::model::RestartChain| {
            path.strip_prefix(rc.dir.as_str()).is_some_and(|rest| rest.starts_with("/SSTs/"))
        };
        return reads.contains(path)
            || chain_files.map(|s| s.path.as_str()).any(|p| p == path)
            || cp.restart_chains.values().any(in_ssts);
    }
    let holds = |p: &str| p == path || p.strip_prefix(path).is_some_and(|rest| rest.starts_with('/'));
    // `state/` or `state/<op>/` unreadable: which operators and stores a restart loads is unknown (a folder of
    // that name exists only for a query that had state).
    let state_or_operator = path == "state" || path.strip_prefix("state/").is_some_and(|op| !op.contains('/'));
    LISTED_FOLDERS.iter().any(|f| holds(f))
        || state_or_operator
        || reads.iter().any(|p| holds(p))
        || cp.restart_chains.values().any(|rc| holds(&rc.dir) || holds(&format!("{}/SSTs", rc.dir)))
        || chain_files.map(|s| s.path.as_str()).any(holds)
}

/// `archive-entry-unreadable` for entries the input listed but cannot give ([`ArchiveError::Inaccessible`]: a
/// folder or file of a directory that is not readable, a FIFO, socket or device, a symbolic link that loops
/// or points nowhere): one finding naming them. Not damage: an error (the verdict is unknown, see `predict`)
/// when a restart reads one, or may read inside one of the folders; else a warning.
pub fn check_inaccessible(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    let reads = restart_reads(cp);
    let mut files: Vec<(&str, &ArchiveError, bool)> = cp
        .archive_unreadable
        .iter()
        .filter_map(|(p, e)| match e {
            ArchiveError::Inaccessible { folder, .. } => {
                Some((p.as_str(), e, restart_may_read(cp, p, *folder, &reads)))
            }
            _ => None,
        })
        .collect();
    if files.is_empty() {
        return vec![];
    }
    files.sort_by_key(|f| !f.2);
    let needed = files[0].2;
    let title = match files.len() {
        1 => format!("{} cannot be read from the input, so it was not checked", files[0].0),
        n => format!("{n} files or folders cannot be read from the input, so they were not checked"),
    };
    let mut f = Finding::new(Code::ArchiveEntryUnreadable, if needed { Severity::Error } else { Severity::Warning }, title)
        .why(if needed {
            "The input lists it but does not give its bytes (permission denied, not a regular file, a symbolic link that loops or points nowhere); that says nothing about the checkpoint. A restart reads it (or may read inside the folder), so the restart prediction is unknown until it can be read. Files inside an unreadable folder are not reported missing: they may well be there."
        } else {
            "The input lists it but does not give its bytes (permission denied, not a regular file, a symbolic link that loops or points nowhere); that says nothing about the checkpoint. A restart does not read it; other checks are unaffected."
        })
        .fix(&[
            "Run the inspector as a user who can read the whole checkpoint folder (e.g. its owner), or copy the checkpoint with its links resolved (`cp -rL`), and run it again.",
            "Spark reads the checkpoint through the same file system: make the named files readable regular files, or remove what is not part of the checkpoint.",
        ]);
    for (p, e, _) in files.iter().take(MAX_EVIDENCE) {
        f = f.evidence_sized(*p, cp.file_size(p).unwrap_or(0), e.to_string(), None);
    }
    if files.len() > MAX_EVIDENCE {
        f = f.evidence("", format!("and {} more", files.len() - MAX_EVIDENCE), None);
    }
    vec![f]
}
