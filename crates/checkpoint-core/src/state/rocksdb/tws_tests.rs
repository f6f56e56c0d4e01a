//! transformWithState state variables the fixtures do not have (MapState, ListState, timers, Avro-encoded rows),
//! built byte for byte from Spark's layouts:
//!
//! * keys: `[column family id: i16 LE]` then, for `NoPrefixKeyStateEncoderSpec`, `[0x00][key row]`; for
//!   `PrefixKeyScanStateEncoderSpec(schema, 1)`, `[prefix length: i32 LE][0x00][prefix row][0x00][remaining row]`
//!   (`PrefixKeyScanStateEncoder.encodeKey`, RocksDBStateEncoder.scala; the family prefix as
//!   `RocksDBKeyStateEncoderBase.encodeColumnFamilyPrefix` writes it);
//! * values: `[0x00][value row]` (`SingleValueStateEncoder`); lists `[len: i32 LE][0x00][row]` joined by `,`
//!   (`MultiValuedStateEncoder` + RocksDB's StringAppendOperator; no `,` with merge operator version 2);
//! * MapState (`MapStateImpl`, `CompositeKeyStateEncoder`): key schema `{key: <grouping key>, userKey: <user
//!   key>}`, prefix-scan with 1 prefix column; timers (`TimerStateImpl`): family `$procTimers_keyToTimestamp`,
//!   key `{key: <grouping key>, expiryTimestampMs: long}`, prefix-scan with 1 column, value `{__dummy__: void}`;
//! * Avro (`AvroStateEncoder`): `[0x00][schema id: i16 LE][Avro record]` for plain keys, remaining key parts and
//!   values; prefix key parts are `[0x00][Avro record]` without schema id;
//! * UnsafeRow: `UnsafeRowWriter` (null bitset words, 8-byte slots, variable data as `offset << 32 | size`
//!   padded to 8 bytes).
//!
//! Expected rows follow Spark's `StatePartitionReader` / `SchemaUtil` (`generateSchemaForStateVar`,
//! `unifyMapStateRowPair`) and its suite `StateDataSourceTransformWithStateSuite` (4.x): a flattened list reads
//! as `key` + `list_element`, a non-flattened one as `key` + `list_value`; a map as `key` + `user_map_key` +
//! `user_map_value` or `key` + `map_value`; a processing-time timer for grouping key "a" at 10500 as
//! `key.value = "a"`, `expiration_timestamp_ms = 10500`.

use super::avro;
use super::state_view::*;
use crate::archive::{Archive, MemArchive};
use crate::state::schema::StructType;
use crate::state::{read_state, StateQuery};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A field of a hand-built UnsafeRow.
enum F {
    Null,
    Long(i64),
    Str(&'static str),
    Row(Vec<u8>),
}

fn urow(fields: &[F]) -> Vec<u8> {
    let n = fields.len();
    let w = n.div_ceil(64) * 8;
    let mut out = vec![0u8; w + 8 * n];
    for (i, f) in fields.iter().enumerate() {
        let slot = w + 8 * i;
        let var = |out: &mut Vec<u8>, p: &[u8]| {
            let off = out.len() as u64;
            out[slot..slot + 8].copy_from_slice(&((off << 32) | p.len() as u64).to_le_bytes());
            out.extend_from_slice(p);
            while !out.len().is_multiple_of(8) {
                out.push(0);
            }
        };
        match f {
            F::Null => out[i / 8] |= 1 << (i % 8),
            F::Long(x) => out[slot..slot + 8].copy_from_slice(&x.to_le_bytes()),
            F::Str(s) => var(&mut out, s.as_bytes()),
            F::Row(r) => var(&mut out, r),
        }
    }
    out
}

fn ver(row: &[u8]) -> Vec<u8> {
    let mut v = vec![0u8];
    v.extend_from_slice(row);
    v
}

fn plain_key(cf: u16, row: &[u8]) -> Vec<u8> {
    let mut k = cf.to_le_bytes().to_vec();
    k.extend(ver(row));
    k
}

fn prefix_key(cf: u16, prefix: &[u8], rest: &[u8]) -> Vec<u8> {
    let mut k = cf.to_le_bytes().to_vec();
    k.extend(((prefix.len()) as i32).to_le_bytes());
    k.extend(prefix);
    k.extend(rest);
    k
}

fn list_value(elems: &[Vec<u8>], delimited: bool) -> Vec<u8> {
    let mut v = Vec::new();
    for (i, e) in elems.iter().enumerate() {
        if i > 0 && delimited {
            v.push(b',');
        }
        v.extend((e.len() as i32).to_le_bytes());
        v.extend(e);
    }
    v
}

fn st(json: &str) -> StructType {
    StructType::from_json_str(json).unwrap()
}

const GROUP: &str = r#"{"type":"struct","fields":[{"name":"key","type":"string","nullable":true,"metadata":{}}]}"#;
const USER_KEY: &str = r#"{"type":"struct","fields":[{"name":"value","type":"string","nullable":true,"metadata":{}}]}"#;
const LONG_VALUE: &str = r#"{"type":"struct","fields":[{"name":"value","type":"long","nullable":true,"metadata":{}}]}"#;

fn composite_key() -> String {
    format!(
        r#"{{"type":"struct","fields":[{{"name":"key","type":{GROUP},"nullable":true,"metadata":{{}}}},{{"name":"userKey","type":{USER_KEY},"nullable":true,"metadata":{{}}}}]}}"#
    )
}

fn timer_key() -> String {
    format!(
        r#"{{"type":"struct","fields":[{{"name":"key","type":{GROUP},"nullable":true,"metadata":{{}}}},{{"name":"expiryTimestampMs","type":"long","nullable":false,"metadata":{{}}}}]}}"#
    )
}

fn layout(kind: VarKind, key: &str, value: &str, prefix_cols: usize, format: RowFormat) -> VarLayout {
    VarLayout {
        kind,
        key: st(key),
        value: st(value),
        prefix_cols,
        format,
        value_schemas: vec![(0, st(value))],
        merge_delimited_first: true,
        row_checksums: Some(false),
    }
}

fn rows(entries: &BTreeMap<Vec<u8>, Vec<u8>>, cf: u16, l: &VarLayout, flatten: bool) -> Vec<Value> {
    let mut out = Vec::new();
    rows_for_column_family(entries, cf, l, flatten, 0, "state/0/0", 1000, &mut out).unwrap();
    out.iter().map(|r| r.to_json()).collect()
}

/// MapState entries of two grouping keys ("g1": a→1, b→2; "g2": a→3) in family 3, plus an entry of family 2
/// that must be ignored.
fn map_entries() -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut m = BTreeMap::new();
    for (g, uk, v) in [("g1", "a", 1), ("g1", "b", 2), ("g2", "a", 3)] {
        let prefix = ver(&urow(&[F::Row(urow(&[F::Str(g)]))]));
        let rest = ver(&urow(&[F::Row(urow(&[F::Str(uk)]))]));
        m.insert(prefix_key(3, &prefix, &rest), ver(&urow(&[F::Long(v)])));
    }
    m.insert(plain_key(2, &urow(&[F::Str("x")])), ver(&urow(&[F::Long(9)])));
    m
}

#[test]
fn map_state_flattened_and_grouped_like_spark() {
    let l = layout(VarKind::Map, &composite_key(), LONG_VALUE, 1, RowFormat::UnsafeRow);
    let got = rows(&map_entries(), 3, &l, true);
    assert_eq!(
        got,
        vec![
            json!({"key": {"key": "g1"}, "user_map_key": {"value": "a"}, "user_map_value": {"value": 1}, "partition_id": 0}),
            json!({"key": {"key": "g1"}, "user_map_key": {"value": "b"}, "user_map_value": {"value": 2}, "partition_id": 0}),
            json!({"key": {"key": "g2"}, "user_map_key": {"value": "a"}, "user_map_value": {"value": 3}, "partition_id": 0}),
        ]
    );
    // flattenCollectionTypes=false: one row per grouping key; the struct map keys are written as
    // UnsafeRow.toString, i.e. the user key row {value: "a"} = words [0 (null bits), 16 << 32 | 1, 'a'] in hex.
    let got = rows(&map_entries(), 3, &l, false);
    assert_eq!(
        got,
        vec![
            json!({"key": {"key": "g1"}, "map_value": {"[0,1000000001,61]": {"value": 1}, "[0,1000000001,62]": {"value": 2}}, "partition_id": 0}),
            json!({"key": {"key": "g2"}, "map_value": {"[0,1000000001,61]": {"value": 3}}, "partition_id": 0}),
        ]
    );
}

#[test]
fn timers_read_as_grouping_key_and_expiry() {
    let mut m = BTreeMap::new();
    let prefix = ver(&urow(&[F::Row(urow(&[F::Str("a")]))]));
    let rest = ver(&urow(&[F::Long(10500)]));
    m.insert(prefix_key(5, &prefix, &rest), ver(&urow(&[F::Null])));
    let l = layout(
        VarKind::Timer,
        &timer_key(),
        r#"{"type":"struct","fields":[{"name":"__dummy__","type":"void","nullable":true,"metadata":{}}]}"#,
        1,
        RowFormat::UnsafeRow,
    );
    assert_eq!(
        rows(&m, 5, &l, true),
        vec![json!({"key": {"key": "a"}, "expiration_timestamp_ms": 10500, "partition_id": 0})]
    );
}

#[test]
fn list_state_flattened_or_as_list_value_with_both_merge_layouts_and_checksums() {
    let elems = vec![ver(&urow(&[F::Long(1)])), ver(&urow(&[F::Long(2)]))];
    let key = plain_key(4, &urow(&[F::Str("k")]));
    let l = layout(VarKind::List, GROUP, LONG_VALUE, 0, RowFormat::UnsafeRow);
    for delimited in [true, false] {
        let mut m = BTreeMap::new();
        m.insert(key.clone(), list_value(&elems, delimited));
        assert_eq!(
            rows(&m, 4, &l, true),
            vec![
                json!({"key": {"key": "k"}, "list_element": {"value": 1}, "partition_id": 0}),
                json!({"key": {"key": "k"}, "list_element": {"value": 2}, "partition_id": 0}),
            ]
        );
        assert_eq!(
            rows(&m, 4, &l, false),
            vec![json!({"key": {"key": "k"}, "list_value": [{"value": 1}, {"value": 2}], "partition_id": 0})]
        );
    }
    // 4.3 row checksums: each merged element is [crc32c(key ++ element)][len][element].
    let mut v = Vec::new();
    for (i, e) in elems.iter().enumerate() {
        if i > 0 {
            v.push(b',');
        }
        let mut framed = (e.len() as i32).to_le_bytes().to_vec();
        framed.extend(e);
        v.extend(super::encoding::crc32c(&[&key, &framed]).to_le_bytes());
        v.extend((framed.len() as i32).to_le_bytes());
        v.extend(&framed);
    }
    let mut m = BTreeMap::new();
    m.insert(key.clone(), v);
    let mut lc = l.clone();
    lc.row_checksums = Some(true);
    assert_eq!(rows(&m, 4, &lc, true).len(), 2);
}

#[test]
fn avro_encoded_value_map_and_list_state() {
    let group = st(GROUP);
    let value = st(LONG_VALUE);
    let with_id = |id: u16, body: Vec<u8>| {
        let mut v = vec![0u8];
        v.extend(id.to_le_bytes());
        v.extend(body);
        v
    };
    // ValueState: key [cf][0x00][id][avro key], value [0x00][id][avro value].
    let mut m = BTreeMap::new();
    let mut k = 2u16.to_le_bytes().to_vec();
    k.extend(with_id(0, avro::write::row(&group, &json!({"key": "k1"}))));
    m.insert(k, with_id(0, avro::write::row(&value, &json!({"value": 7}))));
    let l = layout(VarKind::Value, GROUP, LONG_VALUE, 0, RowFormat::Avro);
    assert_eq!(rows(&m, 2, &l, true), vec![json!({"key": {"key": "k1"}, "value": {"value": 7}, "partition_id": 0})]);
    // Rows written without the schema id (Avro state before schema evolution support) read the same.
    let mut m2 = BTreeMap::new();
    let mut k = 2u16.to_le_bytes().to_vec();
    k.push(0);
    k.extend(avro::write::row(&group, &json!({"key": "k1"})));
    let mut v = vec![0u8];
    v.extend(avro::write::row(&value, &json!({"value": 7})));
    m2.insert(k, v);
    assert_eq!(rows(&m2, 2, &l, true), rows(&m, 2, &l, true));

    // MapState: prefix part without schema id, remaining part with it.
    let ck = st(&composite_key());
    let prefix_schema = StructType { fields: ck.fields[..1].to_vec() };
    let rest_schema = StructType { fields: ck.fields[1..].to_vec() };
    let mut p = vec![0u8];
    p.extend(avro::write::row(&prefix_schema, &json!({"key": {"key": "g"}})));
    let r = with_id(0, avro::write::row(&rest_schema, &json!({"userKey": {"value": "u"}})));
    let mut mm = BTreeMap::new();
    mm.insert(prefix_key(3, &p, &r), with_id(0, avro::write::row(&value, &json!({"value": 5}))));
    let lm = layout(VarKind::Map, &composite_key(), LONG_VALUE, 1, RowFormat::Avro);
    assert_eq!(
        rows(&mm, 3, &lm, true),
        vec![
            json!({"key": {"key": "g"}, "user_map_key": {"value": "u"}, "user_map_value": {"value": 5}, "partition_id": 0})
        ]
    );
    // Not flattened: the map key is the UnsafeRow Spark rebuilds from the Avro user key, named by its toString
    // ({value: "u"} = [0, 16 << 32 | 1, 'u']).
    assert_eq!(
        rows(&mm, 3, &lm, false),
        vec![json!({"key": {"key": "g"}, "map_value": {"[0,1000000001,75]": {"value": 5}}, "partition_id": 0})]
    );

    // ListState with schema evolution: element 1 written with value schema id 0 {value: long}, element 2 with
    // id 1 {value: long, extra: string}; the reader's schema is id 1.
    let v1 = st(
        r#"{"type":"struct","fields":[{"name":"value","type":"long","nullable":true,"metadata":{}},{"name":"extra","type":"string","nullable":true,"metadata":{}}]}"#,
    );
    let e0 = with_id(0, avro::write::row(&value, &json!({"value": 1})));
    let e1 = with_id(1, avro::write::row(&v1, &json!({"value": 2, "extra": "x"})));
    let mut lm = BTreeMap::new();
    let mut k = 4u16.to_le_bytes().to_vec();
    k.extend(with_id(0, avro::write::row(&group, &json!({"key": "k"}))));
    lm.insert(k, list_value(&[e0, e1], true));
    let mut ll = layout(VarKind::List, GROUP, &serde_json::to_string(&json!({"type":"struct","fields":[{"name":"value","type":"long","nullable":true,"metadata":{}},{"name":"extra","type":"string","nullable":true,"metadata":{}}]})).unwrap(), 0, RowFormat::Avro);
    ll.value_schemas = vec![(0, value.clone()), (1, v1.clone())];
    assert_eq!(
        rows(&lm, 4, &ll, false),
        vec![json!({"key": {"key": "k"}, "list_value": [{"value": 1}, {"value": 2, "extra": "x"}], "partition_id": 0})]
    );
}

#[test]
fn hostile_keys_and_values_never_panic() {
    let l = layout(VarKind::Map, &composite_key(), LONG_VALUE, 1, RowFormat::UnsafeRow);
    let la = layout(VarKind::Map, &composite_key(), LONG_VALUE, 1, RowFormat::Avro);
    let lt = layout(VarKind::Timer, &timer_key(), LONG_VALUE, 1, RowFormat::UnsafeRow);
    let ll = layout(VarKind::List, GROUP, LONG_VALUE, 0, RowFormat::UnsafeRow);
    let base = map_entries();
    let (k, v) = base.iter().next().map(|(k, v)| (k.clone(), v.clone())).unwrap();
    for i in 0..k.len() + v.len() {
        for (cut, flip) in [(true, false), (false, true)] {
            let (mut k2, mut v2) = (k.clone(), v.clone());
            if i < k.len() {
                if cut {
                    k2.truncate(i.max(2));
                }
                if flip {
                    k2[i] ^= 0xa5;
                }
            } else {
                let j = i - k.len();
                if cut {
                    v2.truncate(j);
                }
                if flip {
                    v2[j] ^= 0xa5;
                }
            }
            let mut m = BTreeMap::new();
            m.insert(k2, v2);
            for lay in [&l, &la, &lt, &ll] {
                for flatten in [true, false] {
                    let mut out = Vec::new();
                    let _ = rows_for_column_family(&m, 3, lay, flatten, 0, "d", 10, &mut out);
                }
            }
        }
    }
}

#[test]
fn unsafe_row_to_string_like_java() {
    // Long.toHexString: lowercase, no leading zeros, two's complement for negatives.
    let mut b = 0u64.to_le_bytes().to_vec();
    b.extend((-1i64).to_le_bytes());
    b.extend(255u64.to_le_bytes());
    assert_eq!(unsafe_row_to_string(&b), "[0,ffffffffffffffff,ff]");
}

// ---- End to end through `read_state`, on a real transformWithState checkpoint (ss-4.3.0-tws-pandas) ----

/// `writeUTF`.
fn utf(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u16).to_be_bytes());
    out.extend(s.as_bytes());
}

/// A StateSchemaV3 file (`StateSchemaV3File` / `StateSchemaCompatibilityChecker`, as parsed by
/// `schema::parse_schema_v3_file`): `writeUTF("v3")`, int count, then per family `writeUTF(name)`, key schema id
/// (short), the key schema JSON in chunks (int count + `writeUTF` each), value schema id, value schema chunks,
/// key encoder spec chunks, user key encoder schema chunks (`{    }` = none).
fn schema_v3(cfs: &[(&str, String, String, String, Option<&str>)]) -> Vec<u8> {
    let mut out = Vec::new();
    utf(&mut out, "v3");
    out.extend((cfs.len() as i32).to_be_bytes());
    let chunk = |out: &mut Vec<u8>, s: &str| {
        out.extend(1i32.to_be_bytes());
        utf(out, s);
    };
    for (name, key, value, spec, user) in cfs {
        utf(&mut out, name);
        out.extend(0u16.to_be_bytes());
        chunk(&mut out, key);
        out.extend(0u16.to_be_bytes());
        chunk(&mut out, value);
        chunk(&mut out, spec);
        chunk(&mut out, user.unwrap_or("{    }"));
    }
    out
}

fn fixture_files(name: &str) -> Vec<(String, Vec<u8>)> {
    let mut a = crate::testutil::open_fixture(name);
    let paths: Vec<String> = a.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
    paths.into_iter().map(|p| (p.clone(), a.read(&p, 1 << 26).unwrap())).collect()
}

/// Rewrites the `metadata` entry of a `<v>.zip`, keeping the other entries.
fn rezip_with_metadata(zip_bytes: &[u8], f: impl Fn(&mut Value)) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut zin = zip::ZipArchive::new(std::io::Cursor::new(zip_bytes)).unwrap();
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for i in 0..zin.len() {
        let mut e = zin.by_index(i).unwrap();
        let name = e.name().unwrap().to_string();
        let mut data = Vec::new();
        e.read_to_end(&mut data).unwrap();
        if name == "metadata" {
            let text = String::from_utf8(data).unwrap();
            let mut lines = text.lines();
            let head = lines.next().unwrap().to_string();
            let mut j: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
            f(&mut j);
            data = format!("{head}\n{j}").into_bytes();
        }
        w.start_file(name, opts).unwrap();
        w.write_all(&data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn read_state_reads_map_list_and_timers_of_a_real_tws_checkpoint() {
    let mut files = fixture_files("ss-4.3.0-tws-pandas");
    let dir = "state/0/1";
    // Column families 3.. for the new variables, recorded in the snapshot of version 4 (Spark keeps ids stable
    // and records them in every snapshot's metadata).
    for (p, b) in files.iter_mut() {
        if p == &format!("{dir}/4.zip") {
            *b = rezip_with_metadata(b, |j| {
                let m = j["columnFamilyMapping"].as_object_mut().unwrap();
                m.insert("m".into(), 3.into());
                m.insert("l".into(), 4.into());
                m.insert("$procTimers_keyToTimestamp".into(), 5.into());
                m.insert("$procTimers_timestampToKey".into(), 6.into());
            });
        }
        if p == "state/0/_metadata/v2/0" {
            let props = json!({"timeMode": "ProcessingTime", "outputMode": "Update", "stateVariables": [
                {"stateName": "cnt", "stateVariableType": "ValueState", "ttlEnabled": false},
                {"stateName": "m", "stateVariableType": "MapState", "ttlEnabled": false},
                {"stateName": "l", "stateVariableType": "ListState", "ttlEnabled": false},
                {"stateName": "$procTimers_keyToTimestamp", "stateVariableType": "TimerState", "ttlEnabled": false},
                {"stateName": "$procTimers_timestampToKey", "stateVariableType": "TimerState", "ttlEnabled": false}]});
            let text = String::from_utf8(b.clone()).unwrap();
            let mut j: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
            j["operatorPropertiesJson"] = Value::String(props.to_string());
            *b = format!("v2\n{j}").into_bytes();
        }
        if p.starts_with("state/0/_stateSchema/default/0_") && !p.ends_with(".crc") {
            let cnt_key = GROUP.to_string();
            let cnt_val = r#"{"type":"struct","fields":[{"name":"c","type":"long","nullable":true,"metadata":{}}]}"#;
            let no_prefix = r#"{"keyStateEncoderType":"NoPrefixKeyStateEncoderSpec"}"#.to_string();
            let prefix1 = r#"{"keyStateEncoderType":"PrefixKeyScanStateEncoderSpec","numColsPrefixKey":1}"#.to_string();
            let dummy =
                r#"{"type":"struct","fields":[{"name":"__dummy__","type":"void","nullable":true,"metadata":{}}]}"#;
            *b = schema_v3(&[
                ("cnt", cnt_key.clone(), cnt_val.to_string(), no_prefix.clone(), None),
                ("m", composite_key(), LONG_VALUE.to_string(), prefix1.clone(), Some(USER_KEY)),
                ("l", cnt_key, LONG_VALUE.to_string(), no_prefix, None),
                ("$procTimers_keyToTimestamp", timer_key(), dummy.to_string(), prefix1, None),
            ]);
        }
    }
    // Batch 4 (state version 5): the commit and offsets entries, and 5.changelog (v2 records: 0x01 put, 0x11 merge)
    // on top of 4.zip.
    let copy = |files: &Vec<(String, Vec<u8>)>, from: &str| files.iter().find(|(p, _)| p == from).unwrap().1.clone();
    let (c3, o3) = (copy(&files, "commits/3"), copy(&files, "offsets/3"));
    files.push(("commits/4".into(), c3));
    files.push(("offsets/4".into(), o3));
    let mut cl = 2u16.to_be_bytes().to_vec();
    cl.extend_from_slice(b"v2");
    let mut rec = |t: u8, k: Vec<u8>, v: Vec<u8>| {
        cl.push(t);
        cl.extend((k.len() as i32).to_be_bytes());
        cl.extend(&k);
        cl.extend((v.len() as i32).to_be_bytes());
        cl.extend(&v);
    };
    for (k, v) in map_entries() {
        if k.starts_with(&3u16.to_le_bytes()) {
            rec(0x01, k, v);
        }
    }
    let lkey = plain_key(4, &urow(&[F::Str("k")]));
    for x in [1, 2] {
        rec(0x11, lkey.clone(), list_value(&[ver(&urow(&[F::Long(x)]))], true));
    }
    let tprefix = ver(&urow(&[F::Row(urow(&[F::Str("a")]))]));
    rec(0x01, prefix_key(5, &tprefix, &ver(&urow(&[F::Long(10500)]))), ver(&urow(&[F::Null])));
    // The same changelog with one more list record whose value is no row (read back below: the error names the
    // changelog and the record's offset).
    let bad_at = cl.len();
    let mut bad_cl = cl.clone();
    let bad_key = plain_key(4, &urow(&[F::Str("z")]));
    bad_cl.push(0x01);
    bad_cl.extend((bad_key.len() as i32).to_be_bytes());
    bad_cl.extend(&bad_key);
    bad_cl.extend(3i32.to_be_bytes());
    bad_cl.extend([9, 9, 9]);
    bad_cl.push(0x00);
    cl.push(0x00);
    let mut bad_files = files.clone();
    bad_files.push((format!("{dir}/5.changelog"), crate::codec::write::lz4_block_stream(&bad_cl, 32 * 1024)));
    files.push((format!("{dir}/5.changelog"), crate::codec::write::lz4_block_stream(&cl, 32 * 1024)));
    let mut a = MemArchive::new("t", files, Default::default()).unwrap();

    let q = |var: Option<&str>, timers: bool, flatten: bool| StateQuery {
        state_var: var.map(str::to_string),
        read_registered_timers: timers,
        flatten_collection_types: flatten,
        batch_id: Some(4),
        partition: Some(1),
        ..Default::default()
    };
    let j = |rows: Vec<crate::state::StateRow>| rows.iter().map(|r| r.to_json()).collect::<Vec<_>>();
    let p1 = |mut v: Value| {
        v["partition_id"] = 1.into();
        v
    };
    assert_eq!(
        j(read_state(&mut a, "", &q(None, true, true)).unwrap()),
        vec![json!({"key": {"key": "a"}, "expiration_timestamp_ms": 10500, "partition_id": 1})]
    );
    let maps = j(read_state(&mut a, "", &q(Some("m"), false, true)).unwrap());
    assert_eq!(maps.len(), 3);
    assert_eq!(
        maps[0],
        p1(json!({"key": {"key": "g1"}, "user_map_key": {"value": "a"}, "user_map_value": {"value": 1}}))
    );
    let grouped = j(read_state(&mut a, "", &q(Some("m"), false, false)).unwrap());
    assert_eq!(grouped.len(), 2);
    assert_eq!(
        j(read_state(&mut a, "", &q(Some("l"), false, false)).unwrap()),
        vec![json!({"key": {"key": "k"}, "list_value": [{"value": 1}, {"value": 2}], "partition_id": 1})]
    );
    assert_eq!(j(read_state(&mut a, "", &q(Some("l"), false, true)).unwrap()).len(), 2);
    // The value state of the fixture still reads as Spark dumped it (3 keys in partition 1 at batch 3).
    assert_eq!(read_state(&mut a, "", &q(Some("cnt"), false, true)).unwrap().len(), 3);
    // Spark's option errors.
    let e = read_state(&mut a, "", &q(Some("m"), true, true)).unwrap_err();
    assert_eq!(e.error_class.as_deref(), Some("STDS_CONFLICT_OPTIONS"));
    let e = read_state(&mut a, "", &q(Some("nope"), false, true)).unwrap_err();
    assert_eq!(e.error_class.as_deref(), Some("STDS_INVALID_OPTION_VALUE.WITH_MESSAGE"));
    // A list entry that is no row: the error names the changelog and the record's offset, not the folder.
    let mut bad = MemArchive::new("t", bad_files, Default::default()).unwrap();
    let e = read_state(&mut bad, "", &q(Some("l"), false, true)).unwrap_err();
    let want = format!("{dir}/5.changelog");
    assert_eq!((e.path.as_str(), e.offset), (want.as_str(), Some(bad_at as u64)), "{e}");
    assert!(e.message.contains(&format!("store {dir}")), "{e}");
}

#[test]
fn timers_of_an_operator_without_time_mode_are_spark_s_error() {
    let mut a = crate::testutil::open_fixture("ss-4.3.0-tws-pandas");
    let e = read_state(&mut a, "", &StateQuery { read_registered_timers: true, ..Default::default() }).unwrap_err();
    assert!(e.message.contains("TimeMode=None"), "{e}");
    assert_eq!(e.error_class.as_deref(), Some("STDS_INVALID_OPTION_VALUE.WITH_MESSAGE"));
}

/// Spark's option checks against the operator metadata (`StateDataSource.runStateVarChecks`): a transformWithState
/// operator needs `stateVarName` (or `readRegisteredTimers`); other operators take neither.
#[test]
fn state_var_options_are_checked_against_the_operator_like_spark() {
    let mut a = crate::testutil::open_fixture("ss-4.3.0-tws-pandas");
    let e = read_state(&mut a, "", &StateQuery::default()).unwrap_err();
    assert_eq!(e.error_class.as_deref(), Some("STDS_REQUIRED_OPTION_UNSPECIFIED"), "{e}");
    let e = read_state(&mut a, "", &StateQuery { state_var: Some("nope".into()), ..Default::default() }).unwrap_err();
    assert!(e.message.contains("State variable nope is not defined"), "{e}");
    let mut agg = crate::testutil::open_fixture("ss-4.3.0-agg-rocksdb");
    let e = read_state(&mut agg, "", &StateQuery { state_var: Some("x".into()), ..Default::default() }).unwrap_err();
    assert!(e.message.contains("only supported with the transformWithState operator"), "{e}");
    assert_eq!(e.error_class.as_deref(), Some("STDS_INVALID_OPTION_VALUE.WITH_MESSAGE"));
}
