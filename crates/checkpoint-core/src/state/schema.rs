//! State schemas (FORMATS.md §10): Spark's `DataType.json` (StructType JSON) as a typed schema, the binary schema
//! file v1/v2 (`state/<op>/0/[<store>/]_metadata/schema`) and the v3 file of transformWithState
//! (`state/<op>/_stateSchema/<store>/<batch>_<uuid>`).
//!
//! Mirrors `SchemaHelper.scala` (sql/core/.../execution/streaming/state/) and `DataType.scala`
//! (sql/api/src/main/scala/org/apache/spark/sql/types/).

use serde_json::Value;

/// A Spark SQL data type, as far as a state row can hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataType {
    /// `void` / `null`: always null.
    Null,
    /// `boolean`.
    Boolean,
    /// `byte` (tinyint).
    Byte,
    /// `short` (smallint).
    Short,
    /// `integer`.
    Integer,
    /// `long` (bigint).
    Long,
    /// `float`.
    Float,
    /// `double`.
    Double,
    /// `decimal(precision, scale)`; precision ≤ 18 is stored compact (unscaled long in the slot).
    Decimal {
        /// Total digits, 1..=38.
        precision: u8,
        /// Digits after the point.
        scale: u8,
    },
    /// `string` (also `char(n)`/`varchar(n)`, and 4.0's `string collate X`).
    String,
    /// `binary`.
    Binary,
    /// `date`: days since 1970-01-01 (int).
    Date,
    /// `timestamp`: microseconds since the epoch, an instant (long).
    Timestamp,
    /// `timestamp_ntz`: microseconds since the epoch, local date-time without zone (long).
    TimestampNtz,
    /// `interval` (CalendarInterval: months int, days int, microseconds long).
    CalendarInterval,
    /// `interval year to month` and its sub-ranges; fields 0 = YEAR, 1 = MONTH. Stored as int months.
    YearMonthInterval {
        /// First field.
        start: u8,
        /// Last field.
        end: u8,
    },
    /// `interval day to second` and its sub-ranges; fields 0 = DAY, 1 = HOUR, 2 = MINUTE, 3 = SECOND. Stored as
    /// long microseconds.
    DayTimeInterval {
        /// First field.
        start: u8,
        /// Last field.
        end: u8,
    },
    /// A nested struct.
    Struct(StructType),
    /// An array.
    Array {
        /// Element type.
        element: Box<DataType>,
        /// Whether elements may be null.
        contains_null: bool,
    },
    /// A map.
    Map {
        /// Key type.
        key: Box<DataType>,
        /// Value type.
        value: Box<DataType>,
        /// Whether values may be null.
        value_contains_null: bool,
    },
    /// `variant` (4.0+); decoded as its two binaries.
    Variant,
}

/// One field of a [`StructType`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructField {
    /// Column name.
    pub name: String,
    /// Column type.
    pub data_type: DataType,
    /// Whether the column may be null.
    pub nullable: bool,
    /// The field's `metadata` object as stored (e.g. `spark.watermarkDelayMs`).
    pub metadata: Value,
}

/// A struct type: the schema of a state key or value row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StructType {
    /// Fields in order.
    pub fields: Vec<StructField>,
}

crate::parse_error::parse_error_type!(
    /// A schema that cannot be read: the file, the byte offset (binary files) and why.
    SchemaError,
    SchemaFileFormat,
    "byte"
);

fn serr(offset: usize, message: impl Into<String>) -> SchemaError {
    SchemaError::new(offset, message.into())
}

const MAX_DEPTH: usize = 64;

impl StructType {
    /// Parses Spark's `StructType.json` (`{"type":"struct","fields":[...]}`).
    pub fn from_json_str(json: &str) -> Result<StructType, SchemaError> {
        let v: Value = serde_json::from_str(json).map_err(|e| serr(0, format!("schema JSON does not parse: {e}")))?;
        Self::from_json(&v)
    }

    /// Parses a StructType JSON value.
    pub fn from_json(v: &Value) -> Result<StructType, SchemaError> {
        match DataType::from_json_depth(v, 0)? {
            DataType::Struct(s) => Ok(s),
            other => Err(serr(0, format!("expected a struct schema, found {other:?}"))),
        }
    }

    /// Spark's `simpleString`-like one-line form, e.g. `struct<k:int,v:string>`.
    pub fn simple_string(&self) -> String {
        let parts: Vec<String> =
            self.fields.iter().map(|f| format!("{}:{}", f.name, f.data_type.simple_string())).collect();
        format!("struct<{}>", parts.join(","))
    }
}

impl DataType {
    /// Parses a type in `DataType.json` form: a type name string or an object for struct/array/map/udt.
    pub fn from_json(v: &Value) -> Result<DataType, SchemaError> {
        Self::from_json_depth(v, 0)
    }

    fn from_json_depth(v: &Value, depth: usize) -> Result<DataType, SchemaError> {
        if depth > MAX_DEPTH {
            return Err(serr(0, "schema nested too deeply"));
        }
        match v {
            Value::String(s) => parse_type_name(s),
            Value::Object(o) => match o.get("type").and_then(Value::as_str) {
                Some("struct") => {
                    let fields =
                        o.get("fields").and_then(Value::as_array).ok_or_else(|| serr(0, "struct without fields"))?;
                    let mut out = Vec::with_capacity(fields.len());
                    for f in fields {
                        let name =
                            f.get("name").and_then(Value::as_str).ok_or_else(|| serr(0, "field without name"))?;
                        let t = f.get("type").ok_or_else(|| serr(0, format!("field {name} without type")))?;
                        out.push(StructField {
                            name: name.to_string(),
                            data_type: Self::from_json_depth(t, depth + 1)?,
                            nullable: f.get("nullable").and_then(Value::as_bool).unwrap_or(true),
                            metadata: f.get("metadata").cloned().unwrap_or(Value::Object(Default::default())),
                        });
                    }
                    Ok(DataType::Struct(StructType { fields: out }))
                }
                Some("array") => Ok(DataType::Array {
                    element: Box::new(Self::from_json_depth(
                        o.get("elementType").ok_or_else(|| serr(0, "array without elementType"))?,
                        depth + 1,
                    )?),
                    contains_null: o.get("containsNull").and_then(Value::as_bool).unwrap_or(true),
                }),
                Some("map") => Ok(DataType::Map {
                    key: Box::new(Self::from_json_depth(
                        o.get("keyType").ok_or_else(|| serr(0, "map without keyType"))?,
                        depth + 1,
                    )?),
                    value: Box::new(Self::from_json_depth(
                        o.get("valueType").ok_or_else(|| serr(0, "map without valueType"))?,
                        depth + 1,
                    )?),
                    value_contains_null: o.get("valueContainsNull").and_then(Value::as_bool).unwrap_or(true),
                }),
                Some("udt") => {
                    // A user-defined type is stored as its sqlType.
                    let sql = o.get("sqlType").ok_or_else(|| serr(0, "udt without sqlType"))?;
                    Self::from_json_depth(sql, depth + 1)
                }
                other => Err(serr(0, format!("unknown complex type {other:?}"))),
            },
            _ => Err(serr(0, format!("a data type must be a string or an object, found {v}"))),
        }
    }

    /// Short type name as Spark's `simpleString` prints it (`int`, `bigint`, `decimal(10,2)`, `array<string>`…).
    pub fn simple_string(&self) -> String {
        match self {
            DataType::Null => "void".into(),
            DataType::Boolean => "boolean".into(),
            DataType::Byte => "tinyint".into(),
            DataType::Short => "smallint".into(),
            DataType::Integer => "int".into(),
            DataType::Long => "bigint".into(),
            DataType::Float => "float".into(),
            DataType::Double => "double".into(),
            DataType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
            DataType::String => "string".into(),
            DataType::Binary => "binary".into(),
            DataType::Date => "date".into(),
            DataType::Timestamp => "timestamp".into(),
            DataType::TimestampNtz => "timestamp_ntz".into(),
            DataType::CalendarInterval => "interval".into(),
            DataType::YearMonthInterval { start, end } => interval_name(&["year", "month"], *start, *end),
            DataType::DayTimeInterval { start, end } => {
                interval_name(&["day", "hour", "minute", "second"], *start, *end)
            }
            DataType::Struct(s) => s.simple_string(),
            DataType::Array { element, .. } => format!("array<{}>", element.simple_string()),
            DataType::Map { key, value, .. } => format!("map<{},{}>", key.simple_string(), value.simple_string()),
            DataType::Variant => "variant".into(),
        }
    }
}

fn interval_name(units: &[&str], start: u8, end: u8) -> String {
    let s = units.get(start as usize).copied().unwrap_or("?");
    let e = units.get(end as usize).copied().unwrap_or("?");
    if start == end {
        format!("interval {s}")
    } else {
        format!("interval {s} to {e}")
    }
}

fn parse_type_name(s: &str) -> Result<DataType, SchemaError> {
    let t = s.trim();
    let simple = match t {
        "null" | "void" => Some(DataType::Null),
        "boolean" => Some(DataType::Boolean),
        "byte" | "tinyint" => Some(DataType::Byte),
        "short" | "smallint" => Some(DataType::Short),
        "integer" | "int" => Some(DataType::Integer),
        "long" | "bigint" => Some(DataType::Long),
        "float" | "real" => Some(DataType::Float),
        "double" => Some(DataType::Double),
        "string" => Some(DataType::String),
        "binary" => Some(DataType::Binary),
        "date" => Some(DataType::Date),
        "timestamp" | "timestamp_ltz" => Some(DataType::Timestamp),
        "timestamp_ntz" => Some(DataType::TimestampNtz),
        "interval" => Some(DataType::CalendarInterval),
        "decimal" => Some(DataType::Decimal { precision: 10, scale: 0 }),
        "variant" => Some(DataType::Variant),
        _ => None,
    };
    if let Some(d) = simple {
        return Ok(d);
    }
    if let Some(rest) = t.strip_prefix("decimal(").and_then(|r| r.strip_suffix(')')) {
        let mut it = rest.split(',').map(|x| x.trim().parse::<u8>());
        if let (Some(Ok(p)), Some(Ok(sc)), None) = (it.next(), it.next(), it.next()) {
            if (1..=38).contains(&p) && sc <= p {
                return Ok(DataType::Decimal { precision: p, scale: sc });
            }
        }
        return Err(serr(0, format!("bad decimal type {t:?}")));
    }
    if t.starts_with("string collate ") || t.starts_with("char(") || t.starts_with("varchar(") {
        return Ok(DataType::String);
    }
    if let Some(rest) = t.strip_prefix("interval ") {
        let ym = ["year", "month"];
        let dt = ["day", "hour", "minute", "second"];
        let (a, b) = match rest.split_once(" to ") {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (rest.trim(), rest.trim()),
        };
        let pos = |units: &[&str], u: &str| units.iter().position(|x| *x == u).map(|p| p as u8);
        if let (Some(s), Some(e)) = (pos(&ym, a), pos(&ym, b)) {
            if s <= e {
                return Ok(DataType::YearMonthInterval { start: s, end: e });
            }
        }
        if let (Some(s), Some(e)) = (pos(&dt, a), pos(&dt, b)) {
            if s <= e {
                return Ok(DataType::DayTimeInterval { start: s, end: e });
            }
        }
    }
    Err(serr(0, format!("unknown data type {t:?}")))
}

/// A reader of Java `DataInputStream` primitives over a byte slice, with offsets for errors.
pub(crate) struct JavaReader<'a> {
    pub(crate) b: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> JavaReader<'a> {
    pub(crate) fn new(b: &'a [u8]) -> Self {
        JavaReader { b, pos: 0 }
    }
    pub(crate) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], SchemaError> {
        let s = self.b.get(self.pos..self.pos.saturating_add(n)).ok_or_else(|| {
            serr(
                self.pos,
                format!(
                    "file ends inside {what} ({n} bytes needed, {} left)",
                    self.b.len() - self.pos.min(self.b.len())
                ),
            )
        })?;
        self.pos += n;
        Ok(s)
    }
    pub(crate) fn i32(&mut self, what: &str) -> Result<i32, SchemaError> {
        let s = self.take(4, what)?;
        Ok(i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
    pub(crate) fn u16(&mut self, what: &str) -> Result<u16, SchemaError> {
        let s = self.take(2, what)?;
        Ok(u16::from_be_bytes([s[0], s[1]]))
    }
    /// `DataInput.readUTF`: u16 length + modified UTF-8.
    pub(crate) fn utf(&mut self, what: &str) -> Result<String, SchemaError> {
        let at = self.pos;
        let n = self.u16(what)? as usize;
        let s = self.take(n, what)?;
        decode_modified_utf8(s).map_err(|i| serr(at + 2 + i, format!("{what}: malformed modified UTF-8")))
    }
    /// Spark's `writeJsonSchema`: int32 number of chunks, then that many `writeUTF` chunks.
    pub(crate) fn chunks(&mut self, what: &str) -> Result<String, SchemaError> {
        let at = self.pos;
        let n = self.i32(what)?;
        // Each chunk takes at least 2 bytes; more chunks than that is garbage, not an allocation.
        if n < 0 || n as usize > (self.b.len() - self.pos) / 2 + 1 {
            return Err(serr(at, format!("{what}: impossible number of chunks {n}")));
        }
        let mut s = String::new();
        for _ in 0..n {
            s.push_str(&self.utf(what)?);
        }
        Ok(s)
    }
}

/// Decodes Java's modified UTF-8 (`DataOutput.writeUTF`): like UTF-8 but NUL is `C0 80` and supplementary
/// characters are surrogate pairs of 3 bytes each. Err carries the byte index of the bad sequence.
pub(crate) fn decode_modified_utf8(b: &[u8]) -> Result<String, usize> {
    if let Ok(s) = std::str::from_utf8(b) {
        return Ok(s.to_string());
    }
    let mut units: Vec<u16> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            units.push(u16::from(c));
            i += 1;
        } else if c & 0xE0 == 0xC0 {
            let c2 = *b.get(i + 1).ok_or(i)?;
            if c2 & 0xC0 != 0x80 {
                return Err(i);
            }
            units.push((u16::from(c & 0x1F) << 6) | u16::from(c2 & 0x3F));
            i += 2;
        } else if c & 0xF0 == 0xE0 {
            let (c2, c3) = (*b.get(i + 1).ok_or(i)?, *b.get(i + 2).ok_or(i)?);
            if c2 & 0xC0 != 0x80 || c3 & 0xC0 != 0x80 {
                return Err(i);
            }
            units.push((u16::from(c & 0x0F) << 12) | (u16::from(c2 & 0x3F) << 6) | u16::from(c3 & 0x3F));
            i += 3;
        } else {
            return Err(i);
        }
    }
    Ok(String::from_utf16_lossy(&units))
}

/// A binary schema file v1/v2 (`state/<op>/0/[<store>/]_metadata/schema`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaFile {
    /// 1 or 2 (the `writeUTF("v1")` / `"v2"` header).
    pub version: u8,
    /// Key row schema.
    pub key: StructType,
    /// Value row schema.
    pub value: StructType,
    /// Key schema JSON exactly as stored.
    pub key_json: String,
    /// Value schema JSON exactly as stored.
    pub value_json: String,
}

/// Parses a v1/v2 schema file (FORMATS.md §10.1). Errors name the byte offset.
pub fn parse_schema_file(bytes: &[u8]) -> Result<SchemaFile, SchemaError> {
    let mut r = JavaReader::new(bytes);
    let v = r.utf("version header")?;
    let (version, key_json, value_json) = match v.as_str() {
        "v1" => (1, r.utf("key schema")?, r.utf("value schema")?),
        "v2" => (2, r.chunks("key schema")?, r.chunks("value schema")?),
        other => return Err(serr(0, format!("unsupported schema file version {other:?} (expected v1 or v2)"))),
    };
    let key =
        StructType::from_json_str(&key_json).map_err(|e| serr(2 + v.len(), format!("key schema: {}", e.message)))?;
    let value = StructType::from_json_str(&value_json)
        .map_err(|e| serr(2 + v.len(), format!("value schema: {}", e.message)))?;
    Ok(SchemaFile { version, key, value, key_json, value_json })
}

/// Where and how Spark's own reading of a v1/v2 schema file stops (`StateSchemaCompatibilityChecker.readSchemaFile`:
/// `DataInputStream.readUTF` of the version, `SchemaHelper.SchemaReader` for it, `StructType.fromString` of each
/// schema), as opposed to [`parse_schema_file`], which also refuses what Spark would read (a type name this
/// reader does not know).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaReadFault {
    /// Byte offset where Spark's read stops (the start of the value it cannot read).
    pub offset: u64,
    /// What stops it.
    pub kind: SchemaReadFaultKind,
}

/// What stops Spark's read of a v1/v2 schema file ([`SchemaReadFault`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaReadFaultKind {
    /// The file ends inside a length, a count or a string: `java.io.EOFException` (an empty or cut file).
    EndOfFile,
    /// A `writeUTF` string holds bytes that are not modified UTF-8: `java.io.UTFDataFormatException`.
    NotModifiedUtf8,
    /// The version string read first is no version 1 or 2 ([`java_version`]; Spark's
    /// `MetadataVersionUtil.validateVersion` decides, by release, what it makes of it).
    Version(String),
    /// A key or value schema string that is not a JSON struct type (`StructType.fromString` fails).
    Json,
}

/// How Spark's read of the v1/v2 schema file `bytes` fails, or `None` when it reads both schemas (their JSON
/// parses and is a struct: what Spark's `DataType.fromJson` makes of its type names is not judged here). A schema
/// nested deeper than this reader parses is no fault ([`spark_read`] says it is not verified).
pub fn spark_read_fault(bytes: &[u8]) -> Option<SchemaReadFault> {
    match spark_read(bytes) {
        SchemaRead::Fails(f) => Some(f),
        SchemaRead::Reads | SchemaRead::NotVerified(_) => None,
    }
}

/// What Spark's read of a v1/v2 schema file does ([`spark_read`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaRead {
    /// Both schemas read.
    Reads,
    /// The read fails there.
    Fails(SchemaReadFault),
    /// A schema's JSON nests deeper than this reader parses (128 levels) but within Jackson's 1,000, which Spark
    /// reads: whether it is a struct is not verified (why, in words).
    NotVerified(String),
}

/// Jackson's `StreamReadConstraints` default nesting depth (2.15+, Spark 3.5 and 4.x): deeper JSON fails to parse.
pub const JACKSON_MAX_DEPTH: usize = 1000;

/// Deepest nesting of `[` and `{` in JSON `text`, strings skipped (a scan, no parse).
fn json_depth(text: &str) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for b in text.bytes() {
        match (in_string, escaped, b) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (true, false, _) => {}
            (false, _, b'"') => in_string = true,
            (false, _, b'[' | b'{') => {
                depth += 1;
                max = max.max(depth);
            }
            (false, _, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// What Spark's read of the v1/v2 schema file `bytes` does: [`SchemaRead::Fails`] where and why, or
/// [`SchemaRead::NotVerified`] when a schema nests deeper than this reader's JSON parser goes.
pub fn spark_read(bytes: &[u8]) -> SchemaRead {
    let fault = |offset: usize, kind| SchemaRead::Fails(SchemaReadFault { offset: offset as u64, kind });
    let mut r = JavaReader::new(bytes);
    let version = match java_utf(&mut r) {
        Ok(v) => v,
        Err(f) => return SchemaRead::Fails(f),
    };
    let mut schemas = Vec::with_capacity(2);
    for _ in 0..2 {
        let at = r.pos;
        let text = match java_version(&version) {
            Some(1) => java_utf(&mut r),
            Some(2) => java_chunks(&mut r),
            _ => return fault(0, SchemaReadFaultKind::Version(version)),
        };
        match text {
            Ok(t) => schemas.push((at, t)),
            Err(f) => return SchemaRead::Fails(f),
        }
    }
    for (at, t) in &schemas {
        match serde_json::from_str::<Value>(t) {
            Ok(v) if v.get("type").and_then(Value::as_str) == Some("struct") => {}
            // serde_json stops at 128 levels, Jackson at 1,000: between them Spark reads what this cannot.
            Err(_) if (129..=JACKSON_MAX_DEPTH).contains(&json_depth(t)) => {
                return SchemaRead::NotVerified(format!(
                    "the schema at byte {at} nests {} levels deep, past what this inspector parses (128; Spark reads up to {JACKSON_MAX_DEPTH})",
                    json_depth(t)
                ))
            }
            _ => return fault(*at, SchemaReadFaultKind::Json),
        }
    }
    SchemaRead::Reads
}

/// The number `MetadataVersionUtil.validateVersion` reads from a version string: `v` and what Java's
/// `String.toInt` makes of the rest (`v2`, `v02` and `v+2` are 2), if positive.
pub fn java_version(text: &str) -> Option<i32> {
    text.strip_prefix('v')?.parse::<i32>().ok().filter(|v| *v > 0)
}

/// `DataInput.readUTF` as Java fails it: [`SchemaReadFaultKind::EndOfFile`] when the length or the bytes run past
/// the end, [`SchemaReadFaultKind::NotModifiedUtf8`] at the bad sequence.
fn java_utf(r: &mut JavaReader<'_>) -> Result<String, SchemaReadFault> {
    let at = r.pos;
    let eof = SchemaReadFault { offset: at as u64, kind: SchemaReadFaultKind::EndOfFile };
    let n = r.u16("string length").map_err(|_| eof.clone())? as usize;
    let s = r.take(n, "string").map_err(|_| eof)?;
    decode_modified_utf8(s)
        .map_err(|i| SchemaReadFault { offset: (at + 2 + i) as u64, kind: SchemaReadFaultKind::NotModifiedUtf8 })
}

/// `SchemaV2Reader`'s schema: `readInt` chunks (none when negative), each `readUTF`, concatenated.
fn java_chunks(r: &mut JavaReader<'_>) -> Result<String, SchemaReadFault> {
    let at = r.pos;
    let n = r
        .i32("chunk count")
        .map_err(|_| SchemaReadFault { offset: at as u64, kind: SchemaReadFaultKind::EndOfFile })?;
    let mut s = String::new();
    // Each chunk takes at least its 2 length bytes: a count past the end fails within the file's length.
    for _ in 0..n.max(0) {
        s.push_str(&java_utf(r)?);
    }
    Ok(s)
}

/// One column family of a v3 schema file (transformWithState).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnFamilySchema {
    /// Column family name (= the state variable name, or an internal `$`-prefixed family for timers/TTL).
    pub column_family: String,
    /// Key schema id (4.0+ files; 0 otherwise).
    pub key_schema_id: u16,
    /// Key schema.
    pub key: StructType,
    /// Value schema id (4.0+ files; 0 otherwise).
    pub value_schema_id: u16,
    /// Value schema.
    pub value: StructType,
    /// `keyStateEncoderSpec` JSON (`NoPrefixKeyStateEncoderSpec`, `PrefixKeyScanStateEncoderSpec` …).
    pub key_state_encoder_spec: Value,
    /// User key encoder schema JSON, when one was written (`{    }` = none → `None`).
    pub user_key_encoder_schema: Option<Value>,
}

/// Parses a StateSchemaV3 file (`state/<op>/_stateSchema/<store>/<batch>_<uuid>`, FORMATS.md §10.3):
/// `writeUTF("v3")`, int32 number of column families, then per family `writeUTF(name)`, u16 key schema id, chunks
/// of the key schema, u16 value schema id, chunks of the value schema, chunks of the key encoder spec, chunks of
/// the user key encoder schema. Files of early 4.0 previews without the ids are read too.
pub fn parse_schema_v3_file(bytes: &[u8]) -> Result<Vec<ColumnFamilySchema>, SchemaError> {
    parse_v3(bytes, true).or_else(|first| parse_v3(bytes, false).map_err(|_| first))
}

fn parse_v3(bytes: &[u8], with_ids: bool) -> Result<Vec<ColumnFamilySchema>, SchemaError> {
    let mut r = JavaReader::new(bytes);
    let v = r.utf("version header")?;
    if v != "v3" {
        return Err(serr(0, format!("unsupported state schema file version {v:?} (expected v3)")));
    }
    let at = r.pos;
    let n = r.i32("column family count")?;
    if n < 0 || n as usize > bytes.len() / 8 + 1 {
        return Err(serr(at, format!("impossible column family count {n}")));
    }
    let mut out = Vec::new();
    for _ in 0..n {
        let column_family = r.utf("column family name")?;
        let key_schema_id = if with_ids { r.u16("key schema id")? } else { 0 };
        let kat = r.pos;
        let key_json = r.chunks("key schema")?;
        let value_schema_id = if with_ids { r.u16("value schema id")? } else { 0 };
        let vat = r.pos;
        let value_json = r.chunks("value schema")?;
        let sat = r.pos;
        let spec = r.chunks("key state encoder spec")?;
        let uat = r.pos;
        let user = r.chunks("user key encoder schema")?;
        let key = StructType::from_json_str(&key_json).map_err(|e| serr(kat, e.message))?;
        let value = StructType::from_json_str(&value_json).map_err(|e| serr(vat, e.message))?;
        let key_state_encoder_spec =
            serde_json::from_str(&spec).map_err(|e| serr(sat, format!("key state encoder spec: {e}")))?;
        let user_key_encoder_schema = if user.trim().trim_start_matches('{').trim_end_matches('}').trim().is_empty() {
            None
        } else {
            Some(serde_json::from_str(&user).map_err(|e| serr(uat, format!("user key encoder schema: {e}")))?)
        };
        out.push(ColumnFamilySchema {
            column_family,
            key_schema_id,
            key,
            value_schema_id,
            value,
            key_state_encoder_spec,
            user_key_encoder_schema,
        });
    }
    Ok(out)
}
