//! `checkpoint-core`: reads Apache Spark streaming checkpoints and explains why a restart fails.
//!
//! Pure Rust, no I/O, no browser types: it builds and tests natively and for `wasm32-unknown-unknown`.
//! The flow runs one way (see `../shared/reference/DESIGN.md`):
//!
//! ```text
//! bytes ─► archive ─► layout ─► format readers ─► model ─► checks ─► report ─► front ends
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod archive;
pub mod codec;
pub mod context;
pub mod report;
pub mod state;

#[cfg(test)]
pub(crate) mod testutil;

pub use archive::{Archive, ArchiveError, Entry, Limits, MemArchive, ZipInput};
pub use context::{Context, SparkVersion};
pub use report::Report;
