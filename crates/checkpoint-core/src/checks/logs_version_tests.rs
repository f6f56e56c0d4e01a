//! The restart's state checkpoint format told by a pasted `INVALID_LOG_VERSION.EXACT_MATCH_VERSION` error.

use crate::report::{Code, RestartOutcome};
use crate::testutil::open_fixture;
use crate::{diagnose, Context};

/// A checkpoint written with state checkpoint format v2 (v2 commits), restarted with the default format:
/// without the session conf the verdict assumes the format was kept; the pasted error's "only supported log
/// version is v1" says it was not, and the latest commit explains it, the conf first in its fix (a
/// newcomer's real Spark 4.1.4 restart with default confs failed so).
#[test]
fn a_pasted_exact_version_error_says_the_restart_dropped_format_v2() {
    assert_eq!(super::exact_version_in_error("The only supported log version is v1, but encountered v2."), Some(1));
    assert_eq!(super::exact_version_in_error("nothing"), None);
    let run = |error_text: Option<&str>| {
        let mut z = open_fixture("broken-ss-4.3.0-agg-rocksdb-ckptv2-restarted-on-3.5.9");
        let ctx = Context {
            // The real restart was 4.1.4's (4.3 reads the checkpoint's own format whatever the session sets).
            spark_version: Some("4.1.4".parse().unwrap()),
            error_text: error_text.map(str::to_string),
            ..Default::default()
        };
        diagnose(&mut z, &ctx).checkpoints.remove(0)
    };
    assert_ne!(run(None).restart.outcome, RestartOutcome::Fails);
    let text = "org.apache.spark.SparkException: [INVALID_LOG_VERSION.EXACT_MATCH_VERSION] UnsupportedLogVersion. The only supported log version is v1, but encountered v2. SQLSTATE: KD002";
    let r = run(Some(text));
    assert_eq!(r.restart.error_class.as_deref(), Some("INVALID_LOG_VERSION.EXACT_MATCH_VERSION"));
    let f = r
        .findings
        .iter()
        .find(|f| f.code == Code::LogVersionUnsupported && f.restart_failure.is_some())
        .expect("the latest commit's finding");
    assert!(f.explains_error_text, "{}", f.title);
    assert!(f.fix[0].contains("checkpointFormatVersion\", \"2\""), "{:?}", f.fix);
}

/// Spark 4.3 keeps an existing checkpoint's own state checkpoint format, whatever the session sets
/// (`CommitLog.readCommitMetadata` reads any version up to its maximum): a newcomer's real 4.3.0 restarts of a v2
/// checkpoint with the conf at 1, of a v1 RocksDB and of a v1 HDFS checkpoint with the conf at 2 all resumed.
#[test]
fn spark_4_3_keeps_the_checkpoints_own_format_whatever_the_session_sets() {
    let run = |fixture: &str, fmt: &str| {
        let mut z = open_fixture(fixture);
        let mut ctx = Context { spark_version: Some("4.3.0".parse().unwrap()), ..Default::default() };
        ctx.session_conf.insert("spark.sql.streaming.stateStore.checkpointFormatVersion".into(), fmt.into());
        diagnose(&mut z, &ctx).checkpoints.remove(0)
    };
    for (fixture, fmt) in
        [("ss-4.3.0-agg-rocksdb-ckptv2", "1"), ("ss-4.3.0-agg-rocksdb", "2"), ("ss-4.3.0-agg-hdfs", "2")]
    {
        let r = run(fixture, fmt);
        assert_ne!(r.restart.outcome, RestartOutcome::Fails, "{fixture}: {:?}", r.restart);
        assert!(
            !r.findings.iter().any(|f| matches!(f.code, Code::LogVersionUnsupported | Code::CheckpointIdsNotSupported)),
            "{fixture}"
        );
    }
}
