//! The Delta Lake release line a Spark release runs, and what differs between the lines for the streaming
//! source: the error classes a restart raises, the options a way out may set, and whether the schema is tracked.
//!
//! The Delta checks judge with the newest Delta's words (delta-io/delta `DeltaErrors.scala`,
//! `delta-error-classes.json` at HEAD); [`DeltaLine::remap`] turns a finding's class into the one the line raises,
//! in one place. Which Delta builds against which Spark (each tag's `build.sbt`, from 4.1
//! `project/CrossSparkVersions.scala`): 2.0 ↔ Spark 3.2; 2.1, 2.2, 2.3 ↔ 3.3; 2.4 ↔ 3.4; 3.0–3.3 ↔ 3.5; 4.0 ↔ 4.0;
//! 4.1–4.4 ↔ 4.0 and 4.1; 4.4 ↔ 4.2. Spark 4.3 has no Delta release yet: read as the newest line.

use crate::report::Finding;
use crate::SparkVersion;

/// A Delta release line, by what the streaming source does differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DeltaLine {
    /// Delta 2.0 (Spark 3.2; older Spark runs older Delta, read as 2.0): a column-mapping table cannot be streamed at all
    /// (`DELTA_UNSUPPORTED_COLUMN_MAPPING_STREAMING_READS`); a schema change is a plain `IllegalStateException`;
    /// a log file gone is a plain `java.io.FileNotFoundException`.
    V2_0,
    /// Delta 2.1–2.3 (Spark 3.3), read as 2.3, the newest of them: a column-mapping table is blocked at a rename
    /// or drop (`DELTA_BLOCK_COLUMN_MAPPING_SCHEMA_INCOMPATIBLE_OPERATION`); no schema tracking, no
    /// `skipChangeCommits`.
    V2_3,
    /// Delta 2.4 (Spark 3.4): `skipChangeCommits`; schema tracking only behind the internal conf
    /// `spark.databricks.delta.streaming.nonAdditiveSchemaEvolution.enabled` (default false); a change crossed with
    /// tracking stops the stream as `DELTA_STREAMING_SCHEMA_EVOLUTION`; acknowledged by SQL confs only.
    V2_4,
    /// Delta 3.x (Spark 3.5): schema tracking on (`spark.databricks.delta.streaming.schemaTracking.enabled`);
    /// a change is acknowledged by SQL confs only (`spark.databricks.delta.streaming.allowSourceColumnDrop` ...).
    V3,
    /// Delta 4.x (Spark 4.x): the acknowledgement is also a reader option (`allowSourceColumnDrop` ...), and a
    /// type change can be acknowledged (`allowSourceColumnTypeChange`).
    V4,
}

/// The Delta line the given Spark release runs.
pub fn line(spark: SparkVersion) -> DeltaLine {
    match (spark.major, spark.minor) {
        (0..=2, _) | (3, 0..=2) => DeltaLine::V2_0,
        (3, 3) => DeltaLine::V2_3,
        (3, 4) => DeltaLine::V2_4,
        (3, _) => DeltaLine::V3,
        _ => DeltaLine::V4,
    }
}

/// The reader options and confs that acknowledge a non-additive change before Delta 4.0 are SQL confs with this
/// prefix (`DeltaSourceMetadataEvolutionSupport.validateIfSchemaChangeCanBeUnblockedWithSQLConf`).
const ACK_PREFIX: &str = "spark.databricks.delta.streaming.";

impl DeltaLine {
    /// The line's name as the findings say it (`Delta 3.x (Spark 3.5)`).
    pub fn name(self) -> &'static str {
        match self {
            DeltaLine::V2_0 => "Delta 2.0 or older (Spark 3.2 and older)",
            DeltaLine::V2_3 => "Delta 2.1–2.3 (Spark 3.3; read as 2.3)",
            DeltaLine::V2_4 => "Delta 2.4 (Spark 3.4)",
            DeltaLine::V3 => "Delta 3.x (Spark 3.5)",
            DeltaLine::V4 => "Delta 4.x (Spark 4)",
        }
    }

    /// `skipChangeCommits` exists (Delta 2.4+); before, only `ignoreChanges` (which re-reads a rewritten file's
    /// rows: duplicates) and `ignoreDeletes`.
    pub fn has_skip_change_commits(self) -> bool {
        self >= DeltaLine::V2_4
    }

    /// A restart with `schemaTrackingLocation` tracks the schema unless a conf turns it off: on by default from
    /// Delta 3.0; behind an internal conf in 2.4; absent before.
    pub fn tracking_by_default(self) -> bool {
        self >= DeltaLine::V3
    }

    /// How to acknowledge a dropped or renamed column (and, from Delta 4.0, a changed type) on this line, as one
    /// step's words: reader options from 4.0, SQL confs (`always`) before.
    pub fn acknowledge(self) -> String {
        if self >= DeltaLine::V4 {
            ".option(\"allowSourceColumnDrop\", \"always\") / .option(\"allowSourceColumnRename\", \"always\") / \
             .option(\"allowSourceColumnTypeChange\", \"always\") (or the spark.databricks.delta.streaming.* confs \
             the error names)"
                .to_string()
        } else {
            format!(
                "the SQL confs {ACK_PREFIX}allowSourceColumnDrop=always / {ACK_PREFIX}allowSourceColumnRename=always \
                 (or allowSourceColumnRenameAndDrop; the error names the per-checkpoint form \
                 ...ckpt_<hash>=<version>); {} has no reader option for it (an .option(\"allowSourceColumnDrop\") is \
                 ignored)",
                self.name()
            )
        }
    }

    /// The class and exception this line raises where the newest Delta raises `class` as `exception`, or `None`
    /// when they are the same. `(None, exception)` is an error without a class.
    pub fn remap(self, class: &str) -> Option<(Option<&'static str>, &'static str)> {
        const UNSUPPORTED: &str = "org.apache.spark.sql.delta.DeltaUnsupportedOperationException";
        let cm_blocked = (Some("DELTA_UNSUPPORTED_COLUMN_MAPPING_STREAMING_READS"), UNSUPPORTED);
        Some(match (self, class) {
            (DeltaLine::V2_0, "DELTA_LOG_FILE_NOT_FOUND_FOR_STREAMING_SOURCE") => {
                (None, "java.io.FileNotFoundException")
            }
            (DeltaLine::V2_0, "DELTA_SCHEMA_CHANGED_WITH_VERSION") => (None, "java.lang.IllegalStateException"),
            (
                DeltaLine::V2_0,
                "DELTA_STREAMING_CHECK_COLUMN_MAPPING_NO_SNAPSHOT"
                | "DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE"
                | "DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG",
            ) => cm_blocked,
            (
                DeltaLine::V2_3,
                "DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE"
                | "DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG",
            ) => (
                Some("DELTA_BLOCK_COLUMN_MAPPING_SCHEMA_INCOMPATIBLE_OPERATION"),
                "org.apache.spark.sql.delta.DeltaColumnMappingUnsupportedSchemaIncompatibleException",
            ),
            (DeltaLine::V2_4, "DELTA_STREAMING_METADATA_EVOLUTION") => {
                (Some("DELTA_STREAMING_SCHEMA_EVOLUTION"), "org.apache.spark.sql.delta.DeltaRuntimeException")
            }
            _ => return None,
        })
    }

    /// Renames a Delta finding's class (its `error_classes` and its restart failure) to this line's, saying so.
    pub fn apply(self, f: &mut Finding) {
        let Some(failure) = f.restart_failure.as_mut() else { return };
        let Some(class) = failure.error_class.clone() else { return };
        let Some((new_class, exception)) = self.remap(&class) else { return };
        failure.error_class = new_class.map(str::to_string);
        failure.exception = exception.to_string();
        f.error_classes.retain(|c| *c != class);
        if let Some(c) = new_class {
            f.error_classes.insert(0, c.to_string());
        }
        f.why.push_str(&format!(
            " On {} Delta raises this as {} ({exception}), not {class} as the newest Delta does.",
            self.name(),
            new_class.unwrap_or("an error without a class")
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_spark_line_has_its_delta() {
        let v = |a, b| line(SparkVersion::new(a, b, 0));
        assert_eq!(
            (v(3, 2), v(3, 3), v(3, 4), v(3, 5), v(4, 0), v(4, 3)),
            (DeltaLine::V2_0, DeltaLine::V2_3, DeltaLine::V2_4, DeltaLine::V3, DeltaLine::V4, DeltaLine::V4)
        );
        assert!(!DeltaLine::V2_3.has_skip_change_commits() && DeltaLine::V2_4.has_skip_change_commits());
        assert!(DeltaLine::V3.acknowledge().contains("spark.databricks.delta.streaming.allowSourceColumnDrop=always"));
        assert!(DeltaLine::V4.acknowledge().starts_with(".option(\"allowSourceColumnDrop\""));
        assert_eq!(
            DeltaLine::V2_4.remap("DELTA_STREAMING_METADATA_EVOLUTION").and_then(|r| r.0),
            Some("DELTA_STREAMING_SCHEMA_EVOLUTION")
        );
        assert_eq!(DeltaLine::V3.remap("DELTA_STREAMING_METADATA_EVOLUTION"), None);
    }
}
