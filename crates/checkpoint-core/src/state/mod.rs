//! State stores (FORMATS.md §8–§13): the HDFS-backed provider's record files, UnsafeRow decoding, schema files,
//! operator metadata, and the `statestore` / `state-metadata` views Spark's State Data Source gives.

pub mod hdfs;

pub mod rocksdb;
