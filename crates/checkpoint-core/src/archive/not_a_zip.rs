//! Why an input is not a zip, in the user's terms: what it is instead (its magic number: a cut zip, gzip,
//! bzip2, xz, zstd, tar, 7-Zip, RAR, text) and what to give instead. The zip reader's own reason ("Could
//! not find EOCD") names its internals, not the problem.

use super::ArchiveError;
use std::io::{Read, Seek};

/// [`ArchiveError::NotAZip`] for an input the zip reader refused with `zip_error` (the reader borrowed the input,
/// which gives its first bytes again): what they say it is instead ([`reason`]).
pub(super) fn error<R: Read + Seek>(reader: &mut R, bytes: u64, zip_error: &str) -> ArchiveError {
    let found_end = super::end_record(reader, bytes).is_some();
    let mut head = Vec::with_capacity(HEAD_BYTES);
    let _ = reader.seek(std::io::SeekFrom::Start(0));
    let _ = reader.take(HEAD_BYTES as u64).read_to_end(&mut head);
    ArchiveError::NotAZip { reason: reason(&head, found_end, zip_error) }
}

/// Bytes of the input's start [`reason`] looks at (a tar header's `ustar` magic sits at byte 257).
pub const HEAD_BYTES: usize = 512;

const GIVE: &str =
    "give a zip of the checkpoint folder (zip -r checkpoint.zip <checkpointLocation>), or the folder itself";

/// The reason an input whose first bytes are `head` (at most [`HEAD_BYTES`]) is not a zip the inspector can
/// open; `zip_error` is the zip reader's reason, kept for a zip whose central directory is damaged and for
/// input that matches no known format. `end_record` = an end-of-central-directory record was found.
pub fn reason(head: &[u8], end_record: bool, zip_error: &str) -> String {
    let unpack =
        |what: &str, tool: &str| format!("it is {what}: unpack it ({tool}) and give the folder inside, or {GIVE}");
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x07\x08") {
        return if end_record {
            format!("it starts as a zip, but its central directory is damaged ({zip_error}): zip the folder again")
        } else {
            "it starts as a zip but its end (the central directory) is missing: the file was cut short (an interrupted \
             download, upload or copy, or a zip still being written); copy or download it again, or zip the folder again"
                .to_string()
        };
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return unpack("a gzip file (.gz, .tgz)", "tar xzf, or gunzip");
    }
    if head.starts_with(b"BZh") {
        return unpack("a bzip2 file (.bz2, .tbz2)", "tar xjf, or bunzip2");
    }
    if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
        return unpack("an xz file (.xz, .txz)", "tar xJf, or unxz");
    }
    if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        return unpack("a zstd file (.zst)", "tar --zstd -xf, or unzstd");
    }
    if head.starts_with(&[b'7', b'z', 0xbc, 0xaf, 0x27, 0x1c]) {
        return unpack("a 7-Zip archive (.7z)", "7z x");
    }
    if head.starts_with(b"Rar!\x1a\x07") {
        return unpack("a RAR archive (.rar)", "unrar x");
    }
    if head.get(257..262) == Some(b"ustar") {
        return unpack("a tar archive (.tar)", "tar xf");
    }
    if !head.is_empty() && !head.contains(&0) && std::str::from_utf8(trim_cut_char(head)).is_ok() {
        return format!("it is text (one file of a checkpoint, such as metadata or offsets/<n>?): {GIVE}");
    }
    let hex: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("no zip end record found ({zip_error}; the file starts with bytes {}): {GIVE}", hex.join(" "))
}

/// `b` without a UTF-8 character cut at its end (the head is a prefix of the input).
fn trim_cut_char(b: &[u8]) -> &[u8] {
    match std::str::from_utf8(b) {
        Err(e) if e.error_len().is_none() => &b[..e.valid_up_to()],
        _ => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_what_the_input_is() {
        let r = |h: &[u8]| reason(h, false, "Could not find EOCD");
        assert!(r(b"PK\x03\x04\x14\x00").contains("cut short"), "{}", r(b"PK\x03\x04"));
        assert!(reason(b"PK\x03\x04", true, "Invalid CDFH offset").contains("damaged (Invalid CDFH offset)"));
        assert!(r(&[0x1f, 0x8b, 8, 0]).starts_with("it is a gzip file"));
        assert!(r(b"BZh91AY&SY").starts_with("it is a bzip2 file"));
        assert!(r(&[0xfd, b'7', b'z', b'X', b'Z', 0, 0]).starts_with("it is an xz file"));
        assert!(r(&[0x28, 0xb5, 0x2f, 0xfd, 0]).starts_with("it is a zstd file"));
        assert!(r(&[b'7', b'z', 0xbc, 0xaf, 0x27, 0x1c, 0, 4]).starts_with("it is a 7-Zip archive"));
        assert!(r(b"Rar!\x1a\x07\x01\x00").starts_with("it is a RAR archive"));
        let mut tar = vec![0u8; 512];
        tar[..7].copy_from_slice(b"ok.zip\0");
        tar[257..263].copy_from_slice(b"ustar\0");
        assert!(r(&tar).starts_with("it is a tar archive"));
        assert!(r("v1\n{\"id\":\"é".as_bytes()).starts_with("it is text"));
        // A character cut by the head's end is still text.
        assert!(r(&"é".as_bytes()[..1]).starts_with("it is text"));
        let other = r(&[0, 1, 2, 3]);
        assert!(other.contains("Could not find EOCD") && other.contains("00 01 02 03"), "{other}");
        for h in [&b"PK\x03\x04"[..], &[0x1f, 0x8b], b"hello"] {
            assert!(!r(h).is_empty());
        }
    }
}
