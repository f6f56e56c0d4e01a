//! [`ArchiveError`]: why an archive, or one entry of it, cannot be read, and what that says about the entry's
//! file (damage in the archive, or not verified by this inspector); [`method_name`] for a zip method number.

use std::fmt;

/// Why an archive, or one entry of it, cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArchiveError {
    /// The input is not a zip at all (no end of central directory), or its directory is damaged.
    NotAZip {
        /// The zip reader's reason.
        reason: String,
    },
    /// The input has no bytes.
    Empty,
    /// A limit of [`super::Limits`] was exceeded; `what` names it, `path` the entry when it is about one.
    OverLimit {
        /// Which limit (e.g. "compression ratio (possible zip bomb)").
        what: String,
        /// The entry concerned, when the limit is about one entry.
        path: Option<String>,
        /// The value found.
        value: u64,
        /// The limit.
        limit: u64,
    },
    /// An entry path that tries to leave the archive (`..`, absolute) or is not valid UTF-8.
    BadPath {
        /// The entry name as stored (not UTF-8: with U+FFFD for the bytes that are not).
        path: String,
        /// Byte offset of the entry's local header in the input, for a zip entry.
        header: Option<u64>,
    },
    /// The entry is not in the archive.
    NotFound {
        /// The path asked for.
        path: String,
    },
    /// The entry could not be inflated; `offset` is the byte offset inside the inflated stream where it failed.
    Corrupt {
        /// The entry.
        path: String,
        /// Byte offset inside the inflated stream.
        offset: u64,
        /// The inflater's reason.
        reason: String,
        /// Byte offset of the entry's local header in the input, for a zip entry (where its damage is).
        header: Option<u64>,
    },
    /// The entry is stored with a compression method this inspector does not inflate (APPNOTE 4.4.5: bzip2 =
    /// 12, LZMA = 14, Zstandard = 93, XZ = 95, ...), or is encrypted. Not damage: the zip has to be re-made
    /// with deflate (the default of every zip tool) to check the file.
    UnsupportedCompression {
        /// The entry.
        path: String,
        /// The APPNOTE method number (`u16::MAX` for an encrypted entry).
        method: u16,
    },
    /// The entry's compressed bytes overlap another entry's (the local header at `other_offset` lies inside
    /// this entry's data): an overlapping-entry zip bomb, or a broken zip. The entry is not inflated.
    Overlapping {
        /// The entry.
        path: String,
        /// Byte offset of its local header in the input.
        offset: u64,
        /// The entry whose local header lies inside its data.
        other: String,
    },
    /// The input lists the entry but cannot give its bytes, which says nothing about the checkpoint file: a
    /// folder or file of a directory input that is not readable (permission denied), not a regular file (a
    /// FIFO, socket or device, never opened), a symbolic link that loops or points nowhere. Not verified,
    /// never damage.
    Inaccessible {
        /// The entry.
        path: String,
        /// Why, e.g. "folder: Permission denied (os error 13)" or "not a regular file (a FIFO)".
        reason: String,
        /// True when files may lie inside it, unlisted: a folder, or a symbolic link whose target is unknown.
        folder: bool,
    },
    /// The underlying reader failed.
    Io {
        /// The reader's reason.
        reason: String,
    },
}

impl fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchiveError::NotAZip { reason } => write!(f, "not a zip archive: {reason}"),
            ArchiveError::Empty => write!(f, "the input is empty (0 bytes)"),
            ArchiveError::OverLimit { what, path: Some(p), value, limit } => {
                write!(f, "{p}: {what} is {value}, over the limit of {limit}")
            }
            ArchiveError::OverLimit { what, path: None, value, limit } => {
                write!(f, "{what} is {value}, over the limit of {limit}")
            }
            ArchiveError::BadPath { path, header: None } => write!(f, "unsafe or invalid entry path {path:?}"),
            ArchiveError::BadPath { path, header: Some(h) } => {
                write!(f, "unsafe or invalid entry path {path:?} (zip entry at byte {h} of the input)")
            }
            ArchiveError::NotFound { path } => write!(f, "{path}: not in the archive"),
            ArchiveError::Corrupt { path, offset, reason, header: None } => {
                write!(f, "{path}: cannot inflate at byte {offset}: {reason}")
            }
            ArchiveError::Corrupt { path, offset, reason, header: Some(h) } => {
                write!(f, "{path}: cannot inflate at byte {offset}: {reason} (zip entry at byte {h} of the input)")
            }
            ArchiveError::UnsupportedCompression { path, method } => {
                write!(f, "{path}: {} is not supported by this inspector (re-zip with deflate)", method_name(*method))
            }
            ArchiveError::Overlapping { path, offset, other } => write!(
                f,
                "{path}: its compressed data (local header at byte {offset}) overlaps entry {other} (an overlapping-entry zip bomb or a broken zip); not inflated"
            ),
            ArchiveError::Inaccessible { path, reason, .. } => write!(f, "{path}: cannot be read from the input: {reason}"),
            ArchiveError::Io { reason } => write!(f, "read error: {reason}"),
        }
    }
}

impl std::error::Error for ArchiveError {}

impl ArchiveError {
    /// True when reading an entry failed in the archive, not over a limit of this inspector: a zip entry that
    /// does not unpack (a broken deflate stream, a CRC-32 or size that does not match the central directory, a
    /// local header that is not there) or the input's reader failing. The file's own bytes were not seen, so
    /// this says nothing about them.
    pub fn is_entry_damage(&self) -> bool {
        match self {
            ArchiveError::Corrupt { .. } | ArchiveError::Io { .. } => true,
            ArchiveError::OverLimit { what, .. } => what.contains("declares"),
            _ => false,
        }
    }

    /// True when this inspector did not read the entry, which is no damage: a method it does not inflate, shared
    /// compressed bytes, an entry the input cannot give, one of its own limits (not a declared size broken).
    pub fn is_not_verified(&self) -> bool {
        use ArchiveError::*;
        match self {
            UnsupportedCompression { .. } | Overlapping { .. } | Inaccessible { .. } => true,
            OverLimit { what, .. } => !what.contains("declares"),
            _ => false,
        }
    }
    /// [`ArchiveError::is_entry_damage`] or [`ArchiveError::is_not_verified`]: the file's content was not seen.
    pub fn is_content_unseen(&self) -> bool {
        self.is_entry_damage() || self.is_not_verified()
    }
}

/// The name of a zip compression method (APPNOTE.TXT 4.4.5), as "compression method 12 (bzip2)".
pub fn method_name(method: u16) -> String {
    let name = match method {
        u16::MAX => return "encryption".to_string(),
        1 => "shrink",
        2..=5 => "reduce",
        6 => "implode",
        9 => "deflate64",
        10 => "PKWARE DCL implode",
        12 => "bzip2",
        14 => "LZMA",
        18 => "IBM TERSE",
        19 => "IBM LZ77 z",
        20 | 93 => "Zstandard",
        94 => "MP3",
        95 => "XZ",
        96 => "JPEG",
        97 => "WavPack",
        98 => "PPMd",
        99 => "AE-x encryption",
        _ => "unknown",
    };
    format!("compression method {method} ({name})")
}
