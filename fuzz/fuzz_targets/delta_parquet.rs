//! A Delta checkpoint in Parquet (`_delta_log/<v>.checkpoint.parquet`): every row as JSON and its actions. The
//! `parquet` crate panics on some corrupt files (`delta::parquet_guard` refuses those first); a panic here is a
//! file the guard lets through, which aborts the page (wasm32).
#![no_main]
use checkpoint_core::delta::actions::actions_of;
use checkpoint_core::delta::parquet::for_each_row;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut actions = 0usize;
    let _ = for_each_row(data.to_vec(), |row| actions += actions_of(&row).len());
});
