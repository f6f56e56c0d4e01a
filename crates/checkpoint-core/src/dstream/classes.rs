//! Every class a checkpoint's stream names (each class descriptor: the classes Spark's
//! `ObjectInputStream.resolveClass` must load to read the file), with its serialVersionUID, grouped (JDK,
//! Scala, Spark, third-party libraries, the application's own), where it first sits in the object graph,
//! and the narrowest value for `spark.streaming.checkpoint.allowedClasses` (FORMATS.md §17.4).

use crate::javaser::{NodeId, Stream};
use std::collections::{BTreeMap, BTreeSet};

/// Which code base a class comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    /// `java.*`, `javax.*`, `jdk.*`, `sun.*`, `com.sun.*`, primitive arrays.
    Jdk,
    /// `scala.*`.
    Scala,
    /// `org.apache.spark.*`.
    Spark,
    /// A known library (Hadoop, Kafka, Jackson, Guava, ...).
    ThirdParty,
    /// Anything else: the application's own classes (and spark-shell's `$lineN.$read` classes).
    Application,
}

impl Group {
    /// The JSON name (`jdk`, `scala`, `spark`, `third_party`, `application`).
    pub fn as_str(self) -> &'static str {
        match self {
            Group::Jdk => "jdk",
            Group::Scala => "scala",
            Group::Spark => "spark",
            Group::ThirdParty => "third_party",
            Group::Application => "application",
        }
    }
}

/// Package prefixes of well-known libraries (anything not JDK, Scala, Spark or one of these is taken for
/// the application's own).
const THIRD_PARTY: &[&str] = &[
    "org.apache.",
    "com.google.",
    "com.fasterxml.",
    "org.codehaus.",
    "io.netty.",
    "org.slf4j.",
    "org.json4s.",
    "com.esotericsoftware.",
    "net.razorvine.",
    "py4j.",
    "org.joda.",
    "com.typesafe.",
    "akka.",
    "com.amazonaws.",
    "software.amazon.",
    "com.microsoft.",
    "com.datastax.",
    "org.elasticsearch.",
    "redis.clients.",
    "com.mongodb.",
    "org.mongodb.",
    "org.bson.",
    "org.postgresql.",
    "com.mysql.",
    "org.springframework.",
    "org.hibernate.",
    "com.mchange.",
    "groovy.",
    "org.mozilla.",
    "org.eclipse.",
    "org.xerial.",
    "com.github.",
    "net.jpountz.",
    "org.lz4.",
    "org.yaml.",
    "io.confluent.",
    "org.glassfish.",
    "com.twitter.",
    "org.roaringbitmap.",
    "bsh.",
    "clojure.",
    "org.python.",
    "net.sf.",
    "com.rometools.",
    "com.sun.syndication.",
    "org.jboss.",
    "io.delta.",
];

/// The group of a class name (array classes by their element type).
pub fn group_of(name: &str) -> Group {
    let elem = element_class(name);
    let Some(n) = elem else { return Group::Jdk };
    let starts = |p: &str| n.starts_with(p);
    if ["java.", "javax.", "jdk.", "sun.", "com.sun."].iter().any(|p| starts(p)) {
        Group::Jdk
    } else if starts("scala.") {
        Group::Scala
    } else if starts("org.apache.spark.") {
        Group::Spark
    } else if THIRD_PARTY.iter().any(|p| starts(p)) {
        Group::ThirdParty
    } else {
        Group::Application
    }
}

/// The element class of an array class name (`[[Lscala.Tuple2;` → `scala.Tuple2`), the name itself for
/// other classes, `None` for primitive arrays (`[I`).
pub fn element_class(name: &str) -> Option<&str> {
    let t = name.trim_start_matches('[');
    if t.len() == name.len() {
        return Some(name);
    }
    t.strip_prefix('L').map(|x| x.trim_end_matches(';'))
}

/// One class named by the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassEntry {
    /// Fully qualified name (for a dynamic proxy: one of its interfaces).
    pub name: String,
    /// serialVersionUID as recorded (0 for enums, proxies and non-serializable classes written as `Class`).
    pub suid: i64,
    /// `SC_*` flags of its descriptor.
    pub flags: u8,
    /// True for an interface of a dynamic proxy descriptor.
    pub proxy: bool,
    /// Byte offset of its (first) descriptor in the decompressed stream.
    pub offset: u64,
    /// The group.
    pub group: Group,
    /// Where the first object of the class sits, from the `Checkpoint` down (e.g.
    /// `graph.outputStreams[0](ForEachDStream).parent(StateDStream).checkpointData.data`).
    pub path: Option<String>,
}

/// The classes of a stream: one entry per (name, serialVersionUID), in stream order.
pub fn list(s: &Stream) -> Vec<ClassEntry> {
    let paths = super::paths::first_paths(s);
    let mut seen: BTreeSet<(String, i64)> = BTreeSet::new();
    let mut out = Vec::new();
    for (id, d) in s.descs() {
        let path = paths.get(&id).cloned();
        let names: Vec<(String, bool)> = match &d.proxy_interfaces {
            Some(ifaces) => ifaces.iter().map(|i| (i.clone(), true)).collect(),
            None => vec![(d.name.clone(), false)],
        };
        for (name, proxy) in names {
            if seen.insert((name.clone(), d.suid)) {
                let group = group_of(&name);
                out.push(ClassEntry {
                    name,
                    suid: d.suid,
                    flags: d.flags,
                    proxy,
                    offset: d.offset,
                    group,
                    path: path.clone(),
                });
            }
        }
    }
    out
}

/// The narrowest `spark.streaming.checkpoint.allowedClasses` value: the classes outside Spark, Scala and
/// `java.*` (array classes by their element class), comma-separated, sorted.
pub fn allowed_classes_setting(classes: &[ClassEntry]) -> String {
    let names: BTreeSet<&str> = classes
        .iter()
        .filter(|c| matches!(c.group, Group::ThirdParty | Group::Application | Group::Jdk))
        .filter_map(|c| element_class(&c.name))
        .filter(|n| !n.starts_with("java."))
        .collect();
    names.into_iter().collect::<Vec<_>>().join(",")
}

/// Counts per group.
pub fn counts(classes: &[ClassEntry]) -> BTreeMap<Group, usize> {
    let mut m = BTreeMap::new();
    for c in classes {
        *m.entry(c.group).or_insert(0) += 1;
    }
    m
}

/// The descriptor of the first class named `name`, when the stream has one.
pub fn find<'a>(classes: &'a [ClassEntry], name: &str) -> Option<&'a ClassEntry> {
    classes.iter().find(|c| c.name == name)
}

/// A class id helper for [`super::paths`].
pub(crate) fn desc_of(s: &Stream, id: NodeId) -> Option<NodeId> {
    match s.node(id) {
        crate::javaser::Node::Object(o) => Some(o.class),
        crate::javaser::Node::Array(a) => Some(a.class),
        crate::javaser::Node::Enum { class, .. } => *class,
        crate::javaser::Node::Class(c) => *c,
        _ => None,
    }
}
