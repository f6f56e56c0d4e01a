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
            spark_version: Some("4.3.0".parse().unwrap()),
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
