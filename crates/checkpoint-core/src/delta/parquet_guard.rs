//! What the `parquet` crate's record API assumes of a file and panics on instead of returning an error,
//! checked before it runs. The page (wasm32) aborts on a panic, so a corrupt Delta checkpoint must be refused
//! here, as a [`ParquetError`], not caught afterwards.
//!
//! The crate (60.x) panics on a corrupt file in three families, each checked here in the order a read meets it:
//! - footer: a column chunk whose start or length is negative (`ColumnChunkMetaData::byte_range`), or that ends
//!   past the file (`ChunkReader for Bytes` adds start and length, which wraps on 32-bit targets);
//! - schema: the record reader asserts the shapes of `LIST` and `MAP` groups, indexes the first field of every
//!   group and reads every field's repetition (`record/reader.rs`, `schema/types.rs`);
//! - column data: a data page in a dictionary encoding with no dictionary page before it
//!   (`column/reader/decoder.rs`), and a definition level above the column's maximum (`record/triplet.rs`).
//!
//! The column-data checks decode every column chunk once with the crate's column reader (which returns errors),
//! behind a page reader that refuses a dictionary-encoded page with no dictionary, and look at every level.

use super::parquet::ParquetError;
use bytes::Bytes;
use parquet::basic::{ConvertedType, Encoding, Repetition, Type as PhysicalType};
use parquet::column::page::{Page, PageMetadata, PageReader};
use parquet::column::reader::{get_column_reader, ColumnReader, ColumnReaderImpl};
use parquet::data_type::DataType;
use parquet::errors::ParquetError as CrateError;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::schema::types::Type;

/// Levels and values decoded per call while checking a column chunk.
const BATCH: usize = 4096;

/// Checks everything the record API would panic on; `Ok` means reading the rows returns errors, not panics.
pub fn check(reader: &SerializedFileReader<Bytes>, file_len: u64, footer_at: u64) -> Result<(), ParquetError> {
    check_footer(reader, file_len, footer_at)?;
    check_schema(reader.metadata().file_metadata().schema())
        .map_err(|reason| ParquetError { offset: Some(footer_at), reason: format!("footer: schema: {reason}") })?;
    check_columns(reader)
}

/// Every column chunk lies inside the file.
fn check_footer(reader: &SerializedFileReader<Bytes>, file_len: u64, footer_at: u64) -> Result<(), ParquetError> {
    for (g, group) in reader.metadata().row_groups().iter().enumerate() {
        for column in group.columns() {
            let start = column.dictionary_page_offset().unwrap_or(column.data_page_offset());
            let len = column.compressed_size();
            let inside =
                start >= 0 && len >= 0 && (start as u64).checked_add(len as u64).is_some_and(|e| e <= file_len);
            if !inside {
                return Err(ParquetError {
                    offset: Some(footer_at),
                    reason: format!(
                        "footer: row group {g}, column {}: a column chunk of {len} bytes at byte {start}, \
                         outside the file of {file_len} bytes",
                        column.column_path()
                    ),
                });
            }
        }
    }
    Ok(())
}

/// The schema's groups have the shapes the record reader asserts.
fn check_schema(root: &Type) -> Result<(), String> {
    if !root.is_group() || root.get_fields().is_empty() {
        return Err("the root is not a group of fields".into());
    }
    root.get_fields().iter().try_for_each(|f| check_type(f))
}

fn check_type(t: &Type) -> Result<(), String> {
    let info = t.get_basic_info();
    if !info.has_repetition() {
        return Err(format!("field {} has no repetition", t.name()));
    }
    if !t.is_group() {
        return Ok(());
    }
    let fields = t.get_fields();
    if fields.is_empty() {
        return Err(format!("group {} has no fields", t.name()));
    }
    let repeated =
        |f: &Type| f.get_basic_info().has_repetition() && f.get_basic_info().repetition() == Repetition::REPEATED;
    match info.converted_type() {
        ConvertedType::LIST if fields.len() != 1 || !repeated(&fields[0]) => {
            return Err(format!("list {} is not one repeated field", t.name()));
        }
        ConvertedType::MAP | ConvertedType::MAP_KEY_VALUE => {
            let kv = &fields[0];
            if fields.len() != 1 || !kv.is_group() || !repeated(kv) || !(1..=2).contains(&kv.get_fields().len()) {
                return Err(format!("map {} is not one repeated group of a key and a value", t.name()));
            }
        }
        _ => {}
    }
    fields.iter().try_for_each(|f| check_type(f))
}

/// Decodes every column chunk of every row group once and checks its pages and levels.
fn check_columns(reader: &SerializedFileReader<Bytes>) -> Result<(), ParquetError> {
    for g in 0..reader.num_row_groups() {
        let group = reader.get_row_group(g).map_err(|e| at_group(g, None, e.to_string()))?;
        for c in 0..group.num_columns() {
            let column = group.metadata().column(c);
            // Inside the file: `check_footer` ran first.
            let start = column.dictionary_page_offset().unwrap_or(column.data_page_offset()) as u64;
            let fail = |reason: String| at_group(g, Some((column.column_path().string(), start)), reason);
            let pages = group.get_column_page_reader(c).map_err(|e| fail(e.to_string()))?;
            let descr = column.column_descr_ptr();
            let (max_def, max_rep) = (descr.max_def_level(), descr.max_rep_level());
            let byte_array = descr.physical_type() == PhysicalType::BYTE_ARRAY;
            let pages = Box::new(CheckedPages { inner: pages, dictionary: false, max_def, max_rep, byte_array });
            let levels = match get_column_reader(descr, pages) {
                ColumnReader::BoolColumnReader(r) => levels_in_range(r, max_def, max_rep),
                ColumnReader::Int32ColumnReader(r) => levels_in_range(r, max_def, max_rep),
                ColumnReader::Int64ColumnReader(r) => levels_in_range(r, max_def, max_rep),
                ColumnReader::Int96ColumnReader(r) => levels_in_range(r, max_def, max_rep),
                ColumnReader::FloatColumnReader(r) => levels_in_range(r, max_def, max_rep),
                ColumnReader::DoubleColumnReader(r) => levels_in_range(r, max_def, max_rep),
                ColumnReader::ByteArrayColumnReader(r) => levels_in_range(r, max_def, max_rep),
                ColumnReader::FixedLenByteArrayColumnReader(r) => levels_in_range(r, max_def, max_rep),
            };
            levels.map_err(fail)?;
        }
    }
    Ok(())
}

/// An error in row group `g`, in a column chunk (its path and first byte) when known.
fn at_group(g: usize, column: Option<(String, u64)>, reason: String) -> ParquetError {
    let name = column.as_ref().map(|(c, _)| format!(", column {c}")).unwrap_or_default();
    ParquetError { offset: column.map(|(_, at)| at), reason: format!("row group {g}{name}: {reason}") }
}

/// Reads the whole column chunk; every definition level is at most `max_def`, every repetition level at most
/// `max_rep` (what Parquet's level encoding can hold is up to the next power of two).
fn levels_in_range<T: DataType>(mut r: ColumnReaderImpl<T>, max_def: i16, max_rep: i16) -> Result<(), String> {
    let (mut def, mut rep, mut values) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        def.clear();
        rep.clear();
        values.clear();
        let (records, read, levels) = r
            .read_records(BATCH, (max_def > 0).then_some(&mut def), (max_rep > 0).then_some(&mut rep), &mut values)
            .map_err(|e| e.to_string())?;
        if let Some(l) = def.iter().find(|l| !(0..=max_def).contains(*l)) {
            return Err(format!("definition level {l} above the column's maximum {max_def}"));
        }
        if let Some(l) = rep.iter().find(|l| !(0..=max_rep).contains(*l)) {
            return Err(format!("repetition level {l} above the column's maximum {max_rep}"));
        }
        if records == 0 && read == 0 && levels == 0 {
            return Ok(());
        }
    }
}

/// The page reader of the check pass: refuses what the crate's decoders would panic on in one page.
/// - A data page in a dictionary encoding before any dictionary page (the decoder `expect`s the dictionary).
/// - A v1 data page whose `BIT_PACKED` levels would end past the page (sliced without a bound).
/// - `PLAIN` byte arrays that end inside a 4-byte length (the decoder slices 4 bytes without a bound): the page
///   is given to the decoder with a sentinel length after its last byte that points past the end, so that a
///   decoder wanting one more value fails ("not enough bytes") instead. A page the check pass reads to the end
///   never reached the sentinel, so the record API, which reads the very same pages unpadded, reads them alike.
struct CheckedPages {
    inner: Box<dyn PageReader>,
    dictionary: bool,
    max_def: i16,
    max_rep: i16,
    byte_array: bool,
}

impl CheckedPages {
    /// The v1 page's levels (repetition, then definition) as the column reader will slice them, each inside the
    /// page.
    fn check_v1_levels(&self, buf: &[u8], n: u32, rep: Encoding, def: Encoding) -> Result<(), CrateError> {
        let mut at = 0usize;
        for (max, encoding) in [(self.max_rep, rep), (self.max_def, def)] {
            if max == 0 {
                continue;
            }
            let left = buf.len().saturating_sub(at);
            let len = match encoding {
                #[allow(deprecated, reason = "the encoding older writers used")]
                Encoding::BIT_PACKED => (n as usize).saturating_mul(bits(max)).div_ceil(8),
                _ => continue, // RLE (length-prefixed and checked by the crate) or an error of the crate
            };
            if len > left {
                return Err(CrateError::General(format!("{len} bytes of levels and {left} left in the page")));
            }
            at += len;
        }
        Ok(())
    }

    /// Where a v1 data page's values start: after its repetition then definition levels, each `RLE` (a 4-byte
    /// length, then that many bytes) or absent (maximum 0); `None` for another level encoding or levels that do
    /// not fit (the column reader says what is wrong).
    fn v1_values_start(&self, buf: &[u8], rep: Encoding, def: Encoding) -> Option<usize> {
        let mut at = 0usize;
        for (max, encoding) in [(self.max_rep, rep), (self.max_def, def)] {
            if max == 0 {
                continue;
            }
            if encoding != Encoding::RLE {
                return None;
            }
            let len = u32::from_le_bytes(buf.get(at..at + 4)?.try_into().ok()?) as usize;
            at = at.checked_add(4)?.checked_add(len)?;
        }
        (at <= buf.len()).then_some(at)
    }

    /// The page's buffer with the sentinel length after it, for `PLAIN` byte arrays.
    fn with_sentinel(buf: &Bytes) -> Bytes {
        let past = u32::try_from(buf.len() + 5).unwrap_or(u32::MAX);
        let mut padded = Vec::with_capacity(buf.len() + 4);
        padded.extend_from_slice(buf);
        padded.extend_from_slice(&past.to_le_bytes());
        Bytes::from(padded)
    }
}

/// `PLAIN` byte arrays (a 4-byte length, then that many bytes, over and over) that end inside a length or run
/// past the page: the crate's decoder reads a length's 4 bytes without a bound, wherever the lengths before it
/// lead (into the sentinel too), so such values are refused before any decoder runs. Valid values end exactly
/// at the end of the page.
fn check_plain_byte_arrays(values: &[u8]) -> Result<(), CrateError> {
    let mut at = 0usize;
    while at < values.len() {
        let Some(len) = values.get(at..at + 4).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes) else {
            let left = values.len() - at;
            return Err(CrateError::General(format!("a byte array ends inside its 4-byte length ({left} bytes left)")));
        };
        at = at.saturating_add(4).saturating_add(len as usize);
    }
    if at > values.len() {
        return Err(CrateError::General(format!("a byte array runs {} bytes past its page", at - values.len())));
    }
    Ok(())
}

/// Bits of a level of at most `max` (as the crate's `num_required_bits`).
fn bits(max: i16) -> usize {
    (16 - max.leading_zeros()) as usize
}

impl Iterator for CheckedPages {
    type Item = Result<Page, CrateError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.get_next_page().transpose()
    }
}

impl PageReader for CheckedPages {
    fn get_next_page(&mut self) -> Result<Option<Page>, CrateError> {
        let Some(mut page) = self.inner.get_next_page()? else { return Ok(None) };
        let encoding = page.encoding();
        match &page {
            // The decoder sizes its dictionary from the header's count before decoding: a count its bytes cannot
            // hold (a byte array takes at least 4 bytes, any value at least a bit) would allocate gigabytes.
            Page::DictionaryPage { buf, num_values, .. }
                if *num_values as usize > if self.byte_array { buf.len() / 4 } else { buf.len().saturating_mul(8) } =>
            {
                return Err(CrateError::General(format!(
                    "a dictionary page declares {num_values} values in {} bytes",
                    buf.len()
                )));
            }
            Page::DictionaryPage { .. } => self.dictionary = true,
            _ if matches!(encoding, Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY) && !self.dictionary => {
                return Err(CrateError::General("a dictionary-encoded page and no dictionary page before it".into()));
            }
            Page::DataPage { buf, num_values, rep_level_encoding, def_level_encoding, .. } => {
                self.check_v1_levels(buf, *num_values, *rep_level_encoding, *def_level_encoding)?
            }
            _ => {}
        }
        // Plain values: a dictionary page in `PLAIN` or `PLAIN_DICTIONARY`, a data page in `PLAIN` (a data page in
        // `PLAIN_DICTIONARY` holds dictionary indices, not to be padded).
        if self.byte_array {
            let values = match &page {
                Page::DictionaryPage { buf, .. } => Some(&buf[..]),
                Page::DataPageV2 { buf, def_levels_byte_len, rep_levels_byte_len, .. }
                    if encoding == Encoding::PLAIN =>
                {
                    buf.get((*def_levels_byte_len as usize).saturating_add(*rep_levels_byte_len as usize)..)
                }
                Page::DataPage { buf, rep_level_encoding, def_level_encoding, .. } if encoding == Encoding::PLAIN => {
                    self.v1_values_start(buf, *rep_level_encoding, *def_level_encoding).and_then(|at| buf.get(at..))
                }
                _ => None,
            };
            if let Some(v) = values {
                check_plain_byte_arrays(v)?;
            }
            match &mut page {
                Page::DictionaryPage { buf, .. } => *buf = Self::with_sentinel(buf),
                Page::DataPage { buf, .. } | Page::DataPageV2 { buf, .. } if encoding == Encoding::PLAIN => {
                    *buf = Self::with_sentinel(buf)
                }
                _ => {}
            }
        }
        Ok(Some(page))
    }

    fn peek_next_page(&mut self) -> Result<Option<PageMetadata>, CrateError> {
        self.inner.peek_next_page()
    }

    fn skip_next_page(&mut self) -> Result<(), CrateError> {
        self.inner.skip_next_page()
    }
}
