//! Encoders for Spark's framings, for tests, benchmarks and fuzzing (the inspector itself never writes state):
//! they produce byte-for-byte what lz4-java's `LZ4BlockOutputStream` and snappy-java's `SnappyOutputStream`
//! would for the same block contents.

use super::{lz4, LZ4_MAGIC, SNAPPY_MAGIC};

/// Frames `data` as lz4-java `LZ4BlockOutputStream(out, block_size)` does, ending with the 21-byte end-of-stream
/// block. `block_size` is rounded up to a power of two ≥ 64 (Spark's default is 32 KiB). Blocks that do not
/// shrink are stored RAW, as lz4-java does.
pub fn lz4_block_stream(data: &[u8], block_size: usize) -> Vec<u8> {
    let block_size = block_size.max(64).next_power_of_two();
    let level = (block_size.trailing_zeros().saturating_sub(10)) as u8;
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    for block in data.chunks(block_size) {
        let compressed = lz4_flex::block::compress(block);
        let (method, payload): (u8, &[u8]) =
            if compressed.len() >= block.len() { (0x10, block) } else { (0x20, &compressed) };
        out.extend_from_slice(LZ4_MAGIC);
        out.push(method | level);
        out.extend_from_slice(&(payload.len() as i32).to_le_bytes());
        out.extend_from_slice(&(block.len() as i32).to_le_bytes());
        out.extend_from_slice(&lz4::checksum(block).to_le_bytes());
        out.extend_from_slice(payload);
    }
    out.extend_from_slice(LZ4_MAGIC);
    out.push(0x10 | level);
    out.extend_from_slice(&[0u8; 12]);
    out
}

/// Frames `data` as snappy-java `SnappyOutputStream(out, block_size)` does: header, then one chunk per block.
pub fn snappy_stream(data: &[u8], block_size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(SNAPPY_MAGIC);
    out.extend_from_slice(&1i32.to_be_bytes());
    out.extend_from_slice(&1i32.to_be_bytes());
    let mut enc = snap::raw::Encoder::new();
    for block in data.chunks(block_size.max(1)) {
        // Encoding into a Vec cannot fail for inputs below snappy's 4 GiB limit; skip the block otherwise.
        if let Ok(c) = enc.compress_vec(block) {
            out.extend_from_slice(&(c.len() as i32).to_be_bytes());
            out.extend_from_slice(&c);
        }
    }
    out
}

/// Frames `data` as ning compress-lzf chunks of type 0 (uncompressed), at most 65535 bytes each: a valid LZF
/// stream any LZF reader accepts (compressed chunks are tested with hand-built bytes).
pub fn lzf_stored_stream(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for block in data.chunks(0xFFFF) {
        out.extend_from_slice(b"ZV\x00");
        out.extend_from_slice(&(block.len() as u16).to_be_bytes());
        out.extend_from_slice(block);
    }
    out
}
