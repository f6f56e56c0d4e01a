//! Reader tests on the real fixture files (golden values from each fixture's `.json` facts, computed from
//! Spark's files by the fixture generator, never from our own output).

use crate::archive::Archive;
use crate::log;
use crate::testutil::{fixture_names, fixture_record, open_fixture};

/// True when the mutation description names `path` as a whole word.
fn names(desc: &str, path: &str) -> bool {
    desc.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')' || c == '\'').any(|t| t == path)
}

fn read_all(a: &mut dyn Archive, pred: impl Fn(&str) -> bool) -> Vec<(String, Vec<u8>)> {
    let paths: Vec<String> =
        a.entries().iter().filter(|e| !e.is_dir && pred(&e.path)).map(|e| e.path.clone()).collect();
    paths
        .into_iter()
        .map(|p| {
            let b = a.read(&p, 1 << 26).unwrap();
            (p, b)
        })
        .collect()
}

#[test]
fn offsets_commits_metadata_match_facts() {
    let mut checked = 0;
    for name in fixture_names() {
        let j = fixture_record(&name);
        if j["kind"] != "structured-streaming" {
            continue;
        }
        let f = &j["facts"];
        let mut a = open_fixture(&name);
        // metadata
        if let Some(id) = f.pointer("/metadata/id").and_then(|v| v.as_str()) {
            let b = a.read("metadata", 1 << 20).unwrap();
            assert_eq!(log::metadata::parse(&b).unwrap().id, id, "{name}");
        }
        // latest offsets file
        if let Some(last) = f["last_offset_batch"].as_i64() {
            let b = a.read(&format!("offsets/{last}"), 1 << 20).unwrap();
            let parsed = log::offsets::parse(&b);
            if f.get("last_offset_parse_error").is_some() {
                assert!(parsed.is_err(), "{name}: damaged offsets/{last} parsed");
            } else {
                let o = parsed.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(format!("v{}", o.version), f["offset_log_version_line"].as_str().unwrap(), "{name}");
                let m = o.metadata.as_ref().unwrap();
                if let Some(ts) = f.pointer("/last_offset_metadata/batchTimestampMs").and_then(|v| v.as_i64()) {
                    assert_eq!(m.batch_timestamp_ms, Some(ts), "{name}");
                }
                match f.pointer("/last_offset_metadata/batchWatermarkMs").and_then(|v| v.as_i64()) {
                    Some(w) => assert_eq!(m.batch_watermark_ms, Some(w), "{name}"),
                    None => assert_eq!(m.batch_watermark_ms, None, "{name}: watermark key absent in Spark's file"),
                }
                let conf = f["last_offset_conf"].as_object().unwrap();
                assert_eq!(m.conf.len(), conf.len(), "{name}");
                for (k, v) in conf {
                    assert_eq!(m.conf.get(k).map(String::as_str), v.as_str(), "{name}: {k}");
                }
                assert_eq!(o.offsets.len() as u64, f["num_sources"].as_u64().unwrap(), "{name}");
            }
        }
        if let Some(c) = f["last_commit"].as_object() {
            let last = f["last_committed_batch"].as_i64().unwrap();
            let b = a.read(&format!("commits/{last}"), 1 << 20).unwrap();
            let cm = log::commits::parse(&b).unwrap();
            assert_eq!(format!("v{}", cm.version), c["version_line"].as_str().unwrap(), "{name}");
            assert_eq!(Some(cm.next_batch_watermark_ms), c["json"]["nextBatchWatermarkMs"].as_i64(), "{name}");
            let ids = c["json"].get("stateUniqueIds").and_then(|x| x.as_object()).map(|m| m.len()).unwrap_or(0);
            assert_eq!(cm.state_unique_ids.len(), ids, "{name}");
        }
        checked += 1;
    }
    assert!(checked > 60);
}

#[test]
fn file_source_logs_and_operator_metadata_parse() {
    let mut sources = 0;
    let mut opmeta = 0;
    for name in fixture_names() {
        let mut a = open_fixture(&name);
        for (p, b) in read_all(&mut a, |p| {
            let mut it = p.split('/');
            it.next() == Some("sources")
                && p.rsplit('/').next().is_some_and(|n| log::parse_batch_file_name(n, true).is_some())
        }) {
            let batch = log::file_log::parse(&b).unwrap_or_else(|e| panic!("{name} {p}: {e}"));
            assert!(batch.entries.iter().all(|e| e.path.starts_with("file:") && e.batch_id.is_some()), "{name} {p}");
            sources += 1;
        }
        for (p, b) in read_all(&mut a, |p| p.ends_with("/_metadata/metadata") || p.contains("/_metadata/v2/")) {
            if p.rsplit('/').next().is_some_and(|n| n.starts_with('.')) {
                continue;
            }
            let m = log::operator_metadata::parse(&b).unwrap_or_else(|e| panic!("{name} {p}: {e}"));
            assert!(m.operator_name.is_some() && !m.stores.is_empty(), "{name} {p}");
            opmeta += 1;
        }
    }
    assert!(sources > 100 && opmeta > 10, "{sources} {opmeta}");
}

#[test]
fn sink_logs_parse() {
    for v in ["3.5.9", "4.1.4", "4.3.0"] {
        let name = format!("ss-{v}-stateless.sink-output");
        let mut a = open_fixture(&name);
        let files = read_all(&mut a, |p| {
            p.contains("_spark_metadata/") && !p.rsplit('/').next().unwrap_or("").starts_with('.')
        });
        assert!(!files.is_empty());
        for (p, b) in files {
            let batch = log::file_log::parse(&b).unwrap_or_else(|e| panic!("{name} {p}: {e}"));
            assert!(batch.entries.iter().all(|e| e.action.as_deref() == Some("add") && e.size.is_some()), "{p}");
        }
    }
}

#[test]
fn hadoop_crcs_verify_except_where_damaged() {
    let mut ok = 0;
    for name in fixture_names() {
        let j = fixture_record(&name);
        let desc = j.pointer("/mutation/description").and_then(|d| d.as_str()).unwrap_or("");
        let mut a = open_fixture(&name);
        let sidecars: Vec<String> = a
            .entries()
            .iter()
            .filter(|e| !e.is_dir)
            .map(|e| e.path.clone())
            .filter(|p| crate::hadoop::main_name(p.rsplit('/').next().unwrap_or("")).is_some())
            .collect();
        let present: std::collections::HashSet<String> = a.entries().iter().map(|e| e.path.clone()).collect();
        for s in sidecars {
            let dir = s.rfind('/').map(|i| &s[..i + 1]).unwrap_or("");
            let main = format!("{dir}{}", crate::hadoop::main_name(s.rsplit('/').next().unwrap()).unwrap());
            if !present.contains(&main) {
                continue;
            }
            let crc = crate::hadoop::parse(&a.read(&s, 1 << 20).unwrap()).unwrap();
            let data = a.read(&main, 1 << 28).unwrap();
            let r = crate::hadoop::verify(&crc, &data);
            let damaged =
                names(desc, &main) && (desc.contains("WITHOUT updating") || desc.contains("without touching"));
            assert_eq!(r.is_ok(), !damaged, "{name}: {main}: {r:?}");
            ok += 1;
        }
    }
    assert!(ok > 1000, "{ok}");
}

#[test]
fn spark_checksums_verify_except_where_damaged() {
    let mut n = 0;
    for name in fixture_names() {
        let j = fixture_record(&name);
        let desc = j.pointer("/mutation/description").and_then(|d| d.as_str()).unwrap_or("");
        let mut a = open_fixture(&name);
        let present: std::collections::HashSet<String> = a.entries().iter().map(|e| e.path.clone()).collect();
        let sums: Vec<String> = a
            .entries()
            .iter()
            .filter(|e| !e.is_dir)
            .map(|e| e.path.clone())
            .filter(|p| crate::checksum::main_name(p.rsplit('/').next().unwrap_or("")).is_some())
            .collect();
        for s in sums {
            let main = s.trim_end_matches(".crc").to_string();
            if !present.contains(&main) {
                continue;
            }
            let sum = crate::checksum::parse(&a.read(&s, 1 << 20).unwrap()).unwrap();
            let r = crate::checksum::verify(&sum, &a.read(&main, 1 << 28).unwrap());
            let damaged = names(desc, &main);
            assert_eq!(r.is_ok(), !damaged, "{name}: {main}: {r:?}");
            n += 1;
        }
    }
    assert!(n > 20, "{n}");
}

#[test]
fn state_listing_matches_facts() {
    for name in fixture_names() {
        let j = fixture_record(&name);
        let Some(ops) = j.pointer("/facts/state_operators").and_then(|o| o.as_object()) else { continue };
        let a = open_fixture(&name);
        let entries: Vec<(String, u64, bool)> =
            a.entries().iter().map(|e| (e.path.clone(), e.size, e.is_dir)).collect();
        let tree = crate::state_files::list_state(&entries);
        for (op, v) in ops {
            let o = &tree.operators[&op.parse::<i64>().unwrap()];
            let parts: Vec<u32> =
                v["partitions"].as_array().unwrap().iter().map(|p| p.as_u64().unwrap() as u32).collect();
            assert_eq!(o.partitions.keys().copied().collect::<Vec<_>>(), parts, "{name}");
            for (p, files) in v["files_per_partition_excluding_hadoop_crc"].as_object().into_iter().flatten() {
                let pf = &o.partitions[&p.parse::<u32>().unwrap()];
                let count_versioned = files
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|f| {
                        let f = f.as_str().unwrap();
                        let n = f.rsplit('/').next().unwrap();
                        !f.contains("SSTs/")
                            && (n.ends_with(".delta")
                                || n.ends_with(".snapshot")
                                || n.ends_with(".zip")
                                || n.ends_with(".changelog"))
                    })
                    .count();
                let ours: usize = pf
                    .stores
                    .values()
                    .map(|s| {
                        s.deltas.len()
                            + s.snapshots.len()
                            + s.zips.values().map(Vec::len).sum::<usize>()
                            + s.changelogs.values().map(Vec::len).sum::<usize>()
                    })
                    .sum();
                assert_eq!(ours, count_versioned, "{name}: partition {p}");
            }
        }
    }
}

#[test]
fn layout_finds_one_root_per_fixture() {
    for name in fixture_names() {
        let a = open_fixture(&name);
        let roots = crate::layout::find_roots(a.entries());
        assert_eq!(roots.len(), 1, "{name}: {roots:?}");
        assert_eq!(roots[0].path, "", "{name}");
    }
}
