//! RocksDBStateStoreProvider: reading `<v>.zip`, changelogs and SST files of a state store.

pub mod sst;
