//! The reader against streams a real JVM wrote (`tools/javaser-gen/JavaserGen.java`, Java 17): each
//! `out/<name>.ser` beside `out/<name>.expect`, the facts the Java program wrote (serialVersionUIDs from
//! `ObjectStreamClass`, the values themselves). The expected values come from the JVM, not from this reader.

use super::*;
use std::path::PathBuf;

fn out_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tools/javaser-gen/out"))
}

/// Every value of the tree (fields, elements, annotations of objects and descriptors, the top level).
pub(super) fn all_values(s: &Stream) -> Vec<&Value> {
    let mut out: Vec<&Value> = s.top.iter().collect();
    for n in &s.nodes {
        match n {
            Node::ClassDesc(d) => out.extend(d.annotation.iter()),
            Node::Object(o) => {
                for cd in &o.data {
                    out.extend(cd.values.iter().chain(cd.annotation.iter()));
                }
            }
            Node::Array(a) => {
                if let ArrayElems::Values(v) = &a.elems {
                    out.extend(v.iter());
                }
            }
            _ => {}
        }
    }
    out
}

fn unhex(h: &str) -> Vec<u8> {
    (0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex")).collect()
}

fn as_int(p: &Prim) -> i64 {
    match *p {
        Prim::Byte(v) => v as i64,
        Prim::Char(v) => v as i64,
        Prim::Double(v) => v.to_bits() as i64,
        Prim::Float(v) => v.to_bits() as i32 as i64,
        Prim::Int(v) => v as i64,
        Prim::Long(v) => v,
        Prim::Short(v) => v as i64,
        Prim::Boolean(v) => v as i64,
    }
}

fn objects<'a>(s: &'a Stream, class: &'a str) -> impl Iterator<Item = (NodeId, &'a Object)> + 'a {
    s.nodes.iter().enumerate().filter_map(move |(i, n)| match n {
        Node::Object(o) if s.class_name(o) == class => Some((NodeId(i as u32), o)),
        _ => None,
    })
}

/// Checks one line of a `.expect` file; `Err(why)` when the tree does not hold it.
fn holds(s: &Stream, line: &str) -> Result<(), String> {
    let parts: Vec<&str> = line.split(' ').collect();
    let strings = || s.nodes.iter().filter_map(|n| if let Node::String(t) = n { Some(t.as_str()) } else { None });
    let ok = match parts[0] {
        "class" => s.descs().any(|(_, d)| d.name == parts[1] && d.suid.to_string() == parts[2]),
        "proxy" => s.descs().any(|(_, d)| d.proxy_interfaces.as_ref().is_some_and(|i| i.join(",") == parts[1])),
        "enum" => s.nodes.iter().any(|n| match n {
            Node::Enum { class: Some(c), constant } => {
                constant == parts[2] && s.hierarchy(*c).iter().any(|h| s.desc(*h).is_some_and(|d| d.name == parts[1]))
            }
            _ => false,
        }),
        "string" => {
            let want = String::from_utf8(unhex(parts.get(1).copied().unwrap_or(""))).expect("utf8");
            strings().any(|t| t == want)
        }
        "longstring" => {
            let (n, prefix) = (parts[1].parse::<usize>().expect("n"), unhex(parts[2]));
            strings().any(|t| t.len() == n && t.as_bytes().starts_with(&prefix))
        }
        "array" | "objarray" => s.nodes.iter().any(|n| match n {
            Node::Array(a) if s.desc(a.class).is_some_and(|d| d.name == parts[1]) => {
                if parts[0] == "objarray" {
                    matches!(a.elems, ArrayElems::Values(_)) && a.elems.len().to_string() == parts[2]
                } else {
                    let got: Vec<String> = a.elems.prims().iter().map(|p| as_int(p).to_string()).collect();
                    got.join(",") == parts[2]
                }
            }
            _ => false,
        }),
        "block" => {
            let want = unhex(parts[1]);
            all_values(s).iter().any(|v| matches!(v, Value::Block(b) if b.windows(want.len()).any(|w| w == want)))
        }
        "selfref" => objects(s, parts[1]).any(|(id, o)| s.field(o, parts[2]) == Some(&Value::Node(id))),
        "shared" => objects(s, parts[1]).any(|(_, o)| {
            let (a, b) = (s.field(o, parts[2]), s.field(o, parts[3]));
            matches!(a, Some(Value::Node(_))) && a == b
        }),
        "resets" => s.resets.to_string() == parts[1],
        "exception" => s.exception.is_some_and(|id| match s.node(id) {
            Node::Object(o) => s.class_name(o) == parts[1],
            _ => false,
        }),
        other => return Err(format!("unknown expect line kind {other}")),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("not in the tree: {line}"))
    }
}

#[test]
fn streams_written_by_a_jvm_read_as_the_jvm_wrote_them() {
    let mut names: Vec<String> = std::fs::read_dir(out_dir())
        .expect("tools/javaser-gen/out")
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".ser").map(str::to_string))
        .collect();
    names.sort();
    assert_eq!(names, ["arrays", "backrefs", "enums", "exception", "externalizable", "proxy", "strings"]);
    for name in names {
        let bytes = std::fs::read(out_dir().join(format!("{name}.ser"))).expect("ser");
        let expect = std::fs::read_to_string(out_dir().join(format!("{name}.expect"))).expect("expect");
        let s = parse(&bytes, &Limits::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!s.top.is_empty(), "{name}: nothing read");
        let lines: Vec<&str> = expect.lines().filter(|l| !l.is_empty()).collect();
        assert!(lines.len() >= 2, "{name}: expect file too small");
        for line in lines {
            holds(&s, line).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        if name != "exception" {
            assert!(s.exception.is_none(), "{name}");
            assert!(!s.nodes.iter().any(|n| matches!(n, Node::Pending)), "{name}: unfinished node");
        }
    }
}

#[test]
fn the_proxy_and_externalizable_streams_have_the_flags_java_writes() {
    let bytes = std::fs::read(out_dir().join("externalizable.ser")).expect("ser");
    let s = parse(&bytes, &Limits::default()).expect("parses");
    let ext = s.descs().find(|(_, d)| d.name.ends_with("$Ext")).expect("Ext").1;
    assert!(ext.is_externalizable() && ext.flags & SC_BLOCK_DATA != 0 && ext.fields.is_empty());
    let bytes = std::fs::read(out_dir().join("proxy.ser")).expect("ser");
    let s = parse(&bytes, &Limits::default()).expect("parses");
    let (pid, _) = s.descs().find(|(_, d)| d.is_proxy()).expect("proxy desc");
    let chain: Vec<&str> = s.hierarchy(pid).iter().filter_map(|h| s.desc(*h)).map(|d| d.name.as_str()).collect();
    assert_eq!(chain, ["", "java.lang.reflect.Proxy"]);
    let obj = s.object(&s.top[0]).expect("proxy object");
    let h = s.object(s.field(obj, "h").expect("h")).expect("handler object");
    assert!(s.class_name(h).ends_with("$Handler"));
    assert_eq!(s.field(h, "tag").and_then(|v| s.string(v)), Some("handler-tag"));
}
