//! The elements of the JDK and Scala collections a `Checkpoint` holds, read from the tree without running
//! their `readObject`: arrays; objects with an `array` field (Scala 2.12 `ArrayBuffer` with `size0`,
//! `mutable.ArraySeq` with `length`, `WrappedArray`); and collections that write their elements as custom
//! data (`java.util.ArrayList`/`HashMap`, Scala 2.12 `mutable.HashMap`, `List$SerializationProxy`, Scala
//! 2.13 `DefaultSerializationProxy`): the objects of their `writeObject` annotation, in order, without the
//! end marker (`ListSerializeEnd$`, `SerializeEnd$`).

use crate::javaser::{ArrayElems, Object, Prim, Stream, Value};

/// The elements of a sequence value (array or collection object), empty when it is neither.
pub fn seq(s: &Stream, v: &Value) -> Vec<Value> {
    seq_iter(s, v).cloned().collect()
}

/// [`seq`] without a copy: the elements borrowed from the tree, in order (what walks that recurse into each
/// element take, so that a collection shared by every level is never held once per level).
pub fn seq_iter<'a>(s: &'a Stream, v: &'a Value) -> Box<dyn Iterator<Item = &'a Value> + 'a> {
    if let Some(a) = s.array(v) {
        return match &a.elems {
            ArrayElems::Values(v) => Box::new(v.iter()),
            _ => Box::new(std::iter::empty()),
        };
    }
    let Some(o) = s.object(v) else { return Box::new(std::iter::empty()) };
    match s.class_name(o) {
        "scala.collection.immutable.Nil$" | "scala.None$" => return Box::new(std::iter::empty()),
        "scala.collection.immutable.$colon$colon" => return Box::new(cons_list(s, o)),
        _ => {}
    }
    if let Some(arr) = s.field(o, "array") {
        // Only a real array: a hostile `array` field pointing back at the object must not recurse.
        let elems: &[Value] = match s.array(arr).map(|a| &a.elems) {
            Some(ArrayElems::Values(v)) => v,
            _ => &[],
        };
        let used = ["size0", "length", "size"].iter().find_map(|f| match s.field(o, f) {
            Some(Value::Prim(Prim::Int(n))) => Some(*n),
            _ => None,
        });
        let n = used.filter(|n| *n >= 0).map_or(elems.len(), |n| (n as usize).min(elems.len()));
        return Box::new(elems[..n].iter());
    }
    Box::new(custom_data_objects(s, o))
}

/// The entries of a map value (custom data written as key, value, key, value ...).
pub fn map_entries(s: &Stream, v: &Value) -> Vec<(Value, Value)> {
    let Some(o) = s.object(v) else { return Vec::new() };
    let items: Vec<Value> = custom_data_objects(s, o).cloned().collect();
    // Scala 2.13 maps write (key, value) tuples; older ones keys and values in turn.
    if items.iter().all(|i| s.object(i).is_some_and(|t| s.class_name(t) == "scala.Tuple2")) && !items.is_empty() {
        return items.iter().filter_map(|t| tuple2(s, t)).collect();
    }
    items.chunks_exact(2).map(|c| (c[0].clone(), c[1].clone())).collect()
}

/// `(_1, _2)` of a `scala.Tuple2`.
pub fn tuple2(s: &Stream, v: &Value) -> Option<(Value, Value)> {
    let o = s.object(v)?;
    Some((s.field(o, "_1")?.clone(), s.field(o, "_2")?.clone()))
}

/// Elements of a Scala 2.13 `::` chain (`head`, `next`), bounded by the arena size (loops end it).
fn cons_list<'a>(s: &'a Stream, o: &'a Object) -> impl Iterator<Item = &'a Value> + 'a {
    let mut cur = Some(o);
    let mut n = 0usize;
    std::iter::from_fn(move || {
        let c = cur?;
        if n > s.nodes.len() {
            return None;
        }
        n += 1;
        let h = s.field(c, "head")?;
        cur = s.field(c, "next").and_then(|x| s.object(x)).filter(|x| s.class_name(x).ends_with("$colon$colon"));
        Some(h)
    })
}

/// The objects a collection's `writeObject` wrote after its fields (block data and end markers dropped).
fn custom_data_objects<'a>(s: &'a Stream, o: &'a Object) -> impl Iterator<Item = &'a Value> + 'a {
    o.data.iter().flat_map(|cd| cd.annotation.iter()).filter(move |v| {
        if matches!(v, Value::Block(_)) {
            return false;
        }
        match s.object(v) {
            Some(x) => {
                let n = s.class_name(x);
                !(n.ends_with("ListSerializeEnd$") || n.ends_with("SerializeEnd$"))
            }
            None => true,
        }
    })
}

/// The milliseconds of a `Time` or `Duration` object (field `millis`, or Scala's mangled private
/// `org$apache$spark$streaming$Time$$millis`).
pub fn millis(s: &Stream, v: &Value) -> Option<i64> {
    let o = s.object(v)?;
    s.long_field(o, "millis").or_else(|| {
        let d = s.desc(o.class)?;
        let i = d.fields.iter().position(|f| f.type_code == b'J' && f.name.ends_with("$millis"))?;
        match o.data.iter().find(|cd| cd.class == o.class)?.values.get(i)? {
            Value::Prim(Prim::Long(m)) => Some(*m),
            _ => None,
        }
    })
}

/// A string value, or the strings of a `Some(string)`.
pub fn string(s: &Stream, v: &Value) -> Option<String> {
    if let Some(t) = s.string(v) {
        return Some(t.to_string());
    }
    let o = s.object(v)?;
    if s.class_name(o) == "scala.Some" {
        return s.field(o, "value").and_then(|x| s.string(x)).map(str::to_string);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::javaser::{
        parse, Limits, BASE_HANDLE, STREAM_HEADER, TC_CLASSDESC, TC_ENDBLOCKDATA, TC_NULL, TC_OBJECT,
    };

    #[test]
    fn a_collection_whose_array_field_points_to_itself_does_not_recurse() {
        // class x.Buf { Object array; } with array = this.
        let mut b = STREAM_HEADER.to_vec();
        b.extend([TC_OBJECT, TC_CLASSDESC, 0, 5]);
        b.extend(b"x.Buf");
        b.extend([0; 8]);
        b.extend([crate::javaser::SC_SERIALIZABLE, 0, 1, b'L', 0, 5]);
        b.extend(b"array");
        b.extend([crate::javaser::TC_STRING, 0, 18]);
        b.extend(b"Ljava/lang/Object;");
        b.extend([TC_ENDBLOCKDATA, TC_NULL, crate::javaser::TC_REFERENCE]);
        b.extend((BASE_HANDLE + 2).to_be_bytes());
        let s = parse(&b, &Limits::default()).expect("parses");
        assert_eq!(s.field(s.object(&s.top[0]).expect("object"), "array"), Some(&s.top[0]));
        assert!(seq(&s, &s.top[0]).is_empty());
        assert!(map_entries(&s, &s.top[0]).is_empty());
    }
}
