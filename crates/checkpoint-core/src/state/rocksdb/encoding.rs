//! How Spark's RocksDB state encoders lay out keys and values inside RocksDB (and changelogs), and how to take
//! them apart into the UnsafeRow bytes the row decoder reads.
//!
//! Mirrors `RocksDBStateEncoder.scala` (`NoPrefixKeyStateEncoder`, `PrefixKeyScanStateEncoder`,
//! `RangeKeyScanStateEncoder`, `SingleValueStateEncoder`, `MultiValuedStateEncoder`, `UnsafeRowDataEncoder`) and
//! `StateStoreRowChecksum.scala` (`KeyValueChecksumEncoder`, 4.3+ `spark.sql.streaming.stateStore.rowChecksum`):
//!
//! ```text
//! key   = [cf id: i16 LE, virtual column families only] [version 0x00] [UnsafeRow]                 no prefix
//!       = [cf id] [prefix len: i32 LE] [0x00 prefix UnsafeRow] [0x00 remaining UnsafeRow]           prefix scan
//!       = [cf id] [len: i32 LE] [0x00 ordering UnsafeRow (big-endian, sign-marked)] [0x00 rest]     range scan
//! value = [0x00] [UnsafeRow]                                                                        single value
//!       = [len: i32 LE] [0x00 UnsafeRow] (',' [len] [0x00 UnsafeRow])*                              list (merge)
//! with row checksums every value element is [crc32c: i32 LE] [len: i32 LE] [element], the CRC32C being over
//! the full key bytes (column family prefix included) followed by the element bytes.
//! ```
//!
//! UnsafeRows are always a multiple of 8 bytes long, which lets the splitter check every layout it assumes.

/// How a store's keys are encoded (`KeyStateEncoderSpec`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum KeyEncoding {
    /// `NoPrefixKeyStateEncoderSpec`: the whole key is one UnsafeRow.
    #[default]
    NoPrefix,
    /// `PrefixKeyScanStateEncoderSpec` (session windows, transformWithState map/list state keys): a prefix row of
    /// the first `num_cols` columns and a row of the remaining ones.
    PrefixScan {
        /// Number of key columns in the prefix.
        num_cols: usize,
    },
    /// `RangeKeyScanStateEncoderSpec` (timers): the ordering columns re-encoded big-endian with sign/null
    /// markers, then the remaining columns.
    RangeScan {
        /// Ordinals of the ordering columns in the key schema.
        ordering: Vec<usize>,
    },
}

/// A key taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyParts<'a> {
    /// Virtual column family id, when the store uses them.
    pub column_family: Option<u16>,
    /// UnsafeRow bytes: one row for [`KeyEncoding::NoPrefix`]; (prefix row, remaining row) for prefix scan;
    /// (ordering row with big-endian binary fields, remaining row — absent when every column orders) for range scan.
    pub rows: Vec<&'a [u8]>,
}

crate::parse_error::parse_error_type!(
    /// Why a key or value does not have the layout the encoder writes.
    EncodingError,
    StateEncodingFormat,
    "byte"
);

fn eerr<T>(offset: usize, message: impl Into<String>) -> Result<T, EncodingError> {
    Err(EncodingError::new(offset, message.into()))
}

fn le_i32(b: &[u8], at: usize) -> Option<i32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Strips the version byte(s) in front of an UnsafeRow: one `0x00`, or two when the remainder would otherwise
/// not be 8-byte aligned (some Spark 4.0 builds wrote the version byte twice for column-family keys).
fn strip_version(b: &[u8], base: usize) -> Result<&[u8], EncodingError> {
    match b.first() {
        None => eerr(base, "empty: the encoding version byte is missing"),
        Some(0) => {
            let row = &b[1..];
            if row.len().is_multiple_of(8) {
                Ok(row)
            } else if row.first() == Some(&0) && (row.len() - 1).is_multiple_of(8) {
                Ok(&row[1..])
            } else {
                eerr(base + 1, format!("UnsafeRow of {} bytes is not a multiple of 8", row.len()))
            }
        }
        Some(v) => eerr(base, format!("unknown state encoding version {v} (Spark writes 0)")),
    }
}

/// Takes a raw key apart. `with_column_family`: the store uses virtual column families (2-byte id prefix).
pub fn split_key<'a>(
    key: &'a [u8],
    with_column_family: bool,
    encoding: &KeyEncoding,
) -> Result<KeyParts<'a>, EncodingError> {
    let (column_family, body, base) = if with_column_family {
        match key.get(..2) {
            Some(b) => (Some(u16::from_le_bytes([b[0], b[1]])), &key[2..], 2),
            None => return eerr(0, "key shorter than its 2-byte column family id"),
        }
    } else {
        (None, key, 0)
    };
    let rows = match encoding {
        KeyEncoding::NoPrefix => vec![strip_version(body, base)?],
        KeyEncoding::PrefixScan { .. } | KeyEncoding::RangeScan { .. } => {
            let n = match le_i32(body, 0) {
                Some(n) if n >= 0 && (n as usize) <= body.len() - 4 => n as usize,
                Some(n) => return eerr(base, format!("prefix length {n} does not fit in the key")),
                None => return eerr(base, "key shorter than its 4-byte prefix length"),
            };
            let first = strip_version(&body[4..4 + n], base + 4)?;
            let rest = &body[4 + n..];
            if rest.is_empty() && matches!(encoding, KeyEncoding::RangeScan { .. }) {
                vec![first]
            } else {
                vec![first, strip_version(rest, base + 4 + n)?]
            }
        }
    };
    Ok(KeyParts { column_family, rows })
}

/// CRC32C (Castagnoli), as `java.util.zip.CRC32C`.
pub fn crc32c(parts: &[&[u8]]) -> u32 {
    const C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);
    let mut d = C.digest();
    for p in parts {
        d.update(p);
    }
    d.finalize()
}

/// True when `value` is laid out as one or more `[crc32c][len][element]` items whose checksums match `key`:
/// a store written with row checksums (4.3+). Used to detect the layout when the conf is not known.
pub fn has_row_checksums(key: &[u8], value: &[u8]) -> bool {
    split_checksummed(key, value, true).is_ok() || split_checksummed(key, value, false).is_ok()
}

/// Splits `[crc][len][element] (',' [crc][len][element])*` and verifies each CRC32C over key + element.
fn split_checksummed<'a>(key: &[u8], value: &'a [u8], delimited: bool) -> Result<Vec<&'a [u8]>, EncodingError> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < value.len() {
        let crc = match le_i32(value, pos) {
            Some(c) => c as u32,
            None => return eerr(pos, "value ends inside a row checksum"),
        };
        let len = match le_i32(value, pos + 4) {
            Some(l) if l >= 0 && (l as usize) <= value.len() - pos - 8 => l as usize,
            Some(l) => return eerr(pos + 4, format!("value element length {l} does not fit")),
            None => return eerr(pos + 4, "value ends inside a value element length"),
        };
        let elem = &value[pos + 8..pos + 8 + len];
        let computed = crc32c(&[key, elem]);
        if computed != crc {
            return eerr(
                pos,
                format!("row checksum mismatch: stored {crc:#010x}, computed {computed:#010x} (STATE_STORE_ROW_CHECKSUM_VERIFICATION_FAILED)"),
            );
        }
        out.push(elem);
        pos += 8 + len;
        if pos < value.len() && delimited {
            if value[pos] != super::MERGE_DELIMITER {
                return eerr(
                    pos,
                    format!("expected the merge delimiter ',' between values, found {:#04x}", value[pos]),
                );
            }
            pos += 1;
        }
    }
    if out.is_empty() {
        return eerr(0, "empty value");
    }
    Ok(out)
}

/// Splits `[len][element] (',' [len][element])*` (`MultiValuedStateEncoder`); without `delimited`, the elements
/// follow each other with no ',' (RocksDB merge operator version 2, `...rocksdb.mergeOperatorVersion=2`).
fn split_length_prefixed(value: &[u8], delimited: bool) -> Result<Vec<&[u8]>, EncodingError> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < value.len() {
        let len = match le_i32(value, pos) {
            Some(l) if l >= 0 && (l as usize) <= value.len() - pos - 4 => l as usize,
            Some(l) => return eerr(pos, format!("list element length {l} does not fit")),
            None => return eerr(pos, "value ends inside a list element length"),
        };
        out.push(&value[pos + 4..pos + 4 + len]);
        pos += 4 + len;
        if pos < value.len() && delimited {
            if value[pos] != super::MERGE_DELIMITER {
                return eerr(
                    pos,
                    format!("expected the merge delimiter ',' between values, found {:#04x}", value[pos]),
                );
            }
            pos += 1;
        }
    }
    Ok(out)
}

/// Takes a raw value apart into UnsafeRow bytes (version byte stripped), verifying row checksums.
///
/// `key` is the full raw key (needed for checksums); `multi_value`: the store keeps lists (merge);
/// `row_checksum`: `Some(true/false)` when known from the conf, `None` to detect.
pub fn split_value<'a>(
    key: &[u8],
    value: &'a [u8],
    multi_value: bool,
    row_checksum: Option<bool>,
) -> Result<Vec<&'a [u8]>, EncodingError> {
    let elements = split_value_elements(key, value, multi_value, row_checksum, true)?;
    let mut out = Vec::with_capacity(elements.len());
    for e in elements {
        let base = e.as_ptr() as usize - value.as_ptr() as usize;
        out.push(strip_version(e, base)?);
    }
    Ok(out)
}

/// Takes a raw value apart into its encoded elements, each still starting with the encoding version byte (an
/// UnsafeRow or an Avro-encoded row behind it), verifying row checksums. `delimited_first`: try the merge
/// operator v1 layout (',' between list elements) first, else the v2 one (no delimiter); the other layout is
/// tried when the first does not fit.
pub fn split_value_elements<'a>(
    key: &[u8],
    value: &'a [u8],
    multi_value: bool,
    row_checksum: Option<bool>,
    delimited_first: bool,
) -> Result<Vec<&'a [u8]>, EncodingError> {
    let checksummed = match row_checksum {
        Some(c) => c,
        None => has_row_checksums(key, value),
    };
    let either = |f: &dyn Fn(bool) -> Result<Vec<&'a [u8]>, EncodingError>| match f(delimited_first) {
        Ok(v) => Ok(v),
        Err(e) if multi_value => f(!delimited_first).map_err(|_| e),
        Err(e) => Err(e),
    };
    if checksummed {
        let items = either(&|d| split_checksummed(key, value, d))?;
        if multi_value {
            // Elements may still carry the MultiValuedStateEncoder length prefix.
            Ok(items
                .into_iter()
                .map(|e| match le_i32(e, 0) {
                    Some(l) if l >= 0 && l as usize == e.len().saturating_sub(4) => &e[4..],
                    _ => e,
                })
                .collect())
        } else {
            Ok(items)
        }
    } else if multi_value {
        either(&|d| split_length_prefixed(value, d))
    } else {
        Ok(vec![value])
    }
}

/// Takes a key apart without assuming UnsafeRow alignment (Avro-encoded keys): the column family id and the
/// encoded parts, each still starting with the encoding version byte — one part for a plain key, (prefix,
/// remaining) for prefix/range-scan keys (`[len: i32 LE][prefix][remaining]`).
pub fn split_key_raw(key: &[u8], with_column_family: bool, scan: bool) -> Result<KeyParts<'_>, EncodingError> {
    let (column_family, body, base) = if with_column_family {
        match key.get(..2) {
            Some(b) => (Some(u16::from_le_bytes([b[0], b[1]])), &key[2..], 2),
            None => return eerr(0, "key shorter than its 2-byte column family id"),
        }
    } else {
        (None, key, 0)
    };
    let rows = if scan {
        let n = match le_i32(body, 0) {
            Some(n) if n >= 0 && (n as usize) <= body.len() - 4 => n as usize,
            Some(n) => return eerr(base, format!("prefix length {n} does not fit in the key")),
            None => return eerr(base, "key shorter than its 4-byte prefix length"),
        };
        vec![&body[4..4 + n], &body[4 + n..]]
    } else {
        vec![body]
    };
    for (i, r) in rows.iter().enumerate() {
        match r.first() {
            Some(0) => {}
            Some(v) => return eerr(base, format!("key part {i}: unknown state encoding version {v} (Spark writes 0)")),
            None => return eerr(base, format!("key part {i} is empty: the encoding version byte is missing")),
        }
    }
    Ok(KeyParts { column_family, rows })
}

/// Joins two UnsafeRows (`left` with `left_var.len()` fields, `right` with `right_var.len()` fields) into one
/// row of all their fields, as Spark's `restoreKeyProjection(JoinedRow(prefix, remaining))` does for
/// prefix-scan keys. `*_var[i]` tells whether field `i` is variable-length (string, binary, decimal with
/// precision > 18, struct, array, map, interval, variant): their `offset << 32 | size` slots are relocated.
pub fn join_unsafe_rows(
    left: &[u8],
    left_var: &[bool],
    right: &[u8],
    right_var: &[bool],
) -> Result<Vec<u8>, EncodingError> {
    let words = |n: usize| n.div_ceil(64) * 8;
    let (nl, nr) = (left_var.len(), right_var.len());
    let n = nl + nr;
    let (lh, rh, h) = (words(nl) + nl * 8, words(nr) + nr * 8, words(n) + n * 8);
    if left.len() < lh || right.len() < rh {
        return eerr(
            0,
            format!("rows of {} and {} bytes are shorter than their {nl}/{nr} fields", left.len(), right.len()),
        );
    }
    let lvar = &left[lh..];
    let rvar = &right[rh..];
    let mut out = vec![0u8; h];
    out.extend_from_slice(lvar);
    out.extend_from_slice(rvar);
    let is_null = |row: &[u8], i: usize| row[(i / 64) * 8 + (i % 64) / 8] & (1 << (i % 8)) != 0;
    let put = |out: &mut Vec<u8>, dst: usize, row: &[u8], nfields: usize, i: usize, var: bool, shift: i64| {
        let at = words(nfields) + i * 8;
        let mut slot = u64::from_le_bytes(row[at..at + 8].try_into().unwrap_or([0; 8]));
        let null = is_null(row, i);
        if null {
            out[(dst / 64) * 8 + (dst % 64) / 8] |= 1 << (dst % 8);
        }
        if var && !null {
            let off = (slot >> 32) as i64 + shift;
            if off < 0 || off > u32::MAX as i64 {
                return Err(EncodingError::new(at, format!("field {i}: offset out of range")));
            }
            slot = ((off as u64) << 32) | (slot & 0xFFFF_FFFF);
        }
        let o = words(n) + dst * 8;
        out[o..o + 8].copy_from_slice(&slot.to_le_bytes());
        Ok(())
    };
    for (i, &v) in left_var.iter().enumerate() {
        put(&mut out, i, left, nl, i, v, h as i64 - lh as i64)?;
    }
    for (j, &v) in right_var.iter().enumerate() {
        put(&mut out, nl + j, right, nr, j, v, (h + lvar.len()) as i64 - rh as i64)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(words: &[u64]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn keys() {
        let r = row(&[0, 7]);
        let mut k = vec![0u8];
        k.extend(&r);
        let p = split_key(&k, false, &KeyEncoding::NoPrefix).unwrap();
        assert_eq!(p.rows, vec![r.as_slice()]);
        let mut cf = vec![2u8, 0, 0];
        cf.extend(&r);
        let p = split_key(&cf, true, &KeyEncoding::NoPrefix).unwrap();
        assert_eq!(p.column_family, Some(2));
        assert!(split_key(&[1, 0, 0, 0, 0, 0, 0, 0, 0], false, &KeyEncoding::NoPrefix).is_err());
        // prefix scan: [len][0 prefix][0 rest]
        let mut ps = ((r.len() + 1) as i32).to_le_bytes().to_vec();
        ps.push(0);
        ps.extend(&r);
        ps.push(0);
        ps.extend(&r);
        let p = split_key(&ps, false, &KeyEncoding::PrefixScan { num_cols: 1 }).unwrap();
        assert_eq!(p.rows.len(), 2);
        for n in 0..ps.len() {
            let _ = split_key(&ps[..n], false, &KeyEncoding::PrefixScan { num_cols: 1 });
        }
    }

    #[test]
    fn joined_rows_relocate_variable_fields() {
        // left: (int 7, string "ab"); right: (string "xyz")
        let mut l = vec![0u8; 8];
        l.extend(7u64.to_le_bytes());
        l.extend(((24u64) << 32 | 2).to_le_bytes());
        l.extend(b"ab\0\0\0\0\0\0");
        let mut r = vec![0u8; 8];
        r.extend(((16u64) << 32 | 3).to_le_bytes());
        r.extend(b"xyz\0\0\0\0\0");
        let j = join_unsafe_rows(&l, &[false, true], &r, &[true]).unwrap();
        assert_eq!(j.len(), 8 + 24 + 16);
        let slot = |i: usize| u64::from_le_bytes(j[8 + i * 8..16 + i * 8].try_into().unwrap());
        assert_eq!(slot(0), 7);
        let (o1, s1) = ((slot(1) >> 32) as usize, (slot(1) & 0xffff_ffff) as usize);
        assert_eq!(&j[o1..o1 + s1], b"ab");
        let (o2, s2) = ((slot(2) >> 32) as usize, (slot(2) & 0xffff_ffff) as usize);
        assert_eq!(&j[o2..o2 + s2], b"xyz");
        assert!(join_unsafe_rows(&l[..10], &[false, true], &r, &[true]).is_err());
    }

    #[test]
    fn values_with_and_without_checksums() {
        let key = vec![0u8; 9];
        let mut v = vec![0u8];
        v.extend(row(&[0, 5]));
        assert_eq!(split_value(&key, &v, false, None).unwrap().len(), 1);
        let crc = crc32c(&[&key, &v]);
        let mut c = crc.to_le_bytes().to_vec();
        c.extend((v.len() as i32).to_le_bytes());
        c.extend(&v);
        assert!(has_row_checksums(&key, &c));
        assert_eq!(split_value(&key, &c, false, None).unwrap()[0], &v[1..]);
        let mut bad = c.clone();
        bad[12] ^= 1;
        assert!(split_value(&key, &bad, false, Some(true)).unwrap_err().message.contains("checksum"));
        // list of two
        let mut l = (v.len() as i32).to_le_bytes().to_vec();
        l.extend(&v);
        l.push(b',');
        l.extend((v.len() as i32).to_le_bytes());
        l.extend(&v);
        assert_eq!(split_value(&key, &l, true, Some(false)).unwrap().len(), 2);
    }
}
