//! Every metadata-log reader on the same bytes: metadata, offsets, commits, file source/sink logs, operator
//! metadata, state schema files (v1-v3), Hadoop .crc and Spark checksum files.
#![no_main]
use checkpoint_core::log;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = log::metadata::parse(data);
    let _ = log::offsets::parse(data);
    let _ = log::commits::parse(data);
    let _ = log::file_log::parse(data);
    let _ = log::operator_metadata::parse(data);
    let _ = checkpoint_core::state::schema::parse_schema_file(data);
    let _ = checkpoint_core::state::schema::parse_schema_v3_file(data);
    if let Ok(c) = checkpoint_core::hadoop::parse(data) {
        let _ = checkpoint_core::hadoop::verify(&c, data);
    }
    if let Ok(c) = checkpoint_core::checksum::parse(data) {
        let _ = checkpoint_core::checksum::verify(&c, data);
    }
});
