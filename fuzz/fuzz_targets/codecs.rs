//! Every compression framing Spark writes (lz4-java block stream, snappy, zstd, lzf; sniffed), bounded output.
#![no_main]
use checkpoint_core::codec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = codec::decompress(data, 16 << 20);
    let _ = codec::decompress_detailed(data, 16 << 20);
    let mut n = 0usize;
    let _ = codec::decompress_chunks(data, 16 << 20, &mut |c| n += c.len());
});
