//! Entries a directory input lists but cannot give (an unreadable folder, a dangling link, a FIFO:
//! [`ArchiveError::Inaccessible`]) make the verdict unknown only when a restart reads them or may read inside
//! them. The real Spark 4.3.0 HDFS aggregation (3 partitions) with such entries beside its files.

mod common;
use common::*;

use checkpoint_core::archive::{ArchiveError, Limits, MemArchive};
use checkpoint_core::report::{Code, RestartOutcome, Severity};
use checkpoint_core::{diagnose, Context, SparkVersion};
use common::faulty::Faulty;

fn ctx() -> Context {
    Context { spark_version: Some("4.3.0".parse::<SparkVersion>().unwrap()), now_ms: Some(0), ..Default::default() }
}

/// The outcome, and the severity of the `archive-entry-unreadable` finding.
fn diagnose_blocked(blocked: &[(&str, bool)]) -> (RestartOutcome, Option<Severity>) {
    let blocked = blocked
        .iter()
        .map(|(p, folder)| {
            let reason = "a symbolic link that points nowhere".to_string();
            (p.to_string(), ArchiveError::Inaccessible { path: p.to_string(), reason, folder: *folder })
        })
        .collect();
    let mut a = Faulty::new(MemArchive::new("t", load("ss-4.3.0-agg-hdfs"), Limits::default()).unwrap());
    a.unreadable = blocked;
    let r = diagnose(&mut a, &ctx());
    let c = &r.checkpoints[0];
    let f = c.findings.iter().find(|f| f.code == Code::ArchiveEntryUnreadable).map(|f| f.severity);
    (c.restart.outcome, f)
}

#[test]
fn outside_what_a_restart_reads_it_is_a_warning() {
    for blocked in [
        &[("state/0/0/notes.txt", true)][..],
        &[("state/0/7", true)],
        &[("state/0/0/tmp", true)],
        &[("offsets/.#11", false)],
        &[("sources/0/x", true)],
    ] {
        assert_eq!(diagnose_blocked(blocked), (RestartOutcome::Resumes, Some(Severity::Warning)), "{blocked:?}");
    }
}

#[test]
fn inside_what_a_restart_reads_the_verdict_is_unknown() {
    for blocked in [
        &[("state/0/1", true)][..],
        &[("state", true)],
        &[("offsets", true)],
        &[("state/0/2/12.snapshot", false)],
        &[("commits/11", false)],
    ] {
        assert_eq!(diagnose_blocked(blocked), (RestartOutcome::Unknown, Some(Severity::Error)), "{blocked:?}");
    }
}

/// The two ways a file the input lists cannot be given (a zip entry that does not unpack; a file a folder input
/// cannot open), for `path`.
fn cannot_give(path: &str) -> [ArchiveError; 2] {
    [
        ArchiveError::Corrupt { path: path.into(), offset: 0, reason: "CRC-32 mismatch".into(), header: Some(7) },
        ArchiveError::Inaccessible { path: path.into(), reason: "Permission denied".into(), folder: false },
    ]
}

/// The fixture's checkpoint diagnosed with `path` failing to read with `error`: the report, and its codes.
fn diagnose_failing(
    fixture: &str,
    path: &str,
    error: &ArchiveError,
) -> (checkpoint_core::report::CheckpointReport, Vec<Code>) {
    let mut a = Faulty::new(MemArchive::new("t", load(fixture), Limits::default()).unwrap());
    a.on_read.push((path.into(), error.clone()));
    let c = diagnose(&mut a, &ctx()).checkpoints.remove(0);
    let codes = c.findings.iter().map(|f| f.code).collect();
    (c, codes)
}

/// An SST the restart's zip lists whose zip entry does not unpack, or that the input cannot give: the file's own
/// bytes were not seen, so it is unreadable (the verdict unknown), never a damaged state file that fails.
#[test]
fn an_sst_the_input_cannot_give_is_unreadable_not_damaged() {
    const SST: &str = "state/0/0/SSTs/000018-a78d715a-51c3-4e4e-856d-24caef1f76f2.sst";
    for error in cannot_give(SST) {
        let (c, codes) = diagnose_failing("ss-4.3.0-agg-rocksdb", SST, &error);
        assert_eq!(c.restart.outcome, RestartOutcome::Unknown, "{error:?}: {codes:?}");
        assert!(!codes.contains(&Code::StateFileCorrupt), "{error:?}: {codes:?}");
        let f = c.findings.iter().find(|f| f.code == Code::ArchiveEntryUnreadable).expect("unreadable");
        assert!(f.evidence.iter().any(|e| e.path == SST), "{:?}", f.evidence);
    }
}

/// A folder a directory input cannot open lists nothing inside it: its files are not reported missing (they may
/// well be there), and no way out says to restore them. `archive-entry-unreadable` alone names it, the verdict
/// unknown. As a non-root user with `chmod 000 state/0/1`, the input said "state/0/1/1.delta is missing" and
/// planned "Restore state/0/1/1.delta from a backup".
#[test]
fn files_inside_an_unreadable_folder_are_not_reported_missing() {
    for (folder, absent) in [
        ("state/0/1", &[Code::StateDeltaMissing, Code::StatePartitionMissing][..]),
        ("state", &[Code::StateDirEmpty, Code::StateOperatorMissing, Code::LogsGoneStateKept]),
        ("commits", &[Code::CommitsGap, Code::OffsetsGap]),
    ] {
        let files: Vec<(String, Vec<u8>)> =
            load("ss-4.3.0-agg-hdfs").into_iter().filter(|(p, _)| !p.starts_with(&format!("{folder}/"))).collect();
        let mut a = Faulty::new(MemArchive::new("t", files, Limits::default()).unwrap());
        let reason = "Permission denied (os error 13)".to_string();
        a.unreadable =
            vec![(folder.to_string(), ArchiveError::Inaccessible { path: folder.into(), reason, folder: true })];
        let r = diagnose(&mut a, &ctx());
        let c = &r.checkpoints[0];
        let codes: Vec<Code> = c.findings.iter().map(|f| f.code).collect();
        assert_eq!(c.restart.outcome, RestartOutcome::Unknown, "{folder}: {codes:?}");
        assert!(codes.contains(&Code::ArchiveEntryUnreadable), "{folder}: {codes:?}");
        assert!(!codes.iter().any(|c| absent.contains(c)), "{folder}: {codes:?}");
        let plan = serde_json::to_string(&c.restart_plan).unwrap();
        assert!(!plan.contains("Restore state/0/1/1.delta"), "{folder}: {plan}");
    }
}

/// A store's schema file whose zip entry does not unpack, or that the input cannot give: a restart reads it
/// (`StateSchemaCompatibilityChecker`, when it first loads the operator's state), so it is unreadable and the
/// verdict unknown. It was no finding at all.
#[test]
fn a_schema_file_the_input_cannot_give_is_unreadable() {
    const SCHEMA: &str = "state/0/0/_metadata/schema";
    for error in cannot_give(SCHEMA) {
        let (c, codes) = diagnose_failing("ss-4.3.0-agg-hdfs", SCHEMA, &error);
        assert_eq!(c.restart.outcome, RestartOutcome::Unknown, "{error:?}: {codes:?}");
        let f = c.findings.iter().find(|f| f.code == Code::ArchiveEntryUnreadable).expect("unreadable");
        assert_eq!(f.severity, Severity::Error, "{error:?}");
        assert!(f.evidence.iter().any(|e| e.path == SCHEMA), "{:?}", f.evidence);
    }
}
