//! `rocksdb-sst-missing`, `rocksdb-sst-wrong-size` and `rocksdb-snapshot-member-damaged`: the RocksDB `<v>.zip` a
//! restart loads opens as a zip, but an SST file its `metadata` lists is absent from `SSTs/` or of another size,
//! or a member Spark or RocksDB opens is absent, empty or unparsable.
//!
//! Mirrors Spark's `RocksDBFileManager.loadCheckpointFromDfs` (unzip `<v>.zip`, `RocksDBCheckpointMetadata
//! .readFromFile`: the `v1` line then JSON, `loadImmutableFilesFromDfs`: copy every listed SST from `SSTs/`
//! with `FileSystem.copyToLocalFile`) and `RocksDB.openDB` (RocksDB reads `CURRENT`, then the MANIFEST it
//! names; it does not read `OPTIONS-*`). `RocksDB.load` (3.5–4.1) takes the newest zip at or below the
//! version (`getLatestSnapshotVersion`) and replays the changelogs after it; it never passes over a zip that
//! fails to load. Spark 4.3's `AutoSnapshotLoader` does, and only with changelog checkpointing on. Every failure
//! is wrapped by the state store as `CANNOT_LOAD_STATE_STORE.UNCATEGORIZED`, except an empty `metadata`, which
//! has no version line (`QueryExecutionErrors.cannotReadCheckpoint`: `CANNOT_READ_CHECKPOINT`). Observed with
//! Spark 4.1.4 (tests/data/spark/rocksdb-*).

use super::state_chain::{repaired_chain, Damage, StoreAt};
use super::{new_checkpoint_step, BACKUP};
use crate::model::{RocksDbZipDamage, ZipListing};
use crate::report::{Code, Finding, RestartStage, Severity};
use crate::restart_chain::{ChainFileKind, ChainStep, LoadChain};
use crate::state::rocksdb::zip_meta::MemberFault;
use crate::SparkVersion;

/// The exception and 4.x error class Spark's load fails with: `(class on 4.x, innermost exception)`.
fn spark_error(damage: &RocksDbZipDamage, detail: &str) -> (&'static str, &'static str) {
    const UNCATEGORIZED: &str = "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED";
    match damage {
        RocksDbZipDamage::SstMissing { .. } => (UNCATEGORIZED, "java.io.FileNotFoundException"),
        // 3.5: `IllegalStateException("Copied ... expected N bytes, found M bytes")`; 4.x:
        // `QueryExecutionErrors.unexpectedFileSize` (observed with 4.1.4).
        RocksDbZipDamage::SstWrongSize { .. } => {
            ("CANNOT_LOAD_STATE_STORE.UNEXPECTED_FILE_SIZE", "java.lang.IllegalStateException")
        }
        RocksDbZipDamage::Member { member, fault } => match (member.as_str(), fault) {
            ("metadata", MemberFault::Empty) => {
                ("CANNOT_LOAD_STATE_STORE.CANNOT_READ_CHECKPOINT", "java.lang.IllegalStateException")
            }
            ("metadata", MemberFault::Missing) => (UNCATEGORIZED, "java.nio.file.NoSuchFileException"),
            ("metadata", _) if detail.contains("Cannot read RocksDB checkpoint metadata") => {
                ("CANNOT_LOAD_STATE_STORE.CANNOT_READ_CHECKPOINT", "java.lang.IllegalStateException")
            }
            ("metadata", _) if detail.contains("EOF") => {
                (UNCATEGORIZED, "com.fasterxml.jackson.core.io.JsonEOFException")
            }
            ("metadata", _) => (UNCATEGORIZED, "com.fasterxml.jackson.core.JsonParseException"),
            _ => (UNCATEGORIZED, "org.rocksdb.RocksDBException"),
        },
    }
}

/// `(error class, exception)` of the restart's failure on Spark `v`: 4.x wraps it in a `SparkException` with the
/// class; 3.5 throws the cause itself (FORMATS.md §16.1: a missing SST is a raw `FileNotFoundException`).
fn fails_with(damage: &RocksDbZipDamage, detail: &str, v: SparkVersion) -> (Option<&'static str>, &'static str) {
    let (class, root) = spark_error(damage, detail);
    if v.at_least(4, 0) {
        (Some(class), "org.apache.spark.SparkException")
    } else {
        (None, root)
    }
}

fn name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The zips of the store that can be loaded by themselves: members intact, every listed SST present.
fn intact(at: &StoreAt<'_>, l: &ZipListing) -> bool {
    l.damage.is_none() && l.ssts.iter().all(|(p, size)| at.cp.file_size(p) == Some(*size))
}

/// The newest older snapshot whose members and SSTs are all present (`None`: none, start from the empty version
/// 0), and the chain from it up to the restart version with every zip above it passed over (what Spark loads
/// once those zips are moved away).
fn older_chain<'l>(at: &StoreAt<'_>, zips: &'l [ZipListing], below: i64) -> (Option<&'l ZipListing>, LoadChain) {
    let older = zips.iter().rev().find(|l| l.version < below && intact(at, l));
    let base = older.map_or(0, |o| o.version);
    let skip: Vec<i64> = at.store.zips.keys().copied().filter(|v| *v > base && *v <= at.version).collect();
    (older, at.plan(&skip, true))
}

/// Whether `chain` starts at `base` (a zip, or changelog 1 for the empty version 0) and every file of it is
/// present and intact.
fn chain_loads(at: &StoreAt<'_>, base: i64, chain: &LoadChain) -> bool {
    chain.missing.is_none()
        && !chain.base_not_found
        && chain.steps.first().is_some_and(|s| if base == 0 { s.version == 1 } else { s.version == base })
        && chain.steps.iter().all(|s| at.damage(&s.path, s.kind).is_none())
}

/// The finding with the file the evidence shows first: the missing SST (and every zip whose metadata lists it),
/// or the damaged member of the zip.
fn blamed(
    at: &StoreAt<'_>,
    step: &ChainStep,
    damage: &RocksDbZipDamage,
    reason: &str,
    offset: Option<u64>,
    sev: Severity,
) -> Finding {
    let zips: &[ZipListing] = at.cp.rocksdb_zips.get(&at.dir).map(Vec::as_slice).unwrap_or(&[]);
    let (zip, where_) = (&step.path, &at.where_);
    match damage {
        RocksDbZipDamage::SstMissing { sst, size } | RocksDbZipDamage::SstWrongSize { sst, size, .. } => {
            let refs: Vec<&ZipListing> = zips.iter().filter(|l| l.ssts.iter().any(|(p, _)| p == sst)).collect();
            let versions: Vec<String> = refs.iter().map(|l| l.version.to_string()).collect();
            let (code, title, state) = match damage {
                RocksDbZipDamage::SstWrongSize { found, .. } => (
                    Code::RocksdbSstWrongSize,
                    format!(
                        "{sst} has {found} bytes, not the {size} the snapshot of state version {} of {where_} records",
                        step.version
                    ),
                    format!("{found} bytes on disk"),
                ),
                _ => (
                    Code::RocksdbSstMissing,
                    format!("{sst} is missing: the snapshot of state version {} of {where_} lists it", step.version),
                    "absent from SSTs/".to_string(),
                ),
            };
            let mut f = Finding::new(code, sev, title).evidence(
                sst,
                format!(
                    "{state}; listed ({size} bytes) by the metadata of the snapshot zip(s) of version(s) {}",
                    if versions.is_empty() { step.version.to_string() } else { versions.join(", ") }
                ),
                None,
            );
            for l in refs.iter().rev().take(10) {
                f = f.evidence(
                    format!("{}!/metadata", l.path),
                    format!("lists SSTs/{} ({size} bytes)", name(sst)),
                    None,
                );
            }
            f
        }
        RocksDbZipDamage::Member { member, fault } => {
            let how = match fault {
                MemberFault::Missing => "missing",
                MemberFault::Empty => "empty",
                MemberFault::Unparsable => "unparsable",
            };
            let title = format!("{member} in {zip} (state version {} of {where_}) is {how}", step.version);
            let f = Finding::new(Code::RocksdbSnapshotMemberDamaged, sev, title).evidence(
                format!("{zip}!/{member}"),
                reason.to_string(),
                offset,
            );
            match (member.starts_with("MANIFEST-"), fault) {
                (true, MemberFault::Missing) => {
                    f.evidence(format!("{zip}!/CURRENT"), format!("names {member}, which RocksDB then opens"), None)
                }
                _ => f,
            }
        }
    }
}

/// The finding for a chain zip whose damage is an SST it lists or one of its members.
pub(super) fn zip_finding(at: &StoreAt<'_>, step: &ChainStep, d: &Damage, damage: &RocksDbZipDamage) -> Finding {
    let (cp, v, version, where_) = (at.cp, at.v, at.version, &at.where_);
    let zips: &[ZipListing] = cp.rocksdb_zips.get(&at.dir).map(Vec::as_slice).unwrap_or(&[]);
    let zip = &step.path;
    let reason = cp.integrity_of(zip).and_then(|i| i.problem.as_ref()).map_or(d.detail.clone(), |p| p.reason.clone());
    let (class, exc) = fails_with(damage, &reason, v);
    let repaired = repaired_chain(at, step, true);
    let sev = if repaired.is_some() { Severity::Warning } else { Severity::Error };
    let mut f = blamed(at, step, damage, &reason, d.offset, sev);
    f = f.classes(&[spark_error(damage, &reason).0]);
    let load = match damage {
        RocksDbZipDamage::SstMissing { sst, .. } => format!(
            "Spark unzips {zip}, reads its metadata and copies every SST it lists from SSTs/ to the local RocksDB directory (RocksDBFileManager.loadCheckpointFromDfs); the copy of {} throws FileNotFoundException",
            name(sst)
        ),
        RocksDbZipDamage::SstWrongSize { sst, size, found } => format!(
            "Spark unzips {zip}, reads its metadata and copies every SST it lists from SSTs/ to the local RocksDB directory (RocksDBFileManager.loadCheckpointFromDfs), then compares each copy's size with the metadata: {} has {found} bytes, not {size}",
            name(sst)
        ),
        RocksDbZipDamage::Member { member, .. } if member == "metadata" => format!(
            "Spark unzips {zip} and reads its metadata member (RocksDBCheckpointMetadata.readFromFile: a `v1` line, then JSON) before it copies any SST: {reason}"
        ),
        RocksDbZipDamage::Member { .. } => format!(
            "Spark unzips {zip}, copies the SSTs and opens RocksDB on the directory; RocksDB reads CURRENT and the MANIFEST it names and fails: {reason}"
        ),
    };
    if let Some(alt) = repaired {
        let files: Vec<&str> = alt.steps.iter().map(|s| name(&s.path)).collect();
        let base = alt.steps.first().filter(|s| s.kind == ChainFileKind::Zip).map_or(0, |s| s.version);
        let passed = zips_above(at, base, version);
        return f
            .why(format!(
                "{load}. With spark.sql.streaming.stateStore.autoSnapshotRepair.enabled (default true since 4.2, with changelog checkpointing) Spark {v} then passes over the damaged snapshot(s) {} and rebuilds version {version} from {}. The restart goes on; the damaged snapshots stay.",
                passed.join(", "),
                files.join(", ")
            ))
            .fix(&[BACKUP.to_string(), format!("Optionally move {} out of the checkpoint (after the backup) so no reader trips on them; Spark rebuilds version {version} from {}.", passed.join(", "), files.join(", "))]);
    }
    let (older, chain) = older_chain(at, zips, step.version);
    let base = older.map_or(0, |o| o.version);
    let base_name = older.map_or("the empty version 0".to_string(), |o| o.path.clone());
    let mut why = format!(
        "A restart loads state version {version} (last committed batch + 1) of {where_} from {zip}{}. {load}, so loading fails with {}. Spark {v} does not fall back to an older snapshot by itself: RocksDB.load takes the newest zip at or below the version and replays the changelogs after it.",
        if step.version < version { format!(" and the changelogs up to version {version}") } else { String::new() },
        class.unwrap_or(exc)
    );
    let mut steps = vec![BACKUP.to_string()];
    let restore = match damage {
        RocksDbZipDamage::SstMissing { sst, size } | RocksDbZipDamage::SstWrongSize { sst, size, .. } => {
            format!("Restore {sst} ({size} bytes) from the original checkpoint or a backup; then Spark loads {zip} as it is.")
        }
        RocksDbZipDamage::Member { member, .. } => {
            format!("Restore {zip} (its {member}) from the original checkpoint or a backup.")
        }
    };
    let cls: Vec<&str> = chain.steps.iter().filter(|s| s.version > base).map(|s| name(&s.path)).collect();
    if chain_loads(at, base, &chain) {
        let moved = zips_above(at, base, version);
        why.push_str(&format!(
            " The newest older snapshot whose members and SSTs are all present is {base_name} (version {base}), and the changelogs from it up to version {version} are present."
        ));
        if let Some(o) = older {
            f = f.evidence(&o.path, format!("the newest older snapshot with every member and SST present; the changelogs {} rebuild version {version} from it", cls.join(", ")), None);
        }
        steps.push(format!(
            "Move {} (with their .crc and checksum sidecars) out of the checkpoint: every zip above version {base} up to {version} must go, since Spark takes the newest zip left at or below the version. Spark then loads {base_name} and replays {} (observed with Spark 4.1.4).",
            moved.join(", "),
            cls.join(", ")
        ));
        steps.push(format!("Or: {restore}"));
    } else {
        let gap = match &chain.missing {
            Some(m) => format!("{} is missing", m.path),
            None if chain.base_not_found => format!(
                "with checkpoint format v2 Spark follows the lineage in the changelog of version {version}, which does not reach back to it, so without the zips above it Spark finds no base snapshot (CANNOT_FIND_BASE_SNAPSHOT_CHECKPOINT, observed with Spark 4.1.4)"
            ),
            None => "a file of the chain from it is damaged".to_string(),
        };
        let off = if at.store.changelogs.is_empty() {
            " (changelog checkpointing is off: every version is a zip, no changelog exists)"
        } else {
            ""
        };
        why.push_str(&format!(
            " The newest older snapshot with all members and SSTs present is {base_name} (version {base}), but it does not rebuild version {version}: {gap}{off}. Moving zips out of the checkpoint does not help: Spark would load an older zip and fail on that."
        ));
        if let Some(o) = older {
            f = f.evidence(&o.path, format!("the newest older snapshot with every member and SST present; it cannot rebuild version {version}: {gap}"), None);
        }
        steps.push(restore);
    }
    steps.push(new_checkpoint_step(cp));
    f.why(why).fix(&steps).fails(RestartStage::StateLoad, class, exc)
}

/// The snapshot zips of the store above version `base` up to `version` (every file of each version), in
/// version order: the ones a repair passes over, or a fix moves away.
fn zips_above(at: &StoreAt<'_>, base: i64, version: i64) -> Vec<String> {
    if base >= version {
        return Vec::new(); // BTreeMap::range panics on a backwards range
    }
    at.store.zips.range(base + 1..=version).flat_map(|(_, fs)| fs.iter().map(|f| f.file.path.clone())).collect()
}

#[cfg(test)]
mod tests {
    use crate::archive::{Limits, MemArchive};
    use crate::report::{Code, RestartOutcome};
    use crate::{diagnose, Context};

    #[test]
    fn a_damaged_sst_is_blamed_not_the_zip_that_lists_it() {
        // Real Spark 4.1.4 RocksDB checkpoint; bytes 100..200 of the SST the restart's zip lists are scrambled
        // (its .crc dropped, so only the content is wrong).
        let files = crate::testutil::generated_files("stale-crc-sst-rocksdb-4.1.4");
        let ctx = Context { spark_version: Some("4.1.4".parse().expect("v")), ..Default::default() };
        let ssts: Vec<String> =
            files.iter().map(|(p, _)| p.clone()).filter(|p| p.contains("/SSTs/") && p.ends_with(".sst")).collect();
        let mut blamed = None;
        for sst in &ssts {
            let mut damaged = files.clone();
            damaged.retain(|(p, _)| !p.ends_with(&format!("{}.crc", sst.rsplit('/').next().unwrap_or(""))));
            for (p, b) in damaged.iter_mut() {
                if p == sst && b.len() > 200 {
                    b[100..200].iter_mut().for_each(|x| *x ^= 0x5a);
                }
            }
            let mut a = MemArchive::new("t", damaged, Limits::default()).expect("archive");
            let c = diagnose(&mut a, &ctx).checkpoints.remove(0);
            if c.restart.outcome == RestartOutcome::Fails {
                let f = c.findings.iter().find(|f| f.code == Code::StateFileCorrupt).expect("state-file-corrupt");
                assert_eq!(f.evidence[0].path, *sst, "{f:?}");
                assert!(f.fix.iter().any(|s| s.contains(&format!("Restore {sst}"))), "{:?}", f.fix);
                blamed = Some(sst.clone());
                break;
            }
        }
        assert!(blamed.is_some(), "no SST of the restart's zip was found damaged among {ssts:?}");
    }
}
