//! A bounded, non-executing reader of the Java Object Serialization Stream Protocol (the Java Object
//! Serialization Specification, chapter 6; constants of `java.io.ObjectStreamConstants`), for DStream
//! checkpoints (FORMATS.md §17.3).
//!
//! [`parse`] turns a stream into a tree of values ([`Stream`]): class descriptors with their
//! serialVersionUID, flags and fields, objects with their class data per class of the hierarchy, strings
//! (short and long), arrays of every element type, enum constants, `java.lang.Class` values, block data and
//! the custom data of `writeObject` / `writeExternal` (`SC_WRITE_METHOD`, `SC_EXTERNALIZABLE` +
//! `SC_BLOCK_DATA`), back-references (`TC_REFERENCE`, handles from `0x7E0000`), resets and exceptions
//! written into the stream. It **never instantiates, loads or executes anything**: the descriptors alone
//! say how to read the bytes. Every bound of [`Limits`] (size, depth, handles, nodes, hierarchy) is checked
//! before memory is taken, and every refusal is a [`SerError`] with the byte offset.
//!
//! Modules: [`cursor`] (big-endian reads, modified UTF-8), `grammar` (contents, descriptors, references),
//! `classdata` (objects, arrays), [`model`] (the tree), [`error`] (limits and refusals).

mod classdata;
pub mod cursor;
pub mod error;
mod grammar;
pub mod model;

#[cfg(test)]
mod jvm_tests;
#[cfg(test)]
mod tests;

pub use classdata::{decode_prim, prim_size};
pub use error::{Limits, SerError, SerErrorKind};
pub use model::{Array, ArrayElems, ClassData, ClassDesc, FieldDesc, Node, NodeId, Object, Prim, Stream, Value};

/// `STREAM_MAGIC` followed by `STREAM_VERSION` (5).
pub const STREAM_HEADER: [u8; 4] = [0xAC, 0xED, 0x00, 0x05];
/// First handle assigned (`baseWireHandle`).
pub const BASE_HANDLE: u32 = 0x7E_0000;

/// `TC_NULL`
pub const TC_NULL: u8 = 0x70;
/// `TC_REFERENCE`
pub const TC_REFERENCE: u8 = 0x71;
/// `TC_CLASSDESC`
pub const TC_CLASSDESC: u8 = 0x72;
/// `TC_OBJECT`
pub const TC_OBJECT: u8 = 0x73;
/// `TC_STRING`
pub const TC_STRING: u8 = 0x74;
/// `TC_ARRAY`
pub const TC_ARRAY: u8 = 0x75;
/// `TC_CLASS`
pub const TC_CLASS: u8 = 0x76;
/// `TC_BLOCKDATA`
pub const TC_BLOCKDATA: u8 = 0x77;
/// `TC_ENDBLOCKDATA`
pub const TC_ENDBLOCKDATA: u8 = 0x78;
/// `TC_RESET`
pub const TC_RESET: u8 = 0x79;
/// `TC_BLOCKDATALONG`
pub const TC_BLOCKDATALONG: u8 = 0x7A;
/// `TC_EXCEPTION`
pub const TC_EXCEPTION: u8 = 0x7B;
/// `TC_LONGSTRING`
pub const TC_LONGSTRING: u8 = 0x7C;
/// `TC_PROXYCLASSDESC`
pub const TC_PROXYCLASSDESC: u8 = 0x7D;
/// `TC_ENUM`
pub const TC_ENUM: u8 = 0x7E;

/// `SC_WRITE_METHOD`: the class has a custom `writeObject`; its data ends with an annotation.
pub const SC_WRITE_METHOD: u8 = 0x01;
/// `SC_SERIALIZABLE`
pub const SC_SERIALIZABLE: u8 = 0x02;
/// `SC_EXTERNALIZABLE`
pub const SC_EXTERNALIZABLE: u8 = 0x04;
/// `SC_BLOCK_DATA`: externalizable data written in block-data mode (protocol version 2).
pub const SC_BLOCK_DATA: u8 = 0x08;
/// `SC_ENUM`
pub const SC_ENUM: u8 = 0x10;

/// Reads a whole serialization stream (header, then every top-level content) into a tree, within
/// `limits`. A `TC_EXCEPTION` ends reading (as in `ObjectInputStream`) and is kept in
/// [`Stream::exception`]. Never executes anything; never panics; time and memory are linear in the input.
pub fn parse(bytes: &[u8], limits: &Limits) -> Result<Stream, SerError> {
    if bytes.len() > limits.max_bytes {
        return Err(SerError::at(0, SerErrorKind::TooLarge(bytes.len())));
    }
    grammar::Parser::new(bytes, *limits).stream()
}
