//! The RocksDB view of a store's files: its state files (`<v>[_<id>].zip` / `.changelog`, by parsed name) and its
//! immutable files (`SSTs/`, `logs/`), from the one store listing ([`crate::state_files::StoreFiles`]) — the
//! archive's (State Data Source loaders) or the read stage's model (diagnosis).

use super::StateFileName;
use crate::archive::Archive;

/// State files (parsed name, archive path) and immutable files (`SSTs/<f>`, `logs/<f>` relative to the store
/// directory, size) of a store directory.
pub(super) type StoreListing = (Vec<(StateFileName, String)>, Vec<(String, u64)>);

/// The RocksDB view of the one store listing ([`crate::state_files::store_files`]).
pub(super) fn list_store(archive: &dyn Archive, store_dir: &str) -> StoreListing {
    listing_of(&crate::state_files::store_files(archive.entries(), store_dir), "")
}

/// The RocksDB view of a store's listing (`store`'s paths are archive paths once `prefix` is put before them;
/// the read stage's model holds them relative to the checkpoint root).
pub(super) fn listing_of(store: &crate::state_files::StoreFiles, prefix: &str) -> StoreListing {
    let dir_prefix = if store.dir.is_empty() { String::new() } else { format!("{}/", store.dir) };
    let state_files = (store.zips.values().flatten().map(|f| (f, true)))
        .chain(store.changelogs.values().flatten().map(|f| (f, false)))
        .map(|(f, is_zip)| {
            let name = StateFileName { version: f.version, unique_id: f.unique_id.clone(), is_zip };
            (name, format!("{prefix}{}", f.file.path))
        })
        .collect();
    let immutable = store
        .ssts
        .iter()
        .chain(&store.wal_logs)
        .filter_map(|f| f.path.strip_prefix(&dir_prefix).map(|rel| (rel.to_string(), f.size)))
        .collect();
    (state_files, immutable)
}

/// The SST and log files of a store (relative to its folder, with sizes), from a listing already made (the read
/// stage's model): what a RocksDB zip's metadata is checked against
/// ([`crate::state_integrity::check_rocksdb_zip`]).
pub fn immutable_files(store: &crate::state_files::StoreFiles) -> Vec<(String, u64)> {
    listing_of(store, "").1
}
