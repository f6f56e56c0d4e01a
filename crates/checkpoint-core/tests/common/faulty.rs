//! An archive that lists a real fixture but fails as an input can: reads of some paths fail with a given error
//! (a zip entry that does not unpack, a directory's file the user may not read), and some entries are listed as
//! ones it cannot give at all ([`Archive::unreadable_entries`]).

use checkpoint_core::archive::{Archive, ArchiveError, MemArchive};

/// [`MemArchive`] with `on_read` (path, error) failing when read and `unreadable` listed as unreadable entries.
pub struct Faulty {
    pub inner: MemArchive,
    pub on_read: Vec<(String, ArchiveError)>,
    pub unreadable: Vec<(String, ArchiveError)>,
}

impl Faulty {
    /// No faults yet.
    pub fn new(inner: MemArchive) -> Self {
        Faulty { inner, on_read: Vec::new(), unreadable: Vec::new() }
    }
}

impl Archive for Faulty {
    fn entries(&self) -> &[checkpoint_core::Entry] {
        self.inner.entries()
    }
    fn read(&mut self, path: &str, max: u64) -> Result<Vec<u8>, ArchiveError> {
        match self.on_read.iter().find(|(p, _)| p == path) {
            Some((_, e)) => Err(e.clone()),
            None => self.inner.read(path, max),
        }
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn input_bytes(&self) -> u64 {
        self.inner.input_bytes()
    }
    fn unreadable_entries(&self) -> &[(String, ArchiveError)] {
        &self.unreadable
    }
}
