//! Zip entries inflated ahead of their reads by another reader of the same zip: the seam for a front end with
//! a second core (the CLI's read-ahead thread). The core stays single-threaded and does no I/O: a front end
//! makes an [`EntryInflater`] over its own reader of the same bytes ([`super::ZipInput::inflater`]), runs it
//! where it likes, and hands the [`super::ZipInput`] a [`ReadAhead`] to ask
//! ([`super::ZipInput::set_read_ahead`]).
//!
//! What a read returns never depends on it. The [`super::ZipInput`] still names each entry, checks it against
//! its limits and books the bytes; it takes an entry inflated ahead only when its own read would inflate the
//! whole entry (the entry's declared size is within the read's cap), and the inflater runs the very reading
//! code (local header, inflate, declared size, CRC-32) with that cap. An entry whose read ahead failed is read
//! again by the [`super::ZipInput`] itself, so that a damaged entry's error and its offset are those of a read
//! without read-ahead.

use super::zip_entries::{EntryReader, Slot};
use std::io::{Read, Seek};

/// Entries inflated ahead of their reads (the CLI's read-ahead thread). [`super::ZipInput`] tells it the entries
/// it is about to read, in the order it reads them ([`ReadAhead::hint`], from [`super::Archive::prefetch`]), and
/// asks for each when it reads it ([`ReadAhead::take`]).
pub trait ReadAhead: Send {
    /// These entries (positions in [`super::Archive::entries`]) are read next, in this order. Only entries of at
    /// most [`READ_AHEAD_MAX_ENTRY`] declared bytes are named, and none that the archive's read refuses from the
    /// listing alone (a method it does not inflate, an overlap, a ratio over [`super::Limits::max_ratio`], a size
    /// past what is left of [`super::Limits::max_total_bytes`]).
    fn hint(&mut self, entries: &[u32]);
    /// The inflated bytes of the entry at `entry`, when it was inflated ahead and the inflation succeeded
    /// (waiting for an inflation under way); `None` otherwise: the caller reads the entry itself.
    fn take(&mut self, entry: u32) -> Option<Vec<u8>>;
}

/// The largest entry named in a [`ReadAhead::hint`], in declared bytes: log files, sidecars, state files
/// (HDFS deltas and snapshots, RocksDB zips and SSTs) of a store of ordinary size. A larger one is read when it
/// is asked for, streamed, never held whole.
pub const READ_AHEAD_MAX_ENTRY: u64 = 4 * 1024 * 1024;

/// A second reader of a zip's entries, made by [`super::ZipInput::inflater`]: what the [`super::ZipInput`]
/// kept of the central directory to read each entry (offsets, sizes, CRC-32), copied (32 bytes an entry), over
/// its own reader of the same bytes. `Send` when the reader is, so that it can run on another thread.
pub struct EntryInflater<R: Read + Seek> {
    reader: R,
    slots: Vec<Slot>,
    /// (compressed, declared) bytes of each entry, as listed.
    sizes: Vec<(u64, u64)>,
    inflater: EntryReader,
}

impl<R: Read + Seek> EntryInflater<R> {
    pub(super) fn new(reader: R, slots: Vec<Slot>, sizes: Vec<(u64, u64)>) -> Self {
        EntryInflater { reader, slots, sizes, inflater: EntryReader::new() }
    }

    /// The declared (inflated) size in bytes of the entry at `entry`, as the central directory lists it; `None`
    /// for no such entry.
    pub fn declared(&self, entry: u32) -> Option<u64> {
        self.sizes.get(entry as usize).map(|s| s.1)
    }

    /// The inflated bytes of the entry at `entry` (a position in the [`super::ZipInput`]'s entries), read as
    /// [`super::Archive::read_each`] reads it with a cap of its declared size: the local header checked, at
    /// most the declared bytes, the CRC-32 checked at the end. `None` for an unknown entry, an entry over
    /// [`READ_AHEAD_MAX_ENTRY`], or one whose read failed or gave fewer bytes than declared (the
    /// [`super::ZipInput`] reads it again itself, to report what it finds). The bytes are held in a buffer of
    /// about their length (never reserved from the declared size beyond 1 MiB).
    pub fn inflate(&mut self, entry: u32) -> Option<Vec<u8>> {
        let i = entry as usize;
        let (slot, (compressed, declared)) = (*self.slots.get(i)?, *self.sizes.get(i)?);
        if declared > READ_AHEAD_MAX_ENTRY {
            return None;
        }
        // Room for the declared size up to 1 MiB, as `read_capped` reserves: a size that lies high reserves no
        // more than the bytes that come.
        let mut out = Vec::with_capacity(declared.min(1 << 20) as usize);
        let read = self.inflater.read_each(&mut self.reader, slot, "", compressed, declared, declared, &mut |piece| {
            out.extend_from_slice(piece)
        });
        // Fewer bytes than declared (a CRC-32 that matches them) is left to the archive's own read.
        read.ok().filter(|n| *n == declared).map(|_| out)
    }
}
