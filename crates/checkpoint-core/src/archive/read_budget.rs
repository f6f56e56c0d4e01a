//! The read limits every [`Archive`](super::Archive) applies ([`ReadBudget`]) and the capped read of one entry's stream, whole
//! ([`read_capped`]) or in pieces ([`read_capped_each`]).

use super::{ArchiveError, Limits};
use std::io::Read;

/// The read budget every [`Archive`](super::Archive) applies, one copy for all of them (the zip, a folder on disk, a folder
/// dropped in the page): an entry at most `min(max_bytes, limits.max_entry_bytes)`, all reads together at most
/// `limits.max_total_bytes`. `admit` says whether a read may start and its cap; `spend` books what was read.
#[derive(Debug, Clone, Copy)]
pub struct ReadBudget {
    /// The archive's limits.
    pub limits: Limits,
    /// Bytes read (inflated) so far.
    pub total_read: u64,
}

impl ReadBudget {
    /// A fresh budget under `limits`.
    pub fn new(limits: Limits) -> Self {
        ReadBudget { limits, total_read: 0 }
    }

    /// The cap of a read of `path` (declared `size` bytes) asked for with `max_bytes`. Errors: `OverLimit` naming
    /// the path when the entry is over the cap (`what`: "entry size") or the total would be over its limit.
    pub fn admit(&self, path: &str, size: u64, max_bytes: u64) -> Result<u64, ArchiveError> {
        let cap = max_bytes.min(self.limits.max_entry_bytes);
        if size > cap {
            return Err(ArchiveError::OverLimit {
                what: "entry size".into(),
                path: Some(path.to_string()),
                value: size,
                limit: cap,
            });
        }
        let total = self.total_read.saturating_add(size);
        if total > self.limits.max_total_bytes {
            return Err(ArchiveError::OverLimit {
                what: "total bytes read".into(),
                path: Some(path.to_string()),
                value: total,
                limit: self.limits.max_total_bytes,
            });
        }
        Ok(cap)
    }

    /// Books `n` bytes read.
    pub fn spend(&mut self, n: u64) {
        self.total_read = self.total_read.saturating_add(n);
    }
}

/// Reads `src` to its end, at most `cap` bytes: one more byte is an `OverLimit` naming `path` (`what` says the
/// stream held more than its entry declares: a lying size or a bomb). Never allocates more than `cap` (+ one
/// read buffer) whatever the stream claims. An I/O error is `Corrupt` at the offset reached.
pub fn read_capped(src: impl Read, path: &str, cap: u64) -> Result<Vec<u8>, ArchiveError> {
    let mut out = Vec::with_capacity(cap.min(1 << 20) as usize);
    read_capped_each(src, path, cap, &mut |piece| out.extend_from_slice(piece))?;
    Ok(out)
}

/// [`read_capped`] without holding the whole: hands `sink` consecutive pieces (of at most 16 KiB) of `src`, at
/// most `cap` bytes in all, and returns how many it handed. The same errors as [`read_capped`], which may come
/// after pieces were handed (the byte past `cap` is never handed).
pub fn read_capped_each(
    src: impl Read,
    path: &str,
    cap: u64,
    sink: &mut dyn FnMut(&[u8]),
) -> Result<u64, ArchiveError> {
    let mut limited = src.take(cap.saturating_add(1));
    let mut buf = [0u8; 16 * 1024];
    let mut handed = 0u64;
    loop {
        match limited.read(&mut buf) {
            Ok(0) => return Ok(handed),
            Ok(k) => {
                let within = (k as u64).min(cap - handed) as usize;
                if within < k {
                    return Err(ArchiveError::OverLimit {
                        what: "inflated size (more than the size the entry declares; possible zip bomb)".into(),
                        path: Some(path.to_string()),
                        value: handed + k as u64,
                        limit: cap,
                    });
                }
                sink(&buf[..k]);
                handed += k as u64;
            }
            Err(e) => {
                return Err(ArchiveError::Corrupt {
                    path: path.to_string(),
                    offset: handed,
                    reason: e.to_string(),
                    header: None,
                })
            }
        }
    }
}
