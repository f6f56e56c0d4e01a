//! The path a file source reads now, against the files its log recorded (the user gives the path: a
//! checkpoint does not hold it).
//!
//! Spark neither records a file source's path in the checkpoint nor compares it on restart. In
//! `FileStreamSource` (apache/spark sql/core/src/main/scala/org/apache/spark/sql/execution/streaming/
//! FileStreamSource.scala) the log's entries only seed `seenFiles` (a `SeenFilesMap` keyed by each file's full,
//! URI-encoded path, or its name with `fileNameOnly`), then `purge()` sets `lastPurgeTimestamp` to the newest
//! recorded modification time minus `maxFileAgeMs` (option `maxFileAge`, 7 days by default; `Long.MaxValue`,
//! i.e. no age limit, with `latestFirst` and `maxFilesPerTrigger` both set). `isNewFile` keeps a listed file
//! when `timestamp >= lastPurgeTimestamp` and its path is not in the map. So on a changed path every file of the
//! new path is new, unless it is older than that cutoff (skipped, silently) or, with `fileNameOnly`, named like
//! a recorded file.

use super::metadata::unescape_once;
use super::source_files::log_offset;
use crate::log::file_log::FileLogEntry;
use crate::model::Checkpoint;
use crate::report::{CheckpointKind, Code, Finding, Severity};
use crate::source::SourceKind;
use crate::time::utc;
use crate::Context;

/// `FileStreamOptions.maxFileAgeMs`'s default: `maxFileAge` = "7d".
pub const DEFAULT_MAX_FILE_AGE_MS: i64 = 7 * 24 * 3600 * 1000;

/// The path of a file source's recorded entry or of a given path, as compared: `%XX` decoded, a `file:`
/// scheme dropped (`file:///a`, `file:/a` → `/a`), `//` as `/`, `.` and `..` segments resolved, no trailing `/`. Other schemes (`s3a://bucket/a`) are kept.
pub fn normalize(path: &str) -> String {
    let decoded = unescape_once(path.trim()).unwrap_or_else(|| path.trim().to_string());
    let p = if let Some(rest) = decoded.strip_prefix("file://") {
        // file:///a (empty authority) or file://host/a: the path from its first '/'.
        rest.find('/').map(|i| rest[i..].to_string()).unwrap_or_default()
    } else if let Some(rest) = decoded.strip_prefix("file:") {
        rest.to_string()
    } else {
        decoded
    };
    let p = {
        // Hadoop's `Path.normalizePath` turns each `//` into `/` (the authority's `//` excepted).
        let (a, rest) = authority(&p);
        let mut collapsed = rest.to_string();
        while collapsed.contains("//") {
            collapsed = collapsed.replace("//", "/");
        }
        format!("{a}{}", remove_dot_segments(&collapsed))
    };
    let t = p.trim_end_matches('/');
    if t.is_empty() && p.starts_with('/') {
        "/".into()
    } else {
        t.to_string()
    }
}

/// A path without its `.` segments and with each `..` taking the segment before it away, as Hadoop's `Path`
/// normalizes the URI it builds (`java.net.URI.normalize`): `/data/x/../in/./a` is `/data/in/a`. A `..` with no
/// segment before it is kept, as `URI.normalize` keeps it.
fn remove_dot_segments(path: &str) -> String {
    if !path.split('/').any(|s| s == "." || s == "..") {
        return path.to_string();
    }
    let mut out: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "." => {}
            ".." if out.last().is_some_and(|l| !l.is_empty() && *l != "..") => {
                out.pop();
            }
            _ => out.push(seg),
        }
    }
    let mut joined = out.join("/");
    if path.starts_with('/') && !joined.starts_with('/') {
        joined.insert(0, '/');
    }
    joined
}

/// The scheme and authority of a normalized path (`s3a://bucket`, or `//host` with no scheme, as Hadoop's `Path`
/// reads a leading `//`), or `""` for a plain path.
fn authority(p: &str) -> (&str, &str) {
    if p.len() > 2 && p.starts_with("//") {
        let end = p[2..].find('/').map(|j| 2 + j).unwrap_or(p.len());
        return (&p[..end], &p[end..]);
    }
    match p.find("://") {
        Some(i) => {
            let after = &p[i + 3..];
            let end = after.find('/').map(|j| i + 3 + j).unwrap_or(p.len());
            (&p[..end], &p[end..])
        }
        None => ("", p),
    }
}

/// True when `file` (a normalized recorded path) is `dir` or lies under it. `dir` (normalized) may hold Hadoop
/// glob patterns in its segments (`*`, `?`, `[abc]`, `[^a-z]`, `{a,b}`), as a file source's path may. A `dir`
/// without a scheme is compared with the recorded path's path part only.
pub fn is_under(file: &str, dir: &str) -> bool {
    let (fa, fp) = authority(file);
    let (da, dp) = authority(dir);
    if !da.is_empty() && !glob_segment(da, fa) {
        return false;
    }
    let fs: Vec<&str> = fp.split('/').filter(|s| !s.is_empty()).collect();
    let ds: Vec<&str> = dp.split('/').filter(|s| !s.is_empty()).collect();
    ds.len() <= fs.len() && ds.iter().zip(&fs).all(|(d, f)| glob_segment(d, f))
}

/// Hadoop `GlobPattern` on one path segment: `*` (any run), `?` (one character), `[...]` (a class, `^` or `!`
/// negates, `a-z` ranges), `{a,b}` (alternatives, not nested), `\` escapes; anything else literally.
fn glob_segment(pat: &str, s: &str) -> bool {
    // Alternatives are expanded, at most MAX_EXPANSIONS patterns in all: a segment with more (`{a,b}` twenty
    // times is a million) is compared with each `{..}` as `*`, a wider match, instead of taking exponential time.
    const MAX_EXPANSIONS: usize = 1024;
    let (mut expansions, mut groups) = (1usize, 0usize);
    let mut rest = pat;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| open + c) else { break };
        expansions = expansions.saturating_mul(rest[open + 1..close].split(',').count());
        groups += 1;
        rest = &rest[close + 1..];
    }
    // Also over 16 groups (each expansion recurses once per group: the depth stays small).
    if expansions > MAX_EXPANSIONS || groups > 16 {
        let mut wide = String::new();
        let mut rest = pat;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}').map(|c| open + c) else { break };
            wide.push_str(&rest[..open]);
            wide.push('*');
            rest = &rest[close + 1..];
        }
        wide.push_str(rest);
        return glob_segment(&wide, s);
    }
    if let Some(open) = pat.find('{') {
        if let Some(close) = pat[open..].find('}').map(|c| open + c) {
            let (head, alts, tail) = (&pat[..open], &pat[open + 1..close], &pat[close + 1..]);
            return alts.split(',').any(|a| glob_segment(&format!("{head}{a}{tail}"), s));
        }
    }
    let p: Vec<char> = pat.chars().collect();
    let t: Vec<char> = s.chars().collect();
    glob_chars(&p, &t)
}

fn glob_chars(p: &[char], t: &[char]) -> bool {
    // Iterative match with one backtrack point for the last `*` (linear in practice, no recursion depth).
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
                continue;
            }
            Some('?') => Some(1),
            Some('[') => class_len(&p[pi..]).and_then(|(len, ok)| ok(t[ti]).then_some(len)),
            Some('\\') if pi + 1 < p.len() => (p[pi + 1] == t[ti]).then_some(2),
            Some(c) => (*c == t[ti]).then_some(1),
            None => None,
        };
        match step {
            Some(n) => {
                pi += n;
                ti += 1;
            }
            None => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// A `[...]` class at the start of `p`: its length in pattern characters and its test, or `None` when the
/// class does not close (then `[` is compared literally by the caller's fallback: no match).
#[allow(clippy::type_complexity, reason = "a pattern and its test, used once")]
fn class_len(p: &[char]) -> Option<(usize, Box<dyn Fn(char) -> bool + '_>)> {
    let close = p.iter().skip(1).position(|c| *c == ']').map(|i| i + 1)?;
    let body = &p[1..close];
    let (neg, body) = match body.first() {
        Some('^') | Some('!') => (true, &body[1..]),
        _ => (false, body),
    };
    let test = move |c: char| {
        let mut i = 0;
        let mut hit = false;
        while i < body.len() {
            if i + 2 < body.len() && body[i + 1] == '-' {
                hit |= body[i] <= c && c <= body[i + 2];
                i += 3;
            } else {
                hit |= body[i] == c;
                i += 1;
            }
        }
        hit != neg
    };
    Some((close + 1, Box::new(test)))
}

/// The folder every recorded path lies under (the longest common run of whole segments), normalized.
fn common_dir(paths: &[String]) -> String {
    let Some(first) = paths.first() else { return String::new() };
    let (auth, path) = authority(first);
    let mut common: Vec<&str> = path.split('/').collect();
    common.pop(); // the file name
    for p in &paths[1..] {
        let (a, rest) = authority(p);
        if a != auth {
            return String::new();
        }
        let segs: Vec<&str> = rest.split('/').collect();
        let n = common.iter().zip(&segs[..segs.len().saturating_sub(1)]).take_while(|(x, y)| x == y).count();
        common.truncate(n);
    }
    let dir = common.join("/");
    format!("{auth}{}", if dir.is_empty() { "/" } else { &dir })
}

/// What a restart restores into `seenFiles`: the batch files from the newest `.compact` read on (a compaction
/// holds all entries before it), as far as they were kept.
pub(super) struct Restored<'a> {
    /// The entries kept of those files.
    pub(super) entries: Vec<&'a FileLogEntry>,
    /// Entries those files hold past the inspector's memory budget for entries (read and well formed, not kept).
    pub(super) not_kept: u64,
    /// The batch ids of the files with entries not kept.
    partial: Vec<i64>,
    /// The newest modification time any of their entries records, kept or not (ms).
    newest_ms: Option<i64>,
}

/// The entries of `log` a restart restores (see [`Restored`]).
pub(super) fn restored(log: &crate::model::FileLog) -> Restored<'_> {
    let from = log.read.iter().filter(|(_, f)| f.compact).map(|(b, _)| *b).next_back().unwrap_or(i64::MIN);
    let batches = || log.read.range(from..).filter_map(|(id, f)| f.file.content.as_ref().ok().map(|b| (*id, b)));
    Restored {
        entries: batches().flat_map(|(_, b)| &b.entries).collect(),
        not_kept: batches().map(|(_, b)| b.not_kept).sum(),
        partial: batches().filter(|(_, b)| !b.complete()).map(|(id, _)| id).collect(),
        newest_ms: batches().filter_map(|(_, b)| b.max_timestamp_ms).max(),
    }
}

/// The cutoff of a restart's `SeenFilesMap` after `purge()`: files of the path modified before it are not
/// read (ms since the epoch), from the newest modification time the log records (`newest_ms`); `None`
/// without one.
pub fn age_cutoff_ms(newest_ms: Option<i64>, max_file_age_ms: i64) -> Option<i64> {
    newest_ms.map(|m| m.saturating_sub(max_file_age_ms))
}

/// Compares the path each file source reads now (`Context::source_paths`) with the files its log recorded.
pub fn check_source_path(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming || ctx.source_paths.is_empty() {
        return vec![];
    }
    let kinds: Vec<SourceKind> =
        cp.latest_readable_offsets().map(|(_, o)| o.offsets.iter().map(|s| s.kind).collect()).unwrap_or_default();
    let mut out = Vec::new();
    for (&n, given) in &ctx.source_paths {
        if is_relative(given) {
            // Hadoop qualifies a relative path with the file system's working directory (the driver's current
            // folder for file:, the user's home on HDFS): this input cannot tell what it resolves to (real Spark
            // 4.3.0 resumed on `load("in")` from the folder's parent).
            out.push(not_compared(n, given, "given as a relative path, which Spark resolves against the driver's working directory (the user's home folder on HDFS)", &[
                "Give the absolute path (or URI) it resolves to on the driver (/data/in, not in).",
            ]));
            continue;
        }
        let f = match (kinds.get(n as usize), cp.source_logs.get(&n)) {
            (_, Some(log)) => {
                out.extend(replanned_not_compared(cp, n, given, log));
                compare(cp, n, given, log)
            }
            (Some(SourceKind::AutoLoader), None) => not_compared(n, given, "an Auto Loader source: its file-tracking store under sources/<n>/rocksdb/ keeps the paths it read, in a format that is not public", &[
                "Databricks' cloud_files_state('<checkpoint path>') lists the files the store recorded: compare their folder with the path the query reads now.",
                "A changed path makes every file under the new path new to the store: plan a path change as a new checkpoint (see the restart plan) and deduplicate.",
            ]),
            (Some(SourceKind::File), None) => not_compared(
                n,
                given,
                &format!("a file source whose log (sources/{n}/) is not in the input"),
                &["Zip the checkpoint with its sources/ folder: the log lists the files each batch read."],
            ),
            (Some(k), None) => not_compared(n, given, &format!("a source of kind {}, which reads no path", k.as_str()), &[]),
            (None, None) => not_compared(
                n,
                given,
                &format!("not a source of this checkpoint (its latest offsets name {} source(s), numbered from 0)", kinds.len()),
                &["Give the path of a file source by its number in the query's sources (0 for the first)."],
            ),
        };
        out.push(f);
    }
    out
}

fn not_compared(n: u32, given: &str, why: &str, fix: &[&str]) -> Finding {
    Finding::new(
        Code::FileSourcePath,
        Severity::Info,
        format!("Source #{n}: the path given ({given}) was not compared: source #{n} is {why}"),
    )
    .why("Only a file source's log (sources/<n>/) records the files it read, so only there can the path the query reads now be compared with them.")
    .fix(fix)
}

/// A path with no scheme, drive or leading `/` (`in`, `./in`, `../data/in`): Hadoop's `Path.makeQualified`
/// resolves it against the file system's working directory, which the checkpoint does not record.
pub fn is_relative(path: &str) -> bool {
    let t = path.trim();
    !t.is_empty() && !t.starts_with('/') && !t.starts_with('\\') && !t.contains(':')
}

/// Hadoop's glob test (`SparkHadoopUtil.isGlobPath`): any of `{}[]*?\\` in the path.
pub fn is_glob(path: &str) -> bool {
    path.chars().any(|c| "{}[]*?\\".contains(c))
}

/// The files a restart plans again (`getBatch` of the last batch, committed or not): the log entries of the
/// file source's log batches after batch `L-1`'s `logOffset` up to batch `L`'s; with that `from` (they are in
/// the log's files with a higher batch id). `None` when a `logOffset` is not readable.
pub(super) fn replanned<'a>(
    cp: &Checkpoint,
    n: u32,
    entries: &[&'a FileLogEntry],
) -> Option<(i64, Vec<&'a FileLogEntry>)> {
    let last = cp.last_batch_id()?;
    let to = log_offset(cp, last, n as usize)?;
    let from = if last == 0 { -1 } else { log_offset(cp, last - 1, n as usize)? };
    Some((from, entries.iter().filter(|e| e.batch_id.is_some_and(|b| b > from && b <= to)).copied().collect()))
}

fn compare(cp: &Checkpoint, n: u32, given: &str, log: &crate::model::FileLog) -> Finding {
    let r = restored(log);
    let (entries, not_kept) = (&r.entries, r.not_kept);
    let want = normalize(given);
    let paths: Vec<String> = entries.iter().map(|e| normalize(&e.path)).collect();
    let under = paths.iter().filter(|p| is_under(p, &want)).count();
    let was = common_dir(&paths);
    let evidence_file = log.read.iter().next_back().map(|(_, f)| (f.file.path.clone(), f.file.size));
    // A path that is not a glob becomes the `basePath` of the files the restart plans again
    // (`FileStreamSource.optionsForInnerDataSource`); `PartitioningAwareFileIndex.basePaths` requires every
    // one of them to start with it (a string prefix of the qualified paths).
    let outside = outside_of(cp, n, given, entries);
    let mut f = if paths.is_empty() {
        Finding::new(
            Code::FileSourcePath,
            Severity::Info,
            format!("File source #{n}: its log records no file, so the path given ({given}) could not be compared"),
        )
    } else if !outside.is_empty() {
        let last = cp.last_batch_id().unwrap_or(0);
        Finding::new(
            Code::FileSourcePath,
            Severity::Error,
            format!("File source #{n} now reads {given}, but batch {last}, which a restart plans again, read files outside it (under {was}): the restart stops on a wrong basePath"),
        )
        .fails(crate::report::RestartStage::SourceOffsets, None, "java.lang.IllegalArgumentException")
    } else if under == paths.len() {
        Finding::new(
            Code::FileSourcePath,
            Severity::Info,
            format!(
                "File source #{n} reads {given}: all {} its log records are under it",
                counted(paths.len(), not_kept)
            ),
        )
    } else if under > 0 {
        Finding::new(
            Code::FileSourcePath,
            Severity::Info,
            format!("File source #{n} reads {given}: {under} of the {} its log records are under it, the others are not read again", counted(paths.len(), not_kept)),
        )
    } else {
        Finding::new(
            Code::FileSourcePath,
            Severity::Warning,
            format!(
                "File source #{n} now reads {given}, but none of the {} its log records is there (they are under {was}): a restart reads the new path's files as new",
                counted(paths.len(), not_kept)
            ),
        )
    };
    if let Some((path, size)) = evidence_file {
        let names: Vec<&str> = paths.iter().take(3).map(|s| s.as_str()).collect();
        let more = if paths.len() > 3 { format!(" and {} more", paths.len() - 3) } else { String::new() };
        f = f.evidence_sized(
            path,
            size,
            format!(
                "{} recorded file(s) under {was}, {under} of them under the path given: {}{more}{}",
                paths.len(),
                names.join(", "),
                if not_kept > 0 {
                    format!("; the log's files hold {not_kept} more, read and well formed but past this inspector's memory budget for entries: not compared")
                } else {
                    String::new()
                }
            ),
            None,
        );
    }
    let cutoff = age_cutoff_ms(r.newest_ms, DEFAULT_MAX_FILE_AGE_MS);
    let age = match cutoff {
        Some(c) => format!(
            "With the default maxFileAge (7 days) the cutoff is {} (the newest recorded file's modification time, {}, minus 7 days): files of the new path modified before it are skipped silently, all newer ones are read in the first batch after the restart, including copies of files already read (their rows reach the sink again). A query that sets maxFileAge moves the cutoff by as much; with latestFirst=true and maxFilesPerTrigger set there is no age cutoff.",
            utc(c),
            utc(c + DEFAULT_MAX_FILE_AGE_MS)
        ),
        None => "The log records no modification time, so the age cutoff (the newest recorded file minus maxFileAge) is not known: every file of the new path may be read.".into(),
    };
    if !outside.is_empty() {
        let last = cp.last_batch_id().unwrap_or(0);
        f = f
            .evidence(
                format!("offsets/{last}"),
                format!(
                    "batch {last} read {} file(s) that do not start with the path given: {}",
                    outside.len(),
                    outside.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
                ),
                None,
            )
            .why(format!(
                "On restart Spark plans the last batch again (MicroBatchExecution.populateStartOffsets calls getBatch for batch {last}, committed or not), with the files its log recorded. A file source whose path is not a glob passes that path as basePath, and Spark requires every file to lie under it: the restart stops with \"IllegalArgumentException: Wrong basePath <path> for the root path: <file>\". Spark does not keep the path in the checkpoint and compares it nowhere else. A glob path sets no basePath: then the restart goes on and reads the new path's files as new. {age}"
            ))
            .fix(&[
                "If the path changed by mistake, restart with the old path.",
                "To move on to the new path with this checkpoint, give the path as a glob that matches only it (for example with the last character of its folder in brackets: /data/in-[b] for /data/in-b): no basePath is set, the files already read stay recorded, and the new path's files newer than the cutoff are read once.",
            ]);
    } else if under == 0 && !paths.is_empty() {
        f = f
            .why(format!(
                "Spark does not keep a file source's path in the checkpoint and does not compare it on restart: the log's entries only mark files as seen by their full path. {age} With fileNameOnly=true, files named like a recorded one are skipped whatever their folder."
            ))
            .fix(&[
                "If the path changed by mistake, restart with the old path.",
                "If the same files moved to the new path and must not be read again, start a NEW checkpoint for the new path once the old path's last batch is committed, and bound what its first batch reads (see the restart plan).",
                "If the new path only holds new files, the restart reads them (those older than the cutoff excepted): set maxFileAge to include them if they must be read.",
            ]);
    } else if under > 0 && under < paths.len() {
        f = f.why("Spark does not compare the path on restart: recorded files outside the path are not listed again, so nothing is re-read; files under the path that the log does not record are read as new.");
    }
    f
}

/// The files (normalized) a restart plans again that do not lie under the path `given` (not a glob: a glob
/// sets no `basePath`), among the `entries` kept.
fn outside_of(cp: &Checkpoint, n: u32, given: &str, entries: &[&FileLogEntry]) -> Vec<String> {
    let want = normalize(given);
    let planned = if is_glob(given) { None } else { replanned(cp, n, entries) };
    planned
        .map(|(_, files)| {
            files
                .iter()
                .map(|e| normalize(&e.path))
                .filter(|p| !p.starts_with(&want) && !path_part(p).starts_with(&want))
                .collect()
        })
        .unwrap_or_default()
}

/// "`n` file(s)", or, when `not_kept` more were not kept, "`n` compared of the `n + not_kept` file(s)".
fn counted(n: usize, not_kept: u64) -> String {
    if not_kept == 0 {
        format!("{n} file(s)")
    } else {
        format!("{n} compared of the {} file(s)", (n as u64).saturating_add(not_kept))
    }
}

/// The files a restart plans again were not all compared with the path given: some are among the entries of
/// the log's files past the inspector's memory budget (the files after batch `L-1`'s `logOffset`), and none of
/// those compared lies outside the path. A limit of this inspector: the verdict is unknown
/// ([`Code::FileNotVerified`], a warning), with the files named.
fn replanned_not_compared(cp: &Checkpoint, n: u32, given: &str, log: &crate::model::FileLog) -> Option<Finding> {
    if is_glob(given) {
        return None;
    }
    let r = restored(log);
    let (from, _) = replanned(cp, n, &r.entries)?;
    let outside = !outside_of(cp, n, given, &r.entries).is_empty();
    let partial: Vec<&crate::model::LogFile<crate::log::file_log::FileLogBatch>> =
        r.partial.iter().filter(|id| **id > from).filter_map(|id| log.read.get(id)).collect();
    let first = partial.first().filter(|_| !outside)?;
    let last = cp.last_batch_id().unwrap_or(0);
    let mut f = Finding::new(
        Code::FileNotVerified,
        Severity::Warning,
        format!("{} not verified: the files batch {last} plans again were not all compared with the path given; the restart verdict is unknown", first.file.path),
    )
    .why(format!("On restart Spark plans batch {last} again with the files its log recorded, and stops on a wrong basePath when one of them is not under the path given. Some of those entries are past the memory this inspector keeps for file log entries (they were read and are well formed, but not kept), so whether all of them lie under {given} is not known."))
    .fix(&["Run the inspector again with more memory for file log entries (the notes with the verdict say how), or check by hand that every file the log's latest batches record lies under the path given (e.g. `unzip -p <zip> '<checkpoint>/sources/<n>/*' | grep -v <path>`)."]);
    for lf in partial.iter().take(10) {
        let b = lf.file.content.as_ref().ok();
        f = f.evidence_sized(
            &lf.file.path,
            lf.file.size,
            format!(
                "{} entries, {} of them not kept (past this inspector's memory budget for file log entries)",
                b.map_or(0, |b| b.entry_count()),
                b.map_or(0, |b| b.not_kept)
            ),
            None,
        );
    }
    Some(f)
}

/// The path part of a normalized path (without `scheme://authority`).
fn path_part(p: &str) -> &str {
    authority(p).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalize_like_the_recorded_uris() {
        assert_eq!(normalize("file:///data/in%20a/part-0.json"), "/data/in a/part-0.json");
        assert_eq!(normalize("file:/data/in/"), "/data/in");
        assert_eq!(normalize("/data/in/"), "/data/in");
        assert_eq!(normalize("s3a://bucket/in/"), "s3a://bucket/in");
        assert_eq!(normalize("/"), "/");
        // Hadoop's Path collapses `//` (and `///`) in the path, never in the authority.
        assert_eq!(normalize("/data//in///part-0.json"), "/data/in/part-0.json");
        assert_eq!(normalize("s3a://bucket//in/"), "s3a://bucket/in");
        assert_eq!(normalize("file:///data//in"), "/data/in");
        // A leading `//` is an authority to Hadoop (`//host/x` stays so).
        assert_eq!(normalize("//host//x"), "//host/x");
        assert_eq!(normalize("bad%zz%2"), "bad%zz%2");
    }

    #[test]
    fn under_a_folder_or_a_glob() {
        let f = normalize("file:///data/in/2026/11/part-0.json");
        assert!(is_under(&f, "/data/in"));
        assert!(is_under(&f, "/data/in/2026"));
        assert!(!is_under(&f, "/data/input"));
        assert!(!is_under(&f, "/data/in/2025"));
        assert!(is_under(&f, "/data/*/202?/1[0-2]"));
        assert!(is_under(&f, "/data/{out,in}"));
        assert!(!is_under(&f, "/data/in/[^2]*"));
        assert!(is_under(&f, "/data/in/[!3]*"));
        let s3 = normalize("s3a://bucket/in/part-0.json");
        assert!(is_under(&s3, "/in"), "a path without a scheme compares the path part");
        assert!(is_under(&s3, "s3a://bucket/in"));
        assert!(!is_under(&s3, "s3a://other/in"));
        assert!(glob_segment("a*b*c", "aXXbYYc") && !glob_segment("a*b*c", "aXXbYY"));
        // Twenty {x,y} groups would be a million patterns: compared as `*` each, at once.
        let many = "{x,y}".repeat(20);
        assert!(glob_segment(&many, "xyxyxyxyxyxyxyxyxyxy"));
        assert!(glob_segment(&format!("a{many}"), "a"), "wider, never narrower");
        assert!(!glob_segment(&format!("a{many}"), "b"));
        assert!(glob_segment(&"{x}".repeat(100_000), "x"), "a hundred thousand groups: no deep recursion");
        assert!(!glob_segment("[a-", "[a-"), "an unclosed class does not match");
    }

    /// The real restart of `tools/spark-gen/source_path.py`: batch 0 read `in-a/`, the restart read `in-b/`.
    const REAL: &str = "source-path-changed-4.1.4";

    /// `in-a/` of the recorded run (from the zip's own log) and its sibling `in-b/`, as the query named them.
    fn real_paths() -> (String, String) {
        let files = crate::testutil::generated_files(REAL);
        let log = &files.iter().find(|(p, _)| p == "chk/sources/0/0").expect("sources/0/0").1;
        let first = crate::log::file_log::parse(log).expect("log parses").entries[0].path.clone();
        let file = normalize(&first);
        let a = file.rsplit_once('/').expect("a folder").0.to_string();
        let b = format!("{}/in-b", a.rsplit_once('/').expect("its parent").0);
        (a, b)
    }

    fn diagnose_real(path: &str) -> Vec<crate::report::Finding> {
        let mut z = crate::testutil::open_generated(REAL);
        let mut ctx = Context { spark_version: Some("4.1.4".parse().expect("v")), ..Default::default() };
        ctx.source_paths.insert(0, path.to_string());
        let r = crate::diagnose(&mut z, &ctx);
        r.checkpoints[0].findings.iter().filter(|f| f.code == Code::FileSourcePath).cloned().collect()
    }

    /// A relative path resolves against the driver's working directory, which the checkpoint does not hold: not
    /// judged (a newcomer's real 4.3.0 restart with `load("in")` resumed where the tool said Wrong basePath).
    #[test]
    fn a_relative_path_is_not_judged() {
        for p in ["in-b", "./in-b", "../x/in-b"] {
            let f = diagnose_real(p);
            assert_eq!(f.len(), 1, "{p}");
            assert_eq!(f[0].severity, Severity::Info, "{p}: {}", f[0].title);
            assert!(f[0].title.contains("relative path") && f[0].restart_failure.is_none(), "{}", f[0].title);
        }
        for p in ["/abs/in", "s3a://b/in", "file:/x", "C:\\data"] {
            assert!(!is_relative(p), "{p}");
        }
    }

    /// PySpark's one line names only STREAM_FAILED and the message: a pasted "Wrong basePath" is the path
    /// finding's when one was given, and otherwise an unexplained failure that says what to give; a message the
    /// files do not explain ("batch 2 doesn't exist") is still reported, never dropped (a newcomer's real 4.3.0
    /// errors left the verdict at "resumes").
    #[test]
    fn a_pasted_one_line_stream_failed_error_is_not_dropped() {
        let (_, new) = real_paths();
        let line = format!("pyspark.errors.exceptions.captured.StreamingQueryException: [STREAM_FAILED] Query [id = a, runId = b] terminated with exception: Wrong basePath {new} for the root path: file:/x/f.json SQLSTATE: XXKST");
        let diagnose = |path: Option<&str>, text: &str| {
            let mut z = crate::testutil::open_generated(REAL);
            let mut ctx = Context { spark_version: Some("4.1.4".parse().expect("v")), ..Default::default() };
            if let Some(p) = path {
                ctx.source_paths.insert(0, p.to_string());
            }
            ctx.error_text = Some(text.to_string());
            crate::diagnose(&mut z, &ctx).checkpoints.remove(0)
        };
        let r = diagnose(Some(&new), &line);
        let f = r.findings.iter().find(|f| f.code == Code::FileSourcePath).expect("the path finding");
        assert!(f.explains_error_text && f.restart_failure.is_some());
        assert!(r.findings.iter().all(|f| f.code != Code::ErrorNotExplainedByFiles));
        let r = diagnose(None, &line);
        let f = r.findings.iter().find(|f| f.code == Code::ErrorNotExplainedByFiles).expect("not dropped");
        assert!(f.title.contains("Wrong basePath") && f.fix.iter().any(|s| s.contains("give that path")), "{f:?}");
        assert_eq!(r.restart.outcome, crate::report::RestartOutcome::Fails);
        let r = diagnose(None, "pyspark.errors.exceptions.captured.StreamingQueryException: [STREAM_FAILED] Query [id = a, runId = b] terminated with exception: batch 2 doesn't exist SQLSTATE: XXKST");
        let f = r.findings.iter().find(|f| f.code == Code::ErrorNotExplainedByFiles).expect("not dropped");
        assert!(f.title.contains("batch 2 doesn't exist"), "{}", f.title);
    }

    #[test]
    fn a_changed_plain_path_fails_the_restart_as_spark_did() {
        let record = crate::testutil::generated_record(REAL);
        assert_eq!(record["restart_outcome"]["ok"], false);
        assert_eq!(record["restart_outcome"]["exception"], "java.lang.IllegalArgumentException");
        assert!(record["restart_outcome"]["message_head"].as_str().expect("message").starts_with("Wrong basePath"));
        let (old, new) = real_paths();
        let f = diagnose_real(&new);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error, "{}", f[0].title);
        assert!(f[0].title.contains("batch 0") && f[0].title.contains(&old), "{}", f[0].title);
        let fail = f[0].restart_failure.as_ref().expect("fails");
        assert_eq!(fail.exception, "java.lang.IllegalArgumentException");
        assert_eq!(fail.error_class, None);
    }

    #[test]
    fn a_changed_glob_path_predicts_which_files_spark_read_on_restart() {
        let record = crate::testutil::generated_record("source-path-changed-glob-4.1.4");
        assert_eq!(record["restart_outcome"]["ok"], true, "Spark restarted on the glob");
        let (old, new) = real_paths();
        let glob = format!("{}/in-[b]", new.rsplit_once('/').expect("parent").0);
        let f = diagnose_real(&glob);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning, "{}", f[0].title);
        assert!(f[0].title.contains("none of the 3 file(s)") && f[0].title.contains(&old), "{}", f[0].title);
        assert!(f[0].restart_failure.is_none());
        // The cutoff the finding states, from the checkpoint alone, against what Spark read of in-b/.
        let files = crate::testutil::generated_files(REAL);
        let log = &files.iter().find(|(p, _)| p == "chk/sources/0/0").expect("sources/0/0").1;
        let newest = crate::log::file_log::parse(log).expect("log parses").max_timestamp_ms;
        let cutoff = age_cutoff_ms(newest, DEFAULT_MAX_FILE_AGE_MS).expect("timestamps");
        assert!(f[0].why.contains(&utc(cutoff)), "the cutoff is stated: {}", f[0].why);
        let read: Vec<&str> = record["restart_outcome"]["files_read_on_restart"]
            .as_array()
            .expect("read")
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        let given = record["mutation"]["new_path_files"].as_array().expect("files");
        assert_eq!(given.len(), 4);
        for g in given {
            let (name, modified) = (g["name"].as_str().expect("name"), g["modified_ms"].as_i64().expect("ms"));
            assert_eq!(
                modified >= cutoff,
                read.contains(&name),
                "{name} (modified {modified}, cutoff {cutoff}): read {read:?}"
            );
        }
        assert!(read.contains(&"part-000.json"), "a copy of a file already read is read again");
        assert!(!read.contains(&"old-10d.json"), "a file older than the cutoff is skipped");
    }

    #[test]
    fn the_same_path_or_a_glob_over_it_holds_every_recorded_file() {
        let (old, _) = real_paths();
        let doubled = {
            let (parent, name) = old.rsplit_once('/').expect("parent");
            format!("{parent}//{name}")
        };
        for given in [
            old.clone(),
            format!("file://{old}/"),
            format!("{}/in-*", old.rsplit_once('/').expect("parent").0),
            // Hadoop's Path collapses `//`: the same folder, no wrong basePath.
            doubled,
        ] {
            let f = diagnose_real(&given);
            assert_eq!(f.len(), 1);
            assert_eq!(f[0].severity, Severity::Info, "{given}: {}", f[0].title);
            assert!(f[0].title.contains("all 3 file(s)"), "{given}: {}", f[0].title);
        }
    }

    #[test]
    fn a_source_without_a_log_is_not_compared() {
        let f = diagnose_real_at(7, "/x");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Info);
        assert!(
            f[0].title.contains("was not compared") && f[0].title.contains("not a source of this checkpoint"),
            "{}",
            f[0].title
        );
    }

    #[test]
    fn a_file_source_whose_log_is_not_in_the_input_is_not_compared() {
        let files: Vec<(String, Vec<u8>)> = crate::testutil::generated_files(REAL)
            .into_iter()
            .filter(|(p, _)| !p.starts_with("chk/sources/"))
            .collect();
        let mut a = crate::archive::MemArchive::new("t", files, crate::archive::Limits::default()).expect("archive");
        let mut ctx = Context::default();
        ctx.source_paths.insert(0, real_paths().1);
        let r = crate::diagnose(&mut a, &ctx);
        let f: Vec<_> =
            r.checkpoints.iter().flat_map(|c| &c.findings).filter(|f| f.code == Code::FileSourcePath).collect();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Info);
        assert!(f[0].title.contains("a file source whose log (sources/0/) is not in the input"), "{}", f[0].title);
    }

    fn diagnose_real_at(n: u32, path: &str) -> Vec<crate::report::Finding> {
        let mut z = crate::testutil::open_generated(REAL);
        let mut ctx = Context::default();
        ctx.source_paths.insert(n, path.to_string());
        crate::diagnose(&mut z, &ctx).checkpoints[0]
            .findings
            .iter()
            .filter(|f| f.code == Code::FileSourcePath)
            .cloned()
            .collect()
    }

    #[test]
    fn the_common_folder_of_recorded_files() {
        let p = |v: &[&str]| v.iter().map(|s| normalize(s)).collect::<Vec<_>>();
        assert_eq!(common_dir(&p(&["file:///w/in/a.json", "file:///w/in/sub/b.json"])), "/w/in");
        assert_eq!(common_dir(&p(&["s3a://b/x/a", "s3a://b/y/a"])), "s3a://b/");
        assert_eq!(common_dir(&p(&["/a", "/b"])), "/");
    }

    /// Hadoop's `Path` normalizes `.` and `..` (real Spark 3.5.9 and 4.1.4 resumed reading the same folder spelled
    /// `<case>/../<case>/in`): the same folder is no changed path.
    #[test]
    fn dot_segments_are_the_folder_they_name() {
        assert_eq!(normalize("/tmp/c/../c/in"), "/tmp/c/in");
        assert_eq!(normalize("file:///tmp/c/./in/"), "/tmp/c/in");
        assert_eq!(normalize("s3a://b/x/../in"), "s3a://b/in");
        assert_eq!(normalize("/../in"), "/../in");
        assert_eq!(normalize("a/../../in"), "../in");
        assert!(is_under(&normalize("file:/tmp/c/in/part-0.json"), &normalize("/tmp/c/../c/in")));
    }
}
