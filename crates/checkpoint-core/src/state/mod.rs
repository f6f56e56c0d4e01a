//! State store readers (HDFS-backed and RocksDB providers).

pub mod rocksdb;
