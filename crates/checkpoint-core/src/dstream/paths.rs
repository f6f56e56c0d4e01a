//! Where a class sits in the object graph: a breadth-first walk from the top-level objects over fields,
//! array elements and custom data, keeping the first way each node is reached (a visited set, so
//! back-references and cycles end the walk), and for every class descriptor the path of its first object
//! (including objects of subclasses, so an abstract `DStream` gets the first concrete DStream).
//!
//! The way each node is reached is kept as a `Label` that borrows its name from the tree: a field name of
//! 65,535 bytes is held once however many objects it leads to. A path shows at most 24 segments
//! (`MAX_SEGMENTS`), each name in it at most 200 characters (`MAX_NAME_CHARS`), the whole at most 2,048
//! (`MAX_PATH_CHARS`); longer ones keep their start and end around an ellipsis.

use super::classes::desc_of;
use crate::javaser::{ArrayElems, Node, NodeId, Stream, Value};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

/// Classes that get a path at most (a hostile stream may name a million; real ones name tens).
const MAX_PATHS: usize = 10_000;

/// Segments shown at most; longer paths keep their start and end.
const MAX_SEGMENTS: usize = 24;

/// Characters of a field or class name shown in a path at most (real names are tens of characters).
const MAX_NAME_CHARS: usize = 200;

/// Characters of a path at most.
const MAX_PATH_CHARS: usize = 2048;

/// How a node is reached from its parent (or, for a top-level node, its name), rendered only for paths.
#[derive(Clone, Copy)]
enum Label<'a> {
    /// A top-level object: its class's simple name.
    Top(&'a str),
    /// A top-level value that is no object: its position.
    TopIndex(usize),
    /// A field, by name.
    Field(&'a str),
    /// An array element, by index.
    Element(usize),
    /// An object of a class's custom data (`writeObject`), by position.
    Custom(usize),
}

impl Label<'_> {
    fn push_to(self, out: &mut String) {
        match self {
            Label::Top(name) => push_name(out, name),
            Label::TopIndex(i) => out.push_str(&format!("top[{i}]")),
            Label::Field(name) => {
                out.push('.');
                push_name(out, name);
            }
            Label::Element(i) => out.push_str(&format!("[{i}]")),
            Label::Custom(k) => out.push_str(&format!("{{{k}}}")),
        }
    }
}

/// `name`, cut after [`MAX_NAME_CHARS`] characters with an ellipsis.
fn push_name(out: &mut String, name: &str) {
    match name.char_indices().nth(MAX_NAME_CHARS) {
        Some((cut, _)) => {
            out.push_str(&name[..cut]);
            out.push('…');
        }
        None => out.push_str(name),
    }
}

/// The path of the first object of each class descriptor (by descriptor id).
pub fn first_paths(s: &Stream) -> BTreeMap<NodeId, String> {
    let mut parent: HashMap<NodeId, (Option<NodeId>, Label<'_>)> = HashMap::new();
    let mut queue: VecDeque<NodeId> = VecDeque::new();
    for (i, v) in s.top.iter().enumerate() {
        if let Value::Node(id) = v {
            if !parent.contains_key(id) {
                let label = match s.node(*id) {
                    Node::Object(o) => Label::Top(simple(s.class_name(o))),
                    _ => Label::TopIndex(i),
                };
                parent.insert(*id, (None, label));
                queue.push_back(*id);
            }
        }
    }
    let mut out: BTreeMap<NodeId, String> = BTreeMap::new();
    let mut done: HashSet<NodeId> = HashSet::new();
    while let Some(id) = queue.pop_front() {
        if let Some(desc) = desc_of(s, id).filter(|d| out.len() < MAX_PATHS && done.insert(*d)) {
            for h in s.hierarchy(desc) {
                out.entry(h).or_insert_with(|| path_of(s, &parent, id));
            }
        }
        for (label, child) in children(s, id) {
            if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(child) {
                e.insert((Some(id), label));
                queue.push_back(child);
            }
        }
    }
    out
}

/// The labelled edges out of a node: fields by name, elements by index, custom data by position.
fn children(s: &Stream, id: NodeId) -> Vec<(Label<'_>, NodeId)> {
    let mut out = Vec::new();
    match s.node(id) {
        Node::Object(o) => {
            for cd in &o.data {
                let fields = s.desc(cd.class).map(|d| d.fields.as_slice()).unwrap_or(&[]);
                for (f, v) in fields.iter().zip(&cd.values) {
                    if let Value::Node(c) = v {
                        out.push((Label::Field(&f.name), *c));
                    }
                }
                let mut k = 0;
                for v in &cd.annotation {
                    if let Value::Node(c) = v {
                        out.push((Label::Custom(k), *c));
                        k += 1;
                    }
                }
            }
        }
        Node::Array(a) => {
            if let ArrayElems::Values(vs) = &a.elems {
                for (i, v) in vs.iter().enumerate() {
                    if let Value::Node(c) = v {
                        out.push((Label::Element(i), *c));
                    }
                }
            }
        }
        _ => {}
    }
    out
}

fn path_of(s: &Stream, parent: &HashMap<NodeId, (Option<NodeId>, Label<'_>)>, id: NodeId) -> String {
    // The nodes from `id` up (ids only: the text is written for the segments shown).
    let mut up = Vec::new();
    let mut cur = Some(id);
    while let Some(c) = cur {
        let Some((p, _)) = parent.get(&c) else { break };
        up.push(c);
        cur = *p;
        if up.len() > 4096 {
            break;
        }
    }
    up.reverse();
    let shown: Vec<Option<NodeId>> = if up.len() > MAX_SEGMENTS {
        let head = up[..MAX_SEGMENTS / 2].iter().map(|c| Some(*c));
        let tail = up[up.len() - MAX_SEGMENTS / 2..].iter().map(|c| Some(*c));
        head.chain([None]).chain(tail).collect()
    } else {
        up.into_iter().map(Some).collect()
    };
    let mut out = String::new();
    for c in shown {
        let Some(c) = c else {
            out.push('…');
            continue;
        };
        let Some((p, label)) = parent.get(&c) else { continue };
        label.push_to(&mut out);
        if p.is_some() {
            if let Node::Object(o) = s.node(c) {
                let n = s.class_name(o);
                if n.ends_with("DStream") {
                    out.push('(');
                    push_name(&mut out, simple(n));
                    out.push(')');
                }
            }
        }
    }
    cut_middle(out)
}

/// `path` when it has at most [`MAX_PATH_CHARS`] characters; else its start and end around an ellipsis.
fn cut_middle(path: String) -> String {
    let n = path.chars().count();
    if n <= MAX_PATH_CHARS {
        return path;
    }
    let half = MAX_PATH_CHARS / 2;
    let head: String = path.chars().take(half).collect();
    let tail: String = path.chars().skip(n - (MAX_PATH_CHARS - half - 1)).collect();
    format!("{head}…{tail}")
}

/// The class name without its package (`org.apache.spark.streaming.dstream.StateDStream` → `StateDStream`).
pub fn simple(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}
