//! Limits of the reader and its refusals: every error names the byte offset (in the decompressed stream)
//! where reading stopped.

use std::fmt;

/// Bounds on what [`super::parse`] accepts; every one exceeded is an [`SerError`] at the byte where it was hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest stream accepted, in bytes.
    pub max_bytes: usize,
    /// Deepest nesting of contents (an object inside a field inside an object ...).
    pub max_depth: u32,
    /// Most entries of the handle table between two resets.
    pub max_handles: usize,
    /// Most nodes of the tree (class descriptors, objects, strings, arrays, enums, class data).
    pub max_nodes: usize,
    /// Longest superclass chain of one class descriptor.
    pub max_hierarchy: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_bytes: 64 << 20, max_depth: 200, max_handles: 1 << 20, max_nodes: 1 << 20, max_hierarchy: 64 }
    }
}

/// Why the stream was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SerErrorKind {
    /// The stream is larger than [`Limits::max_bytes`].
    TooLarge(usize),
    /// It does not start with `AC ED 00 05`.
    BadHeader,
    /// The stream ends in the middle of an element.
    Truncated,
    /// A type code that the grammar does not allow here.
    UnexpectedTypeCode(u8, &'static str),
    /// `TC_REFERENCE` to a handle that is not in the table.
    BadHandle(u32),
    /// A reference that does not point to what the grammar needs (e.g. a class descriptor).
    WrongReference(u32, &'static str),
    /// Nesting deeper than [`Limits::max_depth`].
    TooDeep(u32),
    /// More handles than [`Limits::max_handles`].
    TooManyHandles(usize),
    /// More nodes than [`Limits::max_nodes`].
    TooManyNodes(usize),
    /// A declared length larger than the bytes left in the stream.
    LengthTooLarge(i64),
    /// A negative array length.
    NegativeLength(i64),
    /// A field type code that is not one of `B C D F I J S Z L [`.
    BadFieldType(u8),
    /// A superclass chain longer than [`Limits::max_hierarchy`], or one that loops back on itself.
    BadHierarchy(String),
    /// An externalizable class written without block data (protocol version 1): its data cannot be skipped.
    ExternalizableWithoutBlockData(String),
    /// `TC_RESET` inside an object (Java: "unexpected reset").
    NestedReset,
    /// A string that is not valid modified UTF-8.
    BadUtf,
    /// Anything else the grammar rules out.
    Malformed(String),
}

/// A refusal with the byte offset in the stream where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SerError {
    /// Byte offset in the (decompressed) serialization stream.
    pub offset: u64,
    /// What went wrong.
    pub kind: SerErrorKind,
}

impl SerError {
    pub(crate) fn at(offset: usize, kind: SerErrorKind) -> Self {
        SerError { offset: offset as u64, kind }
    }
}

impl fmt::Display for SerErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SerErrorKind::*;
        match self {
            TooLarge(n) => write!(f, "stream of {n} bytes is over the reader's limit"),
            BadHeader => f.write_str("not a Java serialization stream (no AC ED 00 05 header)"),
            Truncated => f.write_str("the stream ends in the middle of an element"),
            UnexpectedTypeCode(b, w) => write!(f, "type code 0x{b:02X} is not allowed here (expected {w})"),
            BadHandle(h) => write!(f, "reference to handle 0x{h:08X}, which was never assigned"),
            WrongReference(h, w) => write!(f, "reference to handle 0x{h:08X} is not {w}"),
            TooDeep(d) => write!(f, "contents nested more than {d} levels deep"),
            TooManyHandles(n) => write!(f, "more than {n} handles"),
            TooManyNodes(n) => write!(f, "more than {n} values"),
            LengthTooLarge(n) => write!(f, "declared length {n} is larger than the rest of the stream"),
            NegativeLength(n) => write!(f, "negative length {n}"),
            BadFieldType(b) => write!(f, "field type code 0x{b:02X} is not a Java type"),
            BadHierarchy(c) => write!(f, "superclass chain of {c} is too long or loops"),
            ExternalizableWithoutBlockData(c) => {
                write!(f, "{c} is Externalizable and was written without block data; its data cannot be skipped")
            }
            NestedReset => f.write_str("TC_RESET inside an object"),
            BadUtf => f.write_str("a string is not valid modified UTF-8"),
            Malformed(m) => f.write_str(m),
        }
    }
}

impl fmt::Display for SerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.kind)
    }
}

impl std::error::Error for SerError {}
