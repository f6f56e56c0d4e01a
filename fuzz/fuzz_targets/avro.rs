//! Avro-encoded state rows (RocksDB with `stateStore.encodingFormat=avro`) with a schema (first byte picks it):
//! decoding to values and to UnsafeRow bytes.
#![no_main]
use checkpoint_core::state::rocksdb::avro::{decode_avro_row, decode_avro_to_unsafe_row};
use checkpoint_core::state::schema::StructType;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const SCHEMAS: [&str; 2] = [
    r#"{"type":"struct","fields":[{"name":"k","type":"string","nullable":true,"metadata":{}},{"name":"v","type":"long","nullable":false,"metadata":{}},{"name":"d","type":"decimal(20,4)","nullable":true,"metadata":{}}]}"#,
    r#"{"type":"struct","fields":[{"name":"a","type":{"type":"array","elementType":"integer","containsNull":true},"nullable":true,"metadata":{}},{"name":"m","type":{"type":"map","keyType":"string","valueType":"double","valueContainsNull":true},"nullable":true,"metadata":{}},{"name":"s","type":{"type":"struct","fields":[{"name":"t","type":"timestamp","nullable":true,"metadata":{}},{"name":"b","type":"binary","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}"#,
];

fn schemas() -> &'static [StructType] {
    static S: OnceLock<Vec<StructType>> = OnceLock::new();
    S.get_or_init(|| SCHEMAS.iter().map(|j| StructType::from_json_str(j).expect("schema")).collect())
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, row)) = data.split_first() else { return };
    let schema = &schemas()[pick as usize % SCHEMAS.len()];
    let _ = decode_avro_row(row, schema);
    let _ = decode_avro_to_unsafe_row(row, schema);
});
