//! A bounded walk of every column chunk's page headers, before the `parquet` crate reads one.
//!
//! The crate (60.x) reads a page header with a Thrift reader that runs to the end of the file, not of the column
//! chunk, and skips a field it does not know by the type the header declares: a list, set or map declaring two
//! billion elements is skipped element by element, and past the end of the file a double or a UUID costs it no byte
//! (a boolean element costs it none anywhere), so one header spins for seconds to minutes, and the check pass and the
//! row reader each read it. A binary is allocated at its declared length before it is read. A field it knows it
//! reads by the type it expects, whatever type the header declares. So every header is walked here first, within its
//! column chunk, and the file is refused, naming the byte, when a header:
//! - has a value running past the column chunk (a binary, double or UUID, a list, set or map declaring more
//!   elements than there are bytes left: each element takes a byte at least), or a varint longer than 10 bytes;
//! - declares an unknown type, a known field with another type than the crate reads it as, a non-empty collection
//!   of booleans (the crate skips their bytes as if they had none), nesting deeper than [`MAX_DEPTH`], or a field
//!   id that overflows;
//! - lacks a page size, or declares a page (its compressed size) past the column chunk or a negative size.
//!
//! Valid headers take exactly the bytes the crate reads; the pages are walked as its page reader does, from the
//! chunk's first byte (the dictionary page's offset, else the first data page's) for the chunk's compressed size.
//!
//! The footer (`FileMetaData`, which the crate parses from a slice before anything else) is walked first too
//! ([`check_footer`]), every field by its declared type, for one thing only: the crate skips a collection of
//! booleans without reading a byte, so an unknown field declaring a map of two billion of them spins for seconds
//! before any check of the file (past the end of a slice every other value fails at once). A footer with a
//! non-empty collection of booleans is refused (real footers have none); any other surprise ends the walk and
//! leaves the footer to the crate, which reads the fields it knows by the type it expects, whatever the declared
//! type, where this walk reads the declared one. The footer's hundred fields are not mirrored, so a collection
//! hidden behind a known field declared with another type is not found.
//!
//! Thrift's compact protocol (`thrift-compact-protocol.md`): a struct is its fields, then a stop byte (type 0; the
//! crate takes any byte whose type nibble is 0 for one). A field header is a byte: the id's delta from the field
//! before in the high nibble (0: a zigzag varint id follows), the type in the low nibble: 1 and 2 a boolean `true`
//! and `false` (the value is the type), 3 a byte, 4, 5, 6 an i16, i32, i64 (zigzag varints), 7 a double (8 bytes), 8
//! a binary (a varint length, then the bytes), 9 a list, 10 a set, 11 a map, 12 a struct, 13 a UUID (16 bytes). A
//! list or set starts with a byte, its size in the high nibble (15: a varint size follows) and the element type in
//! the low one (a boolean element is a byte); a map with a varint size, then, unless empty, a byte of the key type
//! (high nibble) and the value type.

use super::parquet::ParquetError;

/// Deepest nesting of structs and collections in a page header (a real one nests 3 deep; the crate skips up to 64).
pub const MAX_DEPTH: u32 = 32;

/// How the crate reads a field it knows (`file/metadata/thrift/mod.rs`, page statistics not read).
#[derive(Clone, Copy)]
enum Want {
    Bool,
    I32,
    /// An `i32` the walk keeps, in this slot of its sizes ([`UNCOMPRESSED`] and the others).
    Kept(usize),
    I64,
    Binary,
    Struct(&'static [(i16, Want)]),
}

use Want::{Binary, Bool, Kept, Struct, I32, I64};

/// The slots of the sizes a header's walk keeps: the page's uncompressed and compressed sizes, and a v2 data
/// page's definition and repetition level lengths.
const UNCOMPRESSED: usize = 0;
const COMPRESSED: usize = 1;
const V2_DEF_LEVELS: usize = 2;
const V2_REP_LEVELS: usize = 3;

/// `PageHeader`: type, uncompressed and compressed size, crc, then one of the four headers.
const PAGE_HEADER: &[(i16, Want)] = &[
    (1, I32),
    (2, Kept(UNCOMPRESSED)),
    (3, Kept(COMPRESSED)),
    (4, I32),
    (5, Struct(DATA_PAGE)),
    (6, Struct(&[])),
    (7, Struct(DICTIONARY_PAGE)),
    (8, Struct(DATA_PAGE_V2)),
];
const DATA_PAGE: &[(i16, Want)] = &[(1, I32), (2, I32), (3, I32), (4, I32), (5, Struct(STATISTICS))];
const DICTIONARY_PAGE: &[(i16, Want)] = &[(1, I32), (2, I32), (3, Bool)];
const DATA_PAGE_V2: &[(i16, Want)] = &[
    (1, I32),
    (2, I32),
    (3, I32),
    (4, I32),
    (5, Kept(V2_DEF_LEVELS)),
    (6, Kept(V2_REP_LEVELS)),
    (7, Bool),
    (8, Struct(STATISTICS)),
];
const STATISTICS: &[(i16, Want)] =
    &[(1, Binary), (2, Binary), (3, I64), (4, I64), (5, Binary), (6, Binary), (7, Bool), (8, Bool), (9, I64)];

/// A refused header: the byte where the value starts, and what is wrong.
type Refusal = (usize, String);

/// Walks the page headers of the column chunk of `len` bytes at `start` (inside `bytes`) as the crate's page reader
/// would read them; `Err` names the byte and what is wrong.
pub fn check_chunk(bytes: &[u8], start: usize, len: usize) -> Result<(), ParquetError> {
    walk_chunk(bytes, start, start + len).map_err(|(at, reason)| ParquetError { offset: Some(at as u64), reason })
}

/// Walks the footer (`FileMetaData`, `bytes[start..end]`) by its declared types before the crate parses it; `Err`
/// names the byte of a non-empty collection of booleans, the one thing refused there.
pub fn check_footer(bytes: &[u8], start: usize, end: usize) -> Result<(), ParquetError> {
    let mut w = Walk { bytes, at: start, end, region: "footer", booleans: false };
    match w.walk_struct(&[], 0, &mut []) {
        Err((at, what)) if w.booleans => {
            Err(ParquetError { offset: Some(at as u64), reason: format!("footer: {what}") })
        }
        _ => Ok(()),
    }
}

fn walk_chunk(bytes: &[u8], start: usize, end: usize) -> Result<(), Refusal> {
    let mut at = start;
    while at < end {
        let mut w = Walk { bytes, at, end, region: "column chunk", booleans: false };
        let mut sizes = [None; 4];
        let header = at;
        let said = |what: String| format!("the page header at byte {header}: {what}");
        w.walk_struct(PAGE_HEADER, 0, &mut sizes).map_err(|(o, what)| (o, said(what)))?;
        let left = end - w.at;
        let (Some(u), Some(c)) = (sizes[UNCOMPRESSED], sizes[COMPRESSED]) else {
            return Err((header, said("no page size".into())));
        };
        if u < 0 || c < 0 || c as usize > left {
            return Err((header, said(format!("a page of {c} bytes ({u} uncompressed), {left} bytes left"))));
        }
        // The crate adds a v2 page's level lengths as i32 (overflow panics in a debug build) to compare them with
        // the uncompressed size, then slices them out of the page.
        let (def, rep) = (sizes[V2_DEF_LEVELS].unwrap_or(0), sizes[V2_REP_LEVELS].unwrap_or(0));
        if def < 0 || rep < 0 || i64::from(def) + i64::from(rep) > i64::from(u) {
            return Err((header, said(format!("v2 levels of {def} + {rep} bytes in a page of {u}"))));
        }
        at = w.at + c as usize;
    }
    Ok(())
}

/// A cursor over the bytes of one column chunk or the footer (`at..end` of the file).
struct Walk<'a> {
    bytes: &'a [u8],
    at: usize,
    end: usize,
    /// What `end` ends, for errors.
    region: &'static str,
    /// The walk stopped at a non-empty collection of booleans.
    booleans: bool,
}

impl Walk<'_> {
    fn left(&self) -> usize {
        self.end - self.at
    }

    fn byte(&mut self) -> Result<u8, Refusal> {
        if self.at >= self.end {
            return Err((self.at, format!("it runs past the end of its {}", self.region)));
        }
        self.at += 1;
        Ok(self.bytes[self.at - 1])
    }

    /// An unsigned LEB128 varint of at most 10 bytes (64 bits).
    fn varint(&mut self) -> Result<u64, Refusal> {
        let from = self.at;
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err((from, format!("a varint at byte {from} longer than 10 bytes")))
    }

    fn zigzag(&mut self) -> Result<i64, Refusal> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// `n` bytes of a value that starts at `from`.
    fn skip(&mut self, n: u64, what: &str, from: usize) -> Result<(), Refusal> {
        if n > self.left() as u64 {
            return Err((
                from,
                format!("{what} at byte {from} of {n} bytes, {} bytes left in the {}", self.left(), self.region),
            ));
        }
        self.at += n as usize;
        Ok(())
    }

    fn deeper(&self, depth: u32) -> Result<(), Refusal> {
        if depth > MAX_DEPTH {
            return Err((
                self.at,
                format!("structs and collections nested deeper than {MAX_DEPTH} at byte {}", self.at),
            ));
        }
        Ok(())
    }

    /// A value of the field type `ty` (1 and 2, booleans, have none).
    fn value(&mut self, ty: u8, depth: u32) -> Result<(), Refusal> {
        let from = self.at;
        match ty {
            1 | 2 => Ok(()),
            3 => self.byte().map(drop),
            4..=6 => self.varint().map(drop),
            7 => self.skip(8, "a double", from),
            8 => {
                let n = self.varint()?;
                self.skip(n, "a binary", from)
            }
            9 | 10 => self.collection(depth),
            11 => self.map(depth),
            12 => self.walk_struct(&[], depth, &mut []),
            13 => self.skip(16, "a UUID", from),
            _ => Err((from, format!("an unknown type {ty} at byte {from}"))),
        }
    }

    /// A collection of `n` elements of `types` (a map's key and value types) that starts at `from`: each element takes
    /// a byte at least, and the crate skips boolean elements without reading their byte.
    fn elements(&mut self, n: u64, types: &[u8], depth: u32, from: usize) -> Result<(), Refusal> {
        if let Some(t) = types.iter().find(|t| !(1..=13).contains(*t)) {
            return Err((from, format!("a collection at byte {from} of the unknown element type {t}")));
        }
        if n == 0 {
            return Ok(());
        }
        if types.iter().any(|t| *t <= 2) {
            self.booleans = true;
            return Err((from, format!("a collection of {n} booleans at byte {from}")));
        }
        if n > i32::MAX as u64 || n.saturating_mul(types.len() as u64) > self.left() as u64 {
            return Err((
                from,
                format!("a collection at byte {from} declaring {n} elements, {} bytes left", self.left()),
            ));
        }
        for _ in 0..n {
            for t in types {
                self.value(*t, depth + 1)?;
            }
        }
        Ok(())
    }

    /// A list or set: a byte of size (high nibble, 15: a varint follows) and element type (an empty list may be a
    /// zero byte).
    fn collection(&mut self, depth: u32) -> Result<(), Refusal> {
        self.deeper(depth)?;
        let from = self.at;
        let header = self.byte()?;
        if header == 0 {
            return Ok(());
        }
        let n = match header >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        self.elements(n, &[header & 0x0f], depth, from)
    }

    /// A map: a varint size, then (when not empty) a byte of key and value types.
    fn map(&mut self, depth: u32) -> Result<(), Refusal> {
        self.deeper(depth)?;
        let from = self.at;
        let n = self.varint()?;
        if n == 0 {
            return Ok(());
        }
        let kv = self.byte()?;
        self.elements(n, &[kv >> 4, kv & 0x0f], depth, from)
    }

    /// A struct whose fields `known` the crate reads as it expects; other fields are skipped by their declared type.
    /// The fields it keeps go to their slots in `sizes`.
    fn walk_struct(&mut self, known: &[(i16, Want)], depth: u32, sizes: &mut [Option<i32>]) -> Result<(), Refusal> {
        self.deeper(depth)?;
        let mut last = 0i16;
        loop {
            let from = self.at;
            let header = self.byte()?;
            let ty = header & 0x0f;
            if ty == 0 {
                return Ok(());
            }
            let id = match header >> 4 {
                0 => self.zigzag()? as i16,
                delta => last
                    .checked_add(i16::from(delta))
                    .ok_or_else(|| (from, format!("a field id past {} at byte {from}", i16::MAX)))?,
            };
            last = id;
            let Some(&(_, want)) = known.iter().find(|(k, _)| *k == id) else {
                self.value(ty, depth + 1)?;
                continue;
            };
            let (expected, name) = match want {
                Bool => (ty == 1 || ty == 2, "a boolean"),
                I32 | Kept(_) => (ty == 5, "an i32"),
                I64 => (ty == 6, "an i64"),
                Binary => (ty == 8, "a binary"),
                Struct(_) => (ty == 12, "a struct"),
            };
            if !expected {
                return Err((from, format!("field {id} at byte {from} of type {ty}, which the crate reads as {name}")));
            }
            match want {
                Kept(slot) => {
                    let v = Some(self.zigzag()? as i32);
                    if let Some(s) = sizes.get_mut(slot) {
                        *s = v;
                    }
                }
                Struct(fields) => self.walk_struct(fields, depth + 1, sizes)?,
                _ => self.value(ty, depth + 1)?,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page header (DATA_PAGE, its sizes, a v1 data page header, then the fields `extra` from id 20 on), then its
    /// page of `page` bytes (below 64).
    fn page(extra: &[u8], page: usize) -> Vec<u8> {
        let size = 2 * page as u8;
        let mut b =
            vec![0x15, 0x00, 0x15, size, 0x15, size, 0x2c, 0x15, 0x0c, 0x15, 0x00, 0x15, 0x06, 0x15, 0x06, 0x00];
        b.extend_from_slice(extra);
        b.push(0x00);
        b.extend(std::iter::repeat_n(0xaa, page));
        b
    }

    fn walk(b: &[u8]) -> Result<(), Refusal> {
        walk_chunk(b, 0, b.len())
    }

    #[test]
    fn a_plain_header_and_its_page_walk() {
        let mut two = page(&[], 9);
        two.extend(page(&[], 3));
        assert_eq!(walk(&two), Ok(()));
        // An unknown field of each type, skipped: i64, binary, double, list of i32, map, struct, UUID.
        let mut unknown = vec![0x96, 0x02, 0x18, 0x02, b'h', b'i', 0x17];
        unknown.extend([0; 8]);
        unknown.extend([0x19, 0x25, 0x02, 0x04, 0x1b, 0x01, 0x55, 0x02, 0x04, 0x1c, 0x15, 0x02, 0x00, 0x1d]);
        unknown.extend([0; 16]);
        // The next field (5) follows the unknown ones by delta from 30.
        let mut b = vec![0x15, 0x00, 0x15, 0x06, 0x15, 0x06];
        b.extend(&unknown);
        b.extend([0x0c, 0x0a, 0x15, 0x0c, 0x15, 0x00, 0x15, 0x06, 0x15, 0x06, 0x00, 0x00, 1, 2, 3]);
        assert_eq!(walk(&b), Ok(()), "{b:x?}");
    }

    #[test]
    fn collections_and_binaries_running_past_the_chunk_are_refused() {
        for (extra, words) in [
            (&[0xf9, 0xf7, 0xff, 0xff, 0xff, 0xff, 0x07][..], "declaring 2147483647 elements"),
            (&[0xfa, 0xf5, 0x80, 0x01][..], "declaring 128 elements, 5 bytes left"),
            (&[0xfb, 0xff, 0xff, 0xff, 0xff, 0x07, 0x77][..], "declaring 2147483647 elements"),
            (&[0xf8, 0xff, 0xff, 0xff, 0xff, 0x0f][..], "a binary at byte 17 of 4294967295 bytes"),
            (&[0xf9, 0x31, 0x01, 0x01, 0x01][..], "3 booleans"),
            (&[0xf9, 0x1e][..], "unknown element type 14"),
            (&[0xfe][..], "unknown type 14"),
            (&[0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01][..], "longer than 10 bytes"),
            (&[0xff][..], "unknown type 15"),
        ] {
            let e = walk(&page(extra, 4)).expect_err(words);
            assert!(e.1.contains(words) && e.1.starts_with("the page header at byte 0: "), "{words}: {e:?}");
        }
    }

    #[test]
    fn a_footer_is_walked_by_its_declared_types() {
        // version 1, then an unknown field (15) declaring a map of 2,147,483,647 booleans, then the stop.
        let b = [0x15, 0x02, 0xfb, 0xff, 0xff, 0xff, 0xff, 0x07, 0x22, 0x00];
        let e = check_footer(&b, 0, b.len()).unwrap_err();
        assert_eq!(e.offset, Some(3));
        assert!(e.reason.starts_with("footer: a collection of 2147483647 booleans at byte 3"), "{e:?}");
        assert!(check_footer(&[0x15, 0x02, 0x19, 0x25, 0x02, 0x04, 0x00], 0, 7).is_ok());
        // Anything else is left to the crate: a list running past the footer, an unknown type.
        assert!(check_footer(&[0x15, 0x02, 0x19, 0x15, 0x02], 0, 5).is_ok());
        assert!(check_footer(&[0x15, 0x02, 0x1e, 0x00], 0, 4).is_ok());
        assert!(check_footer(&[0x19, 0x11, 0x01, 0x00], 0, 4).is_err());
    }

    #[test]
    fn a_known_field_of_another_type_deep_nesting_and_bad_sizes_are_refused() {
        // compressed_page_size (3) declared as a list.
        let e = walk(&[0x15, 0x00, 0x15, 0x02, 0x19, 0x15, 0x02, 0x00]).unwrap_err();
        assert!(e.1.contains("field 3 at byte 4 of type 9, which the crate reads as an i32"), "{e:?}");
        let mut deep = vec![0x15, 0x00, 0x15, 0x00, 0x15, 0x00, 0xfc];
        deep.extend([0x1c; 40]);
        let e = walk(&deep).unwrap_err();
        assert!(e.1.contains("nested deeper than 32"), "{e:?}");
        let e = walk(&[0x15, 0x00, 0x15, 0x02, 0x15, 0x40, 0x00, 1]).unwrap_err();
        assert!(e.1.contains("a page of 32 bytes (1 uncompressed), 1 bytes left"), "{e:?}");
        let e = walk(&[0x15, 0x00, 0x15, 0x02, 0x00]).unwrap_err();
        assert!(e.1.contains("no page size"), "{e:?}");
        // A v2 data page header (8) whose level lengths (5, 6) add up past i32 and past the page's 2 bytes.
        let v2 = |def: &[u8], rep: &[u8]| {
            let mut b = vec![0x15, 0x06, 0x15, 0x04, 0x15, 0x04, 0x5c, 0x15, 0x02, 0x15, 0x00, 0x15, 0x02, 0x15, 0x00];
            b.push(0x15);
            b.extend(def);
            b.push(0x15);
            b.extend(rep);
            b.extend([0x00, 0x00, 1, 2]);
            b
        };
        let max = [0xfe, 0xff, 0xff, 0xff, 0x0f];
        let e = walk(&v2(&max, &max)).unwrap_err();
        assert!(e.1.contains("v2 levels of 2147483647 + 2147483647 bytes in a page of 2"), "{e:?}");
        assert_eq!(walk(&v2(&[0x02], &[0x02])), Ok(()));
        let e = walk(&[0x15, 0x00, 0x15, 0x02, 0x15]).unwrap_err();
        assert!(e.1.contains("runs past the end of its column chunk") && e.0 == 5, "{e:?}");
    }
}
