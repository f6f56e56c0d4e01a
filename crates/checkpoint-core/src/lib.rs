//! `checkpoint-core`: reads Apache Spark streaming checkpoints and explains why a restart fails.
//!
//! Pure Rust, no I/O, no browser types: it builds and tests natively and for `wasm32-unknown-unknown`.
//! The flow runs one way (see `../shared/reference/DESIGN.md`):
//!
//! ```text
//! bytes ─► archive ─► layout ─► format readers ─► model ─► checks ─► report ─► front ends
//! ```
//!
//! Entry point: [`diagnose`](fn@diagnose)`(archive: &mut dyn Archive, ctx: &Context) -> Report`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod archive;
pub mod checks;
pub mod checksum;
pub mod codec;
pub mod context;
pub mod delta;
pub mod diagnose;
pub mod dir_index;
pub mod dstream;
pub mod hadoop;
pub mod javaser;
pub mod kafka_offsets;
pub mod layout;
pub mod log;
pub mod model;
pub mod parse_error;
pub mod path_index;
pub mod predict;
pub mod present;
pub mod read;
pub mod report;
pub mod restart_chain;
pub mod restart_plan;
pub mod share;
pub mod source;
pub mod state;
pub mod state_files;
pub mod state_integrity;
pub mod time;

#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod issue4_tests;
#[cfg(test)]
mod log_budget_tests;
#[cfg(test)]
#[cfg(test)]
pub(crate) mod testutil;

pub use archive::{Archive, ArchiveError, Entry, Limits, MemArchive, ZipInput};
pub use context::{Context, SparkVersion};
pub use diagnose::{diagnose, diagnose_progressive};
pub use report::Report;
