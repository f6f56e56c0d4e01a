//! Big-endian reads over the stream's bytes (`java.io.DataInput`) and modified UTF-8 (`DataInput.readUTF`),
//! every one bounds-checked: a read past the end is [`SerErrorKind::Truncated`] at the element's offset.

use super::error::{SerError, SerErrorKind};

/// A position in the stream.
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    /// Bytes left.
    pub(crate) fn left(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], SerError> {
        if n > self.left() {
            return Err(SerError::at(self.pos, SerErrorKind::Truncated));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], SerError> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, SerError> {
        Ok(self.array::<1>()?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, SerError> {
        Ok(u16::from_be_bytes(self.array()?))
    }
    pub(crate) fn i32(&mut self) -> Result<i32, SerError> {
        Ok(i32::from_be_bytes(self.array()?))
    }
    pub(crate) fn u32(&mut self) -> Result<u32, SerError> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    pub(crate) fn i64(&mut self) -> Result<i64, SerError> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// `readUTF`: a u16 length and that many bytes of modified UTF-8.
    pub(crate) fn utf(&mut self) -> Result<String, SerError> {
        let start = self.pos;
        let n = self.u16()? as usize;
        let bytes = self.take(n)?;
        decode_modified_utf8(bytes).ok_or(SerError::at(start, SerErrorKind::BadUtf))
    }

    /// A long string: an i64 length (checked against the bytes left) and modified UTF-8.
    pub(crate) fn long_utf(&mut self) -> Result<String, SerError> {
        let start = self.pos;
        let n = self.i64()?;
        if n < 0 {
            return Err(SerError::at(start, SerErrorKind::NegativeLength(n)));
        }
        if n as u64 > self.left() as u64 {
            return Err(SerError::at(start, SerErrorKind::LengthTooLarge(n)));
        }
        let bytes = self.take(n as usize)?;
        decode_modified_utf8(bytes).ok_or(SerError::at(start, SerErrorKind::BadUtf))
    }
}

/// Decodes modified UTF-8 (Java's `DataInput` form: `NUL` as `C0 80`, supplementary characters as two
/// 3-byte surrogates). Lone surrogates become U+FFFD. `None` on a malformed sequence (as `readUTF` throws
/// `UTFDataFormatException`).
pub fn decode_modified_utf8(b: &[u8]) -> Option<String> {
    if b.iter().all(|&c| c != 0 && c < 0x80) {
        return std::str::from_utf8(b).ok().map(str::to_string);
    }
    let mut units: Vec<u16> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c >> 4 {
            0..=7 => {
                if c == 0 {
                    return None;
                }
                units.push(c as u16);
                i += 1;
            }
            12 | 13 => {
                let c2 = *b.get(i + 1)?;
                if c2 & 0xC0 != 0x80 {
                    return None;
                }
                units.push(((c as u16 & 0x1F) << 6) | (c2 as u16 & 0x3F));
                i += 2;
            }
            14 => {
                let (c2, c3) = (*b.get(i + 1)?, *b.get(i + 2)?);
                if c2 & 0xC0 != 0x80 || c3 & 0xC0 != 0x80 {
                    return None;
                }
                units.push(((c as u16 & 0x0F) << 12) | ((c2 as u16 & 0x3F) << 6) | (c3 as u16 & 0x3F));
                i += 3;
            }
            _ => return None,
        }
    }
    Some(char::decode_utf16(units).map(|r| r.unwrap_or('\u{FFFD}')).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modified_utf8_decodes_nul_and_surrogate_pairs() {
        assert_eq!(decode_modified_utf8(b"abc").as_deref(), Some("abc"));
        assert_eq!(decode_modified_utf8(&[0x61, 0xC0, 0x80]).as_deref(), Some("a\0"));
        // U+1F600 as two 3-byte surrogates (D83D DE00).
        assert_eq!(decode_modified_utf8(&[0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80]).as_deref(), Some("\u{1F600}"));
        assert_eq!(decode_modified_utf8(&[0xC3, 0xA9]).as_deref(), Some("é"));
        assert_eq!(decode_modified_utf8(&[0x00]), None);
        assert_eq!(decode_modified_utf8(&[0xC3]), None);
        assert_eq!(decode_modified_utf8(&[0xF0, 0x9F, 0x98, 0x80]), None);
    }

    #[test]
    fn reads_past_the_end_are_truncated_at_the_element() {
        let mut c = Cursor::new(&[0, 5, b'a']);
        let e = c.utf().unwrap_err();
        assert_eq!(e.kind, SerErrorKind::Truncated);
        let mut c = Cursor::new(&[0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
        assert_eq!(c.long_utf().unwrap_err().kind, SerErrorKind::LengthTooLarge(i64::MAX));
    }
}
