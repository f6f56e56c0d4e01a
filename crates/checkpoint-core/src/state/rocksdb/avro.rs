//! Avro-encoded state rows (`spark.sql.streaming.stateStore.encodingFormat=avro`, transformWithState, Spark 4.0+).
//!
//! Spark's `AvroStateEncoder` (RocksDBStateEncoder.scala) writes each row with Avro's binary encoding
//! (`GenericDatumWriter` + `directBinaryEncoder`) against the schema `SchemaConverters.toAvroTypeWithDefaults`
//! derives from the row's Spark schema. That conversion (SchemaConverters.scala) is mirrored by [`avro_schema`]:
//!
//! * the top-level struct is a record `topLevelRecord`; each field is the union `["null", T]` (null first, so
//!   branch 0 = null, 1 = value), except `void` fields (plain `null`) and fields whose type is already such a
//!   union (nested structs, arrays, maps);
//! * nested structs are `["null", record]`; arrays `["null", {"type":"array","items":T}]`; maps (string keys
//!   only) `["null", {"type":"map","values":T}]`; array items and map values are converted at the next nesting
//!   level, so primitive items are *not* nullable while struct/array/map items are `["null", ...]` unions;
//! * boolean → boolean; byte, short, int, date → int (date = days); long, timestamp, timestamp_ntz → long
//!   (microseconds); float; double; string; binary → bytes; decimal(p, s) → fixed of `minBytesForPrecision(p)`
//!   bytes holding the big-endian two's-complement unscaled value; `void` → null. Other types (intervals,
//!   variant, maps with non-string keys) make Spark's encoder fail, so they never reach a checkpoint.
//!
//! Binary encoding (Avro 1.11 spec, "Binary Encoding"): int/long as zig-zag varints; float/double as 4/8 bytes
//! little-endian; boolean one byte; bytes/string a long length then the bytes; fixed the bytes alone; union a long
//! branch index then the branch; records their fields in order; arrays and maps as blocks (a long count, negative
//! = followed by a long byte size, the items; a zero count ends).
//!
//! Values are decoded straight into the JSON `toJSON` writes for the row Spark rebuilds from them
//! (`AvroDeserializer` then an `UnsafeProjection`), the same shape as [`crate::state::unsafe_row::decode_row`].

use crate::state::schema::{DataType, StructType};
use crate::state::unsafe_row::{base64, decimal_value, double_value, float_value, format_date, format_timestamp};
use serde_json::{Map, Value};

crate::parse_error::parse_error_type!(
    /// Why Avro bytes do not decode: the byte offset inside the Avro payload and what is wrong.
    AvroError,
    AvroFormat,
    "avro byte"
);

/// An Avro schema of the subset `toAvroTypeWithDefaults` produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AvroType {
    /// `null`.
    Null,
    /// `boolean`.
    Boolean,
    /// `int` (zig-zag varint).
    Int,
    /// `long` (zig-zag varint).
    Long,
    /// `float` (4 bytes LE).
    Float,
    /// `double` (8 bytes LE).
    Double,
    /// `string` (length-prefixed UTF-8).
    String,
    /// `bytes` (length-prefixed).
    Bytes,
    /// `fixed` of this many bytes (decimals).
    Fixed(usize),
    /// A record: its fields' types, in the order of the Spark struct's fields.
    Record(Vec<AvroType>),
    /// An array of items.
    Array(Box<AvroType>),
    /// A map with string keys.
    Map(Box<AvroType>),
    /// A union; Spark only writes `["null", T]`.
    Union(Vec<AvroType>),
}

const MAX_DEPTH: usize = 64;

/// Bytes a decimal of `precision` digits takes as Avro `fixed` (`Decimal.minBytesForPrecision`: the least n with
/// 2^(8n-1) ≥ 10^precision).
pub fn min_bytes_for_precision(precision: u8) -> usize {
    let mut n = 1usize;
    while 2f64.powi(8 * n as i32 - 1) < 10f64.powi(i32::from(precision)) {
        n += 1;
    }
    n
}

/// The Avro schema Spark writes a row of `schema` with (`SchemaConverters.toAvroTypeWithDefaults`).
///
/// Errors: a type Spark's converter rejects (intervals, variant, maps whose keys are not strings).
pub fn avro_schema(schema: &StructType) -> Result<AvroType, String> {
    record(schema, 0)
}

fn record(schema: &StructType, level: usize) -> Result<AvroType, String> {
    let mut fields = Vec::with_capacity(schema.fields.len());
    for f in &schema.fields {
        let inner = convert(&f.data_type, level + 1)?;
        let t = if f.data_type != DataType::Null && !matches!(inner, AvroType::Union(_)) {
            AvroType::Union(vec![AvroType::Null, inner])
        } else {
            inner
        };
        fields.push(t);
    }
    Ok(AvroType::Record(fields))
}

fn convert(t: &DataType, level: usize) -> Result<AvroType, String> {
    if level > MAX_DEPTH {
        return Err("schema nested more than 64 levels deep".into());
    }
    let nullable = |x: AvroType| AvroType::Union(vec![AvroType::Null, x]);
    Ok(match t {
        DataType::Struct(s) => {
            let r = record(s, level)?;
            if level > 0 {
                nullable(r)
            } else {
                r
            }
        }
        DataType::Boolean => AvroType::Boolean,
        DataType::Byte | DataType::Short | DataType::Integer | DataType::Date => AvroType::Int,
        DataType::Long | DataType::Timestamp | DataType::TimestampNtz => AvroType::Long,
        DataType::Float => AvroType::Float,
        DataType::Double => AvroType::Double,
        DataType::String => AvroType::String,
        DataType::Null => AvroType::Null,
        DataType::Decimal { precision, .. } => AvroType::Fixed(min_bytes_for_precision(*precision)),
        DataType::Binary => AvroType::Bytes,
        DataType::Array { element, .. } => nullable(AvroType::Array(Box::new(convert(element, level + 1)?))),
        DataType::Map { key, value, .. } if **key == DataType::String => {
            nullable(AvroType::Map(Box::new(convert(value, level + 1)?)))
        }
        other => {
            return Err(format!(
                "type {} has no Avro form in Spark's state encoder (it cannot be in Avro-encoded state)",
                other.simple_string()
            ))
        }
    })
}

/// A cursor over an Avro payload.
struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
    /// Items (array elements, map entries) decoded so far, against a budget that bounds zero-byte items.
    items: usize,
}

/// Most array/map items one value may hold (items of `void` type take no bytes, so the byte count alone does
/// not bound them).
const MAX_ITEMS: usize = 1 << 20;

impl<'a> Reader<'a> {
    fn err<T>(&self, at: usize, message: impl Into<String>) -> Result<T, AvroError> {
        Err(AvroError::new(at, message.into()))
    }
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], AvroError> {
        let start = self.pos;
        match self.b.get(start..start.saturating_add(n)) {
            Some(s) if start.checked_add(n).is_some() => {
                self.pos += n;
                Ok(s)
            }
            _ => self.err(start, format!("{what}: {n} bytes run past the end of the {}-byte payload", self.b.len())),
        }
    }
    fn long(&mut self, what: &str) -> Result<i64, AvroError> {
        let start = self.pos;
        let mut v: u64 = 0;
        for i in 0..10 {
            let Some(&byte) = self.b.get(self.pos) else {
                return self.err(start, format!("{what}: the payload ends inside a varint"));
            };
            self.pos += 1;
            v |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok((v >> 1) as i64 ^ -((v & 1) as i64));
            }
        }
        self.err(start, format!("{what}: varint longer than 10 bytes"))
    }
    fn int(&mut self, what: &str) -> Result<i32, AvroError> {
        let at = self.pos;
        let v = self.long(what)?;
        i32::try_from(v).or_else(|_| self.err(at, format!("{what}: {v} does not fit an Avro int")))
    }
    fn len(&mut self, what: &str) -> Result<usize, AvroError> {
        let at = self.pos;
        let n = self.long(what)?;
        if n < 0 || n as u64 > (self.b.len() - self.pos) as u64 {
            return self.err(at, format!("{what}: length {n} does not fit the {} bytes left", self.b.len() - self.pos));
        }
        Ok(n as usize)
    }
}

/// Decodes one Avro-encoded row written with the schema of `schema` into the JSON object `toJSON` writes for it
/// (null fields left out). The whole payload must be consumed.
pub fn decode_avro_row(bytes: &[u8], schema: &StructType) -> Result<Value, AvroError> {
    let t = avro_schema(schema).map_err(|m| AvroError::new(0u64, m))?;
    let mut r = Reader { b: bytes, pos: 0, items: 0 };
    let v = value(&mut r, &t, &DataType::Struct(schema.clone()), "", 0)?;
    if r.pos != bytes.len() {
        return r.err(r.pos, format!("{} bytes left after the row", bytes.len() - r.pos));
    }
    Ok(v)
}

fn field_path(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

fn value(r: &mut Reader<'_>, t: &AvroType, dt: &DataType, p: &str, depth: usize) -> Result<Value, AvroError> {
    if depth > MAX_DEPTH {
        return r.err(r.pos, "values nested more than 64 levels deep");
    }
    let what = if p.is_empty() { "row" } else { p };
    Ok(match t {
        AvroType::Union(branches) => {
            let at = r.pos;
            let i = r.long(what)?;
            let Some(b) = usize::try_from(i).ok().and_then(|i| branches.get(i)) else {
                return r.err(at, format!("{what}: union branch {i} of {}", branches.len()));
            };
            value(r, b, dt, p, depth + 1)?
        }
        AvroType::Null => Value::Null,
        AvroType::Boolean => {
            let at = r.pos;
            match r.take(1, what)?[0] {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                x => return r.err(at, format!("{what}: boolean byte {x:#04x}")),
            }
        }
        AvroType::Int => {
            let v = r.int(what)?;
            match dt {
                DataType::Date => Value::String(format_date(i64::from(v))),
                DataType::Byte => Value::from(v as i8),
                DataType::Short => Value::from(v as i16),
                _ => Value::from(v),
            }
        }
        AvroType::Long => {
            let v = r.long(what)?;
            match dt {
                DataType::Timestamp => Value::String(format_timestamp(v, true)),
                DataType::TimestampNtz => Value::String(format_timestamp(v, false)),
                _ => Value::from(v),
            }
        }
        AvroType::Float => {
            let s = r.take(4, what)?;
            float_value(f32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        }
        AvroType::Double => {
            let s = r.take(8, what)?;
            let mut w = [0u8; 8];
            w.copy_from_slice(s);
            double_value(f64::from_le_bytes(w))
        }
        AvroType::String => {
            let n = r.len(what)?;
            Value::String(String::from_utf8_lossy(r.take(n, what)?).into_owned())
        }
        AvroType::Bytes => {
            let n = r.len(what)?;
            Value::String(base64(r.take(n, what)?))
        }
        AvroType::Fixed(n) => {
            let at = r.pos;
            let s = r.take(*n, what)?;
            let DataType::Decimal { scale, .. } = dt else {
                return r.err(at, format!("{what}: fixed bytes for a non-decimal field"));
            };
            if s.is_empty() || s.len() > 16 {
                return r.err(at, format!("{what}: decimal of {} bytes (1..=16 expected)", s.len()));
            }
            let mut x: i128 = if s[0] & 0x80 != 0 { -1 } else { 0 };
            for &byte in s {
                x = (x << 8) | i128::from(byte);
            }
            decimal_value(x, *scale)
        }
        AvroType::Record(fields) => {
            let DataType::Struct(st) = dt else {
                return r.err(r.pos, format!("{what}: record for a non-struct field"));
            };
            let mut obj = Map::new();
            for (f, ft) in st.fields.iter().zip(fields) {
                let v = value(r, ft, &f.data_type, &field_path(p, &f.name), depth + 1)?;
                if !v.is_null() {
                    obj.insert(f.name.clone(), v);
                }
            }
            Value::Object(obj)
        }
        AvroType::Array(items) => {
            let DataType::Array { element, .. } = dt else {
                return r.err(r.pos, format!("{what}: array for a non-array field"));
            };
            let mut out = Vec::new();
            for_each_block(r, what, |r| {
                out.push(value(r, items, element, p, depth + 1)?);
                Ok(())
            })?;
            Value::Array(out)
        }
        AvroType::Map(values) => {
            let DataType::Map { value: vt, .. } = dt else {
                return r.err(r.pos, format!("{what}: map for a non-map field"));
            };
            let mut obj = Map::new();
            for_each_block(r, what, |r| {
                let n = r.len(what)?;
                let k = String::from_utf8_lossy(r.take(n, what)?).into_owned();
                let v = value(r, values, vt, p, depth + 1)?;
                obj.insert(k, v);
                Ok(())
            })?;
            Value::Object(obj)
        }
    })
}

/// Walks Avro array/map blocks, calling `item` once per item.
fn for_each_block(
    r: &mut Reader<'_>,
    what: &str,
    mut item: impl FnMut(&mut Reader<'_>) -> Result<(), AvroError>,
) -> Result<(), AvroError> {
    loop {
        let at = r.pos;
        let mut count = r.long(what)?;
        if count == 0 {
            return Ok(());
        }
        if count < 0 {
            count = count.checked_neg().ok_or(AvroError::new(at, format!("{what}: bad block count")))?;
            let _byte_size = r.long(what)?;
        }
        let count = count as u64;
        if count > (MAX_ITEMS - r.items) as u64 {
            return r.err(at, format!("{what}: more than {MAX_ITEMS} array/map items"));
        }
        r.items += count as usize;
        for _ in 0..count {
            item(r)?;
        }
    }
}

/// A decoded Avro value, before it is given its Spark type.
#[derive(Debug, Clone, PartialEq)]
enum Av {
    Null,
    Bool(bool),
    Long(i64),
    Float(f32),
    Double(f64),
    Bytes(Vec<u8>),
    Record(Vec<Av>),
    Array(Vec<Av>),
    Map(Vec<(Vec<u8>, Av)>),
}

fn read_av(r: &mut Reader<'_>, t: &AvroType, depth: usize) -> Result<Av, AvroError> {
    if depth > MAX_DEPTH {
        return r.err(r.pos, "values nested more than 64 levels deep");
    }
    Ok(match t {
        AvroType::Union(branches) => {
            let at = r.pos;
            let i = r.long("union")?;
            let Some(b) = usize::try_from(i).ok().and_then(|i| branches.get(i)) else {
                return r.err(at, format!("union branch {i} of {}", branches.len()));
            };
            read_av(r, b, depth + 1)?
        }
        AvroType::Null => Av::Null,
        AvroType::Boolean => {
            let at = r.pos;
            match r.take(1, "boolean")?[0] {
                0 => Av::Bool(false),
                1 => Av::Bool(true),
                x => return r.err(at, format!("boolean byte {x:#04x}")),
            }
        }
        AvroType::Int => Av::Long(i64::from(r.int("int")?)),
        AvroType::Long => Av::Long(r.long("long")?),
        AvroType::Float => {
            let s = r.take(4, "float")?;
            Av::Float(f32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        }
        AvroType::Double => {
            let s = r.take(8, "double")?;
            let mut w = [0u8; 8];
            w.copy_from_slice(s);
            Av::Double(f64::from_le_bytes(w))
        }
        AvroType::String | AvroType::Bytes => {
            let n = r.len("bytes")?;
            Av::Bytes(r.take(n, "bytes")?.to_vec())
        }
        AvroType::Fixed(n) => Av::Bytes(r.take(*n, "fixed")?.to_vec()),
        AvroType::Record(fields) => {
            let mut out = Vec::with_capacity(fields.len());
            for f in fields {
                out.push(read_av(r, f, depth + 1)?);
            }
            Av::Record(out)
        }
        AvroType::Array(items) => {
            let mut out = Vec::new();
            for_each_block(r, "array", |r| {
                out.push(read_av(r, items, depth + 1)?);
                Ok(())
            })?;
            Av::Array(out)
        }
        AvroType::Map(values) => {
            let mut out = Vec::new();
            for_each_block(r, "map", |r| {
                let n = r.len("map key")?;
                let k = r.take(n, "map key")?.to_vec();
                out.push((k, read_av(r, values, depth + 1)?));
                Ok(())
            })?;
            Av::Map(out)
        }
    })
}

fn pad8(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
}

/// The 8-byte slot bits of a fixed-length value (`UnsafeRowWriter.write` zeroes the slot, then writes the value in
/// its width), or `None` for a variable-length type.
fn fixed_bits(v: &Av, dt: &DataType) -> Result<Option<u64>, String> {
    Ok(Some(match (dt, v) {
        (DataType::Boolean, Av::Bool(b)) => u64::from(*b),
        (DataType::Byte, Av::Long(x)) => u64::from(*x as u8),
        (DataType::Short, Av::Long(x)) => u64::from(*x as u16),
        (DataType::Integer | DataType::Date, Av::Long(x)) => u64::from(*x as u32),
        (DataType::Long | DataType::Timestamp | DataType::TimestampNtz, Av::Long(x)) => *x as u64,
        (DataType::Float, Av::Float(f)) => u64::from(f.to_bits()),
        (DataType::Double, Av::Double(d)) => d.to_bits(),
        (DataType::Decimal { precision, .. }, Av::Bytes(b)) if *precision <= 18 => {
            let mut x: i64 = if b.first().is_some_and(|c| c & 0x80 != 0) { -1 } else { 0 };
            for &c in b {
                x = (x << 8) | i64::from(c);
            }
            x as u64
        }
        (DataType::Null, _) => 0,
        (
            DataType::String
            | DataType::Binary
            | DataType::Decimal { .. }
            | DataType::Struct(_)
            | DataType::Array { .. }
            | DataType::Map { .. },
            _,
        ) => return Ok(None),
        (t, v) => return Err(format!("Avro value {v:?} for a {} field", t.simple_string())),
    }))
}

/// Appends the variable-length part of `v` to `out` (whose start is the enclosing row/array) and returns the
/// `offset << 32 | size` slot, as `UnsafeRowWriter` / `UnsafeArrayWriter` write it.
fn write_var(out: &mut Vec<u8>, base: usize, v: &Av, dt: &DataType, depth: usize) -> Result<u64, String> {
    if depth > MAX_DEPTH {
        return Err("values nested more than 64 levels deep".into());
    }
    let off = (out.len() - base) as u64;
    let size = match (dt, v) {
        (DataType::String | DataType::Binary, Av::Bytes(b)) => {
            out.extend_from_slice(b);
            pad8(out);
            b.len()
        }
        (DataType::Decimal { .. }, Av::Bytes(b)) => {
            // BigInteger.toByteArray: the minimal big-endian two's complement, in a 16-byte zeroed region.
            let mut m: &[u8] = b;
            while m.len() > 1 && ((m[0] == 0 && m[1] & 0x80 == 0) || (m[0] == 0xff && m[1] & 0x80 != 0)) {
                m = &m[1..];
            }
            if m.len() > 16 {
                return Err("decimal wider than 16 bytes".into());
            }
            let at = out.len();
            out.resize(at + 16, 0);
            out[at..at + m.len()].copy_from_slice(m);
            m.len()
        }
        (DataType::Struct(st), Av::Record(fields)) => {
            let row = unsafe_row_of(fields, st, depth + 1)?;
            out.extend_from_slice(&row);
            row.len()
        }
        (DataType::Array { element, .. }, Av::Array(items)) => {
            let a = unsafe_array_of(items, element, depth + 1)?;
            out.extend_from_slice(&a);
            a.len()
        }
        (DataType::Map { key, value, .. }, Av::Map(entries)) => {
            let keys: Vec<Av> = entries.iter().map(|(k, _)| Av::Bytes(k.clone())).collect();
            let vals: Vec<Av> = entries.iter().map(|(_, v)| v.clone()).collect();
            let ka = unsafe_array_of(&keys, key, depth + 1)?;
            let va = unsafe_array_of(&vals, value, depth + 1)?;
            out.extend_from_slice(&(ka.len() as u64).to_le_bytes());
            out.extend_from_slice(&ka);
            out.extend_from_slice(&va);
            8 + ka.len() + va.len()
        }
        (t, v) => return Err(format!("Avro value {v:?} for a {} field", t.simple_string())),
    };
    Ok((off << 32) | size as u64)
}

fn unsafe_row_of(fields: &[Av], st: &StructType, depth: usize) -> Result<Vec<u8>, String> {
    let n = st.fields.len();
    let w = n.div_ceil(64) * 8;
    let mut out = vec![0u8; w + 8 * n];
    for (i, (f, v)) in st.fields.iter().zip(fields).enumerate() {
        let slot = w + 8 * i;
        let bits = if matches!(v, Av::Null) || f.data_type == DataType::Null {
            out[(i / 64) * 8 + (i % 64) / 8] |= 1 << (i % 8);
            // A null decimal wider than 18 digits still reserves its 16 bytes (`write(i, null, p, s)`).
            if matches!(f.data_type, DataType::Decimal { precision, .. } if precision > 18) {
                let off = out.len() as u64;
                out.resize(out.len() + 16, 0);
                off << 32
            } else {
                0
            }
        } else {
            match fixed_bits(v, &f.data_type)? {
                Some(b) => b,
                None => write_var(&mut out, 0, v, &f.data_type, depth)?,
            }
        };
        out[slot..slot + 8].copy_from_slice(&bits.to_le_bytes());
    }
    Ok(out)
}

/// `UnsafeArrayWriter`: element count, null bits, elements of `element_width` bytes (rounded up to 8), then the
/// variable-length elements.
fn unsafe_array_of(items: &[Av], et: &DataType, depth: usize) -> Result<Vec<u8>, String> {
    let n = items.len();
    let width = match et {
        DataType::Boolean | DataType::Byte => 1,
        DataType::Short => 2,
        DataType::Integer | DataType::Float | DataType::Date => 4,
        _ => 8,
    };
    let header = 8 + n.div_ceil(64) * 8;
    let mut out = vec![0u8; header + (n * width).div_ceil(8) * 8];
    out[..8].copy_from_slice(&(n as u64).to_le_bytes());
    for (i, v) in items.iter().enumerate() {
        let at = header + i * width;
        if matches!(v, Av::Null) {
            out[8 + i / 8] |= 1 << (i % 8);
            continue;
        }
        let bits = match fixed_bits(v, et)? {
            Some(b) => b,
            None => write_var(&mut out, 0, v, et, depth)?,
        };
        out[at..at + width].copy_from_slice(&bits.to_le_bytes()[..width]);
    }
    Ok(out)
}

/// Decodes one Avro-encoded row into the UnsafeRow Spark rebuilds from it (`AvroDeserializer` then
/// `UnsafeProjection`, written as `UnsafeRowWriter` does), e.g. to name a struct map key by its
/// `UnsafeRow.toString` as Spark's JSON writer does.
pub fn decode_avro_to_unsafe_row(bytes: &[u8], schema: &StructType) -> Result<Vec<u8>, AvroError> {
    let t = avro_schema(schema).map_err(|m| AvroError::new(0u64, m))?;
    let mut r = Reader { b: bytes, pos: 0, items: 0 };
    let v = read_av(&mut r, &t, 0)?;
    if r.pos != bytes.len() {
        return r.err(r.pos, format!("{} bytes left after the row", bytes.len() - r.pos));
    }
    let Av::Record(fields) = v else { return r.err(0, "the row is not a record") };
    unsafe_row_of(&fields, schema, 0).map_err(|m| AvroError::new(0u64, m))
}

/// Projects a row decoded with the writer's schema onto the reader's (Avro schema resolution as Spark's
/// `GenericDatumReader(writerSchema, readerSchema)` does it for evolved state): fields matched by name, fields the
/// writer lacks become null (left out), nested structs resolved the same way.
pub fn resolve(v: &Value, reader: &StructType) -> Value {
    let Value::Object(obj) = v else { return v.clone() };
    let mut out = Map::new();
    for f in &reader.fields {
        let Some(x) = obj.get(&f.name) else { continue };
        let x = match (&f.data_type, x) {
            (DataType::Struct(s), Value::Object(_)) => resolve(x, s),
            _ => x.clone(),
        };
        out.insert(f.name.clone(), x);
    }
    Value::Object(out)
}

#[cfg(test)]
#[path = "avro_tests.rs"]
mod avro_tests;
#[cfg(test)]
pub(crate) use avro_tests::write;
