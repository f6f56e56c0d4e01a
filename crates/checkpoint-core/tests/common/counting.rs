//! An archive that counts the reads of each path (how often a test's diagnosis or state read opens a file).

use checkpoint_core::archive::{Archive, MemArchive};
use std::collections::HashMap;

/// A [`MemArchive`] whose reads are counted by path.
pub struct Counting {
    /// The archive read.
    pub inner: MemArchive,
    /// Reads of each path so far.
    pub reads: HashMap<String, usize>,
}

impl Counting {
    /// Counts the reads of `inner`, from none.
    pub fn new(inner: MemArchive) -> Self {
        Counting { inner, reads: HashMap::new() }
    }
}

impl Archive for Counting {
    fn entries(&self) -> &[checkpoint_core::Entry] {
        self.inner.entries()
    }
    fn read(&mut self, path: &str, max: u64) -> Result<Vec<u8>, checkpoint_core::ArchiveError> {
        *self.reads.entry(path.to_string()).or_default() += 1;
        self.inner.read(path, max)
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn input_bytes(&self) -> u64 {
        self.inner.input_bytes()
    }
}
