//! The whole pipeline on arbitrary bytes as a zip: open (central directory only), diagnose, and the State Data
//! Source reader. Any panic, hang or allocation past the RSS limit is a bug.
#![no_main]
use checkpoint_core::archive::{Limits, ZipInput};
use checkpoint_core::state::{read_state, StateQuery};
use checkpoint_core::{diagnose, Context};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let len = data.len() as u64;
    if let Ok(mut a) = ZipInput::open(std::io::Cursor::new(data), len, "fuzz.zip", Limits::default()) {
        let _ = diagnose(&mut a, &Context::default());
        let _ = read_state(&mut a, "", &StateQuery::default());
    }
});
