//! `rocksdb-zip-name-unparsable`: a file named `*.zip` in a RocksDB store folder whose name before `.zip` is no
//! number (`old.zip`, `backup-15.zip`, `15 (copy).zip`), where a restart lists the folder's zips.
//!
//! Spark never builds such a name, but its RocksDB load reads every `*.zip` name of the store folder when it
//! looks for the snapshot to start from, mapping each name to `stripSuffix(".zip").toLong`, which throws
//! `java.lang.NumberFormatException: For input string: "old"`; the state store wraps it as
//! `CANNOT_LOAD_STATE_STORE.UNCATEGORIZED`. Up to 4.1, `RocksDBFileManager.getLatestSnapshotVersion(version)`
//! returns `version` without listing when `<version>.zip` exists; from 4.2 the load lists the zips whatever the
//! version. Checkpoint format v2 plans the load from the commit log's unique ids and the changelog lineage
//! instead, without parsing other names.
//!
//! Observed with real Spark (`tools/spark-gen/stray_state_files.py`, `tests/data/spark/stray-*`): 4.1.4 failed
//! with changelog checkpointing on and no zip of the restart version (`stray-rocksdb-changelog-old-zip`) and
//! resumed with that zip (`-snapshotted`), with changelog checkpointing off (every version a zip) and with
//! checkpoint format v2 (3.5.9 and 4.0.5 resumed in the same two layouts); 4.2.1 and 4.3.0 failed in every
//! format v1 layout, changelog checkpointing on or off, automatic snapshot repair on or off (4.3.0),
//! and 4.3.0 resumed with format v2. A name Java's `Long.parseLong` reads (`0011`, `+11`, `-1`) is no fault; a
//! name of digits of another script, which Java also reads, is taken for a fault here.

use super::BACKUP;
use crate::model::Checkpoint;
use crate::report::{Code, Finding, RestartStage, Severity};
use crate::{Context, SparkVersion};

/// Most other unparsable zips of one store named as evidence.
const MAX_EVIDENCE: usize = 10;

/// Whether `s` is a number to Java's `Long.parseLong` (an optional sign, ASCII digits, within 64 bits).
fn java_long(s: &str) -> bool {
    s.parse::<i64>().is_ok()
}

/// Whether `release`'s RocksDB load lists the store's zips even when the version it loads has its own zip
/// (4.2.1 and 4.3.0 did; 4.1.4 did not).
fn lists_every_load(release: SparkVersion) -> bool {
    release.at_least(4, 2)
}

/// One finding per store a restart loads whose folder holds a `*.zip` that Spark's listing cannot read, when
/// that listing happens: a RocksDB store of checkpoint format v1 whose restart version has no zip of its own, or
/// any such store from Spark 4.2 on.
pub fn check_zip_names(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let always = lists_every_load(super::spark(ctx));
    let mut out = Vec::new();
    for (key, rc) in &cp.restart_chains {
        if rc.provider != "rocksdb" || rc.unique_id.is_some() || rc.chain.version <= 0 {
            continue;
        }
        let Some(store) = cp.store_files(key) else { continue };
        let version = rc.chain.version;
        let own_zip = store.zips.get(&version).is_some_and(|fs| fs.iter().any(|f| f.unique_id.is_none()));
        if own_zip && !always {
            continue; // `<version>.zip` exists: up to 4.1, Spark loads it without listing
        }
        let bad: Vec<&crate::state_files::FileRef> = store
            .other
            .iter()
            .filter(|f| {
                let name = f.path.rsplit('/').next().unwrap_or(&f.path);
                name.strip_suffix(".zip").is_some_and(|stem| !java_long(stem))
            })
            .collect();
        let Some(first) = bad.first() else { continue };
        let name = first.path.rsplit('/').next().unwrap_or(&first.path);
        let stem = name.strip_suffix(".zip").unwrap_or(name);
        let mut f = Finding::new(
            Code::RocksdbZipNameUnparsable,
            Severity::Error,
            format!("{}: a .zip whose name is no version, in a RocksDB store whose restart lists its zips", first.path),
        )
        .evidence_sized(
            &first.path,
            first.size,
            format!(
                "{}, so Spark lists {}'s *.zip files and reads each name as a version: \"{stem}\" is none \
                 (java.lang.NumberFormatException: For input string: \"{stem}\")",
                if own_zip {
                    format!("the restart loads version {version}, and Spark {} lists the zips on every load", super::spark(ctx))
                } else {
                    format!("version {version} has no {version}.zip")
                },
                store.dir
            ),
            None,
        )
        .why("Spark's RocksDB load starts from the newest snapshot zip at or below the version it loads: it lists the store folder's *.zip files (up to 4.1 only when that version has no zip of its own) and parses every name before .zip as a number. A zip that Spark did not write (a copy kept by hand, a backup) stops the load, although nothing in it is read.")
        .fix(&[
            BACKUP.to_string(),
            format!(
                "Move {} out of {} (anywhere outside the checkpoint): Spark never reads it; the restart then finds its snapshots as before.",
                bad.iter().map(|f| f.path.as_str()).collect::<Vec<_>>().join(", "),
                store.dir
            ),
        ])
        .fails(RestartStage::StateLoad, Some("CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"), "java.lang.NumberFormatException");
        for other in bad.iter().skip(1).take(MAX_EVIDENCE) {
            f = f.evidence_sized(&other.path, other.size, "another *.zip whose name is no version", None);
        }
        out.push(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::java_long;

    #[test]
    fn names_java_reads_as_a_long() {
        for ok in ["11", "0011", "+11", "-1", "9223372036854775807"] {
            assert!(java_long(ok), "{ok}");
        }
        for bad in ["old", "", "+", "11a", "1 1", "9223372036854775808", "11_ab", "backup-15"] {
            assert!(!java_long(bad), "{bad}");
        }
    }
}
