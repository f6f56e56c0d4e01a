//! `RocksDBStateStoreProvider` (FORMATS.md §11, §12, §14): rebuilds a state store's raw key → value map at a
//! version exactly as Spark's `RocksDB.load` does, from the files of `state/<op>/<part>/[<store>/]`.
//!
//! * `<v>.zip` ([`zip_meta`]) lists the SST files of version `v` under `SSTs/`; their content is read with our own
//!   block-based table reader ([`sst`]).
//! * With changelog checkpointing, `<v>.changelog` files ([`changelog`]) hold each version's changes: Spark takes
//!   the newest `<s>.zip` with `s <= v` (or an empty store when there is none) and replays
//!   `<s+1>.changelog ..= <v>.changelog`.
//! * Checkpoint format v2 (4.0+) names files `<v>_<uniqueId>.zip/.changelog`; the commit log's `stateUniqueIds`
//!   says which unique id version `v` has, and the v3/v4 changelog's lineage leads back to its base snapshot
//!   (`RocksDB.loadWithCheckpointId`).
//!
//! Keys and values are returned exactly as RocksDB holds them: for virtual column families (transformWithState)
//! a 2-byte little-endian column-family id, then the encoding version byte `0x00`, then the UnsafeRow; values
//! may carry 4.3 row checksums ([`encoding`] takes them apart). [`manifest`] cross-checks RocksDB's MANIFEST with
//! Spark's metadata; [`state_view`] plugs the provider into [`crate::state::read_state`].

pub mod avro;
pub mod changelog;
pub mod encoding;
mod listing;
mod load;
pub mod manifest;
mod plan;
pub mod sst;
mod sst_block;
mod sst_footer;
pub mod state_view;
mod tws;
pub use listing::immutable_files;
use listing::{list_store, listing_of, StoreListing};
pub mod zip_meta;

pub use load::*;
pub use plan::*;

#[cfg(test)]
mod sst_writer_test;
#[cfg(test)]
mod tws_tests;

use crate::archive::{Archive, ArchiveError};
use crate::restart_chain::ChainFileKind;
use std::collections::BTreeMap;

/// The delimiter of RocksDB's `StringAppendOperator`, the merge operator Spark configures.
pub const MERGE_DELIMITER: u8 = b',';

/// Bounds applied while loading one store version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadLimits {
    /// Largest file read from the archive (zip, SST, changelog), in bytes.
    pub max_file_bytes: u64,
    /// Largest decompressed changelog, in bytes.
    pub max_changelog_bytes: usize,
    /// Largest number of changelog records per file.
    pub max_records: usize,
    /// Limits for each SST.
    pub sst: sst::SstLimits,
    /// Limits for each zip.
    pub zip: zip_meta::ZipLimits,
}

impl Default for LoadLimits {
    fn default() -> Self {
        LoadLimits {
            max_file_bytes: 256 << 20,
            max_changelog_bytes: 256 << 20,
            max_records: 10_000_000,
            sst: sst::SstLimits::default(),
            zip: zip_meta::ZipLimits::default(),
        }
    }
}

/// Options of [`load_store`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoadOptions {
    /// Checkpoint format v2: the unique id of the version to load (from `commits/<batch>`'s `stateUniqueIds`).
    /// When `None` and the store uses unique-id file names, the only candidate for the version is taken.
    pub unique_id: Option<String>,
    /// Limits; `LoadLimits::default()` when built with `Default`.
    pub limits: Option<LoadLimits>,
    /// Spark 4.3's auto snapshot repair (`spark.sql.streaming.stateStore.autoSnapshotRepair.enabled`, on by
    /// default in 4.3): when the chosen snapshot cannot be read, fall back to an older one (or the empty store)
    /// and replay more changelogs. Off: the first unreadable snapshot is the error.
    pub auto_snapshot_repair: bool,
    /// With auto snapshot repair: the most versions an older snapshot may lie below the version loaded
    /// (`spark.sql.streaming.stateStore.autoSnapshotRepair.maxChangeFileReplay`, `AutoSnapshotLoader`); `None` =
    /// Spark's default, [`DEFAULT_MAX_CHANGE_FILE_REPLAY`].
    pub max_change_file_replay: Option<i64>,
}

/// Default of `spark.sql.streaming.stateStore.autoSnapshotRepair.maxChangeFileReplay`.
pub const DEFAULT_MAX_CHANGE_FILE_REPLAY: i64 = 500;

/// Why a store version cannot be rebuilt: the file (path inside the archive), the byte offset when it is about
/// bytes, and the Spark error class the same failure gives on restart when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RocksDbError {
    /// Path of the file inside the archive (for a problem inside a `<v>.zip`, `<zip path>!/<entry>`).
    pub path: String,
    /// Byte offset in that file (for changelogs: in the decompressed stream unless the codec failed).
    pub offset: Option<u64>,
    /// What is wrong.
    pub message: String,
    /// Spark's error class for this failure, e.g. `CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE`.
    pub error_class: Option<&'static str>,
    /// The input could not give the file (its zip entry does not unpack, it cannot be read, a limit of this
    /// inspector): its content was not seen, so this is no damage of the checkpoint.
    pub unreadable: Option<Box<ArchiveError>>,
    /// A limit of this inspector stopped reading the file (an SST over [`sst::SstLimits`], a block compression
    /// it does not decode): not verified, no damage.
    pub limit: bool,
}

impl std::fmt::Display for RocksDbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.path)?;
        if let Some(o) = self.offset {
            write!(f, " at byte {o}")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(c) = self.error_class {
            write!(f, " [{c}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for RocksDbError {}

fn rerr(path: &str, offset: Option<u64>, message: impl Into<String>, class: Option<&'static str>) -> RocksDbError {
    RocksDbError {
        path: path.to_string(),
        offset,
        message: message.into(),
        error_class: class,
        unreadable: None,
        limit: false,
    }
}

/// Which files a version is rebuilt from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoadPlan {
    /// The base snapshot: (version, path of its zip); `None` = start from an empty store.
    pub snapshot: Option<(i64, String)>,
    /// Changelogs replayed on top, in order: (version, path).
    pub changelogs: Vec<(i64, String)>,
}

/// A rebuilt store: raw keys and values as RocksDB holds them, plus what the metadata told.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawStore {
    /// The version that was loaded.
    pub version: i64,
    /// Raw key → raw value (column-family prefix and version byte included).
    pub entries: BTreeMap<Vec<u8>, Vec<u8>>,
    /// Files used.
    pub plan: LoadPlan,
    /// The base snapshot's metadata (column family mapping, numKeys...), when a snapshot was used.
    pub metadata: Option<zip_meta::CheckpointMetadata>,
    /// Column family name → id when the store uses virtual column families (from the snapshot metadata).
    pub column_families: Vec<(String, u16)>,
    /// Snapshots that could not be read and were skipped by auto snapshot repair (empty without it).
    pub skipped_snapshots: Vec<RocksDbError>,
}

impl RawStore {
    /// True when keys carry the 2-byte virtual column family prefix (transformWithState stores).
    pub fn uses_column_families(&self) -> bool {
        !self.column_families.is_empty()
    }

    /// The column family name of an id.
    pub fn column_family_name(&self, id: u16) -> Option<&str> {
        self.column_families.iter().find(|(_, i)| *i == id).map(|(n, _)| n.as_str())
    }
}

// ---------------------------------------------------------------- file naming

/// A state file name in a store directory: `<v>.zip`, `<v>.changelog`, `<v>_<id>.zip`, `<v>_<id>.changelog`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFileName {
    /// Version.
    pub version: i64,
    /// Unique id (checkpoint format v2).
    pub unique_id: Option<String>,
    /// True for `.zip`, false for `.changelog`.
    pub is_zip: bool,
}

/// Parses a file name of a RocksDB store directory; `None` for anything else (`.crc`, `SSTs/`, temp files, HDFS
/// files). The state file-name parser is [`crate::state_files::parse_state_file_name`]; this is its RocksDB view.
pub fn parse_state_file_name(name: &str) -> Option<StateFileName> {
    let f = crate::state_files::parse_state_file_name(name)?;
    let is_zip = match f.kind {
        ChainFileKind::Zip => true,
        ChainFileKind::Changelog => false,
        ChainFileKind::Delta | ChainFileKind::Snapshot => return None,
    };
    Some(StateFileName { version: f.version, unique_id: f.unique_id, is_zip })
}

fn read_file(archive: &mut dyn Archive, path: &str, max: u64) -> Result<Vec<u8>, RocksDbError> {
    archive.read(path, max).map_err(|e| match e {
        ArchiveError::NotFound { .. } => rerr(
            path,
            None,
            format!("Error reading streaming state file of {path}: it does not exist"),
            Some("CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"),
        ),
        e if e.is_content_unseen() => {
            RocksDbError { unreadable: Some(Box::new(e.clone())), ..rerr(path, None, e.to_string(), None) }
        }
        other => rerr(path, None, other.to_string(), None),
    })
}

// ---------------------------------------------------------------- reading

/// Reads, decompresses (sniffing the codec) and parses one changelog file of the archive.
pub fn read_changelog_file(
    archive: &mut dyn Archive,
    path: &str,
    limits: &LoadLimits,
) -> Result<changelog::Changelog, RocksDbError> {
    let raw = read_file(archive, path, limits.max_file_bytes)?;
    let data = crate::codec::decompress(&raw, limits.max_changelog_bytes).map_err(|e| {
        rerr(path, Some(e.offset), format!("cannot decompress ({}): {}", e.codec.short_name(), e.message), None)
    })?;
    changelog::parse_changelog(&data, limits.max_records).map_err(|e| {
        let class = match e.kind {
            changelog::ChangelogErrorKind::InvalidVersion => {
                Some("CANNOT_LOAD_STATE_STORE.INVALID_CHANGE_LOG_READER_VERSION")
            }
            _ => None,
        };
        rerr(path, Some(e.offset), format!("{} (offset in the decompressed stream)", e.message), class)
    })
}

/// A snapshot `<v>.zip` read with its SST files.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The zip content.
    pub zip: zip_meta::VersionZip,
    /// Raw key → value resolved from the SSTs (newest entry per key, deletions and merges applied).
    pub entries: BTreeMap<Vec<u8>, Vec<u8>>,
}

/// Reads a `<v>.zip` of `store_dir` and every SST it lists, checking each file's presence and size.
pub fn read_snapshot(
    archive: &mut dyn Archive,
    store_dir: &str,
    zip_path: &str,
    limits: &LoadLimits,
) -> Result<Snapshot, RocksDbError> {
    let (_, listing) = list_store(archive, store_dir);
    read_snapshot_listed(archive, store_dir, zip_path, &listing, limits)
}

/// [`read_snapshot`] against the store's SST and log files as listed already (`listing`, as
/// [`read_snapshot_of`] takes it).
fn read_snapshot_listed(
    archive: &mut dyn Archive,
    store_dir: &str,
    zip_path: &str,
    listing: &[(String, u64)],
    limits: &LoadLimits,
) -> Result<Snapshot, RocksDbError> {
    let raw = read_file(archive, zip_path, limits.max_file_bytes)?;
    read_snapshot_of(archive, store_dir, zip_path, &raw, listing, limits)
}

/// [`read_snapshot`] of a zip whose bytes (`raw`) were read already, against the store's SST and log files as
/// listed already (`listing`: paths relative to the store folder, sizes; [`immutable_files`]): only the SSTs are
/// read from `archive`, and the archive is not listed again (the read stage checks every restart zip this way).
pub fn read_snapshot_of(
    archive: &mut dyn Archive,
    store_dir: &str,
    zip_path: &str,
    raw: &[u8],
    listing: &[(String, u64)],
    limits: &LoadLimits,
) -> Result<Snapshot, RocksDbError> {
    let zip = zip_meta::read_version_zip(raw, limits.zip).map_err(|e| {
        let path = match &e.entry {
            Some(en) => format!("{zip_path}!/{en}"),
            None => zip_path.to_string(),
        };
        rerr(&path, e.offset, e.message, Some("CANNOT_LOAD_STATE_STORE.CANNOT_READ_CHECKPOINT"))
    })?;
    snapshot_of_zip(archive, store_dir, zip_path, zip, listing, limits)
}

/// [`read_snapshot_of`] of a zip already opened and its members parsed ([`zip_meta::read_version_zip`]): the
/// integrity check, which opens each restart zip first, reads its SSTs without inflating the zip again.
pub fn snapshot_of_zip(
    archive: &mut dyn Archive,
    store_dir: &str,
    zip_path: &str,
    zip: zip_meta::VersionZip,
    listing: &[(String, u64)],
    limits: &LoadLimits,
) -> Result<Snapshot, RocksDbError> {
    let dir = store_dir.trim_end_matches('/');
    if let Some(e) = &zip.member_damage {
        let member = e.entry.clone().unwrap_or_default();
        return Err(rerr(
            &format!("{zip_path}!/{member}"),
            e.offset,
            format!("RocksDB cannot open the checkpoint: {}", e.message),
            Some("CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"),
        ));
    }
    if let Some(m) = &zip.manifest {
        let manifest_path = format!("{zip_path}!/{}", zip.current.clone().unwrap_or_default());
        let m = m.as_ref().map_err(|e| {
            rerr(&manifest_path, Some(e.offset), e.message.clone(), Some("CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"))
        })?;
        for mm in manifest::compare_with_metadata(m, &zip.metadata) {
            match mm {
                manifest::ManifestMismatch::NotInMetadata { number, size } => {
                    return Err(rerr(
                        &manifest_path,
                        None,
                        format!("RocksDB's manifest needs SST {number:06}.sst ({size} bytes) which Spark's metadata does not list"),
                        Some("CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"),
                    ))
                }
                manifest::ManifestMismatch::SizeDiffers { number, manifest, metadata } => {
                    return Err(rerr(
                        &manifest_path,
                        None,
                        format!("SST {number:06}.sst has {manifest} bytes in RocksDB's manifest but {metadata} in Spark's metadata"),
                        Some("CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"),
                    ))
                }
                manifest::ManifestMismatch::NotLive { .. } => {}
            }
        }
    }
    for issue in zip_meta::check_files(&zip.metadata, listing) {
        match issue {
            zip_meta::FileIssue::Missing { path, expected } => {
                let full = format!("{dir}/{path}");
                return Err(rerr(
                    &full,
                    None,
                    format!("{zip_path} lists {path} ({expected} bytes) but it does not exist"),
                    Some("CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"),
                ));
            }
            zip_meta::FileIssue::WrongSize { path, expected, found } => {
                let full = format!("{dir}/{path}");
                return Err(rerr(
                    &full,
                    None,
                    format!("{zip_path} lists {path} with {expected} bytes, found {found} bytes"),
                    Some("CANNOT_LOAD_STATE_STORE.UNEXPECTED_FILE_SIZE"),
                ));
            }
            zip_meta::FileIssue::BadName { .. } => {}
        }
    }
    let (all, tombstones) = read_ssts(archive, dir, &zip.metadata, limits)?;
    for f in &zip.metadata.log_files {
        if f.size_bytes > 0 {
            let path = format!("{dir}/logs/{}", f.dfs_file_name);
            return Err(rerr(
                &path,
                None,
                "the snapshot lists a non-empty RocksDB WAL file; replaying WAL files is not supported",
                None,
            ));
        }
    }
    Ok(Snapshot { zip, entries: resolve_entries(all, &tombstones) })
}

/// The internal entries and range tombstones of every SST a zip's `metadata` lists (in `dir/SSTs/`), each SST of
/// the default column family only, within `limits`.
fn read_ssts(
    archive: &mut dyn Archive,
    dir: &str,
    metadata: &zip_meta::CheckpointMetadata,
    limits: &LoadLimits,
) -> Result<(Vec<sst::SstEntry>, Vec<sst::RangeTombstone>), RocksDbError> {
    // The SSTs (and their Hadoop sidecars, which a load's copy checks) are read next: one hint, so that an
    // archive read in slices (the browser's) fetches them together instead of one small read each.
    let next: Vec<String> = (metadata.distinct_sst_files())
        .flat_map(|f| [format!("{dir}/SSTs/.{}.crc", f.dfs_file_name), format!("{dir}/SSTs/{}", f.dfs_file_name)])
        .collect();
    archive.prefetch(&next);
    let mut all: Vec<sst::SstEntry> = Vec::new();
    let mut tombstones: Vec<sst::RangeTombstone> = Vec::new();
    // The memory budget of the copied entries is the snapshot's, not each SST's: what is left of it.
    let mut copied = 0usize;
    for f in metadata.distinct_sst_files() {
        let path = format!("{dir}/SSTs/{}", f.dfs_file_name);
        let bytes = read_file(archive, &path, limits.max_file_bytes)?;
        let left =
            sst::SstLimits { max_copied_bytes: limits.sst.max_copied_bytes.saturating_sub(copied), ..limits.sst };
        let t = sst::read_sst(&bytes, left)
            .map_err(|e| RocksDbError { limit: e.limit, ..rerr(&path, Some(e.offset), e.message, None) })?;
        copied = t.entries.iter().fold(copied, |c, e| c + e.user_key.len() + e.value.len() + sst::ENTRY_COST);
        if let Some(cf) = &t.properties.column_family_name {
            if cf != "default" {
                return Err(rerr(
                    &path,
                    None,
                    format!("SST belongs to RocksDB column family {cf:?}; Spark stores use only \"default\""),
                    None,
                ));
            }
        }
        all.extend(t.entries);
        if all.len() > limits.sst.max_entries {
            let message = format!("the snapshot's SST files hold more than {} entries (limit)", limits.sst.max_entries);
            return Err(RocksDbError { limit: true, ..rerr(&path, None, message, None) });
        }
        tombstones.extend(t.range_deletions);
    }
    Ok((all, tombstones))
}

/// Resolves internal entries of several SSTs to the visible user key → value map: per user key the entry with
/// the highest sequence number wins; deletions (and range tombstones with a higher sequence number) hide older
/// entries; merge operands are appended to the older value with [`MERGE_DELIMITER`] (`StringAppendOperator`).
pub fn resolve_entries(mut all: Vec<sst::SstEntry>, tombstones: &[sst::RangeTombstone]) -> BTreeMap<Vec<u8>, Vec<u8>> {
    // Stable (run-adaptive) sort: each SST is already in internal-key order, so this is a merge of sorted runs.
    all.sort_by(|a, b| a.user_key.cmp(&b.user_key).then(b.seq.cmp(&a.seq)));
    let covered =
        |k: &[u8], seq: u64| tombstones.iter().any(|t| t.seq > seq && t.start.as_slice() <= k && k < t.end.as_slice());
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(all.len());
    let mut i = 0;
    while i < all.len() {
        let mut j = i + 1;
        while j < all.len() && all[j].user_key == all[i].user_key {
            j += 1;
        }
        // all[i..j]: one user key, newest first.
        let mut operands: Vec<usize> = Vec::new();
        let mut base: Option<usize> = None;
        let mut visible = true;
        for (n, e) in all[i..j].iter().enumerate() {
            if !tombstones.is_empty() && covered(&e.user_key, e.seq) {
                break;
            }
            match e.kind {
                sst::ValueType::Value => {
                    base = Some(i + n);
                    break;
                }
                sst::ValueType::Merge => operands.push(i + n),
                _ => {
                    if operands.is_empty() {
                        visible = false;
                    }
                    break;
                }
            }
        }
        if visible && (base.is_some() || !operands.is_empty()) {
            let key = std::mem::take(&mut all[i].user_key);
            let value = if operands.is_empty() {
                base.map(|b| std::mem::take(&mut all[b].value)).unwrap_or_default()
            } else {
                let mut v: Vec<u8> = base.map(|b| all[b].value.clone()).unwrap_or_default();
                let mut first = base.is_none();
                for &op in operands.iter().rev() {
                    if !first {
                        v.push(MERGE_DELIMITER);
                    }
                    v.extend_from_slice(&all[op].value);
                    first = false;
                }
                v
            };
            out.push((key, value));
        }
        i = j;
    }
    // Keys are sorted and unique: the map is bulk-built.
    out.into_iter().collect()
}

/// Applies changelog records to a store map (puts, deletes, merges with [`MERGE_DELIMITER`]); a delete's key may
/// carry a 4.3 row checksum before it.
pub fn apply_changelog(map: &mut BTreeMap<Vec<u8>, Vec<u8>>, records: Vec<changelog::ChangeRecord>) {
    for r in records {
        match r {
            changelog::ChangeRecord::Put { key, value } => {
                map.insert(key, value);
            }
            changelog::ChangeRecord::Delete { key } => {
                // With 4.3 row checksums a removal's key is written as [crc32c of the key: i32 LE] + key
                // (`KeyValueChecksumEncoder.encodeKeyRowWithChecksum`); the prefix is taken off only when it is
                // that checksum, so a plain key is never cut.
                let key = match key.split_first_chunk::<4>() {
                    Some((sum, rest)) if u32::from_le_bytes(*sum) == encoding::crc32c(&[rest]) => rest.to_vec(),
                    _ => key,
                };
                map.remove(&key);
            }
            changelog::ChangeRecord::Merge { key, value } => match map.get_mut(&key) {
                Some(v) => {
                    v.push(MERGE_DELIMITER);
                    v.extend_from_slice(&value);
                }
                None => {
                    map.insert(key, value);
                }
            },
        }
    }
}

/// Where the value a loaded store holds for `key` (a raw RocksDB key) was written: the newest changelog of the
/// load plan with a record for it (path, record offset in the decompressed changelog), else the snapshot's SST
/// holding its newest entry (path, file offset of the data block). `None` when no file of the plan has it or a
/// file no longer reads. Re-reads the plan's files: meant for error paths (decode failures), not per row.
pub fn locate_key(
    archive: &mut dyn Archive,
    store_dir: &str,
    plan: &LoadPlan,
    key: &[u8],
    limits: &LoadLimits,
) -> Option<KeySource> {
    for (_, path) in plan.changelogs.iter().rev() {
        let Ok(cl) = read_changelog_file(archive, path, limits) else { continue };
        let hit = cl.records.iter().zip(&cl.record_offsets).rev().find(|(r, _)| match r {
            changelog::ChangeRecord::Put { key: k, .. }
            | changelog::ChangeRecord::Merge { key: k, .. }
            | changelog::ChangeRecord::Delete { key: k } => k.as_slice() == key,
        });
        if let Some((_, off)) = hit {
            return Some(KeySource { path: path.clone(), offset: *off, in_decompressed_stream: true });
        }
    }
    let (_, zip_path) = plan.snapshot.as_ref()?;
    let raw = read_file(archive, zip_path, limits.max_file_bytes).ok()?;
    let zip = zip_meta::read_version_zip(&raw, limits.zip).ok()?;
    let dir = store_dir.trim_end_matches('/');
    let mut best: Option<(u64, KeySource)> = None;
    for f in zip.metadata.distinct_sst_files() {
        let path = format!("{dir}/SSTs/{}", f.dfs_file_name);
        let Ok(bytes) = read_file(archive, &path, limits.max_file_bytes) else { continue };
        let _ = sst::scan_sst_with_blocks(&bytes, limits.sst, |block, k, seq, _, _| {
            if k == key && best.as_ref().is_none_or(|(s, _)| seq > *s) {
                best = Some((seq, KeySource { path: path.clone(), offset: block, in_decompressed_stream: false }));
            }
            Ok(())
        });
    }
    best.map(|(_, s)| s)
}

/// The file a state row came from ([`locate_key`], [`crate::state::hdfs::locate_key`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySource {
    /// Path inside the archive: a changelog, delta or snapshot file, or an SST.
    pub path: String,
    /// Byte offset: of the record in the decompressed stream (`in_decompressed_stream`), else of the SST data
    /// block in the file.
    pub offset: u64,
    /// True for record offsets in a decompressed stream (changelog, delta, HDFS snapshot).
    pub in_decompressed_stream: bool,
}

impl KeySource {
    /// `record at byte N of the decompressed stream` / `data block at byte N of the SST`.
    pub fn describe(&self) -> String {
        if self.in_decompressed_stream {
            format!("record at byte {} of the decompressed stream", self.offset)
        } else {
            format!("entry in the data block at byte {} of the SST", self.offset)
        }
    }

    /// `e` re-pointed at this file and offset (the store folder it named kept in the message).
    pub fn annotate(&self, mut e: crate::state::StateError) -> crate::state::StateError {
        e.message = format!("{} ({}; store {})", e.message, self.describe(), e.path);
        e.path = self.path.clone();
        e.offset = Some(self.offset);
        e
    }
}

/// SST files under `SSTs/` of a store directory that no `<v>.zip` of the directory references (orphans: normal
/// briefly, removed by maintenance). Zips that cannot be read are skipped.
pub fn orphan_ssts(archive: &mut dyn Archive, store_dir: &str, limits: &LoadLimits) -> Vec<String> {
    let (files, listing) = list_store(archive, store_dir);
    let mut referenced = std::collections::BTreeSet::new();
    for (f, path) in &files {
        if !f.is_zip {
            continue;
        }
        if let Ok(raw) = archive.read(path, limits.max_file_bytes) {
            if let Ok(z) = zip_meta::read_version_zip(&raw, limits.zip) {
                for s in &z.metadata.sst_files {
                    referenced.insert(format!("SSTs/{}", s.dfs_file_name));
                }
            }
        }
    }
    listing
        .into_iter()
        .filter(|(p, _)| p.starts_with("SSTs/") && p.ends_with(".sst") && !referenced.contains(p))
        .map(|(p, _)| format!("{}/{p}", store_dir.trim_end_matches('/')))
        .collect()
}

#[cfg(test)]
mod tests;
