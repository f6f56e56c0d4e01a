//! What the `parquet` crate's record API assumes of a file and panics (or spins) on instead of returning an error,
//! checked before it runs. The page (wasm32) aborts on a panic, so a corrupt Delta checkpoint must be refused
//! here, as a [`ParquetError`], not caught afterwards.
//!
//! The crate (60.x) fails on a corrupt file in four families, each checked here in the order a read meets it:
//! - footer: a column chunk whose start or length is negative (`ColumnChunkMetaData::byte_range`), or that ends
//!   past the file (`ChunkReader for Bytes` adds start and length, which wraps on 32-bit targets);
//! - page headers: Thrift values declaring more than their column chunk holds, which the crate's header reader
//!   skips for minutes or allocates ([`super::page_headers`]);
//! - schema: the record reader asserts the shapes of `LIST` and `MAP` groups, indexes the first field of every
//!   group and reads every field's repetition (`record/reader.rs`, `schema/types.rs`);
//! - column data: a data page in a dictionary encoding with no dictionary page before it
//!   (`column/reader/decoder.rs`), a definition level above the column's maximum (`record/triplet.rs`), and a
//!   column whose levels end before the row reader is done with it (`record/triplet.rs`, [`super::row_walk`]).
//!
//! The column-data checks replay the row reader over the levels of every row group ([`super::row_walk`]), each
//! column chunk decoded once with the crate's column reader (which returns errors) behind a page reader that
//! refuses what one page would make a decoder panic on, every level looked at.

use super::parquet::ParquetError;
use bytes::Bytes;
use parquet::basic::{ConvertedType, Encoding, Repetition, Type as PhysicalType};
use parquet::column::page::{Page, PageMetadata, PageReader};
use parquet::column::reader::{get_column_reader, ColumnReader, ColumnReaderImpl};
use parquet::data_type::DataType;
use parquet::errors::ParquetError as CrateError;
use parquet::file::reader::{FileReader, RowGroupReader, SerializedFileReader};
use parquet::schema::types::Type;

/// Records decoded per call while checking a column chunk (the record API's batch).
pub const BATCH: usize = 1024;

/// Checks everything the record API would panic or spin on; `Ok` means reading the rows returns errors, not panics.
/// `bytes` are the file's, which `reader` reads.
pub fn check(reader: &SerializedFileReader<Bytes>, bytes: &[u8], footer_at: u64) -> Result<(), ParquetError> {
    check_footer(reader, bytes.len() as u64, footer_at)?;
    check_page_headers(reader, bytes)?;
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

/// Every column chunk's page headers, walked within the chunk before the crate reads them
/// ([`super::page_headers`]).
fn check_page_headers(reader: &SerializedFileReader<Bytes>, bytes: &[u8]) -> Result<(), ParquetError> {
    for (g, group) in reader.metadata().row_groups().iter().enumerate() {
        for column in group.columns() {
            // Inside the file: `check_footer` ran first.
            let (start, len) = column.byte_range();
            super::page_headers::check_chunk(bytes, start as usize, len as usize).map_err(|e| ParquetError {
                offset: e.offset,
                reason: format!("row group {g}, column {}: {}", column.column_path().string(), e.reason),
            })?;
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

/// Replays the row reader over every row group ([`super::row_walk`]), which reads every column chunk once through
/// [`open_column`].
fn check_columns(reader: &SerializedFileReader<Bytes>) -> Result<(), ParquetError> {
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    for g in 0..reader.num_row_groups() {
        let group = reader
            .get_row_group(g)
            .map_err(|e| ParquetError { offset: None, reason: format!("row group {g}: {e}") })?;
        super::row_walk::check_row_group(group.as_ref(), &schema, g)?;
    }
    Ok(())
}

/// A leaf column's levels, batch by batch, as the record API's column reader decodes them (values too).
pub trait LevelBatches {
    /// The next batch of up to [`BATCH`] records, their definition and repetition levels appended to `def` and
    /// `rep` (when the column has them), every level checked against the column's maximum: `(records, values,
    /// levels)` as `read_records` counts them, all 0 at the end.
    fn next_batch(&mut self, def: &mut Vec<i16>, rep: &mut Vec<i16>) -> Result<(usize, usize, usize), String>;
}

/// Column `c` of `group` read through the check pass's page reader (`CheckedPages`).
pub fn open_column(group: &dyn RowGroupReader, c: usize) -> Result<Box<dyn LevelBatches>, String> {
    let pages = group.get_column_page_reader(c).map_err(|e| e.to_string())?;
    let descr = group.metadata().column(c).column_descr_ptr();
    let (max_def, max_rep) = (descr.max_def_level(), descr.max_rep_level());
    let byte_array = descr.physical_type() == PhysicalType::BYTE_ARRAY;
    let split_width = match descr.physical_type() {
        PhysicalType::INT32 | PhysicalType::FLOAT => Some(4),
        PhysicalType::INT64 | PhysicalType::DOUBLE => Some(8),
        PhysicalType::FIXED_LEN_BYTE_ARRAY => Some(usize::try_from(descr.type_length()).unwrap_or(0)),
        _ => None,
    };
    let pages = Box::new(CheckedPages { inner: pages, dictionary: false, max_def, max_rep, byte_array, split_width });
    fn typed<T: DataType>(reader: ColumnReaderImpl<T>, max_def: i16, max_rep: i16) -> Box<dyn LevelBatches> {
        Box::new(Levels { reader, values: Vec::new(), max_def, max_rep })
    }
    Ok(match get_column_reader(descr, pages) {
        ColumnReader::BoolColumnReader(r) => typed(r, max_def, max_rep),
        ColumnReader::Int32ColumnReader(r) => typed(r, max_def, max_rep),
        ColumnReader::Int64ColumnReader(r) => typed(r, max_def, max_rep),
        ColumnReader::Int96ColumnReader(r) => typed(r, max_def, max_rep),
        ColumnReader::FloatColumnReader(r) => typed(r, max_def, max_rep),
        ColumnReader::DoubleColumnReader(r) => typed(r, max_def, max_rep),
        ColumnReader::ByteArrayColumnReader(r) => typed(r, max_def, max_rep),
        ColumnReader::FixedLenByteArrayColumnReader(r) => typed(r, max_def, max_rep),
    })
}

/// The column reader of one physical type, its values decoded into `values` and dropped.
struct Levels<T: DataType> {
    reader: ColumnReaderImpl<T>,
    values: Vec<T::T>,
    max_def: i16,
    max_rep: i16,
}

impl<T: DataType> LevelBatches for Levels<T> {
    /// Every definition level is at most `max_def`, every repetition level at most `max_rep` (what Parquet's level
    /// encoding can hold is up to the next power of two).
    fn next_batch(&mut self, def: &mut Vec<i16>, rep: &mut Vec<i16>) -> Result<(usize, usize, usize), String> {
        let (max_def, max_rep) = (self.max_def, self.max_rep);
        let (from_def, from_rep) = (def.len(), rep.len());
        self.values.clear();
        let read = self
            .reader
            .read_records(
                BATCH,
                (max_def > 0).then_some(&mut *def),
                (max_rep > 0).then_some(&mut *rep),
                &mut self.values,
            )
            .map_err(|e| e.to_string())?;
        if let Some(l) = def[from_def..].iter().find(|l| !(0..=max_def).contains(*l)) {
            return Err(format!("definition level {l} above the column's maximum {max_def}"));
        }
        if let Some(l) = rep[from_rep..].iter().find(|l| !(0..=max_rep).contains(*l)) {
            return Err(format!("repetition level {l} above the column's maximum {max_rep}"));
        }
        Ok(read)
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
    /// The width of a value in `BYTE_STREAM_SPLIT`, for the types the crate decodes in it.
    split_width: Option<usize>,
}

impl CheckedPages {
    /// The v1 page's levels (repetition, then definition) as the column reader will slice them, each inside the
    /// page (the `BIT_PACKED` ones it slices without a bound, after `RLE` ones too).
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
                // A 4-byte length, then that many bytes: where the definition levels after it start.
                Encoding::RLE => buf
                    .get(at..at + 4)
                    .map_or(4, |b| 4usize.saturating_add(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)),
                _ => return Ok(()), // an error of the crate
            };
            if len > left {
                return Err(CrateError::General(format!("{len} bytes of levels and {left} left in the page")));
            }
            at += len;
        }
        Ok(())
    }

    /// Where the values of a v1 data page of `n` values start: after its repetition then definition levels, each
    /// `RLE` (a 4-byte length, then that many bytes), `BIT_PACKED` (`n` levels of the maximum's bits) or absent
    /// (maximum 0); `None` for another level encoding or levels that do not fit (the column reader says what is
    /// wrong).
    fn v1_values_start(&self, buf: &[u8], n: u32, rep: Encoding, def: Encoding) -> Option<usize> {
        let mut at = 0usize;
        for (max, encoding) in [(self.max_rep, rep), (self.max_def, def)] {
            let len = match encoding {
                _ if max == 0 => continue,
                Encoding::RLE => (u32::from_le_bytes(buf.get(at..at + 4)?.try_into().ok()?) as usize).checked_add(4)?,
                #[allow(deprecated, reason = "the encoding older writers used")]
                Encoding::BIT_PACKED => (n as usize).saturating_mul(bits(max)).div_ceil(8),
                _ => return None,
            };
            at = at.checked_add(len)?;
        }
        (at <= buf.len()).then_some(at)
    }

    /// Where a data page's values start (`None` when its levels do not fit, which the column reader finds).
    fn values_start(&self, page: &Page) -> Option<usize> {
        match page {
            Page::DataPage { buf, num_values, rep_level_encoding, def_level_encoding, .. } => {
                self.v1_values_start(buf, *num_values, *rep_level_encoding, *def_level_encoding)
            }
            Page::DataPageV2 { buf, def_levels_byte_len, rep_levels_byte_len, .. } => {
                let at = (*def_levels_byte_len as usize).saturating_add(*rep_levels_byte_len as usize);
                (at <= buf.len()).then_some(at)
            }
            Page::DictionaryPage { .. } => None,
        }
    }

    /// `BYTE_STREAM_SPLIT` values (`encodings/decoding/byte_stream_split_decoder.rs`): the decoder reads value `k`
    /// at bytes `k + j × (len / width)` without a bound, so a page whose bytes hold fewer values than the column
    /// reader asks of it (the page's non-null values) panics with an index out of bounds, and a width of 0
    /// divides by zero. The check pass reads such a page as `PLAIN` instead, its values as many zeros as its bytes
    /// hold: the plain decoder fails ("not enough bytes") where the split one would read past the page, over the
    /// same levels. The record API reads the page as it is, after the check pass read it to the end.
    fn split_as_plain(&self, page: &mut Page) -> Result<(), CrateError> {
        let Some(width) = self.split_width.filter(|_| page.encoding() == Encoding::BYTE_STREAM_SPLIT) else {
            return Ok(());
        };
        if width == 0 {
            return Err(CrateError::General("BYTE_STREAM_SPLIT values of width 0".into()));
        }
        let Some(start) = self.values_start(page) else { return Ok(()) };
        match page {
            Page::DataPage { buf, encoding, .. } | Page::DataPageV2 { buf, encoding, .. } => {
                let mut plain = buf[..start].to_vec();
                plain.resize(start + (buf.len() - start) / width * width, 0);
                (*buf, *encoding) = (Bytes::from(plain), Encoding::PLAIN);
            }
            Page::DictionaryPage { .. } => {}
        }
        Ok(())
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
            // The column reader slices the levels out of the page without a bound.
            Page::DataPageV2 { buf, .. } if self.values_start(&page).is_none() => {
                return Err(CrateError::General(format!("a v2 data page's levels run past its {} bytes", buf.len())));
            }
            _ => {}
        }
        self.split_as_plain(&mut page)?;
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
                Page::DataPage { buf, .. } if encoding == Encoding::PLAIN => {
                    self.values_start(&page).and_then(|at| buf.get(at..))
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
