//! Every metadata-log reader on the same bytes: metadata, offsets, commits, file source/sink logs, operator
//! metadata, state schema files (v1-v3), Hadoop .crc and Spark checksum files; differential: the offsets reader
//! with the confs only checked gives the full parse's answer less the confs.
#![no_main]
use checkpoint_core::log;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = log::metadata::parse(data);
    // The offsets reader with the recorded confs checked, not built (the log stage's way for older batches):
    // the same answer as the full parse, less the confs.
    let full = log::offsets::parse(data);
    let checked = log::offsets::parse_with(data, false, log::offsets::MAX_SOURCE_OFFSETS);
    let want = full.map(|mut o| {
        if let Some(m) = &mut o.metadata {
            m.conf.clear();
        }
        o
    });
    assert_eq!(checked, want, "offsets with the conf checked differ from the full parse");
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
