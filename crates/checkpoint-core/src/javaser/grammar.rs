//! The grammar of the Java Object Serialization Stream Protocol (Java Object Serialization Specification
//! §6.4, `java.io.ObjectInputStream.readObject0`): contents, class descriptors (plain and proxy), strings,
//! references, resets and exceptions. Object and array data are in [`super::classdata`].
//!
//! Handles are assigned exactly where `ObjectInputStream` assigns them (a class descriptor's after its name
//! and serialVersionUID, an object's after its class descriptor), so back-references resolve the same way.

use super::cursor::Cursor;
use super::error::{Limits, SerError, SerErrorKind};
use super::model::{ClassDesc, FieldDesc, Node, NodeId, Stream, Value};
use super::*;

/// Why reading stopped early: a refusal, or a `TC_EXCEPTION` (the writer aborted).
pub(crate) enum Stop {
    Err(SerError),
    Exception(NodeId),
}

impl From<SerError> for Stop {
    fn from(e: SerError) -> Self {
        Stop::Err(e)
    }
}

pub(crate) type R<T> = Result<T, Stop>;

/// The reader's state: the bytes, the arena, the handle table.
pub(crate) struct Parser<'a> {
    pub(crate) cur: Cursor<'a>,
    pub(crate) limits: Limits,
    pub(crate) nodes: Vec<Node>,
    pub(crate) handles: Vec<NodeId>,
    pub(crate) depth: u32,
    pub(crate) resets: u32,
    /// Values counted by [`Parser::charge`] (class data, elements, annotations): with the arena's nodes, what
    /// [`Limits::max_nodes`] bounds.
    pub(crate) charged: usize,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(bytes: &'a [u8], limits: Limits) -> Self {
        Parser {
            cur: Cursor::new(bytes),
            limits,
            nodes: Vec::new(),
            handles: Vec::new(),
            depth: 0,
            resets: 0,
            charged: 0,
        }
    }

    pub(crate) fn err<T>(&self, offset: usize, kind: SerErrorKind) -> R<T> {
        Err(Stop::Err(SerError::at(offset, kind)))
    }

    /// Adds a node to the arena (bounded by [`Limits::max_nodes`], with the values charged).
    pub(crate) fn push(&mut self, n: Node) -> R<NodeId> {
        if self.nodes.len().saturating_add(self.charged) >= self.limits.max_nodes {
            return self.err(self.cur.pos, SerErrorKind::TooManyNodes(self.limits.max_nodes));
        }
        self.nodes.push(n);
        Ok(NodeId(self.nodes.len() as u32 - 1))
    }

    /// Counts `n` more values against [`Limits::max_nodes`] that are not nodes of the arena (class data,
    /// elements, annotations): they add up over the whole stream, with the nodes.
    pub(crate) fn charge(&mut self, n: usize) -> R<()> {
        let total = self.nodes.len().saturating_add(self.charged).saturating_add(n);
        if total > self.limits.max_nodes {
            return self.err(self.cur.pos, SerErrorKind::TooManyNodes(self.limits.max_nodes));
        }
        self.charged += n;
        Ok(())
    }

    /// Assigns the next handle to `id`.
    pub(crate) fn new_handle(&mut self, id: NodeId) -> R<()> {
        if self.handles.len() >= self.limits.max_handles {
            return self.err(self.cur.pos, SerErrorKind::TooManyHandles(self.limits.max_handles));
        }
        self.handles.push(id);
        Ok(())
    }

    /// Reads the whole stream: header, then contents to the end (or to a `TC_EXCEPTION`).
    pub(crate) fn stream(mut self) -> Result<Stream, SerError> {
        let head = self.cur.take(4).map_err(|_| SerError::at(0, SerErrorKind::BadHeader))?;
        if head != [0xAC, 0xED, 0x00, 0x05] {
            return Err(SerError::at(0, SerErrorKind::BadHeader));
        }
        let mut top = Vec::new();
        let mut exception = None;
        while !self.cur.at_end() {
            if self.cur.peek() == Some(TC_RESET) {
                self.cur.pos += 1;
                self.reset();
                continue;
            }
            match self.content() {
                Ok(v) => top.push(v),
                Err(Stop::Err(e)) => return Err(e),
                Err(Stop::Exception(id)) => {
                    exception = Some(id);
                    break;
                }
            }
        }
        Ok(Stream { nodes: self.nodes, top, exception, resets: self.resets })
    }

    fn reset(&mut self) {
        self.handles.clear();
        self.resets += 1;
    }

    /// One content item (`content` of the grammar: an object or block data), at any depth.
    pub(crate) fn content(&mut self) -> R<Value> {
        match self.cur.peek() {
            Some(TC_BLOCKDATA) | Some(TC_BLOCKDATALONG) => self.block_data(),
            _ => self.object(),
        }
    }

    /// `object` of the grammar: anything `readObject` returns.
    pub(crate) fn object(&mut self) -> R<Value> {
        let start = self.cur.pos;
        if self.depth >= self.limits.max_depth {
            return self.err(start, SerErrorKind::TooDeep(self.limits.max_depth));
        }
        self.depth += 1;
        let r = self.object_inner(start);
        self.depth -= 1;
        r
    }

    fn object_inner(&mut self, start: usize) -> R<Value> {
        let tc = self.cur.u8()?;
        match tc {
            TC_NULL => Ok(Value::Null),
            TC_REFERENCE => Ok(Value::Node(self.reference(start)?.1)),
            TC_STRING | TC_LONGSTRING => {
                let s = if tc == TC_STRING { self.cur.utf()? } else { self.cur.long_utf()? };
                let id = self.push(Node::String(s))?;
                self.new_handle(id)?;
                Ok(Value::Node(id))
            }
            TC_CLASSDESC | TC_PROXYCLASSDESC => {
                self.cur.pos = start;
                Ok(self.class_desc()?.map(Value::Node).unwrap_or(Value::Null))
            }
            TC_CLASS => {
                let desc = self.class_desc()?;
                let id = self.push(Node::Class(desc))?;
                self.new_handle(id)?;
                Ok(Value::Node(id))
            }
            TC_ARRAY => self.array(start),
            TC_ENUM => self.enum_constant(),
            TC_OBJECT => self.new_object(start),
            TC_EXCEPTION => self.exception(start),
            TC_RESET => self.err(start, SerErrorKind::NestedReset),
            TC_BLOCKDATA | TC_BLOCKDATALONG => {
                self.err(start, SerErrorKind::UnexpectedTypeCode(tc, "an object, not block data"))
            }
            TC_ENDBLOCKDATA => self.err(start, SerErrorKind::UnexpectedTypeCode(tc, "an object")),
            _ => self.err(start, SerErrorKind::UnexpectedTypeCode(tc, "a type code TC_NULL..TC_ENUM")),
        }
    }

    /// `TC_REFERENCE` handle → the node it names.
    fn reference(&mut self, start: usize) -> R<(u32, NodeId)> {
        let h = self.cur.u32()?;
        match h.checked_sub(BASE_HANDLE).and_then(|i| self.handles.get(i as usize)) {
            Some(id) => Ok((h, *id)),
            None => self.err(start, SerErrorKind::BadHandle(h)),
        }
    }

    fn block_data(&mut self) -> R<Value> {
        let start = self.cur.pos;
        let tc = self.cur.u8()?;
        let n = if tc == TC_BLOCKDATA { self.cur.u8()? as i64 } else { self.cur.i32()? as i64 };
        if n < 0 {
            return self.err(start, SerErrorKind::NegativeLength(n));
        }
        if n as u64 > self.cur.left() as u64 {
            return self.err(start, SerErrorKind::LengthTooLarge(n));
        }
        Ok(Value::Block(self.cur.take(n as usize)?.to_vec()))
    }

    /// `TC_EXCEPTION`: reset, the `Throwable`, reset; then reading stops (Java: `WriteAbortedException`).
    fn exception(&mut self, start: usize) -> R<Value> {
        self.reset();
        let v = self.object()?;
        self.reset();
        match v {
            Value::Node(id) if matches!(self.nodes[id.0 as usize], Node::Object(_)) => Err(Stop::Exception(id)),
            _ => self.err(start, SerErrorKind::Malformed("TC_EXCEPTION not followed by a Throwable object".into())),
        }
    }

    fn enum_constant(&mut self) -> R<Value> {
        let desc = self.class_desc()?;
        let id = self.push(Node::Pending)?;
        self.new_handle(id)?;
        let at = self.cur.pos;
        let name = self.object()?;
        let constant = match self.string_of(&name) {
            Some(s) => s,
            None => return self.err(at, SerErrorKind::Malformed("enum constant name is not a string".into())),
        };
        self.nodes[id.0 as usize] = Node::Enum { class: desc, constant };
        Ok(Value::Node(id))
    }

    pub(crate) fn string_of(&self, v: &Value) -> Option<String> {
        match v {
            Value::Node(id) => match &self.nodes[id.0 as usize] {
                Node::String(s) => Some(s.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    /// `classDesc`: a new descriptor, a proxy descriptor, `TC_NULL` or a reference to a descriptor.
    pub(crate) fn class_desc(&mut self) -> R<Option<NodeId>> {
        let start = self.cur.pos;
        if self.depth >= self.limits.max_depth {
            return self.err(start, SerErrorKind::TooDeep(self.limits.max_depth));
        }
        self.depth += 1;
        let r = self.class_desc_inner(start);
        self.depth -= 1;
        r
    }

    fn class_desc_inner(&mut self, start: usize) -> R<Option<NodeId>> {
        let tc = self.cur.u8()?;
        match tc {
            TC_NULL => Ok(None),
            TC_REFERENCE => {
                let (h, id) = self.reference(start)?;
                match self.nodes[id.0 as usize] {
                    Node::ClassDesc(_) => Ok(Some(id)),
                    _ => self.err(start, SerErrorKind::WrongReference(h, "a class descriptor")),
                }
            }
            TC_CLASSDESC => {
                let name = self.cur.utf()?;
                let suid = self.cur.i64()?;
                let id = self.push(Node::Pending)?;
                self.new_handle(id)?;
                let flags = self.cur.u8()?;
                let fields = self.field_descs()?;
                let desc = ClassDesc {
                    name,
                    suid,
                    flags,
                    fields,
                    proxy_interfaces: None,
                    annotation: Vec::new(),
                    super_desc: None,
                    offset: start as u64,
                };
                self.finish_desc(id, desc)
            }
            TC_PROXYCLASSDESC => {
                let id = self.push(Node::Pending)?;
                self.new_handle(id)?;
                let at = self.cur.pos;
                let n = self.cur.i32()?;
                if n < 0 || n as usize > self.cur.left() / 2 {
                    return self.err(at, SerErrorKind::LengthTooLarge(n as i64));
                }
                self.charge(n as usize)?;
                let mut ifaces = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    ifaces.push(self.cur.utf()?);
                }
                let desc = ClassDesc {
                    name: String::new(),
                    suid: 0,
                    flags: SC_SERIALIZABLE,
                    fields: Vec::new(),
                    proxy_interfaces: Some(ifaces),
                    annotation: Vec::new(),
                    super_desc: None,
                    offset: start as u64,
                };
                self.finish_desc(id, desc)
            }
            _ => self.err(start, SerErrorKind::UnexpectedTypeCode(tc, "a class descriptor")),
        }
    }

    /// Class annotation and superclass descriptor, then the descriptor is stored at its handle's node.
    fn finish_desc(&mut self, id: NodeId, mut desc: ClassDesc) -> R<Option<NodeId>> {
        // Stored before the annotation and the superclass are read, so references to it resolve.
        self.nodes[id.0 as usize] = Node::ClassDesc(desc.clone());
        desc.annotation = self.annotation()?;
        desc.super_desc = self.class_desc()?;
        self.nodes[id.0 as usize] = Node::ClassDesc(desc);
        Ok(Some(id))
    }

    fn field_descs(&mut self) -> R<Vec<FieldDesc>> {
        let n = self.cur.u16()? as usize;
        // Each field takes at least 3 bytes (type code and an empty name).
        if n > self.cur.left() / 3 {
            return self.err(self.cur.pos - 2, SerErrorKind::LengthTooLarge(n as i64));
        }
        self.charge(n)?;
        let mut fields = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.cur.pos;
            let type_code = self.cur.u8()?;
            let name = self.cur.utf()?;
            let class_name = match type_code {
                b'B' | b'C' | b'D' | b'F' | b'I' | b'J' | b'S' | b'Z' => None,
                b'L' | b'[' => {
                    let sat = self.cur.pos;
                    let v = self.object()?;
                    match self.string_of(&v) {
                        Some(s) => Some(s),
                        None => {
                            return self.err(sat, SerErrorKind::Malformed("field type name is not a string".into()))
                        }
                    }
                }
                other => return self.err(at, SerErrorKind::BadFieldType(other)),
            };
            fields.push(FieldDesc { type_code, name, class_name });
        }
        Ok(fields)
    }

    /// `classAnnotation` / `objectAnnotation`: contents up to `TC_ENDBLOCKDATA`.
    pub(crate) fn annotation(&mut self) -> R<Vec<Value>> {
        let mut out = Vec::new();
        loop {
            match self.cur.peek() {
                None => return self.err(self.cur.pos, SerErrorKind::Truncated),
                Some(TC_ENDBLOCKDATA) => {
                    self.cur.pos += 1;
                    return Ok(out);
                }
                Some(TC_RESET) => return self.err(self.cur.pos, SerErrorKind::NestedReset),
                Some(_) => {
                    let v = self.content()?;
                    out.push(v);
                }
            }
        }
    }
}
