//! Integrity of state files without decoding rows: a RocksDB `<v>.zip` must open as a zip whose entries
//! inflate with matching CRCs, hold Spark's `metadata` file, and name SST files that exist in `SSTs/`
//! with the recorded sizes (FORMATS.md §11.2); a compressed `.delta` / `.snapshot` / `.changelog` must
//! not be empty (framing and end-marker checks use the codec module when it is present).

use crate::model::Problem;
use crate::state_files::StoreFiles;
use std::io::{Cursor, Read};

/// Cap on one entry inflated from a RocksDB zip (its files are small: CURRENT, OPTIONS, MANIFEST, metadata).
const MAX_ZIP_ENTRY: u64 = 64 * 1024 * 1024;

/// Checks a RocksDB checkpoint zip. Returns the problem (if any) and the Java exception Spark's reader
/// throws on it (`java.util.zip.ZipException`, `java.io.FileNotFoundException` for a missing SST).
pub fn check_rocksdb_zip(
    path: &str,
    bytes: &[u8],
    store: &StoreFiles,
) -> (Option<Problem>, Option<String>) {
    let prob = |offset: Option<u64>, reason: String| {
        Some(Problem {
            path: path.to_string(),
            offset,
            reason,
        })
    };
    let mut zip = match zip::ZipArchive::new(Cursor::new(bytes)) {
        Ok(z) => z,
        Err(e) => {
            return (
                prob(None, format!("not a readable zip: {e}")),
                Some("java.util.zip.ZipException".into()),
            )
        }
    };
    let mut metadata: Option<Vec<u8>> = None;
    for i in 0..zip.len() {
        let mut f = match zip.by_index(i) {
            Ok(f) => f,
            Err(e) => {
                return (
                    prob(None, format!("zip entry #{i}: {e}")),
                    Some("java.util.zip.ZipException".into()),
                )
            }
        };
        let name = f
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| format!("#{i}"));
        let start = f.data_start().unwrap_or(0);
        let declared = f.size();
        if declared > MAX_ZIP_ENTRY {
            return (
                prob(
                    Some(start),
                    format!("zip entry {name} declares {declared} bytes"),
                ),
                Some("java.util.zip.ZipException".into()),
            );
        }
        let mut buf = Vec::with_capacity(declared.min(MAX_ZIP_ENTRY) as usize);
        if let Err(e) = (&mut f).take(MAX_ZIP_ENTRY + 1).read_to_end(&mut buf) {
            return (
                prob(
                    Some(start),
                    format!("zip entry {name} (data at byte {start}) does not inflate: {e}"),
                ),
                Some("java.util.zip.ZipException".into()),
            );
        }
        if name == "metadata" {
            metadata = Some(buf);
        }
    }
    let Some(meta) = metadata else {
        return (
            prob(None, "the zip has no Spark 'metadata' entry".into()),
            Some("java.io.FileNotFoundException".into()),
        );
    };
    let text = String::from_utf8_lossy(&meta);
    let mut lines = text.lines();
    let _version = lines.next();
    if let Some(json) = lines.next() {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(json) {
            for sst in v
                .get("sstFiles")
                .and_then(|s| s.as_array())
                .into_iter()
                .flatten()
            {
                let Some(dfs) = sst.get("dfsSstFileName").and_then(|x| x.as_str()) else {
                    continue;
                };
                let size = sst.get("sizeBytes").and_then(|x| x.as_u64());
                let found = store
                    .ssts
                    .iter()
                    .find(|f| f.path.ends_with(&format!("/SSTs/{dfs}")));
                match (found, size) {
                    (None, _) => {
                        return (
                            prob(
                                None,
                                format!(
                                "metadata names {dir}/SSTs/{dfs}, which is not in the checkpoint",
                                dir = store.dir
                            ),
                            ),
                            Some("java.io.FileNotFoundException".into()),
                        )
                    }
                    (Some(f), Some(s)) if f.size != s => {
                        return (
                            prob(
                                None,
                                format!(
                                    "{} has {} bytes, the zip's metadata records {s}",
                                    f.path, f.size
                                ),
                            ),
                            Some("org.apache.spark.SparkException".into()),
                        )
                    }
                    _ => {}
                }
            }
        }
    }
    (None, None)
}

/// Checks a compressed state stream file (`.delta`, `.snapshot`, `.changelog`).
pub fn check_stream_file(path: &str, bytes: &[u8]) -> (Option<Problem>, Option<String>) {
    if bytes.is_empty() {
        return (
            Some(Problem {
                path: path.to_string(),
                offset: Some(0),
                reason: "the file is empty (0 bytes): no compression header".into(),
            }),
            Some("java.io.EOFException".into()),
        );
    }
    (None, None)
}
