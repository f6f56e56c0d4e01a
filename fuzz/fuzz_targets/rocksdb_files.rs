//! The RocksDB provider's files: block-based SST tables (footer, index, data blocks, checksums), changelogs
//! (every version's framing, bounded records), the `<v>.zip` checks, and the integrity check of stream files.
#![no_main]
use checkpoint_core::state::rocksdb::{changelog, sst};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = sst::SstLimits {
        max_block_bytes: 1 << 20,
        max_total_bytes: 16 << 20,
        max_entries: 100_000,
        max_entry_expansion: 32,
        max_copied_bytes: 64 << 20,
    };
    let _ = sst::read_footer(data);
    let _ = sst::read_sst(data, limits);
    let _ = changelog::detect_version(data);
    let _ = changelog::parse_changelog(data, 100_000);
    let _ = checkpoint_core::state_integrity::check_stream_file("f.changelog", data, false, true);
    let _ = checkpoint_core::state_integrity::check_stream_file("f.snapshot", data, true, false);
});
