//! Hostile streams: deep nesting, self-references, huge declared lengths, truncation at every byte, loops,
//! bad handles; each refused cleanly (an error with the byte offset) in bounded time and memory.

use super::*;

/// A tiny stream writer (the bytes `ObjectOutputStream` would write for the shapes the tests need).
#[derive(Default)]
struct W(Vec<u8>);

impl W {
    fn new() -> Self {
        W(STREAM_HEADER.to_vec())
    }
    fn u8(&mut self, b: u8) -> &mut Self {
        self.0.push(b);
        self
    }
    fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn i64(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn utf(&mut self, s: &str) -> &mut Self {
        self.u16(s.len() as u16);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    /// `TC_CLASSDESC name suid flags fields... TC_ENDBLOCKDATA TC_NULL` (fields: (type, name, class)).
    fn desc(&mut self, name: &str, suid: i64, flags: u8, fields: &[(u8, &str, &str)]) -> &mut Self {
        self.u8(TC_CLASSDESC).utf(name).i64(suid).u8(flags).u16(fields.len() as u16);
        for (t, n, c) in fields {
            self.u8(*t).utf(n);
            if *t == b'L' || *t == b'[' {
                self.u8(TC_STRING).utf(c);
            }
        }
        self.u8(TC_ENDBLOCKDATA).u8(TC_NULL)
    }
    fn reference(&mut self, n: u32) -> &mut Self {
        self.u8(TC_REFERENCE);
        self.0.extend_from_slice(&(BASE_HANDLE + n).to_be_bytes());
        self
    }
}

fn err(bytes: &[u8]) -> SerError {
    parse(bytes, &Limits::default()).expect_err("refused")
}

#[test]
fn a_self_referencing_object_points_to_itself() {
    // class Node { Node next; } with next = this: desc (h0), field type string (h1), object (h2), next = ref h2.
    let mut w = W::new();
    w.u8(TC_OBJECT).desc("x.Node", 1, SC_SERIALIZABLE, &[(b'L', "next", "Lx/Node;")]).reference(2);
    let s = parse(&w.0, &Limits::default()).expect("parses");
    let Value::Node(id) = s.top[0] else { panic!("object") };
    let o = s.object(&s.top[0]).expect("object");
    assert_eq!(s.field(o, "next"), Some(&Value::Node(id)));
}

#[test]
fn deep_nesting_is_refused_at_the_depth_limit_without_exhausting_the_stack() {
    // Object[] holding an Object[] holding ... 100 000 deep.
    let mut w = W::new();
    w.u8(TC_ARRAY).desc("[Ljava.lang.Object;", 1, SC_SERIALIZABLE, &[]).i32(1);
    for _ in 0..100_000 {
        w.u8(TC_ARRAY).reference(0).i32(1);
    }
    w.u8(TC_NULL);
    let bytes = w.0;
    // A small stack, like a browser worker's: the depth limit must hold before it runs out.
    let r = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || parse(&bytes, &Limits::default()))
        .expect("thread")
        .join()
        .expect("no stack overflow");
    let e = r.expect_err("too deep");
    assert_eq!(e.kind, SerErrorKind::TooDeep(200));
    assert!(e.offset > 0);
}

#[test]
fn huge_declared_lengths_are_refused_before_allocating() {
    let mut w = W::new();
    w.u8(TC_LONGSTRING).i64(i64::MAX);
    assert_eq!(err(&w.0), SerError { offset: 5, kind: SerErrorKind::LengthTooLarge(i64::MAX) });
    let mut w = W::new();
    w.u8(TC_ARRAY).desc("[I", 1, SC_SERIALIZABLE, &[]).i32(i32::MAX);
    assert_eq!(err(&w.0).kind, SerErrorKind::LengthTooLarge(i32::MAX as i64));
    let mut w = W::new();
    w.u8(TC_ARRAY).desc("[Ljava.lang.Object;", 1, SC_SERIALIZABLE, &[]).i32(i32::MAX);
    assert_eq!(err(&w.0).kind, SerErrorKind::LengthTooLarge(i32::MAX as i64));
    let mut w = W::new();
    w.u8(TC_BLOCKDATALONG).i32(i32::MAX);
    assert_eq!(err(&w.0).kind, SerErrorKind::LengthTooLarge(i32::MAX as i64));
    let mut w = W::new();
    w.u8(TC_BLOCKDATALONG).i32(-1);
    assert_eq!(err(&w.0).kind, SerErrorKind::NegativeLength(-1));
    let mut w = W::new();
    w.u8(TC_PROXYCLASSDESC).i32(i32::MAX);
    assert_eq!(err(&w.0).kind, SerErrorKind::LengthTooLarge(i32::MAX as i64));
    let mut w = W::new();
    w.u8(TC_CLASSDESC).utf("a.B").i64(0).u8(SC_SERIALIZABLE).u16(u16::MAX);
    assert_eq!(err(&w.0).kind, SerErrorKind::LengthTooLarge(u16::MAX as i64));
    let mut w = W::new();
    w.u8(TC_ARRAY).desc("[J", 1, SC_SERIALIZABLE, &[]).i32(-5);
    assert_eq!(err(&w.0).kind, SerErrorKind::NegativeLength(-5));
}

#[test]
fn every_truncation_of_a_jvm_stream_is_refused_or_read_up_to_a_content_boundary() {
    let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tools/javaser-gen/out"));
    for name in ["backrefs", "enums", "proxy", "externalizable", "arrays", "exception"] {
        let bytes = std::fs::read(dir.join(format!("{name}.ser"))).expect("ser");
        let whole = parse(&bytes, &Limits::default()).expect("whole stream parses");
        for n in 0..bytes.len() {
            match parse(&bytes[..n], &Limits::default()) {
                Ok(s) => assert!(s.top.len() <= whole.top.len(), "{name}[..{n}]"),
                Err(e) => assert!(e.offset <= n as u64, "{name}[..{n}]: offset {} past the end", e.offset),
            }
        }
        assert!(parse(&bytes[..bytes.len() - 1], &Limits::default()).is_err(), "{name}");
    }
}

#[test]
fn a_superclass_loop_is_refused() {
    // desc A (h0) whose superclass is a reference to itself, then an object of A.
    let mut w = W::new();
    w.u8(TC_OBJECT).u8(TC_CLASSDESC).utf("a.A").i64(1).u8(SC_SERIALIZABLE).u16(0).u8(TC_ENDBLOCKDATA).reference(0);
    assert_eq!(err(&w.0).kind, SerErrorKind::BadHierarchy("a.A".into()));
}

#[test]
fn bad_references_and_type_codes_are_refused_with_their_offset() {
    let mut w = W::new();
    w.reference(5);
    assert_eq!(err(&w.0), SerError { offset: 4, kind: SerErrorKind::BadHandle(BASE_HANDLE + 5) });
    let mut w = W::new();
    w.u8(TC_STRING).utf("s").u8(TC_OBJECT).reference(0);
    assert_eq!(err(&w.0).kind, SerErrorKind::WrongReference(BASE_HANDLE, "a class descriptor"));
    let mut w = W::new();
    w.u8(0x42);
    assert!(matches!(err(&w.0), SerError { offset: 4, kind: SerErrorKind::UnexpectedTypeCode(0x42, _) }));
    assert_eq!(err(b"PK\x03\x04").kind, SerErrorKind::BadHeader);
    assert_eq!(err(b"").kind, SerErrorKind::BadHeader);
    let mut w = W::new();
    w.u8(TC_OBJECT).desc("a.B", 1, SC_SERIALIZABLE, &[(b'Q', "f", "")]);
    assert_eq!(err(&w.0).kind, SerErrorKind::BadFieldType(b'Q'));
}

#[test]
fn a_reset_inside_an_object_and_unskippable_externalizable_data_are_refused() {
    let mut w = W::new();
    w.u8(TC_OBJECT).desc("a.B", 1, SC_SERIALIZABLE | SC_WRITE_METHOD, &[]).u8(TC_RESET);
    assert_eq!(err(&w.0).kind, SerErrorKind::NestedReset);
    let mut w = W::new();
    w.u8(TC_OBJECT).desc("a.Ext", 1, SC_EXTERNALIZABLE, &[]).i32(7);
    assert_eq!(err(&w.0).kind, SerErrorKind::ExternalizableWithoutBlockData("a.Ext".into()));
    // At the top level a reset clears the handle table: a later reference to an old handle is refused.
    let mut w = W::new();
    w.u8(TC_STRING).utf("s").u8(TC_RESET).reference(0);
    assert_eq!(err(&w.0).kind, SerErrorKind::BadHandle(BASE_HANDLE));
}

#[test]
fn the_node_and_handle_limits_hold() {
    let mut w = W::new();
    for _ in 0..1000 {
        w.u8(TC_STRING).utf("x");
    }
    let small = Limits { max_nodes: 100, ..Limits::default() };
    assert_eq!(parse(&w.0, &small).unwrap_err().kind, SerErrorKind::TooManyNodes(100));
    let small = Limits { max_handles: 10, ..Limits::default() };
    assert_eq!(parse(&w.0, &small).unwrap_err().kind, SerErrorKind::TooManyHandles(10));
    let small = Limits { max_bytes: 100, ..Limits::default() };
    assert_eq!(parse(&w.0, &small).unwrap_err().kind, SerErrorKind::TooLarge(w.0.len()));
    // Many TC_NULL elements: each counts against the node limit (bounded memory).
    let mut w = W::new();
    w.u8(TC_ARRAY).desc("[Ljava.lang.Object;", 1, SC_SERIALIZABLE, &[]).i32(5000);
    w.0.extend(std::iter::repeat_n(TC_NULL, 5000));
    let small = Limits { max_nodes: 1000, ..Limits::default() };
    assert_eq!(parse(&w.0, &small).unwrap_err().kind, SerErrorKind::TooManyNodes(1000));
    assert!(parse(&w.0, &Limits::default()).is_ok());
}

#[test]
fn values_charged_add_up_over_the_stream() {
    // Two arrays of 600 TC_NULLs with a limit of 1,000: each fits alone, not both. Before, `charge` compared
    // each array with the limit and counted nothing, so any number of arrays under it were kept.
    let arrays = |n: usize, len: i32| {
        let mut w = W::new();
        w.u8(TC_ARRAY).desc("[Ljava.lang.Object;", 1, SC_SERIALIZABLE, &[]).i32(len);
        w.0.extend(std::iter::repeat_n(TC_NULL, len as usize));
        for _ in 1..n {
            w.u8(TC_ARRAY).reference(0).i32(len);
            w.0.extend(std::iter::repeat_n(TC_NULL, len as usize));
        }
        w.0
    };
    let small = Limits { max_nodes: 1000, ..Limits::default() };
    assert!(parse(&arrays(1, 600), &small).is_ok());
    let e = parse(&arrays(2, 600), &small).unwrap_err();
    assert_eq!(e.kind, SerErrorKind::TooManyNodes(1000));
    assert_eq!(e.offset as usize, arrays(1, 600).len() + 10, "after the second array's length");
    // With the default limit (2^20): 64 arrays of 100,000 elements (6.4 MB of stream, 6.4 million values of
    // 24 bytes held before) are refused at the eleventh.
    let bytes = arrays(64, 100_000);
    let e = parse(&bytes, &Limits::default()).unwrap_err();
    assert_eq!(e.kind, SerErrorKind::TooManyNodes(1 << 20));
    assert!((e.offset as usize) < 11 * 100_010, "{}", e.offset);
}

#[test]
fn a_write_method_class_keeps_its_custom_data_after_the_fields() {
    let mut w = W::new();
    w.u8(TC_OBJECT).desc("a.C", 9, SC_SERIALIZABLE | SC_WRITE_METHOD, &[(b'I', "n", "")]).i32(3);
    w.u8(TC_BLOCKDATA).u8(2).u8(0xAB).u8(0xCD).u8(TC_STRING).utf("tail").u8(TC_ENDBLOCKDATA);
    let s = parse(&w.0, &Limits::default()).expect("parses");
    let o = s.object(&s.top[0]).expect("object");
    assert_eq!(s.field(o, "n"), Some(&Value::Prim(Prim::Int(3))));
    let ann = &o.data[0].annotation;
    assert_eq!(ann[0], Value::Block(vec![0xAB, 0xCD]));
    assert_eq!(s.string(&ann[1]), Some("tail"));
    assert_eq!(s.desc(o.class).map(|d| d.suid), Some(9));
}
