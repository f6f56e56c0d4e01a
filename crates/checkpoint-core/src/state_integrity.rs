//! Integrity of the state files a restart loads, as Spark's readers see them, without keeping rows.
//! This module holds no format knowledge of its own: it calls the state readers and maps their errors to
//! what Spark throws (FORMATS.md §7–12, §16):
//!
//! * `.delta` / `.snapshot`: [`crate::state::hdfs::verify_file`] (codec framing, lz4 block checksums, the
//!   record stream and its `-1` end marker).
//! * `.changelog`: [`crate::codec::decompress`] then [`crate::state::rocksdb::changelog::parse_changelog`]
//!   (v1–v4, with the checkpoint format v2 lineage).
//! * RocksDB `<v>.zip`: [`crate::state::rocksdb::read_snapshot_of`] (zip, `metadata`, MANIFEST against it, the SST
//!   files it lists present with their sizes, and every SST block decoded with its checksum), or, when the byte
//!   budget does not cover the SSTs, [`crate::state::rocksdb::zip_meta::read_version_zip`] +
//!   [`crate::state::rocksdb::zip_meta::check_files`] (everything but decoding the SSTs).

use crate::archive::Archive;
use crate::model::Problem;
use crate::state::hdfs::{RecordErrorKind, RecordFileKind, StateFileError};
use crate::state::rocksdb::{self, zip_meta, LoadLimits, RocksDbError};

/// Cap on the decompressed size of one state stream file.
const MAX_STREAM_OUT: usize = 512 * 1024 * 1024;
/// Cap on the records of one changelog.
const MAX_CHANGELOG_RECORDS: usize = 10_000_000;
/// Cap on the decompressed size of one RocksDB changelog (one batch's changes of one partition), which is held
/// whole while its records are kept (at most [`rocksdb::changelog::MAX_RECORD_MEMORY`]): together within 512 MiB.
const MAX_CHANGELOG_OUT: usize = 256 * 1024 * 1024;

/// What a state stream file (`.delta`, `.snapshot`, `.changelog`) looks like to Spark's reader.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamCheck {
    /// The damage, if any (offset in the compressed file for framing errors, in the decompressed stream
    /// for record errors, as the reason says).
    pub problem: Option<Problem>,
    /// The Java exception Spark's reader throws (lz4-java: `java.io.IOException: Stream is corrupted`,
    /// `java.io.EOFException` for a truncated stream or record).
    pub exception: Option<String>,
    /// Checkpoint format v2 changelogs (v3/v4): the lineage `(version, uniqueId)` in the header.
    pub lineage: Option<Vec<(i64, String)>>,
    /// The compressed payload does not decode although framing and lengths are intact (a damaged lz4
    /// match offset, say): Spark 3.x's lz4-java fast decompressor did not reliably notice this
    /// (fixture broken-ss-3.5.9-corrupt-state-file loaded silently).
    pub payload_corrupt: bool,
    /// The 4.x error class Spark raises for this damage, when it is a specific one (record sizes:
    /// `CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_KEY_SIZE` and friends); `None` = generic.
    pub error_class: Option<&'static str>,
    /// Rows (puts) and removals in a `.delta`/`.snapshot`, records in a changelog, when it decoded.
    pub records: Option<(u64, u64)>,
    /// Bytes of the decompressed stream, when it decompressed (the work a read costs).
    pub decompressed_bytes: Option<u64>,
    /// A limit of this inspector stopped the check (the decompressed bytes of one stream over 512 MiB, a
    /// changelog over 256 MiB decompressed, 10 M records or 256 MiB of records): which limit, where. The file is not verified, which is no damage:
    /// `problem` is `None`.
    pub not_verified: Option<String>,
}

/// Checks a compressed state stream file. `snapshot` selects snapshot rules (no removals), `changelog`
/// the RocksDB changelog reader.
pub fn check_stream_file(path: &str, bytes: &[u8], snapshot: bool, changelog: bool) -> StreamCheck {
    check_stream_file_with(path, bytes, snapshot, changelog, |_, _, _| {})
}

/// [`check_stream_file`] of a RocksDB changelog that also hands back its parsed records when they read (`None`
/// on damage), within the same limits: the integrity pass rebuilds a store's rows from the bytes it checks.
pub fn check_changelog_keeping(path: &str, bytes: &[u8]) -> (StreamCheck, Option<rocksdb::changelog::Changelog>) {
    changelog_within(path, bytes, MAX_CHANGELOG_OUT, MAX_CHANGELOG_RECORDS)
}

/// [`check_changelog_keeping`] within `max_out` decompressed bytes and `max_records` records.
fn changelog_within(
    path: &str,
    bytes: &[u8],
    max_out: usize,
    max_records: usize,
) -> (StreamCheck, Option<rocksdb::changelog::Changelog>) {
    let prob = |offset: u64, reason: String| Some(Problem { path: path.to_string(), offset: Some(offset), reason });
    if bytes.is_empty() {
        return (check_stream_file(path, bytes, false, true), None);
    }
    let data = match crate::codec::decompress(bytes, max_out) {
        Ok(d) => d,
        Err(e) => return (codec_failure(path, e), None),
    };
    match rocksdb::changelog::parse_changelog(&data, max_records) {
        Ok(cl) => {
            let check = StreamCheck {
                decompressed_bytes: Some(data.len() as u64),
                lineage: (cl.format_version >= 3)
                    .then(|| cl.lineage.iter().map(|l| (l.version, l.checkpoint_unique_id.clone())).collect()),
                records: Some((cl.records.len() as u64, 0)),
                ..Default::default()
            };
            (check, Some(cl))
        }
        Err(e) if e.kind == rocksdb::changelog::ChangelogErrorKind::OverLimit => {
            let reason = format!("{path}: at decompressed byte {}: {}, a limit of this inspector", e.offset, e.message);
            let check = StreamCheck {
                not_verified: Some(reason),
                decompressed_bytes: Some(data.len() as u64),
                ..Default::default()
            };
            (check, None)
        }
        Err(e) => {
            use rocksdb::changelog::ChangelogErrorKind as C;
            let check = StreamCheck {
                problem: prob(
                    e.offset,
                    format!("changelog record stream damaged at decompressed byte {}: {}", e.offset, e.message),
                ),
                exception: Some(
                    if e.kind == C::Truncated { "java.io.EOFException" } else { "java.io.IOException" }.into(),
                ),
                error_class: (e.kind == C::InvalidVersion)
                    .then_some("CANNOT_LOAD_STATE_STORE.INVALID_CHANGE_LOG_READER_VERSION"),
                decompressed_bytes: Some(data.len() as u64),
                ..Default::default()
            };
            (check, None)
        }
    }
}

/// [`check_stream_file`] that also hands each record of a `.delta`/`.snapshot` to `on_record(offset, key,
/// value)` as it is checked (`offset` in the decompressed stream, `value` `None` = removal), as
/// [`crate::state::hdfs::for_each_record_in_file_at`] does: a caller rebuilds the store from the same pass.
/// Records before a failure have been handed on. Changelogs hand nothing.
pub fn check_stream_file_with(
    path: &str,
    bytes: &[u8],
    snapshot: bool,
    changelog: bool,
    on_record: impl FnMut(u64, &[u8], Option<&[u8]>),
) -> StreamCheck {
    stream_within(path, bytes, snapshot, changelog, MAX_STREAM_OUT, on_record)
}

/// [`check_stream_file_with`] within `max_out` decompressed bytes.
fn stream_within(
    path: &str,
    bytes: &[u8],
    snapshot: bool,
    changelog: bool,
    max_out: usize,
    on_record: impl FnMut(u64, &[u8], Option<&[u8]>),
) -> StreamCheck {
    let prob = |offset: u64, reason: String| Some(Problem { path: path.to_string(), offset: Some(offset), reason });
    if bytes.is_empty() {
        return StreamCheck {
            problem: prob(0, "the file is empty (0 bytes): no compression header".into()),
            exception: Some("java.io.EOFException".into()),
            ..Default::default()
        };
    }
    if changelog {
        return changelog_within(path, bytes, max_out.min(MAX_CHANGELOG_OUT), MAX_CHANGELOG_RECORDS).0;
    }
    let kind = if snapshot { RecordFileKind::Snapshot } else { RecordFileKind::Delta };
    match crate::state::hdfs::for_each_record_in_file_at(bytes, kind, max_out, on_record) {
        Ok(stats) => StreamCheck {
            records: Some((stats.puts, stats.removals)),
            decompressed_bytes: Some(stats.end_offset + 4 + stats.trailing_bytes),
            ..Default::default()
        },
        Err(StateFileError::Codec(e)) => codec_failure(path, e),
        Err(e @ StateFileError::Records(_)) => {
            let StateFileError::Records(r) = &e else { return StreamCheck::default() };
            let class = e.spark_error_class(kind);
            StreamCheck {
                problem: prob(
                    r.offset,
                    format!("record stream damaged at decompressed byte {}: {}", r.offset, r.reason),
                ),
                exception: Some(
                    if r.kind == RecordErrorKind::Truncated { "java.io.EOFException" } else { "java.io.IOException" }
                        .into(),
                ),
                error_class: (class != "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED").then_some(class),
                ..Default::default()
            }
        }
    }
}

/// The check of a stream whose codec framing stopped at `e`: damage, or (over this inspector's limit on the
/// decompressed bytes) not verified.
fn codec_failure(path: &str, e: crate::codec::CodecError) -> StreamCheck {
    use crate::codec::CodecErrorKind as K;
    if e.kind == K::OverLimit {
        let reason =
            format!("{path}: at byte {} ({} framing): {}, a limit of this inspector", e.offset, e.codec, e.message);
        return StreamCheck { not_verified: Some(reason), ..Default::default() };
    }
    let exc = if e.kind == K::Truncated { "java.io.EOFException" } else { "java.io.IOException" };
    StreamCheck {
        problem: Some(Problem {
            path: path.to_string(),
            offset: Some(e.offset),
            reason: format!("cannot be decompressed ({} framing) at byte {}: {}", e.codec, e.offset, e.message),
        }),
        exception: Some(exc.into()),
        payload_corrupt: e.kind == K::Corrupt,
        ..Default::default()
    }
}

/// What a RocksDB `<v>.zip` and the SST files it lists look like to Spark's loader.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ZipCheck {
    /// The damage, if any. `path` is the file at fault (the zip, `<zip>!/<entry>`, or an SST), relative to
    /// the checkpoint root; `offset` is in that file.
    pub problem: Option<Problem>,
    /// The Java exception Spark's loader throws on it.
    pub exception: Option<String>,
    /// The error class the state reader attaches (e.g. `CANNOT_LOAD_STATE_STORE.UNEXPECTED_FILE_SIZE`).
    pub error_class: Option<&'static str>,
    /// `numKeys` of the zip's metadata, when it reads.
    pub num_keys: Option<i64>,
    /// Total bytes of the SST files the zip lists.
    pub sst_bytes: u64,
    /// True when the SST files were decoded (block checksums verified), false when only their presence and
    /// sizes were checked (byte budget).
    pub ssts_decoded: bool,
    /// The zip opens as a zip and its damage is an SST it lists that is absent, or a member.
    pub rocksdb: Option<crate::model::RocksDbZipDamage>,
    /// A limit of this inspector kept the zip from being read (which limit, the value): not verified, not damage.
    pub not_verified: Option<String>,
    /// A file the zip lists that the input could not give (relative path, why): not verified, not damage.
    pub unreadable: Option<(String, crate::archive::ArchiveError)>,
    /// The SST and log files the zip's metadata lists, relative to the checkpoint root (`<store>/SSTs/<name>`,
    /// `<store>/logs/<name>`), when the SSTs were decoded (`ssts_decoded`): the files whose Hadoop sidecars a
    /// load checks, named without opening the zip again.
    pub listed_files: Vec<String>,
}

/// The Java exception and 4.x error class a damaged member of a `<v>.zip` makes Spark's load fail with
/// (`RocksDBFileManager.loadCheckpointFromDfs` then `RocksDB.openDB`): an empty `metadata` or one whose first line
/// is not `v1` (`QueryExecutionErrors.cannotReadCheckpoint`), everything else is wrapped as uncategorized (a JSON parse
/// error, `NoSuchFileException` for the absent metadata, RocksDB's `Corruption` for CURRENT and MANIFEST).
pub fn member_error(member: &str, fault: zip_meta::MemberFault, message: &str) -> (&'static str, &'static str) {
    use zip_meta::MemberFault as F;
    let version_line = message.contains("Cannot read RocksDB checkpoint metadata");
    match (member, fault) {
        ("metadata", F::Empty) => ("org.apache.spark.SparkException", "CANNOT_LOAD_STATE_STORE.CANNOT_READ_CHECKPOINT"),
        ("metadata", F::Unparsable) if version_line => {
            ("org.apache.spark.SparkException", "CANNOT_LOAD_STATE_STORE.CANNOT_READ_CHECKPOINT")
        }
        ("metadata", F::Missing) => ("java.nio.file.NoSuchFileException", "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"),
        ("metadata", F::Unparsable) => ("org.json4s.MappingException", "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"),
        _ => ("org.rocksdb.RocksDBException", "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"),
    }
}

/// Checks the RocksDB zip `zip_path` of the store folder `store_dir` (both archive paths; `prefix` is the
/// checkpoint root's prefix, stripped from reported paths). `zip_bytes` are the zip's bytes (already read);
/// `listing`: the store's SST and log files as the read stage listed them (relative to the store folder, sizes;
/// [`crate::state::rocksdb::immutable_files`]).
/// `sst_budget`: the SSTs are decoded only when their total size fits in it. Members and the presence of the
/// SSTs are checked first, in the order Spark's load meets them: `metadata`, the SST copies, then RocksDB's
/// `CURRENT` and MANIFEST.
pub fn check_rocksdb_zip(
    archive: &mut dyn Archive,
    store_dir: &str,
    zip_path: &str,
    zip_bytes: &[u8],
    listing: &[(String, u64)],
    prefix: &str,
    sst_budget: u64,
) -> ZipCheck {
    check_rocksdb_zip_keeping(archive, store_dir, zip_path, zip_bytes, listing, prefix, sst_budget).0
}

/// [`check_rocksdb_zip`] that also hands back the snapshot it decoded (the zip and every entry of its SSTs) when
/// the SSTs were decoded and read: the integrity pass rebuilds the store's rows from it, reading nothing twice.
pub fn check_rocksdb_zip_keeping(
    archive: &mut dyn Archive,
    store_dir: &str,
    zip_path: &str,
    zip_bytes: &[u8],
    listing: &[(String, u64)],
    prefix: &str,
    sst_budget: u64,
) -> (ZipCheck, Option<rocksdb::Snapshot>) {
    let rel = |p: &str| p.strip_prefix(prefix).unwrap_or(p).to_string();
    let limits = LoadLimits::default();
    let zip = match zip_meta::read_version_zip(zip_bytes, limits.zip) {
        Ok(z) => z,
        Err(e) if e.limit => return (ZipCheck { not_verified: Some(e.to_string()), ..Default::default() }, None),
        Err(e) => return (unreadable_zip(&e, &rel(zip_path)), None),
    };
    let sst_bytes: u64 = zip.metadata.distinct_sst_files().fold(0u64, |a, f| a.saturating_add(f.size_bytes));
    let num_keys = zip.metadata.num_keys;
    let mut out = ZipCheck { num_keys, sst_bytes, ssts_decoded: false, ..Default::default() };
    // Presence and sizes (listing), as Spark's copy finds them.
    let dir = store_dir.trim_end_matches('/');
    let issue = zip_meta::check_files(&zip.metadata, listing)
        .into_iter()
        .find(|i| !matches!(i, zip_meta::FileIssue::BadName { .. }));
    match issue {
        Some(zip_meta::FileIssue::Missing { path, expected }) => {
            let sst = rel(&format!("{dir}/{path}"));
            out.problem = Some(Problem {
                path: sst.clone(),
                offset: None,
                reason: format!("{} lists {path} ({expected} bytes) but it does not exist", rel(zip_path)),
            });
            out.exception = Some("java.io.FileNotFoundException".into());
            out.error_class = Some("CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE");
            out.rocksdb = Some(crate::model::RocksDbZipDamage::SstMissing { sst, size: expected });
            return (out, None);
        }
        Some(zip_meta::FileIssue::WrongSize { path, expected, found }) => {
            out.problem = Some(Problem {
                path: rel(&format!("{dir}/{path}")),
                offset: None,
                reason: format!("{} lists {path} with {expected} bytes, found {found} bytes", rel(zip_path)),
            });
            out.exception = Some("org.apache.spark.SparkException".into());
            out.error_class = Some("CANNOT_LOAD_STATE_STORE.UNEXPECTED_FILE_SIZE");
            let sst = rel(&format!("{dir}/{path}"));
            out.rocksdb = Some(crate::model::RocksDbZipDamage::SstWrongSize { sst, size: expected, found });
            return (out, None);
        }
        _ => {}
    }
    if let Some(e) = &zip.member_damage {
        let member = e.entry.clone().unwrap_or_default();
        let fault = e.member_fault.unwrap_or(zip_meta::MemberFault::Unparsable);
        let (exc, class) = member_error(&member, fault, &e.message);
        out.problem =
            Some(Problem { path: format!("{}!/{member}", rel(zip_path)), offset: e.offset, reason: e.message.clone() });
        out.exception = Some(exc.into());
        out.error_class = Some(class);
        out.rocksdb = Some(crate::model::RocksDbZipDamage::Member { member, fault });
        return (out, None);
    }
    if sst_bytes > sst_budget {
        return (out, None);
    }
    let listed_files = zip
        .metadata
        .distinct_sst_files()
        .map(|f| rel(&format!("{dir}/SSTs/{}", f.dfs_file_name)))
        .chain(zip.metadata.log_files.iter().map(|f| rel(&format!("{dir}/logs/{}", f.dfs_file_name))))
        .collect();
    match rocksdb::snapshot_of_zip(archive, store_dir, zip_path, zip, listing, &limits) {
        Ok(snapshot) => {
            (ZipCheck { num_keys, sst_bytes, ssts_decoded: true, listed_files, ..Default::default() }, Some(snapshot))
        }
        Err(e) if e.unreadable.is_some() => {
            let unreadable = e.unreadable.map(|u| (rel(&e.path), *u));
            (ZipCheck { num_keys, sst_bytes, unreadable, ..Default::default() }, None)
        }
        // A limit of this inspector on an SST (named, with its offset): not verified, not damage.
        Err(e) if e.limit => {
            let reason = RocksDbError { path: rel(&e.path), ..e }.to_string();
            (ZipCheck { num_keys, sst_bytes, not_verified: Some(reason), ..Default::default() }, None)
        }
        Err(e) => (
            ZipCheck {
                exception: Some(exception_of(&e).into()),
                error_class: e.error_class,
                problem: Some(Problem { path: rel(&e.path), offset: e.offset, reason: e.message }),
                num_keys,
                sst_bytes,
                ssts_decoded: false,
                rocksdb: None,
                not_verified: None,
                unreadable: None,
                listed_files: Vec::new(),
            },
            None,
        ),
    }
}

/// The damage of a `<v>.zip` (`zip`: its path relative to the root) that does not open or whose `metadata`
/// member is at fault ([`zip_meta::read_version_zip`]'s error `e`, not a limit).
fn unreadable_zip(e: &zip_meta::ZipMetaError, zip: &str) -> ZipCheck {
    let path = match &e.entry {
        Some(en) => format!("{zip}!/{en}"),
        None => zip.to_string(),
    };
    let (exc, class) = match (&e.entry, e.member_fault) {
        (Some(m), Some(f)) => member_error(m, f, &e.message),
        _ => ("java.util.zip.ZipException", "CANNOT_LOAD_STATE_STORE.CANNOT_READ_CHECKPOINT"),
    };
    let rocksdb = match (&e.entry, e.member_fault) {
        (Some(m), Some(fault)) => Some(crate::model::RocksDbZipDamage::Member { member: m.clone(), fault }),
        _ => None,
    };
    let reason = match e.member_fault {
        Some(_) => e.message.clone(),
        None => format!("the zip cannot be read: {e}"),
    };
    ZipCheck {
        problem: Some(Problem { path, offset: e.offset, reason }),
        exception: Some(exc.into()),
        error_class: Some(class),
        rocksdb,
        ..Default::default()
    }
}

/// The Java exception behind a RocksDB load failure.
fn exception_of(e: &RocksDbError) -> &'static str {
    match e.error_class {
        Some("CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE") => "java.io.FileNotFoundException",
        Some("CANNOT_LOAD_STATE_STORE.CANNOT_READ_CHECKPOINT") => "java.util.zip.ZipException",
        Some("CANNOT_LOAD_STATE_STORE.UNEXPECTED_FILE_SIZE") => "org.apache.spark.SparkException",
        _ => "org.rocksdb.RocksDBException",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::write::lz4_block_stream;

    /// HDFS records: `(key, value)` pairs as size-prefixed bytes, then the `-1` end marker.
    fn records(n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..n {
            let (k, v) = (format!("key{i}"), format!("value{i}"));
            out.extend_from_slice(&(k.len() as i32).to_be_bytes());
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(&(v.len() as i32).to_be_bytes());
            out.extend_from_slice(v.as_bytes());
        }
        out.extend_from_slice(&(-1i32).to_be_bytes());
        out
    }

    /// A valid snapshot whose stream is over the decompressed-bytes limit is not verified: no damage, no
    /// exception, the file and the limit named. A stream cut short is damage whatever the limit.
    #[test]
    fn a_stream_over_the_limit_is_not_verified_and_a_cut_one_is_damage() {
        let file = lz4_block_stream(&records(5000), 64 * 1024);
        let whole = stream_within("state/0/0/2.snapshot", &file, true, false, usize::MAX, |_, _, _| {});
        assert!(whole.problem.is_none() && whole.not_verified.is_none(), "{whole:?}");
        assert_eq!(whole.records, Some((5000, 0)));
        let over = stream_within("state/0/0/2.snapshot", &file, true, false, 10_000, |_, _, _| {});
        assert!(over.problem.is_none() && over.exception.is_none(), "{over:?}");
        let reason = over.not_verified.unwrap();
        assert!(reason.starts_with("state/0/0/2.snapshot: at byte") && reason.contains("limit"), "{reason}");
        let cut = stream_within("state/0/0/2.snapshot", &file[..file.len() / 2], true, false, 1 << 20, |_, _, _| {});
        assert!(cut.problem.is_some() && cut.not_verified.is_none(), "{cut:?}");
    }

    /// A changelog over the record limit is not verified; one under it reads.
    #[test]
    fn a_changelog_over_the_record_limit_is_not_verified() {
        let mut stream = Vec::new();
        for i in 0..100u32 {
            let (k, v) = (format!("key{i}"), format!("value{i}"));
            stream.extend_from_slice(&(k.len() as i32).to_be_bytes());
            stream.extend_from_slice(k.as_bytes());
            stream.extend_from_slice(&(v.len() as i32).to_be_bytes());
            stream.extend_from_slice(v.as_bytes());
        }
        stream.extend_from_slice(&(-1i32).to_be_bytes());
        let file = lz4_block_stream(&stream, 64 * 1024);
        let (ok, cl) = changelog_within("state/0/0/3.changelog", &file, usize::MAX, 1000);
        assert!(ok.problem.is_none() && ok.not_verified.is_none() && cl.is_some(), "{ok:?}");
        let (over, cl) = changelog_within("state/0/0/3.changelog", &file, usize::MAX, 10);
        assert!(over.problem.is_none() && over.exception.is_none() && cl.is_none(), "{over:?}");
        assert!(over.not_verified.is_some_and(|r| r.starts_with("state/0/0/3.changelog") && r.contains("limit")));
    }
}
