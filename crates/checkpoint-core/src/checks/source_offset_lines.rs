//! The source lines of the offsets files (`offsets/<batch>`, one line per source after the version and metadata
//! lines, `OffsetSeq.toStreamProgress`): offsets that do not parse as JSON, a source count that changes between
//! batches (Spark 4.3's named sources with source evolution excepted), and files with more source lines than are
//! examined one by one. Part of [`super::logs::check_continuity`].

use super::BACKUP;
use crate::model::Checkpoint;
use crate::report::{Code, Finding, RestartStage, Severity};

/// Offsets that do not parse as JSON, source counts that change between batches, and source lines beyond
/// what is examined one by one.
pub(super) fn source_offset_lines(cp: &Checkpoint) -> Vec<Finding> {
    let mut out = Vec::new();
    let last_id = cp.last_batch_id();
    let mut prev: Option<(i64, u64, bool)> = None;
    for (id, f) in &cp.offsets {
        let Ok(o) = &f.file.content else { continue };
        // Spark 4.3's named sources (offsets v2, `name:offset` lines) with source evolution on: a restart matches
        // sources by name, so sources added (real Spark 4.3.0 resumed after adding `src_b`), removed or reordered
        // since the previous batch are no change of count (source evolution's documented reach).
        let names = o.version >= 2 && o.offsets.iter().any(|s| s.name.is_some());
        let evolution = o
            .metadata
            .as_ref()
            .and_then(|m| m.conf.get("spark.sql.streaming.queryEvolution.enableSourceEvolution"))
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        let read_at_restart = Some(*id) == last_id || last_id.is_some_and(|l| *id == l - 1);
        let unparsable = |title: String| {
            let mut fd = Finding::new(
                Code::SourceOffsetUnparsable,
                if read_at_restart { Severity::Error } else { Severity::Warning },
                title,
            )
            .why("Each source re-reads its offset JSON from the offsets file on restart; a cut or edited line makes the source fail to deserialize it.")
            .fix(&[BACKUP.to_string(), super::logs::offsets_repair_step(cp, *id, &f.file.path)]);
            if read_at_restart {
                fd = fd.fails(RestartStage::SourceOffsets, None, "com.fasterxml.jackson.core.JsonParseException");
            }
            fd
        };
        // One finding per source for the first `MAX_NAMED` of a file; the others (kept or only counted) in one.
        let bad = o.offsets.iter().enumerate().filter(|(_, s)| s.raw.is_some() && s.json.is_none());
        let (mut more, mut first_more) = (0u64, None);
        for (n, (i, s)) in bad.enumerate() {
            if n >= super::MAX_NAMED {
                more += 1;
                first_more.get_or_insert((i as u64 + 3, s.offset));
                continue;
            }
            let text = s.raw.clone().unwrap_or_default().chars().take(80).collect::<String>();
            out.push(unparsable(format!("Offset of source {i} in {} is not valid JSON", f.file.path)).evidence(
                &f.file.path,
                format!("line {}: {text:?}", i + 3),
                Some(s.offset),
            ));
        }
        let rest = &o.not_kept;
        if let Some((line, at)) = first_more.or(rest.first_not_json) {
            out.push(
                unparsable(format!(
                    "{} more source offset(s) in {} are not valid JSON",
                    more + rest.not_json,
                    f.file.path
                ))
                .evidence(&f.file.path, format!("line {line}: the first of them"), Some(at)),
            );
        }
        // Only a file with more source lines than are examined one by one (`MAX_SOURCE_OFFSETS`) is a finding:
        // an older file's lines counted because the kept offsets of all files reached their bound
        // (`MAX_KEPT_SOURCE_OFFSETS`) are a limit of this inspector on a file no restart reads, not a fact of it.
        if rest.lines > 0 && o.source_count() > crate::log::offsets::MAX_SOURCE_OFFSETS as u64 {
            out.push(source_lines_not_examined(&f.file.path, o, read_at_restart));
        }
        let n = o.source_count();
        if let Some((pid, pn, prev_names)) = prev {
            let by_name = evolution && prev_names && names;
            if pn != n && !by_name {
                let mut fd = Finding::new(
                    Code::SourceCountDiffers,
                    if Some(*id) == last_id { Severity::Error } else { Severity::Warning },
                    format!("offsets/{id} lists {n} source(s) but offsets/{pid} lists {pn}"),
                )
                .evidence(&f.file.path, format!("{n} offset line(s)"), None)
                .evidence(format!("offsets/{pid}"), format!("{pn} offset line(s)"), None)
                .why("The number of sources of a query is fixed; Spark asserts that the latest offsets file has one line per source of the restarted query (\"There are [N] sources in the checkpoint offsets and now there are [M] sources\"). A changed count means a cut file or a changed query.")
                .fix(&[BACKUP.to_string(), format!("Restore {} from a backup.", f.file.path)]);
                if Some(*id) == last_id {
                    fd = fd.fails(RestartStage::SourceCount, None, "java.lang.AssertionError");
                }
                out.push(fd);
            }
        }
        prev = Some((*id, n, names));
    }
    out
}

/// An offsets file with more source lines than are kept one by one
/// ([`crate::log::offsets::MAX_SOURCE_OFFSETS`]): how many it has, what was and was not examined, and what the
/// count means for a restart. A warning (and an `unknown` verdict unless the restart fails by the sources'
/// offsets) when a restart reads the file: the sources not examined one by one are not verified.
fn source_lines_not_examined(path: &str, o: &crate::log::offsets::OffsetSeq, read_at_restart: bool) -> Finding {
    let (n, kept, rest) = (o.source_count(), o.offsets.len(), &o.not_kept);
    let json = rest.lines - rest.no_offset - rest.not_json;
    Finding::new(
        Code::SourceLinesNotExamined,
        if read_at_restart { Severity::Warning } else { Severity::Info },
        format!("{path} has {n} source lines: the first {kept} were examined one by one, the other {} were only counted", rest.lines),
    )
    .evidence(
        path,
        format!(
            "{n} source line(s) after the version and metadata lines; of the {} not examined one by one: {} \"-\" (no offset), {json} valid JSON, {} not valid JSON",
            rest.lines, rest.no_offset, rest.not_json
        ),
        None,
    )
    .why(format!(
        "Spark reads one line per source after the version and metadata lines (\"-\" = the source had no offset yet) and asserts on restart that their number equals the restarted query's sources (\"There are [{n}] sources in the checkpoint offsets and now there are [M] sources requested by the query\"). A query has a handful of sources, a large union hundreds: unless this query really reads {n} sources, the restart fails on that assertion, and lines appended to the file (blank lines, copies) are the usual cause. This inspector keeps {kept} sources one by one; the lines after them were checked for JSON and counted, not matched to a source kind, so what each of those sources would do on restart is not verified."
    ))
    .fix(&[
        BACKUP.to_string(),
        format!("Restore {path} from a backup, or remove the lines appended after the last real source (one line per source of the query)."),
    ])
}
