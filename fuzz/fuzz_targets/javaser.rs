//! Any bytes into the Java serialization reader, raw and behind each codec Spark frames DStream
//! checkpoints with: it must return (a tree or an error with an offset inside the input), never panic,
//! hang or allocate without bound; and the DStream checkpoint walk over whatever tree comes out.
#![no_main]

use checkpoint_core::javaser::{parse, Limits, Node, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits { max_bytes: 1 << 20, max_nodes: 1 << 16, ..Limits::default() };
    // Most inputs start with the stream header so the fuzzer explores the grammar, not the magic check.
    let mut framed = checkpoint_core::javaser::STREAM_HEADER.to_vec();
    framed.extend_from_slice(data);
    for input in [data, &framed[..]] {
        match parse(input, &limits) {
            Ok(s) => {
                // Every reference inside the tree points into the arena.
                for n in &s.nodes {
                    if let Node::Object(o) = n {
                        assert!((o.class.0 as usize) < s.nodes.len());
                        for cd in &o.data {
                            for v in cd.values.iter().chain(cd.annotation.iter()) {
                                if let Value::Node(id) = v {
                                    assert!((id.0 as usize) < s.nodes.len());
                                }
                            }
                        }
                    }
                }
            }
            Err(e) => assert!(e.offset <= input.len() as u64, "offset {} past {}", e.offset, input.len()),
        }
    }
    if let Ok(d) = checkpoint_core::codec::decompress(data, 1 << 20) {
        let _ = parse(&d, &limits);
    }
    // The whole DStream file path: codec sniff, parse, the Checkpoint walk, classes and their paths.
    if data.len() < (1 << 20) {
        let _ = checkpoint_core::dstream::read_file("checkpoint-1", 1, false, &framed);
    }
});
