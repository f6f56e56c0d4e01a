//! Unit tests of the share link: redaction rules on hand-made reports, the format, the bounds and the errors.
//! (`tests/share_fixtures.rs` runs the redaction on every shared fixture and case.)

use super::*;
use serde_json::json;

/// A report holding one of each sensitive kind, in the places the inspector puts them.
fn sample() -> Value {
    json!({
        "inspector_version": "0.1.0",
        "input": {"name": "orders-prod.zip", "bytes": 100, "entries": 5},
        "checkpoints": [{
            "root": "jobs/orders",
            "kind": "structured_streaming",
            "query_id": "5f0c8e7a-1b2c-4d3e-8f90-a1b2c3d4e5f6",
            "batches": [{"batch_id": 0, "has_offsets": true, "committed": true, "timestamp_ms": 1, "watermark_ms": 0}],
            "last_batch_id": 0,
            "last_committed_batch_id": 0,
            "conf": {
                "spark.sql.shuffle.partitions": "4",
                "spark.hadoop.fs.s3a.secret.key": "wJalrXUtnFEMI/K7MDENG",
                "spark.hadoop.fs.s3a.access.key": "AKIAIOSFODNN7EXAMPLE",
                "spark.hadoop.fs.azure.account.key.acmeprod.dfs.core.windows.net": "c2VjcmV0",
                "spark.hadoop.fs.s3a.bucket.acme-raw.endpoint": "s3.eu-west-1.amazonaws.com",
                "spark.sql.warehouse.dir": "/warehouse/acme dir",
                "spark.kafka.bootstrap.servers": "broker1.acme.internal:9092,10.1.2.3:9093"
            },
            "sources": [
                {"index": 0, "kind": "kafka", "latest_offset": {"payments-events": {"0": 500, "1": 480}, "a": {"0": 1}}},
                {"index": 1, "kind": "delta", "latest_offset": {
                    "sourceVersion": 1, "reservoirId": "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9",
                    "reservoirVersion": 7, "index": -1, "isStartingVersion": false}},
                {"index": 2, "kind": "file", "latest_offset": {"logOffset": 3}}
            ],
            "operators": [],
            "findings": [{
                "code": "kafka-offsets-ahead",
                "severity": "error",
                "title": "payments-events-0 = 500 is ahead of the broker; table 0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9 too",
                "error_classes": [],
                "evidence": [
                    {"path": "offsets/1", "detail": "{\"payments-events\":{\"0\":500}} read from s3a://acme-raw/landing/orders/part-0.json."},
                    {"path": "jobs/orders/offsets/1", "detail": "checkpoint at abfss://ckpt@acmeprod.dfs.core.windows.net/chk/orders"},
                    {"path": "sources/0/0", "detail": "file:/srv/etl/job/input1/x.json and C:\\data\\in\\y.json, see https://spark.apache.org/docs/latest/"}
                ],
                "why": "topic a was recreated; token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop",
                "fix": [".option(\"startingOffsets\", \"\"\"{\"payments-events\":{\"0\":300}}\"\"\")"],
                "explains_error_text": false
            }],
            "restart": {"outcome": "fails", "error_class": null, "exception": null, "assumed_spark_version": "3.5.7",
                        "summary": "query 5f0c8e7a-1b2c-4d3e-8f90-a1b2c3d4e5f6 fails at /warehouse/acme dir"},
            "dstream": null,
            "forced_conf": [{"key": "spark.hadoop.fs.s3a.secret.key", "recorded": "wJalrXUtnFEMI/K7MDENG", "note": "n"}],
            "needs": [],
            "file_contents": "SECRET FILE BYTES",
            "state": {"rows": [{"key": {"k": "customer-42"}}]}
        }]
    })
}

const SENSITIVE: &[&str] = &[
    "orders-prod",
    "jobs/orders",
    "5f0c8e7a-1b2c-4d3e-8f90-a1b2c3d4e5f6",
    "wJalrXUtnFEMI",
    "AKIAIOSFODNN7EXAMPLE",
    "c2VjcmV0",
    "acmeprod",
    "acme-raw",
    "/warehouse/acme dir",
    "broker1.acme.internal",
    "10.1.2.3",
    "payments-events",
    "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9",
    "landing/orders",
    "/srv/etl/job",
    "C:\\data",
    "ckpt@",
    "eyJhbGciOiJIUzI1NiJ9",
    "SECRET FILE BYTES",
    "customer-42",
];

fn text(v: &Value) -> String {
    serde_json::to_string(v).unwrap()
}

#[test]
fn share_redacts_every_kind_everywhere() {
    let r = redact(&sample(), &Redaction::default());
    let out = text(&r.report);
    for s in SENSITIVE {
        assert!(!out.contains(s), "{s:?} survived: {out}");
    }
    let cp = &r.report["checkpoints"][0];
    assert_eq!(cp["query_id"], "query-1");
    assert_eq!(cp["root"], "<path-2>", "{out}");
    assert_eq!(r.report["input"]["name"], "<path-1>");
    // Kafka topics are keys of the offsets: renamed, shape and numbers kept.
    assert_eq!(cp["sources"][0]["latest_offset"], json!({"topic-1": {"0": 500, "1": 480}, "topic-2": {"0": 1}}));
    assert_eq!(cp["sources"][1]["latest_offset"]["reservoirId"], "table-A");
    assert_eq!(cp["sources"][1]["latest_offset"]["reservoirVersion"], 7);
    // The same value, the same placeholder: in the title and in the offsets.
    let title = cp["findings"][0]["title"].as_str().unwrap();
    assert!(title.starts_with("topic-1-0 = 500"), "{title}");
    assert!(title.contains("table table-A too"), "{title}");
    // JSON inside a string keeps its shape.
    let detail = cp["findings"][0]["evidence"][0]["detail"].as_str().unwrap();
    let inner: Value = serde_json::from_str(detail.split(" read from").next().unwrap()).unwrap();
    assert_eq!(inner, json!({"topic-1": {"0": 500}}));
    // A URI keeps its scheme; the bucket is its own placeholder when paths are shown.
    assert!(detail.contains("s3a://<path-"), "{detail}");
    // Evidence paths relative to the root stay; a path under the root loses the root.
    assert_eq!(cp["findings"][0]["evidence"][0]["path"], "offsets/1");
    assert_eq!(cp["findings"][0]["evidence"][1]["path"], "<path-2>/offsets/1");
    // Spark's conf keys and plain values stay; secrets are replaced whole, also in forced_conf.
    assert_eq!(cp["conf"]["spark.sql.shuffle.partitions"], "4");
    let secret = cp["conf"]["spark.hadoop.fs.s3a.secret.key"].as_str().unwrap();
    assert!(secret.starts_with("<secret-"), "{secret}");
    assert_eq!(cp["forced_conf"][0]["recorded"], secret);
    assert!(
        cp["conf"].as_object().unwrap().keys().any(|k| k == "spark.hadoop.fs.azure.account.key.host-1"
            || k.starts_with("spark.hadoop.fs.azure.account.key.host-")),
        "{out}"
    );
    // Documentation links are not redacted.
    assert!(out.contains("https://spark.apache.org/docs/latest/"), "{out}");
    // File contents and state rows are removed, and the removal is reported.
    assert!(cp.get("file_contents").is_none());
    assert_eq!(r.stripped, vec!["/checkpoints/0/file_contents".to_string(), "/checkpoints/0/state/rows".to_string()]);
    for c in [Category::Ids, Category::Paths, Category::Hosts, Category::Topics, Category::Tables, Category::Secrets] {
        assert!(r.counts.get(&c).copied().unwrap_or(0) > 0, "nothing counted for {c}: {:?}", r.counts);
    }
}

#[test]
fn share_categories_switch_off_one_by_one() {
    let full = redact(&sample(), &Redaction::default());
    for c in Category::ALL {
        let mut red = Redaction::default();
        red.set(c, false);
        let out = text(&redact(&sample(), &red).report);
        let kept: &[&str] = match c {
            Category::Ids => &["5f0c8e7a-1b2c-4d3e-8f90-a1b2c3d4e5f6"],
            Category::Paths => &["/warehouse/acme dir", "jobs/orders", "orders-prod.zip"],
            Category::Hosts => &["broker1.acme.internal", "10.1.2.3"],
            Category::Topics => &["payments-events"],
            Category::Tables => &["0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"],
            Category::Secrets => &["wJalrXUtnFEMI/K7MDENG", "AKIAIOSFODNN7EXAMPLE"],
        };
        for k in kept {
            assert!(out.contains(k), "{c} off: {k:?} should stay: {out}");
        }
        assert!(!out.contains("SECRET FILE BYTES"), "file contents never travel");
        assert_ne!(out, text(&full.report));
    }
    let none = text(&redact(&sample(), &Redaction::none()).report);
    assert!(none.contains("payments-events") && none.contains("5f0c8e7a-1b2c-4d3e-8f90-a1b2c3d4e5f6"));
    assert!(!none.contains("customer-42"), "state rows never travel");
}

#[test]
fn share_words_are_matched_whole() {
    // A short topic name replaces the word, not letters inside other words.
    let r = redact(&sample(), &Redaction::default());
    let why = r.report["checkpoints"][0]["findings"][0]["why"].as_str().unwrap();
    assert!(why.starts_with("topic topic-2 was recreated"), "{why}");
    assert!(text(&r.report).contains("\"kind\":\"structured_streaming\""));
}

#[test]
fn share_a_short_or_field_named_id_keeps_the_report_whole() {
    // From the `share_link` fuzz target: a hostile `metadata` whose query id is `e` made every `e` of the report a
    // placeholder, field names included (`chquery-1ckpoints`), and the link did not open. Ids and paths shorter
    // than a UUID now match only as whole words, and the report's and each checkpoint's own fields are kept.
    for id in ["e", "checkpoints", "query_id", "kind"] {
        let mut report = sample();
        report["checkpoints"][0]["query_id"] = json!(id);
        let link = share_link(&report, &ShareOptions::default()).unwrap();
        let opened = open_fragment(&link.fragment).unwrap_or_else(|e| panic!("query id {id:?}: {e}"));
        assert_eq!(opened.report, link.report);
        let cp = &link.report["checkpoints"][0];
        assert_eq!(cp["kind"], json!("structured_streaming"), "query id {id:?}");
        assert!(cp["query_id"].as_str().is_some_and(|q| q.starts_with("query-")), "query id {id:?}: {cp}");
        assert_eq!(
            cp["findings"].as_array().map(Vec::len),
            sample()["checkpoints"][0]["findings"].as_array().map(Vec::len)
        );
    }
    // A topic that is a whole key is still replaced as a key; inside a field-like key it is not.
    let r = redact(&sample(), &Redaction::default());
    let offsets = r.report["checkpoints"][0]["sources"][0]["latest_offset"].as_object().unwrap();
    assert!(!offsets.contains_key("payments-events") && !offsets.contains_key("a"), "{offsets:?}");
}

/// A text naming an id tens of thousands of times (a hostile `why`, a long list of paths) is redacted in one pass
/// that looks up the spans claimed so far in log time: every span checked against every earlier one was
/// quadratic (200,000 matches: 2 × 10^10 comparisons).
#[test]
fn redaction_of_many_matches_in_one_text_is_not_quadratic() {
    let id = "5f0c8e7a-1b2c-4d3e-8f90-a1b2c3d4e5f6";
    let n = 200_000;
    let mut report = sample();
    report["checkpoints"][0]["restart"]["summary"] = json!(format!("{id} ").repeat(n));
    let r = redact(&report, &Redaction::default());
    let summary = r.report["checkpoints"][0]["restart"]["summary"].as_str().unwrap().to_string();
    assert!(!summary.contains(id));
    let placeholder = summary.split(' ').next().unwrap().to_string();
    assert!(placeholder.starts_with("query-"), "{placeholder}");
    assert_eq!(summary.matches(placeholder.as_str()).count(), n);
}

#[test]
fn share_round_trip_and_determinism() {
    let a = share_link(&sample(), &ShareOptions::default()).unwrap();
    let b = share_link(&sample(), &ShareOptions::default()).unwrap();
    assert_eq!(a, b, "the same report gives the same link");
    assert!(a.fragment.starts_with("report=1."));
    assert_eq!(a.bytes, a.fragment.len());
    assert!(a.cut_notes.is_empty());
    let opened = open_fragment(&a.url(Some("https://team.example/inspector/"))).unwrap();
    assert_eq!(opened.format_version, 1);
    assert_eq!(opened.inspector_version, INSPECTOR_VERSION);
    assert_eq!(opened.report, a.report, "decoding gives exactly the previewed report");
    assert_eq!(opened.redacted, Category::ALL.map(|c| c.name().to_string()).to_vec());
    for s in SENSITIVE {
        assert!(!a.fragment.contains(s));
    }
    // Fragment forms: bare, with '#', in a URL with other parameters, line-wrapped.
    let f = &a.fragment;
    for form in [f.clone(), format!("#{f}"), format!("https://x/y/?a=1#theme=dark&{f}&x=y"), wrap(f)] {
        assert_eq!(open_fragment(&form).unwrap().report, a.report, "{}", &form[..40.min(form.len())]);
    }
}

fn wrap(s: &str) -> String {
    s.as_bytes().chunks(60).map(|c| std::str::from_utf8(c).unwrap()).collect::<Vec<_>>().join("\n  ")
}

#[test]
fn share_url_forms() {
    let l = share_link(&sample(), &ShareOptions::default()).unwrap();
    assert_eq!(l.url(None), format!("#{}", l.fragment));
    assert_eq!(l.url(Some("https://t.example/i/")), format!("https://t.example/i/#{}", l.fragment));
    assert_eq!(
        l.url(Some("https://t.example/i/?spark-version=4.1.4#old")),
        format!("https://t.example/i/?spark-version=4.1.4#{}", l.fragment)
    );
}

/// A link written by format 1 as of inspector 0.1.0: it must open on every later version (never change it).
const V1_LINK: &str = include_str!("testdata/v1-link.txt");

#[test]
fn share_old_format_link_still_opens() {
    let r = open_fragment(V1_LINK.trim()).expect("a format-1 link of 0.1.0 opens");
    assert_eq!(r.format_version, 1);
    assert_eq!(r.inspector_version, "0.1.0");
    assert_eq!(r.report["checkpoints"][0]["query_id"], "query-1");
    assert_eq!(r.report["checkpoints"][0]["restart"]["outcome"], "fails");
    assert_eq!(r.cut_notes, vec!["evidence: 2 items of 1 finding cut to fit the share link's 16 KB budget"]);
}

#[test]
fn share_errors_are_typed() {
    let good = share_link(&sample(), &ShareOptions::default()).unwrap().fragment;
    let payload = good.strip_prefix("report=1.").unwrap();
    let kind = |s: &str| open_fragment(s).unwrap_err().kind();
    assert_eq!(kind(""), "no-report");
    assert_eq!(kind("#theme=dark"), "no-report");
    assert_eq!(kind("report=abc"), "unknown-format");
    assert_eq!(kind("report=x.abc"), "unknown-format");
    let newer = open_fragment(&format!("report=2.{payload}")).unwrap_err();
    assert_eq!(newer, ShareError::UnknownFormat { version: "2".into(), newer: true });
    assert!(newer.to_string().contains("newer inspector"));
    assert_eq!(kind("report=0.abc"), "unknown-format");
    assert_eq!(kind("report=1."), "truncated");
    // Truncated anywhere: never a panic, always truncated / corrupt / bad-encoding.
    for cut in (1..payload.len()).step_by(7) {
        let k = kind(&format!("report=1.{}", &payload[..cut]));
        assert!(matches!(k, "truncated" | "corrupt"), "cut at {cut}: {k}");
    }
    // Tampered: one character changed anywhere is caught (zlib's checksum), never a wrong report.
    let bytes = payload.as_bytes();
    for i in (0..bytes.len()).step_by(5) {
        let mut t = bytes.to_vec();
        t[i] = if t[i] == b'A' { b'B' } else { b'A' };
        let t = String::from_utf8(t).unwrap();
        match open_fragment(&format!("report=1.{t}")) {
            Err(e) => assert!(matches!(e.kind(), "corrupt" | "truncated" | "not-json" | "not-a-report"), "{i}: {e}"),
            Ok(r) => panic!("tampered at {i} still opened: {:?}", r.inspector_version),
        }
    }
    let e = open_fragment("report=1.abc<script>").unwrap_err();
    assert_eq!(e, ShareError::BadEncoding { offset: 3, byte: '<' });
    assert_eq!(kind(&format!("report=1.{}", "A".repeat(MAX_FRAGMENT_BYTES + 10))), "too-long");
    // Valid encodings of the wrong data.
    assert_eq!(kind(&format!("report=1.{}", v1::write(b"not json"))), "not-json");
    assert_eq!(kind(&format!("report=1.{}", v1::write(b"{\"format\":1}"))), "not-a-report");
    assert_eq!(kind(&format!("report=1.{}", v1::write(b"[1,2]"))), "not-a-report");
    let no_ckpts = br#"{"format":1,"inspector_version":"0.1.0","report":{"checkpoints":"x"}}"#;
    assert_eq!(kind(&format!("report=1.{}", v1::write(no_ckpts))), "not-a-report");
    // Deeply nested JSON is refused by the parser's depth limit, not by a stack overflow.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(kind(&format!("report=1.{}", v1::write(deep.as_bytes()))), "not-json");
    // Every error has a sentence for people.
    for e in [ShareError::NoReport, ShareError::TooLarge { max: MAX_INFLATED_BYTES }] {
        assert!(e.to_string().len() > 20);
    }
}

#[test]
fn share_bomb_is_refused() {
    // 12 MiB of spaces compress to a few KiB: fits the fragment limit, inflates past the limit.
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(&vec![b' '; 12 * 1024 * 1024]).unwrap();
    let payload = base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, z.finish().unwrap());
    assert!(payload.len() < MAX_FRAGMENT_BYTES, "{}", payload.len());
    let t = std::time::Instant::now();
    assert_eq!(
        open_fragment(&format!("report=1.{payload}")).unwrap_err(),
        ShareError::TooLarge { max: MAX_INFLATED_BYTES }
    );
    assert!(t.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn share_budget_cuts_long_evidence_with_notes() {
    let mut r = sample();
    let ev: Vec<Value> = (0..3000)
        .map(|i| json!({"path": format!("state/0/{i}/{}.delta", i * 7), "detail": format!("absent; {i} and {} present, checksum {:08x}", i + 1, i * 2654435761u64 % 4294967296)}))
        .collect();
    r["checkpoints"][0]["findings"][0]["evidence"] = Value::Array(ev);
    let l = share_link(&r, &ShareOptions::default()).unwrap();
    assert!(l.bytes <= DEFAULT_BUDGET_BYTES, "{}", l.bytes);
    assert!(!l.cut_notes.is_empty());
    assert!(l.cut_notes[0].contains("16 KB"), "{:?}", l.cut_notes);
    let ev = l.report["checkpoints"][0]["findings"][0]["evidence"].as_array().unwrap();
    let note = ev.last().unwrap()["detail"].as_str().unwrap();
    assert!(note.contains("more evidence items of kafka-offsets-ahead not in this link"), "{note}");
    let opened = open_fragment(&l.fragment).unwrap();
    assert_eq!(opened.cut_notes, l.cut_notes);
    assert_eq!(opened.report, l.report);
    // A tiny budget that nothing fits is a clear error, not a silently broken link.
    let e = share_link(&r, &ShareOptions { budget_bytes: 200, ..Default::default() }).unwrap_err();
    assert_eq!(e.kind(), "over-budget");
    // Not a report at all.
    assert_eq!(share_link(&json!({"x": 1}), &ShareOptions::default()).unwrap_err().kind(), "bad-input");
}

#[test]
fn share_typed_report_round_trips() {
    let report: crate::Report = serde_json::from_value(json!({
        "inspector_version": "0.1.0",
        "input": {"name": "x.zip", "bytes": 1, "entries": 1},
        "checkpoints": [{"root": "", "kind": "structured_streaming", "query_id": null, "batches": [], "last_batch_id": null,
            "last_committed_batch_id": null, "conf": {}, "sources": [], "operators": [], "findings": [],
            "restart": {"outcome": "unknown", "error_class": null, "exception": null, "assumed_spark_version": "4.3.0"},
            "dstream": null}]
    }))
    .unwrap();
    let l = share_report(&report, &ShareOptions::default()).unwrap();
    let back = open_fragment(&l.fragment).unwrap().typed().unwrap();
    assert_eq!(back.checkpoints.len(), 1);
    assert_eq!(back.input.name, "<path-1>");
}

#[test]
fn share_category_names_parse() {
    for c in Category::ALL {
        assert_eq!(c.name().parse::<Category>().unwrap(), c);
    }
    assert_eq!("topic".parse::<Category>().unwrap(), Category::Topics);
    assert!("everything".parse::<Category>().unwrap_err().contains("ids, paths"));
    let r: Redaction = serde_json::from_str(r#"{"paths": false}"#).unwrap();
    assert!(!r.paths && r.ids && r.secrets);
}
