//! Stage 7, state growth: state size per version and operator, from the listing and the RocksDB zips'
//! metadata.

use super::{Reader, MAX_STATE_FILE_BYTES};
use crate::model::{Checkpoint, GrowthPoint, Unverified};
use crate::state_files;
use std::collections::{BTreeMap, BTreeSet};

/// Most partitions per operator whose RocksDB zip metadata is read for the growth series.
const MAX_GROWTH_PARTITIONS: usize = 8;

/// State size per version and operator: HDFS from the listing (snapshot and delta sizes); RocksDB from the
/// listing (changelog sizes) and the `metadata` of each `<v>.zip` of the first partitions (SST bytes,
/// `numKeys`), each zip charged to the byte budget. Only `metadata` is read: a zip whose other members are
/// damaged still gives what Spark recorded (the integrity check of a restart's zip reports the damage).
pub(crate) fn read_state_growth(cp: &mut Checkpoint, rd: &mut Reader<'_>) {
    let ops: Vec<i64> = cp.state.operators.keys().copied().collect();
    for op in ops {
        let mut points: BTreeMap<i64, GrowthPoint> = BTreeMap::new();
        let stores: Vec<(u32, state_files::StoreFiles)> = cp.state.operators[&op]
            .partitions
            .iter()
            .flat_map(|(p, pf)| pf.stores.values().map(move |s| (*p, s.clone())))
            .collect();
        let mut zip_parts: BTreeSet<u32> = BTreeSet::new();
        for (part, s) in &stores {
            for (v, f) in &s.deltas {
                points.entry(*v).or_insert_with(|| GrowthPoint { version: *v, ..Default::default() }).delta_bytes +=
                    f.size;
            }
            for (v, fs) in &s.changelogs {
                let size: u64 = fs.iter().map(|f| f.file.size).sum();
                points.entry(*v).or_insert_with(|| GrowthPoint { version: *v, ..Default::default() }).delta_bytes +=
                    size;
            }
            for (v, f) in &s.snapshots {
                let g = points.entry(*v).or_insert_with(|| GrowthPoint { version: *v, ..Default::default() });
                g.partitions += 1;
                g.snapshot_bytes = g.snapshot_bytes.saturating_add(f.size);
            }
            if s.zips.is_empty() || (zip_parts.len() >= MAX_GROWTH_PARTITIONS && !zip_parts.contains(part)) {
                continue;
            }
            zip_parts.insert(*part);
            for (v, fs) in &s.zips {
                // Several zips of one version exist only with checkpoint format v2 retries: take the first.
                let Some(f) = fs.first() else { continue };
                if f.file.size > rd.budget_left {
                    cp.unverified.push(Unverified {
                        path: f.file.path.clone(),
                        bytes: f.file.size,
                        what: "zip metadata not read for the state growth series".into(),
                    });
                    continue;
                }
                rd.budget_left -= f.file.size;
                let meta = rd
                    .read(&f.file.path, MAX_STATE_FILE_BYTES)
                    .ok()
                    .and_then(|b| crate::state::rocksdb::zip_meta::read_version_metadata(&b, Default::default()).ok());
                let g = points.entry(*v).or_insert_with(|| GrowthPoint { version: *v, ..Default::default() });
                g.partitions += 1;
                match meta {
                    Some(m) => {
                        g.snapshot_bytes = g
                            .snapshot_bytes
                            .saturating_add(m.sst_files.iter().fold(0u64, |a, f| a.saturating_add(f.size_bytes)));
                        g.keys =
                            if g.partitions == 1 { m.num_keys } else { g.keys.zip(m.num_keys).map(|(a, b)| a + b) };
                    }
                    None => g.keys = None,
                }
            }
        }
        cp.state_growth.insert(op, points.into_values().collect());
    }
}
