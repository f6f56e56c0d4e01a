//! Object and array data (`newObject`, `newArray`, `classdata` of the grammar): each class of an object's
//! hierarchy from the top-most serializable superclass down, its fields by type code, then its annotation
//! when it has a custom `writeObject` (`SC_WRITE_METHOD`) or is `Externalizable` written in block-data mode
//! (`SC_BLOCK_DATA`). Nothing is instantiated: only the descriptors say how to read.

use super::error::SerErrorKind;
use super::grammar::{Parser, R};
use super::model::{Array, ArrayElems, ClassData, Node, NodeId, Object, Prim, Value};
use super::*;

/// Size in bytes of a primitive type code's values, `None` for `L` and `[`.
pub fn prim_size(type_code: u8) -> Option<usize> {
    Some(match type_code {
        b'B' | b'Z' => 1,
        b'C' | b'S' => 2,
        b'F' | b'I' => 4,
        b'D' | b'J' => 8,
        _ => return None,
    })
}

/// Decodes one primitive of `type_code` from its big-endian bytes (`raw.len() == prim_size(type_code)`).
pub fn decode_prim(type_code: u8, raw: &[u8]) -> Option<Prim> {
    let mut a = [0u8; 8];
    a[..raw.len()].copy_from_slice(raw);
    Some(match type_code {
        b'B' => Prim::Byte(raw[0] as i8),
        b'Z' => Prim::Boolean(raw[0] != 0),
        b'C' => Prim::Char(u16::from_be_bytes([a[0], a[1]])),
        b'S' => Prim::Short(i16::from_be_bytes([a[0], a[1]])),
        b'F' => Prim::Float(f32::from_be_bytes([a[0], a[1], a[2], a[3]])),
        b'I' => Prim::Int(i32::from_be_bytes([a[0], a[1], a[2], a[3]])),
        b'D' => Prim::Double(f64::from_be_bytes(a)),
        b'J' => Prim::Long(i64::from_be_bytes(a)),
        _ => return None,
    })
}

impl Parser<'_> {
    /// `TC_OBJECT classDesc newHandle classdata[]`.
    pub(crate) fn new_object(&mut self, start: usize) -> R<Value> {
        let at = self.cur.pos;
        let Some(class) = self.class_desc()? else {
            return self.err(at, SerErrorKind::Malformed("TC_OBJECT with a null class descriptor".into()));
        };
        let id = self.push(Node::Pending)?;
        self.new_handle(id)?;
        let chain = self.top_down(class, at)?;
        let mut data = Vec::with_capacity(chain.len());
        for c in chain {
            data.push(self.class_data(c)?);
        }
        self.nodes[id.0 as usize] = Node::Object(Object { class, data, offset: start as u64 });
        Ok(Value::Node(id))
    }

    /// The descriptor chain of `class`, top-most superclass first; refuses loops and over-long chains.
    fn top_down(&mut self, class: NodeId, at: usize) -> R<Vec<NodeId>> {
        let mut chain = vec![class];
        let mut cur = class;
        loop {
            let next = match &self.nodes[cur.0 as usize] {
                Node::ClassDesc(d) => d.super_desc,
                _ => None,
            };
            let Some(s) = next else { break };
            if chain.contains(&s) || chain.len() >= self.limits.max_hierarchy {
                let name = self.desc_name(class);
                return self.err(at, SerErrorKind::BadHierarchy(name));
            }
            chain.push(s);
            cur = s;
        }
        chain.reverse();
        self.charge(chain.len())?;
        Ok(chain)
    }

    fn desc_name(&self, id: NodeId) -> String {
        match &self.nodes[id.0 as usize] {
            Node::ClassDesc(d) if d.is_proxy() => "a proxy class".into(),
            Node::ClassDesc(d) => d.name.clone(),
            _ => String::new(),
        }
    }

    /// The data one class of the hierarchy wrote.
    fn class_data(&mut self, class: NodeId) -> R<ClassData> {
        let (flags, types): (u8, Vec<u8>) = match &self.nodes[class.0 as usize] {
            Node::ClassDesc(d) => (d.flags, d.fields.iter().map(|f| f.type_code).collect()),
            _ => (0, Vec::new()),
        };
        let mut cd = ClassData { class, values: Vec::new(), annotation: Vec::new() };
        if flags & SC_EXTERNALIZABLE != 0 {
            if flags & SC_BLOCK_DATA == 0 {
                let name = self.desc_name(class);
                return self.err(self.cur.pos, SerErrorKind::ExternalizableWithoutBlockData(name));
            }
            cd.annotation = self.annotation()?;
            self.charge(cd.annotation.len())?;
        } else if flags & SC_SERIALIZABLE != 0 {
            self.charge(types.len())?;
            cd.values.reserve(types.len());
            for t in types {
                let v = self.field_value(t)?;
                cd.values.push(v);
            }
            if flags & SC_WRITE_METHOD != 0 {
                cd.annotation = self.annotation()?;
                self.charge(cd.annotation.len())?;
            }
        }
        Ok(cd)
    }

    /// One field value by its type code.
    fn field_value(&mut self, t: u8) -> R<Value> {
        match prim_size(t) {
            Some(n) => {
                let raw = self.cur.take(n)?;
                Ok(Value::Prim(decode_prim(t, raw).unwrap_or(Prim::Byte(0))))
            }
            None => self.object(),
        }
    }

    /// `TC_ARRAY classDesc newHandle (int)size values[size]`.
    pub(crate) fn array(&mut self, start: usize) -> R<Value> {
        let at = self.cur.pos;
        let Some(class) = self.class_desc()? else {
            return self.err(at, SerErrorKind::Malformed("TC_ARRAY with a null class descriptor".into()));
        };
        let name = self.desc_name(class);
        let elem = name.as_bytes().get(1).copied();
        if !name.starts_with('[') || elem.is_none() {
            return self.err(at, SerErrorKind::Malformed(format!("TC_ARRAY of class {name:?}, not an array class")));
        }
        let id = self.push(Node::Pending)?;
        self.new_handle(id)?;
        let len_at = self.cur.pos;
        let len = self.cur.i32()?;
        if len < 0 {
            return self.err(len_at, SerErrorKind::NegativeLength(len as i64));
        }
        let len = len as usize;
        let elem = elem.unwrap_or(b'L');
        let elems = match prim_size(elem) {
            Some(size) => {
                if len.saturating_mul(size) > self.cur.left() {
                    return self.err(len_at, SerErrorKind::LengthTooLarge(len as i64));
                }
                let raw = self.cur.take(len * size)?.to_vec();
                if elem == b'B' {
                    ArrayElems::Bytes(raw)
                } else {
                    ArrayElems::Primitive { type_code: elem, raw }
                }
            }
            None if elem == b'L' || elem == b'[' => {
                if len > self.cur.left() {
                    return self.err(len_at, SerErrorKind::LengthTooLarge(len as i64));
                }
                self.charge(len)?;
                let mut v = Vec::with_capacity(len);
                for _ in 0..len {
                    v.push(self.object()?);
                }
                ArrayElems::Values(v)
            }
            None => return self.err(at, SerErrorKind::BadFieldType(elem)),
        };
        self.nodes[id.0 as usize] = Node::Array(Array { class, elems, offset: start as u64 });
        Ok(Value::Node(id))
    }
}
