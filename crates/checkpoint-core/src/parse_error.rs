//! The one error type of the binary and text readers that say where in their input they stopped: a byte offset and
//! a message. Each reader names its own error type as an alias, `ParseError<Its format>` (`SstError`,
//! `ManifestError`, `RowError`, `SchemaError`, `AvroError`, `EncodingError`, `MetadataError`), so that its
//! errors keep their type and their wording ("at byte 12: ..." in an SST, "row byte 8: ..." in an UnsafeRow), and
//! every front end and check reads `offset` and `message` the same way.

use std::fmt;
use std::marker::PhantomData;

/// A reader's format, as its errors name it.
pub trait ErrorFormat {
    /// What comes before the offset in the error's text: `byte`, `at byte`, `row byte`, `avro byte`.
    const PREFIX: &'static str;
}

/// An offset in a reader's input, in bytes (`u64` or `usize`).
pub trait ByteOffset {
    /// The offset as `u64` (a `usize` always fits).
    fn into_u64(self) -> u64;
}

impl ByteOffset for u64 {
    fn into_u64(self) -> u64 {
        self
    }
}

impl ByteOffset for usize {
    fn into_u64(self) -> u64 {
        self as u64
    }
}

/// Where a reader stopped and why. `F` is the reader's format (its [`ErrorFormat::PREFIX`] words the text).
pub struct ParseError<F> {
    /// Byte offset in the reader's input (the file, the block or the row: each reader says which).
    pub offset: u64,
    /// What is wrong, for people.
    pub message: String,
    /// True when a limit of this inspector stopped the read (a block, a table or an expansion over the reader's
    /// bound, a compression the reader does not decode): the input is not verified, which says nothing about
    /// its damage. False for damage.
    pub limit: bool,
    format: PhantomData<fn() -> F>,
}

impl<F> ParseError<F> {
    /// Damage at `offset` (bytes) with `message`.
    pub fn new(offset: impl ByteOffset, message: impl Into<String>) -> Self {
        ParseError { offset: offset.into_u64(), message: message.into(), limit: false, format: PhantomData }
    }

    /// A limit of this inspector reached at `offset` (bytes), `message` naming the limit: not damage.
    pub fn over_limit(offset: impl ByteOffset, message: impl Into<String>) -> Self {
        ParseError { limit: true, ..Self::new(offset, message) }
    }
}

impl<F> Clone for ParseError<F> {
    fn clone(&self) -> Self {
        ParseError { offset: self.offset, message: self.message.clone(), limit: self.limit, format: PhantomData }
    }
}

impl<F> PartialEq for ParseError<F> {
    fn eq(&self, other: &Self) -> bool {
        self.offset == other.offset && self.message == other.message && self.limit == other.limit
    }
}

impl<F> Eq for ParseError<F> {}

impl<F: ErrorFormat> fmt::Debug for ParseError<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParseError")
            .field("format", &F::PREFIX)
            .field("offset", &self.offset)
            .field("message", &self.message)
            .field("limit", &self.limit)
            .finish()
    }
}

impl<F: ErrorFormat> fmt::Display for ParseError<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", F::PREFIX, self.offset, self.message)
    }
}

impl<F: ErrorFormat> std::error::Error for ParseError<F> {}

/// Declares a reader's format marker and its error alias: `parse_error_type!(SstError, Sst, "at byte")`.
macro_rules! parse_error_type {
    ($(#[$doc:meta])* $alias:ident, $marker:ident, $prefix:literal) => {
        /// The format marker of
        #[doc = concat!("[`", stringify!($alias), "`].")]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $marker;
        impl $crate::parse_error::ErrorFormat for $marker {
            const PREFIX: &'static str = $prefix;
        }
        $(#[$doc])*
        pub type $alias = $crate::parse_error::ParseError<$marker>;
    };
}
pub(crate) use parse_error_type;

#[cfg(test)]
mod tests {

    parse_error_type!(
        /// A test error.
        TestError,
        TestFormat,
        "at byte"
    );

    #[test]
    fn words_offset_and_message_with_the_format_prefix() {
        let e = TestError::new(12usize, "bad block");
        assert_eq!(e.to_string(), "at byte 12: bad block");
        assert_eq!(e, TestError::new(12u64, "bad block"));
        assert_eq!(e.clone().offset, 12);
        assert!(!e.limit);
        let l = TestError::over_limit(3usize, "block over 64 MiB");
        assert!(l.limit && l.clone().limit);
        assert_ne!(l, TestError::new(3usize, "block over 64 MiB"), "a limit is not the same error as damage");
    }
}
