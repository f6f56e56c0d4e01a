//! A snapshot per finding code: for every [`Code`] of the catalogue, one real input (a shared fixture, case
//! or code change, or the smallest honest change of a real fixture in memory) and the finding our tool
//! renders for it (severity, title, error classes, restart stage, evidence, why, fix), committed under
//! `checks/snapshots/<code>.snap` and reviewed by hand. The clock is pinned (`--now` 2026-12-01T00:00:00Z).
//!
//! [`case_for`] matches every code exhaustively, so a new code does not compile until it has a case; the
//! test fails when a case does not produce its code.

use super::snapshot_inputs::*;
use crate::archive::{Archive, ArchiveError, Entry, Limits, MemArchive};
use crate::diagnose;
use crate::report::{Code, Finding, Report};

/// The newest checkpoint file of the PySpark updateStateByKey job.
const NEWEST_PY: &str = "checkpoint-1796030393000";

/// Codes no shared input shows and no honest change of one produces yet: Spark writes its checksum files
/// only for state files (which the state checks judge), and no fixture's state grows twofold.
const PENDING: &[Code] = &[Code::SparkChecksumMismatch, Code::StateGrowing];

/// The input for a code: exhaustive, so a new code needs a case before the tests compile.
fn case_for(code: Code) -> Case {
    use Code::*;
    match code {
        MetadataMissing => with_error("fixtures", "broken-ss-4.3.0-missing-metadata", "4.3.0"),
        MetadataUnreadable => agg(|f| put(f, "metadata", b"{\"id\":".to_vec())),
        EscapedPath => shared_case("case-20-escaped-checkpoint-path"),
        DstreamCheckpointUnreadable => {
            let mut c = dstream("dstream-3.5.9-updatestatebykey", "3.5.9");
            let raw = c.files.iter().find(|(p, _)| p == NEWEST_PY).expect("newest").1.clone();
            put(&mut c.files, NEWEST_PY, raw[..raw.len() / 2].to_vec());
            c
        }
        DstreamRecovery => dstream("dstream-3.5.9-updatestatebykey", "3.5.9"),
        DstreamRddCheckpointMissing => with_error("dstream", "broken-dstream-3.5.9-missing-rdd-checkpoint", "3.5.9"),
        DstreamReplClass => with_error("dstream", "dstream-3.5.9-scala-caseclass", "3.5.9"),
        DstreamClassNotLoadable => shared_case("case-18-dstream-class-not-found"),
        DstreamScalaIncompatible => dstream("dstream-3.5.9-updatestatebykey", "4.0.1"),
        DstreamGadgetClass => {
            let mut c = dstream("dstream-3.5.9-updatestatebykey", "3.5.9");
            restream(&mut c.files, NEWEST_PY, |d| {
                rename_class(
                    d,
                    "org.apache.hadoop.io.Text",
                    "org.apache.commons.collections.functors.InvokerTransformer",
                )
            });
            c
        }
        DstreamUnexpectedContent => {
            let mut c = dstream("dstream-3.5.9-updatestatebykey", "3.5.9");
            // A reset and a second top-level object after the Checkpoint.
            restream(&mut c.files, NEWEST_PY, |d| d.extend_from_slice(&[0x79, 0x74, 0x00, 0x01, b'x']));
            c
        }
        DstreamAllowedClasses => dstream("dstream-3.5.9-scala-caseclass", "3.5.9"),
        DstreamMigration => dstream("dstream-3.5.9-updatestatebykey", "3.5.9"),
        ArchiveEntryUnreadable => {
            let mut c = agg(|_| {});
            c.corrupt_entry = Some("offsets/11".into());
            c
        }
        LogFileEmpty => with_error("fixtures", "broken-ss-4.3.0-truncated-last-offsets", "4.3.0"),
        LogVersionMalformed => agg(|f| {
            let t = text_of(f, "offsets/11");
            put(f, "offsets/11", t.replacen("v1\n", "version 1\n", 1).into_bytes())
        }),
        LogFileTruncated => with_error("fixtures", "broken-ss-4.3.0-garbage-last-offsets", "4.3.0"),
        LogFileMalformed => agg(|f| {
            let t = text_of(f, "commits/5");
            put(f, "commits/5", t.replacen('{', "[", 1).into_bytes())
        }),
        LogVersionUnsupported => plain(fixture("broken-ss-4.3.0-agg-rocksdb-ckptv2-restarted-on-3.5.9"), "3.5.9"),
        LogFilesNotRead => agg(|f| {
            // Older offsets files padded (a long conf value, 1.17 MiB) so that the newest six fill the 8 MiB budget.
            for b in 0..=6 {
                let p = format!("offsets/{b}");
                let t = text_of(f, &p);
                let pad = format!("\"conf\":{{\"x.pad\":\"{}\",", "p".repeat(1200 << 10));
                put(f, &p, t.replacen("\"conf\":{", &pad, 1).into_bytes());
            }
        }),
        UnexpectedLogFile => agg(|f| f.push(("offsets/11.bak".into(), text_of(f, "offsets/11").into_bytes()))),
        OperatorMetadataUnreadable => agg(|f| put(f, "state/0/_metadata/metadata", b"v1\n{\"operatorInfo\":".to_vec())),
        FileSinkLog => plain(fixture("ss-4.3.0-stateless.sink-output"), "4.3.0"),
        SinkLogUnreadable => {
            let mut files = fixture("ss-4.3.0-stateless.sink-output");
            let t = text_of(&files, "_spark_metadata/1");
            put(&mut files, "_spark_metadata/1", t.replacen('{', "[", 1).into_bytes());
            plain(files, "4.3.0")
        }
        SinkLogBatchMissing => {
            let mut files = fixture("ss-4.3.0-stateless.sink-output");
            remove(&mut files, "_spark_metadata/1");
            plain(files, "4.3.0")
        }
        SinkLogFileMissing => {
            let mut files = fixture("ss-4.3.0-stateless.sink-output");
            remove(&mut files, "part-00000-c5040c33-587d-463c-b5fa-0003efa50874-c000.snappy.parquet");
            plain(files, "4.3.0")
        }
        SinkLogAhead => {
            // A new checkpoint (only batch 0 of the real run) zipped beside the real output of batches 0..=3.
            let mut files: Files = fixture("ss-4.3.0-stateless")
                .into_iter()
                .filter(|(p, _)| !["1", "2", "3"].iter().any(|b| p.ends_with(&format!("/{b}")) || p.ends_with(&format!("/.{b}.crc"))))
                .map(|(p, b)| (format!("chk/{p}"), b))
                .collect();
            files.extend(fixture("ss-4.3.0-stateless.sink-output").into_iter().map(|(p, b)| (format!("out/{p}"), b)));
            plain(files, "4.3.0")
        }
        SourceLogBatchMissing => {
            let mut files = fixture("ss-4.3.0-stateless");
            remove(&mut files, "sources/0/2");
            plain(files, "4.3.0")
        }
        SourceLogEntriesLost => spark_data("log-accident-source-log-compact-header-only-4.1.4", "4.1.4"),
        SourceFilesSkipped => spark_data("log-accident-source-log-latest-deleted-4.1.4", "4.1.4"),
        SourceOffsetUnparsable => agg(|f| {
            let t = text_of(f, "offsets/11");
            let (head, last) = t.rsplit_once('\n').expect("source line");
            put(f, "offsets/11", format!("{head}\n{}", &last[..last.len() / 2]).into_bytes())
        }),
        SourceCountDiffers => agg(|f| {
            let t = text_of(f, "offsets/11");
            let last = t.rsplit('\n').next().expect("source line").to_string();
            put(f, "offsets/11", format!("{t}\n{last}").into_bytes())
        }),
        SourceLinesNotExamined => agg(|f| {
            // 1500 "-" lines and 3 blank lines appended: 1504 source lines, 504 of them only counted.
            let t = text_of(f, "offsets/11");
            put(f, "offsets/11", format!("{t}{}\n\n\n\n", "\n-".repeat(1500)).into_bytes())
        }),
        CommitWithoutOffsets => agg(|f| remove(f, "offsets/4")),
        OffsetsGap => shared_case("case-07-offset-log-gap"),
        AsyncProgressTracking => spark_gen("async-progress-4.1.4-gap-before-latest", "4.1.4"),
        CommitsGap => agg(|f| remove(f, "commits/4")),
        CommitAheadOfOffsets => agg(|f| remove(f, "offsets/11")),
        LastBatchUncommitted => with_error("fixtures", "broken-ss-4.3.0-missing-last-commit", "4.3.0"),
        ConcurrentWriterTempFile => shared_case("case-02-concurrent-batch-rewrite-file-source"),
        LeftoverTempFile => with_error("fixtures", "broken-ss-4.3.0-stray-tmp-offsets", "4.3.0"),
        BatchTimestampBackwards => agg(|f| {
            let t = text_of(f, "offsets/11");
            let i = t.find("\"batchTimestampMs\":").expect("ts") + "\"batchTimestampMs\":".len();
            let ts: String = t[i..].chars().take_while(|c| c.is_ascii_digit()).collect();
            edit_offsets(f, "offsets/11", &format!("\"batchTimestampMs\":{ts}"), "\"batchTimestampMs\":1000");
        }),
        OrphanHadoopCrc => agg(|f| {
            let crc = f.iter().find(|(p, _)| p == "offsets/.11.crc").expect("crc").1.clone();
            f.push(("offsets/.12.crc".into(), crc));
        }),
        OrphanSparkChecksum => plain(fixture("broken-ss-4.1.4-missing-changelog-agg-rocksdb-ckptv2"), "4.1.4"),
        ShufflePartitionsOverridden => {
            let mut c = agg(|_| {});
            c.ctx.session_conf.insert("spark.sql.shuffle.partitions".into(), "200".into());
            c
        }
        StatePartitionMissing => with_error("fixtures", "broken-ss-4.3.0-missing-state-partition", "4.3.0"),
        StatePartitionExtra => agg(|f| {
            let copies: Files = f
                .iter()
                .filter(|(p, _)| p.starts_with("state/0/0/"))
                .map(|(p, b)| (p.replacen("state/0/0/", "state/0/7/", 1), b.clone()))
                .collect();
            f.extend(copies);
        }),
        StateOperatorEmpty => agg(|f| f.push(("state/1/README.txt".into(), b"copied by hand\n".to_vec()))),
        StateOperatorMissing => agg(|f| {
            for e in f.iter_mut().filter(|(p, _)| p.starts_with("state/0/")) {
                e.0 = e.0.replacen("state/0/", "state/1/", 1);
            }
        }),
        StateDirEmpty => agg(|f| {
            f.retain(|(p, _)| !p.starts_with("state/"));
            f.push(("state/README.txt".into(), b"copied by hand\n".to_vec()));
        }),
        LogsGoneStateKept => {
            let mut c = agg(|f| f.retain(|(p, _)| !p.starts_with("offsets/") && !p.starts_with("commits/")));
            c.ctx = ctx("4.1.4");
            c
        }
        CheckpointIdsNotSupported => {
            // On 4.1 (4.3 keeps an existing checkpoint's own format, whatever the session sets).
            let mut c = agg(|_| {});
            c.ctx = ctx("4.1.4");
            c.ctx.session_conf.insert("spark.sql.streaming.stateStore.checkpointFormatVersion".into(), "2".into());
            c
        }
        StateDeltaMissing => with_error("fixtures", "broken-ss-4.1.4-missing-delta", "4.1.4"),
        StateChangelogMissing => with_error("fixtures", "broken-ss-4.3.0-missing-changelog", "4.3.0"),
        StateBaseSnapshotMissing => {
            with_error("fixtures", "broken-ss-4.1.4-missing-changelog-agg-rocksdb-ckptv2", "4.1.4")
        }
        StateFileCorrupt => with_error("fixtures", "broken-ss-4.3.0-corrupt-state-file-norepair-agg-hdfs", "4.3.0"),
        StateCodecMismatch => spark_data("codec-mismatch-hdfs-snappy-unrecorded-4.1.4", "4.1.4"),
        OperatorMetadataMissing => {
            let mut c = timed("ss-4.3.0-tws-pandas", "4.3.0");
            c.files.retain(|(p, _)| !p.starts_with("state/0/_metadata/"));
            c
        }
        // A real 4.3.0 checkpoint whose state values carry row checksums, restarted on 4.1.4.
        RecordedConfUnsupported => plain(fixture("ss-4.3.0-agg-rocksdb-ckptv2-rowchecksum"), "4.1.4"),
        StateEncodingFormatUnsupported => {
            let mut c = spark_data("encoding-format-avro-session-4.1.4", "4.1.4");
            c.ctx.session_conf.insert("spark.sql.streaming.stateStore.encodingFormat".into(), "avro".into());
            c
        }
        RocksdbSstMissing => spark_data("rocksdb-sst-missing-changelog-4.1.4", "4.1.4"),
        RocksdbZipNameUnparsable => spark_data("stray-rocksdb-changelog-old-zip-4.1.4", "4.1.4"),
        StateSchemaFileUnreadable => spark_data("schema-file-truncated-4.1.4", "4.1.4"),
        RocksdbSstWrongSize => spark_data("rocksdb-sst-truncated-4.1.4", "4.1.4"),
        RocksdbSnapshotMemberDamaged => spark_data("rocksdb-current-empty-4.1.4", "4.1.4"),
        StateFileCrcMismatchUnchecked => plain(fixture("broken-ss-3.5.9-corrupt-state-file"), "3.5.9"),
        StaleChecksumSidecar => spark_gen("stale-checksum-delta-hdfs-4.1.4", "4.1.4"),
        StateRowSchemaViolation => agg(with_bad_key_row),
        StateVerificationBudget => {
            let mut c = agg(|_| {});
            c.ctx.verify_budget_bytes = Some(0);
            c
        }
        StateGrowing => plain(fixture("ss-4.3.0-agg-rocksdb"), "4.3.0"),
        StateKeysBehindWatermark => agg(|f| {
            let wm = watermark_of(f, 11);
            let (from, to) = (format!("\"batchWatermarkMs\":{wm}"), "\"batchWatermarkMs\":4102444800000");
            edit_offsets(f, "offsets/11", &from, to);
        }),
        WatermarkNotAdvancing => agg(|f| {
            let frozen = watermark_of(f, 6);
            for b in 7..=11 {
                let wm = watermark_of(f, b);
                let p = format!("offsets/{b}");
                edit_offsets(f, &p, &format!("\"batchWatermarkMs\":{wm}"), &format!("\"batchWatermarkMs\":{frozen}"));
            }
        }),
        OffsetsRewrittenAfterCommit => timed("broken-ss-4.3.0-crc-mismatch-last-offsets", "4.3.0"),
        LastActivityAge => timed("ss-4.3.0-agg-hdfs", "4.3.0"),
        HadoopCrcMismatch => timed("broken-ss-4.3.0-crc-mismatch-last-offsets", "4.3.0"),
        SparkChecksumMismatch => {
            let mut files = fixture("ss-4.3.0-agg-rocksdb-ckptv2");
            let (path, _) = files
                .iter()
                .find(|(p, _)| {
                    !p.starts_with("state/")
                        && !p.ends_with(".crc")
                        && files.iter().any(|(c, _)| *c == format!("{p}.crc"))
                })
                .cloned()
                .expect("a file outside state/ with a Spark checksum file");
            let mut t = text_of(&files, &path);
            t.push('\n');
            files.retain(|(p, _)| *p != path);
            files.push((path, t.into_bytes()));
            plain(files, "4.3.0")
        }
        OffsetsUnknownKeys => timed("broken-ss-4.3.0-crc-mismatch-last-offsets", "4.3.0"),
        SourceCountChanged => shared_case("case-03-source-count-changed"),
        ConcurrentWriters => with_error("fixtures", "broken-ss-3.5.9-concurrent-two-processes", "3.5.9"),
        StatefulOperatorWithoutState => with_error("fixtures", "broken-ss-4.3.0-add-stateful-operator", "4.3.0"),
        StateSchemaChanged => with_error("code-changes", "broken-ss-3.5.9-code-agg-add-max", "3.5.9"),
        ErrorNotExplainedByFiles => with_error("code-changes", "broken-ss-4.0.5-code-agg-to-dropduplicates", "4.0.5"),
        ArchiveCompressionUnsupported => agg_zip(|mut z| {
            zipcraft::set_method(&mut z, 12);
            z
        }),
        ArchiveEntriesOverlap => agg_zip(|z| {
            // Three entries sharing offsets/0's compressed bytes (a restart does not read offsets/0).
            let names: Vec<String> = (0..3).map(|i| format!("copies/{i}")).collect();
            let heads = zipcraft::central_headers(&z);
            let target = heads
                .iter()
                .position(|&o| {
                    let n = u16::from_le_bytes([z[o + 28], z[o + 29]]) as usize;
                    &z[o + 46..o + 46 + n] == b"offsets/0"
                })
                .expect("offsets/0");
            zipcraft::alias(&z, target, &names)
        }),
        ArchiveEntrySkipped => {
            // One entry whose name climbs out of the folder, added to the zip.
            let mut c = agg(|f| f.push(("../../etc/passwd".into(), b"root:x:0:0".to_vec())));
            c.zip_patch = Some(|z| z);
            c
        }
        ArchiveEntryDuplicated => {
            // A garbage copy of offsets/11 listed first, under a name that is the same path once `\` is `/`.
            let mut c = agg(|f| f.insert(0, ("offsets\\11".into(), b"garbage".to_vec())));
            c.zip_patch = Some(|z| z);
            c
        }
        FileNotVerified => agg(|f| {
            // The latest offsets file over the 16 MiB read cap (a long conf value): healthy, not verified.
            let pad = format!("\"conf\":{{\"x.pad\":\"{}\",", "p".repeat(17 << 20));
            let t = text_of(f, "offsets/11");
            put(f, "offsets/11", t.replacen("\"conf\":{", &pad, 1).into_bytes());
        }),
        RootsNotDiagnosed => {
            let mut c = agg(|_| {});
            let mut files: Files = c.files.iter().map(|(p, b)| (format!("chk/{p}"), b.clone())).collect();
            files.extend(
                (0..crate::diagnose::MAX_ROOTS).map(|i| (format!("z/{i:04}/metadata"), b"{\"id\":\"a\"}".to_vec())),
            );
            c.files = files;
            c.times.clear();
            c
        }
        KafkaSourceOffsets => kafka_case("3.5.7", None, None),
        KafkaOffsetsAheadOfLatest => kafka_case("3.5.7", Some(KAFKA_EARLIEST_04), None),
        KafkaOffsetsBelowEarliest => {
            kafka_case("4.1.4", Some("payments-events:0:520\npayments-events:1:400"), Some("payments-events:0:900\npayments-events:1:950"))
        }
        KafkaPartitionsRemoved => kafka_case("4.1.4", Some("payments-events:0:0"), Some("payments-events:0:900")),
        KafkaTopicMissing => kafka_case("4.1.4", Some("other-events:0:0"), None),
        KafkaPartitionsAdded => kafka_case(
            "4.3.0",
            Some("payments-events:0:0\npayments-events:1:0\npayments-events:2:40"),
            Some("payments-events:0:900\npayments-events:1:950\npayments-events:2:70"),
        ),
        FileSourceFiles => with_error("fixtures", "broken-ss-4.3.0-missing-last-commit", "4.3.0"),
        FileSourcePath => source_path_changed(),
        AutoLoaderSource => autoloader(None),
        AutoLoaderSchemaEvolution => autoloader(Some(
            "org.apache.spark.sql.catalyst.util.UnknownFieldException: Encountered unknown fields during parsing: [country]\n",
        )),
        SourceOffsetShape => shared_case("case-20-escaped-checkpoint-path"),
        NoCheckpointFound => plain(vec![("notes/README.txt".into(), b"not a checkpoint\n".to_vec())], "4.3.0"),
        DeltaLogRead | DeltaVersionExpired => delta_case("case-13-delta-log-expired", true, |_, _| {}),
        DeltaLogFileUnreadable => delta_case("case-25-delta-busy-version-available", true, |_, log| {
            // The newest checkpoint cut in half (a partial copy).
            let p = "_delta_log/00000000000000000059.checkpoint.parquet";
            let half = log.iter().find(|(n, _)| n == p).map(|(_, b)| b[..b.len() / 2].to_vec()).expect("checkpoint");
            put(log, p, half);
        }),
        DeltaOffsetInvalid => delta_case("case-13-delta-log-expired", false, |f, _| {
            let t = text_of(f, "offsets/12").replace("\"sourceVersion\":1", "\"sourceVersion\":4");
            put(f, "offsets/12", t.into_bytes());
        }),
        DeltaOffsetMovedBack => delta_case("case-13-delta-log-expired", false, |f, _| {
            // Batch 12 not committed, and its end offset behind the start (offsets/11 is at version 39).
            remove(f, "commits/12");
            let t = text_of(f, "offsets/12").replace("\"reservoirVersion\":40", "\"reservoirVersion\":38");
            put(f, "offsets/12", t.into_bytes());
        }),
        DeltaTableUnreconstructable => delta_case("case-14-delta-log-truncated-no-checkpoint", true, |_, _| {}),
        DeltaTableReplaced => delta_case("case-27-delta-table-recreated", true, |_, _| {}),
        DeltaSchemaChange | DeltaNonAppendCommit => delta_case("case-28-delta-schema-drop-after-add", true, |_, _| {}),
        DeltaDataFilesVacuumable => {
            // Case 28 two weeks on: the files version 7 removed are past the 7-day deleted-file retention.
            let mut c = delta_case("case-28-delta-schema-drop-after-add", true, |_, _| {});
            c.ctx.now_ms = Some(NOW_MS + 14 * 86_400_000);
            c
        }
        DeltaRetentionCountdown => delta_case("case-13-delta-log-expired", false, |_, _| {}),
        DeltaSchemaTrackingLog => delta_case("case-17-delta-schema-change-drop-column", true, |f, _| {
            // The stream as if started with schemaTrackingLocation under the checkpoint, its log of another table:
            // an entry as DeltaSourceMetadataTrackingLog writes it (v1 + PersistedMetadata JSON).
            let dir = "_schema_tracking/_schema_log_7cdeb771-6009-5df2-8293-142bb3a91275";
            let entry = "v1\n{\"tableId\":\"0358d555-9ede-437d-be1b-6a69dda4d282\",\"deltaCommitVersion\":3,\"dataSchemaJson\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[{\\\"name\\\":\\\"id\\\",\\\"type\\\":\\\"long\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}}]}\",\"partitionSchemaJson\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[]}\",\"sourceMetadataPath\":\"/chk/sources/0\"}";
            f.push((format!("{dir}/0"), entry.as_bytes().to_vec()));
        }),
    }
}

/// An archive whose one entry does not inflate (as a damaged zip reports it).
struct CorruptEntry {
    inner: MemArchive,
    bad: String,
}

impl Archive for CorruptEntry {
    fn entries(&self) -> &[Entry] {
        self.inner.entries()
    }
    fn read(&mut self, path: &str, max_bytes: u64) -> Result<Vec<u8>, ArchiveError> {
        if path == self.bad {
            return Err(ArchiveError::Corrupt {
                path: path.into(),
                offset: 0,
                reason: "invalid deflate stream".into(),
                header: None,
            });
        }
        self.inner.read(path, max_bytes)
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn input_bytes(&self) -> u64 {
        self.inner.input_bytes()
    }
}

#[allow(dead_code)]
mod zipcraft {
    include!("../../tests/common/zipcraft.rs");
}

/// The agg fixture zipped, then changed by `patch`.
fn agg_zip(patch: fn(Vec<u8>) -> Vec<u8>) -> Case {
    let mut c = agg(|_| {});
    c.zip_patch = Some(patch);
    c
}

fn run(case: Case) -> Report {
    if let Some(patch) = case.zip_patch {
        let z = patch(zipcraft::deflated_zip(&case.files));
        let len = z.len() as u64;
        let mut a =
            crate::ZipInput::open(std::io::Cursor::new(z), len, "case.zip", Limits::default()).expect("zip opens");
        return diagnose(&mut a, &case.ctx);
    }
    let mut mem = MemArchive::new("case.zip", case.files, Limits::default()).expect("archive");
    for (p, t) in &case.times {
        mem.set_modified(p, *t);
    }
    match case.corrupt_entry {
        Some(bad) => diagnose(&mut CorruptEntry { inner: mem, bad }, &case.ctx),
        None => diagnose(&mut { mem }, &case.ctx),
    }
}

/// The finding as people read it.
fn render(f: &Finding) -> String {
    let mut s = format!("{} [{}]\n{}\n", f.code, serde_json::to_string(&f.severity).unwrap_or_default(), f.title);
    if !f.error_classes.is_empty() {
        s.push_str(&format!("error classes: {}\n", f.error_classes.join(", ")));
    }
    if let Some(r) = &f.restart_failure {
        s.push_str(&format!(
            "fails the restart at stage {} ({:?}): {} {}\n",
            r.stage.number(),
            r.stage,
            r.error_class.as_deref().unwrap_or("-"),
            r.exception
        ));
    }
    if f.explains_error_text {
        s.push_str("explains the pasted error\n");
    }
    s.push_str("evidence:\n");
    for e in &f.evidence {
        let size = e.size.map(|b| format!(" ({b} bytes)")).unwrap_or_default();
        let off = e.offset.map(|o| format!(" @{o}")).unwrap_or_default();
        s.push_str(&format!("  - {}{size}{off}: {}\n", e.path, e.detail));
    }
    s.push_str(&format!("why: {}\nfix:\n", f.why));
    for (i, step) in f.fix.iter().enumerate() {
        s.push_str(&format!("  {}. {step}\n", i + 1));
    }
    s
}

fn snapshot_of(code: Code) -> String {
    let r = run(case_for(code));
    let found: Vec<&Finding> = r.checkpoints.iter().flat_map(|c| &c.findings).filter(|f| f.code == code).collect();
    assert!(
        !found.is_empty(),
        "the case of {code} does not produce it; it produced {:?}",
        r.checkpoints.iter().flat_map(|c| &c.findings).map(|f| f.code).collect::<Vec<_>>()
    );
    let info = code.info();
    for f in &found {
        assert!(info.severities.contains(&f.severity), "{code}: severity {:?} not in the catalogue", f.severity);
        if code != Code::ErrorNotExplainedByFiles {
            for c in &f.error_classes {
                assert!(info.error_classes.contains(&c.as_str()), "{code}: error class {c} not in the catalogue");
            }
        }
    }
    found.iter().map(|f| render(f)).collect::<Vec<_>>().join("\n")
}

#[test]
fn every_code_of_the_catalogue_has_a_snapshot_case() {
    let mut failed = Vec::new();
    for &code in Code::ALL.iter().filter(|c| !PENDING.contains(c)) {
        let text = match std::panic::catch_unwind(|| snapshot_of(code)) {
            Ok(t) => t,
            Err(_) => {
                failed.push(code.as_str());
                continue;
            }
        };
        let ok = std::panic::catch_unwind(|| {
            insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
                insta::assert_snapshot!(code.as_str(), text);
            });
        });
        if ok.is_err() {
            failed.push(code.as_str());
        }
    }
    assert!(failed.is_empty(), "codes whose snapshot case fails or differs: {failed:?}");
}

#[test]
fn every_code_has_one_place_that_emits_it() {
    for &code in Code::ALL {
        let rows = super::rules_for(code).count();
        assert!(rows > 0 || super::DIAGNOSE_CODES.contains(&code), "{code}: no registry row emits it");
    }
    for r in super::REGISTRY {
        assert!(!r.codes.is_empty());
    }
}

/// Delta's two-step stop with a schema tracking log (DeltaSourceMetadataEvolutionSupport): a log that holds the
/// schema only up to a version before the non-additive change gives `DELTA_STREAMING_METADATA_EVOLUTION` (the log
/// records it, restart once); a log already at the change gives
/// `DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION` (acknowledge it).
#[test]
fn delta_schema_change_with_a_tracking_log_stops_in_two_steps() {
    let schema_change_class = |logged: i64| {
        let case = delta_case("case-17-delta-schema-change-drop-column", true, |f, _| {
            let id = "7cdeb771-6009-5df2-8293-142bb3a91275";
            let entry = format!("v1\n{{\"tableId\":\"{id}\",\"deltaCommitVersion\":{logged},\"dataSchemaJson\":\"{{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[]}}\",\"partitionSchemaJson\":\"{{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[]}}\",\"sourceMetadataPath\":\"/chk/sources/0\"}}");
            f.push((format!("_schema_tracking/_schema_log_{id}/0"), entry.into_bytes()));
        });
        let r = run(case);
        let f = r.checkpoints[0].findings.iter().find(|f| f.code == Code::DeltaSchemaChange).expect("schema change");
        (f.error_classes.clone(), f.title.clone())
    };
    let (before, title) = schema_change_class(0);
    assert_eq!(before, vec!["DELTA_STREAMING_METADATA_EVOLUTION".to_string()], "{title}");
    let at: i64 = title
        .split("at table version ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|v| v.parse().ok())
        .expect("version");
    let (after, _) = schema_change_class(at);
    assert_eq!(after, vec!["DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION".to_string()]);
}

/// Spark 3.5's untyped state format invalidation pasted for a checkpoint whose files are healthy: the prediction
/// follows the pasted error (a changed query), never "resumes", and the stored schemas are the evidence.
#[test]
fn a_pasted_state_format_invalidation_decides_over_healthy_files() {
    let mut c = with_error("code-changes", "broken-ss-3.5.9-code-agg-add-max", "3.5.9");
    c.ctx.error_text = Some(
        "org.apache.spark.sql.execution.streaming.state.InvalidUnsafeRowException: The streaming query failed by state format invalidation. The following reasons may cause this: 1. An old Spark version wrote the checkpoint that is incompatible with the current one; 2. Broken checkpoint files; 3. The query is changed among restart.\nError message is: Variable-length field validation error: field: StructField(sum,LongType,true), index: 1\n".into(),
    );
    let r = run(c);
    let cp = &r.checkpoints[0];
    assert_eq!(cp.restart.outcome, crate::report::RestartOutcome::Fails, "{}", cp.restart.summary);
    assert_eq!(
        cp.restart.exception.as_deref(),
        Some("org.apache.spark.sql.execution.streaming.state.InvalidUnsafeRowException")
    );
    let f = cp.findings.iter().find(|f| f.code == Code::StateSchemaChanged).expect("state-schema-changed");
    assert!(f.explains_error_text);
    assert!(f.evidence.iter().any(|e| e.detail.starts_with("stored key schema")), "{:?}", f.evidence);
}
