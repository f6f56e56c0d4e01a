//! Walks the tree of one `checkpoint-<ms>` file: the `org.apache.spark.streaming.Checkpoint` object
//! (Checkpoint.scala: `checkpointTime`, `master`, `framework`, `jars`, `graph`, `checkpointDir`,
//! `checkpointDuration`, `pendingTimes`, `sparkConfPairs`), its `DStreamGraph` (`outputStreams`,
//! `inputStreams`, `batchDuration`, `rememberDuration`, `zeroTime`) and every DStream reachable from it
//! (DStream.scala: `rememberDuration`, `checkpointDuration`, `mustCheckpoint`, `creationSite`,
//! `checkpointData` → DStreamCheckpointData.scala `data`: batch time → RDD checkpoint file).

use super::collections::{map_entries, millis, seq, seq_iter, string, tuple2};
use super::{CheckpointDatum, DStreamNode, Graph, SparkCheckpoint, Unreadable};
use crate::javaser::{Node, NodeId, Object, Prim, Stream, Value};
use std::collections::BTreeMap;

/// Most DStreams walked in one graph (real graphs have tens; the slide fix-point is quadratic in it).
const MAX_STREAMS: usize = 2000;

/// Most parents and checkpoint data entries looked at in one graph, all DStreams together (real graphs have a
/// few per DStream: each DStream writes its own `parents` and `checkpointData`). Collections shared by many
/// DStreams of a crafted stream would otherwise be listed again for each of them.
const MAX_GRAPH_ITEMS: usize = 100_000;

/// Most bytes of text copied into the checkpoint data entries of one graph (RDD checkpoint paths, class names):
/// an entry copies its path, so one long string shared by every entry would be copied for each of them.
const MAX_GRAPH_TEXT: usize = 16 << 20;

/// The class Spark writes.
pub const CHECKPOINT_CLASS: &str = "org.apache.spark.streaming.Checkpoint";

/// The walk of a parsed stream; `Err` when its first object is not a `Checkpoint` (Spark's
/// `asInstanceOf[Checkpoint]` throws `ClassCastException`).
pub fn walk(s: &Stream) -> Result<SparkCheckpoint, Unreadable> {
    let first = s.top.iter().find(|v| !matches!(v, Value::Block(_)));
    let Some(cp) = first.and_then(|v| s.object(v)).filter(|o| s.class_name(o) == CHECKPOINT_CLASS) else {
        let what = first
            .map(|v| match s.object(v) {
                Some(o) => format!("an object of class {}", s.class_name(o)),
                None => "not an object".to_string(),
            })
            .unwrap_or_else(|| "nothing".into());
        return Err(Unreadable {
            step: "checkpoint",
            offset: Some(4),
            reason: format!("the stream holds {what}, not an {CHECKPOINT_CLASS}"),
            exception: "java.lang.ClassCastException",
            not_verified: false,
        });
    };
    let text = |name: &str| s.field(cp, name).and_then(|v| string(s, v));
    let ms = |name: &str| s.field(cp, name).and_then(|v| millis(s, v));
    let mut out = SparkCheckpoint {
        master: text("master"),
        app_name: text("framework"),
        jars: s.field(cp, "jars").map(|v| seq(s, v).iter().filter_map(|j| string(s, j)).collect()).unwrap_or_default(),
        checkpoint_time_ms: ms("checkpointTime"),
        checkpoint_dir: text("checkpointDir"),
        checkpoint_duration_ms: ms("checkpointDuration"),
        pending_times_ms: s
            .field(cp, "pendingTimes")
            .map(|v| seq(s, v).iter().filter_map(|t| millis(s, t)).collect())
            .unwrap_or_default(),
        spark_conf: s
            .field(cp, "sparkConfPairs")
            .map(|v| {
                seq(s, v)
                    .iter()
                    .filter_map(|t| tuple2(s, t))
                    .filter_map(|(k, v)| Some((string(s, &k)?, string(s, &v).unwrap_or_default())))
                    .collect()
            })
            .unwrap_or_default(),
        graph: Graph::default(),
        classes: super::classes::list(s),
        oddities: oddities(s),
    };
    if let Some(g) = s.field(cp, "graph").and_then(|v| s.object(v)) {
        let (graph, cut) = graph(s, g);
        out.graph = graph;
        if cut {
            out.oddities.push(format!(
                "DStreams that share their parents or checkpoint data: the graph is listed up to its first \
                 {MAX_GRAPH_ITEMS} parents and checkpoint data entries, {} MiB of their text",
                MAX_GRAPH_TEXT >> 20
            ));
        }
    }
    Ok(out)
}

/// What Spark's writer never produces: more than one top-level object, resets, a written exception.
fn oddities(s: &Stream) -> Vec<String> {
    let mut out = Vec::new();
    let objects = s.top.iter().filter(|v| !matches!(v, Value::Block(_))).count();
    if objects > 1 {
        out.push(format!("{} objects at the top level (Spark writes one Checkpoint)", objects));
    }
    if s.top.iter().any(|v| matches!(v, Value::Block(_))) {
        out.push("block data at the top level".into());
    }
    if s.resets > 0 {
        out.push(format!("{} TC_RESET marker(s)", s.resets));
    }
    if let Some(e) = s.exception {
        let class = match s.node(e) {
            Node::Object(o) => s.class_name(o).to_string(),
            _ => String::new(),
        };
        out.push(format!("a TC_EXCEPTION ({class}): the writer aborted"));
    }
    out
}

/// The graph, and whether [`MAX_GRAPH_ITEMS`] cut it.
fn graph(s: &Stream, g: &Object) -> (Graph, bool) {
    let batch = s.field(g, "batchDuration").and_then(|v| millis(s, v));
    let mut w = GraphWalk {
        s,
        ids: BTreeMap::new(),
        streams: Vec::new(),
        batch,
        items_left: MAX_GRAPH_ITEMS,
        text_left: MAX_GRAPH_TEXT,
        cut: false,
    };
    let outputs = s.field(g, "outputStreams").map(|v| seq(s, v)).unwrap_or_default();
    let inputs = s.field(g, "inputStreams").map(|v| seq(s, v)).unwrap_or_default();
    let output_streams = outputs.iter().filter_map(|v| w.visit(v, 0)).collect();
    let input_streams = inputs.iter().filter_map(|v| w.visit(v, 0)).collect();
    w.fill_slides();
    let graph = Graph {
        batch_duration_ms: batch,
        remember_duration_ms: s.field(g, "rememberDuration").and_then(|v| millis(s, v)),
        zero_time_ms: s.field(g, "zeroTime").and_then(|v| millis(s, v)),
        output_streams,
        input_streams,
        streams: w.streams,
    };
    (graph, w.cut)
}

struct GraphWalk<'a> {
    s: &'a Stream,
    ids: BTreeMap<NodeId, usize>,
    streams: Vec<DStreamNode>,
    batch: Option<i64>,
    /// What is left of [`MAX_GRAPH_ITEMS`].
    items_left: usize,
    /// What is left of [`MAX_GRAPH_TEXT`].
    text_left: usize,
    /// True once [`MAX_GRAPH_ITEMS`] or [`MAX_GRAPH_TEXT`] stopped the walk.
    cut: bool,
}

impl GraphWalk<'_> {
    /// Adds the DStream `v` (and its parents) once; returns its index.
    fn visit(&mut self, v: &Value, depth: usize) -> Option<usize> {
        let Value::Node(id) = v else { return None };
        if let Some(i) = self.ids.get(id) {
            return Some(*i);
        }
        let s = self.s;
        let o = s.object(v)?;
        if depth > 200 || self.streams.len() >= MAX_STREAMS {
            return None;
        }
        let i = self.streams.len();
        self.ids.insert(*id, i);
        let mut n = node(s, o);
        n.checkpoint_data = s
            .field(o, "checkpointData")
            .and_then(|v| s.object(v))
            .map(|cd| checkpoint_data(s, cd, self))
            .unwrap_or_default();
        self.streams.push(n);
        // The parents are borrowed from the tree as they are visited: a `parents` collection that every
        // DStream of a chain shares is never copied once per level of the recursion.
        let ps = s.field(o, "parents").map(|ps| seq_iter(s, ps)).into_iter().flatten();
        let mut parents = Vec::new();
        // Python and Java wrappers hold the DStream they wrap (`dstream`, `asJavaDStream` are not parents).
        for p in s.field(o, "parent").into_iter().chain(ps) {
            if !self.take_item() {
                break;
            }
            if let Some(j) = self.visit(p, depth + 1) {
                parents.push(j);
            }
        }
        self.streams[i].parents = parents;
        Some(i)
    }

    /// Takes `n` bytes of [`MAX_GRAPH_TEXT`]; false (and the walk marked cut) when fewer are left.
    fn take_text(&mut self, n: usize) -> bool {
        if n > self.text_left {
            self.cut = true;
            self.text_left = 0;
            return false;
        }
        self.text_left -= n;
        true
    }

    /// Takes one item of [`MAX_GRAPH_ITEMS`]; false (and the walk marked cut) when none is left.
    fn take_item(&mut self) -> bool {
        if self.items_left == 0 {
            self.cut = true;
            return false;
        }
        self.items_left -= 1;
        true
    }

    /// A DStream without a recorded slide takes its first parent's, an input stream the batch duration.
    fn fill_slides(&mut self) {
        for _ in 0..self.streams.len() {
            let mut changed = false;
            for i in 0..self.streams.len() {
                if self.streams[i].slide_duration_ms.is_some() {
                    continue;
                }
                let from = match self.streams[i].parents.first() {
                    Some(p) => self.streams[*p].slide_duration_ms,
                    None => self.batch,
                };
                if from.is_some() {
                    self.streams[i].slide_duration_ms = from;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }
}

fn node(s: &Stream, o: &Object) -> DStreamNode {
    let ms = |name: &str| s.field(o, name).and_then(|v| millis(s, v));
    let creation_site = s.field(o, "creationSite").and_then(|v| s.object(v)).and_then(|c| {
        let short = s.field(c, "shortForm").and_then(|v| string(s, v));
        short.or_else(|| s.field(c, "longForm").and_then(|v| string(s, v)))
    });
    DStreamNode {
        class: s.class_name(o).to_string(),
        parents: Vec::new(),
        remember_duration_ms: ms("rememberDuration"),
        slide_duration_ms: ms("_slideDuration").or_else(|| ms("slideDuration")),
        checkpoint_duration_ms: ms("checkpointDuration"),
        must_checkpoint: matches!(s.field(o, "mustCheckpoint"), Some(Value::Prim(Prim::Boolean(true)))),
        creation_site,
        checkpoint_data: Vec::new(),
    }
}

/// `DStreamCheckpointData.data`: batch time → an RDD checkpoint file (a path string) or other data; each entry
/// taken from the walk's [`MAX_GRAPH_ITEMS`].
fn checkpoint_data(s: &Stream, cd: &Object, w: &mut GraphWalk<'_>) -> Vec<CheckpointDatum> {
    let Some(data) = s.field(cd, "data") else { return Vec::new() };
    if w.items_left == 0 {
        w.cut = true;
        return Vec::new();
    }
    let mut out: Vec<CheckpointDatum> = Vec::new();
    for (k, v) in map_entries(s, data) {
        if !w.take_item() {
            break;
        }
        let Some(time_ms) = millis(s, &k) else { continue };
        let (rdd_checkpoint, summary) = match s.string(&v) {
            Some(p) => {
                // The path is copied twice: a long string shared by every entry is charged each time.
                if !w.take_text(2 * p.len()) {
                    break;
                }
                (Some(p.to_string()), format!("RDD checkpoint {p}"))
            }
            None => match describe(s, &v, w) {
                Some(d) => (None, d),
                None => break,
            },
        };
        out.push(CheckpointDatum { time_ms, rdd_checkpoint, summary });
    }
    out.sort_by_key(|d| d.time_ms);
    out
}

/// A short description of a checkpointed value (`3 file names`, `2 × KafkaRDDPartition`); the elements looked
/// at are taken from the walk's [`MAX_GRAPH_ITEMS`] (`None` when it runs out).
fn describe(s: &Stream, v: &Value, w: &mut GraphWalk<'_>) -> Option<String> {
    if let Some(a) = s.array(v) {
        let mut n = 0usize;
        let mut all_strings = true;
        for e in seq_iter(s, v) {
            if !w.take_item() {
                return None;
            }
            n += 1;
            all_strings &= s.string(e).is_some();
        }
        if all_strings {
            return Some(format!("{n} file name(s)"));
        }
        let class = s.desc(a.class).map(|d| d.name.as_str()).unwrap_or_default();
        let elem = class.trim_start_matches("[L").trim_end_matches(';');
        if !w.take_text(elem.len()) {
            return None;
        }
        return Some(format!("{n} × {elem}"));
    }
    Some(match s.object(v) {
        Some(o) => {
            let class = s.class_name(o);
            if !w.take_text(class.len()) {
                return None;
            }
            format!("an object of class {class}")
        }
        None => "no value".into(),
    })
}
