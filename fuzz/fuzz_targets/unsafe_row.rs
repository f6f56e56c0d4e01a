//! UnsafeRow decoding and structural validation with a schema (the first byte picks one of the schemas, which
//! cover every type family the state stores hold), and the HDFS provider's record framing on the same bytes.
#![no_main]
use checkpoint_core::state::schema::StructType;
use checkpoint_core::state::unsafe_row::{decode_row, validate_structure, write_row_json};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const SCHEMAS: [&str; 3] = [
    // A windowed aggregation's key and value (the shared fixtures' agg queries).
    r#"{"type":"struct","fields":[{"name":"window","type":{"type":"struct","fields":[{"name":"start","type":"timestamp","nullable":true,"metadata":{}},{"name":"end","type":"timestamp","nullable":true,"metadata":{}}]},"nullable":false,"metadata":{}},{"name":"count","type":"long","nullable":false,"metadata":{}}]}"#,
    // Every fixed-length and variable-length family.
    r#"{"type":"struct","fields":[{"name":"b","type":"boolean","nullable":true,"metadata":{}},{"name":"i","type":"integer","nullable":true,"metadata":{}},{"name":"d","type":"double","nullable":true,"metadata":{}},{"name":"s","type":"string","nullable":true,"metadata":{}},{"name":"bin","type":"binary","nullable":true,"metadata":{}},{"name":"dec","type":"decimal(10,2)","nullable":true,"metadata":{}},{"name":"big","type":"decimal(38,10)","nullable":true,"metadata":{}},{"name":"dt","type":"date","nullable":true,"metadata":{}},{"name":"ts","type":"timestamp_ntz","nullable":true,"metadata":{}}]}"#,
    // Nested arrays, maps and structs.
    r#"{"type":"struct","fields":[{"name":"a","type":{"type":"array","elementType":"integer","containsNull":true},"nullable":true,"metadata":{}},{"name":"m","type":{"type":"map","keyType":"string","valueType":"long","valueContainsNull":true},"nullable":true,"metadata":{}},{"name":"n","type":{"type":"struct","fields":[{"name":"x","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}"#,
];

fn schemas() -> &'static [StructType] {
    static S: OnceLock<Vec<StructType>> = OnceLock::new();
    S.get_or_init(|| SCHEMAS.iter().map(|j| StructType::from_json_str(j).expect("schema")).collect())
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, row)) = data.split_first() else { return };
    let schema = &schemas()[pick as usize % SCHEMAS.len()];
    let _ = validate_structure(row, schema);
    let _ = decode_row(row, schema);
    let mut out = String::new();
    let _ = write_row_json(row, schema, &mut out);
    let _ = checkpoint_core::state::hdfs::scan_records(row);
});
