//! Exports for `run.mjs`: `buf(len)` allocates the zip's bytes in wasm memory, `run(ptr, len)` diagnoses them with
//! `diagnose_progressive` (calling the imported `env.mark` at the verdict) and returns the report's JSON length,
//! `reserve(len)` grows the heap first as the page's worker does (`reserve_heap`).
use checkpoint_core::archive::{Limits, ZipInput};
use checkpoint_core::{diagnose_progressive, Context};

#[link(wasm_import_module = "env")]
extern "C" {
    fn mark();
}

/// A buffer of `len` bytes for the zip, never freed (one per run of `run.mjs`).
#[no_mangle]
pub extern "C" fn buf(len: usize) -> *mut u8 {
    let mut v = vec![0u8; len];
    let p = v.as_mut_ptr();
    std::mem::forget(v);
    p
}

/// Diagnoses the zip at `ptr` (`len` bytes, from [`buf`]); 0 = not a zip, else the report's JSON length.
#[no_mangle]
pub extern "C" fn run(ptr: *mut u8, len: usize) -> u32 {
    // SAFETY: `ptr` is a `buf(len)` allocation that `run.mjs` filled and never frees.
    let data: &'static [u8] = unsafe { std::slice::from_raw_parts(ptr, len) };
    let Ok(mut a) = ZipInput::open(std::io::Cursor::new(data), len as u64, "in.zip", Limits::default()) else {
        return 0;
    };
    // SAFETY: an imported JS function without arguments.
    let r = diagnose_progressive(&mut a, &Context::default(), &mut |_| unsafe { mark() });
    serde_json::to_string(&r).map(|s| s.len() as u32).unwrap_or(0)
}

/// Grows the heap by `len` bytes through the allocator, as the worker's `reserve_heap` does.
#[no_mangle]
pub extern "C" fn reserve(len: usize) {
    drop(std::hint::black_box(Vec::<u8>::with_capacity(len)));
}
