//! Spark's `UnsafeRow` binary layout (FORMATS.md §9) decoded into the JSON Spark's `Dataset.toJSON` writes
//! (`JacksonGenerator`, sql/catalyst/src/main/scala/org/apache/spark/sql/catalyst/json/JacksonGenerator.scala).
//!
//! Layout (sql/catalyst/src/main/java/org/apache/spark/sql/catalyst/expressions/UnsafeRow.java, UnsafeArrayData,
//! UnsafeMapData): a null bitset of `((n + 63) / 64) * 8` bytes, one 8-byte little-endian slot per field, then a
//! variable-length region; variable-length values store `(offset << 32) | size` in their slot, offsets relative to
//! the row start.
//!
//! JSON as Spark writes it (`spark.sql.jsonGenerator.ignoreNullFields` = true): null struct fields are left out,
//! null array elements and map values are `null`; timestamps `yyyy-MM-dd'T'HH:mm:ss.SSSXXX` in UTC
//! (`2024-01-01T00:00:40.000Z`), timestamp_ntz `yyyy-MM-dd'T'HH:mm:ss.SSS`, dates `yyyy-MM-dd`, decimals as
//! numbers, binary as base64, strings that are not valid UTF-8 with U+FFFD for each bad sequence (Java's
//! `new String(bytes, UTF_8)`), NaN/±Infinity as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`, intervals as
//! Spark's strings (`CalendarInterval.toString`, ANSI `INTERVAL '…' DAY TO SECOND`).
//!
//! Every offset and size is bounds-checked; errors carry the byte offset in the outermost row. The work of one
//! row is bounded by its size (`RowBudget`: at most 2 × its bytes + 64 bytes of values): Spark's nested values
//! never share bytes, so a row whose offsets point several values at the same bytes (which would decode into
//! exponentially many values) is an error.

use super::schema::{DataType, StructType};
use serde_json::{Map, Value};
use std::cell::Cell;

pub use super::row_json::{write_row_json, RowJsonWriter};
pub use super::value_text::*;

crate::parse_error::parse_error_type!(
    /// A row that does not match its schema: where (offset from the start of the outermost row) and why.
    RowError,
    UnsafeRowFormat,
    "row byte"
);

pub(super) const MAX_NESTING: usize = 64;

/// Decodes one UnsafeRow into the JSON object Spark's `toJSON` writes for it.
///
/// Errors: a row shorter than its fixed part, an offset/size pointing outside the row, an impossible array
/// length, nesting deeper than 64 levels, nested values that share bytes beyond the row's budget (`RowBudget`:
/// 2 × its bytes + 64).
pub fn decode_row(bytes: &[u8], schema: &StructType) -> Result<Value, RowError> {
    let budget = RowBudget::for_row(bytes.len());
    let r = Slice::new(bytes, &budget);
    struct_value(r, schema, 0, "")
}

/// The bytes one row may decode: each value decoded is charged the bytes it occupies (a struct its null bits and
/// slots, an array its header and element slots, a string, binary, decimal or interval its bytes; at least one
/// byte each). Spark writes every nested value into bytes of its own, so a real row is charged at most its size
/// plus one byte per empty value (each reached through an 8-byte slot of its own): under `2 × size + 64`. A row
/// whose offsets point several fields or elements at the same bytes (a sibling's, or an enclosing value's) is
/// charged those bytes again at every visit and stops at the budget, instead of doubling its output at every
/// level of nesting.
pub(super) struct RowBudget {
    left: Cell<usize>,
    limit: usize,
    row_len: usize,
}

impl RowBudget {
    /// The budget of a row of `row_len` bytes.
    pub(super) fn for_row(row_len: usize) -> Self {
        let limit = row_len.saturating_mul(2).saturating_add(64);
        RowBudget { left: Cell::new(limit), limit, row_len }
    }
}

/// A window into the outermost row: `b` are the bytes of the current nested value, `base` its offset, `budget`
/// the outermost row's [`RowBudget`].
#[derive(Clone, Copy)]
pub(super) struct Slice<'a> {
    pub(super) b: &'a [u8],
    pub(super) base: usize,
    budget: &'a RowBudget,
}

impl<'a> Slice<'a> {
    /// The whole outermost row `b`, decoded within `budget`.
    pub(super) fn new(b: &'a [u8], budget: &'a RowBudget) -> Self {
        Slice { b, base: 0, budget }
    }
    /// Charges `n` bytes (at least 1) of decoded values to the row's budget; `at` is where the value starts.
    pub(super) fn charge(&self, at: usize, n: usize) -> Result<(), RowError> {
        let n = n.max(1);
        let left = self.budget.left.get();
        if n > left {
            return Err(self.err(
                at,
                format!(
                    "nested values share bytes: the {}-byte row decodes into more than {} bytes of values \
                     (offsets point several values at the same bytes; Spark writes each nested value once)",
                    self.budget.row_len, self.budget.limit
                ),
            ));
        }
        self.budget.left.set(left - n);
        Ok(())
    }
    pub(super) fn err(&self, at: usize, msg: impl Into<String>) -> RowError {
        RowError::new(self.base + at, msg.into())
    }
    pub(super) fn bytes(&self, at: usize, n: usize, what: &str) -> Result<&'a [u8], RowError> {
        self.b.get(at..at.saturating_add(n)).ok_or_else(|| {
            self.err(at, format!("{what}: {n} bytes at {at} run past the end of a {}-byte value", self.b.len()))
        })
    }
    pub(super) fn u64(&self, at: usize, what: &str) -> Result<u64, RowError> {
        let s = self.bytes(at, 8, what)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(s);
        Ok(u64::from_le_bytes(w))
    }
    pub(super) fn sub(&self, at: usize, n: usize, what: &str) -> Result<Slice<'a>, RowError> {
        Ok(Slice { b: self.bytes(at, n, what)?, base: self.base + at, budget: self.budget })
    }
    /// Reads an `offsetAndSize` slot and returns the value's bytes.
    pub(super) fn var(&self, slot_at: usize, what: &str) -> Result<Slice<'a>, RowError> {
        let v = self.u64(slot_at, what)?;
        let (off, size) = ((v >> 32) as usize, (v & 0xFFFF_FFFF) as usize);
        if off.checked_add(size).is_none_or(|end| end > self.b.len()) {
            return Err(self.err(
                slot_at,
                format!("{what}: offset {off} + size {size} points outside the {}-byte value", self.b.len()),
            ));
        }
        self.sub(off, size, what)
    }
    pub(super) fn is_null(&self, bitset_at: usize, i: usize) -> Result<bool, RowError> {
        let word = self.u64(bitset_at + (i / 64) * 8, "null bitset")?;
        Ok(word & (1u64 << (i % 64)) != 0)
    }
}

pub(super) fn bitset_bytes(n: usize) -> usize {
    n.div_ceil(64) * 8
}

fn path(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

fn struct_value(r: Slice<'_>, schema: &StructType, depth: usize, prefix: &str) -> Result<Value, RowError> {
    if depth > MAX_NESTING {
        return Err(r.err(0, "values nested more than 64 levels deep"));
    }
    let n = schema.fields.len();
    let w = bitset_bytes(n);
    let fixed = w + n * 8;
    if r.b.len() < fixed {
        return Err(r.err(
            0,
            format!(
                "{}row of {} bytes is shorter than its fixed part ({fixed} bytes for {n} fields)",
                if prefix.is_empty() { String::new() } else { format!("{prefix}: ") },
                r.b.len()
            ),
        ));
    }
    r.charge(0, fixed)?;
    let mut obj = Map::new();
    for (i, f) in schema.fields.iter().enumerate() {
        if r.is_null(0, i)? || f.data_type == DataType::Null {
            continue; // toJSON leaves null fields out
        }
        // Field paths are only needed in errors and for nested values: build them only then.
        let v = if is_fixed_length(&f.data_type) {
            slot_value(r, w + i * 8, &f.data_type, depth, &f.name)
        } else {
            slot_value(r, w + i * 8, &f.data_type, depth, &path(prefix, &f.name))
        }
        .map_err(|mut e| {
            if is_fixed_length(&f.data_type) && !prefix.is_empty() {
                e.message = format!("{prefix}.{}", e.message);
            }
            e
        })?;
        obj.insert(f.name.clone(), v);
    }
    Ok(Value::Object(obj))
}

/// Value stored in an 8-byte row slot at `at` (fixed-size inline, variable-size via offsetAndSize).
fn slot_value(r: Slice<'_>, at: usize, t: &DataType, depth: usize, p: &str) -> Result<Value, RowError> {
    let raw = r.u64(at, p)?;
    fixed_or_var(r, at, raw, 8, t, depth, p)
}

/// Decodes a value whose fixed bits are `raw` (already read with the element width); for variable-length types
/// `raw` is the offsetAndSize relative to `r`.
fn fixed_or_var(
    r: Slice<'_>,
    at: usize,
    raw: u64,
    _width: usize,
    t: &DataType,
    depth: usize,
    p: &str,
) -> Result<Value, RowError> {
    Ok(match t {
        DataType::Null => Value::Null,
        DataType::Boolean => Value::Bool(raw as u8 != 0),
        DataType::Byte => Value::from(raw as u8 as i8),
        DataType::Short => Value::from(raw as u16 as i16),
        DataType::Integer => Value::from(raw as u32 as i32),
        DataType::Long => Value::from(raw as i64),
        DataType::Float => float_value(f32::from_bits(raw as u32)),
        DataType::Double => double_value(f64::from_bits(raw)),
        DataType::Date => Value::String(format_date(i64::from(raw as u32 as i32))),
        DataType::Timestamp => Value::String(format_timestamp(raw as i64, true)),
        DataType::TimestampNtz => Value::String(format_timestamp(raw as i64, false)),
        DataType::YearMonthInterval { start, end } => {
            Value::String(year_month_interval_string(raw as u32 as i32, *start, *end))
        }
        DataType::DayTimeInterval { start, end } => Value::String(day_time_interval_string(raw as i64, *start, *end)),
        DataType::Decimal { precision, scale } if *precision <= 18 => decimal_value(i128::from(raw as i64), *scale),
        _ => var_value(var_slice(r, at, raw, p)?, t, depth, p)?,
    })
}

/// The bytes a variable-length slot points at (`raw`: offset in the high 32 bits, size in the low 32, as
/// `UnsafeRow.setOffsetAndSize` writes it), bounded by `r`; `at` is the slot's position (errors).
pub(super) fn var_slice<'a>(r: Slice<'a>, at: usize, raw: u64, p: &str) -> Result<Slice<'a>, RowError> {
    let (off, size) = ((raw >> 32) as usize, (raw & 0xFFFF_FFFF) as usize);
    if off.checked_add(size).is_none_or(|end| end > r.b.len()) {
        return Err(r.err(at, format!("{p}: offset {off} + size {size} points outside the {}-byte value", r.b.len())));
    }
    r.sub(off, size, p)
}

/// A float or double map key as Java's `toString` of the boxed value writes it: `NaN`, `Infinity`,
/// `-Infinity`, else `text` of it.
fn java_number_key<F: Into<f64> + Copy>(x: F, text: fn(F) -> String) -> String {
    let d: f64 = x.into();
    if d.is_nan() {
        "NaN".into()
    } else if d.is_infinite() {
        if d > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        text(x)
    }
}

/// The unscaled value of a variable-length decimal (precision over 18: `Decimal.toJavaBigDecimal`'s two's
/// complement big-endian bytes, 1 to 16 of them, as `UnsafeRow.getDecimal` reads them). Errors name the field
/// path `p` and the byte count.
pub(super) fn decimal_unscaled(v: Slice<'_>, p: &str) -> Result<i128, RowError> {
    if v.b.is_empty() || v.b.len() > 16 {
        return Err(v.err(0, format!("{p}: decimal of {} bytes (1..=16 expected)", v.b.len())));
    }
    let mut x: i128 = if v.b[0] & 0x80 != 0 { -1 } else { 0 };
    for &byte in v.b {
        x = (x << 8) | i128::from(byte);
    }
    Ok(x)
}

pub(super) fn var_value(v: Slice<'_>, t: &DataType, depth: usize, p: &str) -> Result<Value, RowError> {
    Ok(match t {
        DataType::String => {
            v.charge(0, v.b.len())?;
            Value::String(String::from_utf8_lossy(v.b).into_owned())
        }
        DataType::Binary => {
            v.charge(0, v.b.len())?;
            Value::String(base64(v.b))
        }
        DataType::Decimal { scale, .. } => {
            v.charge(0, v.b.len())?;
            decimal_value(decimal_unscaled(v, p)?, *scale)
        }
        DataType::CalendarInterval => {
            v.charge(0, 16)?;
            let b = v.bytes(0, 16, p)?;
            let months = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let days = i32::from_le_bytes([b[4], b[5], b[6], b[7]]);
            let mut m = [0u8; 8];
            m.copy_from_slice(&b[8..16]);
            Value::String(calendar_interval_string(months, days, i64::from_le_bytes(m)))
        }
        DataType::Struct(s) => struct_value(v, s, depth + 1, p)?,
        DataType::Array { element, .. } => array_values(v, element, depth + 1, p)?.into(),
        DataType::Map { key, value, .. } => {
            let (ks, vs) = map_arrays(v, p)?;
            let keys = map_keys(ks, key, depth + 1, p)?;
            let vals = array_values(vs, value, depth + 1, p)?;
            if keys.len() != vals.len() {
                return Err(v.err(0, format!("{p}: map with {} keys but {} values", keys.len(), vals.len())));
            }
            let mut obj = Map::new();
            for (k, val) in keys.into_iter().zip(vals) {
                obj.insert(k, val);
            }
            Value::Object(obj)
        }
        DataType::Variant => {
            // Spark writes a variant as its JSON rendering; we show its two binaries (value, metadata).
            let value = v.var(0, p)?;
            let metadata = v.var(8, p)?;
            v.charge(0, 16 + value.b.len() + metadata.b.len())?;
            serde_json::json!({"value": base64(value.b), "metadata": base64(metadata.b)})
        }
        other => return Err(v.err(0, format!("{p}: type {} is not variable-length", other.simple_string()))),
    })
}

/// Element width inside an UnsafeArrayData (`UnsafeArrayData.calculateSizeOfUnderlyingByteArray` / the writer's
/// element size): 1 for boolean/byte, 2 short, 4 int/float/date/year-month interval, 8 for everything else.
pub(super) fn element_width(t: &DataType) -> usize {
    match t {
        DataType::Boolean | DataType::Byte => 1,
        DataType::Short => 2,
        DataType::Integer | DataType::Float | DataType::Date | DataType::YearMonthInterval { .. } => 4,
        _ => 8,
    }
}

fn array_values(a: Slice<'_>, t: &DataType, depth: usize, p: &str) -> Result<Vec<Value>, RowError> {
    if depth > MAX_NESTING {
        return Err(a.err(0, "values nested more than 64 levels deep"));
    }
    let n = a.u64(0, p)? as i64;
    let width = element_width(t);
    // Every element needs at least `width` bytes plus a null bit: bound n by the array's size before anything else.
    if n < 0 || n as u64 > (a.b.len() as u64) / (width as u64).max(1) {
        return Err(a.err(0, format!("{p}: array claims {n} elements in {} bytes", a.b.len())));
    }
    let n = n as usize;
    let header = 8 + bitset_bytes(n);
    let elems = header;
    if header + n * width > a.b.len() {
        return Err(
            a.err(0, format!("{p}: array of {n} elements needs {} bytes, has {}", header + n * width, a.b.len()))
        );
    }
    a.charge(0, header + n * width)?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        if a.is_null(8, i)? {
            out.push(Value::Null);
            continue;
        }
        let at = elems + i * width;
        let s = a.bytes(at, width, p)?;
        let mut w = [0u8; 8];
        w[..width].copy_from_slice(s);
        let raw = u64::from_le_bytes(w);
        let v = if is_fixed_length(t) {
            fixed_or_var(a, at, raw, width, t, depth, p)
        } else {
            fixed_or_var(a, at, raw, width, t, depth, &format!("{p}[{i}]"))
        };
        out.push(v?);
    }
    Ok(out)
}

/// Map keys as Spark's JSON writer names them: `keyArray.get(i, keyType).toString`, i.e. the internal value's
/// text: strings as they are, numbers, dates (days) and timestamps (microseconds) as integers, decimals in plain
/// notation, booleans as `true`/`false`. Other key types (rare) are written as their JSON text.
/// An UnsafeMapData's two arrays (`UnsafeMapData.pointTo`: the key array's size in 8 bytes, the key array, then
/// the value array), each bounded by the map's bytes; the 8-byte header is charged.
pub(super) fn map_arrays<'a>(v: Slice<'a>, p: &str) -> Result<(Slice<'a>, Slice<'a>), RowError> {
    let ks = v.u64(0, p)? as i64;
    if ks < 0 || ks as usize > v.b.len() - 8 {
        return Err(v.err(0, format!("{p}: map key array size {ks} does not fit the {}-byte map", v.b.len())));
    }
    let ks = ks as usize;
    v.charge(0, 8)?;
    Ok((v.sub(8, ks, p)?, v.sub(8 + ks, v.b.len() - 8 - ks, p)?))
}

/// A map's keys as the text of Spark's `toJSON` field names (`JacksonGenerator.writeMapData`: the key's
/// `toString`, of its internal value): numbers of dates, timestamps and intervals (days, microseconds,
/// months), Java's `Double.toString` / `Float.toString` (`1.0E-300`, `NaN`), `BigDecimal.toString` of decimals
/// (`3.00`, `0E-10`); strings as they are. Real Spark 4.1.4 (`tools/spark-gen/state_tojson.py`).
pub(super) fn map_keys(a: Slice<'_>, t: &DataType, depth: usize, p: &str) -> Result<Vec<String>, RowError> {
    let n = array_len(a, t, p)?;
    let width = element_width(t);
    let header = 8 + bitset_bytes(n);
    a.charge(0, header + n * width)?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let at = header + i * width;
        let s = a.bytes(at, width, p)?;
        let mut w = [0u8; 8];
        w[..width].copy_from_slice(s);
        let raw = u64::from_le_bytes(w);
        let text = match t {
            DataType::Byte => (raw as u8 as i8).to_string(),
            DataType::Short => (raw as u16 as i16).to_string(),
            DataType::Integer | DataType::Date | DataType::YearMonthInterval { .. } => (raw as u32 as i32).to_string(),
            DataType::Long | DataType::Timestamp | DataType::TimestampNtz | DataType::DayTimeInterval { .. } => {
                (raw as i64).to_string()
            }
            DataType::Boolean => (raw as u8 != 0).to_string(),
            DataType::Decimal { precision, scale } if *precision <= 18 => {
                java_decimal_string(i128::from(raw as i64), *scale)
            }
            DataType::Decimal { scale, .. } => {
                let v = var_slice(a, at, raw, p)?;
                v.charge(0, v.b.len())?;
                java_decimal_string(decimal_unscaled(v, p)?, *scale)
            }
            DataType::Double => java_number_key(f64::from_bits(raw), java_double_string),
            DataType::Float => java_number_key(f32::from_bits(raw as u32), java_float_string),
            other => match fixed_or_var(a, at, raw, width, other, depth, p)? {
                Value::String(s) => s,
                v => v.to_string(),
            },
        };
        out.push(text);
    }
    Ok(out)
}

/// Whether Spark stores a type inline in the 8-byte slot (`UnsafeRow.isFixedLength`).
pub fn is_fixed_length(t: &DataType) -> bool {
    match t {
        DataType::Null
        | DataType::Boolean
        | DataType::Byte
        | DataType::Short
        | DataType::Integer
        | DataType::Long
        | DataType::Float
        | DataType::Double
        | DataType::Date
        | DataType::Timestamp
        | DataType::TimestampNtz
        | DataType::YearMonthInterval { .. }
        | DataType::DayTimeInterval { .. } => true,
        DataType::Decimal { precision, .. } => *precision <= 18,
        _ => false,
    }
}

/// Checks a row's structure against a schema the way Spark 4.x validates loaded state rows
/// (`UnsafeRowUtils.validateStructuralIntegrity`, failing with `KEY_ROW_FORMAT_VALIDATION_FAILURE` /
/// `VALUE_ROW_FORMAT_VALIDATION_FAILURE`): size a multiple of 8 and larger than the null bitset; null slots zero
/// (non-compact decimals excepted); booleans 0/1 and narrow integers without stray upper bits; variable-length
/// offsets after the fixed region and inside the row. Top level only, as Spark does.
pub fn validate_structure(bytes: &[u8], schema: &StructType) -> Result<(), RowError> {
    let e = |offset: usize, message: String| Err(RowError::new(offset, message));
    let n = schema.fields.len();
    let w = bitset_bytes(n);
    let fixed = w + 8 * n;
    if !bytes.len().is_multiple_of(8) {
        return e(0, format!("row size {} is not a multiple of 8", bytes.len()));
    }
    if n > 0 && w >= bytes.len() {
        return e(0, format!("row of {} bytes is not longer than its {w}-byte null bitset", bytes.len()));
    }
    if bytes.len() < fixed {
        return e(0, format!("row of {} bytes is shorter than its fixed part ({fixed} bytes)", bytes.len()));
    }
    let budget = RowBudget::for_row(bytes.len());
    let r = Slice::new(bytes, &budget);
    let mut var_bytes = 0usize;
    for (i, f) in schema.fields.iter().enumerate() {
        let at = w + 8 * i;
        let raw = r.u64(at, &f.name)?;
        if r.is_null(0, i)? {
            let reserved_decimal = matches!(f.data_type, DataType::Decimal { precision, .. } if precision > 18);
            if raw != 0 && !reserved_decimal {
                return e(at, format!("{}: null field with a non-zero slot 0x{raw:016x}", f.name));
            }
            continue;
        }
        if is_fixed_length(&f.data_type) {
            let extra = match f.data_type {
                DataType::Boolean => (raw > 1).then_some("boolean other than 0/1"),
                DataType::Byte => (raw >> 8 != 0).then_some("byte with upper bits set"),
                DataType::Short => (raw >> 16 != 0).then_some("short with upper bits set"),
                DataType::Integer | DataType::Float | DataType::Date | DataType::YearMonthInterval { .. } => {
                    (raw >> 32 != 0).then_some("4-byte value with upper bits set")
                }
                _ => None,
            };
            if let Some(what) = extra {
                return e(at, format!("{}: {what} (slot 0x{raw:016x})", f.name));
            }
            continue;
        }
        let (off, size) = ((raw >> 32) as usize, (raw & 0xFFFF_FFFF) as usize);
        if off < fixed || off.saturating_add(size) > bytes.len() {
            return e(
                at,
                format!("{}: offset {off} + size {size} outside the variable region {fixed}..{}", f.name, bytes.len()),
            );
        }
        var_bytes += size;
    }
    if fixed + var_bytes > bytes.len() {
        return e(0, format!("variable-length fields take {var_bytes} bytes, more than the row holds"));
    }
    Ok(())
}

/// Element count of an UnsafeArrayData, bounded by its size.
pub(super) fn array_len(a: Slice<'_>, t: &DataType, p: &str) -> Result<usize, RowError> {
    let n = a.u64(0, p)? as i64;
    let width = element_width(t);
    if n < 0 || n as u64 > (a.b.len() as u64) / (width as u64) {
        return Err(a.err(0, format!("{p}: array claims {n} elements in {} bytes", a.b.len())));
    }
    let n = n as usize;
    if 8 + bitset_bytes(n) + n * width > a.b.len() {
        return Err(a.err(0, format!("{p}: array of {n} elements does not fit {} bytes", a.b.len())));
    }
    Ok(n)
}
