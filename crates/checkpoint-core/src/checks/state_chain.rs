//! The restart's state chains (`state-delta-missing`, `state-changelog-missing`, `state-base-snapshot-missing`,
//! `state-file-corrupt`, `state-file-crc-mismatch-unchecked`): for every operator, partition and store, the files
//! the one planner ([`crate::restart_chain::plan`]) says a restart loads for its state version (last committed
//! batch + 1), and whether each exists and is intact, as Spark's HDFS and RocksDB providers read them
//! (FORMATS.md §8, §11, §14, §16), with Spark 4.2+'s automatic snapshot repair.

use super::stale_sidecar::{self, spark_verifies, ReadPath, SidecarKind, Stale, CHECKSUM_CONF};
use super::state_codec::{self, ReadCodec};
use super::{conf_bool, effective_conf, legacy, spark, BACKUP};
use crate::codec::Codec;
use crate::model::{Checkpoint, RestartChain};
use crate::report::{CheckpointKind, Code, Finding, RestartStage, Severity};
use crate::restart_chain::{ChainFileKind, LoadChain, PlanInput};
use crate::state_files::StoreFiles;
use crate::{Context, SparkVersion};

/// How Spark reacts to a damaged file in a load chain.
#[derive(Debug)]
pub(super) struct Damage {
    pub(super) path: String,
    pub(super) detail: String,
    pub(super) offset: Option<u64>,
    /// Spark notices it (checksum verified, zip/stream cannot be read).
    pub(super) detected: bool,
    /// The checksum class when a Spark 4.1+ checksum mismatches.
    pub(super) checksum_failed: bool,
    /// The data file decodes completely: only a sidecar disagrees, and the sidecar is the bad file.
    pub(super) stale: Option<SidecarKind>,
    /// The data file of that sidecar: the chain file, or an SST/log file its zip lists.
    pub(super) stale_main: String,
    /// The file is compressed with this codec, not the one the restart reads it with (`state-codec-mismatch`).
    pub(super) codec: Option<Codec>,
}

/// The way Spark reads a chain file (which sidecars it verifies).
fn read_path(kind: ChainFileKind) -> ReadPath {
    if kind == ChainFileKind::Zip {
        ReadPath::Zip
    } else {
        ReadPath::StateStream
    }
}

pub(super) fn damage_of(
    cp: &Checkpoint,
    path: &str,
    kind: ChainFileKind,
    v: SparkVersion,
    sums_on: bool,
    read: Option<&ReadCodec>,
) -> Option<Damage> {
    // The codec's header is the first thing Spark's reader checks: a file in another codec fails there, whatever
    // else is wrong with it.
    if let (Some(codec), Some(read)) = (state_codec::mismatch(cp, path, read), read) {
        return Some(Damage {
            path: path.to_string(),
            detail: state_codec::detail(codec, read),
            offset: Some(0),
            detected: true,
            checksum_failed: false,
            stale: None,
            stale_main: path.to_string(),
            codec: Some(codec),
        });
    }
    let integ = cp.integrity_of(path).and_then(|i| i.problem.clone());
    let crc_bad = cp.crc_of(path).and_then(|c| c.verified.clone()).and_then(|r| r.err());
    let sum_bad = cp.checksum_of(path).and_then(|c| c.verified.clone()).and_then(|r| r.err());
    // A zip's SST and log files are copied through Hadoop's FileSystem after it, which verifies their .crc.
    let listed_bad = cp.integrity_of(path).and_then(|i| {
        i.listed_files.iter().find(|f| cp.crc_of(f).is_some_and(|c| matches!(c.verified, Some(Err(_))))).cloned()
    });
    if integ.is_none() && crc_bad.is_none() && sum_bad.is_none() && listed_bad.is_none() {
        return None;
    }
    let rocks = matches!(kind, ChainFileKind::Zip | ChainFileKind::Changelog);
    let (rp, verifies) = (read_path(kind), |k| spark_verifies(k, read_path(kind), v, sums_on));
    let checksum_failed = sum_bad.is_some() && verifies(SidecarKind::Spark);
    // Only a RocksDB zip is read through Hadoop's FileSystem, which verifies the .crc (SSTs too); the HDFS
    // provider's files and changelogs are read through FileContext, which skips it (fixtures
    // broken-ss-3.5.9-corrupt-state-file, tests/data/spark/stale-crc-delta-hdfs-4.1.4).
    // Spark 3.x decompressed lz4 state files with lz4-java's fast decompressor, which did not notice a
    // damaged match offset inside an intact block (fixture broken-ss-3.5.9-corrupt-state-file loaded it).
    let legacy_blind = !v.at_least(4, 0) && cp.integrity_of(path).is_some_and(|i| i.payload_corrupt) && !rocks;
    let crc_checked = (crc_bad.is_some() || listed_bad.is_some()) && rp == ReadPath::Zip;
    let detected = (integ.is_some() && !legacy_blind) || checksum_failed || crc_checked;
    // A file a limit of this inspector kept from being read is not known to decode (`file-not-verified`).
    let decodes =
        cp.integrity_of(path).is_some_and(|i| i.problem.is_none()) && !cp.not_verified.iter().any(|n| n.path == path);
    // A verified sidecar decides what Spark raises; else the Spark checksum file is named first.
    let stale = decodes.then(|| {
        if crc_checked || (crc_bad.is_some() && !checksum_failed && sum_bad.is_none()) {
            SidecarKind::Hadoop
        } else {
            SidecarKind::Spark
        }
    });
    let mut parts = Vec::new();
    let mut offset = None;
    if let Some(p) = &integ {
        // The file at fault may be another than the chain step (an SST a zip lists, an entry of the zip).
        parts.push(if p.path != path { format!("{}: {}", p.path, p.reason) } else { p.reason.clone() });
        offset = p.offset;
    }
    if let Some(c) = &crc_bad {
        parts.push(format!("Hadoop .crc sidecar: {c}"));
        if offset.is_none() {
            if let crate::hadoop::CrcError::Mismatch { offset: o, .. } = c {
                offset = Some(*o);
            }
        }
    }
    if let Some(s) = &sum_bad {
        parts.push(format!("Spark checksum file: {s}"));
    }
    let stale_main = match (&crc_bad, &listed_bad) {
        (None, Some(f)) => {
            parts.push(format!("the Hadoop .crc sidecar of {f}, which the zip lists, does not match it"));
            f.clone()
        }
        _ => path.to_string(),
    };
    Some(Damage {
        path: path.to_string(),
        detail: parts.join("; "),
        offset,
        detected,
        checksum_failed,
        stale,
        stale_main,
        codec: None,
    })
}

/// The specific 4.x error classes the state readers report for a damaged file that Spark raises as such
/// (record sizes of `.delta`/`.snapshot`, the changelog version); others are reported per [`load_error`].
fn specific_class(c: &str) -> Option<&'static str> {
    Some(match c {
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_KEY_SIZE" => {
            "CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_KEY_SIZE"
        }
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_SNAPSHOT_FILE_KEY_SIZE" => {
            "CANNOT_LOAD_STATE_STORE.CANNOT_READ_SNAPSHOT_FILE_KEY_SIZE"
        }
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_SNAPSHOT_FILE_VALUE_SIZE" => {
            "CANNOT_LOAD_STATE_STORE.CANNOT_READ_SNAPSHOT_FILE_VALUE_SIZE"
        }
        "CANNOT_LOAD_STATE_STORE.INVALID_CHANGE_LOG_READER_VERSION" => {
            "CANNOT_LOAD_STATE_STORE.INVALID_CHANGE_LOG_READER_VERSION"
        }
        _ => return None,
    })
}

/// The error class and exception for a state load failure of the given kind.
pub(super) fn load_error(kind: &str, v: SparkVersion, ckpt_v2: bool) -> (Option<&'static str>, &'static str) {
    if !v.at_least(4, 0) {
        return (None, "org.apache.spark.SparkException");
    }
    let c = match kind {
        "delta-missing" => "CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS",
        "changelog-missing" => "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE",
        "base-not-found" => "CANNOT_LOAD_STATE_STORE.CANNOT_FIND_BASE_SNAPSHOT_CHECKPOINT",
        // Spark 4.0.x with checkpoint format v2 reported a damaged zip as unreadable checkpoint metadata
        // (fixture broken-ss-4.0.5-corrupt-state-file-agg-rocksdb-ckptv2).
        "zip-corrupt" if ckpt_v2 && !v.at_least(4, 1) => "CANNOT_LOAD_STATE_STORE.CANNOT_READ_CHECKPOINT",
        _ => "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED",
    };
    (Some(c), "org.apache.spark.SparkException")
}

/// What one store's chain gives: a finding, a stale sidecar of an intact file, or a damaged file Spark loads
/// without noticing.
enum Outcome {
    Finding(Finding),
    Stale(Finding),
    Silent(String, String),
    /// The first file of the chain is in another codec than the restart reads (one finding for all stores).
    Codec(state_codec::Mismatched),
}

/// At most this many stale sidecars of a restart's chains are reported, one finding each.
const MAX_STALE: usize = 20;

/// One store a restart loads, with what planning its chain needs.
pub(super) struct StoreAt<'a> {
    pub(super) cp: &'a Checkpoint,
    pub(super) v: SparkVersion,
    pub(super) version: i64,
    pub(super) dir: String,
    /// `operator 0, partition 3[, store left-keyToNumValues]`.
    pub(super) where_: String,
    pub(super) store: &'a StoreFiles,
    /// The restart chain the read stage planned, with its inputs.
    rc: &'a RestartChain,
    /// Spark 4.2+'s automatic snapshot repair applies.
    pub(super) repair: bool,
    /// Spark 4.1+ checkpoint file checksums are verified (`spark.sql.streaming.checkpoint.fileChecksum.enabled`).
    pub(super) sums_on: bool,
    /// The codec the restart decompresses state files with, when known.
    read: Option<&'a ReadCodec>,
}

impl StoreAt<'_> {
    /// The damage of a chain file, as this restart's Spark reads it.
    pub(super) fn damage(&self, path: &str, kind: ChainFileKind) -> Option<Damage> {
        damage_of(self.cp, path, kind, self.v, self.sums_on, self.read)
    }
}

impl StoreAt<'_> {
    /// The chain for the store's version, skipping the base snapshots of `skip` (repair): the stored restart
    /// chain, or a what-if chain planned from its inputs.
    pub(super) fn plan(&self, skip: &[i64], with_lineage: bool) -> LoadChain {
        if skip.is_empty() && with_lineage {
            self.rc.chain.clone()
        } else {
            self.rc.replan(self.store, skip, with_lineage)
        }
    }
}

/// For every operator, partition and store: can the restart load its state version?
pub fn check_chains(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming || cp.state.operators.is_empty() {
        return vec![];
    }
    let Some(version) = cp.restart_version() else {
        return vec![];
    };
    let v = spark(ctx);
    let conf = effective_conf(cp, ctx);
    let repair = PlanInput { release: v, conf: Some(&conf), ..PlanInput::new("") }.repairs_snapshots();
    let sums_on = conf_bool(&conf, CHECKSUM_CONF, true);
    let read = state_codec::read_codec(cp, v);
    let mut codec_mismatch = Vec::new();
    let mut out = Vec::new();
    let mut silent: Vec<(String, String)> = Vec::new();
    let mut stale = 0usize;
    for ((op, part, name), rc) in &cp.restart_chains {
        let empty = StoreFiles { dir: rc.dir.clone(), ..Default::default() };
        let store = cp.store_files(&(*op, *part, name.clone())).unwrap_or(&empty);
        let where_ = format!(
            "operator {op}, partition {part}{}",
            if name == "default" { String::new() } else { format!(", store {name}") }
        );
        let dir = rc.dir.clone();
        let at = StoreAt { cp, v, version, dir, where_, store, rc, repair, sums_on, read: read.as_ref() };
        for o in chain_outcome(&at) {
            match o {
                Outcome::Finding(f) => out.push(f),
                Outcome::Stale(f) if stale < MAX_STALE => {
                    stale += 1;
                    out.push(f);
                }
                Outcome::Stale(_) => stale += 1,
                Outcome::Silent(p, d) => silent.push((p, d)),
                Outcome::Codec(m) => codec_mismatch.push(m),
            }
        }
    }
    if let (Some(read), false) = (&read, codec_mismatch.is_empty()) {
        let (class, exc) = load_error("stream-corrupt", v, false);
        out.push(state_codec::finding(cp, v, read, &codec_mismatch, class, exc));
    }
    if !silent.is_empty() {
        let mut f = Finding::new(
            Code::StateFileCrcMismatchUnchecked,
            Severity::Warning,
            format!("{} state file(s) a restart loads do not match their Hadoop .crc; Spark {v} loads them without checking", silent.len()),
        )
        .why("The HDFS state store provider reads .delta/.snapshot files without failing on a Hadoop .crc mismatch (observed with Spark 3.5.9): if the damage hits compressed literal bytes the state is loaded silently altered, otherwise decompression fails. Spark 4.1+ checksum files (when present) and 4.3's repair catch more.")
        .fix(&[BACKUP.to_string(), "Restore the files from a backup, or move the damaged snapshot away if older snapshots and deltas cover its version.".to_string()]);
        for (p, d) in silent.iter().take(10) {
            f = f.evidence(p, d, None);
        }
        out.push(f);
    }
    let _ = legacy(ctx);
    out
}

/// The findings for one store's chain: a missing file, no base snapshot, or the first damaged file (after the
/// stale sidecars of intact files before it).
fn chain_outcome(at: &StoreAt<'_>) -> Vec<Outcome> {
    let (cp, v, version, dir, where_) = (at.cp, at.v, at.version, &at.dir, &at.where_);
    let ckpt_v2 = at.rc.unique_id.is_some();
    let chain = at.plan(&[], true);
    if let Some(m) = &chain.missing {
        let kind = if m.kind == ChainFileKind::Delta { "delta-missing" } else { "changelog-missing" };
        let (class, exc) = load_error(kind, v, ckpt_v2);
        let have: Vec<String> =
            chain.steps.iter().map(|s| s.path.rsplit('/').next().unwrap_or("").to_string()).collect();
        let msg = if m.kind == ChainFileKind::Delta {
            format!("Error reading delta file {} of HDFSStateStoreProvider[...]: {} does not exist", m.path, m.path)
        } else {
            format!("Error reading streaming state file of {} does not exist.", m.path)
        };
        return vec![Outcome::Finding(
            Finding::new(
                if m.kind == ChainFileKind::Delta { Code::StateDeltaMissing } else { Code::StateChangelogMissing },
                Severity::Error,
                format!("State version {version} of {where_} cannot be rebuilt: {} is missing", m.path),
            )
            .classes(&[class.unwrap_or(if m.kind == ChainFileKind::Delta { "CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS" } else { "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE" })])
            .evidence(&m.path, format!("absent; the restart loads state version {version} = {}", if have.is_empty() { "from nothing (no snapshot), so it needs every file from version 1".to_string() } else { format!("{} then the files up to {version}", have.join(", ")) }), None)
            .why(format!(
                "A restart runs batch {version} and loads state version {version} (last committed batch + 1) in every partition. {} Spark fails with: {msg}",
                if m.kind == ChainFileKind::Delta {
                    "The HDFS provider uses the newest snapshot at or below that version and replays every .delta after it; a missing delta is fatal."
                } else {
                    "The RocksDB provider uses the newest .zip at or below that version and replays every .changelog after it; a missing changelog is fatal."
                }
            ))
            .fix(&[
                BACKUP.to_string(),
                format!("Restore {} (and the rest of {dir}) from the original checkpoint or a backup.", m.path),
                super::new_checkpoint_step(cp),
            ])
            .fails(RestartStage::StateLoad, class, exc),
        )];
    }
    if chain.base_not_found {
        let (class, exc, inner) = crate::restart_chain::lineage_break_error(v);
        let mut classes = vec![class];
        classes.extend(inner);
        let lineage: Vec<String> =
            chain.steps.iter().map(|s| s.path.rsplit('/').next().unwrap_or("").to_string()).collect();
        let lowest = chain.steps.first().map(|s| s.version).unwrap_or(version);
        return vec![Outcome::Finding(
            Finding::new(Code::StateBaseSnapshotMissing, Severity::Error, format!("State version {version} of {where_} has no base snapshot (checkpoint format v2)"))
                .classes(&classes)
                .evidence(chain.steps.last().map(|s| s.path.clone()).unwrap_or(dir.clone()), format!("changelogs {} are present but no zip at or below version {lowest} continues the chain (version {} has neither a zip nor a changelog)", lineage.join(", "), lowest - 1), None)
                .why(format!("With state checkpoint format v2 every version has a unique id; Spark follows the lineage recorded in the changelog of the version it loads back to a snapshot zip of the same lineage. Here the snapshot zips of that lineage are gone and version {} is missing, so the chain cannot be rebuilt. How Spark {v} reports it: {}.", lowest - 1, match (v.at_least(4, 1), v.at_least(4, 2), v.at_least(4, 3)) {
                    (_, _, true) => "it starts from the newest older zip and stops at the missing changelog",
                    (_, true, _) => "its automatic snapshot repair tries older snapshots and gives up (the lineage is incomplete)",
                    (true, _, _) => "it cannot find a base snapshot for the lineage",
                    _ => "it falls back to a snapshot whose checkpoint metadata is not of the v2 format",
                }))
                .fix(&[BACKUP.to_string(), format!("Restore the deleted .zip files (and changelogs) of {dir} from the original checkpoint."), super::new_checkpoint_step(cp)])
                .fails(RestartStage::StateLoad, Some(class), exc),
        )];
    }
    if let Some(f) = column_families_without_snapshot(at, &chain) {
        return vec![Outcome::Finding(f)];
    }
    // Damaged files in the chain: the first one Spark notices decides; a stale sidecar Spark does not
    // verify is reported and the chain goes on.
    let mut out = Vec::new();
    for step in &chain.steps {
        let Some(d) = at.damage(&step.path, step.kind) else { continue };
        if let Some(kind) = d.stale {
            if let Some(f) = stale_chain_finding(at, step, &d, kind) {
                out.push(Outcome::Stale(f));
            }
            if d.detected {
                return out;
            }
            continue;
        }
        // A file in another codec: one finding for the checkpoint, unless 4.2+'s snapshot repair finds older
        // files in the codec Spark reads.
        if let Some(codec) = d.codec {
            let is_base = matches!(step.kind, ChainFileKind::Snapshot | ChainFileKind::Zip);
            if repaired_chain(at, step, is_base).is_none() {
                let m = state_codec::Mismatched { path: d.path.clone(), where_: where_.clone(), codec };
                out.push(Outcome::Codec(m));
                return out;
            }
        }
        // A zip that opens as a zip: the SST or member at fault has its own finding (unless a checksum fails first).
        let zip = at.cp.integrity_of(&d.path).and_then(|i| i.rocksdb.as_ref()).filter(|_| !d.checksum_failed);
        out.push(if let (true, Some(z)) = (d.detected, zip) {
            Outcome::Finding(super::rocksdb_zip::zip_finding(at, step, &d, z))
        } else if d.detected {
            Outcome::Finding(damaged_finding(at, step, &d))
        } else {
            Outcome::Silent(d.path.clone(), d.detail.clone())
        });
        return out;
    }
    out
}

/// The operator id of a store folder `[<root>/]state/<op>/<partition>[/<store>]`.
fn operator_of(dir: &str) -> Option<i64> {
    let rest = dir.rsplit_once("state/").map(|(_, r)| r)?;
    rest.split('/').next()?.parse().ok()
}

/// `state-base-snapshot-missing` for a transformWithState store (its operator keeps state schema v3 files: its
/// state variables are RocksDB column families) whose chain starts from nothing: changelogs only, no snapshot
/// zip at or below the version loaded. The mapping of the column families' ids, which every changelog record's
/// key starts with, is kept in a snapshot zip's metadata (transformWithState writes a zip on its first commit);
/// replayed onto an empty store the records name no known column family, and the load fails (real Spark 4.1.4
/// and 4.3.0, a newcomer's restarts with `state/0/1/1.zip` deleted and changelogs 1..3 kept:
/// `CANNOT_LOAD_STATE_STORE.UNCATEGORIZED` caused by a NullPointerException in `RocksDB.getColumnFamilyInfo`
/// during `replayChangelog`; an aggregation's default column family replays from nothing and resumed).
fn column_families_without_snapshot(at: &StoreAt<'_>, chain: &crate::restart_chain::LoadChain) -> Option<Finding> {
    let op = operator_of(&at.dir)?;
    let tws = at.cp.state.operators.get(&op).is_some_and(|o| !o.schema_v3.is_empty());
    let from_nothing = !chain.steps.is_empty() && chain.steps.iter().all(|s| s.kind == ChainFileKind::Changelog);
    if !tws || !from_nothing || at.version < 1 || !at.v.at_least(4, 0) {
        return None;
    }
    let (v, version, where_, dir) = (at.v, at.version, &at.where_, &at.dir);
    let (class, exc) = ("CANNOT_LOAD_STATE_STORE.UNCATEGORIZED", "org.apache.spark.SparkException");
    let first = &chain.steps[0];
    Some(
        Finding::new(
            Code::StateBaseSnapshotMissing,
            Severity::Error,
            format!("State version {version} of {where_} has no snapshot zip: its transformWithState column families cannot be replayed from changelogs alone"),
        )
        .classes(&[class])
        .evidence(&first.path, format!("the chain of version {version} starts from nothing: {} changelog(s) from version {}, no .zip at or below {version} in {dir}", chain.steps.len(), first.version), None)
        .why(format!(
            "A transformWithState operator keeps each state variable (and its timers) in a RocksDB column family; every changelog record's key starts with the column family's id, and the mapping of ids to names is kept in a snapshot zip's metadata (the operator writes a zip with its first commit). The restart loads state version {version}: with no zip at or below it, Spark {v} starts from an empty store, which knows no column family, and replaying the changelogs fails ({class}, caused by a NullPointerException in RocksDB.getColumnFamilyInfo)."
        ))
        .fix(&[
            BACKUP.to_string(),
            format!("Restore the deleted .zip files of {dir} (the lowest one is enough for the changelogs after it) from the original checkpoint or a backup."),
            super::new_checkpoint_step(at.cp),
        ])
        .fails(RestartStage::StateLoad, Some(class), exc),
    )
}

/// `stale-checksum-sidecar` for a chain file that decodes: the sidecar is blamed, and the restart fails only
/// when Spark verifies that sidecar on this read (unless 4.2+'s snapshot repair rebuilds the version).
fn stale_chain_finding(
    at: &StoreAt<'_>,
    step: &crate::restart_chain::ChainStep,
    d: &Damage,
    kind: SidecarKind,
) -> Option<Finding> {
    let (cp, v) = (at.cp, at.v);
    let integ = cp.integrity_of(&d.path)?;
    let decoded = match (step.kind, integ.records, integ.num_keys) {
        (ChainFileKind::Zip, _, _) if d.stale_main != d.path => format!(
            "{} lists it with its size ({} bytes), and the zip and the files it lists check out",
            d.path,
            cp.file_size(&d.stale_main).unwrap_or(0)
        ),
        (ChainFileKind::Zip, _, keys) => format!(
            "the zip opens, its metadata parses{} and the SST files it lists are there with their sizes",
            keys.map(|k| format!(" ({k} keys)")).unwrap_or_default()
        ),
        (ChainFileKind::Changelog, Some((n, _)), _) => {
            format!("{n} changelog record(s), the compression frames and the end marker intact")
        }
        (_, Some((puts, removals)), _) => format!(
            "{puts} put(s) and {removals} removal(s), every compressed block (with its checksum) and the end-of-file marker intact"
        ),
        _ => "the compression frames and records read to the end".to_string(),
    };
    let is_base = matches!(step.kind, ChainFileKind::Snapshot | ChainFileKind::Zip);
    let repaired_from = if d.detected {
        repaired_chain(at, step, is_base).map(|alt| {
            alt.steps.iter().map(|s| s.path.rsplit('/').next().unwrap_or("").to_string()).collect::<Vec<_>>().join(", ")
        })
    } else {
        None
    };
    let fails = d.detected.then(|| {
        let (class, exc) = load_error("stream-corrupt", v, false);
        (class, exc)
    });
    let s = Stale {
        main: &d.stale_main,
        kind,
        read: read_path(step.kind),
        decoded,
        role: format!("state version {} of {}", step.version, at.where_),
        fails,
        repaired_from,
    };
    stale_sidecar::stale_finding(cp, v, &s)
}

/// With 4.2+'s snapshot repair: the chain Spark rebuilds the version from when the damaged base snapshot (and
/// up to three more damaged ones) is skipped; `None` when repair is off or nothing intact is left.
pub(super) fn repaired_chain(
    at: &StoreAt<'_>,
    step: &crate::restart_chain::ChainStep,
    is_base: bool,
) -> Option<LoadChain> {
    let repair = at.repair;
    if repair && is_base {
        let mut skip = vec![step.version];
        let mut result = None;
        for _ in 0..4 {
            let alt = at.plan(&skip, true);
            if alt.missing.is_some() || alt.base_not_found {
                break;
            }
            match alt.steps.iter().find_map(|s| at.damage(&s.path, s.kind).filter(|d| d.detected).map(|_| s.clone())) {
                Some(s) if matches!(s.kind, ChainFileKind::Snapshot | ChainFileKind::Zip) => skip.push(s.version),
                Some(_) => break,
                None => {
                    result = Some(alt);
                    break;
                }
            }
        }
        result
    } else {
        None
    }
}

/// `state-file-corrupt`: the damaged file a restart reads first, and the way out (repair, move it, restore it).
fn damaged_finding(at: &StoreAt<'_>, step: &crate::restart_chain::ChainStep, d: &Damage) -> Finding {
    let (cp, v, version, where_) = (at.cp, at.v, at.version, &at.where_);
    let ckpt_v2 = at.rc.unique_id.is_some();
    let is_base = matches!(step.kind, ChainFileKind::Snapshot | ChainFileKind::Zip);
    let repaired = repaired_chain(at, step, is_base);
    let kind = if step.kind == ChainFileKind::Zip { "zip-corrupt" } else { "stream-corrupt" };
    let (mut class, exc) = load_error(kind, v, ckpt_v2);
    // A specific record-size error class (4.x) when the record stream itself is damaged and
    // no checksum check failed first.
    let reader_class = cp.integrity_of(&d.path).and_then(|i| i.error_class.as_deref());
    // An SST the zip lists that does not decode is the file at fault (the zip itself reads).
    let fault = cp
        .integrity_of(&d.path)
        .and_then(|i| i.problem.as_ref())
        .map(|p| p.path.clone())
        .filter(|p| p.contains("/SSTs/"))
        .unwrap_or_else(|| d.path.clone());
    if v.at_least(4, 0) && !d.checksum_failed {
        if let Some(c) = reader_class.and_then(specific_class) {
            class = Some(c);
        }
    }
    let mut classes: Vec<&str> = vec!["CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"];
    if d.checksum_failed {
        classes.push("CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED");
    }
    if class.is_some_and(|c| !classes.contains(&c)) {
        classes.insert(0, class.unwrap_or_default());
    }
    if repaired.is_some() {
        classes.push("CANNOT_LOAD_STATE_STORE.AUTO_SNAPSHOT_REPAIR_FAILED");
    }
    // What the state reader names for a zip's SST (missing, wrong size): a possible cause class.
    if let Some(c) = reader_class.filter(|c| v.at_least(4, 0) && !classes.contains(c)) {
        if c.ends_with("UNEXPECTED_FILE_SIZE") || c.ends_with("CANNOT_READ_STREAMING_STATE_FILE") {
            classes.push(c);
        }
    }
    let mut f = Finding::new(
        Code::StateFileCorrupt,
        if repaired.is_some() { Severity::Warning } else { Severity::Error },
        if fault != d.path {
            format!("{fault}, listed by {} (state version {} of {where_}), is damaged", d.path, step.version)
        } else {
            format!("{} (state version {} of {where_}) is damaged", d.path, step.version)
        },
    )
    .classes(&classes)
    .evidence(&fault, d.detail.clone(), d.offset);
    if let Some(alt) = &repaired {
        let files: Vec<String> =
            alt.steps.iter().map(|s| s.path.rsplit('/').next().unwrap_or("").to_string()).collect();
        f = f
            .why(format!(
                "Spark {v} fails to load this snapshot, and with spark.sql.streaming.stateStore.autoSnapshotRepair.enabled (default true since 4.2) it rebuilds version {version} from an older snapshot and the files after it ({}), which are intact. The restart goes on; the damaged file stays.",
                files.join(", ")
            ))
            .fix(&[BACKUP.to_string(), format!("Optionally delete {} (after a backup) so no reader trips on it; Spark rebuilds it from {}.", d.path, files.join(", "))]);
    } else {
        let alt = at.plan(&[step.version], false);
        let alt_ok = is_base
            && alt.missing.is_none()
            && !alt.base_not_found
            && alt.steps.iter().all(|s| at.damage(&s.path, s.kind).is_none());
        f = f
            .why(format!(
                "A restart loads state version {version} and reads {} first; {}.{}",
                d.path,
                if d.checksum_failed {
                    format!("Spark {v} verifies the Spark checksum file and fails (CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED, reported as CANNOT_LOAD_STATE_STORE.UNCATEGORIZED)")
                } else {
                    format!("the file cannot be read ({}), so loading fails", d.detail)
                },
                match (v.at_least(4, 2) && is_base, at.repair) {
                    (true, false) => " Spark's automatic snapshot repair (4.2+) is disabled in this session.",
                    (true, true) => " Spark's automatic snapshot repair (4.2+) finds no older snapshot whose chain to this version is intact, so it cannot help.",
                    _ => "",
                }
            ))
            .fix(&{
                let mut steps = vec![BACKUP.to_string()];
                if alt_ok {
                    let files: Vec<String> = alt.steps.iter().map(|s| s.path.rsplit('/').next().unwrap_or("").to_string()).collect();
                    steps.push(format!("Move {} out of the checkpoint: the older files {} rebuild version {version} without it.", d.path, files.join(", ")));
                    if v.at_least(4, 2) {
                        steps.push(format!("Or restart on Spark {v} with spark.sql.streaming.stateStore.autoSnapshotRepair.enabled=true (the default since 4.2)."));
                    }
                } else {
                    steps.push(format!("Restore {fault} from the original checkpoint or a backup."));
                }
                steps.push(super::new_checkpoint_step(cp));
                steps
            })
            .fails(RestartStage::StateLoad, class, exc);
    }
    f
}

#[cfg(test)]
mod tests {
    use crate::archive::{Archive, Limits, MemArchive};
    use crate::report::{Code, RestartOutcome};

    /// `ss-4.3.0-tws-pandas` (a real transformWithStateInPandas, RocksDB, zips 1..=4 per partition) with
    /// partition 0's zips replaced by changelogs 1..=4 (only the chain's file names matter here), and its
    /// `_stateSchema` kept (`tws`) or removed.
    fn changelogs_only(tws: bool) -> crate::report::CheckpointReport {
        let mut z = crate::testutil::open_fixture("ss-4.3.0-tws-pandas");
        let paths: Vec<String> = z.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
        let mut files: Vec<(String, Vec<u8>)> = paths
            .into_iter()
            .filter(|p| !(p.starts_with("state/0/0/") && p.contains(".zip")))
            .filter(|p| tws || !p.starts_with("state/0/_stateSchema/"))
            .map(|p| {
                let b = z.read(&p, 1 << 26).expect("entry reads");
                (p, b)
            })
            .collect();
        for v in 1..=4 {
            files.push((format!("state/0/0/{v}.changelog"), Vec::new()));
        }
        let mut a = MemArchive::new("t.zip", files, Limits::default()).expect("archive");
        let ctx = crate::Context { spark_version: Some("4.3.0".parse().unwrap()), ..Default::default() };
        crate::diagnose(&mut a, &ctx).checkpoints.remove(0)
    }

    /// A transformWithState store whose restart chain starts from nothing fails: its column families' mapping
    /// is in a snapshot zip (a newcomer's real Spark 4.1.4 and 4.3.0 restarts with a partition's `1.zip`
    /// deleted: CANNOT_LOAD_STATE_STORE.UNCATEGORIZED). A store without schema v3 files is not judged so.
    #[test]
    fn a_transform_with_state_store_without_any_zip_cannot_replay_its_changelogs() {
        let r = changelogs_only(true);
        assert_eq!(r.restart.outcome, RestartOutcome::Fails);
        assert_eq!(r.restart.error_class.as_deref(), Some("CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"));
        let f = r.findings.iter().find(|f| f.code == Code::StateBaseSnapshotMissing).expect("the finding");
        assert!(f.title.contains("operator 0, partition 0") && f.title.contains("column families"), "{}", f.title);
        assert!(f.evidence[0].path.ends_with("state/0/0/1.changelog"), "{:?}", f.evidence);
        let r = changelogs_only(false);
        assert!(!r
            .findings
            .iter()
            .any(|f| f.code == Code::StateBaseSnapshotMissing && f.title.contains("column families")));
    }
}
