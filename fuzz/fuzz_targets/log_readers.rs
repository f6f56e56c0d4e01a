//! Every metadata-log reader on the same bytes: metadata, offsets, commits, file source/sink logs, operator
//! metadata, state schema files (v1-v3), Hadoop .crc and Spark checksum files; differential: the offsets reader
//! with the confs only checked gives the full parse's answer less the confs; the file log parser and the sidecar
//! sums fed in pieces (sizes taken from the input) give the whole-file answer.
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
    let whole = log::file_log::parse(data);
    // The same bytes in pieces whose sizes come from the input's first bytes (1..=64), as a streamed read hands them.
    let sizes: Vec<usize> = data.iter().take(8).map(|b| usize::from(b % 64) + 1).collect();
    let pieces = || {
        let mut at = 0;
        sizes.iter().cycle().map_while(move |&n| {
            let end = (at + n).min(data.len());
            let p = (at < data.len()).then(|| &data[at..end]);
            at = end;
            p
        })
    };
    let mut p = log::file_log::Parser::new(u64::MAX, usize::MAX);
    pieces().for_each(|x| p.push(x));
    assert_eq!(p.finish(), whole, "the file log parser in pieces differs from the whole-file parse");
    let _ = log::operator_metadata::parse(data);
    let _ = checkpoint_core::state::schema::parse_schema_file(data);
    let _ = checkpoint_core::state::schema::parse_schema_v3_file(data);
    if let Ok(c) = checkpoint_core::hadoop::parse(data) {
        let whole = checkpoint_core::hadoop::verify(&c, data);
        let mut v = checkpoint_core::hadoop::Verifier::new(&c);
        pieces().for_each(|x| v.update(x));
        assert_eq!(v.finish(), whole, "the .crc sums in pieces differ");
    }
    if let Ok(c) = checkpoint_core::checksum::parse(data) {
        let whole = checkpoint_core::checksum::verify(&c, data);
        let mut v = checkpoint_core::checksum::Verifier::new(&c);
        pieces().for_each(|x| v.update(x));
        assert_eq!(v.finish(), whole, "the checksum in pieces differs");
    }
});
