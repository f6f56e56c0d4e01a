//! The `<v>.zip` (and checkpoint format v2 `<v>_<uniqueId>.zip`) files of a RocksDB state store and Spark's
//! `metadata` file inside them.
//!
//! Mirrors Spark's `RocksDBFileManager` (`zipToDfsFile`, `RocksDBCheckpointMetadata.readFromFile`,
//! `RocksDBSstFile`/`RocksDBLogFile`): the zip holds RocksDB's mutable files (`CURRENT`, `OPTIONS-<n>`,
//! `MANIFEST-<n>`, an empty `<n>.log`) plus `metadata`:
//!
//! ```text
//! v1
//! {"sstFiles":[{"localFileName":"000015.sst","dfsSstFileName":"000015-<uuid>.sst","sizeBytes":1201}],
//!  "logFiles":[...],"numKeys":1,"numInternalKeys":0,"columnFamilyMapping":{"default":1},
//!  "columnFamilyTypeMap":{"default":false},"maxColumnFamilyId":1}
//! ```
//!
//! The zip is hostile input: it is opened through an in-memory reader, its entry count and every inflated entry
//! are bounded, and errors name the entry and the byte offset of its data in the zip.

use std::io::{Cursor, Read};

/// Bounds for reading one `<v>.zip`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZipLimits {
    /// Maximum number of entries in the zip.
    pub max_entries: usize,
    /// Maximum inflated size of `metadata`, `CURRENT` or any entry that is read, in bytes.
    pub max_entry_bytes: u64,
}

impl Default for ZipLimits {
    fn default() -> Self {
        ZipLimits { max_entries: 10_000, max_entry_bytes: 64 << 20 }
    }
}

/// Why a `<v>.zip` or its `metadata` cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZipMetaError {
    /// The entry inside the zip the error is about (`metadata`, `CURRENT`, ...), `None` for the zip itself.
    pub entry: Option<String>,
    /// Byte offset in the zip file (the entry's data start for inflate errors), when known.
    pub offset: Option<u64>,
    /// What is wrong.
    pub message: String,
    /// Set when the zip reads as a zip but a member a restart opens is absent, empty or unparsable (the entry
    /// names it); `None` for damage of the zip itself (not a zip, a corrupt deflate stream, a CRC mismatch,
    /// limits).
    pub member_fault: Option<MemberFault>,
    /// Set when a limit of this inspector (entries, bytes of one member) stopped the read: the zip is not
    /// verified, which says nothing about its damage.
    pub limit: bool,
}

/// How a member of a `<v>.zip` that a restart opens (`metadata`, `CURRENT`, `MANIFEST-*`, `OPTIONS-*`) is
/// damaged while the zip itself reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberFault {
    /// The zip does not hold it.
    Missing,
    /// It has zero bytes.
    Empty,
    /// Its content is not what Spark or RocksDB reads (a version line, JSON, `MANIFEST-<n>`, a log record).
    Unparsable,
}

impl std::fmt::Display for ZipMetaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(e) = &self.entry {
            write!(f, "entry {e}: ")?;
        }
        if let Some(o) = self.offset {
            write!(f, "at byte {o}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ZipMetaError {}

/// One immutable file Spark uploaded next to the zip (`RocksDBSstFile` / `RocksDBLogFile`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImmutableFile {
    /// Name in RocksDB's local directory, e.g. `000015.sst`.
    pub local_file_name: String,
    /// Name in the checkpoint, under `SSTs/` (or `logs/`), e.g. `000015-<uuid>.sst`.
    pub dfs_file_name: String,
    /// Exact size in bytes.
    pub size_bytes: u64,
}

/// Spark's `RocksDBCheckpointMetadata` as read from the zip's `metadata` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointMetadata {
    /// The version line (`v1`).
    pub version_line: String,
    /// SST files of this version (under `SSTs/`).
    pub sst_files: Vec<ImmutableFile>,
    /// Archived WAL files (under `logs/`), usually none.
    pub log_files: Vec<ImmutableFile>,
    /// `numKeys`: number of keys Spark counted at commit (user keys only in 4.x).
    pub num_keys: Option<i64>,
    /// `numInternalKeys` (4.x): keys in internal column families.
    pub num_internal_keys: Option<i64>,
    /// `columnFamilyMapping`: column family name → id (virtual column families, transformWithState).
    pub column_family_mapping: Vec<(String, i64)>,
    /// `columnFamilyTypeMap`: column family name → internal flag.
    pub column_family_type_map: Vec<(String, bool)>,
    /// `maxColumnFamilyId`.
    pub max_column_family_id: Option<i64>,
}

impl CheckpointMetadata {
    /// The SST files to read: each `dfsSstFileName` once, in the order listed. Spark copies every listed file
    /// (`RocksDBFileManager.loadImmutableFilesFromDfs`), but the same DFS file under several local names holds the
    /// same entries: a metadata that lists one file 300,000 times is one file to read, not 300,000.
    pub fn distinct_sst_files(&self) -> impl Iterator<Item = &ImmutableFile> {
        let mut seen = std::collections::HashSet::new();
        self.sst_files.iter().filter(move |f| seen.insert(f.dfs_file_name.as_str()))
    }
}

/// What a `<v>.zip` contains.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionZip {
    /// Every file entry: (name, inflated size in bytes).
    pub entries: Vec<(String, u64)>,
    /// Content of `CURRENT` without the trailing newline (e.g. `MANIFEST-000005`), when present.
    pub current: Option<String>,
    /// Spark's metadata.
    pub metadata: CheckpointMetadata,
    /// The MANIFEST named by `CURRENT`, parsed; `None` when `CURRENT` or that file is absent.
    pub manifest: Option<Result<super::manifest::Manifest, super::manifest::ManifestError>>,
    /// Entries with zero bytes that should not be empty (everything but RocksDB's `*.log` WAL files); Spark 4.1+
    /// refuses to write such a zip (`STATE_STORE_UNEXPECTED_EMPTY_FILE_IN_ROCKSDB_ZIP`), so one on disk was
    /// damaged after Spark wrote it.
    pub unexpected_empty: Vec<String>,
    /// The first of `CURRENT` / the MANIFEST it names that RocksDB cannot open the checkpoint with
    /// (see [`member_damage`]); `metadata` damage is an error of [`read_version_zip`] instead.
    pub member_damage: Option<ZipMetaError>,
}

fn zerr(entry: Option<&str>, offset: Option<u64>, message: impl Into<String>) -> ZipMetaError {
    ZipMetaError { entry: entry.map(str::to_string), offset, message: message.into(), member_fault: None, limit: false }
}

/// A limit of this inspector, not damage.
fn lerr(entry: Option<&str>, offset: Option<u64>, message: impl Into<String>) -> ZipMetaError {
    ZipMetaError { limit: true, ..zerr(entry, offset, message) }
}

fn merr(entry: &str, fault: MemberFault, offset: Option<u64>, message: impl Into<String>) -> ZipMetaError {
    ZipMetaError {
        entry: Some(entry.to_string()),
        offset,
        message: message.into(),
        member_fault: Some(fault),
        limit: false,
    }
}

/// Opens a `<v>.zip` held in memory and reads `CURRENT` and `metadata`.
///
/// Errors: not a zip, too many entries, `metadata` missing / unreadable / of an unknown version / not the JSON
/// Spark writes, an entry over `limits.max_entry_bytes`, a corrupt deflate stream or CRC mismatch.
pub fn read_version_zip(bytes: &[u8], limits: ZipLimits) -> Result<VersionZip, ZipMetaError> {
    let mut zip =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| zerr(None, None, format!("cannot open the zip: {e}")))?;
    if zip.len() > limits.max_entries {
        return Err(lerr(None, None, format!("{} entries, over the limit of {}", zip.len(), limits.max_entries)));
    }
    let mut entries = Vec::new();
    let mut headers = Vec::new();
    for i in 0..zip.len() {
        let f = zip.by_index_raw(i).map_err(|e| zerr(None, None, format!("cannot read entry #{i}: {e}")))?;
        if f.is_dir() {
            continue;
        }
        let name = f.name().map(|n| n.to_string()).unwrap_or_else(|_| format!("entry #{i}"));
        headers.push(f.header_start());
        entries.push((name, f.size()));
    }
    let names: Vec<String> = entries.iter().map(|(n, _)| n.clone()).collect();
    let header_of = |name: &str| names.iter().position(|n| n == name).map(|i| headers[i]);
    let mut current_raw = None;
    let current = match entries.iter().any(|(n, _)| n == "CURRENT") {
        true => {
            let b = read_entry(&mut zip, "CURRENT", 4096)?;
            let text = String::from_utf8_lossy(&b).trim_end_matches('\n').to_string();
            current_raw = Some(b);
            Some(text)
        }
        false => None,
    };
    let Some(meta_at) = header_of("metadata") else {
        return Err(merr(
            "metadata",
            MemberFault::Missing,
            None,
            "the zip holds no `metadata` member (Spark's file mapping): Spark unzips it and then cannot open the metadata file",
        ));
    };
    let metadata = metadata_member(&mut zip, meta_at, limits)?;
    let unexpected_empty: Vec<String> =
        entries.iter().filter(|(n, s)| *s == 0 && !n.ends_with(".log")).map(|(n, _)| n.clone()).collect();
    let manifest = match &current {
        Some(name) if !name.is_empty() && entries.iter().any(|(n, _)| n == name) => {
            let raw = read_entry(&mut zip, name, limits.max_entry_bytes)?;
            Some(super::manifest::parse_manifest(&raw))
        }
        _ => None,
    };
    let mut z = VersionZip { entries, current, metadata, manifest, unexpected_empty, member_damage: None };
    z.member_damage = member_damage(&z, current_raw.as_deref(), &header_of);
    Ok(z)
}

/// The `metadata` member of an opened zip (its local header at `meta_at`), read and parsed.
fn metadata_member(
    zip: &mut zip::ZipArchive<Cursor<&[u8]>>,
    meta_at: u64,
    limits: ZipLimits,
) -> Result<CheckpointMetadata, ZipMetaError> {
    let raw = read_entry(zip, "metadata", limits.max_entry_bytes)?;
    if raw.is_empty() {
        return Err(merr(
            "metadata",
            MemberFault::Empty,
            None,
            format!("the metadata member (local header at byte {meta_at} of the zip) is empty (0 bytes): Spark reads no version line (Cannot read RocksDB checkpoint metadata. Expected v1, but found null)"),
        ));
    }
    parse_metadata(&raw).map_err(|(off, m)| merr("metadata", MemberFault::Unparsable, off, m))
}

/// Only the `metadata` of a `<v>.zip` held in memory (its SST and log files, `numKeys`), for a reader that
/// needs no more of it (the state growth series): RocksDB's `CURRENT` and MANIFEST are neither inflated nor
/// judged, so a zip whose other members are damaged (a `CURRENT` or MANIFEST that does not inflate, a `CURRENT`
/// over 4 KiB, another member's local header) still gives what Spark recorded in its `metadata`, where
/// [`read_version_zip`] fails.
///
/// Errors: as [`read_version_zip`]'s for the zip and its `metadata` member (the entry and the fault; the
/// message of a missing member is shorter).
pub fn read_version_metadata(bytes: &[u8], limits: ZipLimits) -> Result<CheckpointMetadata, ZipMetaError> {
    let mut zip =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| zerr(None, None, format!("cannot open the zip: {e}")))?;
    if zip.len() > limits.max_entries {
        return Err(lerr(None, None, format!("{} entries, over the limit of {}", zip.len(), limits.max_entries)));
    }
    let Some(i) = zip.index_for_name("metadata") else {
        return Err(merr("metadata", MemberFault::Missing, None, "the zip holds no `metadata` member"));
    };
    let meta_at =
        zip.by_index_raw(i).map_err(|e| zerr(None, None, format!("cannot read entry #{i}: {e}")))?.header_start();
    metadata_member(&mut zip, meta_at, limits)
}

/// The first member RocksDB cannot open the checkpoint with: `CURRENT` empty, not `MANIFEST-<n>` and a
/// newline, or naming a MANIFEST the zip does not hold; that MANIFEST empty or not a log of version edits.
/// `OPTIONS-*` is not one of them: RocksDB does not read it on open. `header_of` gives a member's local header
/// offset in the zip.
pub fn member_damage(
    z: &VersionZip,
    current_raw: Option<&[u8]>,
    header_of: &dyn Fn(&str) -> Option<u64>,
) -> Option<ZipMetaError> {
    let at = |n: &str| header_of(n).map(|o| format!(" (local header at byte {o} of the zip)")).unwrap_or_default();
    // A zip without CURRENT is not judged: Spark always writes one, and what RocksDB does without it (Spark opens
    // with createIfMissing) was not observed.
    let raw = current_raw?;
    if raw.is_empty() {
        return Some(merr(
            "CURRENT",
            MemberFault::Empty,
            None,
            format!(
                "the CURRENT member{} is empty (0 bytes): RocksDB reads the name of its MANIFEST from it",
                at("CURRENT")
            ),
        ));
    }
    let name = z.current.as_deref().unwrap_or_default();
    let well_formed = raw.ends_with(b"\n")
        && name.strip_prefix("MANIFEST-").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if !well_formed {
        return Some(merr(
            "CURRENT",
            MemberFault::Unparsable,
            Some(0),
            format!("CURRENT holds {name:?}, not `MANIFEST-<number>` and a newline"),
        ));
    }
    match z.entries.iter().find(|(n, _)| n == name) {
        None => {
            return Some(merr(
                name,
                MemberFault::Missing,
                None,
                format!("CURRENT names {name}, which the zip does not hold"),
            ))
        }
        Some((_, 0)) => {
            return Some(merr(
                name,
                MemberFault::Empty,
                None,
                format!(
                "the {name} member{} is empty (0 bytes): RocksDB's manifest (the list of live SST files) has no record",
                at(name)
            ),
            ))
        }
        Some(_) => {}
    }
    if let Some(Ok(m)) = &z.manifest {
        if m.edits == 0 {
            return Some(merr(
                name,
                MemberFault::Unparsable,
                Some(0),
                format!("{name} holds no complete version edit: RocksDB finds no log number, next file number or last sequence in it"),
            ));
        }
    }
    if let Some(Err(e)) = &z.manifest {
        return Some(merr(
            name,
            MemberFault::Unparsable,
            Some(e.offset),
            format!("RocksDB's manifest cannot be read: {}", e.message),
        ));
    }
    // RocksDB does not read `OPTIONS-*` when it opens the checkpoint (Spark passes its own options): Spark 4.1.4
    // restarted on a zip whose OPTIONS member was empty (tests/data/spark/rocksdb-options-empty-4.1.4).
    None
}

/// Reads and inflates one entry, bounded by `max` bytes; checks the CRC.
pub fn read_entry(zip: &mut zip::ZipArchive<Cursor<&[u8]>>, name: &str, max: u64) -> Result<Vec<u8>, ZipMetaError> {
    let f = zip.by_name(name).map_err(|e| zerr(Some(name), None, format!("cannot open: {e}")))?;
    let data_start = f.data_start();
    let declared = f.size();
    if declared > max {
        return Err(lerr(Some(name), data_start, format!("declares {declared} bytes, over the limit of {max}")));
    }
    let mut out = Vec::with_capacity(declared as usize);
    let mut limited = f.take(max + 1);
    let mut buf = [0u8; 8192];
    loop {
        match limited.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => out.extend_from_slice(&buf[..k]),
            Err(e) => {
                return Err(zerr(
                    Some(name),
                    data_start,
                    format!("cannot inflate (failed after {} inflated bytes): {e}", out.len()),
                ))
            }
        }
    }
    if out.len() as u64 > max {
        return Err(zerr(Some(name), data_start, format!("inflates to more than {max} bytes")));
    }
    Ok(out)
}

/// Parses Spark's `metadata` file: a version line then one JSON object. Returns `(offset in the file, message)`
/// on error.
pub fn parse_metadata(raw: &[u8]) -> Result<CheckpointMetadata, (Option<u64>, String)> {
    // Spark reads the first line and compares it with `v1` (`RocksDBCheckpointMetadata.VERSION` is 1 in 3.5 to
    // 4.1): anything else is `CANNOT_LOAD_STATE_STORE.CANNOT_READ_CHECKPOINT`.
    let wrong_version = |line: &[u8]| {
        let shown: String = String::from_utf8_lossy(line).chars().take(40).collect();
        (Some(0), format!("Cannot read RocksDB checkpoint metadata. Expected v1, but found {shown:?}"))
    };
    let Some(nl) = raw.iter().position(|b| *b == b'\n') else {
        if raw.strip_suffix(b"\r").unwrap_or(raw) == b"v1" {
            return Err((Some(raw.len() as u64), "the version line v1 is not followed by the JSON".to_string()));
        }
        return Err(wrong_version(raw));
    };
    let version_line = String::from_utf8_lossy(&raw[..nl]).trim_end_matches('\r').to_string();
    if version_line != "v1" {
        return Err(wrong_version(&raw[..nl]));
    }
    let body = &raw[nl + 1..];
    let json: serde_json::Value = serde_json::from_slice(body).map_err(|e| {
        // serde_json reports line/column; convert to a byte offset in the file.
        let off = line_col_to_offset(body, e.line(), e.column()).map(|o| (o + nl + 1) as u64);
        (off, format!("metadata JSON is invalid: {e}"))
    })?;
    let obj = json.as_object().ok_or((Some(nl as u64 + 1), "metadata JSON is not an object".to_string()))?;
    let files = |key: &str, dfs_key: &str| -> Result<Vec<ImmutableFile>, (Option<u64>, String)> {
        let mut out = Vec::new();
        match obj.get(key) {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::Array(a)) => {
                for (i, f) in a.iter().enumerate() {
                    let s = |k: &str| f.get(k).and_then(|v| v.as_str()).map(str::to_string);
                    let size = f.get("sizeBytes").and_then(|v| v.as_u64());
                    match (s("localFileName"), s(dfs_key), size) {
                        (Some(l), Some(d), Some(z)) => {
                            out.push(ImmutableFile { local_file_name: l, dfs_file_name: d, size_bytes: z })
                        }
                        _ => {
                            return Err((
                                Some(nl as u64 + 1),
                                format!("{key}[{i}] lacks localFileName, {dfs_key} or a non-negative sizeBytes"),
                            ))
                        }
                    }
                }
            }
            Some(_) => return Err((Some(nl as u64 + 1), format!("{key} is not an array"))),
        }
        Ok(out)
    };
    let sst_files = files("sstFiles", "dfsSstFileName")?;
    let log_files = files("logFiles", "dfsLogFileName")?;
    let int = |k: &str| obj.get(k).and_then(|v| v.as_i64());
    let column_family_mapping = obj
        .get("columnFamilyMapping")
        .and_then(|v| v.as_object())
        .map(|m| m.iter().filter_map(|(k, v)| v.as_i64().map(|i| (k.clone(), i))).collect())
        .unwrap_or_default();
    let column_family_type_map = obj
        .get("columnFamilyTypeMap")
        .and_then(|v| v.as_object())
        .map(|m| m.iter().filter_map(|(k, v)| v.as_bool().map(|b| (k.clone(), b))).collect())
        .unwrap_or_default();
    Ok(CheckpointMetadata {
        version_line,
        sst_files,
        log_files,
        num_keys: int("numKeys"),
        num_internal_keys: int("numInternalKeys"),
        column_family_mapping,
        column_family_type_map,
        max_column_family_id: int("maxColumnFamilyId"),
    })
}

fn line_col_to_offset(body: &[u8], line: usize, column: usize) -> Option<usize> {
    if line == 0 {
        return None;
    }
    let mut cur_line = 1;
    for (i, b) in body.iter().enumerate() {
        if cur_line == line {
            return Some((i + column.saturating_sub(1)).min(body.len()));
        }
        if *b == b'\n' {
            cur_line += 1;
        }
    }
    Some(body.len())
}

/// A problem with the SST/log files a version's metadata lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileIssue {
    /// A listed file is not in the store directory (Spark: `FileNotFoundException` while copying).
    Missing {
        /// Path relative to the store directory (`SSTs/<dfs name>`).
        path: String,
        /// Size the metadata expects.
        expected: u64,
    },
    /// A listed file has another size (Spark 4.x: `CANNOT_LOAD_STATE_STORE.UNEXPECTED_FILE_SIZE`).
    WrongSize {
        /// Path relative to the store directory.
        path: String,
        /// Size the metadata expects.
        expected: u64,
        /// Size on disk.
        found: u64,
    },
    /// The DFS name does not follow `<local name without extension>-<uuid>.<extension>`.
    BadName {
        /// The DFS file name.
        dfs_name: String,
        /// The local file name.
        local_name: String,
    },
}

/// Checks the files of `meta` against the store directory's listing (`SSTs/<name>` and `logs/<name>` paths
/// relative to the store directory, with sizes).
pub fn check_files(meta: &CheckpointMetadata, listing: &[(String, u64)]) -> Vec<FileIssue> {
    let mut out = Vec::new();
    let check = |f: &ImmutableFile, dir: &str, out: &mut Vec<FileIssue>| {
        let path = format!("{dir}/{}", f.dfs_file_name);
        match listing.iter().find(|(p, _)| *p == path) {
            None => out.push(FileIssue::Missing { path, expected: f.size_bytes }),
            Some((_, s)) if *s != f.size_bytes => {
                out.push(FileIssue::WrongSize { path, expected: f.size_bytes, found: *s })
            }
            Some(_) => {}
        }
        let (base, ext) = match f.local_file_name.rsplit_once('.') {
            Some((b, e)) => (b, e),
            None => (f.local_file_name.as_str(), ""),
        };
        let ok = f
            .dfs_file_name
            .strip_prefix(base)
            .and_then(|r| r.strip_prefix('-'))
            .is_some_and(|r| r.strip_suffix(ext).and_then(|u| u.strip_suffix('.')).is_some_and(|u| u.len() == 36));
        if !ok {
            out.push(FileIssue::BadName { dfs_name: f.dfs_file_name.clone(), local_name: f.local_file_name.clone() });
        }
    };
    for f in &meta.sst_files {
        check(f, "SSTs", &mut out);
    }
    for f in &meta.log_files {
        check(f, "logs", &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_v1_as_spark_writes_it() {
        let raw = b"v1\n{\"sstFiles\":[{\"localFileName\":\"000015.sst\",\"dfsSstFileName\":\"000015-e2a2fbe2-210b-4fdb-9a4c-efcbcc907b24.sst\",\"sizeBytes\":1201}],\"numKeys\":1,\"numInternalKeys\":0,\"columnFamilyMapping\":{\"default\":1,\"cnt\":2},\"columnFamilyTypeMap\":{\"default\":false,\"cnt\":false},\"maxColumnFamilyId\":2}";
        let m = parse_metadata(raw).unwrap();
        assert_eq!(m.sst_files.len(), 1);
        assert_eq!(m.sst_files[0].size_bytes, 1201);
        assert_eq!(m.num_keys, Some(1));
        assert_eq!(m.column_family_mapping, vec![("default".to_string(), 1), ("cnt".to_string(), 2)]);
        assert_eq!(m.max_column_family_id, Some(2));
        let listing = vec![("SSTs/000015-e2a2fbe2-210b-4fdb-9a4c-efcbcc907b24.sst".to_string(), 1200)];
        assert_eq!(
            check_files(&m, &listing),
            vec![FileIssue::WrongSize {
                path: "SSTs/000015-e2a2fbe2-210b-4fdb-9a4c-efcbcc907b24.sst".into(),
                expected: 1201,
                found: 1200
            }]
        );
        assert_eq!(check_files(&m, &[]).len(), 1);
    }

    #[test]
    fn metadata_errors_carry_offsets() {
        let e = parse_metadata(b"v3\n{}").unwrap_err();
        assert!(e.1.contains("Expected v1"));
        let e = parse_metadata(b"v1\n{\"sstFiles\":[").unwrap_err();
        assert!(e.0.unwrap() >= 3, "{e:?}");
        assert!(parse_metadata(b"v1").is_err());
        assert!(parse_metadata(b"v1\n{\"sstFiles\":[{\"localFileName\":\"a.sst\"}]}").is_err());
    }

    fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        use std::io::Write;
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, data) in files {
            let o = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
            w.start_file(*name, o).unwrap();
            w.write_all(data).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    const META: &[u8] = b"v1\n{\"sstFiles\":[],\"numKeys\":0}";

    /// `read_version_metadata` gives `read_version_zip`'s metadata, with the same errors for `metadata`, and
    /// neither inflates nor judges `CURRENT` and the MANIFEST (the growth series reads nothing else).
    #[test]
    fn metadata_alone_is_the_zips_metadata() {
        let meta: &[u8] = b"v1\n{\"sstFiles\":[{\"localFileName\":\"000008.sst\",\"dfsSstFileName\":\"000008-x.sst\",\"sizeBytes\":1234}],\"numKeys\":7}";
        let good = zip_of(&[("CURRENT", b"MANIFEST-000005\n"), ("MANIFEST-000005", b"garbage"), ("metadata", meta)]);
        let whole = read_version_zip(&good, ZipLimits::default()).expect("the zip reads");
        assert!(whole.member_damage.is_some(), "the MANIFEST is damage to a load");
        let alone = read_version_metadata(&good, ZipLimits::default()).expect("the metadata reads");
        assert_eq!(alone, whole.metadata);
        assert_eq!(alone.num_keys, Some(7));
        assert_eq!(alone.sst_files.len(), 1);
        // A CURRENT past read_version_zip's 4 KiB is an error there, not here: it is not read.
        let long = vec![b'M'; 5000];
        let z = zip_of(&[("CURRENT", &long), ("metadata", meta)]);
        assert!(read_version_zip(&z, ZipLimits::default()).is_err());
        assert_eq!(read_version_metadata(&z, ZipLimits::default()).ok(), Some(alone));
        for (files, fault) in [
            (vec![("CURRENT", &b"MANIFEST-000005\n"[..])], MemberFault::Missing),
            (vec![("metadata", &b""[..])], MemberFault::Empty),
            (vec![("metadata", &b"v1\n{\"sstFiles\":["[..])], MemberFault::Unparsable),
        ] {
            let z = zip_of(&files);
            let a = read_version_metadata(&z, ZipLimits::default()).expect_err("no metadata");
            let b = read_version_zip(&z, ZipLimits::default()).expect_err("no metadata");
            assert_eq!((a.entry.as_deref(), a.member_fault), (Some("metadata"), Some(fault)));
            assert_eq!((b.entry.as_deref(), b.member_fault), (Some("metadata"), Some(fault)));
        }
        assert!(read_version_metadata(b"not a zip", ZipLimits::default()).is_err());
        let few = ZipLimits { max_entries: 2, ..ZipLimits::default() };
        assert!(read_version_metadata(&good, few).expect_err("3 entries").limit);
    }

    /// Each damaged member a restart opens, as crafted zips: the fault and the member the error names.
    #[test]
    fn members_a_restart_opens() {
        let damage = |files: &[(&str, &[u8])]| match read_version_zip(&zip_of(files), ZipLimits::default()) {
            Ok(z) => z.member_damage.map(|e| (e.entry.unwrap_or_default(), e.member_fault)),
            Err(e) => Some((e.entry.unwrap_or_default(), e.member_fault)),
        };
        let manifest: &[u8] = &[];
        let good = [("CURRENT", &b"MANIFEST-000005\n"[..]), ("OPTIONS-000007", b"x"), ("metadata", META)];
        // No MANIFEST member: CURRENT names one the zip does not hold.
        assert_eq!(damage(&good), Some(("MANIFEST-000005".into(), Some(MemberFault::Missing))));
        let with_manifest = |m: &'static [u8]| {
            let mut v = good.to_vec();
            v.push(("MANIFEST-000005", m));
            v
        };
        assert_eq!(damage(&with_manifest(manifest)), Some(("MANIFEST-000005".into(), Some(MemberFault::Empty))));
        assert_eq!(
            damage(&with_manifest(b"garbage")).map(|d| d.1),
            Some(Some(MemberFault::Unparsable)),
            "a MANIFEST that is not a log of version edits"
        );
        let mut v = with_manifest(b"garbage");
        v[0] = ("CURRENT", b"");
        assert_eq!(damage(&v), Some(("CURRENT".into(), Some(MemberFault::Empty))));
        v[0] = ("CURRENT", b"MANIFEST-000005");
        assert_eq!(damage(&v), Some(("CURRENT".into(), Some(MemberFault::Unparsable))), "no newline");
        v[0] = ("CURRENT", b"MANIFEST-000005\n");
        v[2] = ("metadata", b"");
        assert_eq!(damage(&v), Some(("metadata".into(), Some(MemberFault::Empty))));
        v[2] = ("metadata", b"v1\n{\"sstFiles\":[");
        assert_eq!(damage(&v), Some(("metadata".into(), Some(MemberFault::Unparsable))));
        v.remove(2);
        assert_eq!(damage(&v), Some(("metadata".into(), Some(MemberFault::Missing))));
        // An empty OPTIONS member is not damage (RocksDB does not read it on open; Spark 4.1.4 restarted on it),
        // nor is a zip without CURRENT judged.
        assert_eq!(damage(&[("OPTIONS-000007", b""), ("metadata", META)]), None);
    }
}
