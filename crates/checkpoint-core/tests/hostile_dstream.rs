//! Hostile DStream checkpoints: small Java serialization streams whose shared references would make the walk of
//! the `Checkpoint` (its DStream graph, the class paths) hold far more memory than the stream's size. A counting
//! allocator measures the peak bytes held while one file is read.

use checkpoint_core::dstream::read_file;
use checkpoint_core::javaser::*;
#[path = "support/peak_alloc.rs"]
mod peak_alloc;
use peak_alloc::{one_at_a_time, peak_during};

fn utf(b: &mut Vec<u8>, s: &str) {
    b.extend((s.len() as u16).to_be_bytes());
    b.extend(s.as_bytes());
}

fn reference(b: &mut Vec<u8>, handle: u32) {
    b.push(TC_REFERENCE);
    b.extend((BASE_HANDLE + handle).to_be_bytes());
}

/// A class descriptor of `name` with one object field `field` (type `Ljava/lang/Object;`, given as a reference
/// to handle 1 once it exists, else as a new string).
fn class_with_field(b: &mut Vec<u8>, name: &str, field: &str, type_handle: Option<u32>) {
    b.extend([TC_CLASSDESC]);
    utf(b, name);
    b.extend([0; 8]);
    b.extend([SC_SERIALIZABLE, 0, 1, b'L']);
    utf(b, field);
    match type_handle {
        Some(h) => reference(b, h),
        None => {
            b.push(TC_STRING);
            utf(b, "Ljava/lang/Object;");
        }
    }
    b.extend([TC_ENDBLOCKDATA, TC_NULL]);
}

/// `Checkpoint { graph = DStreamGraph { outputStreams = [S0] } }` where every DStream `Si` of the class
/// `x.HostileDStream` has `parents` = one shared array `P = [S0, S1, ..., S(depth), S0 × filler]`: the walk
/// reaches `S(i+1)` from `Si`'s parents, `depth` levels deep, and every level meets the whole array.
fn shared_parents_checkpoint(depth: u32, filler: u32) -> Vec<u8> {
    let mut b = STREAM_HEADER.to_vec();
    // handles: 0 Checkpoint desc, 1 the type string, 2 the Checkpoint.
    b.push(TC_OBJECT);
    class_with_field(&mut b, "org.apache.spark.streaming.Checkpoint", "graph", None);
    // 3 DStreamGraph desc, 4 the graph.
    b.push(TC_OBJECT);
    class_with_field(&mut b, "org.apache.spark.streaming.DStreamGraph", "outputStreams", Some(1));
    // 5 the Object[] desc, 6 the outputStreams array.
    b.extend([TC_ARRAY, TC_CLASSDESC]);
    utf(&mut b, "[Ljava.lang.Object;");
    b.extend([0; 8]);
    b.extend([SC_SERIALIZABLE, 0, 0, TC_ENDBLOCKDATA, TC_NULL]);
    b.extend(1u32.to_be_bytes());
    // 7 the DStream desc, 8 S0.
    b.push(TC_OBJECT);
    class_with_field(&mut b, "x.HostileDStream", "parents", Some(1));
    // 9 P.
    b.push(TC_ARRAY);
    reference(&mut b, 5);
    b.extend((1 + depth + filler).to_be_bytes());
    reference(&mut b, 8);
    for _ in 0..depth {
        // S(i+1): a new object of the DStream class whose parents is P.
        b.push(TC_OBJECT);
        reference(&mut b, 7);
        reference(&mut b, 9);
    }
    for _ in 0..filler {
        reference(&mut b, 8);
    }
    b
}

#[test]
fn dstreams_sharing_one_parents_array_are_walked_in_memory_linear_in_the_stream() {
    let _one = one_at_a_time();
    // 52 KB: 190 DStreams, each the parent of the next, all with one parents array of 10,291 elements.
    let bytes = shared_parents_checkpoint(190, 10_100);
    assert!(bytes.len() < 53_000, "{} bytes", bytes.len());
    let t = std::time::Instant::now();
    let (f, peak) = peak_during(|| read_file("checkpoint-1", 1, false, &bytes));

    let c = f.content.expect("reads");
    assert_eq!(c.graph.streams.len(), 191);
    assert_eq!(c.graph.output_streams, vec![0]);
    // The graph as the stream says: S(i+1)'s parents start with S0..S(i+1) (itself included, as listed).
    assert_eq!(c.graph.streams[0].parents[..2], [0, 1]);
    assert_eq!(c.graph.streams[5].parents[..7], [0, 1, 2, 3, 4, 5, 6]);
    assert!(c.oddities.iter().any(|o| o.contains("share their parents")), "{:?}", c.oddities);
    // Before: each of the 190 levels of the walk cloned the 10,291-element array (about 245 MB held).
    assert!(peak < 64 * bytes.len() + (8 << 20), "{peak} bytes held for a {}-byte stream", bytes.len());
    assert!(t.elapsed() < std::time::Duration::from_secs(20), "took {:?}", t.elapsed());
}

/// `Checkpoint { graph = DStreamGraph { outputStreams = [S0] } }` where the DStreams `S0..S(streams - 1)` (each
/// the parent of the next) share one `checkpointData` whose `data` map holds `entries` batch times, each with
/// the same RDD checkpoint path of `path_len` bytes.
fn shared_checkpoint_data(streams: u32, entries: u32, path_len: usize) -> Vec<u8> {
    let mut b = STREAM_HEADER.to_vec();
    b.push(TC_OBJECT);
    class_with_field(&mut b, "org.apache.spark.streaming.Checkpoint", "graph", None); // 0, 1, 2
    b.push(TC_OBJECT);
    class_with_field(&mut b, "org.apache.spark.streaming.DStreamGraph", "outputStreams", Some(1)); // 3, 4
    b.extend([TC_ARRAY, TC_CLASSDESC]); // 5, 6
    utf(&mut b, "[Ljava.lang.Object;");
    b.extend([0; 8]);
    b.extend([SC_SERIALIZABLE, 0, 0, TC_ENDBLOCKDATA, TC_NULL]);
    b.extend(1u32.to_be_bytes());
    // 7 the DStream desc (checkpointData, parents), 8 S0.
    b.extend([TC_OBJECT, TC_CLASSDESC]);
    utf(&mut b, "x.HostileDStream");
    b.extend([0; 8]);
    b.extend([SC_SERIALIZABLE, 0, 2, b'L']);
    utf(&mut b, "checkpointData");
    reference(&mut b, 1);
    b.push(b'L');
    utf(&mut b, "parents");
    reference(&mut b, 1);
    b.extend([TC_ENDBLOCKDATA, TC_NULL]);
    // S0.checkpointData: 9 its desc, 10 the object; its data: 11 the HashMap desc, 12 the map.
    b.push(TC_OBJECT);
    class_with_field(&mut b, "org.apache.spark.streaming.dstream.DStreamCheckpointData", "data", Some(1));
    b.extend([TC_OBJECT, TC_CLASSDESC]);
    utf(&mut b, "java.util.HashMap");
    b.extend([0; 8]);
    b.extend([SC_SERIALIZABLE | SC_WRITE_METHOD, 0, 0, TC_ENDBLOCKDATA, TC_NULL]);
    let mut next = 13;
    for i in 0..entries {
        // A Time (13 its desc, then one handle each) and the path (15, then referenced).
        b.push(TC_OBJECT);
        if i == 0 {
            b.push(TC_CLASSDESC);
            utf(&mut b, "org.apache.spark.streaming.Time");
            b.extend([0; 8]);
            b.extend([SC_SERIALIZABLE, 0, 1, b'J']);
            utf(&mut b, "millis");
            b.extend([TC_ENDBLOCKDATA, TC_NULL]);
            next += 2;
        } else {
            reference(&mut b, 13);
            next += 1;
        }
        b.extend((1_000 * i64::from(i)).to_be_bytes());
        if i == 0 {
            b.push(TC_STRING);
            utf(&mut b, &"p".repeat(path_len));
            next += 1;
        } else {
            reference(&mut b, 15);
        }
    }
    b.push(TC_ENDBLOCKDATA);
    // S0.parents: P = [S0, S1, ...], each S(i+1) with the same checkpointData and parents.
    let p = next;
    b.push(TC_ARRAY);
    reference(&mut b, 5);
    b.extend(streams.to_be_bytes());
    reference(&mut b, 8);
    for _ in 1..streams {
        b.push(TC_OBJECT);
        reference(&mut b, 7);
        reference(&mut b, 10);
        reference(&mut b, p);
    }
    b
}

#[test]
fn dstreams_sharing_one_checkpoint_data_copy_its_paths_within_a_bound() {
    let _one = one_at_a_time();
    // 80 KB: 20 DStreams share a checkpoint data of 1,000 batches, each with one 60,000-byte path. Before, each
    // DStream copied the path twice per batch: 2.4 GB.
    let bytes = shared_checkpoint_data(20, 1_000, 60_000);
    assert!(bytes.len() < 80_000, "{} bytes", bytes.len());
    let (f, peak) = peak_during(|| read_file("checkpoint-1", 1, false, &bytes));
    let c = f.content.expect("reads");
    assert_eq!(c.graph.streams.len(), 20);
    let first = &c.graph.streams[0].checkpoint_data;
    assert!(!first.is_empty() && first.iter().all(|d| d.rdd_checkpoint.as_deref().is_some_and(|p| p.len() == 60_000)));
    assert!(c.oddities.iter().any(|o| o.contains("share their parents or checkpoint data")), "{:?}", c.oddities);
    assert!(peak < 40 << 20, "{peak} bytes held for a {}-byte stream", bytes.len());
}

/// A `Checkpoint` whose class `L` has one object field named by `name_len` bytes, leading through a chain of
/// `chain` more `L` objects to an array of `objects` `L` objects (each field holding an object of class `x.Y`),
/// then `classes` objects each of a class of its own.
fn long_field_chain(name_len: usize, chain: u32, objects: u32, classes: u32) -> Vec<u8> {
    let mut b = STREAM_HEADER.to_vec();
    // 0 the Checkpoint desc, 1 the type string, 2.. the chain.
    b.push(TC_OBJECT);
    class_with_field(&mut b, "org.apache.spark.streaming.Checkpoint", &"f".repeat(name_len), None);
    for _ in 0..chain {
        b.push(TC_OBJECT);
        reference(&mut b, 0);
    }
    let mut next = 3 + chain;
    b.extend([TC_ARRAY, TC_CLASSDESC]);
    utf(&mut b, "[Ljava.lang.Object;");
    b.extend([0; 8]);
    b.extend([SC_SERIALIZABLE, 0, 0, TC_ENDBLOCKDATA, TC_NULL]);
    next += 2;
    b.extend((objects + classes).to_be_bytes());
    let mut y = None;
    for _ in 0..objects {
        b.push(TC_OBJECT);
        reference(&mut b, 0);
        next += 1;
        b.push(TC_OBJECT);
        match y {
            Some(h) => reference(&mut b, h),
            None => {
                b.push(TC_CLASSDESC);
                utf(&mut b, "x.Y");
                b.extend([0; 8]);
                b.extend([SC_SERIALIZABLE, 0, 0, TC_ENDBLOCKDATA, TC_NULL]);
                y = Some(next);
                next += 1;
            }
        }
        next += 1;
    }
    for i in 0..classes {
        b.extend([TC_OBJECT, TC_CLASSDESC]);
        utf(&mut b, &format!("x.C{i}"));
        b.extend(i64::from(i).to_be_bytes());
        b.extend([SC_SERIALIZABLE, 0, 0, TC_ENDBLOCKDATA, TC_NULL]);
    }
    b
}

#[test]
fn class_paths_through_a_long_field_name_are_bounded() {
    let _one = one_at_a_time();
    // 186 KB: a 60,000-byte field name leading through 190 objects to 10,000 objects that each hold an object
    // through it, and 200 classes. Before, every object reached through the field held its own copy of the
    // name (600 MB), and every class's path 24 of them.
    let bytes = long_field_chain(60_000, 190, 10_000, 200);
    assert!(bytes.len() < 186_000, "{} bytes", bytes.len());
    let t = std::time::Instant::now();
    let (f, peak) = peak_during(|| read_file("checkpoint-1", 1, false, &bytes));
    let c = f.content.expect("reads");
    let paths: Vec<&str> = c.classes.iter().filter_map(|k| k.path.as_deref()).collect();
    assert_eq!(paths.len(), 203, "the Checkpoint, the array, x.Y and the 200 classes");
    for p in &paths {
        assert!(p.chars().count() <= 2048, "{} characters", p.chars().count());
    }
    let last = c.classes.iter().find(|k| k.name == "x.C199").and_then(|k| k.path.as_deref()).expect("path");
    assert!(last.starts_with("Checkpoint.ffff") && last.ends_with("[10199]"), "{last}");
    assert!(last.contains("f….f"), "each name cut with an ellipsis: {last}");
    assert!(peak < 16 << 20, "{peak} bytes held for a {}-byte stream", bytes.len());
    assert!(t.elapsed() < std::time::Duration::from_secs(20), "took {:?}", t.elapsed());
}
