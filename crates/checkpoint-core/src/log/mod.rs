//! The `HDFSMetadataLog` family (FORMATS.md §2): batch-file naming, the version line and the common error
//! type, plus one module per log: [`metadata`], [`offsets`], [`commits`], [`file_log`] (file source and
//! file sink logs), [`operator_metadata`] and [`source_meta`] (Kafka initial offsets, Auto Loader schemas).
//!
//! Every reader takes the file's bytes and returns typed data or a [`LogError`] carrying the byte offset
//! inside the file and a reason; none of them panics on any input.

pub mod commits;
pub mod file_log;
pub mod metadata;
pub mod offsets;
pub mod operator_metadata;
pub mod source_meta;

use std::fmt;

/// Why a log file could not be read, in the terms Spark uses. Every variant has the byte offset inside the
/// file where the problem starts (see [`LogError::offset`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogError {
    /// The file has no first line at all (0 bytes). Spark: `IllegalStateException("Incomplete log file")`.
    Empty,
    /// The version line is present but a required second line is not (offset log:
    /// "Incomplete log file in the offset commit log"). `offset` = file length.
    MissingLine {
        /// Byte offset where the missing line should start (the file's length).
        offset: u64,
        /// Spark's message.
        message: String,
    },
    /// The version line is not `v<positive integer>` (Spark: "Log file was malformed: failed to read correct
    /// log version from `<text>`."; 4.0+ error class `MALFORMED_LOG_FILE`).
    MalformedVersion {
        /// The first line as read (at most 80 characters).
        text: String,
    },
    /// A JSON line does not parse. `eof` = the text ended inside the JSON value (Jackson's
    /// `JsonEOFException`); `data` = syntactically valid JSON of the wrong shape (json4s `MappingException`).
    BadJson {
        /// Byte offset inside the file where parsing failed.
        offset: u64,
        /// 1-based line number in the file.
        line: usize,
        /// The parser's message.
        message: String,
        /// The JSON text ended early (truncation).
        eof: bool,
        /// The JSON is well formed but has the wrong shape or types.
        data: bool,
    },
    /// The bytes are not UTF-8 at `offset`.
    NotUtf8 {
        /// Byte offset of the first invalid byte.
        offset: u64,
    },
    /// The archive could not deliver the file (over a limit, corrupt zip entry).
    Unreadable {
        /// The archive's reason.
        reason: String,
        /// True when the zip entry itself is damaged (`ArchiveError::Corrupt`: it does not inflate, or its
        /// stored sizes/CRC lie): the zip is broken, which says nothing about the checkpoint file.
        archive_damaged: bool,
    },
    /// Not verified: a limit of this inspector (entry size, compression ratio, inflate budget) or a zip it
    /// cannot inflate (a compression method other than deflate, overlapping entries) kept it from reading
    /// the file. Says nothing about the file itself.
    NotVerified {
        /// Which limit, with the file's value and the limit.
        reason: String,
    },
    /// Not read: the total budget for log bytes of one checkpoint ([`MAX_TOTAL_LOG_BYTES`]) was spent on
    /// newer batches. Listed only; no finding about its content.
    NotRead {
        /// The budget, in bytes.
        budget: u64,
    },
    /// Not read yet: an older batch's file that a progressive diagnosis reads after the verdict
    /// (`diagnose_progressive`); only the verdict's report holds it. No finding about its content.
    Deferred,
}

impl LogError {
    /// Byte offset inside the file where the problem is (0 for an empty or unreadable file).
    pub fn offset(&self) -> u64 {
        match self {
            LogError::Empty
            | LogError::MalformedVersion { .. }
            | LogError::Unreadable { .. }
            | LogError::NotVerified { .. }
            | LogError::NotRead { .. }
            | LogError::Deferred => 0,
            LogError::MissingLine { offset, .. } | LogError::BadJson { offset, .. } | LogError::NotUtf8 { offset } => {
                *offset
            }
        }
    }

    /// The Java exception class Spark throws for this damage when it reads the file (outermost below the
    /// `StreamingQueryException`), e.g. `java.lang.IllegalStateException` or Jackson's `JsonEOFException`.
    pub fn spark_exception(&self) -> &'static str {
        match self {
            LogError::BadJson { eof: true, .. } => "com.fasterxml.jackson.core.io.JsonEOFException",
            LogError::BadJson { data: true, .. } => "org.json4s.MappingException",
            LogError::BadJson { .. } => "com.fasterxml.jackson.core.JsonParseException",
            LogError::NotUtf8 { .. } => "java.nio.charset.MalformedInputException",
            LogError::Unreadable { .. } => "java.io.IOException",
            _ => "java.lang.IllegalStateException",
        }
    }
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogError::Empty => write!(f, "Incomplete log file (the file is empty)"),
            LogError::MissingLine { message, .. } => write!(f, "{message}"),
            LogError::MalformedVersion { text } => {
                write!(f, "Log file was malformed: failed to read correct log version from {text}.")
            }
            LogError::BadJson { line, message, .. } => {
                write!(f, "line {line}: invalid JSON: {message}")
            }
            LogError::NotUtf8 { offset } => write!(f, "not UTF-8 text at byte {offset}"),
            LogError::Unreadable { reason, .. } => write!(f, "cannot read the file: {reason}"),
            LogError::NotVerified { reason } => write!(f, "not verified: {reason}"),
            LogError::Deferred => write!(f, "not read yet: older batches are read after the verdict"),
            LogError::NotRead { budget } => {
                write!(f, "not read: the budget of {budget} bytes for log files was spent on newer batches")
            }
        }
    }
}

/// The largest batch id / state version this inspector accepts (2^60); Spark's ids count batches from 0, so
/// anything larger or negative is not a batch file written by Spark (and would overflow arithmetic).
pub const MAX_BATCH_ID: i64 = 1 << 60;

/// Default budget for the offsets and commits files read per checkpoint, newest batches first (the read stage's
/// `ReadOptions::log_budget_bytes`); files beyond it are [`LogError::NotRead`] (still listed: every batch id stays
/// in the report). What a restart reads (the latest two offsets files, the latest commit) is read whatever the
/// budget. 8 MiB is a few thousand batches of a typical query (offsets files of 1–3 KB): the recent history the
/// checks and the timeline use, while the overview of a checkpoint with 20,000 batches does not wait for all of
/// them (and the page's worker does not hold them).
pub const MAX_TOTAL_LOG_BYTES: u64 = 8 * 1024 * 1024;

/// Parses a log file name as Spark's `HDFSMetadataLog` does: the whole name must be a decimal integer
/// (`pathToBatchId`), here within `0..=MAX_BATCH_ID`. Compactible logs also accept `<id>.compact` (then
/// `compact` = true). Returns `None` for everything else (`.0.crc`, `0.crc`, temp files, `_metadata`).
pub fn parse_batch_file_name(name: &str, allow_compact: bool) -> Option<(i64, bool)> {
    let (num, compact) = match name.strip_suffix(".compact") {
        Some(n) if allow_compact => (n, true),
        _ => (name, false),
    };
    if num.is_empty() || num.starts_with('+') {
        return None;
    }
    num.parse::<i64>().ok().filter(|id| (0..=MAX_BATCH_ID).contains(id)).map(|id| (id, compact))
}

/// Validates a log version line like Spark's `MetadataVersionUtil.validateVersion` without an upper
/// bound: the text must start with `v` followed by a positive `Int`. Returns the version number; the
/// caller compares it with what each Spark release supports ([`max_supported`]).
pub fn parse_version_line(text: &str) -> Result<u32, LogError> {
    let malformed = || LogError::MalformedVersion { text: text.chars().take(80).collect() };
    let rest = text.strip_prefix('v').ok_or_else(malformed)?;
    // Java's Integer.parseInt accepts a leading '+' or '-' sign and ASCII digits only.
    let v: i64 = if rest.is_empty() || rest.len() > 11 {
        return Err(malformed());
    } else {
        rest.parse::<i64>().map_err(|_| malformed())?
    };
    if v <= 0 || v > i32::MAX as i64 {
        return Err(malformed());
    }
    Ok(v as u32)
}

/// Which log a file belongs to, for version support questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    /// `offsets/` (OffsetSeqLog).
    Offsets,
    /// `commits/` (CommitLog).
    Commits,
    /// `sources/<n>/` (FileStreamSourceLog).
    FileSource,
    /// `_spark_metadata/` (FileStreamSinkLog).
    FileSink,
    /// `state/<op>/_metadata/...` (operator metadata).
    OperatorMetadata,
}

/// The highest log version a Spark release reads (FORMATS.md §2 table): offsets v2 from 4.3 on (OffsetMap),
/// commits v2 from 4.0 on (state checkpoint format v2), everything else v1; operator metadata v2 from 4.0.
pub fn max_supported(kind: LogKind, spark: crate::SparkVersion) -> u32 {
    match kind {
        LogKind::Offsets if spark.at_least(4, 3) => 2,
        LogKind::Commits | LogKind::OperatorMetadata if spark.at_least(4, 0) => 2,
        _ => 1,
    }
}

/// Splits text into lines the way Scala's `Source.getLines()` does (`\n`, `\r\n` or `\r` separators, no
/// empty last line after a trailing separator): each line with the byte offset where it starts. Lazy, so a
/// reader that needs the first lines of a file with millions of them holds none of the others.
pub fn lines_with_offsets(text: &str) -> Lines<'_> {
    Lines { text, pos: 0 }
}

/// The iterator of [`lines_with_offsets`].
#[derive(Debug, Clone)]
pub struct Lines<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (u64, &'a str);

    fn next(&mut self) -> Option<(u64, &'a str)> {
        let bytes = self.text.as_bytes();
        let start = self.pos;
        if start >= bytes.len() {
            return None;
        }
        let Some(end) = bytes[start..].iter().position(|b| *b == b'\n' || *b == b'\r').map(|i| start + i) else {
            self.pos = bytes.len();
            return Some((start as u64, &self.text[start..]));
        };
        let crlf = bytes[end] == b'\r' && bytes.get(end + 1) == Some(&b'\n');
        self.pos = end + if crlf { 2 } else { 1 };
        Some((start as u64, &self.text[start..end]))
    }
}

/// Decodes bytes as UTF-8 or reports the offset of the first bad byte.
pub fn utf8(bytes: &[u8]) -> Result<&str, LogError> {
    std::str::from_utf8(bytes).map_err(|e| LogError::NotUtf8 { offset: e.valid_up_to() as u64 })
}

/// Converts a serde_json error on `line_text` (which starts at `line_offset` in the file) into a
/// [`LogError::BadJson`] with the byte offset of the failure.
pub fn json_error(e: &serde_json::Error, line_text: &str, line_offset: u64, line_no: usize) -> LogError {
    use serde_json::error::Category;
    // serde_json reports line/column inside the parsed text (1-based); the text is a single line here.
    let col = e.column().saturating_sub(1);
    let within = line_text.char_indices().nth(col).map(|(i, _)| i).unwrap_or(line_text.len());
    // serde_json ends its message with "at line 1 column N" of the single parsed line, which contradicts the
    // file's line number shown next to it; say the column of the file's line instead.
    let text = e.to_string();
    let reason = match text.rfind(" at line ") {
        Some(i) if e.line() > 0 => format!("{} at column {}", &text[..i], e.column()),
        _ => text,
    };
    LogError::BadJson {
        offset: line_offset + within as u64,
        line: line_no,
        message: reason,
        eof: e.classify() == Category::Eof,
        data: e.classify() == Category::Data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_line_like_spark() {
        assert_eq!(parse_version_line("v1"), Ok(1));
        assert_eq!(parse_version_line("v2"), Ok(2));
        assert_eq!(parse_version_line("v99"), Ok(99));
        for bad in ["", "v", "v0", "v-1", "1", "V1", "xx", "v1.0", "v 1", "v99999999999"] {
            assert!(matches!(parse_version_line(bad), Err(LogError::MalformedVersion { .. })), "{bad}");
        }
    }

    #[test]
    fn batch_names() {
        assert_eq!(parse_batch_file_name("12", false), Some((12, false)));
        assert_eq!(parse_batch_file_name("9.compact", true), Some((9, true)));
        assert_eq!(parse_batch_file_name("9.compact", false), None);
        assert_eq!(parse_batch_file_name(".9.crc", true), None);
        assert_eq!(parse_batch_file_name("9.crc", true), None);
        assert_eq!(parse_batch_file_name("", true), None);
    }

    #[test]
    fn lines_like_scala() {
        let l: Vec<_> = lines_with_offsets("v1\n{}\r\nx").collect();
        assert_eq!(l, vec![(0, "v1"), (3, "{}"), (7, "x")]);
        assert_eq!(lines_with_offsets("v1\n").collect::<Vec<_>>(), vec![(0, "v1")]);
        assert_eq!(lines_with_offsets("\r\r\n\n").collect::<Vec<_>>(), vec![(0, ""), (1, ""), (3, "")]);
        assert_eq!(lines_with_offsets("a\r").collect::<Vec<_>>(), vec![(0, "a")]);
        assert!(lines_with_offsets("").next().is_none());
    }
}
