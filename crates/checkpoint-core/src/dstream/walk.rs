//! Walks the tree of one `checkpoint-<ms>` file: the `org.apache.spark.streaming.Checkpoint` object
//! (Checkpoint.scala: `checkpointTime`, `master`, `framework`, `jars`, `graph`, `checkpointDir`,
//! `checkpointDuration`, `pendingTimes`, `sparkConfPairs`), its `DStreamGraph` (`outputStreams`,
//! `inputStreams`, `batchDuration`, `rememberDuration`, `zeroTime`) and every DStream reachable from it
//! (DStream.scala: `rememberDuration`, `checkpointDuration`, `mustCheckpoint`, `creationSite`,
//! `checkpointData` → DStreamCheckpointData.scala `data`: batch time → RDD checkpoint file).

use super::collections::{map_entries, millis, seq, string, tuple2};
use super::{CheckpointDatum, DStreamNode, Graph, SparkCheckpoint, Unreadable};
use crate::javaser::{Node, NodeId, Object, Prim, Stream, Value};
use std::collections::BTreeMap;

/// Most DStreams walked in one graph (real graphs have tens; the slide fix-point is quadratic in it).
const MAX_STREAMS: usize = 2000;

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
        out.graph = graph(s, g);
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

fn graph(s: &Stream, g: &Object) -> Graph {
    let batch = s.field(g, "batchDuration").and_then(|v| millis(s, v));
    let mut w = GraphWalk { s, ids: BTreeMap::new(), streams: Vec::new(), batch };
    let outputs = s.field(g, "outputStreams").map(|v| seq(s, v)).unwrap_or_default();
    let inputs = s.field(g, "inputStreams").map(|v| seq(s, v)).unwrap_or_default();
    let output_streams = outputs.iter().filter_map(|v| w.visit(v, 0)).collect();
    let input_streams = inputs.iter().filter_map(|v| w.visit(v, 0)).collect();
    w.fill_slides();
    Graph {
        batch_duration_ms: batch,
        remember_duration_ms: s.field(g, "rememberDuration").and_then(|v| millis(s, v)),
        zero_time_ms: s.field(g, "zeroTime").and_then(|v| millis(s, v)),
        output_streams,
        input_streams,
        streams: w.streams,
    }
}

struct GraphWalk<'a> {
    s: &'a Stream,
    ids: BTreeMap<NodeId, usize>,
    streams: Vec<DStreamNode>,
    batch: Option<i64>,
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
        self.streams.push(node(s, o));
        let mut parent_values: Vec<Value> = s.field(o, "parent").into_iter().cloned().collect();
        if let Some(ps) = s.field(o, "parents") {
            parent_values.extend(seq(s, ps));
        }
        // Python and Java wrappers hold the DStream they wrap (`dstream`, `asJavaDStream` are not parents).
        let parents: Vec<usize> = parent_values.iter().filter_map(|p| self.visit(p, depth + 1)).collect();
        self.streams[i].parents = parents;
        Some(i)
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
        checkpoint_data: s
            .field(o, "checkpointData")
            .and_then(|v| s.object(v))
            .map(|cd| checkpoint_data(s, cd))
            .unwrap_or_default(),
    }
}

/// `DStreamCheckpointData.data`: batch time → an RDD checkpoint file (a path string) or other data.
fn checkpoint_data(s: &Stream, cd: &Object) -> Vec<CheckpointDatum> {
    let Some(data) = s.field(cd, "data") else { return Vec::new() };
    let mut out: Vec<CheckpointDatum> = map_entries(s, data)
        .iter()
        .filter_map(|(k, v)| {
            let time_ms = millis(s, k)?;
            let (rdd_checkpoint, summary) = match s.string(v) {
                Some(p) => (Some(p.to_string()), format!("RDD checkpoint {p}")),
                None => (None, describe(s, v)),
            };
            Some(CheckpointDatum { time_ms, rdd_checkpoint, summary })
        })
        .collect();
    out.sort_by_key(|d| d.time_ms);
    out
}

/// A short description of a checkpointed value (`3 file names`, `2 × KafkaRDDPartition`).
fn describe(s: &Stream, v: &Value) -> String {
    let elems = seq(s, v);
    if let Some(a) = s.array(v) {
        let class = s.desc(a.class).map(|d| d.name.clone()).unwrap_or_default();
        if elems.iter().all(|e| s.string(e).is_some()) {
            return format!("{} file name(s)", elems.len());
        }
        let elem = class.trim_start_matches("[L").trim_end_matches(';');
        return format!("{} × {elem}", elems.len());
    }
    match s.object(v) {
        Some(o) => format!("an object of class {}", s.class_name(o)),
        None => "no value".into(),
    }
}
