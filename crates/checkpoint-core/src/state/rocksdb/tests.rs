//! Tests of the RocksDB provider on the real fixtures.

use super::*;
use crate::archive::{Archive, MemArchive};
use crate::testutil::{fixture_names, fixtures_dir, open_fixture};

/// Fixtures written with the RocksDB provider (by their recorded facts, not by name).
fn rocksdb_fixtures() -> Vec<String> {
    fixture_names()
        .into_iter()
        .filter(|n| {
            let rec = crate::testutil::fixture_record(n);
            rec["facts"]["state_store_provider"].as_str().is_some_and(|p| p.contains("RocksDB"))
                || rec["query"]["confs"]["spark.sql.streaming.stateStore.providerClass"]
                    .as_str()
                    .is_some_and(|p| p.contains("RocksDB"))
        })
        .collect()
}

/// Store directories `state/<op>/<part>` that hold RocksDB files.
fn store_dirs(a: &dyn Archive) -> Vec<String> {
    let mut dirs: Vec<String> = a
        .entries()
        .iter()
        .filter(|e| !e.is_dir)
        .filter_map(|e| {
            let (dir, file) = e.path.rsplit_once('/')?;
            parse_state_file_name(file)?;
            dir.starts_with("state/").then(|| dir.to_string())
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// The last committed batch id of the archive (`commits/<n>`).
fn last_commit(a: &dyn Archive) -> Option<i64> {
    a.entries().iter().filter_map(|e| e.path.strip_prefix("commits/")?.parse::<i64>().ok()).max()
}

/// The commit's stateUniqueIds for operator/partition (checkpoint format v2).
fn commit_unique_id(a: &mut dyn Archive, batch: i64, op: &str, part: usize) -> Option<String> {
    let raw = a.read(&format!("commits/{batch}"), 1 << 20).ok()?;
    let text = String::from_utf8(raw).ok()?;
    let json: serde_json::Value = serde_json::from_str(text.lines().nth(1)?).ok()?;
    json["stateUniqueIds"][op][part][0].as_str().map(str::to_string)
}

fn golden_rows(name: &str) -> Option<Vec<serde_json::Value>> {
    let p = fixtures_dir().join(format!("{name}.state.jsonl"));
    let text = std::fs::read_to_string(p).ok()?;
    Some(text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("golden row")).collect())
}

#[test]
fn every_rocksdb_store_loads_at_the_last_committed_version_with_spark_row_counts() {
    let names = rocksdb_fixtures();
    assert!(names.len() >= 10, "expected the RocksDB fixtures, found {names:?}");
    let mut checked_golden = 0;
    for name in &names {
        let mut a = open_fixture(name);
        let Some(batch) = last_commit(&a) else { continue };
        let version = batch + 1;
        let golden = golden_rows(name);
        for dir in store_dirs(&a) {
            let parts: Vec<&str> = dir.split('/').collect();
            let (op, part) = (parts[1], parts[2].parse::<usize>().unwrap());
            let unique_id = commit_unique_id(&mut a, batch, op, part);
            let opts = LoadOptions { unique_id, ..Default::default() };
            let res = load_store(&mut a, &dir, version, &opts);
            let broken = name.starts_with("broken-");
            let store = match res {
                Ok(s) => s,
                Err(e) if broken => {
                    // Damaged fixtures: the error must name a file of this store.
                    assert!(e.path.starts_with(&dir), "{name} {dir}: {e}");
                    continue;
                }
                Err(e) => panic!("{name} {dir} v{version}: {e}"),
            };
            // Spark's own count of keys in the snapshot (user keys; internal column families excluded).
            if store.plan.changelogs.is_empty() {
                if let Some(m) = &store.metadata {
                    let internal = m.num_internal_keys.unwrap_or(0);
                    if let Some(n) = m.num_keys {
                        assert_eq!(store.entries.len() as i64, n + internal, "{name} {dir}: numKeys of the zip");
                    }
                }
            }
            if let Some(rows) = &golden {
                if broken {
                    continue;
                }
                let want = rows
                    .iter()
                    .filter(|r| {
                        r["operatorId"].as_i64() == op.parse().ok() && r["partition_id"].as_u64() == Some(part as u64)
                    })
                    .count();
                assert_eq!(store.entries.len(), want, "{name} {dir} v{version}: rows vs Spark's statestore reader");
                checked_golden += 1;
            }
        }
    }
    assert!(checked_golden >= 20, "only {checked_golden} stores compared with golden row counts");
}

#[test]
fn changelog_replay_equals_the_snapshot_of_the_same_version() {
    // With changelog checkpointing every uploaded <v>.zip must equal the replay of changelogs from an older
    // snapshot: two independent readers (SST files vs changelog records) agree.
    let mut compared = 0;
    for name in rocksdb_fixtures() {
        if name.starts_with("broken-") {
            continue;
        }
        let mut a = open_fixture(&name);
        for dir in store_dirs(&a) {
            let (files, _) = list_store(&a, &dir);
            if files.iter().any(|(f, _)| f.unique_id.is_some()) || !files.iter().any(|(f, _)| !f.is_zip) {
                continue;
            }
            let limits = LoadLimits::default();
            let mut zips: Vec<(i64, String)> =
                files.iter().filter(|(f, _)| f.is_zip).map(|(f, p)| (f.version, p.clone())).collect();
            zips.sort();
            for (v, zp) in &zips {
                let snap = read_snapshot(&mut a, &dir, zp, &limits).unwrap();
                // replay from the previous snapshot (or empty)
                let prev = zips.iter().rfind(|(pv, _)| pv < v).cloned();
                let mut map = match &prev {
                    Some((_, pp)) => read_snapshot(&mut a, &dir, pp, &limits).unwrap().entries,
                    None => BTreeMap::new(),
                };
                let start = prev.map(|(pv, _)| pv).unwrap_or(0);
                for cv in start + 1..=*v {
                    let cp = files.iter().find(|(f, _)| !f.is_zip && f.version == cv).map(|(_, p)| p.clone());
                    let Some(cp) = cp else { continue };
                    let cl = read_changelog_file(&mut a, &cp, &limits).unwrap();
                    apply_changelog(&mut map, cl.records);
                }
                assert_eq!(map, snap.entries, "{name} {dir} v{v}");
                compared += 1;
            }
        }
    }
    assert!(compared >= 10, "compared {compared}");
}

#[test]
fn checkpoint_v2_lineage_and_missing_changelog() {
    let name = "broken-ss-4.1.4-missing-changelog-agg-rocksdb-ckptv2";
    let mut a = open_fixture(name);
    let batch = last_commit(&a).unwrap();
    let id = commit_unique_id(&mut a, batch, "0", 1);
    let e =
        load_store(&mut a, "state/0/1", batch + 1, &LoadOptions { unique_id: id, ..Default::default() }).unwrap_err();
    let rec = crate::testutil::fixture_record(name);
    let spark_class = rec["restart_outcome"]["error_class"].as_str().unwrap();
    assert_eq!(e.error_class.map(|c| c.to_string()), Some(spark_class.to_string()), "{e}");
}

#[test]
fn missing_changelog_without_ids_is_spark_s_error() {
    let name = "broken-ss-4.3.0-missing-changelog";
    let mut a = open_fixture(name);
    let batch = last_commit(&a).unwrap();
    let e = load_store(&mut a, "state/0/1", batch + 1, &LoadOptions::default()).unwrap_err();
    let rec = crate::testutil::fixture_record(name);
    assert_eq!(e.error_class, rec["restart_outcome"]["error_class"].as_str(), "{e}");
    assert!(e.path.ends_with(".changelog"), "{e}");
}

#[test]
fn corrupt_zip_fixtures_report_the_zip() {
    for name in rocksdb_fixtures().into_iter().filter(|n| n.contains("corrupt-state-file")) {
        let rec = crate::testutil::fixture_record(&name);
        let file = rec["mutation"]["file"].as_str().unwrap().to_string();
        let file = file.as_str();
        let (dir, fname) = file.rsplit_once('/').unwrap();
        let f = parse_state_file_name(fname).unwrap();
        let mut a = open_fixture(&name);
        let limits = LoadLimits::default();
        let r = read_snapshot(&mut a, dir, file, &limits);
        eprintln!("{name}: {:?}", r.as_ref().err());
        // A flipped byte inside deflate data or the central directory must be an error naming the zip.
        match r {
            Err(e) => assert!(e.path.starts_with(file), "{name}: {e}"),
            Ok(s) => panic!("{name}: corrupt {file} (v{}) read fine with {} keys", f.version, s.entries.len()),
        }
    }
}

#[test]
fn truncated_and_flipped_sst_never_panics() {
    let mut a = open_fixture("ss-4.1.4-agg-rocksdb");
    let path = a
        .entries()
        .iter()
        .find(|e| e.path.starts_with("state/0/0/SSTs/0") && e.path.ends_with(".sst"))
        .unwrap()
        .path
        .clone();
    let bytes = a.read(&path, 1 << 20).unwrap();
    let ok = sst::read_sst(&bytes, sst::SstLimits::default()).unwrap();
    assert!(!ok.entries.is_empty());
    for n in 0..bytes.len() {
        let e = sst::read_sst(&bytes[..n], sst::SstLimits::default()).unwrap_err();
        assert!(e.offset <= n as u64, "cut at {n}: {e}");
    }
    // Flipping any byte is either detected (checksums, magic, handles) or harmless (padding, unchecked bytes).
    let mut detected = 0;
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x55;
        match sst::read_sst(&b, sst::SstLimits::default()) {
            Err(e) => {
                assert!(e.offset <= bytes.len() as u64);
                detected += 1;
            }
            Ok(t) => assert_eq!(t.entries, ok.entries, "flip at {i} changed data silently"),
        }
    }
    assert!(detected > bytes.len() * 9 / 10, "only {detected} of {} flips detected", bytes.len());
}

#[test]
fn truncated_changelog_and_zip_give_offsets() {
    let mut a = open_fixture("ss-4.3.0-agg-rocksdb-changelog");
    let cl = a
        .entries()
        .iter()
        .find(|e| e.path.starts_with("state/0/0/") && e.path.ends_with(".changelog"))
        .unwrap()
        .path
        .clone();
    let zp =
        a.entries().iter().find(|e| e.path.starts_with("state/0/0/") && e.path.ends_with(".zip")).unwrap().path.clone();
    let cl_bytes = a.read(&cl, 1 << 20).unwrap();
    let zip_bytes = a.read(&zp, 1 << 20).unwrap();
    let limits = LoadLimits::default();
    for n in 0..cl_bytes.len() {
        let mut m = MemArchive::new("t", vec![(cl.clone(), cl_bytes[..n].to_vec())], Default::default()).unwrap();
        let e = read_changelog_file(&mut m, &cl, &limits).unwrap_err();
        assert_eq!(e.path, cl);
        assert!(e.offset.is_some(), "cut at {n}: {e}");
    }
    for n in 0..zip_bytes.len() {
        assert!(zip_meta::read_version_zip(&zip_bytes[..n], limits.zip).is_err(), "zip cut at {n} still opens");
    }
}

#[test]
fn state_file_names() {
    assert_eq!(parse_state_file_name("12.zip"), Some(StateFileName { version: 12, unique_id: None, is_zip: true }));
    let f = parse_state_file_name("3_33a2be3e-02f1-44fa-b8f6-2f354cafdb9b.changelog").unwrap();
    assert_eq!((f.version, f.is_zip), (3, false));
    assert_eq!(f.unique_id.as_deref(), Some("33a2be3e-02f1-44fa-b8f6-2f354cafdb9b"));
    assert_eq!(parse_state_file_name(".12.zip.crc"), None);
    assert_eq!(parse_state_file_name("12.zip.crc"), None);
    assert_eq!(parse_state_file_name("x.zip"), None);
    assert_eq!(parse_state_file_name("12_.zip"), None);
}

#[test]
fn merge_resolution_like_string_append_operator() {
    use sst::{SstEntry, ValueType};
    let e = |k: &str, seq, kind, v: &str| SstEntry { user_key: k.into(), seq, kind, value: v.into() };
    let all = vec![
        e("a", 1, ValueType::Value, "x"),
        e("a", 2, ValueType::Merge, "y"),
        e("a", 3, ValueType::Merge, "z"),
        e("b", 5, ValueType::Deletion, ""),
        e("b", 4, ValueType::Value, "old"),
        e("c", 7, ValueType::Merge, "m"),
        e("c", 6, ValueType::Deletion, ""),
        e("d", 1, ValueType::Value, "gone"),
    ];
    let tomb = vec![sst::RangeTombstone { start: b"d".to_vec(), end: b"e".to_vec(), seq: 2 }];
    let m = resolve_entries(all, &tomb);
    assert_eq!(m.get(b"a".as_slice()).map(Vec::as_slice), Some(b"x,y,z".as_slice()));
    assert_eq!(m.get(b"b".as_slice()), None);
    assert_eq!(m.get(b"c".as_slice()).map(Vec::as_slice), Some(b"m".as_slice()));
    assert_eq!(m.get(b"d".as_slice()), None);
}

#[test]
fn every_row_splits_and_row_checksums_verify_where_spark_enabled_them() {
    let mut checksummed_rows = 0;
    let mut cf_rows = 0;
    for name in rocksdb_fixtures().into_iter().filter(|n| !n.starts_with("broken-")) {
        let rec = crate::testutil::fixture_record(&name);
        let conf = &rec["facts"]["last_offset_conf"];
        let row_checksum = conf["spark.sql.streaming.stateStore.rowChecksum.enabled"].as_str() == Some("true");
        let mut a = open_fixture(&name);
        let Some(batch) = last_commit(&a) else { continue };
        for dir in store_dirs(&a) {
            let parts: Vec<&str> = dir.split('/').collect();
            let unique_id = commit_unique_id(&mut a, batch, parts[1], parts[2].parse().unwrap());
            let store = load_store(&mut a, &dir, batch + 1, &LoadOptions { unique_id, ..Default::default() }).unwrap();
            for (k, v) in &store.entries {
                assert_eq!(encoding::has_row_checksums(k, v), row_checksum, "{name} {dir}: detection");
                let kp = encoding::split_key(k, store.uses_column_families(), &encoding::KeyEncoding::NoPrefix)
                    .unwrap_or_else(|e| panic!("{name} {dir}: {e}"));
                if let Some(cf) = kp.column_family {
                    assert!(store.column_family_name(cf).is_some(), "{name}: unknown column family {cf}");
                    cf_rows += 1;
                }
                let vals = encoding::split_value(k, v, false, Some(row_checksum)).unwrap();
                assert_eq!(vals.len(), 1);
                assert_eq!(vals[0].len() % 8, 0);
                if row_checksum {
                    checksummed_rows += 1;
                }
            }
        }
    }
    assert!(checksummed_rows > 0 && cf_rows > 0, "checksummed {checksummed_rows}, column family rows {cf_rows}");
}

#[test]
fn every_manifest_agrees_with_spark_metadata() {
    let mut zips = 0;
    for name in rocksdb_fixtures().into_iter().filter(|n| !n.starts_with("broken-")) {
        let mut a = open_fixture(&name);
        let paths: Vec<String> = a
            .entries()
            .iter()
            .filter(|e| {
                e.path.starts_with("state/")
                    && e.path.rsplit('/').next().and_then(parse_state_file_name).is_some_and(|f| f.is_zip)
            })
            .map(|e| e.path.clone())
            .collect();
        for p in paths {
            let raw = a.read(&p, 1 << 24).unwrap();
            let z = zip_meta::read_version_zip(&raw, zip_meta::ZipLimits::default()).unwrap();
            let m = z.manifest.unwrap_or_else(|| panic!("{name} {p}: no MANIFEST")).unwrap();
            assert!(m.edits > 0 && !m.torn_tail, "{name} {p}");
            assert_eq!(m.comparator.as_deref(), Some("leveldb.BytewiseComparator"));
            assert_eq!(manifest::compare_with_metadata(&m, &z.metadata), vec![], "{name} {p}");
            assert!(z.unexpected_empty.is_empty(), "{name} {p}: {:?}", z.unexpected_empty);
            assert_eq!(z.member_damage, None, "{name} {p}: every member a restart opens is intact");
            zips += 1;
        }
    }
    assert!(zips > 50, "{zips}");
}

/// The file Spark names in "Error reading streaming state file of <path> does not exist" is the file we name.
#[test]
fn missing_files_are_the_ones_spark_names() {
    let mut compared = 0;
    for name in rocksdb_fixtures().into_iter().filter(|n| n.starts_with("broken-")) {
        let rec = crate::testutil::fixture_record(&name);
        let msg = rec["restart_outcome"]["message_head"].as_str().unwrap_or("").to_string();
        let Some(at) = msg.find("/state/") else { continue };
        let rest = &msg[at + 1..];
        let spark_path: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
        if !rest[spark_path.len()..].trim_start().starts_with("does not exist") {
            continue;
        }
        let spark_path = spark_path.trim_end_matches('.').to_string();
        let dir = spark_path.rsplit_once('/').unwrap().0.to_string();
        let mut a = open_fixture(&name);
        let batch = last_commit(&a).unwrap();
        let parts: Vec<&str> = dir.split('/').collect();
        let unique_id = commit_unique_id(&mut a, batch, parts[1], parts[2].parse().unwrap());
        let e = load_store(&mut a, &dir, batch + 1, &LoadOptions { unique_id, ..Default::default() }).unwrap_err();
        assert_eq!(e.path, spark_path, "{name}: {e}");
        if let Some(class) = rec["restart_outcome"]["error_class"].as_str() {
            assert_eq!(e.error_class, Some(class), "{name}");
        }
        compared += 1;
    }
    assert!(compared >= 3, "compared {compared}");
}

/// Spark 4.3 repairs an unreadable latest snapshot from an older one plus changelogs: where Spark continued after
/// a flipped byte in a snapshot zip, auto repair rebuilds the store and names the skipped zip; without repair the
/// same load fails on that zip.
#[test]
fn auto_snapshot_repair_like_spark_4_3() {
    let mut repaired = 0;
    for name in rocksdb_fixtures().into_iter().filter(|n| n.starts_with("broken-")) {
        let rec = crate::testutil::fixture_record(&name);
        let Some(file) = rec["mutation"]["file"].as_str().map(str::to_string) else { continue };
        if !file.ends_with(".zip") || rec["restart_outcome"]["ok"].as_bool() != Some(true) {
            continue;
        }
        let dir = file.rsplit_once('/').unwrap().0.to_string();
        let mut a = open_fixture(&name);
        let batch = last_commit(&a).unwrap();
        let parts: Vec<&str> = dir.split('/').collect();
        let unique_id = commit_unique_id(&mut a, batch, parts[1], parts[2].parse().unwrap());
        let plain = LoadOptions { unique_id: unique_id.clone(), ..Default::default() };
        let e = load_store(&mut a, &dir, batch + 1, &plain).unwrap_err();
        assert!(e.path.starts_with(&file), "{name}: {e}");
        let repair = LoadOptions { unique_id, auto_snapshot_repair: true, ..Default::default() };
        let s = load_store(&mut a, &dir, batch + 1, &repair).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(s.skipped_snapshots.iter().any(|e| e.path.starts_with(&file)), "{name}");
        assert!(!s.plan.changelogs.is_empty());
        let v = verify_version(&mut a, &dir, batch + 1, &repair).unwrap();
        assert_eq!(v.num_keys, s.entries.len());
        // AutoSnapshotLoader only falls back within maxChangeFileReplay versions: with 0, the repair fails.
        let bounded = LoadOptions { max_change_file_replay: Some(0), ..repair.clone() };
        let e = load_store(&mut a, &dir, batch + 1, &bounded).unwrap_err();
        assert_eq!(e.error_class, Some("CANNOT_LOAD_STATE_STORE.AUTO_SNAPSHOT_REPAIR_FAILED"), "{name}: {e}");
        assert!(e.path.starts_with(&file), "{name}: {e}");
        repaired += 1;
    }
    assert!(repaired >= 2, "repaired {repaired}");
}

/// Every RocksDB file of every healthy fixture store, cut at 16 points: loading the store then fails with an error
/// naming that file (or the zip entry inside it), never a panic.
#[test]
fn cutting_any_store_file_is_an_error_naming_it() {
    let mut cuts = 0;
    for name in
        ["ss-4.3.0-agg-rocksdb-changelog", "ss-4.1.4-agg-rocksdb-ckptv2", "ss-4.3.0-tws-pandas", "ss-3.5.9-agg-rocksdb"]
    {
        let mut a = open_fixture(name);
        let batch = last_commit(&a).unwrap();
        let dir = "state/0/1";
        let unique_id = commit_unique_id(&mut a, batch, "0", 1);
        let opts = LoadOptions { unique_id, ..Default::default() };
        let store = load_store(&mut a, dir, batch + 1, &opts).unwrap();
        let mut used: Vec<String> = store.plan.changelogs.iter().map(|(_, p)| p.clone()).collect();
        if let Some((_, z)) = &store.plan.snapshot {
            used.push(z.clone());
            for f in &store.metadata.as_ref().unwrap().sst_files {
                used.push(format!("{dir}/SSTs/{}", f.dfs_file_name));
            }
        }
        let files: Vec<(String, Vec<u8>)> = a
            .entries()
            .iter()
            .filter(|e| !e.is_dir && e.path.starts_with("state/") || e.path.starts_with("commits/"))
            .map(|e| e.path.clone())
            .collect::<Vec<_>>()
            .into_iter()
            .map(|p| {
                let b = a.read(&p, 1 << 24).unwrap();
                (p, b)
            })
            .collect();
        for victim in &used {
            let len = files.iter().find(|(p, _)| p == victim).unwrap().1.len();
            for i in 0..16 {
                let cut = len * i / 16;
                let mutated: Vec<(String, Vec<u8>)> = files
                    .iter()
                    .map(|(p, b)| (p.clone(), if p == victim { b[..cut].to_vec() } else { b.clone() }))
                    .collect();
                let mut m = MemArchive::new("cut", mutated, Default::default()).unwrap();
                match load_store(&mut m, dir, batch + 1, &opts) {
                    Err(e) => assert!(
                        e.path.starts_with(victim.as_str()),
                        "{name}: cutting {victim} at {cut} gave an error about {}: {e}",
                        e.path
                    ),
                    Ok(_) => panic!("{name}: {victim} cut at {cut} of {len} still loads"),
                }
                cuts += 1;
            }
        }
    }
    assert!(cuts > 100, "{cuts}");
}

/// A deleted partition folder of a RocksDB operator fails like Spark's RocksDB provider, naming the first
/// changelog Spark looks for (not the HDFS provider's delta error).
#[test]
fn deleted_rocksdb_partition_reads_like_spark() {
    let mut n = 0;
    for name in rocksdb_fixtures().into_iter().filter(|n| n.contains("missing-state-partition")) {
        n += 1;
        let rec = crate::testutil::fixture_record(&name);
        let msg = rec["restart_outcome"]["message_head"].as_str().unwrap_or("");
        let mut a = open_fixture(&name);
        let batch = last_commit(&a).unwrap();
        let e = crate::state::load_raw_store(&mut a, "state/0/1", batch + 1, &Default::default()).unwrap_err();
        assert_eq!(e.error_class.as_deref(), rec["restart_outcome"]["error_class"].as_str(), "{name}: {e}");
        assert!(msg.contains(&e.path), "{name}: Spark says {msg:?}, we name {}", e.path);
    }
    assert!(n >= 1, "no RocksDB fixture with a deleted partition");
}

/// The per-store check h1's findings use: healthy RocksDB fixtures verify clean; where Spark failed to load state on
/// restart with a CANNOT_LOAD_STATE_STORE error, some store fails with that class (4.x) and names a file.
#[test]
fn verify_rocksdb_stores_matches_spark_outcomes() {
    let mut healthy = 0;
    let mut broken = 0;
    for name in rocksdb_fixtures() {
        let rec = crate::testutil::fixture_record(&name);
        let mut a = open_fixture(&name);
        // Auto snapshot repair: on by default from Spark 4.3, unless the restart turned it off.
        let repair = rec["spark_version"].as_str().is_some_and(|v| v.starts_with("4.3"))
            && rec["query"]["confs"]["spark.sql.streaming.stateStore.autoSnapshotRepair.enabled"].as_str()
                != Some("false");
        let res = state_view::verify_rocksdb_stores(&mut a, "", None, repair);
        let failures: Vec<&RocksDbError> = res.iter().filter_map(|(_, r)| r.as_ref().err()).collect();
        if !name.starts_with("broken-") {
            assert!(!res.is_empty(), "{name}: no RocksDB store found");
            assert!(failures.is_empty(), "{name}: {:?}", failures);
            healthy += 1;
            continue;
        }
        let outcome = &rec["restart_outcome"];
        if let Some(class) = outcome["error_class"].as_str().filter(|c| c.starts_with("CANNOT_LOAD_STATE_STORE")) {
            assert!(!failures.is_empty(), "{name}: Spark failed with {class}, we found nothing");
            assert!(failures.iter().all(|e| e.path.starts_with("state/")), "{name}");
            if class != "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"
                && class != "CANNOT_LOAD_STATE_STORE.CANNOT_READ_CHECKPOINT"
            {
                assert!(failures.iter().any(|e| e.error_class == Some(class)), "{name}: {class} vs {failures:?}");
            }
            broken += 1;
        } else if outcome["ok"].as_bool() == Some(true) && rec["mutation"]["file"].is_string() {
            // Spark recovered (4.3 auto repair): so do we, noting the skipped snapshot.
            assert!(failures.is_empty(), "{name}: {failures:?}");
            assert!(res.iter().any(|(_, r)| r.as_ref().is_ok_and(|s| !s.skipped_snapshots.is_empty())), "{name}");
            broken += 1;
        }
    }
    assert!(healthy >= 8 && broken >= 5, "healthy {healthy}, broken {broken}");
}

/// Flipping any byte of a real `<v>.zip` gives its content unchanged or an error, never a panic; the same for a
/// real changelog (decompressed and framed) and MANIFEST.
#[test]
fn flipping_any_byte_of_zip_changelog_and_manifest_never_panics() {
    let mut a = open_fixture("ss-4.3.0-agg-rocksdb-changelog");
    let path_of = |a: &crate::archive::ZipInput<std::fs::File>, suffix: &str| {
        a.entries().iter().find(|e| e.path.starts_with("state/0/0/") && e.path.ends_with(suffix)).unwrap().path.clone()
    };
    let zp = path_of(&a, ".zip");
    let zip_bytes = a.read(&zp, 1 << 20).unwrap();
    let good = zip_meta::read_version_zip(&zip_bytes, Default::default()).unwrap();
    for i in 0..zip_bytes.len() {
        let mut b = zip_bytes.clone();
        b[i] ^= 0x5a;
        if let Ok(z) = zip_meta::read_version_zip(&b, Default::default()) {
            // A flip in zip headers/padding that the reader tolerates must not change what it reports.
            assert_eq!(z.metadata, good.metadata, "flip at {i}");
        }
    }
    let manifest_name = good.current.clone().unwrap();
    let mut zr = zip::ZipArchive::new(std::io::Cursor::new(zip_bytes.as_slice())).unwrap();
    let manifest = zip_meta::read_entry(&mut zr, &manifest_name, 1 << 20).unwrap();
    for i in 0..manifest.len() {
        let mut b = manifest.clone();
        b[i] ^= 0x5a;
        let _ = manifest::parse_manifest(&b);
    }
    let cp = path_of(&a, ".changelog");
    let raw = a.read(&cp, 1 << 20).unwrap();
    let data = crate::codec::decompress(&raw, 1 << 24).unwrap();
    for i in 0..data.len() {
        let mut b = data.clone();
        b[i] ^= 0x5a;
        let _ = changelog::parse_changelog(&b, 1000);
    }
}

/// A transformWithState store rebuilt from a v2 changelog alone (no snapshot at or below the version) still
/// knows its column families (from the store's other snapshot) and its rows read like the snapshot's.
#[test]
fn tws_store_from_changelog_only_keeps_column_families() {
    let mut a = open_fixture("ss-4.3.0-tws-pandas");
    let batch = last_commit(&a).unwrap();
    let dir = "state/0/1";
    let full = load_store(&mut a, dir, batch + 1, &LoadOptions::default()).unwrap();
    assert!(full.uses_column_families());
    // A v2 changelog (typed records, as transformWithState stores write) with every pair as a put.
    let mut cl = (2u16).to_be_bytes().to_vec();
    cl.extend_from_slice(b"v2");
    for (k, v) in &full.entries {
        cl.push(0x01);
        cl.extend((k.len() as i32).to_be_bytes());
        cl.extend(k);
        cl.extend((v.len() as i32).to_be_bytes());
        cl.extend(v);
    }
    cl.push(0x00);
    let framed = crate::codec::write::lz4_block_stream(&cl, 32 * 1024);
    // Keep the store's files but drop every snapshot at or below version 1, then add 1.changelog.
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let paths: Vec<String> = a.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
    for p in paths {
        if p == format!("{dir}/1.zip") {
            continue;
        }
        let b = a.read(&p, 1 << 24).unwrap();
        files.push((p, b));
    }
    files.push((format!("{dir}/1.changelog"), framed));
    let mut m = MemArchive::new("t", files, Default::default()).unwrap();
    let s = load_store(&mut m, dir, 1, &LoadOptions::default()).unwrap();
    assert!(s.plan.snapshot.is_none() && s.plan.changelogs.len() == 1);
    assert_eq!(s.entries, full.entries);
    assert_eq!(s.column_families, full.column_families);
}

/// `read_state` loads stores as a Spark 4.3 restart does: where the restart succeeded past a damaged snapshot
/// (auto snapshot repair, on by default in 4.3), the statestore view reads the repaired store; asked without
/// repair, it fails on the damaged zip; and a checkpoint whose offset log turns repair off fails too.
#[test]
fn read_state_applies_auto_snapshot_repair_like_a_4_3_restart() {
    use crate::state::{read_state, StateQuery};
    let mut checked = 0;
    for name in rocksdb_fixtures().into_iter().filter(|n| n.starts_with("broken-")) {
        let rec = crate::testutil::fixture_record(&name);
        let Some(file) = rec["mutation"]["file"].as_str().map(str::to_string) else { continue };
        if !file.ends_with(".zip") || rec["restart_outcome"]["ok"].as_bool() != Some(true) {
            continue;
        }
        let parts: Vec<&str> = file.split('/').collect();
        let (op, part) = (parts[1].parse::<i64>().unwrap(), parts[2].parse::<u32>().unwrap());
        let store = if parts.len() > 4 { parts[3].to_string() } else { "default".to_string() };
        let mut a = open_fixture(&name);
        let q = StateQuery { operator_id: op, store_name: store, partition: Some(part), ..Default::default() };
        {
            let rows = read_state(&mut a, "", &q).unwrap_or_else(|e| panic!("{name}: {e}"));
            let batch = last_commit(&a).unwrap();
            let dir = file.rsplit_once('/').unwrap().0.to_string();
            let unique_id = commit_unique_id(&mut a, batch, parts[1], part as usize);
            let repair = LoadOptions { unique_id, auto_snapshot_repair: true, ..Default::default() };
            let s = load_store(&mut a, &dir, batch + 1, &repair).unwrap();
            assert_eq!(rows.len(), s.entries.len(), "{name}");
            let e = read_state(&mut a, "", &StateQuery { auto_snapshot_repair: Some(false), ..q.clone() }).unwrap_err();
            assert!(e.path.starts_with(&file), "{name}: {e}");
            // The same checkpoint with the conf turned off in the offset log of the batch read.
            let paths: Vec<String> = a.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
            let mut files = Vec::new();
            for p in paths {
                let mut b = a.read(&p, 1 << 26).unwrap();
                if p == format!("offsets/{batch}") {
                    let text = String::from_utf8(b).unwrap();
                    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
                    let mut j: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
                    j["conf"]["spark.sql.streaming.stateStore.autoSnapshotRepair.enabled"] = "false".into();
                    lines[1] = j.to_string();
                    b = lines.join("\n").into_bytes();
                }
                files.push((p, b));
            }
            let mut m = MemArchive::new("t", files, Default::default()).unwrap();
            assert!(read_state(&mut m, "", &q).is_err(), "{name}");
            checked += 1;
        }
    }
    assert!(checked >= 2, "checked {checked}");
}

#[test]
fn a_member_over_the_inspectors_limit_is_a_limit_not_damage() {
    // A real 4.3.0 snapshot zip read with a 16-byte member limit: the error says it is a limit of this
    // inspector (file-not-verified downstream), never a damaged member.
    let mut a = open_fixture("ss-4.3.0-agg-rocksdb-changelog");
    let zp =
        a.entries().iter().find(|e| e.path.starts_with("state/0/0/") && e.path.ends_with(".zip")).unwrap().path.clone();
    let zip_bytes = a.read(&zp, 1 << 20).unwrap();
    let e = zip_meta::read_version_zip(&zip_bytes, zip_meta::ZipLimits { max_entries: 10_000, max_entry_bytes: 16 })
        .expect_err("over the limit");
    assert!(e.limit && e.member_fault.is_none(), "{e:?}");
    assert!(e.message.contains("over the limit of 16"), "{e}");
    let ok = zip_meta::read_version_zip(&zip_bytes, zip_meta::ZipLimits::default());
    assert!(ok.is_ok());
}

#[test]
fn a_snapshot_read_from_its_bytes_and_a_listing_equals_read_snapshot_without_listing_again() {
    // The read stage checks every restart zip from the bytes it read and its own listing: with 200 partitions
    // and 124k files, listing the archive again per zip was most of the CLI's time. Same result, no listing,
    // and the SSTs with their sidecars hinted before they are read.
    let mut compared = 0;
    for name in
        ["ss-4.3.0-agg-rocksdb", "ss-3.5.9-agg-rocksdb", "broken-ss-4.0.5-corrupt-state-file-agg-rocksdb-ckptv2"]
    {
        let mut a = open_fixture(name);
        for dir in store_dirs(&a) {
            let (files, listing) = list_store(&a, &dir);
            let limits = LoadLimits::default();
            for (_, zp) in files.iter().filter(|(f, _)| f.is_zip) {
                let expected = read_snapshot(&mut a, &dir, zp, &limits);
                let raw = a.read(zp, 1 << 20).unwrap();
                let mut w = crate::testutil::Recorder::new(a);
                let got = read_snapshot_of(&mut w, &dir, zp, &raw, &listing, &limits);
                assert_eq!(got, expected, "{name} {zp}");
                assert_eq!(w.listed.get(), 0, "{name} {zp}: listed again");
                if let Ok(s) = &got {
                    let ssts = &s.zip.metadata.sst_files;
                    let hinted = w.hinted();
                    assert_eq!(hinted.len(), 2 * ssts.len(), "{name} {zp}: {hinted:?}");
                    for f in ssts {
                        let p = format!("{dir}/SSTs/{}", f.dfs_file_name);
                        assert!(
                            hinted.contains(&p) && hinted.contains(&format!("{dir}/SSTs/.{}.crc", f.dfs_file_name))
                        );
                        assert!(w.inner.entries().iter().any(|e| e.path == p), "{p} hinted but not listed");
                    }
                }
                compared += 1;
                a = w.inner;
            }
        }
    }
    assert!(compared >= 2 * 3 * 12, "compared {compared}");
}
