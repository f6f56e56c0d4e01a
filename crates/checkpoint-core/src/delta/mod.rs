//! The Delta Lake source: its offset in the offset log ([`offset`]), the source table's `_delta_log`
//! ([`table`], read by [`reader`] over an [`crate::Archive`], Parquet checkpoints by [`parquet`]), Delta's
//! retention settings ([`interval`]), schema comparison as Delta's streaming source does it ([`schema`]),
//! and the facts a restart plan needs ([`facts`]).
//!
//! The spec is delta-io/delta's source: `sources/DeltaSourceOffset.scala`, `sources/DeltaSource.scala`,
//! `DeltaErrors.scala` (+ `delta-error-classes.json`), `SnapshotManagement.scala`, `MetadataCleanup.scala`,
//! `DeltaConfig.scala`, `util/FileNames.scala`.

pub mod actions;
pub mod facts;
pub mod interval;
pub mod offset;
pub mod page_headers;
pub mod parquet;
pub mod parquet_guard;
pub mod reader;
pub mod release;
pub mod row_walk;
pub mod schema;
pub mod schema_log;
pub mod table;

pub use table::DeltaLog;
