//! A pure-Rust reader for RocksDB block-based table files (`*.sst`), the files under a RocksDB state store's
//! `SSTs/` folder.
//!
//! Mirrors RocksDB's `table/format.cc` (footer, block handles, block trailer checksums, compressed block framing),
//! `table/block_based/block.cc` (restart points, delta-encoded keys, index values) and `db/dbformat.h` (internal
//! keys). Only what reading every key/value pair of a table needs is implemented: footer (format_version 2..=7,
//! the legacy block-based magic is reported as unsupported), metaindex, properties, the index (binary search,
//! hash search, two-level partitioned and with-first-key kinds, delta-encoded values), data blocks (with or
//! without the data-block hash index) and the range-deletion block.
//!
//! Block checksums are verified for every checksum type RocksDB writes (crc32c masked, xxHash32, xxHash64, XXH3,
//! with the format_version 6+ context modifier). Block compression: none, snappy, zlib, bzip2, LZ4/LZ4HC and ZSTD (RocksDB's
//! format_version >= 2 framing with a varint32 decompressed size): every compression
//! `spark.sql.streaming.stateStore.rocksdb.compression` names but xpress (RocksDB on Windows only), which is a
//! limit of this reader (the error's `limit`: the table not verified, never damage).
//!
//! Every error carries the byte offset in the SST file where reading failed. Nothing here panics on bad input,
//! and every allocation is bounded by the input size or [`SstLimits`].

pub use super::sst_footer::*;

/// `kBlockBasedTableMagicNumber` (table/block_based/block_based_table_builder.cc).
pub const BLOCK_BASED_TABLE_MAGIC: u64 = 0x88e2_41b7_85f4_cff7;
/// The pre-format_version-2 block-based magic (`kLegacyBlockBasedTableMagicNumber`), no longer readable.
pub const LEGACY_BLOCK_BASED_TABLE_MAGIC: u64 = 0xdb47_7524_8b80_fb57;
pub(super) const PLAIN_TABLE_MAGIC: u64 = 0x8242_2296_63bf_9564;
pub(super) const LEGACY_PLAIN_TABLE_MAGIC: u64 = 0x4f34_18eb_7a8f_13b8;
pub(super) const CUCKOO_TABLE_MAGIC: u64 = 0x9267_89d0_c5f1_7873;

/// Size of the footer for format_version >= 1: checksum type (1) + part 2 (40) + format_version (4) + magic (8).
pub const FOOTER_LEN: usize = 53;
/// Size of the trailer after every block: compression type (1) + checksum (4).
pub const BLOCK_TRAILER_LEN: usize = 5;
pub(super) const EXTENDED_MAGIC: [u8; 4] = [0x3e, 0x00, 0x7a, 0x00];

/// Bounds for reading one SST file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SstLimits {
    /// Largest decompressed size of one block, in bytes.
    pub max_block_bytes: usize,
    /// Largest total of decompressed block bytes for the whole file, in bytes.
    pub max_total_bytes: usize,
    /// Largest number of key/value entries returned for the whole file.
    pub max_entries: usize,
    /// Most bytes of keys and values handed out (to [`scan_sst`]'s visitor, copied by [`read_sst`]) per byte of
    /// decompressed blocks read so far, counting at least [`MIN_BLOCK_BYTES_CHARGED`] of them. A key is handed
    /// out whole although its block stores only what it does not share with the previous key: RocksDB starts
    /// every restart point (16 entries by default) with a whole key, so a real table hands out at most about 16
    /// times its block bytes; a hostile block whose thousands of entries each share a long key would hand out
    /// gigabytes from kilobytes.
    pub max_entry_expansion: usize,
    /// Most memory [`read_sst`] spends on the entries it copies, in bytes: each entry's key and value plus
    /// [`ENTRY_COST`]. A memory budget: ten million 3-byte entries took 1.8 GB; past it the table is not verified.
    pub max_copied_bytes: usize,
}

/// What one copied entry costs [`SstLimits::max_copied_bytes`] besides its key and value: the [`SstEntry`] with
/// its two buffers and the room a growing `Vec` keeps, in bytes.
pub const ENTRY_COST: usize = 128;

/// The decompressed block bytes [`SstLimits::max_entry_expansion`] counts at least (a small table may hand out
/// `64 KiB × max_entry_expansion` bytes of keys and values whatever its size).
pub const MIN_BLOCK_BYTES_CHARGED: usize = 64 << 10;

impl Default for SstLimits {
    fn default() -> Self {
        SstLimits {
            max_block_bytes: 64 << 20,
            max_total_bytes: 512 << 20,
            max_entries: 10_000_000,
            max_entry_expansion: 32,
            max_copied_bytes: 256 << 20,
        }
    }
}

crate::parse_error::parse_error_type!(
    /// Why an SST file cannot be read; `offset` is the byte offset in the SST file (the start of the block or of
    /// the footer field that is wrong).
    SstError,
    SstFormat,
    "at byte"
);

pub(super) fn err<T>(offset: u64, message: impl Into<String>) -> Result<T, SstError> {
    Err(SstError::new(offset, message.into()))
}

/// A limit of this reader (an [`SstLimits`] bound, a compression or entry type it does not decode): the table is
/// not verified, which is no damage ([`SstError::limit`]).
pub(super) fn limit<T>(offset: u64, message: impl Into<String>) -> Result<T, SstError> {
    Err(SstError::over_limit(offset, message.into()))
}

/// The block checksum algorithm named in the footer (`ChecksumType` in include/rocksdb/table.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChecksumType {
    /// `kNoChecksum` (0).
    None,
    /// `kCRC32c` (1), masked as LevelDB does.
    Crc32c,
    /// `kxxHash` (2), xxHash32 seed 0.
    XxHash32,
    /// `kxxHash64` (3), lower 32 bits of xxHash64 seed 0.
    XxHash64,
    /// `kXXH3` (4), lower 32 bits of XXH3-64 with RocksDB's last-byte modification.
    Xxh3,
}

impl ChecksumType {
    pub(super) fn from_byte(b: u8) -> Option<Self> {
        Some(match b {
            0 => ChecksumType::None,
            1 => ChecksumType::Crc32c,
            2 => ChecksumType::XxHash32,
            3 => ChecksumType::XxHash64,
            4 => ChecksumType::Xxh3,
            _ => return None,
        })
    }
}

/// A pointer to a block: offset and size (without the 5-byte trailer), in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockHandle {
    /// Offset of the block in the file.
    pub offset: u64,
    /// Size of the (possibly compressed) block contents, trailer excluded.
    pub size: u64,
}

/// The decoded footer of a block-based table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Footer {
    /// `format_version` (2..=7 are readable).
    pub format_version: u32,
    /// Block checksum type.
    pub checksum: ChecksumType,
    /// Metaindex block.
    pub metaindex: BlockHandle,
    /// Index block (for format_version >= 6 found through the metaindex entry `rocksdb.index`).
    pub index: Option<BlockHandle>,
    /// Base context checksum (format_version >= 6), 0 otherwise.
    pub base_context_checksum: u32,
}

/// Type of an internal-key entry (`ValueType` in db/dbformat.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    /// `kTypeDeletion` (0x0).
    Deletion,
    /// `kTypeValue` (0x1).
    Value,
    /// `kTypeMerge` (0x2): a merge operand.
    Merge,
    /// `kTypeSingleDeletion` (0x7).
    SingleDeletion,
    /// `kTypeDeletionWithTimestamp` (0x14).
    DeletionWithTimestamp,
}

impl ValueType {
    fn from_byte(b: u8) -> Option<Self> {
        Some(match b {
            0x0 => ValueType::Deletion,
            0x1 => ValueType::Value,
            0x2 => ValueType::Merge,
            0x7 => ValueType::SingleDeletion,
            0x14 => ValueType::DeletionWithTimestamp,
            _ => return None,
        })
    }

    /// True for the deletion kinds.
    pub fn is_deletion(self) -> bool {
        matches!(self, ValueType::Deletion | ValueType::SingleDeletion | ValueType::DeletionWithTimestamp)
    }
}

/// One point entry of a table: user key, sequence number, type and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SstEntry {
    /// The user key (internal key without its 8-byte sequence/type trailer).
    pub user_key: Vec<u8>,
    /// The sequence number (56 bits).
    pub seq: u64,
    /// Entry type.
    pub kind: ValueType,
    /// Value bytes (empty for deletions).
    pub value: Vec<u8>,
}

/// A range deletion tombstone from the `rocksdb.range_del` block: deletes user keys in `[start, end)` whose
/// sequence number is below `seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeTombstone {
    /// First deleted user key (inclusive).
    pub start: Vec<u8>,
    /// End user key (exclusive).
    pub end: Vec<u8>,
    /// Sequence number of the tombstone.
    pub seq: u64,
}

/// Table properties that matter for reading (from the `rocksdb.properties` meta block).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TableProperties {
    /// `rocksdb.num.entries`.
    pub num_entries: Option<u64>,
    /// `rocksdb.num.data.blocks`.
    pub num_data_blocks: Option<u64>,
    /// `rocksdb.column.family.name`.
    pub column_family_name: Option<String>,
    /// `rocksdb.comparator`.
    pub comparator: Option<String>,
    /// `rocksdb.compression`.
    pub compression: Option<String>,
    /// `rocksdb.merge.operator`.
    pub merge_operator: Option<String>,
    /// `rocksdb.block.based.table.index.type` (0 binary search, 1 hash search, 2 two-level, 3 with first key).
    pub index_type: u32,
    /// `rocksdb.index.key.is.user.key`.
    pub index_key_is_user_key: bool,
    /// `rocksdb.index.value.is.delta.encoded`.
    pub index_value_is_delta_encoded: bool,
    /// `rocksdb.external.sst.file.global.seqno` when present (ingested files).
    pub global_seqno: Option<u64>,
}

/// Everything read from one SST file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SstTable {
    /// The footer.
    pub footer: Footer,
    /// The properties.
    pub properties: TableProperties,
    /// All point entries in file order (internal-key order).
    pub entries: Vec<SstEntry>,
    /// Range deletion tombstones.
    pub range_deletions: Vec<RangeTombstone>,
    /// Number of data blocks read.
    pub data_blocks: usize,
}

// ---------------------------------------------------------------- blocks

struct Reader<'a> {
    file: &'a [u8],
    footer: Footer,
    limits: SstLimits,
    total_out: usize,
    /// Bytes of keys and values handed out so far ([`SstLimits::max_entry_expansion`]).
    entry_bytes: usize,
}

impl<'a> Reader<'a> {
    /// Reads, verifies and decompresses the block at `h`.
    ///
    /// `src` is the file offset of the structure the handle was read from (footer, metaindex or index block):
    /// a handle pointing outside the file is reported there.
    fn block(&mut self, h: BlockHandle, src: u64, what: &str) -> Result<Vec<u8>, SstError> {
        let start = h.offset;
        let end = h.offset.checked_add(h.size).and_then(|e| e.checked_add(BLOCK_TRAILER_LEN as u64));
        let data_end = (self.file.len() - FOOTER_LEN) as u64;
        let end = match end {
            Some(e) if e <= data_end => e,
            _ => {
                return err(
                    src,
                    format!(
                        "{what} block handle (offset {}, size {}) points past the end of the data ({data_end} bytes before the footer)",
                        h.offset, h.size
                    ),
                )
            }
        };
        let (s, e) = (start as usize, end as usize);
        let contents_len = h.size as usize;
        let raw = &self.file[s..e];
        let compression = raw[contents_len];
        if self.footer.checksum != ChecksumType::None {
            let stored = fixed32(raw, contents_len + 1).unwrap_or(0);
            let stored = stored.wrapping_sub(context_modifier(self.footer.base_context_checksum, start));
            let computed = builtin_checksum(self.footer.checksum, &raw[..contents_len + 1]);
            if stored != computed {
                return err(
                    start,
                    format!(
                        "{what} block checksum mismatch: stored = {stored}, computed = {computed}, type = {:?}, size {}",
                        self.footer.checksum, h.size
                    ),
                );
            }
        }
        let data = &raw[..contents_len];
        let out = super::sst_block::decompress(&self.limits, compression, data, start, what)?;
        self.total_out = self.total_out.saturating_add(out.len());
        if self.total_out > self.limits.max_total_bytes {
            return limit(
                start,
                format!("decompressed table exceeds the limit of {} bytes", self.limits.max_total_bytes),
            );
        }
        Ok(out)
    }

    /// Charges an entry of `n` key and value bytes, handed out from the block at `block_at` (`what`), to
    /// [`SstLimits::max_entry_expansion`]; the error names the block.
    fn charge_entry(&mut self, n: usize, block_at: u64, what: &str) -> Result<(), SstError> {
        self.entry_bytes = self.entry_bytes.saturating_add(n);
        let budget = self.total_out.max(MIN_BLOCK_BYTES_CHARGED).saturating_mul(self.limits.max_entry_expansion);
        if self.entry_bytes > budget {
            return limit(
                block_at,
                format!(
                    "{what} block: keys and values of more than {budget} bytes from {} bytes of blocks (over {} \
                     times, the limit): its entries share long key prefixes over and over",
                    self.total_out, self.limits.max_entry_expansion
                ),
            );
        }
        Ok(())
    }
}

/// The data blocks of a table, in file order, from its index block at `index` (read from the structure at
/// `index_src`): the index's handles, or for a two-level index (`index_type` 2) those of each partition. Handles
/// that go back or overlap, or more than the file can hold, are damage.
fn data_block_handles(
    r: &mut Reader<'_>,
    properties: &TableProperties,
    index: BlockHandle,
    index_src: u64,
) -> Result<Vec<BlockHandle>, SstError> {
    let have_first_key = properties.index_type == 3;
    let delta = properties.index_value_is_delta_encoded;
    let top = r.block(index, index_src, "index")?;
    // Every block takes its trailer and at least a byte: a file holds at most that many.
    let max_blocks = r.file.len() / (BLOCK_TRAILER_LEN + 1);
    let mut data_handles = index_handles(&top, index.offset, delta, have_first_key, max_blocks)?;
    if properties.index_type == 2 {
        // Two-level (partitioned) index: the top level points at index partitions.
        let partitions = std::mem::take(&mut data_handles);
        check_in_file_order(&partitions, index.offset, "index partition")?;
        for p in partitions {
            let b = r.block(p, index.offset, "index partition")?;
            let room = max_blocks.saturating_sub(data_handles.len());
            data_handles.extend(index_handles(&b, p.offset, delta, have_first_key, room)?);
        }
    }
    check_in_file_order(&data_handles, index.offset, "data")?;
    Ok(data_handles)
}

/// RocksDB writes a table's blocks one after the other and indexes them in that order: handles that go back or
/// overlap (one block listed over and over, which would be decoded each time) are damage, reported at the index.
fn check_in_file_order(handles: &[BlockHandle], index_at: u64, what: &str) -> Result<(), SstError> {
    let mut end = 0u64;
    for h in handles {
        if h.offset < end {
            return err(
                index_at,
                format!(
                    "index block: the {what} block at byte {} overlaps the one before it (ends at {end})",
                    h.offset
                ),
            );
        }
        end = h.offset.saturating_add(h.size).saturating_add(BLOCK_TRAILER_LEN as u64);
    }
    Ok(())
}

/// The entries region of a decoded block: `[0, restarts_offset)` plus its restart count.
fn block_entries_end(block: &[u8], at: u64, what: &str) -> Result<usize, SstError> {
    let n = block.len();
    let packed = match n.checked_sub(4).and_then(|p| fixed32(block, p)) {
        Some(p) => p,
        None => return err(at, format!("{what} block is too short ({n} bytes) for its footer")),
    };
    if packed & (1 << 30) != 0 {
        return err(at, format!("{what} block footer uses a reserved feature bit (0x{packed:08x})"));
    }
    if packed & (1 << 28) != 0 {
        return err(at, format!("{what} block stores keys and values separately, which this reader does not support"));
    }
    let num_restarts = (packed & ((1 << 28) - 1)) as usize;
    let mut end = n - 4;
    if packed & (1 << 31) != 0 {
        // Data block hash index: [buckets: num_buckets bytes][num_buckets: u16] before the footer.
        let nb = match end.checked_sub(2).and_then(|p| block.get(p..p + 2)) {
            Some(s) => u16::from_le_bytes([s[0], s[1]]) as usize,
            None => return err(at, format!("{what} block hash index is truncated")),
        };
        end = match end.checked_sub(2 + nb) {
            Some(e) => e,
            None => return err(at, format!("{what} block hash index ({nb} buckets) exceeds the block")),
        };
    }
    match num_restarts.checked_mul(4).and_then(|r| end.checked_sub(r)) {
        Some(e) if num_restarts > 0 || n == 4 => Ok(e),
        Some(e) => Ok(e),
        None => err(at, format!("{what} block declares {num_restarts} restart points, more than fit in {n} bytes")),
    }
}

/// Iterates the (key, value) entries of a block in the classic encoding
/// `shared varint32, non_shared varint32, value_len varint32, key delta, value`.
fn for_each_entry(
    block: &[u8],
    at: u64,
    what: &str,
    mut f: impl FnMut(&[u8], &[u8]) -> Result<(), SstError>,
) -> Result<(), SstError> {
    let end = block_entries_end(block, at, what)?;
    let mut key: Vec<u8> = Vec::new();
    let mut pos = 0;
    while pos < end {
        let entry_at = pos;
        let bad = |m: &str| SstError::new(at, format!("{what} block: {m} at byte {entry_at} of the block"));
        let region = &block[..end];
        let shared = varint32(region, &mut pos).ok_or_else(|| bad("bad entry header"))? as usize;
        let non_shared = varint32(region, &mut pos).ok_or_else(|| bad("bad entry header"))? as usize;
        let value_len = varint32(region, &mut pos).ok_or_else(|| bad("bad entry header"))? as usize;
        if shared > key.len() {
            return Err(bad("entry shares more key bytes than the previous key has"));
        }
        let key_end =
            pos.checked_add(non_shared).filter(|e| *e <= end).ok_or_else(|| bad("key runs past the entries"))?;
        let val_end =
            key_end.checked_add(value_len).filter(|e| *e <= end).ok_or_else(|| bad("value runs past the entries"))?;
        key.truncate(shared);
        key.extend_from_slice(&block[pos..key_end]);
        f(&key, &block[key_end..val_end])?;
        pos = val_end;
    }
    Ok(())
}

/// Decodes the block handles of an index block (classic or format_version 4 delta-encoded values).
/// The block handles of an index block (or partition) at `at`, at most `room` of them: more is damage, a table
/// whose file cannot hold that many blocks (a handle pointing at one block over and over).
fn index_handles(
    block: &[u8],
    at: u64,
    delta_encoded: bool,
    have_first_key: bool,
    room: usize,
) -> Result<Vec<BlockHandle>, SstError> {
    let what = "index";
    let mut out = Vec::new();
    let too_many = || SstError::new(at, format!("index block: more block handles than the file can hold ({room})"));
    if !delta_encoded {
        for_each_entry(block, at, what, |_k, v| {
            let mut p = 0;
            match block_handle(v, &mut p) {
                Some(_) if out.len() >= room => Err(too_many()),
                Some(h) => {
                    out.push(h);
                    Ok(())
                }
                None => err(at, "index block: bad block handle in index value"),
            }
        })?;
        let _ = have_first_key;
        return Ok(out);
    }
    let end = block_entries_end(block, at, what)?;
    let region = &block[..end];
    let mut key_len = 0usize;
    let mut prev: Option<BlockHandle> = None;
    let mut pos = 0;
    while pos < end {
        let entry_at = pos;
        let bad = |m: &str| SstError::new(at, format!("index block: {m} at byte {entry_at} of the block"));
        let shared = varint32(region, &mut pos).ok_or_else(|| bad("bad entry header"))? as usize;
        let non_shared = varint32(region, &mut pos).ok_or_else(|| bad("bad entry header"))? as usize;
        if shared > key_len {
            return Err(bad("entry shares more key bytes than the previous key has"));
        }
        pos = pos.checked_add(non_shared).filter(|e| *e <= end).ok_or_else(|| bad("key runs past the entries"))?;
        key_len = shared + non_shared;
        let h = match (shared != 0, prev) {
            (true, Some(p)) => {
                let raw = varint64(region, &mut pos).ok_or_else(|| bad("bad delta-encoded index value"))?;
                let delta = ((raw >> 1) as i64) ^ -((raw & 1) as i64);
                let offset = p
                    .offset
                    .checked_add(p.size)
                    .and_then(|o| o.checked_add(BLOCK_TRAILER_LEN as u64))
                    .ok_or_else(|| bad("index handle overflows"))?;
                let size =
                    (p.size as i64).checked_add(delta).filter(|s| *s >= 0).ok_or_else(|| bad("negative block size"))?;
                BlockHandle { offset, size: size as u64 }
            }
            (true, None) => return Err(bad("delta-encoded index value without a previous handle")),
            (false, _) => block_handle(region, &mut pos).ok_or_else(|| bad("bad block handle in index value"))?,
        };
        if have_first_key {
            let n = varint32(region, &mut pos).ok_or_else(|| bad("bad first key in block info"))? as usize;
            pos = pos.checked_add(n).filter(|e| *e <= end).ok_or_else(|| bad("first key runs past the entries"))?;
        }
        if out.len() >= room {
            return Err(too_many());
        }
        out.push(h);
        prev = Some(h);
    }
    Ok(out)
}

fn parse_properties(block: &[u8], at: u64) -> Result<TableProperties, SstError> {
    let mut p = TableProperties::default();
    let num = |v: &[u8]| {
        let mut pos = 0;
        varint64(v, &mut pos)
    };
    for_each_entry(block, at, "properties", |k, v| {
        match k {
            b"rocksdb.num.entries" => p.num_entries = num(v),
            b"rocksdb.num.data.blocks" => p.num_data_blocks = num(v),
            b"rocksdb.column.family.name" => p.column_family_name = Some(String::from_utf8_lossy(v).into_owned()),
            b"rocksdb.comparator" => p.comparator = Some(String::from_utf8_lossy(v).into_owned()),
            b"rocksdb.compression" => p.compression = Some(String::from_utf8_lossy(v).into_owned()),
            b"rocksdb.merge.operator" => p.merge_operator = Some(String::from_utf8_lossy(v).into_owned()),
            b"rocksdb.block.based.table.index.type" => p.index_type = fixed32(v, 0).unwrap_or(0),
            b"rocksdb.index.key.is.user.key" => p.index_key_is_user_key = num(v).unwrap_or(0) != 0,
            b"rocksdb.index.value.is.delta.encoded" => p.index_value_is_delta_encoded = num(v).unwrap_or(0) != 0,
            b"rocksdb.external.sst.file.global.seqno" => p.global_seqno = fixed64(v, 0),
            _ => {}
        }
        Ok(())
    })?;
    Ok(p)
}

/// Reads every entry of an SST file.
///
/// `file` is the whole file. Returns the footer, properties, all point entries (in the file's internal-key
/// order, several versions of a user key kept) and the range tombstones. Errors carry the SST byte offset.
pub fn read_sst(file: &[u8], limits: SstLimits) -> Result<SstTable, SstError> {
    let mut entries: Vec<SstEntry> = Vec::new();
    let mut copied = 0usize;
    let scan = scan_sst_with_blocks(file, limits, |block, user_key, seq, kind, value| {
        copied = copied.saturating_add(user_key.len() + value.len() + ENTRY_COST);
        if copied > limits.max_copied_bytes {
            let max = limits.max_copied_bytes;
            return limit(
                block,
                format!("data block: the entries read reach {copied} bytes of memory (the limit {max})"),
            );
        }
        entries.push(SstEntry {
            user_key: user_key.to_vec(),
            seq,
            kind,
            value: if kind.is_deletion() { Vec::new() } else { value.to_vec() },
        });
        Ok(())
    })?;
    Ok(SstTable {
        footer: scan.footer,
        properties: scan.properties,
        entries,
        range_deletions: scan.range_deletions,
        data_blocks: scan.data_blocks,
    })
}

/// What [`scan_sst`] found besides the entries it handed to its visitor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SstScan {
    /// The footer.
    pub footer: Footer,
    /// The properties.
    pub properties: TableProperties,
    /// Range deletion tombstones.
    pub range_deletions: Vec<RangeTombstone>,
    /// Number of data blocks read.
    pub data_blocks: usize,
    /// Number of point entries visited.
    pub entries: u64,
    /// Decompressed bytes of all blocks read.
    pub decompressed_bytes: usize,
    /// Bytes of keys and values handed out ([`SstLimits::max_entry_expansion`]).
    pub entry_bytes: usize,
}

/// Walks every point entry of an SST file without copying: `visit(user_key, seq, kind, value)` is called in the
/// file's internal-key order with slices valid for the call only. Block checksums are verified and the entry
/// count is checked against `rocksdb.num.entries`. Errors carry the SST byte offset.
pub fn scan_sst(
    file: &[u8],
    limits: SstLimits,
    mut visit: impl FnMut(&[u8], u64, ValueType, &[u8]) -> Result<(), SstError>,
) -> Result<SstScan, SstError> {
    scan_sst_with_blocks(file, limits, |_, k, seq, kind, v| visit(k, seq, kind, v))
}

/// [`scan_sst`] that also tells each entry's data block: `visit(block_offset, user_key, seq, kind, value)`, with
/// `block_offset` the byte offset in the SST file of the (possibly compressed) data block holding the entry.
pub fn scan_sst_with_blocks(
    file: &[u8],
    limits: SstLimits,
    mut visit: impl FnMut(u64, &[u8], u64, ValueType, &[u8]) -> Result<(), SstError>,
) -> Result<SstScan, SstError> {
    let footer = read_footer(file)?;
    let mut r = Reader { file, footer: footer.clone(), limits, total_out: 0, entry_bytes: 0 };
    let meta = r.block(footer.metaindex, (file.len() - FOOTER_LEN) as u64, "metaindex")?;
    let mut props_handle = None;
    let mut index_handle = footer.index;
    let mut range_del_handle = None;
    let mut bad_meta = None;
    for_each_entry(&meta, footer.metaindex.offset, "metaindex", |k, v| {
        let mut pos = 0;
        let h = block_handle(v, &mut pos);
        if h.is_none() {
            bad_meta = Some(String::from_utf8_lossy(k).into_owned());
        }
        match k {
            b"rocksdb.properties" | b"rocksdb.stats" => props_handle = props_handle.or(h),
            b"rocksdb.index" => index_handle = index_handle.or(h),
            b"rocksdb.range_del" => range_del_handle = h,
            _ => {}
        }
        Ok(())
    })?;
    if let Some(name) = bad_meta {
        return err(footer.metaindex.offset, format!("metaindex block: bad block handle for meta block {name:?}"));
    }
    let properties = match props_handle {
        Some(h) => {
            let b = r.block(h, footer.metaindex.offset, "properties")?;
            parse_properties(&b, h.offset)?
        }
        None => TableProperties::default(),
    };
    if let Some(c) = &properties.comparator {
        if c != "leveldb.BytewiseComparator" {
            return err(0, format!("table uses comparator {c:?}; only leveldb.BytewiseComparator is supported"));
        }
    }
    let index_handle = match index_handle {
        Some(h) => h,
        None => return err(footer.metaindex.offset, "no index block (metaindex has no rocksdb.index entry)"),
    };
    let index_src = if footer.index.is_some() { (file.len() - FOOTER_LEN) as u64 } else { footer.metaindex.offset };
    let data_handles = data_block_handles(&mut r, &properties, index_handle, index_src)?;
    let mut n_entries: usize = 0;
    for h in &data_handles {
        let b = r.block(*h, index_handle.offset, "data")?;
        for_each_entry(&b, h.offset, "data", |k, v| {
            let (user_key, trailer) = match k.len().checked_sub(8) {
                Some(ul) => (&k[..ul], fixed64(k, ul).unwrap_or(0)),
                None => {
                    return err(h.offset, format!("data block: internal key of {} bytes is shorter than 8", k.len()))
                }
            };
            let seq = match properties.global_seqno {
                Some(g) if trailer >> 8 == 0 && g != 0 => g,
                _ => trailer >> 8,
            };
            let type_byte = (trailer & 0xff) as u8;
            let kind = match ValueType::from_byte(type_byte) {
                Some(t) => t,
                // The block's checksum held, so RocksDB wrote this type: one this reader does not decode.
                None => {
                    return limit(
                        h.offset,
                        format!(
                        "data block: entry type 0x{type_byte:02x} (blob index, wide-column or other) is not supported"
                    ),
                    )
                }
            };
            n_entries += 1;
            if n_entries > limits.max_entries {
                return limit(h.offset, format!("more than {} entries, over the limit", limits.max_entries));
            }
            r.charge_entry(k.len() + v.len(), h.offset, "data")?;
            visit(h.offset, user_key, seq, kind, v)
        })?;
    }
    let range_deletions = match range_del_handle {
        Some(h) => range_tombstones(&mut r, h, footer.metaindex.offset)?,
        None => Vec::new(),
    };
    // `rocksdb.num.entries` counts point entries and, depending on the RocksDB version, range tombstones.
    if let Some(n) = properties.num_entries {
        let points = n_entries as u64;
        if n != points && n != points + range_deletions.len() as u64 {
            return err(
                footer.metaindex.offset,
                format!("the data blocks hold {n_entries} entries but the table properties say {n}"),
            );
        }
    }
    Ok(SstScan {
        footer,
        properties,
        range_deletions,
        data_blocks: data_handles.len(),
        entries: n_entries as u64,
        decompressed_bytes: r.total_out,
        entry_bytes: r.entry_bytes,
    })
}

/// The range tombstones of the `rocksdb.range_del` meta block at `h` (read from `src`, the block that names it).
fn range_tombstones(r: &mut Reader<'_>, h: BlockHandle, src: u64) -> Result<Vec<RangeTombstone>, SstError> {
    let mut range_deletions = Vec::new();
    let b = r.block(h, src, "range deletion")?;
    for_each_entry(&b, h.offset, "range deletion", |k, v| {
        let ul = match k.len().checked_sub(8) {
            Some(ul) => ul,
            None => return err(h.offset, "range deletion block: internal key shorter than 8 bytes"),
        };
        let trailer = fixed64(k, ul).unwrap_or(0);
        r.charge_entry(k.len() + v.len(), h.offset, "range deletion")?;
        range_deletions.push(RangeTombstone { start: k[..ul].to_vec(), end: v.to_vec(), seq: trailer >> 8 });
        Ok(())
    })?;
    Ok(range_deletions)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ZSTD block whose frame declares a window over the limit (128 MiB, which the decoder reserved up front)
    /// is a limit of this reader, not damage and not an allocation; an 8 MiB window decodes.
    #[test]
    fn a_zstd_block_window_over_the_limit_is_a_limit() {
        let limits = SstLimits::default();
        // The size varint (1), then a frame: not single-segment, a window descriptor, one raw last block.
        let block =
            |window_descriptor: u8| [1, 0x28, 0xB5, 0x2F, 0xFD, 0x00, window_descriptor, 0x09, 0x00, 0x00, b'x'];
        assert_eq!(super::super::sst_block::decompress(&limits, 7, &block(0x68), 40, "data").unwrap(), b"x");
        let e = super::super::sst_block::decompress(&limits, 7, &block(0x88), 40, "data").unwrap_err();
        assert!(e.limit && e.offset == 41 && e.message.contains("window"), "{e:?}");
    }

    /// A snappy or LZ4 block declaring more than its bytes can expand to (snappy 32×, LZ4 255×) is damage, refused
    /// before the declared size is allocated.
    #[test]
    fn a_block_declaring_more_than_its_codec_expands_to_is_damage() {
        let limits = SstLimits::default();
        // The varint32 of 60 MiB (under the 64 MiB block limit), then 8 bytes.
        let mut data = vec![0x80, 0x80, 0x80, 0x1E];
        data.extend_from_slice(&[0; 8]);
        for (compression, name) in [(1u8, "snappy"), (4, "LZ4")] {
            let e = super::super::sst_block::decompress(&limits, compression, &data, 7, "data").unwrap_err();
            assert!(!e.limit && e.offset == 7 && e.message.contains(name), "{e:?}");
            assert!(e.message.contains("cannot decompress to 62914560"), "{e:?}");
        }
    }

    #[test]
    fn varints_and_zigzag() {
        let b = [0xac, 0x02, 0x7f];
        let mut p = 0;
        assert_eq!(varint32(&b, &mut p), Some(300));
        assert_eq!(varint32(&b, &mut p), Some(127));
        assert_eq!(varint32(&b, &mut p), None);
        let over = [0xff, 0xff, 0xff, 0xff, 0x7f];
        let mut p = 0;
        assert_eq!(varint32(&over, &mut p), None, "more than 32 bits");
    }

    #[test]
    fn crc32c_mask_matches_leveldb() {
        // LevelDB's crc32c test vector: crc32c of 32 zero bytes is 0x8a9136aa.
        const CRC32C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);
        assert_eq!(CRC32C.checksum(&[0u8; 32]), 0x8a91_36aa);
        // LevelDB mask: rotate right by 15, add 0xa282ead8.
        assert_eq!(crc32c_masked(&[0u8; 32]), 0x0fd7_fffa);
    }

    #[test]
    fn footer_rejects_garbage() {
        assert!(read_footer(&[0u8; 10]).is_err());
        let e = read_footer(&[0u8; 100]).unwrap_err();
        assert_eq!(e.offset, 92);
    }
}
