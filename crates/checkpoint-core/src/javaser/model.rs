//! The tree [`super::parse`] builds: an arena of [`Node`]s (class descriptors, objects, strings, arrays,
//! classes, enum constants) addressed by [`NodeId`], and [`Value`]s that point into it. Back-references are
//! arena ids, so a self-referencing object is a node whose field points to itself: walkers must keep a
//! visited set (the helpers here never recurse).

/// Index of a node in [`Stream::nodes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

/// A primitive field or array element.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Prim {
    /// `B`
    Byte(i8),
    /// `C` (a UTF-16 code unit)
    Char(u16),
    /// `D`
    Double(f64),
    /// `F`
    Float(f32),
    /// `I`
    Int(i32),
    /// `J`
    Long(i64),
    /// `S`
    Short(i16),
    /// `Z`
    Boolean(bool),
}

/// A value: a field, an array element, or an item of an annotation (custom `writeObject` / `writeExternal`
/// data, class annotations) or of the top level.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `TC_NULL`.
    Null,
    /// A node (new, or a back-reference to an earlier one).
    Node(NodeId),
    /// A primitive.
    Prim(Prim),
    /// `TC_BLOCKDATA` / `TC_BLOCKDATALONG` bytes (only in annotations and at the top level).
    Block(Vec<u8>),
}

/// One field of a class descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDesc {
    /// The type code: `B C D F I J S Z` for primitives, `L` objects, `[` arrays.
    pub type_code: u8,
    /// The field name.
    pub name: String,
    /// For `L` and `[`: the JVM type descriptor (`Ljava/lang/String;`, `[I`).
    pub class_name: Option<String>,
}

/// A class descriptor (`TC_CLASSDESC`) or a dynamic proxy's (`TC_PROXYCLASSDESC`).
#[derive(Debug, Clone, PartialEq)]
pub struct ClassDesc {
    /// Fully qualified name (`java.util.HashMap`, `[Ljava.lang.Object;`); empty for a proxy.
    pub name: String,
    /// `serialVersionUID` as written (0 for proxies and enums).
    pub suid: i64,
    /// `SC_*` flags.
    pub flags: u8,
    /// Serializable fields in stream order.
    pub fields: Vec<FieldDesc>,
    /// For a proxy descriptor: its interface names; `None` for a class.
    pub proxy_interfaces: Option<Vec<String>>,
    /// The class annotation (what `annotateClass` wrote; empty for the JDK's own streams).
    pub annotation: Vec<Value>,
    /// The superclass descriptor, `None` at the top.
    pub super_desc: Option<NodeId>,
    /// Byte offset of the descriptor's type code.
    pub offset: u64,
}

impl ClassDesc {
    /// True for a `TC_PROXYCLASSDESC`.
    pub fn is_proxy(&self) -> bool {
        self.proxy_interfaces.is_some()
    }
    /// True when the class has a custom `writeObject` (`SC_WRITE_METHOD`).
    pub fn has_write_method(&self) -> bool {
        self.flags & super::SC_WRITE_METHOD != 0
    }
    /// True when the class is `Externalizable` (`SC_EXTERNALIZABLE`).
    pub fn is_externalizable(&self) -> bool {
        self.flags & super::SC_EXTERNALIZABLE != 0
    }
}

/// What one class of an object's hierarchy wrote: its fields (in descriptor order) and, with
/// `SC_WRITE_METHOD` or an externalizable class, the annotation up to `TC_ENDBLOCKDATA`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassData {
    /// The class descriptor this data belongs to.
    pub class: NodeId,
    /// Field values, one per [`ClassDesc::fields`] entry.
    pub values: Vec<Value>,
    /// Custom data (`writeObject` after the default fields, `writeExternal`).
    pub annotation: Vec<Value>,
}

/// An object (`TC_OBJECT`).
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// Its class descriptor.
    pub class: NodeId,
    /// Class data from the top-most serializable superclass down to the object's class.
    pub data: Vec<ClassData>,
    /// Byte offset of `TC_OBJECT`.
    pub offset: u64,
}

/// Elements of an array.
#[derive(Debug, Clone, PartialEq)]
pub enum ArrayElems {
    /// `[B` (kept as raw bytes).
    Bytes(Vec<u8>),
    /// Any other primitive array, kept as its big-endian bytes ([`ArrayElems::prims`] decodes them).
    Primitive {
        /// The element type code (`C D F I J S Z`).
        type_code: u8,
        /// The elements' bytes as written.
        raw: Vec<u8>,
    },
    /// Arrays of objects.
    Values(Vec<Value>),
}

impl ArrayElems {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            ArrayElems::Bytes(b) => b.len(),
            ArrayElems::Primitive { type_code, raw } => {
                raw.len() / super::classdata::prim_size(*type_code).unwrap_or(1)
            }
            ArrayElems::Values(v) => v.len(),
        }
    }
    /// True when the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The elements of a primitive array, decoded (empty for object arrays).
    pub fn prims(&self) -> Vec<Prim> {
        match self {
            ArrayElems::Bytes(b) => b.iter().map(|&x| Prim::Byte(x as i8)).collect(),
            ArrayElems::Primitive { type_code, raw } => {
                let n = super::classdata::prim_size(*type_code).unwrap_or(1);
                raw.chunks_exact(n).filter_map(|c| super::classdata::decode_prim(*type_code, c)).collect()
            }
            ArrayElems::Values(_) => Vec::new(),
        }
    }
}

/// An array (`TC_ARRAY`).
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// The array class descriptor (`[I`, `[Ljava.lang.Object;`).
    pub class: NodeId,
    /// The elements.
    pub elems: ArrayElems,
    /// Byte offset of `TC_ARRAY`.
    pub offset: u64,
}

/// A node of the tree: what a handle can point to.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A class descriptor.
    ClassDesc(ClassDesc),
    /// An object.
    Object(Object),
    /// A string (`TC_STRING` or `TC_LONGSTRING`).
    String(String),
    /// An array.
    Array(Array),
    /// A `java.lang.Class` (`TC_CLASS`): its descriptor.
    Class(Option<NodeId>),
    /// An enum constant (`TC_ENUM`): its class descriptor and constant name.
    Enum {
        /// The enum's class descriptor.
        class: Option<NodeId>,
        /// The constant's name.
        constant: String,
    },
    /// Placeholder of an object, array or enum whose content is still being read; left in a [`Stream`] only
    /// for the objects a `TC_EXCEPTION` interrupted.
    Pending,
}

/// A parsed stream: every node and the top-level contents in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Stream {
    /// The arena.
    pub nodes: Vec<Node>,
    /// Top-level contents, in stream order.
    pub top: Vec<Value>,
    /// `TC_EXCEPTION`: the writer aborted and wrote this `Throwable` instead; reading stopped there (as
    /// `ObjectInputStream` throws `WriteAbortedException`).
    pub exception: Option<NodeId>,
    /// Number of `TC_RESET`s met.
    pub resets: u32,
}

impl Stream {
    /// The node `id`.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0 as usize]
    }
    /// The class descriptor `id`, when it is one.
    pub fn desc(&self, id: NodeId) -> Option<&ClassDesc> {
        match self.node(id) {
            Node::ClassDesc(d) => Some(d),
            _ => None,
        }
    }
    /// The object a value points to, when it does.
    pub fn object(&self, v: &Value) -> Option<&Object> {
        match v {
            Value::Node(id) => match self.node(*id) {
                Node::Object(o) => Some(o),
                _ => None,
            },
            _ => None,
        }
    }
    /// The string a value points to, when it does.
    pub fn string(&self, v: &Value) -> Option<&str> {
        match v {
            Value::Node(id) => match self.node(*id) {
                Node::String(s) => Some(s),
                _ => None,
            },
            _ => None,
        }
    }
    /// The array a value points to, when it does.
    pub fn array(&self, v: &Value) -> Option<&Array> {
        match v {
            Value::Node(id) => match self.node(*id) {
                Node::Array(a) => Some(a),
                _ => None,
            },
            _ => None,
        }
    }
    /// The class name of an object (its most derived class).
    pub fn class_name(&self, o: &Object) -> &str {
        self.desc(o.class).map(|d| d.name.as_str()).unwrap_or("")
    }
    /// The value of field `name` of an object, searching from its own class up to its superclasses.
    pub fn field<'a>(&'a self, o: &'a Object, name: &str) -> Option<&'a Value> {
        for cd in o.data.iter().rev() {
            let Some(d) = self.desc(cd.class) else { continue };
            if let Some(i) = d.fields.iter().position(|f| f.name == name) {
                return cd.values.get(i);
            }
        }
        None
    }
    /// The class data of the class named `class` in an object's hierarchy.
    pub fn class_data<'a>(&'a self, o: &'a Object, class: &str) -> Option<&'a ClassData> {
        o.data.iter().find(|cd| self.desc(cd.class).is_some_and(|d| d.name == class))
    }
    /// The `long` field `name`, when it is one.
    pub fn long_field(&self, o: &Object, name: &str) -> Option<i64> {
        match self.field(o, name)? {
            Value::Prim(Prim::Long(v)) => Some(*v),
            _ => None,
        }
    }
    /// Every class descriptor in the stream, in stream order.
    pub fn descs(&self) -> impl Iterator<Item = (NodeId, &ClassDesc)> {
        self.nodes.iter().enumerate().filter_map(|(i, n)| match n {
            Node::ClassDesc(d) => Some((NodeId(i as u32), d)),
            _ => None,
        })
    }
    /// The descriptor chain of `id`: the class, then its superclasses (stops at loops and after 64, the
    /// reader's default [`super::Limits::max_hierarchy`]).
    pub fn hierarchy(&self, id: NodeId) -> Vec<NodeId> {
        let mut out = vec![id];
        let mut cur = self.desc(id).and_then(|d| d.super_desc);
        while let Some(s) = cur {
            if out.len() >= 64 || out.contains(&s) {
                break;
            }
            out.push(s);
            cur = self.desc(s).and_then(|d| d.super_desc);
        }
        out
    }
}
