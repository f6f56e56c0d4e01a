//! Zip entries the archive layer could not take as they stand, each named, never a refusal of the zip: entries
//! left out because their name cannot be a file of a folder (`archive-entry-skipped`), paths listed more than
//! once (`archive-entry-duplicated`), and state files of a restart chain whose zip entry does not unpack
//! (`archive-entry-unreadable`, as for log files: the zip is damaged, not necessarily the file).

use super::logs::archive_entry_unreadable;
use crate::archive::ArchiveError;
use crate::model::Checkpoint;
use crate::report::{Code, Finding, Severity};
use crate::Context;
use std::collections::BTreeSet;

/// Entries named in the evidence of one grouped finding.
const MAX_EVIDENCE: usize = 10;

/// The files a restart reads: those of [`super::budgets::restart_reads`] and every file of the state chains
/// the read stage planned.
fn restart_reads(cp: &Checkpoint) -> BTreeSet<String> {
    let mut out = super::budgets::restart_reads(cp);
    for c in cp.restart_chains.values() {
        out.extend(c.chain.steps.iter().map(|s| s.path.clone()));
    }
    out
}

/// State files of a restart chain whose zip entry (or whose file in a folder) could not be read: not checked,
/// so not damaged either; an error, and the verdict unknown, since a restart reads them.
pub fn check_state_entries(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    let damaged: Vec<(&String, &ArchiveError)> =
        cp.archive_unreadable.iter().filter(|(_, e)| e.is_entry_damage()).collect();
    if damaged.is_empty() {
        return vec![];
    }
    let reads = restart_reads(cp);
    damaged
        .into_iter()
        .map(|(p, e)| {
            let needed = super::budgets::restart_may_read(cp, p, false, &reads);
            archive_entry_unreadable(p, cp.file_size(p).unwrap_or(0), &e.to_string(), needed)
        })
        .collect()
}

/// Entries left out of the listing because their name is unsafe or not UTF-8: one finding naming them.
pub fn check_skipped(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    let skipped: Vec<(&String, Option<u64>)> = cp
        .archive_unreadable
        .iter()
        .filter_map(|(p, e)| match e {
            ArchiveError::BadPath { header, .. } => Some((p, *header)),
            _ => None,
        })
        .collect();
    if skipped.is_empty() {
        return vec![];
    }
    let title = match skipped.as_slice() {
        [(p, _)] => format!("Zip entry {p:?} was skipped: its name cannot be a file of a checkpoint folder"),
        _ => format!("{} zip entries were skipped: their names cannot be files of a checkpoint folder", skipped.len()),
    };
    let mut f = Finding::new(Code::ArchiveEntrySkipped, Severity::Warning, title)
        .why("A zip made from a checkpoint folder holds relative paths only. An entry whose name climbs out of the folder (`..`), is absolute or names a drive, or is not valid UTF-8, is no file Spark wrote or reads; extracting it could write outside the target folder. It was left out (this inspector never extracts or writes anything) and the rest of the zip was diagnosed.")
        .fix(&["Check how the zip was made: re-create it from the checkpoint folder (e.g. `cd <checkpoint> && zip -r ../checkpoint.zip .`) and run the inspector again; do not extract the named entries."]);
    for (p, header) in skipped.iter().take(MAX_EVIDENCE) {
        let at = header.map(|h| format!(" (local header at byte {h} of the zip)")).unwrap_or_default();
        f = f.evidence(format!("{p:?}"), format!("unsafe or invalid entry name{at}; skipped"), *header);
    }
    if skipped.len() > MAX_EVIDENCE {
        f = f.evidence("", format!("and {} more entries", skipped.len() - MAX_EVIDENCE), None);
    }
    vec![f]
}

/// Paths the zip lists more than once: one finding naming each with its copies (offsets in the zip, sizes and
/// CRC-32s as its central directory declares them) and the copy read (the last).
pub fn check_duplicated(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    if cp.archive_duplicates.is_empty() {
        return vec![];
    }
    let reads = restart_reads(cp);
    let mut dups: Vec<&crate::archive::DuplicateEntry> = cp.archive_duplicates.iter().collect();
    // Those that decide the verdict first: copies that differ, of a file a restart reads.
    let decides = |d: &crate::archive::DuplicateEntry| !d.copies_agree() && reads.contains(&d.path);
    dups.sort_by_key(|d| (!decides(d), d.copies_agree(), d.path.clone()));
    let deciding = dups.iter().filter(|d| decides(d)).count();
    let title = match (dups.as_slice(), deciding) {
        ([d], _) => format!(
            "{} is in the zip {} times{}; the last copy was read",
            d.path,
            d.copies.len(),
            if d.copies_agree() { " (same size and CRC-32)" } else { " with different content" }
        ),
        (_, 0) => format!("{} paths are in the zip more than once; the last copy of each was read", dups.len()),
        (_, n) => format!(
            "{} paths are in the zip more than once, {n} of them read by a restart with copies that differ; the last copy of each was read",
            dups.len()
        ),
    };
    let mut f = Finding::new(
        Code::ArchiveEntryDuplicated,
        if deciding > 0 { Severity::Error } else { Severity::Warning },
        title,
    )
    .why(if deciding > 0 {
        "A folder holds one file per path, but this zip holds several copies of a path, and they differ. Extracting the zip writes them in the order of its central directory, each over the one before, so the folder holds the last: that copy was read. A restart reads this file, so its result depends on which copy the real checkpoint folder holds: the verdict is unknown."
    } else {
        "A folder holds one file per path, but this zip holds several copies of a path (a zip appended to, or names equal once `\\` is read as `/`). Extracting the zip writes them in the order of its central directory, each over the one before, so the folder holds the last: that copy was read."
    })
    .fix(&[
        "Re-create the zip from the checkpoint folder (e.g. `cd <checkpoint> && zip -r ../checkpoint.zip .`) and run the inspector again.",
        "If the zip is the only copy, check which copy is right (e.g. `unzip -l`, then extract each one) before restoring the folder from it.",
    ]);
    for d in dups.iter().take(MAX_EVIDENCE) {
        let copies: Vec<String> = d
            .copies
            .iter()
            .map(|c| format!("at byte {} ({} bytes, CRC-32 {:08x})", c.header, c.size, c.crc32))
            .collect();
        let read = d.copies.last().map(|c| c.header);
        let detail = format!(
            "{} copies: {}; the last (at byte {}) was read{}",
            d.copies.len(),
            copies.join(", "),
            read.unwrap_or(0),
            if reads.contains(&d.path) { "; a restart reads this file" } else { "" }
        );
        f = f.evidence_sized(&d.path, d.copies.last().map(|c| c.size).unwrap_or(0), detail, read);
    }
    if dups.len() > MAX_EVIDENCE {
        f = f.evidence("", format!("and {} more paths", dups.len() - MAX_EVIDENCE), None);
    }
    vec![f]
}
