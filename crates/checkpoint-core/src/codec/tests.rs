use super::*;
use crate::archive::Archive;
use crate::state::hdfs::{scan_records, RecordErrorKind};
use crate::testutil::*;

/// Deterministic pseudo-random bytes (xorshift), for incompressible blocks.
fn noise(n: usize, mut seed: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect()
}

fn first_real_delta() -> Vec<u8> {
    let mut a = open_fixture("ss-4.3.0-agg-hdfs");
    a.read("state/0/0/1.delta", 1 << 20).unwrap()
}

#[test]
fn sniffs_every_magic() {
    assert_eq!(sniff(b"LZ4Block\x25"), Codec::Lz4Block);
    assert_eq!(sniff(b"\x82SNAPPY\x00\x00\x00\x00\x01"), Codec::Snappy);
    assert_eq!(sniff(b"\x28\xB5\x2F\xFD\x00"), Codec::Zstd);
    assert_eq!(sniff(b"\x50\x2A\x4D\x18\x00"), Codec::Zstd);
    assert_eq!(sniff(b"ZV\x01\x00"), Codec::Lzf);
    assert_eq!(sniff(b"ZVx"), Codec::Unknown);
    assert_eq!(sniff(b""), Codec::Unknown);
    assert_eq!(sniff(b"LZ4Bloc"), Codec::Unknown);
    let e = decompress(b"hello world", 100).unwrap_err();
    assert_eq!((e.kind, e.offset, e.codec), (CodecErrorKind::BadMagic, 0, Codec::Unknown));
}

/// A conf value names a codec as Spark's `CompressionCodec.createCodec` resolves it: short names in any case, the
/// four full class names exactly; anything else is no codec Spark ships.
#[test]
fn names_a_codec_as_spark_resolves_it() {
    for (name, codec) in [
        ("lz4", Codec::Lz4Block),
        ("LZ4", Codec::Lz4Block),
        ("Snappy", Codec::Snappy),
        ("zstd", Codec::Zstd),
        ("lzf", Codec::Lzf),
        ("org.apache.spark.io.LZ4CompressionCodec", Codec::Lz4Block),
        ("org.apache.spark.io.LZFCompressionCodec", Codec::Lzf),
        ("org.apache.spark.io.SnappyCompressionCodec", Codec::Snappy),
        ("org.apache.spark.io.ZStdCompressionCodec", Codec::Zstd),
    ] {
        assert_eq!(Codec::from_spark_name(name), Some(codec), "{name}");
    }
    for name in ["", " snappy", "gzip", "none", "org.apache.spark.io.zstdcompressioncodec", "com.example.MyCodec"] {
        assert_eq!(Codec::from_spark_name(name), None, "{name}");
    }
}

/// Every state record file of every fixture decodes and scans, except a file the fixture's mutation says was
/// damaged by a flipped byte: that one must fail in the block holding the flipped byte.
#[test]
fn every_fixture_state_file_decodes() {
    let mut files = 0;
    let mut damaged_seen = 0;
    for name in fixture_names() {
        let rec = fixture_record(&name);
        let m = &rec["mutation"];
        let damaged_file = (m["kind"] == "j").then(|| m["file"].as_str().unwrap_or("").to_string());
        let flipped_at: Option<u64> = m["description"].as_str().and_then(|d| {
            let i = d.find("offset ")? + 7;
            d[i..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
        });
        let mut a = open_fixture(&name);
        for path in state_record_files(&a) {
            let bytes = a.read(&path, 64 << 20).unwrap();
            files += 1;
            let res = decompress(&bytes, 64 << 20);
            if damaged_file.as_deref() == Some(path.as_str()) {
                damaged_seen += 1;
                let e = res.expect_err(&format!("{name}/{path} was damaged but decodes"));
                let at = flipped_at.expect("flipped offset in description");
                assert!(
                    matches!(e.kind, CodecErrorKind::Corrupt | CodecErrorKind::ChecksumMismatch),
                    "{name}/{path}: {e}"
                );
                assert!(e.offset <= at, "{name}/{path}: error at {} after the flipped byte {at}", e.offset);
                continue;
            }
            let data = res.unwrap_or_else(|e| panic!("{name}/{path}: {e}"));
            assert_eq!(sniff(&bytes), Codec::Lz4Block, "{name}/{path}: fixtures are written with Spark's default");
            if path.ends_with(".changelog") {
                continue; // RocksDB changelogs may carry a v2+ header; h3 parses them.
            }
            let st = scan_records(&data).unwrap_or_else(|e| panic!("{name}/{path}: {e}"));
            assert_eq!(st.trailing_bytes, 0, "{name}/{path}");
            assert_eq!(st.end_offset as usize + 4, data.len(), "{name}/{path}");
            if path.ends_with(".snapshot") {
                assert_eq!(st.removals, 0, "{name}/{path}: snapshots hold no removals");
            }
        }
    }
    assert!(files > 500, "only {files} state files found");
    assert!(damaged_seen >= 2, "the flipped-byte fixtures were not exercised");
}

/// FORMATS.md §20.1: a first delta of an aggregation is one LZ4 block and the 21-byte terminator.
#[test]
fn real_delta_layout() {
    let bytes = first_real_delta();
    let d = decompress_detailed(&bytes, 1 << 20).unwrap();
    assert!(d.complete);
    assert_eq!(d.blocks, 1);
    assert_eq!(&bytes[bytes.len() - 21..bytes.len() - 13], LZ4_MAGIC);
    assert_eq!(bytes[bytes.len() - 13], 0x15);
    assert!(bytes[bytes.len() - 12..].iter().all(|&b| b == 0));
    let st = scan_records(&d.data).unwrap();
    assert!(st.puts >= 1);
    assert_eq!(st.removals, 0);
}

#[test]
fn lz4_checksum_flipped_is_reported() {
    let mut bytes = first_real_delta();
    bytes[17] ^= 0x01;
    let e = decompress(&bytes, 1 << 20).unwrap_err();
    assert_eq!((e.kind, e.offset), (CodecErrorKind::ChecksumMismatch, 0));
}

#[test]
fn lz4_truncated_at_every_byte_is_an_error() {
    let bytes = first_real_delta();
    for cut in 0..bytes.len() {
        let e = decompress(&bytes[..cut], 1 << 20).unwrap_err();
        if cut >= 8 {
            assert_eq!(e.kind, CodecErrorKind::Truncated, "cut at {cut}: {e}");
            assert!(e.offset as usize <= cut);
        }
    }
    // Cut exactly before the end-of-stream block: Spark's reader accepts it, strict decoding does not.
    let cut = bytes.len() - 21;
    let e = decompress(&bytes[..cut], 1 << 20).unwrap_err();
    assert_eq!((e.kind, e.offset as usize), (CodecErrorKind::Truncated, cut));
    let d = decompress_detailed(&bytes[..cut], 1 << 20).unwrap();
    assert!(!d.complete);
    assert_eq!(d.data, decompress(&bytes, 1 << 20).unwrap());
}

#[test]
fn lz4_every_flipped_byte_never_panics() {
    let bytes = first_real_delta();
    let good = decompress(&bytes, 1 << 20).unwrap();
    for i in 0..bytes.len() {
        for bit in [0x01u8, 0x80] {
            let mut b = bytes.clone();
            b[i] ^= bit;
            if let Ok(d) = decompress(&b, 1 << 20) {
                // Only a flip in an ignored bit may still decode, and then to the same bytes.
                assert_eq!(d, good, "byte {i} flipped decodes to other data without a checksum error");
            }
        }
    }
}

#[test]
fn lz4_block_claiming_2gb_is_damage_and_a_real_block_past_the_limit_is_a_limit() {
    let mut b = Vec::new();
    b.extend_from_slice(LZ4_MAGIC);
    b.push(0x2F);
    b.extend_from_slice(&100i32.to_le_bytes());
    b.extend_from_slice(&i32::MAX.to_le_bytes());
    b.extend_from_slice(&0i32.to_le_bytes());
    b.extend_from_slice(&[0u8; 100]);
    // Over the token's largest block (32 MiB): no writer made it, whatever the caller's limit.
    let e = decompress(&b, 256 << 20).unwrap_err();
    assert_eq!((e.kind, e.offset), (CodecErrorKind::Corrupt, 0));
    // A block lz4-java writes (64 KiB, token 0x26) past a small limit: the reader's limit, not damage.
    let s = write::lz4_block_stream(&vec![7u8; 60_000], 64 * 1024);
    let e = decompress(&s, 1000).unwrap_err();
    assert_eq!((e.kind, e.offset), (CodecErrorKind::OverLimit, 0));
    // Within the limit but over what the token's block size allows: corrupt, as lz4-java says.
    let mut b2 = b.clone();
    b2[8] = 0x25;
    b2[13..17].copy_from_slice(&(64 * 1024i32).to_le_bytes());
    assert_eq!(decompress(&b2, 256 << 20).unwrap_err().kind, CodecErrorKind::Corrupt);
    // A second block pushing the total over the limit.
    let s = write::lz4_block_stream(&vec![7u8; 5000], 32 * 1024);
    let e = decompress(&s, 4999).unwrap_err();
    assert_eq!(e.kind, CodecErrorKind::OverLimit);
}

#[test]
fn lz4_raw_blocks_multi_block_and_concatenated_streams() {
    let mut data = noise(100_000, 42);
    data.extend(std::iter::repeat_n(b'x', 70_000));
    let s = write::lz4_block_stream(&data, 32 * 1024);
    // Random data is stored RAW (token 0x15), repetitive data compressed (0x25).
    assert_eq!(s[8], 0x15);
    assert!(s.windows(9).any(|w| w == b"LZ4Block\x25"));
    let d = decompress_detailed(&s, 1 << 20).unwrap();
    assert_eq!(d.blocks, 6);
    assert_eq!(d.data, data);
    let mut two = s.clone();
    two.extend_from_slice(&write::lz4_block_stream(b"tail", 32 * 1024));
    let mut want = data.clone();
    want.extend_from_slice(b"tail");
    assert_eq!(decompress(&two, 1 << 20).unwrap(), want);
    // Garbage after a stream is not a block.
    let mut bad = s.clone();
    bad.extend_from_slice(b"NOTLZ4BLOCK-----------");
    let e = decompress(&bad, 1 << 20).unwrap_err();
    assert_eq!((e.kind, e.offset as usize), (CodecErrorKind::BadMagic, s.len()));
    // A RAW block whose lengths disagree, and an LZ4 payload that does not decode.
    let mut raw = s.clone();
    raw[13] ^= 1;
    assert_eq!(decompress(&raw, 1 << 20).unwrap_err().kind, CodecErrorKind::Corrupt);
    let small = write::lz4_block_stream(&[b'y'; 4000], 32 * 1024);
    let mut broken = small.clone();
    broken[21] = 0xF0; // literal length says 15+ but the extension byte runs off the block
    broken[22..small.len() - 21].fill(0xFF);
    let e = decompress(&broken, 1 << 20).unwrap_err();
    assert!(matches!(e.kind, CodecErrorKind::Corrupt | CodecErrorKind::ChecksumMismatch), "{e}");
}

#[test]
fn snappy_stream_round_trip_concatenation_and_bounds() {
    let mut data = noise(40_000, 7);
    data.extend(std::iter::repeat_n(b'z', 50_000));
    let s = write::snappy_stream(&data, 32 * 1024);
    assert_eq!(sniff(&s), Codec::Snappy);
    assert_eq!(decompress(&s, 1 << 20).unwrap(), data);
    let mut two = s.clone();
    two.extend_from_slice(&write::snappy_stream(b"more", 32 * 1024));
    assert_eq!(decompress(&two, 1 << 20).unwrap().len(), data.len() + 4);
    for cut in 1..s.len().min(2000) {
        let r = decompress(&s[..cut], 1 << 20);
        if cut == 16 {
            assert_eq!(r.unwrap().len(), 0); // header only: an empty stream
        } else if cut >= 8 {
            assert_eq!(r.unwrap_err().kind, CodecErrorKind::Truncated, "cut {cut}");
        }
    }
    assert_eq!(decompress(&s, 1000).unwrap_err().kind, CodecErrorKind::OverLimit);
    let mut bad = s.clone();
    bad[16..20].copy_from_slice(&(-5i32).to_be_bytes());
    assert_eq!(decompress(&bad, 1 << 20).unwrap_err().kind, CodecErrorKind::Corrupt);
    let mut bad2 = write::snappy_stream(&[b'q'; 1000], 32 * 1024);
    let n = bad2.len();
    bad2[22..n].fill(0xFE);
    let e = decompress(&bad2, 1 << 20).unwrap_err();
    assert_eq!((e.kind, e.offset), (CodecErrorKind::Corrupt, 16));
}

#[test]
fn zstd_frames_skippable_and_bounds() {
    let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let f1 = ruzstd::encoding::compress_to_vec(&data[..], ruzstd::encoding::CompressionLevel::Fastest);
    let f2 = ruzstd::encoding::compress_to_vec(&b"second frame"[..], ruzstd::encoding::CompressionLevel::Fastest);
    let mut s = f1.clone();
    s.extend_from_slice(&[0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 9, 9, 9]);
    s.extend_from_slice(&f2);
    let mut want = data.clone();
    want.extend_from_slice(b"second frame");
    assert_eq!(sniff(&s), Codec::Zstd);
    assert_eq!(decompress(&s, 1 << 20).unwrap(), want);
    assert_eq!(decompress(&s, 100_000).unwrap_err().kind, CodecErrorKind::OverLimit);
    for cut in 4..f1.len() {
        let e = decompress(&f1[..cut], 1 << 20).unwrap_err();
        assert!(matches!(e.kind, CodecErrorKind::Truncated | CodecErrorKind::Corrupt), "cut {cut}: {e}");
    }
    let mut tail = f1.clone();
    tail.extend_from_slice(b"junk");
    let e = decompress(&tail, 1 << 20).unwrap_err();
    assert_eq!((e.kind, e.offset as usize), (CodecErrorKind::BadMagic, f1.len()));
}

/// A frame declaring a window over 8 MiB (here 128 MiB, the decoder's own default, which it reserved up front)
/// is over a limit of this reader, not damage and not a 128 MiB allocation; 8 MiB windows, zstd-jni's up to
/// level 19, decode.
#[test]
fn zstd_window_over_the_limit_is_a_limit_not_an_allocation() {
    // Magic, no content size and not single-segment (so a window descriptor follows), then one raw last block.
    let frame = |window_descriptor: u8| vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, window_descriptor, 0x09, 0x00, 0x00, b'x'];
    // Window log 10 + exponent: 0x68 is 2^23 = 8 MiB, 0x88 is 2^27 = 128 MiB.
    assert_eq!(decompress(&frame(0x68), 512 << 20).unwrap(), b"x");
    let e = decompress(&frame(0x88), 512 << 20).unwrap_err();
    assert_eq!((e.kind, e.offset), (CodecErrorKind::OverLimit, 0), "{e}");
    assert!(e.message.contains("window"), "{e}");
}

#[test]
fn lzf_compressed_and_stored_chunks() {
    // "abc" literal, then a 6-byte back reference at distance 3, then a long (len 7 + 11) match.
    let payload = [0x02, b'a', b'b', b'c', 0x80, 0x02, 0xE0, 11, 0x02];
    let mut s = b"ZV\x01".to_vec();
    s.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    s.extend_from_slice(&29u16.to_be_bytes());
    s.extend_from_slice(&payload);
    s.extend_from_slice(&write::lzf_stored_stream(b"!end"));
    assert_eq!(sniff(&s), Codec::Lzf);
    let out = decompress(&s, 1 << 20).unwrap();
    let mut want = b"abc".repeat(10)[..29].to_vec();
    want.extend_from_slice(b"!end");
    assert_eq!(out, want);
    for cut in 1..s.len() {
        let r = decompress(&s[..cut], 1 << 20);
        if cut != 16 {
            assert!(r.is_err(), "cut {cut}");
        }
    }
    assert_eq!(decompress(&s, 20).unwrap_err().kind, CodecErrorKind::OverLimit);
    // A back reference before the start of the chunk.
    let mut bad = s.clone();
    bad[11] = 0x40; // distance 0x40 * 256.. far behind
    assert_eq!(decompress(&bad, 1 << 20).unwrap_err().kind, CodecErrorKind::Corrupt);
    // Header length that disagrees with the data.
    let mut bad2 = s.clone();
    bad2[6] = 30;
    assert_eq!(decompress(&bad2, 1 << 20).unwrap_err().kind, CodecErrorKind::Corrupt);
    let big = noise(150_000, 3);
    assert_eq!(decompress(&write::lzf_stored_stream(&big), 1 << 20).unwrap(), big);
}

#[test]
fn record_scan_corner_cases() {
    let mut s = Vec::new();
    let put = |s: &mut Vec<u8>, k: &[u8], v: Option<&[u8]>| {
        s.extend_from_slice(&(k.len() as i32).to_be_bytes());
        s.extend_from_slice(k);
        match v {
            Some(v) => {
                s.extend_from_slice(&(v.len() as i32).to_be_bytes());
                s.extend_from_slice(v);
            }
            None => s.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    };
    put(&mut s, &[1; 8], Some(&[2; 16]));
    put(&mut s, &[3; 8], None);
    put(&mut s, &[], Some(&[]));
    s.extend_from_slice(&(-1i32).to_be_bytes());
    let st = scan_records(&s).unwrap();
    assert_eq!((st.puts, st.removals, st.key_bytes, st.value_bytes), (2, 1, 16, 16));
    assert_eq!(st.end_offset as usize, s.len() - 4);
    for cut in 0..s.len() {
        let e = scan_records(&s[..cut]).unwrap_err();
        assert_eq!(e.kind, RecordErrorKind::Truncated, "cut {cut}");
        assert!(e.offset as usize <= cut);
    }
    let mut bad = s.clone();
    bad[48..52].copy_from_slice(&(-7i32).to_be_bytes()); // third record's key size
    let e = scan_records(&bad).unwrap_err();
    assert_eq!((e.kind.clone(), e.offset), (RecordErrorKind::BadKeySize(-7), 48));
    assert_eq!(e.reason, "key size cannot be -7");
    let mut huge = s.clone();
    huge[0..4].copy_from_slice(&i32::MAX.to_be_bytes());
    assert_eq!(scan_records(&huge).unwrap_err().kind, RecordErrorKind::Truncated);
    let snap = crate::state::hdfs::for_each_record(&s, crate::state::hdfs::RecordFileKind::Snapshot, |_| {});
    assert_eq!(snap.unwrap_err().kind, RecordErrorKind::BadValueSize(-1));
}
