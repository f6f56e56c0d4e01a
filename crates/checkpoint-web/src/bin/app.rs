//! The page's wasm (Trunk: `<link data-trunk rel="rust" data-bin="app" data-type="main">`, built without the lib's
//! default features, which only tests and scripting need, and with its `page` feature, the `Inspector` class). Trunk's bootstrap puts its exports on
//! `window.wasmBindings` for web/js/: the one class `Inspector` (crate docs). The diagnosis itself runs in the
//! worker bin.

// Linked so that its #[wasm_bindgen] exports are in this module.
pub use checkpoint_web::Inspector;

fn main() {}
