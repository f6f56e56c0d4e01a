//! Findings about the classes a DStream checkpoint names (the classes Spark must load to recover it):
//! known deserialization gadgets, content Spark's writer never produces, spark-shell classes a new session
//! cannot load, the allow-list value, and a pasted ClassNotFoundException / InvalidClassException /
//! allow-list refusal tied to the class, its recorded serialVersionUID and where it sits.

use super::dstream::{is_dstream, recovered_checkpoint, START_OVER};
use super::BACKUP;
use crate::dstream::classes::{allowed_classes_setting, counts, ClassEntry, Group};
use crate::dstream::gadgets::{gadget, unusual_jdk};
use crate::dstream::info::ALLOWED_CLASSES_NOTE;
use crate::model::Checkpoint;
use crate::report::{Code, Finding, RestartStage, Severity};
use crate::Context;

fn at(c: &ClassEntry) -> String {
    match &c.path {
        Some(p) => format!("serialVersionUID {}, at {p}", c.suid),
        None => format!("serialVersionUID {}", c.suid),
    }
}

/// `dstream-gadget-class`: classes of the known gadget list, in any readable checkpoint file.
pub fn check_gadgets(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    if !is_dstream(cp) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for f in &cp.dstream_files {
        let Ok(c) = &f.content else { continue };
        let hits: Vec<(&ClassEntry, &str)> =
            c.classes.iter().filter_map(|k| gadget(&k.name).map(|g| (k, g.chain))).collect();
        if hits.is_empty() {
            continue;
        }
        let names: Vec<&str> = hits.iter().map(|(k, _)| k.name.as_str()).collect();
        let mut fi = Finding::new(
            Code::DstreamGadgetClass,
            Severity::Error,
            format!("{} names known deserialization gadget classes: {}", f.path, names.join(", ")),
        )
        .why("Deserializing a stream runs the readObject methods of the classes it names; these classes are the links of published exploit chains (listed in the inspector's gadget list with their sources) that turn a crafted stream into code execution on the driver. No Spark checkpoint needs them: the file was made or changed by someone else, or the job serialized objects it should not.")
        .fix(&[
            "Do not restart from this checkpoint: keep a copy for investigation and tell your security team.".to_string(),
            "Find out who could write to the checkpoint directory, and restrict it.".into(),
            "On runtimes that filter DStream checkpoint classes, keep these classes out of spark.streaming.checkpoint.allowedClasses.".into(),
            START_OVER.into(),
        ]);
        for (k, chain) in hits {
            fi = fi.evidence(&f.path, format!("{} ({chain}); {}", k.name, at(k)), Some(k.offset));
        }
        out.push(fi);
    }
    out
}

/// `dstream-unexpected-content`: proxies, unusual JDK classes and stream oddities in the recovered file.
pub fn check_unexpected(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    if !is_dstream(cp) {
        return Vec::new();
    }
    let Some((f, c)) = recovered_checkpoint(cp) else { return Vec::new() };
    let mut items: Vec<(String, Option<u64>)> = Vec::new();
    for k in &c.classes {
        if gadget(&k.name).is_some() {
            continue;
        }
        if k.proxy {
            items.push((format!("a dynamic proxy implementing {}", k.name), Some(k.offset)));
        } else if unusual_jdk(&k.name) {
            items.push((format!("{} ({})", k.name, at(k)), Some(k.offset)));
        }
    }
    items.extend(c.oddities.iter().map(|o| (o.clone(), None)));
    if items.is_empty() {
        return Vec::new();
    }
    let mut fi = Finding::new(
        Code::DstreamUnexpectedContent,
        Severity::Warning,
        format!("{} holds what Spark's checkpoint writer never produces", f.path),
    )
    .why("CheckpointWriter writes exactly one org.apache.spark.streaming.Checkpoint: the graph of DStreams, their checkpoint data, SparkConf pairs and the closures of the job. Dynamic proxies and reflection, class-loading, naming, RMI, scripting or management classes are not part of it; they are how crafted streams reach code.")
    .fix(&[
        "Check who wrote this file and compare it with a copy from the running job before restarting from it.".to_string(),
        BACKUP.into(),
    ]);
    for (d, off) in items {
        fi = fi.evidence(&f.path, d, off);
    }
    vec![fi]
}

/// True for a class spark-shell generated for code typed in a session (`$line14.$read$$iw...`).
pub fn is_repl_class(name: &str) -> bool {
    name.strip_prefix("$line").is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()) && r.contains(".$read"))
}

/// `dstream-repl-class`: the recovered graph needs spark-shell classes.
pub fn check_repl(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    if !is_dstream(cp) {
        return Vec::new();
    }
    let Some((f, c)) = recovered_checkpoint(cp) else { return Vec::new() };
    let repl: Vec<&ClassEntry> = c.classes.iter().filter(|k| is_repl_class(&k.name)).collect();
    if repl.is_empty() {
        return Vec::new();
    }
    let mut fi = Finding::new(
        Code::DstreamReplClass,
        Severity::Error,
        format!("The DStream graph needs {} class(es) spark-shell generated in the session that wrote it", repl.len()),
    )
    .why("spark-shell compiles each typed-in line into classes named $line<N>.$read...; they exist only in that shell session (spark.repl.class.outputDir). A new session does not define them, so deserializing the checkpoint fails with ClassNotFoundException in every file and StreamingContext.getOrCreate throws SparkException: Failed to read checkpoint from directory.")
    .fix(&[
        "Restart from the same spark-shell session that wrote the checkpoint, if it still runs.".to_string(),
        "Move the job's code (case classes, functions) into a compiled jar on the classpath; checkpoints written after that recover in any session.".into(),
        START_OVER.into(),
    ])
    .fails(RestartStage::DstreamCheckpointRead, None, "org.apache.spark.SparkException");
    for k in repl {
        fi = fi.evidence(&f.path, format!("{} ({})", k.name, at(k)), Some(k.offset));
    }
    vec![fi]
}

/// Scala 2.12 classes whose Scala 2.13 counterpart is missing or has another serialVersionUID:
/// (class, its 2.12 serialVersionUID or `None` = any, what 2.13 has), from the Scala sources
/// (`scala/collection/mutable/ArrayBuffer.scala`: 2.13 `@SerialVersionUID(-1582447879429021880L)`;
/// `WrappedArray` is only a type alias of `ArraySeq` in 2.13).
const SCALA_212_ONLY: &[(&str, Option<i64>, &str)] = &[
    ("scala.collection.mutable.ArrayBuffer", Some(1529165946227428979), "serialVersionUID -1582447879429021880"),
    ("scala.collection.mutable.WrappedArray$ofRef", None, "no such class (WrappedArray is an alias of ArraySeq)"),
    ("scala.collection.mutable.WrappedArray$ofInt", None, "no such class (WrappedArray is an alias of ArraySeq)"),
    ("scala.collection.mutable.WrappedArray$ofLong", None, "no such class (WrappedArray is an alias of ArraySeq)"),
];

/// `dstream-scala-incompatible`: a Scala 2.12 checkpoint restarted on Spark 4.x (Scala 2.13).
pub fn check_scala_version(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let v = super::spark(ctx);
    if !is_dstream(cp) || !v.at_least(4, 0) {
        return Vec::new();
    }
    let Some((f, c)) = recovered_checkpoint(cp) else { return Vec::new() };
    let hits: Vec<(&ClassEntry, &str)> = c
        .classes
        .iter()
        .filter_map(|k| {
            let (_, _, then) = SCALA_212_ONLY.iter().find(|(n, s, _)| *n == k.name && s.is_none_or(|s| s == k.suid))?;
            Some((k, *then))
        })
        .collect();
    if hits.is_empty() {
        return Vec::new();
    }
    let mut fi = Finding::new(
        Code::DstreamScalaIncompatible,
        Severity::Error,
        format!("The checkpoint holds Scala 2.12 collection classes that Spark {v} (Scala 2.13) cannot read"),
    )
    .why("Spark 4.x is built with Scala 2.13 only, whose collection classes were rewritten: the Scala 2.12 classes the checkpoint names are missing or have another serialVersionUID, so ObjectInputStream throws InvalidClassException (local class incompatible) or ClassNotFoundException in every file, and StreamingContext.getOrCreate fails with SparkException: Failed to read checkpoint from directory.")
    .fix(&[
        "Restart on the Spark 3.x (Scala 2.12) build that wrote the checkpoint; upgrade after draining the job.".to_string(),
        "For the upgrade itself there is no in-place path: DStream checkpoints do not carry across Scala versions.".into(),
        START_OVER.into(),
    ])
    .fails(RestartStage::DstreamCheckpointRead, None, "org.apache.spark.SparkException");
    for (k, then) in hits {
        fi = fi.evidence(&f.path, format!("{} ({}); Scala 2.13 has {then}", k.name, at(k)), Some(k.offset));
    }
    vec![fi]
}

/// `dstream-allowed-classes`: the allow-list value for the recovered file's classes.
pub fn check_allowed(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    if !is_dstream(cp) {
        return Vec::new();
    }
    let Some((f, c)) = recovered_checkpoint(cp) else { return Vec::new() };
    let value = allowed_classes_setting(&c.classes);
    let n = counts(&c.classes);
    let g = |x: Group| n.get(&x).copied().unwrap_or(0);
    let summary = format!(
        "{} classes: {} JDK, {} Scala, {} Spark, {} third-party, {} application",
        c.classes.len(),
        g(Group::Jdk),
        g(Group::Scala),
        g(Group::Spark),
        g(Group::ThirdParty),
        g(Group::Application)
    );
    let (title, step) = if value.is_empty() {
        (
            "Every class of the checkpoint is a Spark, Scala or java.* class".to_string(),
            "Nothing to add to spark.streaming.checkpoint.allowedClasses beyond the runtime's defaults.".to_string(),
        )
    } else {
        (
            format!("{} class(es) of the checkpoint are outside Spark, Scala and java.*", value.split(',').count()),
            format!("Where the runtime filters DStream checkpoint classes, set spark.streaming.checkpoint.allowedClasses={value}"),
        )
    };
    vec![Finding::new(Code::DstreamAllowedClasses, Severity::Info, title)
        .evidence_sized(&f.path, f.size, summary, None)
        .why(format!("Runtimes that guard DStream checkpoint deserialization load only allow-listed classes; the narrowest list names exactly the classes this checkpoint holds outside the runtime's own. {ALLOWED_CLASSES_NOTE}"))
        .fix(&[step])]
}

/// What a pasted error says about one class.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ClassError {
    NotFound(String),
    Incompatible { class: String, stream: String, local: String },
    NotAllowed(String),
}

fn class_token(s: &str) -> String {
    s.trim_start().chars().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '$')).collect()
}

fn number_after<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    let i = s.find(key)? + key.len();
    let t = s[i..].trim_start();
    let end = t.find(|c: char| !(c.is_ascii_digit() || c == '-')).unwrap_or(t.len());
    Some(&t[..end]).filter(|n| !n.is_empty())
}

/// The class errors a pasted text names, in order.
fn parse_class_errors(text: &str, classes: &[ClassEntry]) -> Vec<ClassError> {
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(i) = line.find("ClassNotFoundException:") {
            out.push(ClassError::NotFound(class_token(&line[i + "ClassNotFoundException:".len()..])));
        } else if let Some(i) = line.find("InvalidClassException:") {
            let rest = &line[i + "InvalidClassException:".len()..];
            let class = class_token(rest);
            if let (Some(a), Some(b)) = (
                number_after(rest, "stream classdesc serialVersionUID ="),
                number_after(rest, "local class serialVersionUID ="),
            ) {
                out.push(ClassError::Incompatible { class, stream: a.into(), local: b.into() });
            } else if rest.contains("REJECTED") || rest.contains("not allowed") {
                out.push(ClassError::NotAllowed(class));
            }
        } else if line.contains("allowedClasses") || line.contains("not allowed") || line.contains("REJECTED") {
            if let Some(k) = classes.iter().filter(|k| line.contains(k.name.as_str())).max_by_key(|k| k.name.len()) {
                out.push(ClassError::NotAllowed(k.name.clone()));
            }
        }
    }
    out.dedup();
    out
}

/// `dstream-class-not-loadable`: a pasted class error tied to the class in the checkpoint files.
pub fn check_class_error(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let Some(text) = ctx.error_text.as_deref().filter(|_| is_dstream(cp)) else { return Vec::new() };
    let all: Vec<ClassEntry> =
        cp.dstream_files.iter().filter_map(|f| f.content.as_ref().ok()).flat_map(|c| c.classes.clone()).collect();
    parse_class_errors(text, &all).into_iter().filter_map(|e| class_error_finding(cp, &e)).collect()
}

fn class_error_finding(cp: &Checkpoint, e: &ClassError) -> Option<Finding> {
    let name = match e {
        ClassError::NotFound(n) | ClassError::NotAllowed(n) | ClassError::Incompatible { class: n, .. } => n,
    };
    let order = crate::dstream::recovery::try_order(&cp.dstream_files);
    let holding: Vec<(&crate::dstream::CheckpointFile, &ClassEntry)> = order
        .iter()
        .map(|&i| &cp.dstream_files[i])
        .filter_map(|f| Some((f, f.content.as_ref().ok()?.classes.iter().find(|k| &k.name == name)?)))
        .collect();
    let (_, first) = holding.first()?;
    let (title, what, step) = match e {
        ClassError::NotFound(_) => (
            format!("The checkpoint needs class {name}, which the restarted driver cannot load"),
            "ClassNotFoundException",
            format!("Put the jar that provides {name} back on the driver's classpath (spark-submit --jars / spark.jars, or the application jar), in the version that wrote the checkpoint."),
        ),
        ClassError::Incompatible { stream, local, .. } => (
            format!("Class {name} changed its serialVersionUID: the checkpoint has {stream}, the classpath {local}"),
            "InvalidClassException",
            format!("Pin the serialVersionUID: run with the version of {name} that wrote the checkpoint, or declare serialVersionUID = {stream}L in the new class (Scala: @SerialVersionUID({stream}L)) when its fields are still compatible."),
        ),
        ClassError::NotAllowed(_) => (
            format!("The runtime refuses class {name} of the checkpoint (not allow-listed)"),
            "allow-list refusal",
            format!("Add {name} to spark.streaming.checkpoint.allowedClasses (check the format your runtime accepts), after checking that the class belongs to your job."),
        ),
    };
    let mut f = Finding::new(Code::DstreamClassNotLoadable, Severity::Error, title)
        .why(format!("Recovering a DStream checkpoint deserializes the whole graph: every class the stream names is loaded by the driver (ObjectInputStream.resolveClass) and its serialVersionUID compared with the stream's. The pasted {what} names {name}, recorded with serialVersionUID {} at {}; every checkpoint file holding it fails the same way, so Spark cannot recover from any of them.", first.suid, first.path.as_deref().unwrap_or("the stream")))
        .fix(&[BACKUP.to_string(), step, START_OVER.into()])
        .fails(RestartStage::DstreamCheckpointRead, None, "org.apache.spark.SparkException");
    for (file, k) in holding.iter().take(5) {
        f = f.evidence_sized(&file.path, file.size, format!("{} ({})", k.name, at(k)), Some(k.offset));
    }
    f.explains_error_text = true;
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_errors_are_read_from_what_java_prints() {
        let text = "java.io.InvalidClassException: com.example.Event; local class incompatible: stream classdesc serialVersionUID = -5557748121070732540, local class serialVersionUID = 42\nCaused by: java.lang.ClassNotFoundException: org.apache.spark.rdd.kafka.KafkaRDDPartition\n";
        assert_eq!(
            parse_class_errors(text, &[]),
            vec![
                ClassError::Incompatible {
                    class: "com.example.Event".into(),
                    stream: "-5557748121070732540".into(),
                    local: "42".into()
                },
                ClassError::NotFound("org.apache.spark.rdd.kafka.KafkaRDDPartition".into()),
            ]
        );
        assert!(is_repl_class("$line14.$read$$iw$$iw$Fx$ClickEvent"));
        assert!(!is_repl_class("com.example.$line"));
    }
}
