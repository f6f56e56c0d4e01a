//! transformWithState state in RocksDB stores, as Spark's `StatePartitionReader` reads it: state variables in
//! virtual column families (`stateVarName`, `readRegisteredTimers`), their key and value encodings (UnsafeRow or
//! Avro, prefix and range-scan keys, TTL), schema v3 files, and the rows of one column family.

use super::avro;
use super::encoding::{self, KeyEncoding};
use super::state_view::*;
use crate::archive::Archive;
use crate::state::schema::{parse_schema_v3_file, ColumnFamilySchema, StructType};
use crate::state::{unsafe_row, StateError, StateLimits, StateRow};

/// What a `statestore` read of a transformWithState operator targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VarTarget {
    /// `stateVarName`: one state variable (its column family).
    Variable(String),
    /// `readRegisteredTimers`: the timers (`$procTimers_keyToTimestamp` / `$eventTimers_keyToTimestamp`, chosen by
    /// the operator's time mode, `TimerStateUtils.getTimerStateVarNames`).
    Timers,
}

/// Reader options for state variables (Spark's `flattenCollectionTypes`, and auto snapshot repair).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarReadOptions {
    /// `flattenCollectionTypes` (Spark's default true).
    pub flatten_collection_types: bool,
    /// Auto snapshot repair while loading; `None` = as a 4.3 restart (`auto_repair`).
    pub auto_snapshot_repair: Option<bool>,
}

impl Default for VarReadOptions {
    fn default() -> Self {
        VarReadOptions { flatten_collection_types: true, auto_snapshot_repair: None }
    }
}

/// The kind of a transformWithState column family, which fixes the reader's output shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarKind {
    /// `ValueState`: key → one value row.
    Value,
    /// `ListState`: key → merged list of value rows (`MultiValuedStateEncoder`).
    List,
    /// `MapState`: composite key (grouping key, user key; prefix-scan encoded with 1 prefix column) → value row.
    Map,
    /// Timers, `keyToTimestamp` family: key (grouping key, expiryTimestampMs; prefix-scan, 1 prefix column) →
    /// dummy value.
    Timer,
}

/// How the rows of a column family are serialized (`spark.sql.streaming.stateStore.encodingFormat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFormat {
    /// `unsaferow` (default): `[0x00][UnsafeRow]`.
    UnsafeRow,
    /// `avro`: `[0x00][schema id: i16 LE][Avro record]` (prefix parts of scan keys carry no schema id).
    Avro,
}

/// Everything needed to decode one column family's entries.
#[derive(Debug, Clone)]
pub struct VarLayout {
    /// The kind, fixing the output shape.
    pub kind: VarKind,
    /// Key schema (the full key; composite for maps and timers).
    pub key: StructType,
    /// Value schema the reader outputs (the newest).
    pub value: StructType,
    /// Number of prefix key columns (`PrefixKeyScanStateEncoderSpec.numColsPrefixKey`); 0 = no prefix.
    pub prefix_cols: usize,
    /// Row serialization.
    pub format: RowFormat,
    /// Avro only: the value schemas by value schema id (writer schemas of evolved state).
    pub value_schemas: Vec<(u16, StructType)>,
    /// List values: try the ',' delimited merge layout first (merge operator version 1), else the undelimited.
    pub merge_delimited_first: bool,
    /// Row checksums (4.3): known from the conf, or `None` to detect on the values.
    pub row_checksums: Option<bool>,
}

/// A decoded key: the full key object, and for prefix-scan keys the prefix and remaining parts' first fields.
pub(super) struct DecodedKey {
    full: serde_json::Value,
    first_prefix_field: serde_json::Value,
    first_remaining_field: serde_json::Value,
    /// UnsafeRow bytes of the remaining part's first field when it is a struct (a map's user key).
    remaining_struct_bytes: Option<Vec<u8>>,
}

pub(super) fn sub_schema(s: &StructType, range: std::ops::Range<usize>) -> StructType {
    StructType { fields: s.fields.get(range).map(|f| f.to_vec()).unwrap_or_default() }
}

/// `UnsafeRow.toString`: `[` + each 8-byte word as `Long.toHexString` + `]`, the text Spark's JSON writer uses
/// for a struct-typed map key.
pub fn unsafe_row_to_string(row: &[u8]) -> String {
    let words: Vec<String> = row
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            format!("{:x}", u64::from_le_bytes(w))
        })
        .collect();
    format!("[{}]", words.join(","))
}

pub(super) fn key_error(dir: &str, schema: &StructType, e: impl std::fmt::Display) -> StateError {
    StateError::new(dir, format!("key row does not match {}: {e}", schema.simple_string()))
        .class("CANNOT_LOAD_STATE_STORE.KEY_ROW_FORMAT_VALIDATION_FAILURE")
}

pub(super) fn value_error(dir: &str, schema: &StructType, e: impl std::fmt::Display) -> StateError {
    StateError::new(dir, format!("value row does not match {}: {e}", schema.simple_string()))
        .class("CANNOT_LOAD_STATE_STORE.VALUE_ROW_FORMAT_VALIDATION_FAILURE")
}

/// `[0x00][schema id: i16 LE][avro]` → (schema id, avro bytes).
pub(super) fn avro_with_schema_id(part: &[u8]) -> Result<(u16, &[u8]), String> {
    match part {
        [0, a, b, rest @ ..] => Ok((u16::from_le_bytes([*a, *b]), rest)),
        [0, ..] => Err("Avro row shorter than its 2-byte schema id".into()),
        [] => Err("empty row: the encoding version byte is missing".into()),
        [v, ..] => Err(format!("unknown state encoding version {v} (Spark writes 0)")),
    }
}

/// Decodes `[0x00][schema id: i16 LE][Avro record]` with `schema_for(id)`; when that does not decode, the part is
/// tried as `[0x00][Avro record]` (no schema id, as Avro state was written before schema evolution support).
pub(super) fn decode_avro_part(
    part: &[u8],
    schema_for: &dyn Fn(u16) -> StructType,
    fallback: &StructType,
) -> Result<serde_json::Value, String> {
    let first = avro_with_schema_id(part)
        .and_then(|(id, body)| avro::decode_avro_row(body, &schema_for(id)).map_err(|e| e.to_string()));
    match first {
        Ok(v) => Ok(v),
        Err(e) => match part {
            [0, body @ ..] => avro::decode_avro_row(body, fallback).map_err(|_| e),
            _ => Err(e),
        },
    }
}

/// The bytes of the first field of UnsafeRow `r` (schema `s`) when it is a struct: its `offset << 32 | size` slot
/// sits after the null bitset.
pub(super) fn first_struct_field(r: &[u8], s: &StructType) -> Option<Vec<u8>> {
    if !matches!(s.fields.first().map(|f| &f.data_type), Some(crate::state::schema::DataType::Struct(_))) {
        return None;
    }
    let at = s.fields.len().div_ceil(64) * 8;
    let slot = r.get(at..at + 8)?;
    let mut w = [0u8; 8];
    w.copy_from_slice(slot);
    let v = u64::from_le_bytes(w);
    let (off, size) = ((v >> 32) as usize, (v & 0xffff_ffff) as usize);
    r.get(off..off.checked_add(size)?).map(<[u8]>::to_vec)
}

pub(super) fn decode_key(k: &[u8], l: &VarLayout, dir: &str) -> Result<DecodedKey, StateError> {
    let n = l.prefix_cols;
    let first = |v: &serde_json::Value, s: &StructType| {
        s.fields.first().and_then(|f| v.get(&f.name)).cloned().unwrap_or(serde_json::Value::Null)
    };
    if n == 0 {
        let full = match l.format {
            RowFormat::UnsafeRow => {
                let kp = encoding::split_key(k, true, &KeyEncoding::NoPrefix).map_err(|e| key_error(dir, &l.key, e))?;
                unsafe_row::decode_row(kp.rows.first().copied().unwrap_or(&[]), &l.key)
                    .map_err(|e| key_error(dir, &l.key, e))?
            }
            RowFormat::Avro => {
                let kp = encoding::split_key_raw(k, true, false).map_err(|e| key_error(dir, &l.key, e))?;
                decode_avro_part(kp.rows.first().copied().unwrap_or(&[]), &|_| l.key.clone(), &l.key)
                    .map_err(|e| key_error(dir, &l.key, e))?
            }
        };
        return Ok(DecodedKey {
            first_prefix_field: serde_json::Value::Null,
            first_remaining_field: serde_json::Value::Null,
            remaining_struct_bytes: None,
            full,
        });
    }
    let (ps, rs) = (sub_schema(&l.key, 0..n), sub_schema(&l.key, n..l.key.fields.len()));
    let (pv, rv, raw_struct) = match l.format {
        RowFormat::UnsafeRow => {
            let kp = encoding::split_key(k, true, &KeyEncoding::PrefixScan { num_cols: n })
                .map_err(|e| key_error(dir, &l.key, e))?;
            let (Some(p), Some(r)) = (kp.rows.first(), kp.rows.get(1)) else {
                return Err(key_error(dir, &l.key, "prefix-scan key without its remaining part"));
            };
            let pv = unsafe_row::decode_row(p, &ps).map_err(|e| key_error(dir, &ps, e))?;
            let rv = unsafe_row::decode_row(r, &rs).map_err(|e| key_error(dir, &rs, e))?;
            (pv, rv, first_struct_field(r, &rs))
        }
        RowFormat::Avro => {
            let kp = encoding::split_key_raw(k, true, true).map_err(|e| key_error(dir, &l.key, e))?;
            let (Some(p), Some(r)) = (kp.rows.first(), kp.rows.get(1)) else {
                return Err(key_error(dir, &l.key, "prefix-scan key without its remaining part"));
            };
            let pv = avro::decode_avro_row(&p[1..], &ps).map_err(|e| key_error(dir, &ps, e))?;
            let rv = decode_avro_part(r, &|_| rs.clone(), &rs).map_err(|e| key_error(dir, &rs, e))?;
            // The UnsafeRow Spark rebuilds from the Avro remaining part (for struct map keys' names).
            let row = match r {
                [0, _, _, body @ ..] => avro::decode_avro_to_unsafe_row(body, &rs).ok(),
                _ => None,
            }
            .or_else(|| r.get(1..).and_then(|body| avro::decode_avro_to_unsafe_row(body, &rs).ok()));
            (pv, rv, row.and_then(|row| first_struct_field(&row, &rs)))
        }
    };
    let mut full = serde_json::Map::new();
    for part in [&pv, &rv] {
        if let serde_json::Value::Object(m) = part {
            for (k, v) in m {
                full.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(DecodedKey {
        first_prefix_field: first(&pv, &ps),
        first_remaining_field: first(&rv, &rs),
        remaining_struct_bytes: raw_struct,
        full: serde_json::Value::Object(full),
    })
}

pub(super) fn decode_values(
    k: &[u8],
    v: &[u8],
    l: &VarLayout,
    dir: &str,
) -> Result<Vec<serde_json::Value>, StateError> {
    let multi = l.kind == VarKind::List;
    let elems = encoding::split_value_elements(k, v, multi, l.row_checksums, l.merge_delimited_first)
        .map_err(|e| row_error(dir, "value", e))?;
    let mut out = Vec::with_capacity(elems.len());
    for e in elems {
        let j = match l.format {
            RowFormat::UnsafeRow => {
                let body = match e {
                    [0, rest @ ..] => rest,
                    _ => {
                        return Err(value_error(dir, &l.value, "value element without the 0x00 encoding version byte"))
                    }
                };
                unsafe_row::decode_row(body, &l.value).map_err(|e| value_error(dir, &l.value, e))?
            }
            RowFormat::Avro => {
                // The writer's schema by its id (evolved state), then resolved onto the reader's schema.
                let writer = |id: u16| {
                    l.value_schemas.iter().find(|(i, _)| *i == id).map(|(_, s)| s.clone()).unwrap_or(l.value.clone())
                };
                let w = decode_avro_part(e, &writer, &l.value).map_err(|e| value_error(dir, &l.value, e))?;
                avro::resolve(&w, &l.value)
            }
        };
        out.push(j);
    }
    Ok(out)
}

/// Turns the entries of one column family (`cf_id`) of a partition's store into rows in the shape Spark's
/// `StatePartitionReader` gives for the variable kind (see [`crate::state::StateRow`]), appending to `out`.
/// Entries are visited in key order, so a map's entries for one grouping key are consecutive (as in Spark's
/// `unifyMapStateRowPair`).
///
/// Errors name `dir`: keys or values that do not match the layout or the schemas, more than `max_rows` rows.
#[allow(clippy::too_many_arguments)]
pub fn rows_for_column_family(
    entries: &std::collections::BTreeMap<Vec<u8>, Vec<u8>>,
    cf_id: u16,
    l: &VarLayout,
    flatten: bool,
    partition: u32,
    dir: &str,
    max_rows: usize,
    out: &mut Vec<StateRow>,
) -> Result<(), StateError> {
    let mut at = None;
    let mut emitted = out.len();
    let mut push = |r: StateRow| {
        out.push(r);
        Ok(())
    };
    rows_for_column_family_at(entries, cf_id, l, flatten, partition, dir, max_rows, &mut emitted, &mut push, &mut at)
}

/// [`rows_for_column_family`] handing each row to `sink` as it is decoded (`emitted`: rows handed out so far, for
/// the `max_rows` bound), leaving in `at` the raw key of the entry being decoded (on an error: the entry that
/// failed).
#[allow(clippy::too_many_arguments)]
pub(super) fn rows_for_column_family_at<'a>(
    entries: &'a std::collections::BTreeMap<Vec<u8>, Vec<u8>>,
    cf_id: u16,
    l: &VarLayout,
    flatten: bool,
    partition: u32,
    dir: &str,
    max_rows: usize,
    emitted: &mut usize,
    sink: &mut crate::state::RowSink<'_>,
    at: &mut Option<&'a [u8]>,
) -> Result<(), StateError> {
    let cf = cf_id.to_le_bytes();
    let mut push = |r: StateRow| {
        if *emitted >= max_rows {
            return Err(StateError::new(dir, format!("more than {max_rows} rows")));
        }
        *emitted += 1;
        sink(r)
    };
    // A non-flattened map being gathered: (grouping key, entries).
    let mut open_map: Option<(serde_json::Value, serde_json::Map<String, serde_json::Value>)> = None;
    for (k, v) in entries.range(cf.to_vec()..) {
        if !k.starts_with(&cf) {
            break;
        }
        *at = Some(k);
        let key = decode_key(k, l, dir)?;
        match l.kind {
            VarKind::Timer => {
                let Some(ts) = key.first_remaining_field.as_i64() else {
                    return Err(key_error(dir, &l.key, "timer key without its expiry timestamp"));
                };
                let mut r = StateRow::new(partition, key.first_prefix_field, serde_json::Value::Null);
                r.expiration_timestamp_ms = Some(ts);
                push(r)?;
            }
            VarKind::Value => {
                for value in decode_values(k, v, l, dir)? {
                    push(StateRow::new(partition, key.full.clone(), value))?;
                }
            }
            VarKind::List => {
                let values = decode_values(k, v, l, dir)?;
                if flatten {
                    for value in values {
                        let mut r = StateRow::new(partition, key.full.clone(), serde_json::Value::Null);
                        r.list_element = Some(value);
                        push(r)?;
                    }
                } else {
                    let mut r = StateRow::new(partition, key.full, serde_json::Value::Null);
                    r.list_value = Some(values);
                    push(r)?;
                }
            }
            VarKind::Map => {
                let value = decode_values(k, v, l, dir)?.into_iter().next().unwrap_or(serde_json::Value::Null);
                if flatten {
                    let mut r = StateRow::new(partition, key.first_prefix_field, serde_json::Value::Null);
                    r.user_map_key = Some(key.first_remaining_field);
                    r.user_map_value = Some(value);
                    push(r)?;
                    continue;
                }
                let Some(raw) = key.remaining_struct_bytes else {
                    return Err(key_error(dir, &l.key, "map user key is not a struct"));
                };
                if open_map.as_ref().is_some_and(|(g, _)| *g != key.first_prefix_field) {
                    if let Some((g, m)) = open_map.take() {
                        let mut r = StateRow::new(partition, g, serde_json::Value::Null);
                        r.map_value = Some(m);
                        push(r)?;
                    }
                }
                let entry = open_map.get_or_insert_with(|| (key.first_prefix_field.clone(), Default::default()));
                entry.1.insert(unsafe_row_to_string(&raw), value);
            }
        }
    }
    if let Some((g, m)) = open_map {
        let mut r = StateRow::new(partition, g, serde_json::Value::Null);
        r.map_value = Some(m);
        push(r)?;
    }
    Ok(())
}

/// Every StateSchemaV3 file of the store in effect up to `batch`, oldest first (the newest is the reader's
/// schema; older ones hold the writer schemas of evolved Avro state).
pub(super) fn schema_v3_files(
    a: &mut dyn Archive,
    root: &str,
    op: i64,
    store: &str,
    batch: i64,
) -> Result<Vec<Vec<ColumnFamilySchema>>, StateError> {
    let dir = crate::state::join(root, &format!("state/{op}/_stateSchema/{store}"));
    let mut files: Vec<(i64, String)> = Vec::new();
    for e in a.entries() {
        let Some(name) = e.path.strip_prefix(&format!("{dir}/")) else { continue };
        if e.is_dir || name.contains('/') || name.starts_with('.') {
            continue;
        }
        let Some((b, _)) = name.split_once('_') else { continue };
        let Ok(b) = b.parse::<i64>() else { continue };
        if b <= batch {
            files.push((b, e.path.clone()));
        }
    }
    files.sort();
    let newest = schema_v3(a, root, op, store, batch)?;
    let mut out = Vec::new();
    for (_, path) in files.iter().take(files.len().saturating_sub(1)) {
        // Older files only add writer schemas; one that does not read is skipped (the newest is what matters).
        if let Ok(bytes) = a.read(path, 16 << 20) {
            if let Ok(s) = parse_schema_v3_file(&bytes) {
                out.push(s);
            }
        }
    }
    out.push(newest);
    Ok(out)
}

/// Reads the rows of one transformWithState state variable (`stateVarName`) or of its registered timers
/// (`readRegisteredTimers`) as Spark's `StatePartitionReader` does: the entries of the variable's virtual column
/// family, decoded with the key/value schemas of the StateSchemaV3 file and the key encoder it records, in the
/// encoding the offset log's conf names (UnsafeRow or Avro), shaped by the variable's type (operator metadata v2)
/// and `flattenCollectionTypes` (see [`crate::state::StateRow`]).
///
/// Errors (Spark's error classes where it has one): timers of an operator in time mode None, a variable not in
/// the state schema, a store without virtual column families, rows that do not match the schema. `dirs`: the
/// index of `a`'s entries.
#[allow(clippy::too_many_arguments)]
pub(crate) fn read_state_var(
    a: &mut dyn Archive,
    dirs: &crate::dir_index::DirIndex,
    root: &str,
    op: i64,
    store_name: &str,
    target: &VarTarget,
    batch: i64,
    parts: &[u32],
    limits: &StateLimits,
    opts: &VarReadOptions,
    sink: &mut crate::state::RowSink<'_>,
) -> Result<(), StateError> {
    let op_dir = crate::state::join(root, &format!("state/{op}"));
    let invalid = |m: String| StateError::new(&op_dir, m).class("STDS_INVALID_OPTION_VALUE.WITH_MESSAGE");
    let props = tws_properties(a, root, op, batch);
    let files = schema_v3_files(a, root, op, store_name, batch)?;
    let current = files.last().cloned().unwrap_or_default();
    let cf_name = column_family_of(target, props.as_ref(), &current, &invalid)?;
    let declared_vars: Option<Vec<String>> =
        props.as_ref().and_then(|p| p.get("stateVariables")).and_then(|v| v.as_array()).map(|vars| {
            vars.iter().filter_map(|v| v.get("stateName").and_then(|n| n.as_str()).map(str::to_string)).collect()
        });
    if declared_vars.as_ref().is_some_and(|v| !v.contains(&cf_name)) {
        return Err(invalid(format!("State variable {cf_name} is not defined for the transformWithState operator.")));
    }
    let cf_schema = current.iter().find(|s| s.column_family == cf_name).ok_or_else(|| {
        let names: Vec<&str> = current.iter().map(|s| s.column_family.as_str()).collect();
        invalid(format!(
            "state variable {cf_name:?} is not in the state schema (column families: {})",
            names.join(", ")
        ))
    })?;
    let declared = props.as_ref().and_then(|p| p.get("stateVariables")).and_then(|v| v.as_array()).and_then(|vars| {
        vars.iter().find_map(|v| {
            (v.get("stateName")?.as_str()? == cf_name)
                .then(|| v.get("stateVariableType")?.as_str().map(str::to_string))?
        })
    });
    let layout = var_layout(a, root, batch, &op_dir, target, cf_schema, declared.as_deref(), &files)?;
    let version =
        batch.checked_add(1).filter(|_| (0..=crate::log::MAX_BATCH_ID).contains(&batch)).ok_or_else(|| {
            StateError::new(
                crate::state::join(root, "commits"),
                format!("batchId {batch} is not a batch id Spark writes (0..=2^60)"),
            )
        })?;
    let mut emitted = 0usize;
    for &p in parts {
        let dir = crate::state::store_dir(root, op, p, store_name);
        let store = load(a, dirs, &dir, version, limits, opts.auto_snapshot_repair)?;
        if !store.uses_column_families() {
            return Err(StateError::new(&dir, "the store has no column families, so it holds no state variables"));
        }
        let Some(cf_id) = store.column_families.iter().find(|(n, _)| *n == cf_name).map(|(_, i)| *i) else {
            // The variable was never written in this partition (Spark: no rows).
            continue;
        };
        let mut l = layout.clone();
        if l.row_checksums.is_none() {
            l.row_checksums = Some(detect_row_checksums(&store));
        }
        let mut at = None;
        let r = rows_for_column_family_at(
            &store.entries,
            cf_id,
            &l,
            opts.flatten_collection_types,
            p,
            &dir,
            limits.max_rows,
            &mut emitted,
            sink,
            &mut at,
        );
        if let Err(e) = r {
            if e == crate::state::sink_stop() {
                return Err(e);
            }
            // Row errors (they carry an error class; the row limit does not) name the file the entry came from.
            let src = match at {
                Some(k) if e.error_class.is_some() => {
                    let k = k.to_vec();
                    super::locate_key(a, &dir, &store.plan, &k, &load_limits(limits))
                }
                _ => None,
            };
            return Err(match src {
                Some(s) => s.annotate(e),
                None => e,
            });
        }
    }
    Ok(())
}

/// The column family a target reads: the variable's own, or the timers' family of the operator's time mode.
fn column_family_of(
    target: &VarTarget,
    props: Option<&serde_json::Value>,
    current: &[ColumnFamilySchema],
    invalid: &dyn Fn(String) -> StateError,
) -> Result<String, StateError> {
    Ok(match target {
        VarTarget::Variable(v) => v.clone(),
        VarTarget::Timers => {
            // `TimeMode.toString`: ProcessingTime, EventTime, NoTime (TimeMode.None).
            let mode = props.and_then(|p| p.get("timeMode")).and_then(|m| m.as_str()).map(str::to_ascii_lowercase);
            match mode.as_deref() {
                Some("processingtime") => "$procTimers_keyToTimestamp".to_string(),
                Some("eventtime") => "$eventTimers_keyToTimestamp".to_string(),
                Some(_) => return Err(invalid("Registered timers are not available in TimeMode=None.".into())),
                None => current
                    .iter()
                    .map(|c| c.column_family.clone())
                    .find(|n| n == "$procTimers_keyToTimestamp" || n == "$eventTimers_keyToTimestamp")
                    .ok_or_else(|| {
                        invalid("Registered timers are not available: the operator has no timers.".into())
                    })?,
            }
        }
    })
}

/// How a variable's rows are laid out and encoded: its kind (from operator metadata v2, else the key encoder),
/// prefix columns, the row format and merge operator of the offset log's conf, its value schemas by id.
#[allow(clippy::too_many_arguments)]
fn var_layout(
    a: &mut dyn Archive,
    root: &str,
    batch: i64,
    op_dir: &str,
    target: &VarTarget,
    cf_schema: &ColumnFamilySchema,
    declared: Option<&str>,
    files: &[Vec<ColumnFamilySchema>],
) -> Result<VarLayout, StateError> {
    let cf_name = cf_schema.column_family.clone();
    let invalid = |m: String| StateError::new(op_dir, m).class("STDS_INVALID_OPTION_VALUE.WITH_MESSAGE");
    let spec = &cf_schema.key_state_encoder_spec;
    let encoder = spec.get("keyStateEncoderType").and_then(|t| t.as_str()).unwrap_or("NoPrefixKeyStateEncoderSpec");
    let prefix_cols = match encoder {
        "NoPrefixKeyStateEncoderSpec" => 0,
        "PrefixKeyScanStateEncoderSpec" => {
            spec.get("numColsPrefixKey").and_then(|n| n.as_u64()).map_or(1, |n| n as usize)
        }
        other => {
            return Err(StateError::new(
                op_dir,
                format!("column family {cf_name:?} uses key encoder {other}, which Spark's state reader does not read"),
            ))
        }
    };
    let kind = match (target, declared) {
        (VarTarget::Timers, _) | (_, Some("TimerState")) => VarKind::Timer,
        (_, Some("ListState")) => VarKind::List,
        (_, Some("MapState")) => VarKind::Map,
        (_, Some("ValueState")) => VarKind::Value,
        (_, Some(other)) => return Err(invalid(format!("unsupported state variable type {other}"))),
        // No operator metadata: a prefix-scan family with a user key schema is a map, else a value.
        (_, None) if prefix_cols > 0 && cf_schema.user_key_encoder_schema.is_some() => VarKind::Map,
        (_, None) => VarKind::Value,
    };
    if matches!(kind, VarKind::Map | VarKind::Timer) && (prefix_cols == 0 || prefix_cols >= cf_schema.key.fields.len())
    {
        return Err(StateError::new(
            op_dir,
            format!("{cf_name:?}: a {kind:?} family needs a prefix-scan key of two parts; its spec is {spec}"),
        ));
    }
    let conf = offset_conf(a, root, batch);
    let conf_str = |k: &str| conf.get(k).map(|s| s.trim().to_ascii_lowercase());
    let format = match conf_str("spark.sql.streaming.stateStore.encodingFormat").as_deref() {
        Some("avro") => RowFormat::Avro,
        _ => RowFormat::UnsafeRow,
    };
    let value_schemas: Vec<(u16, StructType)> = files
        .iter()
        .flat_map(|f| f.iter().filter(|c| c.column_family == cf_name).map(|c| (c.value_schema_id, c.value.clone())))
        .collect();
    let row_checksums = conf_str("spark.sql.streaming.stateStore.rowChecksum.enabled").map(|v| v == "true");
    Ok(VarLayout {
        kind,
        key: cf_schema.key.clone(),
        value: cf_schema.value.clone(),
        prefix_cols,
        format,
        value_schemas,
        merge_delimited_first: conf_str("spark.sql.streaming.stateStore.rocksdb.mergeOperatorVersion").as_deref()
            != Some("2"),
        row_checksums,
    })
}
