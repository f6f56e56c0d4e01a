//! Test-only: a minimal writer of RocksDB block-based tables, following table/format.cc and
//! block_based_table_builder.cc, so the reader's paths the fixtures do not exercise (no compression, ZSTD,
//! crc32c/xxHash64 checksums, format_version 6 footers and context checksums, classic index values, several data
//! blocks with restart points, range tombstones) are tested, and large tables can be generated for benchmarks.
//! Reading the fixtures' real SSTs (LZ4 + XXH3, Snappy + CRC32c) stays the ground truth.

use super::sst::*;

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Builds one block in the classic encoding with `restart_interval`.
fn build_block(entries: &[(Vec<u8>, Vec<u8>)], restart_interval: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut restarts = Vec::new();
    let mut prev: &[u8] = &[];
    for (i, (k, v)) in entries.iter().enumerate() {
        let shared = if i % restart_interval == 0 {
            restarts.push(out.len() as u32);
            0
        } else {
            prev.iter().zip(k.iter()).take_while(|(a, b)| a == b).count()
        };
        put_varint(&mut out, shared as u64);
        put_varint(&mut out, (k.len() - shared) as u64);
        put_varint(&mut out, v.len() as u64);
        out.extend_from_slice(&k[shared..]);
        out.extend_from_slice(v);
        prev = k;
    }
    if restarts.is_empty() {
        restarts.push(0);
    }
    for r in &restarts {
        out.extend_from_slice(&r.to_le_bytes());
    }
    out.extend_from_slice(&(restarts.len() as u32).to_le_bytes());
    out
}

fn compress(kind: u8, data: &[u8]) -> Vec<u8> {
    match kind {
        0 => data.to_vec(),
        1 => snap::raw::Encoder::new().compress_vec(data).unwrap(),
        4 => {
            let mut out = Vec::new();
            put_varint(&mut out, data.len() as u64);
            out.extend(lz4_flex::block::compress(data));
            out
        }
        7 => {
            let mut out = Vec::new();
            put_varint(&mut out, data.len() as u64);
            out.extend(ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest));
            out
        }
        // zlib as RocksDB writes it: the size, then raw deflate (window_bits -14).
        2 => {
            use std::io::Write;
            let mut out = Vec::new();
            put_varint(&mut out, data.len() as u64);
            let mut e = flate2::write::DeflateEncoder::new(out, flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        // bzip2 as RocksDB writes it: the size, then one bzip2 stream.
        3 => {
            use std::io::Write;
            let mut out = Vec::new();
            put_varint(&mut out, data.len() as u64);
            let mut e = bzip2::write::BzEncoder::new(out, bzip2::Compression::new(1));
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        // A type the reader does not decode (xpress) or that does not exist: the bytes as they are.
        6 | 9 => data.to_vec(),
        _ => panic!("unsupported in the test writer"),
    }
}

/// Options of [`build_sst`].
pub struct WriterOptions {
    pub compression: u8,
    pub checksum: ChecksumType,
    pub format_version: u32,
    pub block_size: usize,
    pub restart_interval: usize,
}

fn checksum_byte(c: ChecksumType) -> u8 {
    match c {
        ChecksumType::None => 0,
        ChecksumType::Crc32c => 1,
        ChecksumType::XxHash32 => 2,
        ChecksumType::XxHash64 => 3,
        ChecksumType::Xxh3 => 4,
    }
}

struct W {
    out: Vec<u8>,
    opts_checksum: ChecksumType,
    base: u32,
}

impl W {
    fn block(&mut self, contents: &[u8], compression: u8) -> BlockHandle {
        let offset = self.out.len() as u64;
        let body = compress(compression, contents);
        self.out.extend_from_slice(&body);
        self.out.push(compression);
        let start = offset as usize;
        let mut c = builtin_checksum(self.opts_checksum, &self.out[start..]);
        if self.base != 0 {
            c = c.wrapping_add(self.base ^ ((offset as u32).wrapping_add((offset >> 32) as u32)));
        }
        self.out.extend_from_slice(&c.to_le_bytes());
        BlockHandle { offset, size: body.len() as u64 }
    }
}

fn handle_bytes(h: BlockHandle) -> Vec<u8> {
    let mut v = Vec::new();
    put_varint(&mut v, h.offset);
    put_varint(&mut v, h.size);
    v
}

/// How the writer lays out the index.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum IndexMode {
    /// Classic entries (value length + handle), restart interval 1.
    Classic,
    /// format_version 4 delta-encoded values with index restart interval 4.
    Delta,
    /// Delta-encoded values with the first key of each block (`kBinarySearchWithFirstKey`).
    DeltaFirstKey,
    /// Two-level partitioned index (`kTwoLevelIndexSearch`), partitions of 3 entries, delta-encoded.
    Partitioned,
    /// Classic, with every index entry written `n` times (a hostile table: each data block listed over and over).
    ClassicRepeated(usize),
}

/// Index block of (last key, handle, first key) in the given mode.
fn index_block(entries: &[(Vec<u8>, BlockHandle, Vec<u8>)], mode: IndexMode) -> Vec<u8> {
    if mode == IndexMode::Classic {
        let classic: Vec<(Vec<u8>, Vec<u8>)> = entries.iter().map(|(k, h, _)| (k.clone(), handle_bytes(*h))).collect();
        return build_block(&classic, 1);
    }
    let restart_interval = 4;
    let mut out = Vec::new();
    let mut restarts = Vec::new();
    let mut prev: Option<(&[u8], BlockHandle)> = None;
    for (i, (k, h, first)) in entries.iter().enumerate() {
        let shared = if i % restart_interval == 0 {
            restarts.push(out.len() as u32);
            0
        } else {
            prev.map(|(p, _)| p.iter().zip(k.iter()).take_while(|(a, b)| a == b).count()).unwrap_or(0)
        };
        put_varint(&mut out, shared as u64);
        put_varint(&mut out, (k.len() - shared) as u64);
        out.extend_from_slice(&k[shared..]);
        match prev {
            Some((_, ph)) if shared != 0 => {
                let delta = h.size as i64 - ph.size as i64;
                put_varint(&mut out, ((delta << 1) ^ (delta >> 63)) as u64);
            }
            _ => out.extend(handle_bytes(*h)),
        }
        if mode == IndexMode::DeltaFirstKey {
            put_varint(&mut out, first.len() as u64);
            out.extend_from_slice(first);
        }
        prev = Some((k, *h));
    }
    for r in &restarts {
        out.extend_from_slice(&r.to_le_bytes());
    }
    out.extend_from_slice(&(restarts.len().max(1) as u32).to_le_bytes());
    out
}

/// Internal key: user key + (seq << 8 | type) little-endian.
pub fn ikey(user: &[u8], seq: u64, kind: u8) -> Vec<u8> {
    let mut k = user.to_vec();
    k.extend_from_slice(&((seq << 8) | u64::from(kind)).to_le_bytes());
    k
}

/// Writes a table of `entries` (internal keys, sorted) and `range_dels` ((internal start key, end user key)).
pub fn build_sst(entries: &[(Vec<u8>, Vec<u8>)], range_dels: &[(Vec<u8>, Vec<u8>)], o: &WriterOptions) -> Vec<u8> {
    build_sst_indexed(entries, range_dels, o, IndexMode::Classic)
}

/// [`build_sst`] with an index layout.
pub fn build_sst_indexed(
    entries: &[(Vec<u8>, Vec<u8>)],
    range_dels: &[(Vec<u8>, Vec<u8>)],
    o: &WriterOptions,
    mode: IndexMode,
) -> Vec<u8> {
    let base = if o.format_version >= 6 { 0x1234_5678 } else { 0 };
    let mut w = W { out: Vec::new(), opts_checksum: o.checksum, base };
    let mut index_entries: Vec<(Vec<u8>, BlockHandle, Vec<u8>)> = Vec::new();
    let mut cur: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut cur_size = 0;
    let flush = |w: &mut W, cur: &mut Vec<(Vec<u8>, Vec<u8>)>, index: &mut Vec<(Vec<u8>, BlockHandle, Vec<u8>)>| {
        if cur.is_empty() {
            return;
        }
        let b = build_block(cur, o.restart_interval);
        let h = w.block(&b, o.compression);
        index.push((cur.last().unwrap().0.clone(), h, cur[0].0.clone()));
        cur.clear();
    };
    for (k, v) in entries {
        cur.push((k.clone(), v.clone()));
        cur_size += k.len() + v.len() + 3;
        if cur_size >= o.block_size {
            flush(&mut w, &mut cur, &mut index_entries);
            cur_size = 0;
        }
    }
    flush(&mut w, &mut cur, &mut index_entries);
    let mode = match mode {
        IndexMode::ClassicRepeated(n) => {
            index_entries = index_entries.iter().flat_map(|e| std::iter::repeat_n(e.clone(), n)).collect();
            IndexMode::Classic
        }
        m => m,
    };
    let mut meta: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    if !range_dels.is_empty() {
        let b = build_block(range_dels, 1);
        let h = w.block(&b, 0);
        meta.push((b"rocksdb.range_del".to_vec(), handle_bytes(h)));
    }
    let mut props: Vec<(Vec<u8>, Vec<u8>)> = vec![
        (b"rocksdb.column.family.name".to_vec(), b"default".to_vec()),
        (b"rocksdb.comparator".to_vec(), b"leveldb.BytewiseComparator".to_vec()),
    ];
    let mut n = Vec::new();
    put_varint(&mut n, entries.len() as u64);
    props.push((b"rocksdb.num.entries".to_vec(), n));
    if mode != IndexMode::Classic {
        props.push((b"rocksdb.index.value.is.delta.encoded".to_vec(), vec![1]));
    }
    let index_type: u32 = match mode {
        IndexMode::Partitioned => 2,
        IndexMode::DeltaFirstKey => 3,
        _ => 0,
    };
    props.push((b"rocksdb.block.based.table.index.type".to_vec(), index_type.to_le_bytes().to_vec()));
    props.sort();
    let pb = build_block(&props, 1);
    let ph = w.block(&pb, 0);
    meta.push((b"rocksdb.properties".to_vec(), handle_bytes(ph)));
    let ih = if mode == IndexMode::Partitioned {
        let mut top = Vec::new();
        for part in index_entries.chunks(3) {
            let pb = index_block(part, IndexMode::Delta);
            let h = w.block(&pb, o.compression);
            top.push((part[part.len() - 1].0.clone(), h, part[0].2.clone()));
        }
        let tb = index_block(&top, IndexMode::Delta);
        w.block(&tb, o.compression)
    } else {
        let ib = index_block(&index_entries, mode);
        w.block(&ib, o.compression)
    };
    if o.format_version >= 6 {
        meta.push((b"rocksdb.index".to_vec(), handle_bytes(ih)));
    }
    meta.sort();
    let mb = build_block(&meta, 1);
    let mh = w.block(&mb, 0);
    let footer_offset = w.out.len() as u64;
    let mut f = vec![checksum_byte(o.checksum)];
    if o.format_version >= 6 {
        f.extend_from_slice(&[0x3e, 0x00, 0x7a, 0x00]);
        f.extend_from_slice(&[0; 4]);
        f.extend_from_slice(&base.to_le_bytes());
        f.extend_from_slice(&(mh.size as u32).to_le_bytes());
        f.extend_from_slice(&[0; 24]);
    } else {
        f.extend(handle_bytes(mh));
        f.extend(handle_bytes(ih));
        f.resize(41, 0);
    }
    f.extend_from_slice(&o.format_version.to_le_bytes());
    f.extend_from_slice(&BLOCK_BASED_TABLE_MAGIC.to_le_bytes());
    if o.format_version >= 6 {
        let c = builtin_checksum(o.checksum, &f)
            .wrapping_add(base ^ ((footer_offset as u32).wrapping_add((footer_offset >> 32) as u32)));
        f[5..9].copy_from_slice(&c.to_le_bytes());
    }
    w.out.extend(f);
    w.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
        (0..n)
            .map(|i| {
                let user = format!("key-{i:08}");
                (ikey(user.as_bytes(), i as u64 + 1, 1), format!("value number {i} with some padding").into_bytes())
            })
            .collect()
    }

    #[test]
    fn every_compression_checksum_and_footer_version_round_trips() {
        let entries = sample(500);
        for compression in [0u8, 1, 2, 3, 4, 7] {
            for checksum in [
                ChecksumType::None,
                ChecksumType::Crc32c,
                ChecksumType::XxHash32,
                ChecksumType::XxHash64,
                ChecksumType::Xxh3,
            ] {
                for format_version in [2u32, 5, 6] {
                    let o =
                        WriterOptions { compression, checksum, format_version, block_size: 1024, restart_interval: 16 };
                    let sst = build_sst(&entries, &[], &o);
                    let t = read_sst(&sst, SstLimits::default())
                        .unwrap_or_else(|e| panic!("c{compression} {checksum:?} fv{format_version}: {e}"));
                    assert_eq!(t.entries.len(), entries.len());
                    assert!(t.data_blocks > 5, "several data blocks");
                    for (e, (k, v)) in t.entries.iter().zip(&entries) {
                        assert_eq!(&e.user_key[..], &k[..k.len() - 8]);
                        assert_eq!(&e.value, v);
                    }
                    if checksum != ChecksumType::None {
                        // A flipped byte in the first data block is a checksum mismatch at offset 0.
                        let mut bad = sst.clone();
                        bad[3] ^= 0x40;
                        let e = read_sst(&bad, SstLimits::default()).unwrap_err();
                        assert_eq!(e.offset, 0, "{e}");
                        assert!(e.message.contains("checksum"), "{e}");
                    }
                }
            }
        }
    }

    #[test]
    fn every_index_layout_reads_the_same_entries() {
        let entries = sample(700);
        let o = WriterOptions {
            compression: 4,
            checksum: ChecksumType::Xxh3,
            format_version: 5,
            block_size: 512,
            restart_interval: 16,
        };
        for mode in [IndexMode::Classic, IndexMode::Delta, IndexMode::DeltaFirstKey, IndexMode::Partitioned] {
            let sst = build_sst_indexed(&entries, &[], &o, mode);
            let t = read_sst(&sst, SstLimits::default()).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
            assert!(t.data_blocks > 20, "{mode:?}: {} blocks", t.data_blocks);
            assert_eq!(t.entries.len(), entries.len(), "{mode:?}");
            for (e, (k, v)) in t.entries.iter().zip(&entries) {
                assert_eq!(&e.user_key[..], &k[..k.len() - 8], "{mode:?}");
                assert_eq!(&e.value, v, "{mode:?}");
            }
            for n in (0..sst.len()).step_by(97) {
                assert!(read_sst(&sst[..n], SstLimits::default()).is_err(), "{mode:?} cut at {n}");
            }
        }
    }

    #[test]
    fn range_tombstones_and_deletions_resolve() {
        let entries = vec![
            (ikey(b"a", 5, 1), b"A".to_vec()),
            (ikey(b"b", 2, 1), b"B".to_vec()),
            (ikey(b"c", 9, 0), Vec::new()),
            (ikey(b"c", 3, 1), b"C".to_vec()),
            (ikey(b"d", 4, 2), b"m2".to_vec()),
            (ikey(b"d", 1, 1), b"D".to_vec()),
        ];
        let dels = vec![(ikey(b"b", 3, 0xF), b"c".to_vec())];
        let o = WriterOptions {
            compression: 0,
            checksum: ChecksumType::Crc32c,
            format_version: 5,
            block_size: 4096,
            restart_interval: 2,
        };
        let t = read_sst(&build_sst(&entries, &dels, &o), SstLimits::default()).unwrap();
        assert_eq!(t.range_deletions.len(), 1);
        let m = super::super::resolve_entries(t.entries, &t.range_deletions);
        let got: Vec<(&[u8], &[u8])> = m.iter().map(|(k, v)| (k.as_slice(), v.as_slice())).collect();
        assert_eq!(got, vec![(b"a".as_slice(), b"A".as_slice()), (b"d".as_slice(), b"D,m2".as_slice())]);
    }

    #[test]
    fn bombs_and_limits() {
        let entries = sample(2000);
        let o = WriterOptions {
            compression: 4,
            checksum: ChecksumType::Crc32c,
            format_version: 5,
            block_size: 64 * 1024,
            restart_interval: 16,
        };
        let sst = build_sst(&entries, &[], &o);
        let small = SstLimits { max_block_bytes: 1024, ..SstLimits::default() };
        let e = read_sst(&sst, small).unwrap_err();
        assert!(e.message.contains("limit") && e.limit, "{e:?}");
        let few = SstLimits { max_entries: 10, ..SstLimits::default() };
        assert!(read_sst(&sst, few).unwrap_err().limit);
        let little = SstLimits { max_total_bytes: 2000, ..SstLimits::default() };
        assert!(read_sst(&sst, little).unwrap_err().limit);
    }

    /// A data block listed again by the index (a hostile table decoding one block over and over) is damage at the
    /// index; copying more entries than the memory budget is a limit.
    #[test]
    fn blocks_listed_twice_are_damage_and_the_copy_budget_a_limit() {
        let entries = sample(500);
        let o = WriterOptions {
            compression: 4,
            checksum: ChecksumType::Crc32c,
            format_version: 5,
            block_size: 1024,
            restart_interval: 16,
        };
        let plain = build_sst_indexed(&entries, &[], &o, IndexMode::Classic);
        assert_eq!(read_sst(&plain, SstLimits::default()).unwrap().entries.len(), 500);
        let twice = build_sst_indexed(&entries, &[], &o, IndexMode::ClassicRepeated(2));
        let e = read_sst(&twice, SstLimits::default()).unwrap_err();
        assert!(!e.limit && e.message.contains("overlaps the one before it"), "{e:?}");
        // An index listing more handles than the file has room for blocks stops there, before they are kept.
        let many = build_sst_indexed(&entries[..20], &[], &o, IndexMode::ClassicRepeated(20_000));
        let e = read_sst(&many, SstLimits::default()).unwrap_err();
        assert!(!e.limit && e.message.contains("more block handles than the file can hold"), "{e:?}");
        let budget = SstLimits { max_copied_bytes: 100 * ENTRY_COST, ..SstLimits::default() };
        let e = read_sst(&plain, budget).unwrap_err();
        assert!(e.limit && e.message.contains("bytes of memory"), "{e:?}");
        // scan_sst copies nothing: the budget does not apply.
        assert!(scan_sst(&plain, budget, |_, _, _, _| Ok(())).is_ok());
    }

    /// A block compression RocksDB writes but this reader does not decode (xpress) is a limit: the table is not
    /// verified. A compression type no RocksDB has is damage.
    #[test]
    fn undecoded_compressions_are_a_limit_and_unknown_ones_damage() {
        let entries = sample(50);
        for (compression, limit) in [(6u8, true), (9, false)] {
            let o = WriterOptions {
                compression,
                checksum: ChecksumType::Crc32c,
                format_version: 5,
                block_size: 4096,
                restart_interval: 16,
            };
            let e = read_sst(&build_sst(&entries, &[], &o), SstLimits::default()).unwrap_err();
            assert_eq!(e.limit, limit, "compression {compression}: {e:?}");
        }
    }

    /// A zlib block whose deflate stream gives other than the size it declares is damage, not a limit.
    #[test]
    fn a_zlib_block_of_another_size_than_declared_is_damage() {
        let entries = sample(50);
        let o = WriterOptions {
            compression: 2,
            checksum: ChecksumType::None,
            format_version: 5,
            block_size: 1 << 20,
            restart_interval: 16,
        };
        let mut sst = build_sst(&entries, &[], &o);
        assert_eq!(read_sst(&sst, SstLimits::default()).unwrap().entries.len(), 50);
        // The first data block starts the file with its size varint: one more than it inflates to.
        assert!(sst[0] & 0x80 != 0 && sst[1] & 0x80 == 0, "a two-byte varint");
        let n = (sst[0] & 0x7f) as usize | ((sst[1] as usize) << 7);
        sst[0] = (sst[0] & 0x80) | ((n + 1) as u8 & 0x7f);
        sst[1] = ((n + 1) >> 7) as u8;
        let e = read_sst(&sst, SstLimits::default()).unwrap_err();
        assert!(!e.limit && e.message.contains("zlib produced"), "{e:?}");
        assert_eq!(e.offset, 0);
    }

    /// A data block of one 8,200-byte key, then 11,000 entries that each share all of it (4 bytes of entry
    /// header, nothing stored): 61 KB of file that handed out, and `read_sst` copied, 90 MB of keys.
    #[test]
    fn entries_sharing_a_long_key_stop_at_the_expansion_limit() {
        let key = ikey(&[b'k'; 8192], 1, 1);
        let entries = vec![(key.clone(), Vec::new()); 11_000];
        let o = WriterOptions {
            compression: 0,
            checksum: ChecksumType::Crc32c,
            format_version: 5,
            block_size: usize::MAX,
            restart_interval: usize::MAX,
        };
        let sst = build_sst(&entries, &[], &o);
        assert!(sst.len() < 62_000, "{} bytes", sst.len());
        let limits = SstLimits::default();
        let budget = MIN_BLOCK_BYTES_CHARGED * limits.max_entry_expansion;
        let start = std::time::Instant::now();
        let e = read_sst(&sst, limits).unwrap_err();
        assert!(e.limit, "a limit of this reader, not damage: {e:?}");
        assert_eq!(e.offset, 0, "the data block's offset: {e}");
        assert!(e.message.contains("share long key prefixes"), "{e}");
        let mut seen = 0usize;
        let e2 = scan_sst(&sst, limits, |k, _, _, v| {
            seen += k.len() + v.len();
            Ok(())
        })
        .unwrap_err();
        assert_eq!(e2, e);
        assert!(seen <= budget, "{seen} bytes handed out, budget {budget}");
        assert!(start.elapsed() < std::time::Duration::from_secs(5), "{:?}", start.elapsed());
        // Long keys that share long prefixes as RocksDB writes them (a whole key every 16 entries) read whole:
        // 8.2 MB of keys from a 559 KB table (14.7 times).
        let prefix = [b'p'; 4088];
        let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..2000u64)
            .map(|i| {
                let mut k = prefix.to_vec();
                k.extend_from_slice(&i.to_be_bytes());
                (ikey(&k, i + 1, 1), i.to_le_bytes().to_vec())
            })
            .collect();
        let o = WriterOptions { restart_interval: 16, ..o };
        let sst = build_sst(&entries, &[], &o);
        let t = read_sst(&sst, limits).unwrap();
        assert_eq!(t.entries.len(), 2000);
        assert!(t.entries.iter().zip(&entries).all(|(a, (k, v))| a.user_key == k[..k.len() - 8] && &a.value == v));
        let scan = scan_sst(&sst, limits, |_, _, _, _| Ok(())).unwrap();
        assert!(scan.entry_bytes > 14 * scan.decompressed_bytes, "{scan:?}");
    }

    /// Throughput of the SST reader on a generated table of 1M entries (LZ4 + XXH3, as Spark 4.x writes):
    /// printed with `cargo test --release -- --nocapture sst_read_throughput`.
    #[test]
    fn sst_read_throughput() {
        let n = if cfg!(debug_assertions) { 50_000 } else { 1_000_000 };
        let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
            .map(|i| {
                let mut k = vec![0u8; 9];
                k.extend_from_slice(&(i as u64).to_be_bytes());
                let mut v = vec![0u8; 1];
                v.extend_from_slice(&[0u8; 8]);
                v.extend_from_slice(&(i as u64).to_le_bytes());
                v.extend_from_slice(&((i * 3) as u64).to_le_bytes());
                (ikey(&k, i as u64 + 1, 1), v)
            })
            .collect();
        let o = WriterOptions {
            compression: 4,
            checksum: ChecksumType::Xxh3,
            format_version: 5,
            block_size: 4096,
            restart_interval: 16,
        };
        let sst = build_sst(&entries, &[], &o);
        // Baseline: raw LZ4 decompression of the same data blocks (built and compressed the same way).
        let mut blocks: Vec<(usize, Vec<u8>)> = Vec::new();
        let mut cur = Vec::new();
        let mut size = 0;
        for (k, v) in &entries {
            cur.push((k.clone(), v.clone()));
            size += k.len() + v.len() + 3;
            if size >= o.block_size {
                let b = build_block(&cur, o.restart_interval);
                blocks.push((b.len(), lz4_flex::block::compress(&b)));
                cur.clear();
                size = 0;
            }
        }
        let t0 = std::time::Instant::now();
        let mut raw_out = 0usize;
        for (n, c) in &blocks {
            raw_out += lz4_flex::block::decompress(c, *n).unwrap().len();
        }
        let raw_dt = t0.elapsed().as_secs_f64();
        let t0 = std::time::Instant::now();
        let mut count = 0u64;
        let scan = scan_sst(&sst, SstLimits::default(), |_, _, _, _| {
            count += 1;
            Ok(())
        })
        .unwrap();
        let scan_dt = t0.elapsed().as_secs_f64();
        assert_eq!(count, n as u64);
        let t0 = std::time::Instant::now();
        let t = read_sst(&sst, SstLimits::default()).unwrap();
        let dt = t0.elapsed().as_secs_f64();
        assert_eq!(t.entries.len(), n);
        let mb = |bytes: usize, secs: f64| bytes as f64 / secs / 1e6;
        println!(
            "SST {n} entries, {} file bytes, {} decompressed: raw LZ4 {:.0} MB/s; scan_sst {:.0} MB/s ({:.0} rows/s); read_sst {:.0} MB/s ({:.0} rows/s)",
            sst.len(),
            scan.decompressed_bytes,
            mb(raw_out, raw_dt),
            mb(scan.decompressed_bytes, scan_dt),
            n as f64 / scan_dt,
            mb(scan.decompressed_bytes, dt),
            n as f64 / dt
        );
    }
}

#[cfg(test)]
mod pipeline_bench {
    use super::*;
    use crate::archive::{Limits, MemArchive};
    use std::io::Write;

    fn zip_of(files: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, data) in files {
            let o = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
            w.start_file(*name, o).unwrap();
            w.write_all(data).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    /// Whole `load_store` on a generated store (zip + metadata + 2 overlapping SSTs, Spark-shaped rows): rows/s
    /// and MB/s of SST bytes. `cargo test --release -- --nocapture load_store_throughput` for real numbers.
    #[test]
    fn load_store_throughput() {
        let n: usize = if cfg!(debug_assertions) { 40_000 } else { 1_000_000 };
        let row = |i: usize, gen: u64| {
            let mut k = vec![0u8; 9];
            k.extend_from_slice(&(i as u64).to_le_bytes());
            let mut v = vec![0u8; 9];
            v.extend_from_slice(&(i as u64 + gen).to_le_bytes());
            v.extend_from_slice(&((i * 3) as u64).to_le_bytes());
            (k, v)
        };
        let o = WriterOptions {
            compression: 4,
            checksum: ChecksumType::Xxh3,
            format_version: 5,
            block_size: 4096,
            restart_interval: 16,
        };
        // older file: every key; newer file: every other key updated.
        let mut old: Vec<(Vec<u8>, Vec<u8>)> = (0..n).map(|i| row(i, 0)).map(|(k, v)| (ikey(&k, 1, 1), v)).collect();
        old.sort();
        let mut new: Vec<(Vec<u8>, Vec<u8>)> =
            (0..n).step_by(2).map(|i| row(i, 1)).map(|(k, v)| (ikey(&k, 2, 1), v)).collect();
        new.sort();
        let sst1 = build_sst(&old, &[], &o);
        let sst2 = build_sst(&new, &[], &o);
        let id1 = "000008-00000000-0000-0000-0000-000000000001.sst";
        let id2 = "000009-00000000-0000-0000-0000-000000000002.sst";
        let meta = format!(
            "v1\n{{\"sstFiles\":[{{\"localFileName\":\"000008.sst\",\"dfsSstFileName\":\"{id1}\",\"sizeBytes\":{}}},{{\"localFileName\":\"000009.sst\",\"dfsSstFileName\":\"{id2}\",\"sizeBytes\":{}}}],\"numKeys\":{n}}}",
            sst1.len(),
            sst2.len()
        );
        let t0 = std::time::Instant::now();
        let mut all = read_sst(&sst1, SstLimits::default()).unwrap().entries;
        all.extend(read_sst(&sst2, SstLimits::default()).unwrap().entries);
        let t1 = std::time::Instant::now();
        let m = super::super::resolve_entries(all, &[]);
        let t2 = std::time::Instant::now();
        drop(m);
        println!(
            "phases: read {:.3}s, resolve {:.3}s, drop {:.3}s",
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
            t2.elapsed().as_secs_f64()
        );
        let z = zip_of(&[("metadata", meta.into_bytes())]);
        let sst_bytes = sst1.len() + sst2.len();
        let files = vec![
            ("state/0/0/1.zip".to_string(), z),
            (format!("state/0/0/SSTs/{id1}"), sst1),
            (format!("state/0/0/SSTs/{id2}"), sst2),
        ];
        let mut a = MemArchive::new("bench", files, Limits::default()).unwrap();
        let t0 = std::time::Instant::now();
        let s = super::super::load_store(&mut a, "state/0/0", 1, &Default::default()).unwrap();
        let dt = t0.elapsed().as_secs_f64();
        assert_eq!(s.entries.len(), n);
        let (k, v) = row(2, 1);
        assert_eq!(s.entries.get(&k), Some(&v), "newer SST wins");
        let (k, v) = row(3, 0);
        assert_eq!(s.entries.get(&k), Some(&v));
        println!(
            "load_store: {} entries from {sst_bytes} SST bytes in {dt:.3}s: {:.0} rows/s, {:.1} MB/s",
            n + n / 2,
            (n + n / 2) as f64 / dt,
            sst_bytes as f64 / dt / 1e6
        );
    }

    /// An SST of a restart's zip that a limit of this reader stops (here a block compressed with xpress) makes
    /// the zip "not verified", naming the SST and the byte offset, never damage.
    #[test]
    fn a_zip_whose_sst_is_over_a_limit_is_not_verified() {
        let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..50u64).map(|i| (ikey(&i.to_be_bytes(), 1, 1), vec![1])).collect();
        let o = WriterOptions {
            compression: 6,
            checksum: ChecksumType::Crc32c,
            format_version: 5,
            block_size: 4096,
            restart_interval: 16,
        };
        let sst = build_sst(&entries, &[], &o);
        let id = "000008-00000000-0000-0000-0000-000000000001.sst";
        let meta = format!(
            "v1\n{{\"sstFiles\":[{{\"localFileName\":\"000008.sst\",\"dfsSstFileName\":\"{id}\",\"sizeBytes\":{}}}],\"numKeys\":50}}",
            sst.len()
        );
        let z = zip_of(&[("metadata", meta.into_bytes())]);
        let listing = vec![(format!("SSTs/{id}"), sst.len() as u64)];
        let files = vec![("state/0/0/1.zip".to_string(), z.clone()), (format!("state/0/0/SSTs/{id}"), sst)];
        let mut a = MemArchive::new("limit", files, Limits::default()).unwrap();
        let c = crate::state_integrity::check_rocksdb_zip(
            &mut a,
            "state/0/0",
            "state/0/0/1.zip",
            &z,
            &listing,
            "",
            u64::MAX,
        );
        assert!(c.problem.is_none() && c.exception.is_none() && c.error_class.is_none(), "{c:?}");
        let reason = c.not_verified.expect("not verified");
        assert!(reason.starts_with(&format!("state/0/0/SSTs/{id} at byte ")) && reason.contains("xpress"), "{reason}");
    }
}
