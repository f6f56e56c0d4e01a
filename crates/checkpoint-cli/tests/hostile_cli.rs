//! Hostile input through the binary: bombs that lie about their sizes or entry counts, huge and hostile values in
//! the human output, absurd option values, a folder with tens of thousands of log files, truncated zips.
//! Each run must end fast with the documented exit status and a message naming the file.

mod common;
use common::*;

use std::io::{Cursor, Write};
use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, Instant};

fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (p, b) in files {
        w.start_file(*p, opts).unwrap();
        w.write_all(b).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// Runs the binary with a time bound.
/// Runs the CLI; `limit` catches hangs (with 4x slack for a loaded CI machine and a debug build), not slowness.
fn run(args: &[&str], limit: Duration) -> Output {
    let t = Instant::now();
    let out = bin().args(args).output().unwrap();
    assert!(t.elapsed() < limit * 4, "{args:?} took {:?}", t.elapsed());
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn entry_count_bomb_in_a_zip64_end_record_exits_2() {
    let z = zip_of(&[("metadata", b"{}")]);
    let eocd = z.len() - 22;
    let cd_size = u32::from_le_bytes(z[eocd + 12..eocd + 16].try_into().unwrap()) as u64;
    let cd_off = u32::from_le_bytes(z[eocd + 16..eocd + 20].try_into().unwrap()) as u64;
    let mut y = z[..eocd].to_vec();
    let z64_at = y.len() as u64;
    y.extend(b"PK\x06\x06");
    y.extend(44u64.to_le_bytes());
    y.extend([45, 0, 45, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    y.extend(50_000_000u64.to_le_bytes());
    y.extend(50_000_000u64.to_le_bytes());
    y.extend(cd_size.to_le_bytes());
    y.extend(cd_off.to_le_bytes());
    y.extend(b"PK\x06\x07\0\0\0\0");
    y.extend(z64_at.to_le_bytes());
    y.extend(1u32.to_le_bytes());
    y.extend(b"PK\x05\x06\0\0\0\0");
    y.extend([0xff; 12]);
    y.extend([0, 0]);
    let p = tmp("hostile", "count").join("count.zip");
    std::fs::write(&p, y).unwrap();
    let o = run(&["diagnose", p.to_str().unwrap()], Duration::from_secs(5));
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(stderr(&o).contains("count.zip: number of entries is 50000000"), "{}", stderr(&o));
}

/// offsets/0 declares 100 bytes in both headers but inflates to 16 MiB: a finding naming offsets/0, exit 1.
#[test]
fn entry_lying_about_its_size_is_named() {
    let big = vec![b'v'; 16 << 20];
    let mut z = zip_of(&[("metadata", b"{\"id\":\"x\"}"), ("offsets/0", &big)]);
    for sig in [b"PK\x01\x02", b"PK\x03\x04"] {
        let hits: Vec<usize> = z.windows(4).enumerate().filter(|(_, w)| w == sig).map(|(i, _)| i).collect();
        for at in hits {
            let (size_at, name_at) = if sig == b"PK\x01\x02" { (at + 24, at + 46) } else { (at + 22, at + 30) };
            if z.get(name_at..name_at + 9) == Some(b"offsets/0" as &[u8]) {
                z[size_at..size_at + 4].copy_from_slice(&100u32.to_le_bytes());
            }
        }
    }
    let p = tmp("hostile", "lying").join("lying.zip");
    std::fs::write(&p, z).unwrap();
    let o = run(&["diagnose", p.to_str().unwrap(), "--now", "0"], Duration::from_secs(10));
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("offsets/0") && out.contains("declared"), "{out}");
}

/// A 2 MB source offset and a query id full of terminal escape sequences: the human output is clipped and shows
/// the control characters escaped; the JSON keeps them.
#[test]
fn huge_and_hostile_values_do_not_flood_or_drive_the_terminal() {
    // Pseudo-random letters: compressible enough to be small, not enough to trip the zip bomb ratio.
    let mut seed = 1u32;
    let pad: String = (0..2 << 20)
        .map(|_| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (b'a' + ((seed >> 16) % 26) as u8) as char
        })
        .collect();
    let offsets =
        format!("v1\n{{\"batchWatermarkMs\":0,\"batchTimestampMs\":1}}\n{{\"logOffset\":0,\"pad\":\"{pad}\"}}");
    let meta = "{\"id\":\"\\u001b]0;owned\\u0007\\u001b[2J\"}";
    let z = zip_of(&[
        ("metadata", meta.as_bytes()),
        ("offsets/0", offsets.as_bytes()),
        ("commits/0", b"v1\n{\"nextBatchWatermarkMs\":0}"),
    ]);
    let p = tmp("hostile", "huge").join("huge.zip");
    std::fs::write(&p, z).unwrap();
    let o = run(&["diagnose", p.to_str().unwrap(), "--now", "0"], Duration::from_secs(10));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.len() < 64 * 1024, "{} bytes of human output", out.len());
    assert!(out.contains("bytes in all"), "{out}");
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
    assert!(out.contains("\\u{1b}"), "{out}");
    let j = run(&["diagnose", p.to_str().unwrap(), "--now", "0", "--json"], Duration::from_secs(10));
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(v["checkpoints"][0]["query_id"], "\u{1b}]0;owned\u{7}\u{1b}[2J");
}

#[test]
fn absurd_batch_ids_are_refused_by_the_option_parser() {
    let f = fixture("ss-4.1.4-agg-hdfs.zip");
    for b in ["9223372036854775807", "-1", "1e3"] {
        let arg = format!("--batch={b}");
        let o = run(&["state", f.to_str().unwrap(), &arg], Duration::from_secs(5));
        assert_eq!(o.status.code(), Some(2), "{b}: {o:?}");
        assert!(stderr(&o).contains("--batch"), "{b}: {}", stderr(&o));
    }
}

/// A checkpoint folder with 6_000 offset and commit files: listing and reading stay linear.
#[test]
fn folder_with_tens_of_thousands_of_log_files() {
    let d = tmp("hostile", "many");
    for sub in ["offsets", "commits"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    std::fs::write(d.join("metadata"), "{\"id\":\"x\"}").unwrap();
    for i in 0..3_000 {
        std::fs::write(d.join(format!("offsets/{i}")), "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1}\n-")
            .unwrap();
        std::fs::write(d.join(format!("commits/{i}")), "v1\n{\"nextBatchWatermarkMs\":0}").unwrap();
    }
    let o = run(&["diagnose", d.to_str().unwrap(), "--json", "--now", "0"], Duration::from_secs(20));
    assert!(matches!(o.status.code(), Some(0) | Some(1)), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["checkpoints"][0]["batches"].as_array().map(|b| b.len()), Some(3_000));
    let _ = std::fs::remove_dir_all(&d);
}

/// A real fixture cut at many points, and with its central directory damaged: exit 2 naming the zip, or (for a
/// cut the zip reader survives) a normal report.
#[test]
fn truncated_fixture_zips_exit_2() {
    let z = std::fs::read(fixture("ss-4.1.4-agg-hdfs.zip")).unwrap();
    let d = tmp("hostile", "trunc");
    for (i, cut) in [1usize, 30, z.len() / 3, z.len() / 2, z.len() - 30, z.len() - 1].into_iter().enumerate() {
        let p = d.join(format!("cut{i}.zip"));
        std::fs::write(&p, &z[..cut]).unwrap();
        let o = run(&["diagnose", p.to_str().unwrap()], Duration::from_secs(5));
        assert_eq!(o.status.code(), Some(2), "cut at {cut}: {o:?}");
        assert!(stderr(&o).contains(&format!("cut{i}.zip")), "{}", stderr(&o));
        let o = run(&["state", p.to_str().unwrap()], Duration::from_secs(5));
        assert_eq!(o.status.code(), Some(2), "state, cut at {cut}: {o:?}");
    }
}

/// A zip whose entries Spark's files do not decide: the latest offsets entry does not inflate (its deflate
/// stream is smashed) or inflates past the size its headers declare. The zip is broken, not necessarily the
/// checkpoint: `archive-entry-unreadable`, the verdict unknown, exit 1.
#[test]
fn a_zip_entry_that_does_not_unpack_makes_the_verdict_unknown() {
    let fixture = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/ss-4.3.0-agg-hdfs.zip"));
    let mut src = zip::ZipArchive::new(std::fs::File::open(fixture).unwrap()).unwrap();
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..src.len() {
        let mut f = src.by_index(i).unwrap();
        if f.is_dir() {
            continue;
        }
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut b).unwrap();
        files.push((f.name().unwrap().to_string(), b));
    }
    let last = files.iter().filter_map(|(p, _)| p.strip_prefix("offsets/")?.parse::<i64>().ok()).max().unwrap();
    let name = format!("offsets/{last}");
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (p.as_str(), b.as_slice())).collect();
    let z = zip_of(&refs);
    // Local header of the entry: sizes at +18 (compressed) and +22; data after name and extra.
    let at = z
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"PK\x03\x04")
        .map(|(i, _)| i)
        .find(|&i| z.get(i + 30..i + 30 + name.len()) == Some(name.as_bytes()))
        .unwrap();
    let csize = u32::from_le_bytes(z[at + 18..at + 22].try_into().unwrap()) as usize;
    let (n, m) =
        (u16::from_le_bytes([z[at + 26], z[at + 27]]) as usize, u16::from_le_bytes([z[at + 28], z[at + 29]]) as usize);
    let data = at + 30 + n + m;
    let mut smashed = z.clone();
    smashed[data..data + csize].fill(0xFF);
    let mut lying = z.clone();
    for sig in [b"PK\x01\x02", b"PK\x03\x04"] {
        let hits: Vec<usize> = lying.windows(4).enumerate().filter(|(_, w)| w == sig).map(|(i, _)| i).collect();
        for h in hits {
            let (size_at, name_at) = if sig == b"PK\x01\x02" { (h + 24, h + 46) } else { (h + 22, h + 30) };
            if lying.get(name_at..name_at + name.len()) == Some(name.as_bytes()) {
                lying[size_at..size_at + 4].copy_from_slice(&10u32.to_le_bytes());
            }
        }
    }
    for (label, bytes) in [("smashed", smashed), ("lying", lying)] {
        let p = tmp("hostile", label).join("e.zip");
        std::fs::write(&p, bytes).unwrap();
        let o = run(&["diagnose", p.to_str().unwrap(), "--json"], Duration::from_secs(10));
        assert_eq!(o.status.code(), Some(1), "{label}: {o:?}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let cp = &v["checkpoints"][0];
        assert_eq!(cp["restart"]["outcome"], "unknown", "{label}: {}", cp["restart"]);
        let f: Vec<&serde_json::Value> =
            cp["findings"].as_array().unwrap().iter().filter(|f| f["code"] == "archive-entry-unreadable").collect();
        assert_eq!(f.len(), 1, "{label}: {}", cp["findings"]);
        assert_eq!(f[0]["severity"], "error");
        assert_eq!(f[0]["evidence"][0]["path"], name.as_str());
        assert!(!cp["findings"].as_array().unwrap().iter().any(|f| f["code"] == "log-file-malformed"));
    }
}

/// A corrupt Delta checkpoint parquet given with `--delta-log` (the breaker run's reproducers: a definition level
/// above the maximum, a negative column chunk length, a dictionary-encoded page with no dictionary): the `parquet`
/// crate panicked on each (exit 101). Now each is a `delta-log-file-unreadable` finding naming the file and its
/// offset, with nothing on stderr.
#[test]
fn a_corrupt_delta_checkpoint_parquet_is_a_finding_not_a_panic() {
    let cases = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/cases"));
    let log = std::fs::read(cases.join("case-13-delta-log-expired.delta_log.zip")).unwrap();
    let mut log = zip::ZipArchive::new(Cursor::new(log)).unwrap();
    let files: Vec<(String, Vec<u8>)> = (0..log.len())
        .map(|i| {
            let mut f = log.by_index(i).unwrap();
            let mut b = Vec::new();
            std::io::Read::read_to_end(&mut f, &mut b).unwrap();
            (f.name().expect("utf-8 name").to_string(), b)
        })
        .collect();
    let checkpoint = "_delta_log/00000000000000000050.checkpoint.parquet";
    let reproducers: [&[(usize, u8)]; 3] = [&[(5877, 0xdd)], &[(9423, 0x3b)], &[(3030, 0xab), (6741, 0xca)]];
    for (k, changes) in reproducers.iter().enumerate() {
        let mutated: Vec<(&str, Vec<u8>)> = files
            .iter()
            .map(|(p, b)| {
                let mut b = b.clone();
                if p == checkpoint {
                    changes.iter().for_each(|&(i, v)| b[i] = v);
                }
                (p.as_str(), b)
            })
            .collect();
        let p = tmp("hostile", &format!("delta-parquet-{k}")).join("delta_log.zip");
        std::fs::write(&p, zip_of(&mutated.iter().map(|(p, b)| (*p, b.as_slice())).collect::<Vec<_>>())).unwrap();
        let chk = cases.join("case-13-delta-log-expired.zip");
        let o = run(
            &["diagnose", chk.to_str().unwrap(), "--delta-log", p.to_str().unwrap(), "--json"],
            Duration::from_secs(10),
        );
        assert!(matches!(o.status.code(), Some(0 | 1)), "{changes:?}: {o:?}");
        assert!(stderr(&o).is_empty(), "{changes:?}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let found = v["checkpoints"][0]["findings"].as_array().unwrap().iter().any(|f| {
            f["code"] == "delta-log-file-unreadable"
                && f["evidence"][0]["path"] == checkpoint
                && f["evidence"][0]["offset"].is_u64()
        });
        assert!(found, "{changes:?}: {}", v["checkpoints"][0]["findings"]);
    }
}
