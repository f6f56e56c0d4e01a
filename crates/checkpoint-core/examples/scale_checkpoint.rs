//! Writes a large, deterministic Structured Streaming checkpoint zip scaled up from a real one, for benchmarks
//! (`tools/scale-bench.sh`) and the browser end-to-end test of progress and cancel.
//!
//! The seed is the real Spark 4.3.0 HDFS aggregation `../shared/fixtures/ss-4.3.0-agg-hdfs.zip` (10 s tumbling
//! window count/sum per key, `HDFSBackedStateStoreProvider`, lz4). Its `metadata`, operator metadata, state
//! schema, the last offsets file (its conf, with `spark.sql.shuffle.partitions` set to the partition count) and
//! commit file are kept byte for byte apart from the batch timestamp; the batches and state are repeated:
//!
//! * `offsets/N` and `commits/N` for every batch `0..batches` (each with its Hadoop `.N.crc`), one batch every
//!   10 s of `batchTimestampMs`;
//! * per partition, the state versions a restart and the retention keep (FORMATS.md §8): the snapshot of version
//!   `first` (a multiple of `snapshot_every`), then a `.delta` for every version `first..=batches`, and a snapshot
//!   every `snapshot_every` versions. Version `v`'s delta puts `rows` keys of window `v` and removes the same keys
//!   of window `v - 1` (the watermark evicting the previous window), so every snapshot holds exactly the rows of its
//!   window, as replaying the deltas gives. Keys are pseudo-random hex strings, so files compress like real ones.
//!
//! Damage (`--damage`) mirrors a shared fixture whose restart real Spark recorded:
//! * `missing-delta` (as `broken-ss-4.x-missing-delta`): partition 1 loses the delta of the version before the
//!   restart's and every snapshot at or above it, so the restart's version cannot be rebuilt;
//! * `corrupt-snapshot` (as `broken-ss-4.3.0-corrupt-state-file`): one byte flipped in partition 1's newest
//!   snapshot, its `.crc` kept.
//!
//! `--provider rocksdb` scales the real Spark 4.3.0 RocksDB aggregation `ss-4.3.0-agg-rocksdb.zip` instead (the
//! same query on `RocksDBStateStoreProvider`, changelog checkpointing off, checkpoint format v1: 3 partitions,
//! versions `1.zip..=12.zip`, each listing its SSTs in `SSTs/`). No RocksDB byte is written by us: every state file
//! is a seed file, byte for byte. In this layout nothing inside a file names its partition or version (a `<v>.zip`
//! holds RocksDB's `CURRENT`/`MANIFEST`/`OPTIONS` and Spark's `metadata` listing SST names and sizes; FORMATS.md
//! §11), so each version is a complete, independent store and can be placed under any version number: partition
//! `p` gets the seed partition `p % 3`'s `SSTs/`, and the `--retained` newest versions (default 100, Spark's
//! `minBatchesToRetain`) cycle through the seed's 12 zips ending on its newest, so every SST is referenced and the
//! restart loads exactly the seed's last state, consistent with the seed's last offsets (its watermark) and
//! commit. The changelog and format-v2 seeds cannot be scaled this way: a changelog replays on the version before
//! it, and v2 names its lineage and unique ids inside files and in the commit log.
//!
//! `cargo run --release -p checkpoint-core --example scale_checkpoint -- --preset mid --out /tmp/mid.zip`
//! (presets: `small` ≈ 6 MB / 9.4k files, `mid` ≈ 87 MB / 94k files, `large` ≈ 750 MB and `xl` ≈ 2 GB, the mid
//! files with 12× and 33× the rows; or `--batches --partitions --rows
//! --retained --snapshot-every`; `--provider rocksdb` takes `--batches --partitions --retained`). Prints one
//! JSON line: the file, its size, entry count and the parameters.

use checkpoint_core::archive::Archive;
use checkpoint_core::codec::write::lz4_block_stream;
use checkpoint_core::{Limits, ZipInput};
use std::io::{Cursor, Write};

struct Params {
    batches: i64,
    partitions: u32,
    rows: u32,
    retained: i64,
    snapshot_every: i64,
    damage: String,
}

fn preset(name: &str) -> Option<Params> {
    let p = |batches, partitions, rows, retained| Params {
        batches,
        partitions,
        rows,
        retained,
        snapshot_every: 10,
        damage: "none".into(),
    };
    Some(match name {
        "small" => p(2_000, 20, 300, 30),
        "mid" => p(20_000, 200, 500, 30),
        "large" => p(20_000, 200, 6_000, 30),
        "xl" => p(20_000, 200, 16_500, 30),
        _ => return None,
    })
}

/// Hadoop `ChecksumFileSystem` sidecar (FORMATS.md §2): `crc\0`, bytesPerChecksum 512 (big-endian), then the
/// CRC32 of every 512-byte chunk (big-endian).
fn hadoop_crc(data: &[u8]) -> Vec<u8> {
    let mut out = b"crc\0".to_vec();
    out.extend_from_slice(&512u32.to_be_bytes());
    for chunk in data.chunks(512) {
        out.extend_from_slice(&crc32fast::hash(chunk).to_be_bytes());
    }
    out
}

fn sidecar(path: &str) -> String {
    match path.rsplit_once('/') {
        Some((dir, name)) => format!("{dir}/.{name}.crc"),
        None => format!(".{path}.crc"),
    }
}

fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn slot(out: &mut [u8], at: usize, v: u64) {
    out[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// UnsafeRow of the fixture's key `struct<window:struct<start:timestamp,end:timestamp>, key:string>`: bitset,
/// two offset-and-size slots, then the nested window row (bitset, start, end) and the string (padded to 8).
fn key_row(key: &str, window_start_us: u64) -> Vec<u8> {
    let mut out = vec![0u8; 24];
    let woff = out.len() as u64;
    let mut w = vec![0u8; 24];
    slot(&mut w, 8, window_start_us);
    slot(&mut w, 16, window_start_us + 10_000_000);
    out.extend_from_slice(&w);
    slot(&mut out, 8, (woff << 32) | 24);
    let soff = out.len() as u64;
    out.extend_from_slice(key.as_bytes());
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
    slot(&mut out, 16, (soff << 32) | key.len() as u64);
    out
}

/// UnsafeRow of the value `struct<count:bigint, sum:bigint>`.
fn value_row(count: u64, sum: u64) -> Vec<u8> {
    let mut out = vec![0u8; 24];
    slot(&mut out, 8, count);
    slot(&mut out, 16, sum);
    out
}

const WINDOW0_US: u64 = 1_704_067_200_000_000;

fn window_us(version: i64) -> u64 {
    WINDOW0_US + version.max(0) as u64 * 10_000_000
}

fn key(partition: u32, j: u32) -> String {
    format!("{:016x}", mix(((partition as u64) << 32) | j as u64))
}

fn put(data: &mut Vec<u8>, k: &[u8], v: &[u8]) {
    data.extend_from_slice(&(k.len() as i32).to_be_bytes());
    data.extend_from_slice(k);
    data.extend_from_slice(&(v.len() as i32).to_be_bytes());
    data.extend_from_slice(v);
}

/// A version's delta: puts of window `version`, removes (value size -1) of window `version - 1`.
fn delta(p: &Params, partition: u32, version: i64) -> Vec<u8> {
    let mut data = Vec::new();
    for j in 0..p.rows {
        let k = key(partition, j);
        let c = mix(version as u64 ^ j as u64) % 50 + 1;
        put(&mut data, &key_row(&k, window_us(version)), &value_row(c, c * 3));
        if version > 1 {
            let old = key_row(&k, window_us(version - 1));
            data.extend_from_slice(&(old.len() as i32).to_be_bytes());
            data.extend_from_slice(&old);
            data.extend_from_slice(&(-1i32).to_be_bytes());
        }
    }
    data.extend_from_slice(&(-1i32).to_be_bytes());
    lz4_block_stream(&data, 32 * 1024)
}

/// A version's snapshot: the rows of window `version`.
fn snapshot(p: &Params, partition: u32, version: i64) -> Vec<u8> {
    let mut data = Vec::new();
    for j in 0..p.rows {
        let c = mix(version as u64 ^ j as u64) % 50 + 1;
        put(&mut data, &key_row(&key(partition, j), window_us(version)), &value_row(c, c * 3));
    }
    data.extend_from_slice(&(-1i32).to_be_bytes());
    lz4_block_stream(&data, 32 * 1024)
}

struct Out<W: Write + std::io::Seek> {
    zip: zip::ZipWriter<W>,
    entries: u64,
}

impl<W: Write + std::io::Seek> Out<W> {
    fn file(&mut self, path: &str, bytes: &[u8]) {
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .last_modified_time(zip::DateTime::from_date_and_time(2026, 11, 30, 9, 16, 0).expect("date"))
            .large_file(bytes.len() as u64 >= u32::MAX as u64);
        self.zip.start_file(path, opts).expect("zip entry");
        self.zip.write_all(bytes).expect("zip write");
        self.entries += 1;
    }

    fn with_crc(&mut self, path: &str, bytes: &[u8]) {
        self.file(&sidecar(path), &hadoop_crc(bytes));
        self.file(path, bytes);
    }
}

fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).map(String::as_str)
}

fn number<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    arg(args, name).map(|v| v.parse().unwrap_or_else(|_| panic!("{name}: not a number: {v}"))).unwrap_or(default)
}

/// The files of a seed zip under `prefix`, by their path after it, in the seed's order.
fn seed_files(z: &mut ZipInput<Cursor<Vec<u8>>>, prefix: &str) -> Vec<(String, Vec<u8>)> {
    let paths: Vec<String> = z
        .entries()
        .iter()
        .filter(|e| !e.is_dir && e.path.starts_with(prefix))
        .map(|e| e.path[prefix.len()..].to_string())
        .collect();
    paths
        .into_iter()
        .map(|rest| {
            let bytes = z.read(&format!("{prefix}{rest}"), 1 << 24).unwrap_or_else(|e| panic!("seed {rest}: {e}"));
            (rest, bytes)
        })
        .collect()
}

/// The seed's metadata and logs, written for every batch `0..batches` (FORMATS.md §2–§6): `metadata`, the last
/// `offsets/N` (its conf's `spark.sql.shuffle.partitions` set to the partition count) and `commits/N` for every
/// batch, one every 10 s of `batchTimestampMs`, and the seed's file source log as it is.
fn write_logs<W: Write + std::io::Seek>(out: &mut Out<W>, z: &mut ZipInput<Cursor<Vec<u8>>>, p: &Params) {
    let mut read = |path: &str| z.read(path, 1 << 24).unwrap_or_else(|e| panic!("seed {path}: {e}"));
    let metadata = read("metadata");
    let offsets = String::from_utf8(read("offsets/11")).expect("offsets text").replace(
        "\"spark.sql.shuffle.partitions\":\"3\"",
        &format!("\"spark.sql.shuffle.partitions\":\"{}\"", p.partitions),
    );
    let commit = read("commits/11");
    let ts_field = "\"batchTimestampMs\":";
    let ts_at = offsets.find(ts_field).expect("batchTimestampMs") + ts_field.len();
    let ts_end = ts_at + offsets[ts_at..].find(',').expect("timestamp end");
    let last_ts: i64 = offsets[ts_at..ts_end].parse().expect("timestamp");
    out.with_crc("metadata", &metadata);
    for b in 0..p.batches {
        let ts = last_ts - (p.batches - 1 - b) * 10_000;
        let text = format!("{}{ts}{}", &offsets[..ts_at], &offsets[ts_end..]);
        out.with_crc(&format!("offsets/{b}"), text.as_bytes());
    }
    for b in 0..p.batches {
        out.with_crc(&format!("commits/{b}"), &commit);
    }
    // The file source log of the seed (its offsets name logOffset 5), kept as it is.
    for b in 0..=5 {
        let path = format!("sources/0/{b}");
        let bytes = read(&path);
        out.with_crc(&path, &bytes);
    }
}

/// HDFS provider state: generated deltas and snapshots (see the module comment). Returns the versions kept.
fn write_hdfs_state<W: Write + std::io::Seek>(
    out: &mut Out<W>,
    z: &mut ZipInput<Cursor<Vec<u8>>>,
    p: &Params,
) -> (i64, i64) {
    let mut read = |path: &str| z.read(path, 1 << 24).unwrap_or_else(|e| panic!("seed {path}: {e}"));
    let op_metadata = read("state/0/_metadata/metadata");
    let schema = read("state/0/0/_metadata/schema");
    out.file("state/0/_metadata/metadata", &op_metadata);
    let last = p.batches; // the state version of the last committed batch (batch + 1)
    let first = ((last - p.retained).max(1) / p.snapshot_every * p.snapshot_every).max(1);
    for part in 0..p.partitions {
        if part == 0 {
            out.with_crc("state/0/0/_metadata/schema", &schema);
        }
        let damaged = part == 1 && p.damage != "none";
        let newest_snapshot = last / p.snapshot_every * p.snapshot_every;
        for v in first..=last {
            let dir = format!("state/0/{part}");
            let lost = damaged && p.damage == "missing-delta";
            if !(lost && v == last - 1) {
                out.with_crc(&format!("{dir}/{v}.delta"), &delta(p, part, v));
            }
            if v % p.snapshot_every == 0 && !(lost && v >= last - 1) {
                let mut s = snapshot(p, part, v);
                let crc = hadoop_crc(&s);
                if damaged && p.damage == "corrupt-snapshot" && v == newest_snapshot {
                    let at = s.len() / 2;
                    s[at] ^= 0xFF;
                }
                out.file(&format!("{dir}/.{v}.snapshot.crc"), &crc);
                out.file(&format!("{dir}/{v}.snapshot"), &s);
            }
        }
    }
    (first, last)
}

/// RocksDB provider state, every byte from the seed (see the module comment): partition `p` is the seed's
/// partition `p % 3` (its `SSTs/` and their `.crc` as they are), version `v` its `<r>.zip` and `.<r>.zip.crc`
/// with `r = 12 - (last - v) % 12`, so the newest version is the seed's newest. Returns the versions kept.
fn write_rocksdb_state<W: Write + std::io::Seek>(
    out: &mut Out<W>,
    z: &mut ZipInput<Cursor<Vec<u8>>>,
    p: &Params,
) -> (i64, i64) {
    const SEED_PARTITIONS: u32 = 3;
    const SEED_LAST: i64 = 12; // the seed's state versions are 1..=12, all retained
    let op_metadata = String::from_utf8(z.read("state/0/_metadata/metadata", 1 << 20).expect("operator metadata"))
        .expect("operator metadata text")
        .replace("\"numPartitions\":3", &format!("\"numPartitions\":{}", p.partitions));
    out.with_crc("state/0/_metadata/metadata", op_metadata.as_bytes());
    let seeds: Vec<Vec<(String, Vec<u8>)>> =
        (0..SEED_PARTITIONS).map(|sp| seed_files(z, &format!("state/0/{sp}/"))).collect();
    let last = p.batches;
    let first = (last - p.retained + 1).max(1);
    for part in 0..p.partitions {
        let files = &seeds[(part % SEED_PARTITIONS) as usize];
        let get = |name: &str| {
            files.iter().find(|(n, _)| n == name).map(|(_, b)| b.as_slice()).unwrap_or_else(|| panic!("seed {name}"))
        };
        let dir = format!("state/0/{part}");
        for (name, bytes) in files {
            let schema = name.starts_with("_metadata/");
            if name.starts_with("SSTs/") || (schema && part == 0) {
                out.file(&format!("{dir}/{name}"), bytes);
            }
        }
        for v in first..=last {
            let r = SEED_LAST - (last - v) % SEED_LAST;
            out.file(&format!("{dir}/.{v}.zip.crc"), get(&format!(".{r}.zip.crc")));
            out.file(&format!("{dir}/{v}.zip"), get(&format!("{r}.zip")));
        }
    }
    (first, last)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let base = preset(arg(&args, "--preset").unwrap_or("small")).expect("--preset small|mid|large|xl");
    let provider = arg(&args, "--provider").unwrap_or("hdfs").to_string();
    assert!(["hdfs", "rocksdb"].contains(&provider.as_str()), "--provider hdfs|rocksdb");
    let rocksdb = provider == "rocksdb";
    let hdfs_only = ["--rows", "--snapshot-every", "--damage"];
    if let Some(flag) = hdfs_only.iter().find(|f| rocksdb && args.iter().any(|a| a == **f)) {
        panic!("{flag} applies to --provider hdfs only (RocksDB state is the seed's, byte for byte)");
    }
    let p = Params {
        batches: number(&args, "--batches", base.batches),
        partitions: number(&args, "--partitions", base.partitions),
        rows: number(&args, "--rows", base.rows),
        // RocksDB: the versions Spark's maintenance keeps (spark.sql.streaming.minBatchesToRetain, default 100).
        retained: number(&args, "--retained", if rocksdb { 100 } else { base.retained }),
        snapshot_every: number(&args, "--snapshot-every", base.snapshot_every).max(1),
        damage: arg(&args, "--damage").unwrap_or("none").to_string(),
    };
    assert!(
        ["none", "missing-delta", "corrupt-snapshot"].contains(&p.damage.as_str()),
        "--damage none|missing-delta|corrupt-snapshot"
    );
    assert!(p.batches >= 2 && p.partitions >= 2 && p.rows >= 1, "--batches ≥ 2, --partitions ≥ 2, --rows ≥ 1");
    assert!(!rocksdb || p.retained >= 12, "--retained ≥ 12 with --provider rocksdb (every seed SST referenced)");
    let out_path = arg(&args, "--out").expect("--out FILE.zip").to_string();
    let seed_name = if rocksdb { "ss-4.3.0-agg-rocksdb.zip" } else { "ss-4.3.0-agg-hdfs.zip" };
    let seed_path = arg(&args, "--seed")
        .map(String::from)
        .unwrap_or_else(|| format!("{}/../../../shared/fixtures/{seed_name}", env!("CARGO_MANIFEST_DIR")));
    let seed = std::fs::read(&seed_path).unwrap_or_else(|e| panic!("{seed_path}: {e}"));
    let len = seed.len() as u64;
    let mut z = ZipInput::open(Cursor::new(seed), len, "seed", Limits::default()).expect("seed zip");

    let file = std::fs::File::create(&out_path).unwrap_or_else(|e| panic!("{out_path}: {e}"));
    let mut out = Out { zip: zip::ZipWriter::new(std::io::BufWriter::with_capacity(1 << 20, file)), entries: 0 };
    write_logs(&mut out, &mut z, &p);
    let (first, last) =
        if rocksdb { write_rocksdb_state(&mut out, &mut z, &p) } else { write_hdfs_state(&mut out, &mut z, &p) };
    let entries = out.entries;
    out.zip.finish().expect("zip finish").flush().expect("flush");
    let size = std::fs::metadata(&out_path).map(|m| m.len()).unwrap_or(0);
    let mut line = serde_json::json!({
        "out": out_path, "bytes": size, "entries": entries, "provider": provider, "batches": p.batches,
        "partitions": p.partitions, "state_versions": [first, last],
    });
    if !rocksdb {
        line["rows_per_file"] = p.rows.into();
        line["snapshot_every"] = p.snapshot_every.into();
        line["damage"] = p.damage.clone().into();
    }
    println!("{line}");
}
