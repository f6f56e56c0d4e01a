//! UnsafeRows written straight as the JSON text Spark's `toJSON` writes (the bulk path of `state`): the same
//! text as [`super::unsafe_row::decode_row`]'s values serialized, but for decimals, doubles and floats, written
//! as Spark writes them (Java's `BigDecimal.toString`: `3.00`, every digit, and `Double.toString`: `1.0E-300`,
//! where the values keep a double or a string of the same value), without building them. [`RowJsonWriter`] compiles a schema once (field names escaped, null-typed
//! fields dropped) and keeps the date of the last timestamp, for millions of rows of one store.

use super::schema::{DataType, StructType};
use super::unsafe_row::{
    array_len, bitset_bytes, decimal_unscaled, element_width, is_fixed_length, map_arrays, map_keys, var_slice,
    var_value, RowBudget, RowError, Slice, MAX_NESTING,
};
use super::value_text::*;
use serde_json::Value;

/// Writes one UnsafeRow as the JSON text Spark's `toJSON` writes (fields in schema order, null fields left out),
/// appending to `out`, without building a [`Value`] (several times faster, for bulk output). When it succeeds the
/// text is exactly `decode_row(bytes, schema)?.to_string()`, but for two things written as Spark writes them:
/// numbers, as Java's `BigDecimal.toString` (`3.00` where the value is the double 3.0) and `Double.toString`
/// (`1.0E-300` where serde writes `1e-300`), and a struct with two
/// fields of one name, whose every field is kept ([`decode_row`](super::unsafe_row::decode_row)'s values keep
/// one). It fails on every row [`decode_row`](super::unsafe_row::decode_row) fails on (possibly with another
/// message: take [`decode_row`](super::unsafe_row::decode_row)'s for errors). On error `out` may hold a partial
/// row.
pub fn write_row_json(bytes: &[u8], schema: &StructType, out: &mut String) -> Result<(), RowError> {
    let budget = RowBudget::for_row(bytes.len());
    write_struct(Slice::new(bytes, &budget), schema, 0, "", out)
}

/// `v` in decimal, as `Display` writes it, without the formatting machinery.
pub(crate) fn push_int(out: &mut String, v: i64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut n = v.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.push('-');
    }
    for &d in &buf[i..] {
        out.push(char::from(d));
    }
}

fn write_json_str(s: &str, out: &mut String) {
    out.push('"');
    // Only ASCII bytes are escaped (`"`, `\\`, controls), so the text between them is copied as it is.
    let b = s.as_bytes();
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        let esc: &str = match c {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..0x20 => "",
            _ => continue,
        };
        out.push_str(s.get(start..i).unwrap_or(""));
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(c >> 4)]));
            out.push(char::from(HEX[usize::from(c & 15)]));
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(s.get(start..).unwrap_or(""));
    out.push('"');
}

/// A decimal as a JSON number, as Spark's `toJSON` writes it, never rounded: Java's `BigDecimal.toString`
/// ([`java_decimal_string`]): `3.00` of a decimal(5,2), `100000000000000000003.0000000007` and `0E-10` of a
/// decimal(38,10). The Value path ([`decimal_value`]) has the same value, as a double when one holds it exactly,
/// else as a string of its digits.
fn write_decimal(unscaled: i128, scale: u8, out: &mut String) {
    out.push_str(&java_decimal_string(unscaled, scale));
}

fn write_value(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => write_json_str(s, out),
        other => out.push_str(&other.to_string()),
    }
}

fn write_struct(
    r: Slice<'_>,
    schema: &StructType,
    depth: usize,
    prefix: &str,
    out: &mut String,
) -> Result<(), RowError> {
    if depth > MAX_NESTING {
        return Err(r.err(0, "values nested more than 64 levels deep"));
    }
    let n = schema.fields.len();
    let w = bitset_bytes(n);
    if r.b.len() < w + n * 8 {
        return Err(r.err(0, format!("{prefix}: row of {} bytes is shorter than its fixed part", r.b.len())));
    }
    r.charge(0, w + n * 8)?;
    out.push('{');
    let mut first = true;
    for (i, f) in schema.fields.iter().enumerate() {
        if r.is_null(0, i)? || f.data_type == DataType::Null {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        write_json_str(&f.name, out);
        out.push(':');
        let at = w + i * 8;
        let raw = r.u64(at, &f.name)?;
        if is_fixed_length(&f.data_type) {
            write_fixed(raw, &f.data_type, out);
        } else {
            // Errors name the field only (no path built per row): callers take `decode_row`'s error.
            let v = var_slice(r, at, raw, &f.name)?;
            write_var(v, &f.data_type, depth, &f.name, out)?;
        }
    }
    out.push('}');
    Ok(())
}

fn write_fixed(raw: u64, t: &DataType, out: &mut String) {
    match t {
        DataType::Byte => push_int(out, i64::from(raw as u8 as i8)),
        DataType::Short => push_int(out, i64::from(raw as u16 as i16)),
        DataType::Integer => push_int(out, i64::from(raw as u32 as i32)),
        DataType::Long => push_int(out, raw as i64),
        DataType::Boolean => out.push_str(if raw as u8 != 0 { "true" } else { "false" }),
        DataType::Timestamp => {
            out.push('"');
            push_timestamp(raw as i64, true, out);
            out.push('"');
        }
        DataType::TimestampNtz => {
            out.push('"');
            push_timestamp(raw as i64, false, out);
            out.push('"');
        }
        // A JSON number, every digit kept (see `write_decimal`).
        DataType::Decimal { scale, .. } => write_decimal(i128::from(raw as i64), *scale, out),
        // Java's Double.toString / Float.toString, as Spark's toJSON (`1.0E-300`); NaN and infinities quoted.
        DataType::Double if f64::from_bits(raw).is_finite() => out.push_str(&java_double_string(f64::from_bits(raw))),
        DataType::Float if f32::from_bits(raw as u32).is_finite() => {
            out.push_str(&java_float_string(f32::from_bits(raw as u32)));
        }
        other => {
            // float, double, date, intervals: through the Value path (rarer types).
            let v = match other {
                DataType::Float => float_value(f32::from_bits(raw as u32)),
                DataType::Double => double_value(f64::from_bits(raw)),
                DataType::Date => Value::String(format_date(i64::from(raw as u32 as i32))),
                DataType::YearMonthInterval { start, end } => {
                    Value::String(year_month_interval_string(raw as u32 as i32, *start, *end))
                }
                DataType::DayTimeInterval { start, end } => {
                    Value::String(day_time_interval_string(raw as i64, *start, *end))
                }
                _ => Value::Null,
            };
            write_value(&v, out);
        }
    }
}

fn write_var(v: Slice<'_>, t: &DataType, depth: usize, p: &str, out: &mut String) -> Result<(), RowError> {
    match t {
        DataType::String => {
            v.charge(0, v.b.len())?;
            match std::str::from_utf8(v.b) {
                Ok(text) => write_json_str(text, out),
                Err(_) => write_json_str(&String::from_utf8_lossy(v.b), out),
            }
        }
        DataType::Decimal { scale, .. } => {
            v.charge(0, v.b.len())?;
            write_decimal(decimal_unscaled(v, p)?, *scale, out)
        }
        DataType::Struct(s) => write_struct(v, s, depth + 1, p, out)?,
        DataType::Array { element, .. } => {
            let n = elements(v, element, depth, p)?;
            out.push('[');
            for i in 0..n {
                if i > 0 {
                    out.push(',');
                }
                write_element(v, i, n, element, depth, p, out)?;
            }
            out.push(']');
        }
        // `JacksonGenerator.writeMapData`: an object of the keys' text (see `map_keys`) and the values, in the
        // map's order (real Spark 4.1.4: `{"0.00":1.0E-300}`, `{"d":0E-10}`).
        DataType::Map { key, value, .. } => {
            if depth + 1 > MAX_NESTING {
                return Err(v.err(0, "values nested more than 64 levels deep"));
            }
            let (ks, vs) = map_arrays(v, p)?;
            let keys = map_keys(ks, key, depth + 1, p)?;
            let n = elements(vs, value, depth, p)?;
            if keys.len() != n {
                return Err(v.err(0, format!("{p}: map with {} keys but {n} values", keys.len())));
            }
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_str(k, out);
                out.push(':');
                write_element(vs, i, n, value, depth, p, out)?;
            }
            out.push('}');
        }
        // Binary, intervals, variants: through the Value path.
        other => write_value(&var_value(v, other, depth, p)?, out),
    }
    Ok(())
}

/// The element count of an UnsafeArrayData of `element`s nested at `depth + 1` (the nesting bound of
/// `array_values`), its header and slots charged.
fn elements(v: Slice<'_>, element: &DataType, depth: usize, p: &str) -> Result<usize, RowError> {
    if depth + 1 > MAX_NESTING {
        return Err(v.err(0, "values nested more than 64 levels deep"));
    }
    let n = array_len(v, element, p)?;
    v.charge(0, 8 + bitset_bytes(n) + n * element_width(element))?;
    Ok(n)
}

/// Element `i` of an UnsafeArrayData of `n` [`elements`]: `null`, or its value.
fn write_element(
    v: Slice<'_>,
    i: usize,
    n: usize,
    element: &DataType,
    depth: usize,
    p: &str,
    out: &mut String,
) -> Result<(), RowError> {
    if v.is_null(8, i)? {
        out.push_str("null");
        return Ok(());
    }
    let width = element_width(element);
    let at = 8 + bitset_bytes(n) + i * width;
    let s = v.bytes(at, width, p)?;
    let mut w = [0u8; 8];
    w[..width].copy_from_slice(s);
    let raw = u64::from_le_bytes(w);
    if is_fixed_length(element) {
        write_fixed(raw, element, out);
        Ok(())
    } else {
        write_var(var_slice(v, at, raw, p)?, element, depth + 1, p, out)
    }
}

/// A schema compiled for [`write_row_json`]'s text: every field's `"name":` escaped once, null-typed fields
/// dropped, nested structs compiled too, and each timestamp field's last text kept (rows of a store share
/// windows). Writes exactly [`write_row_json`]'s text for each row (and fails where it fails); built once per
/// store.
#[derive(Debug, Clone)]
pub struct RowJsonWriter {
    root: StructPlan,
}

#[derive(Debug, Clone)]
struct StructPlan {
    /// Fields of the schema (all of them: the null bitset and slots count every field).
    width: usize,
    /// Bytes of the null bitset.
    bitset: usize,
    /// The fields written (not of type null), in schema order.
    fields: Vec<FieldPlan>,
}

#[derive(Debug, Clone)]
struct FieldPlan {
    /// Position in the schema.
    index: usize,
    /// The field name as JSON text, with the colon: `"name":`.
    key: String,
    /// The field name (errors).
    name: String,
    data_type: DataType,
    /// The compiled struct, for struct fields.
    nested: Option<Box<StructPlan>>,
    /// Timestamp fields: the milliseconds of the last value written and its text.
    last: (i64, String),
}

impl StructPlan {
    fn new(schema: &StructType) -> Self {
        let fields = schema
            .fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.data_type != DataType::Null)
            .map(|(index, f)| {
                let mut key = String::new();
                write_json_str(&f.name, &mut key);
                key.push(':');
                let nested = match &f.data_type {
                    DataType::Struct(s) => Some(Box::new(StructPlan::new(s))),
                    _ => None,
                };
                let last = (i64::MIN, String::new());
                FieldPlan { index, key, name: f.name.clone(), data_type: f.data_type.clone(), nested, last }
            })
            .collect();
        StructPlan { width: schema.fields.len(), bitset: bitset_bytes(schema.fields.len()), fields }
    }
}

impl RowJsonWriter {
    /// Compiles `schema`.
    pub fn new(schema: &StructType) -> Self {
        RowJsonWriter { root: StructPlan::new(schema) }
    }

    /// Appends the row's JSON text to `out`: exactly what [`write_row_json`] appends (errors as it: take
    /// `decode_row`'s). On error `out` may hold a partial row.
    pub fn write(&mut self, bytes: &[u8], out: &mut String) -> Result<(), RowError> {
        let budget = RowBudget::for_row(bytes.len());
        write_planned(Slice::new(bytes, &budget), &mut self.root, 0, out)
    }
}

fn write_planned(r: Slice<'_>, plan: &mut StructPlan, depth: usize, out: &mut String) -> Result<(), RowError> {
    if depth > MAX_NESTING {
        return Err(r.err(0, "values nested more than 64 levels deep"));
    }
    if r.b.len() < plan.bitset + plan.width * 8 {
        return Err(r.err(0, format!("row of {} bytes is shorter than its fixed part", r.b.len())));
    }
    r.charge(0, plan.bitset + plan.width * 8)?;
    out.push('{');
    let mut first = true;
    for f in &mut plan.fields {
        if r.is_null(0, f.index)? {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&f.key);
        let at = plan.bitset + f.index * 8;
        let raw = r.u64(at, &f.name)?;
        match (&f.data_type, &mut f.nested) {
            (DataType::Timestamp, _) | (DataType::TimestampNtz, _) => {
                let ms = (raw as i64).div_euclid(1000);
                if f.last.0 != ms || f.last.1.is_empty() {
                    f.last.0 = ms;
                    f.last.1.clear();
                    push_timestamp(raw as i64, f.data_type == DataType::Timestamp, &mut f.last.1);
                }
                out.push('"');
                out.push_str(&f.last.1);
                out.push('"');
            }
            (t, _) if is_fixed_length(t) => write_fixed(raw, t, out),
            (_, Some(nested)) => write_planned(var_slice(r, at, raw, &f.name)?, nested, depth + 1, out)?,
            (t, None) => write_var(var_slice(r, at, raw, &f.name)?, t, depth, &f.name, out)?,
        }
    }
    out.push('}');
    Ok(())
}
