//! Loading a RocksDB store version (Spark's `RocksDB.load`): the plan's snapshot zip and its SSTs, then its
//! changelogs, with auto snapshot repair ([`load_store`]); a given plan executed as is ([`load_from_plan`]); a
//! version checked for loadability ([`verify_version`]). Each takes the store folder's listing
//! ([`crate::state_files::StoreFiles`]) made by the caller (`*_listed`, `load_from_plan_in`) or lists it itself.

use super::*;
/// Plans the load and reads its snapshot; with auto snapshot repair, unreadable snapshots are skipped (and
/// returned) and the plan is redone without them. `store`: the listing of `store_dir`
/// ([`crate::state_files::store_files`]).
#[allow(clippy::type_complexity)]
fn plan_and_read_snapshot(
    archive: &mut dyn Archive,
    store_dir: &str,
    store: &crate::state_files::StoreFiles,
    version: i64,
    opts: &LoadOptions,
    limits: &LoadLimits,
) -> Result<(LoadPlan, Option<Snapshot>, Vec<RocksDbError>), RocksDbError> {
    let mut skip: Vec<String> = Vec::new();
    let mut skipped = Vec::new();
    let immutable = listing_of(store, "").1;
    loop {
        let plan = match plan_load_skipping(archive, store, version, opts, &skip) {
            Ok(p) => p,
            // The repair found no usable base: report the first snapshot failure, as Spark does.
            Err(e) => return Err(skipped.into_iter().next().unwrap_or(e)),
        };
        if let Some(first) = skipped.first() {
            // `AutoSnapshotLoader`: older snapshots (the empty version 0 included) are only tried within
            // maxChangeFileReplay versions of the version loaded.
            let base = plan.snapshot.as_ref().map_or(0, |(v, _)| *v);
            let max = opts.max_change_file_replay.unwrap_or(DEFAULT_MAX_CHANGE_FILE_REPLAY);
            if version.saturating_sub(base) > max {
                let mut e = first.clone();
                e.message = format!(
                    "{}; auto snapshot repair found no readable snapshot within maxChangeFileReplay={max} versions of {version}",
                    e.message
                );
                e.error_class = Some("CANNOT_LOAD_STATE_STORE.AUTO_SNAPSHOT_REPAIR_FAILED");
                return Err(e);
            }
        }
        let Some((_, zip_path)) = &plan.snapshot else { return Ok((plan, None, skipped)) };
        match read_snapshot_listed(archive, store_dir, zip_path, &immutable, limits) {
            Ok(s) => return Ok((plan, Some(s), skipped)),
            Err(e) if opts.auto_snapshot_repair && skip.len() < 64 => {
                skip.push(zip_path.clone());
                skipped.push(e);
            }
            Err(e) => return Err(e),
        }
    }
}

/// Rebuilds the raw key → value map of the store in `store_dir` (a path inside the archive such as
/// `state/0/1` or `state/0/1/left-keyToNumValues`) at `version` (= batch id + 1), as Spark's `RocksDB.load` does.
///
/// Errors name the failing file and byte offset and, where Spark fails the same way, its error class.
pub fn load_store(
    archive: &mut dyn Archive,
    store_dir: &str,
    version: i64,
    opts: &LoadOptions,
) -> Result<RawStore, RocksDbError> {
    let store = crate::state_files::store_files(archive.entries(), store_dir);
    load_store_listed(archive, store_dir, &store, version, opts)
}

/// [`load_store`] of a store folder listed already: `store` is
/// [`crate::state_files::store_files`]`(archive.entries(), store_dir)` (or the same listing through an index,
/// [`crate::state_files::store_files_in`]); the archive is not listed again.
pub fn load_store_listed(
    archive: &mut dyn Archive,
    store_dir: &str,
    listed: &crate::state_files::StoreFiles,
    version: i64,
    opts: &LoadOptions,
) -> Result<RawStore, RocksDbError> {
    let limits = opts.limits.unwrap_or_default();
    let (plan, snap, skipped) = plan_and_read_snapshot(archive, store_dir, listed, version, opts, &limits)?;
    let mut store = RawStore { version, skipped_snapshots: skipped, ..Default::default() };
    if let Some(snap) = snap {
        store.entries = snap.entries;
        let meta = snap.zip.metadata;
        store.column_families = meta
            .column_family_mapping
            .iter()
            .filter_map(|(n, id)| u16::try_from(*id).ok().map(|i| (n.clone(), i)))
            .collect();
        store.metadata = Some(meta);
    }
    for (_, path) in &plan.changelogs {
        let cl = read_changelog_file(archive, path, &limits)?;
        apply_changelog(&mut store.entries, cl.records);
    }
    if store.column_families.is_empty() && !plan.changelogs.is_empty() {
        // Rebuilt from changelogs alone: the column family ids are only recorded in zip metadata, and Spark keeps
        // them stable across versions, so take them from the nearest other snapshot of the store.
        store.column_families = column_families_in(archive, &listing_of(listed, "").0, version, &limits);
    }
    store.plan = plan;
    Ok(store)
}

/// Rebuilds a store at `version` from exactly the files of `plan` (its snapshot zip, then its changelogs in
/// order), as Spark's `RocksDB.loadFromSnapshot` does for the State Data Source's `snapshotStartBatchId` (and
/// the read stage for a restart chain it planned): no planning, no repair. Errors as [`load_store`] (the file and byte offset, Spark's error class).
pub fn load_from_plan(
    archive: &mut dyn Archive,
    store_dir: &str,
    version: i64,
    plan: &LoadPlan,
    limits: &LoadLimits,
) -> Result<RawStore, RocksDbError> {
    let listing = list_store(archive, store_dir);
    load_from_listing(archive, store_dir, version, plan, &listing, limits)
}

/// [`load_from_plan`] for a store the read stage listed already (`store`: its files relative to the checkpoint
/// root, `prefix`: the root inside the archive): the archive is not listed again.
pub fn load_from_plan_in(
    archive: &mut dyn Archive,
    store: &crate::state_files::StoreFiles,
    prefix: &str,
    plan: &LoadPlan,
    version: i64,
    limits: &LoadLimits,
) -> Result<RawStore, RocksDbError> {
    let listing = listing_of(store, prefix);
    load_from_listing(archive, &format!("{prefix}{}", store.dir), version, plan, &listing, limits)
}

/// [`load_from_plan`] of a store folder listed already: `store` is
/// [`crate::state_files::store_files`]`(archive.entries(), store_dir)` (or the same listing through an index);
/// the archive is not listed again.
pub fn load_from_plan_listed(
    archive: &mut dyn Archive,
    store_dir: &str,
    store: &crate::state_files::StoreFiles,
    version: i64,
    plan: &LoadPlan,
    limits: &LoadLimits,
) -> Result<RawStore, RocksDbError> {
    load_from_listing(archive, store_dir, version, plan, &listing_of(store, ""), limits)
}

fn load_from_listing(
    archive: &mut dyn Archive,
    store_dir: &str,
    version: i64,
    plan: &LoadPlan,
    listing: &StoreListing,
    limits: &LoadLimits,
) -> Result<RawStore, RocksDbError> {
    let mut store = RawStore { version, ..Default::default() };
    if let Some((_, zip_path)) = &plan.snapshot {
        let raw = read_file(archive, zip_path, limits.max_file_bytes)?;
        let snap = read_snapshot_of(archive, store_dir, zip_path, &raw, &listing.1, limits)?;
        store.entries = snap.entries;
        store.column_families = column_family_ids(&snap.zip.metadata);
        store.metadata = Some(snap.zip.metadata);
    }
    for (_, path) in &plan.changelogs {
        let cl = read_changelog_file(archive, path, limits)?;
        apply_changelog(&mut store.entries, cl.records);
    }
    if store.column_families.is_empty() && !plan.changelogs.is_empty() {
        // As in [`load_store`]: rebuilt from changelogs alone, the column family ids come from another zip.
        store.column_families = column_families_in(archive, &listing.0, version, limits);
    }
    store.plan = plan.clone();
    Ok(store)
}

/// A zip metadata's `columnFamilyMapping` as the ids a key's 2-byte prefix holds (ids past `u16` dropped).
fn column_family_ids(m: &zip_meta::CheckpointMetadata) -> Vec<(String, u16)> {
    m.column_family_mapping.iter().filter_map(|(n, id)| u16::try_from(*id).ok().map(|i| (n.clone(), i))).collect()
}

/// A store version rebuilt by a caller that reads the files of its restart chain itself (the read stage's
/// integrity pass), so that no file is read twice: the base zip's [`Snapshot`] as
/// [`crate::state_integrity::check_rocksdb_zip_keeping`] decoded it, then each changelog's records in chain order
/// ([`crate::state_integrity::check_changelog_keeping`]). [`Rebuild::finish`] gives the very store
/// [`load_from_plan_in`] loads from the same chain, or `None` when a file was not fed (the caller then loads the
/// chain itself).
#[derive(Debug, Default)]
pub struct Rebuild {
    store: RawStore,
    /// Files of the chain fed so far, in order.
    fed: usize,
    /// Changelogs among them.
    changelogs: usize,
    /// A file was fed out of order or did not decode.
    broken: bool,
}

impl Rebuild {
    /// The chain's `file`-th file is its base zip: its snapshot, `None` when it was not decoded (the SSTs over
    /// the byte budget, damage), which abandons the rebuild. Only the chain's first file can be its base.
    pub fn base(&mut self, file: usize, snapshot: Option<Snapshot>) {
        match snapshot {
            Some(snap) if file == 0 && self.fed == 0 && !self.broken => {
                self.store.entries = snap.entries;
                self.store.column_families = column_family_ids(&snap.zip.metadata);
                self.store.metadata = Some(snap.zip.metadata);
                self.fed = 1;
            }
            _ => self.broken = true,
        }
    }

    /// The chain's `file`-th file is a changelog: its records, replayed as a load does ([`apply_changelog`]);
    /// `None` when they did not read, which abandons the rebuild.
    pub fn changelog(&mut self, file: usize, changelog: Option<changelog::Changelog>) {
        match changelog {
            Some(cl) if file == self.fed && !self.broken => {
                apply_changelog(&mut self.store.entries, cl.records);
                self.fed += 1;
                self.changelogs += 1;
            }
            _ => self.broken = true,
        }
    }

    /// The store of `chain` (paths relative to the checkpoint root, which is `prefix` in `archive`; `store`: the
    /// store's files as listed), as [`load_from_plan_in`] loads it from the same files; `None` unless every file
    /// of the chain was fed in order. A store rebuilt from changelogs only takes its column family ids from
    /// another zip of the store, as a load does.
    pub fn finish(
        self,
        archive: &mut dyn Archive,
        store: &crate::state_files::StoreFiles,
        prefix: &str,
        chain: &crate::restart_chain::LoadChain,
        limits: &LoadLimits,
    ) -> Option<RawStore> {
        if self.broken || self.fed != chain.steps.len() {
            return None;
        }
        let mut raw = self.store;
        if raw.column_families.is_empty() && self.changelogs > 0 {
            raw.column_families = column_families_in(archive, &listing_of(store, prefix).0, chain.version, limits);
        }
        raw.version = chain.version;
        raw.plan = super::plan::load_plan_in(chain, prefix);
        Some(raw)
    }
}

/// The `columnFamilyMapping` of the nearest readable zip among the store's state files (`files`, as listed
/// already): newest at or below `version`, else the oldest above it; empty when none has one.
fn column_families_in(
    archive: &mut dyn Archive,
    files: &[(StateFileName, String)],
    version: i64,
    limits: &LoadLimits,
) -> Vec<(String, u16)> {
    let mut zips: Vec<(i64, String)> =
        files.iter().filter(|(f, _)| f.is_zip).map(|(f, p)| (f.version, p.clone())).collect();
    // Nearest first: versions <= version descending, then versions above ascending.
    zips.sort_by_key(|(v, _)| if *v <= version { (0, version - v) } else { (1, v - version) });
    for (_, path) in zips {
        let Ok(raw) = archive.read(&path, limits.max_file_bytes) else { continue };
        let Ok(z) = zip_meta::read_version_zip(&raw, limits.zip) else { continue };
        let cfs = column_family_ids(&z.metadata);
        if !cfs.is_empty() {
            return cfs;
        }
    }
    Vec::new()
}

/// What [`verify_version`] checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifySummary {
    /// The files used.
    pub plan: LoadPlan,
    /// Number of keys in the rebuilt store.
    pub num_keys: usize,
    /// Entries of the snapshot zip that are empty although they should not be
    /// (`STATE_STORE_UNEXPECTED_EMPTY_FILE_IN_ROCKSDB_ZIP` in Spark 4.1+).
    pub unexpected_empty: Vec<String>,
    /// Unreadable snapshots skipped by auto snapshot repair (only with [`LoadOptions::auto_snapshot_repair`]).
    pub skipped_snapshots: Vec<RocksDbError>,
}

/// Checks that a RocksDB store version is loadable: the plan's zip opens, its metadata reads, the SSTs it lists
/// exist with the right sizes and decode (block checksums verified), the changelog chain is present and every
/// changelog decodes. Returns the first failure with its file and offset.
pub fn verify_version(
    archive: &mut dyn Archive,
    store_dir: &str,
    version: i64,
    opts: &LoadOptions,
) -> Result<VerifySummary, RocksDbError> {
    let store = crate::state_files::store_files(archive.entries(), store_dir);
    verify_version_listed(archive, store_dir, &store, version, opts)
}

/// [`verify_version`] of a store folder listed already (`store`, as [`load_store_listed`] takes it).
pub fn verify_version_listed(
    archive: &mut dyn Archive,
    store_dir: &str,
    store: &crate::state_files::StoreFiles,
    version: i64,
    opts: &LoadOptions,
) -> Result<VerifySummary, RocksDbError> {
    let limits = opts.limits.unwrap_or_default();
    let (plan, snap, skipped_snapshots) = plan_and_read_snapshot(archive, store_dir, store, version, opts, &limits)?;
    let mut map = BTreeMap::new();
    let mut unexpected_empty = Vec::new();
    if let (Some(snap), Some((_, zip_path))) = (snap, &plan.snapshot) {
        unexpected_empty = snap.zip.unexpected_empty.iter().map(|e| format!("{zip_path}!/{e}")).collect();
        map = snap.entries;
    }
    for (_, path) in &plan.changelogs {
        let cl = read_changelog_file(archive, path, &limits)?;
        apply_changelog(&mut map, cl.records);
    }
    Ok(VerifySummary { plan, num_keys: map.len(), unexpected_empty, skipped_snapshots })
}
