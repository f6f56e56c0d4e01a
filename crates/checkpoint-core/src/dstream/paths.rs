//! Where a class sits in the object graph: a breadth-first walk from the top-level objects over fields,
//! array elements and custom data, keeping the first way each node is reached (a visited set, so
//! back-references and cycles end the walk), and for every class descriptor the path of its first object
//! (including objects of subclasses, so an abstract `DStream` gets the first concrete DStream).

use super::classes::desc_of;
use crate::javaser::{ArrayElems, Node, NodeId, Stream, Value};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

/// Classes that get a path at most (a hostile stream may name a million; real ones name tens).
const MAX_PATHS: usize = 10_000;

/// Segments shown at most; longer paths keep their start and end.
const MAX_SEGMENTS: usize = 24;

/// The path of the first object of each class descriptor (by descriptor id).
pub fn first_paths(s: &Stream) -> BTreeMap<NodeId, String> {
    let mut parent: HashMap<NodeId, (Option<NodeId>, String)> = HashMap::new();
    let mut queue: VecDeque<NodeId> = VecDeque::new();
    for (i, v) in s.top.iter().enumerate() {
        if let Value::Node(id) = v {
            if !parent.contains_key(id) {
                let label = match s.node(*id) {
                    Node::Object(o) => simple(s.class_name(o)).to_string(),
                    _ => format!("top[{i}]"),
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
fn children(s: &Stream, id: NodeId) -> Vec<(String, NodeId)> {
    let mut out = Vec::new();
    match s.node(id) {
        Node::Object(o) => {
            for cd in &o.data {
                let fields = s.desc(cd.class).map(|d| d.fields.as_slice()).unwrap_or(&[]);
                for (f, v) in fields.iter().zip(&cd.values) {
                    if let Value::Node(c) = v {
                        out.push((format!(".{}", f.name), *c));
                    }
                }
                let mut k = 0;
                for v in &cd.annotation {
                    if let Value::Node(c) = v {
                        out.push((format!("{{{k}}}"), *c));
                        k += 1;
                    }
                }
            }
        }
        Node::Array(a) => {
            if let ArrayElems::Values(vs) = &a.elems {
                for (i, v) in vs.iter().enumerate() {
                    if let Value::Node(c) = v {
                        out.push((format!("[{i}]"), *c));
                    }
                }
            }
        }
        _ => {}
    }
    out
}

fn path_of(s: &Stream, parent: &HashMap<NodeId, (Option<NodeId>, String)>, id: NodeId) -> String {
    let mut segs = Vec::new();
    let mut cur = Some(id);
    while let Some(c) = cur {
        let Some((p, label)) = parent.get(&c) else { break };
        let mut seg = label.clone();
        if p.is_some() {
            if let Node::Object(o) = s.node(c) {
                let n = s.class_name(o);
                if n.ends_with("DStream") {
                    seg.push_str(&format!("({})", simple(n)));
                }
            }
        }
        segs.push(seg);
        cur = *p;
        if segs.len() > 4096 {
            break;
        }
    }
    segs.reverse();
    if segs.len() > MAX_SEGMENTS {
        let tail = segs.split_off(segs.len() - MAX_SEGMENTS / 2);
        segs.truncate(MAX_SEGMENTS / 2);
        segs.push("…".into());
        segs.extend(tail);
    }
    segs.concat()
}

/// The class name without its package (`org.apache.spark.streaming.dstream.StateDStream` → `StateDStream`).
pub fn simple(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}
