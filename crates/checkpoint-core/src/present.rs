//! How a report is presented: the verdict's words, the order of the findings, the Spark releases a user can pick,
//! and the hints on what would sharpen the diagnosis, worded per front end. The one source for the CLI
//! (`crates/checkpoint-cli/src/render.rs`), the page and its Markdown/summary exports (`crates/checkpoint-web`);
//! no front end re-derives any of it.
//!
//! The report stays data ([`crate::report`]): a hint is stored structured ([`Hint`], `CheckpointReport::hints`)
//! next to its CLI wording (`needs`, `restart.assumption`, unchanged), so that a front end words it for its own
//! controls: the CLI names its flags, the page names its own controls and never a CLI flag, a document (Markdown,
//! a shared link) states the fact only.
//!
//! Adding a hint: add a [`Hint`] variant with its three wordings in [`Hint::text`], and push it in `diagnose.rs`
//! (which writes the CLI wording to `needs`).

use crate::report::{CheckpointReport, Finding, RestartOutcome, RestartPrediction, Severity};
use crate::SparkVersion;
use serde::{Deserialize, Serialize};

/// Which front end a text is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Frontend {
    /// The command line: hints name its flags (`--spark-version X.Y.Z`).
    Cli,
    /// The web page: hints name the page's controls, never a CLI flag.
    Page,
    /// A document made from a report (Markdown export, clipboard summary, a shared link): the fact, no control.
    Document,
}

/// The Spark releases a user can pick to restart with, oldest first; the last is [`SparkVersion::NEWEST`], the
/// default assumption. (Any `X.Y.Z` parses; these are the ones the front ends offer.)
pub const KNOWN_SPARK_VERSIONS: &[SparkVersion] = &[
    SparkVersion::new(3, 3, 4),
    SparkVersion::new(3, 4, 4),
    SparkVersion::new(3, 5, 0),
    SparkVersion::new(3, 5, 9),
    SparkVersion::new(4, 0, 0),
    SparkVersion::new(4, 0, 5),
    SparkVersion::new(4, 1, 0),
    SparkVersion::new(4, 1, 4),
    SparkVersion::new(4, 2, 0),
    SparkVersion::new(4, 3, 0),
];

/// Something the verdict assumes because an input is missing, stored structured in the report
/// (`CheckpointReport::hints`, JSON `{"kind":"spark-version-assumed",...}`) so each front end words it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Hint {
    /// No Spark version was given: the verdict is for `assumed` (the newest known release), not for the version
    /// that wrote the checkpoint (at least `written_by_at_least`). Its CLI wording is `restart.assumption`.
    SparkVersionAssumed {
        /// The version the prediction assumes (`X.Y.Z`).
        assumed: String,
        /// The oldest Spark version that could have written every file of the checkpoint.
        written_by_at_least: String,
    },
    /// The commit log is v2: Spark reads it only when the restarted session sets `key`
    /// (`spark.sql.streaming.stateStore.checkpointFormatVersion`) to 2; the prediction assumes it does. Spark
    /// 4.0–4.3 keep that conf in no offset log (real 4.1.4 and 4.3.0 offsets), so a session without it reads the
    /// log as v1 and fails with `INVALID_LOG_VERSION.EXACT_MATCH_VERSION` (a real 4.1.4 restart).
    CommitLogV2FormatAssumed {
        /// The conf key.
        key: String,
    },
    /// `count` state files or stores were not verified within the read budget; the prediction assumes them intact.
    StateNotVerified {
        /// How many files or stores were left unverified.
        count: usize,
    },
    /// A damaged snapshot is in the restart's path; the prediction assumes Spark's snapshot repair (4.2+) (`key`,
    /// `spark.sql.streaming.stateStore.autoSnapshotRepair.enabled`) is on, its default.
    SnapshotRepairAssumed {
        /// The conf key.
        key: String,
    },
    /// The checkpoint reads Kafka (`sources` = their indexes) and no brokers' offsets were given, so retention
    /// and re-created topics are not checked; or only one half of them (`given`).
    KafkaOffsetsNotGiven {
        /// The Kafka sources' indexes.
        sources: Vec<usize>,
        /// The half of the brokers' view that was given (`earliest` or `latest`); `None` when neither was.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        given: Option<String>,
    },
    /// The checkpoint has file sources (`sources` = their indexes) whose path the query reads now was not
    /// given, so a changed path (which fails the restart when it is not a glob) is not checked.
    SourcePathNotGiven {
        /// The file sources' indexes.
        sources: Vec<usize>,
    },
    /// A Delta source's table log was not given: its retention countdown uses Delta's defaults and the
    /// table's own checks (id, retained versions, schema changes, deletes) are not made.
    DeltaLogWanted {
        /// The Delta sources (offset log positions) without their table's `_delta_log`.
        sources: Vec<usize>,
    },
    /// File source or sink log entries were read and checked but not kept (`entries`, past the memory for
    /// them), or log files were not read (`files`, past the bytes of log files read): answers that need them
    /// are "not verified". The CLI can keep more (its wording names the option).
    FileLogsNotKept {
        /// Entries read and checked but not kept.
        entries: u64,
        /// File log files not read.
        files: usize,
    },
    /// Batches were committed and there is no `state/` folder: the verdict holds for a query without a stateful
    /// operator. The offset and commit logs of a stateful query whose `state/` was not copied look the same,
    /// and its restart fails loading the state (real Spark 4.1.4: `CANNOT_READ_DELTA_FILE_NOT_EXISTS`).
    StatelessAssumed {},
}

impl Hint {
    /// The hint in the words of a front end. `Frontend::Cli` is exactly what the report's `needs` (and
    /// `restart.assumption`) hold.
    pub fn text(&self, fe: Frontend) -> String {
        match self {
            Hint::SparkVersionAssumed { assumed, written_by_at_least } => {
                let fact =
                    format!("assumed Spark {assumed} (newest known; the checkpoint was written by Spark ≥ {written_by_at_least})");
                match fe {
                    Frontend::Cli => format!("{fact}: pass --spark-version X.Y.Z for the version you restart with"),
                    Frontend::Page => format!("{fact}: pick the Spark version you restart with above"),
                    Frontend::Document => fact,
                }
            }
            Hint::CommitLogV2FormatAssumed { key } => {
                let fact = format!(
                    "The commit log is v2 (state checkpoint format v2). Spark reads it only when the restarted session sets {key}=2, \
                     which the checkpoint does not record: a restart without it fails with INVALID_LOG_VERSION.EXACT_MATCH_VERSION"
                );
                match fe {
                    Frontend::Cli => format!("{fact}; give --conf {key}=<your value> (the prediction assumes 2)."),
                    Frontend::Page | Frontend::Document => {
                        format!(
                            "{fact}; the prediction assumes it does, and differs if your session sets another value."
                        )
                    }
                }
            }
            Hint::StateNotVerified { count } => {
                let fact = format!(
                    "{count} state file(s) or stores were not verified within the read budget; the prediction assumes they are intact."
                );
                match fe {
                    Frontend::Cli => format!("{fact} Run with --deep to verify them."),
                    Frontend::Page => format!("{fact} Tick \"Verify every state file\" above to verify every one."),
                    Frontend::Document => fact,
                }
            }
            Hint::SnapshotRepairAssumed { key } => {
                let fact = format!(
                    "A damaged state snapshot is in the restart's path; the prediction assumes {key}=true (the default since 4.2)."
                );
                match fe {
                    Frontend::Cli => format!("{fact} Give --conf {key}=false if your session disables it."),
                    Frontend::Page | Frontend::Document => {
                        format!("{fact} If your restarted session sets {key}=false, the verdict may differ.")
                    }
                }
            }
            Hint::KafkaOffsetsNotGiven { sources, given } => kafka_offsets_words(sources, given.as_deref(), fe),
            Hint::SourcePathNotGiven { sources } => {
                let list: Vec<String> = sources.iter().map(|i| format!("#{i}")).collect();
                let fact = format!(
                    "File source {} not compared with the path the query reads now: the verdict assumes the path is unchanged (a changed path that is not a glob fails the restart)",
                    list.join(", ")
                );
                match fe {
                    Frontend::Cli => format!("{fact}; give --source-path N=PATH (N: the source's number)."),
                    Frontend::Page => format!("{fact}; type the path in the File source paths box above."),
                    Frontend::Document => format!("{fact}."),
                }
            }
            Hint::DeltaLogWanted { sources } => {
                let which: Vec<String> = sources.iter().map(|i| format!("#{i}")).collect();
                let fact = format!(
                    "Delta source {} was checked without its table's _delta_log: the retention countdown uses Delta's defaults, and the table id, retained versions, schema changes and deletes since the checkpoint are not checked",
                    which.join(", ")
                );
                let zip = "zip it with: cd <table path> && zip -r delta_log.zip _delta_log";
                match fe {
                    Frontend::Cli => format!("{fact}; {zip}, and give --delta-log delta_log.zip."),
                    Frontend::Page => {
                        format!("{fact}; {zip}, and drop it (or the _delta_log folder) on the Delta log drop target.")
                    }
                    Frontend::Document => format!("{fact}."),
                }
            }
            Hint::FileLogsNotKept { entries, files } => {
                let what = match (entries, files) {
                    (0, f) => format!("{f} file source or sink log file(s) were not read"),
                    (e, 0) => format!("{e} file source or sink log entries were checked but not kept"),
                    (e, f) => format!(
                        "{e} file source or sink log entries were checked but not kept and {f} log file(s) not read"
                    ),
                };
                let fact = format!(
                    "{what}, past this inspector's memory for file logs; answers that need them are not verified"
                );
                match fe {
                    Frontend::Cli => {
                        format!("{fact}. Run again with a larger --file-log-mib (64 MiB by default) to keep them.")
                    }
                    Frontend::Page => format!("{fact}. The command-line inspector can keep more of them."),
                    Frontend::Document => format!("{fact}."),
                }
            }
            // No input of any front end settles it: the same words everywhere.
            Hint::StatelessAssumed {} => "There is no state/ folder: the verdict assumes the query has no stateful operator (no aggregation, deduplication, stream-stream join, [flat]MapGroupsWithState, transformWithState or streaming limit). If it has one, state/ was deleted or not copied, and the restart fails loading the state: restore state/ from the original checkpoint.".to_string(),
        }
    }
}

/// The verdict as a sentence after "the query": "will resume with batch N", "will replay batch N", "will fail with
/// ERROR_CLASS" (or the exception), "outcome unknown".
pub fn verdict(c: &CheckpointReport) -> String {
    let r = &c.restart;
    match r.outcome {
        RestartOutcome::Resumes => match r.first_batch_id {
            Some(b) => format!("will resume with batch {b}"),
            None => "will resume".to_string(),
        },
        RestartOutcome::ReplaysLastBatch => match r.first_batch_id.or(c.last_batch_id) {
            Some(b) => format!("will replay batch {b}"),
            None => "will replay the last batch".to_string(),
        },
        RestartOutcome::Fails => match (&r.error_class, &r.exception) {
            (Some(ec), _) => format!("will fail with {ec}"),
            (None, Some(ex)) => format!("will fail with {ex}"),
            (None, None) => "will fail".to_string(),
        },
        RestartOutcome::Unknown => "outcome unknown".to_string(),
    }
}

/// The verdict's headline: the CLI's banner ("WILL NOT RESTART", ...), or the sentence of [`verdict`] capitalised
/// ("Will fail with ...") for the page and documents.
pub fn headline(c: &CheckpointReport, fe: Frontend) -> String {
    match fe {
        Frontend::Cli => match c.restart.outcome {
            RestartOutcome::Resumes => "WILL RESTART (resumes)",
            RestartOutcome::ReplaysLastBatch => "WILL RESTART (replays the last batch)",
            RestartOutcome::Fails => "WILL NOT RESTART",
            RestartOutcome::Unknown => "RESTART UNKNOWN",
        }
        .to_string(),
        Frontend::Page | Frontend::Document => {
            let v = verdict(c);
            let mut cs = v.chars();
            match cs.next() {
                Some(f) => f.to_uppercase().chain(cs).collect(),
                None => v,
            }
        }
    }
}

/// A severity as a lower-case word (`error`, `warning`, `info`), as in the JSON.
pub fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    }
}

/// The display order of findings: those explaining the pasted error first, then by severity (errors first), then by
/// the restart stage they fail at (earliest first; findings that do not fail the restart last), then as found.
pub fn finding_order_key(f: &Finding) -> (bool, Severity, u32) {
    (!f.explains_error_text, f.severity, f.restart_failure.as_ref().map(|r| r.stage.number()).unwrap_or(u32::MAX))
}

/// Sorts findings into display order ([`finding_order_key`]; stable). The diagnosis stores them in this order.
pub fn sort_findings(findings: &mut [Finding]) {
    findings.sort_by_key(finding_order_key);
}

/// The findings of a checkpoint in display order. A report made by the diagnosis is already in that order; a
/// report read from elsewhere (a shared link, an older JSON file) is ordered the same way here.
pub fn ordered_findings(c: &CheckpointReport) -> Vec<&Finding> {
    let mut v: Vec<&Finding> = c.findings.iter().collect();
    v.sort_by_key(|f| finding_order_key(f));
    v
}

/// The positions in `c.findings` of the findings in display order (for a front end that keeps the report as is).
pub fn finding_order(c: &CheckpointReport) -> Vec<usize> {
    let mut v: Vec<usize> = (0..c.findings.len()).collect();
    v.sort_by_key(|&i| finding_order_key(&c.findings[i]));
    v
}

/// The restart summary without the assumption the diagnosis appends to it for JSON readers (front ends show the
/// assumption next to the verdict, worded for themselves: [`assumption`]).
pub fn summary(r: &RestartPrediction) -> &str {
    r.assumption.as_ref().and_then(|a| r.summary.strip_suffix(&format!(" ({a}.)"))).unwrap_or(&r.summary)
}

/// What the verdict assumes about the Spark version (none when the user gave one), worded for `fe`.
pub fn assumption(c: &CheckpointReport, fe: Frontend) -> Option<String> {
    let structured = c.hints.iter().find(|h| matches!(h, Hint::SparkVersionAssumed { .. }));
    match (structured, &c.restart.assumption) {
        (Some(h), _) => Some(h.text(fe)),
        // A report without hints (an older one): its CLI wording is all there is.
        (None, Some(a)) => Some(a.clone()),
        (None, None) => None,
    }
}

/// What would sharpen the diagnosis (the report's `needs`), worded for `fe`: each need that a structured hint
/// stands for in that hint's words; any other need (an older report) as it is.
pub fn needs(c: &CheckpointReport, fe: Frontend) -> Vec<String> {
    c.needs
        .iter()
        .map(|n| match c.hints.iter().find(|h| &h.text(Frontend::Cli) == n) {
            Some(h) => h.text(fe),
            None => n.clone(),
        })
        .collect()
}

/// One checkpoint as a front end shows it: the decisions of this module as data (the page gets it from the wasm).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckpointPresentation {
    /// The outcome, as in the JSON (`resumes`, `replays_last_batch`, `fails`, `unknown`).
    pub outcome: RestartOutcome,
    /// [`headline`].
    pub headline: String,
    /// [`verdict`].
    pub verdict: String,
    /// [`summary`].
    pub summary: String,
    /// [`assumption`].
    pub assumption: Option<String>,
    /// [`needs`].
    pub needs: Vec<String>,
    /// [`finding_order`]: positions in the checkpoint's `findings`.
    pub finding_order: Vec<usize>,
}

/// Presents one checkpoint for a front end.
pub fn present(c: &CheckpointReport, fe: Frontend) -> CheckpointPresentation {
    CheckpointPresentation {
        outcome: c.restart.outcome,
        headline: headline(c, fe),
        verdict: verdict(c),
        summary: summary(&c.restart).to_string(),
        assumption: assumption(c, fe),
        needs: needs(c, fe),
        finding_order: finding_order(c),
    }
}

/// The words of [`Hint::KafkaOffsetsNotGiven`]: no brokers' view (`given` = `None`), or only its `given` half.
fn kafka_offsets_words(sources: &[usize], given: Option<&str>, fe: Frontend) -> String {
    let list: Vec<String> = sources.iter().map(|i| format!("#{i}")).collect();
    let list = list.join(", ");
    let Some(half) = given else {
        let fact = format!(
            "Kafka source {list} not checked against the brokers: the verdict assumes the topics still hold the checkpoint's offsets (not aged out, not re-created)"
        );
        let get = "kafka-get-offsets.sh --bootstrap-server <brokers> --topic <topic> --time -2 (earliest) and --time -1 (latest)";
        return match fe {
            Frontend::Cli => {
                format!("{fact}; give --kafka-earliest and --kafka-latest (the output of {get}, or Spark's JSON).")
            }
            Frontend::Page => format!("{fact}; paste the output of {get} in the Kafka offsets boxes above."),
            Frontend::Document => format!("{fact}."),
        };
    };
    let (other, time, unchecked) = if half == "latest" {
        ("earliest", -2, "records aged out (offsets below the brokers' earliest) are not checked")
    } else {
        (
            "latest",
            -1,
            "a re-created topic or a lower high-water mark (offsets above the brokers' latest) is not checked",
        )
    };
    let fact = format!("Kafka source {list} checked against the brokers' {half} offsets only: {unchecked}");
    match fe {
        Frontend::Cli => format!("{fact}; give --kafka-{other} too (kafka-get-offsets.sh --time {time})."),
        Frontend::Page => format!("{fact}; paste the {other} offsets too."),
        Frontend::Document => format!("{fact}."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_versions_ascend_to_the_newest() {
        assert!(KNOWN_SPARK_VERSIONS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(KNOWN_SPARK_VERSIONS.last(), Some(&SparkVersion::NEWEST));
    }

    fn all_hints() -> Vec<Hint> {
        vec![
            Hint::SparkVersionAssumed { assumed: "4.3.0".into(), written_by_at_least: "4.1.0".into() },
            Hint::CommitLogV2FormatAssumed { key: "spark.sql.streaming.stateStore.checkpointFormatVersion".into() },
            Hint::StateNotVerified { count: 3 },
            Hint::SnapshotRepairAssumed { key: "spark.sql.streaming.stateStore.autoSnapshotRepair.enabled".into() },
            Hint::DeltaLogWanted { sources: vec![0] },
            Hint::FileLogsNotKept { entries: 12, files: 0 },
            Hint::FileLogsNotKept { entries: 0, files: 2 },
        ]
    }

    #[test]
    fn the_stateless_assumption_names_no_flag_and_round_trips() {
        let h = Hint::StatelessAssumed {};
        for fe in [Frontend::Cli, Frontend::Page, Frontend::Document] {
            assert!(!h.text(fe).contains("--") && h.text(fe).contains("state/"), "{fe:?}");
        }
        let j = serde_json::to_value(&h).unwrap();
        assert_eq!(j["kind"], "stateless-assumed");
        assert_eq!(serde_json::from_value::<Hint>(j).unwrap(), h);
    }

    #[test]
    fn page_and_document_words_name_no_cli_flag() {
        for h in all_hints() {
            assert!(h.text(Frontend::Cli).contains("--"), "{h:?}: the CLI names its flag");
            for fe in [Frontend::Page, Frontend::Document] {
                let t = h.text(fe);
                assert!(!t.contains("--"), "{fe:?}: {t}");
            }
        }
    }

    #[test]
    fn hints_round_trip_as_kebab_case_kinds() {
        for h in all_hints() {
            let j = serde_json::to_value(&h).unwrap();
            assert!(j["kind"].as_str().is_some_and(|k| k.contains('-')), "{j}");
            assert_eq!(serde_json::from_value::<Hint>(j).unwrap(), h);
        }
    }
}
