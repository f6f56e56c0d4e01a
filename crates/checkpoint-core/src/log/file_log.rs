//! Compactible file logs (FORMATS.md §6): the file source log `sources/<n>/` (`FileStreamSourceLog`) and a
//! file sink's `_spark_metadata/` (`FileStreamSinkLog`). Each batch file is a version line and one JSON
//! object per line; `<id>.compact` files hold every live entry up to `<id>`.
//!
//! Mirrors `CompactibleFileStreamLog.deserialize` (no first line → "Incomplete log file") and its
//! compaction arithmetic (`isCompactionBatch`, interval inference from the `.compact` files on disk).

use super::{json_error, parse_version_line, LogError};

mod fields;

/// One entry of a file source log (`FileEntry`) or file sink log (`SinkFileStatus`), as far as we use it.
#[derive(Debug, Clone, PartialEq)]
pub struct FileLogEntry {
    /// The URI-encoded path of the data file.
    pub path: String,
    /// Source log: the file's modification time (`timestamp`, ms); sink log: `modificationTime`.
    pub timestamp_ms: Option<i64>,
    /// Source log: the batch that first processed the file.
    pub batch_id: Option<i64>,
    /// Sink log: `size` in bytes.
    pub size: Option<i64>,
    /// Sink log: `action` (`add` | `delete`).
    pub action: Option<String>,
}

/// A parsed batch file of a compactible log.
#[derive(Debug, Clone, PartialEq)]
pub struct FileLogBatch {
    /// The version line's number.
    pub version: u32,
    /// The entries, in file order: all of them, or the first ones when [`FileLogBatch::not_kept`] is not 0.
    pub entries: Vec<FileLogEntry>,
    /// Entries read and found well formed but not kept, past the memory budget the parser was given
    /// ([`Parser::new`]): the file is verified, but a comparison that needs every entry cannot be made.
    pub not_kept: u64,
    /// Of every entry, kept or not: the newest `timestamp` (source log) or `modificationTime` (sink log), ms.
    pub max_timestamp_ms: Option<i64>,
    /// Of every entry, kept or not: a digest of the paths in file order (equal lists, equal digests), so that
    /// two copies of a batch compare without keeping their entries.
    pub paths_digest: u64,
}

impl FileLogBatch {
    /// Every entry is in [`FileLogBatch::entries`].
    pub fn complete(&self) -> bool {
        self.not_kept == 0
    }

    /// Entries in the file, kept or not.
    pub fn entry_count(&self) -> u64 {
        (self.entries.len() as u64).saturating_add(self.not_kept)
    }
}

/// Parses one batch file (plain or `.compact`).
pub fn parse(bytes: &[u8]) -> Result<FileLogBatch, LogError> {
    let mut p = Parser::new(u64::MAX, usize::MAX);
    p.push(bytes);
    p.finish()
}

/// Bytes a kept entry costs: its struct and its strings.
pub fn entry_cost(e: &FileLogEntry) -> u64 {
    (std::mem::size_of::<FileLogEntry>() + e.path.len() + e.action.as_ref().map_or(0, String::len)) as u64
}

/// A batch file parsed as its bytes come: [`Parser::push`] the pieces in order, then [`Parser::finish`]. The
/// result is [`parse`]'s of the whole (the same entries, errors and offsets; invalid UTF-8 wins over a bad line
/// before it, as the whole file is decoded first there), while memory holds one line and the entries kept. A
/// line over the parser's `max_line` is skipped unread (its bytes are not checked for UTF-8 either): the file
/// is then [`LogError::NotVerified`] unless an error came before. Mirrors
/// `CompactibleFileStreamLog.deserialize`, which reads the lines of a stream one by one.
#[derive(Debug)]
pub struct Parser {
    /// The bytes of the current line that came in earlier pieces.
    pending: Vec<u8>,
    /// Byte offset in the file of the current line's start.
    line_at: u64,
    /// Bytes pushed so far.
    pushed: u64,
    /// The last piece ended with `\r`: a `\n` starting the next belongs to that line end.
    after_cr: bool,
    /// The current line is over `max_line` bytes: skipped to its end.
    overlong: bool,
    /// Lines ended so far.
    lines: usize,
    version: Option<u32>,
    entries: Vec<FileLogEntry>,
    not_kept: u64,
    keep_left: u64,
    max_line: usize,
    max_timestamp_ms: Option<i64>,
    digest: std::collections::hash_map::DefaultHasher,
    /// The first version or entry error.
    error: Option<LogError>,
    /// The offset of the first byte that is not UTF-8.
    not_utf8: Option<u64>,
}

impl Parser {
    /// A parser that keeps entries while their [`entry_cost`] fits in `keep_bytes` (later ones are checked and
    /// counted in [`FileLogBatch::not_kept`]), and reads lines of at most `max_line` bytes (a longer one makes
    /// the file [`LogError::NotVerified`]: a limit of this inspector).
    pub fn new(keep_bytes: u64, max_line: usize) -> Self {
        Parser {
            pending: Vec::new(),
            line_at: 0,
            pushed: 0,
            after_cr: false,
            overlong: false,
            lines: 0,
            version: None,
            entries: Vec::new(),
            not_kept: 0,
            keep_left: keep_bytes,
            max_line,
            max_timestamp_ms: None,
            digest: std::collections::hash_map::DefaultHasher::new(),
            error: None,
            not_utf8: None,
        }
    }

    /// The next piece of the file.
    pub fn push(&mut self, piece: &[u8]) {
        if piece.is_empty() {
            // Nothing to add; a `\r` that ended the last piece still waits for a `\n`.
            return;
        }
        let base = self.pushed;
        self.pushed += piece.len() as u64;
        let mut i = 0;
        if std::mem::take(&mut self.after_cr) && piece.first() == Some(&b'\n') {
            i = 1;
            self.line_at = base + 1;
        }
        while i < piece.len() {
            let Some(k) = piece[i..].iter().position(|b| *b == b'\n' || *b == b'\r') else {
                self.hold(&piece[i..]);
                return;
            };
            let end = i + k;
            if self.pending.is_empty() && !self.overlong {
                self.line(self.line_at, &piece[i..end]);
            } else {
                self.hold(&piece[i..end]);
                let held = std::mem::take(&mut self.pending);
                if !std::mem::take(&mut self.overlong) {
                    self.line(self.line_at, &held);
                }
                self.pending = held;
                self.pending.clear();
            }
            // `\r\n` ends one line (`lines_with_offsets`); the `\n` may be in the next piece.
            i = end + 1;
            if piece[end] == b'\r' {
                match piece.get(end + 1) {
                    Some(b'\n') => i += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            self.line_at = base + i as u64;
        }
    }

    /// Keeps `bytes` of the current line for the next piece, up to `max_line`.
    fn hold(&mut self, bytes: &[u8]) {
        if self.overlong {
            return;
        }
        if self.pending.len().saturating_add(bytes.len()) > self.max_line {
            self.pending.clear();
            self.overlong = true;
            self.too_long();
            return;
        }
        self.pending.extend_from_slice(bytes);
    }

    /// The current line is over `max_line`: counted, and the file not verified (unless an error came first).
    fn too_long(&mut self) {
        self.lines += 1;
        if self.error.is_none() && self.not_utf8.is_none() {
            self.error = Some(LogError::NotVerified {
                reason: format!(
                    "line {} (at byte {}) is longer than the {} bytes this inspector reads of one line",
                    self.lines, self.line_at, self.max_line
                ),
            });
        }
    }

    /// One whole line, which starts at byte `at` of the file.
    fn line(&mut self, at: u64, bytes: &[u8]) {
        if self.not_utf8.is_some() {
            return;
        }
        if bytes.len() > self.max_line {
            // A line inside one piece; one across pieces is caught as it is held.
            self.too_long();
            return;
        }
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                self.not_utf8 = Some(at + e.valid_up_to() as u64);
                return;
            }
        };
        let n = self.lines;
        self.lines += 1;
        if self.error.is_some() {
            return;
        }
        if n == 0 {
            match parse_version_line(text) {
                Ok(v) => self.version = Some(v),
                Err(e) => self.error = Some(e),
            }
            return;
        }
        match entry(text, at, n + 1) {
            Ok(e) => {
                use std::hash::Hash;
                e.path.hash(&mut self.digest);
                self.max_timestamp_ms = self.max_timestamp_ms.max(e.timestamp_ms);
                let cost = entry_cost(&e);
                if self.not_kept == 0 && cost <= self.keep_left {
                    self.keep_left -= cost;
                    self.entries.push(e);
                } else {
                    self.not_kept += 1;
                }
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// The batch, once every piece is pushed.
    pub fn finish(mut self) -> Result<FileLogBatch, LogError> {
        if !self.pending.is_empty() && !self.overlong {
            let held = std::mem::take(&mut self.pending);
            self.line(self.line_at, &held);
        }
        if let Some(offset) = self.not_utf8 {
            return Err(LogError::NotUtf8 { offset });
        }
        if let Some(e) = self.error {
            return Err(e);
        }
        match self.version {
            Some(version) => {
                use std::hash::Hasher;
                Ok(FileLogBatch {
                    version,
                    entries: self.entries,
                    not_kept: self.not_kept,
                    max_timestamp_ms: self.max_timestamp_ms,
                    paths_digest: self.digest.finish(),
                })
            }
            None => Err(LogError::Empty),
        }
    }
}

/// One entry line (file line `line_no`, 1-based, starting at byte `at`). Only the fields used are built:
/// other values are skipped as they are read (a line of a few MB with a huge value of another field costs no
/// more than its bytes), as `Serialization.read[FileEntry]` / `[SinkFileStatus]` ignores unknown fields. A
/// field given twice takes its last value; a value of the wrong type reads as absent (a `path` that is not a
/// string: "No usable value for path", json4s' message).
fn entry(line: &str, at: u64, line_no: usize) -> Result<FileLogEntry, LogError> {
    let f: fields::EntryFields = serde_json::from_str(line).map_err(|e| json_error(&e, line, at, line_no))?;
    let Some(path) = f.path.flatten() else {
        return Err(LogError::BadJson {
            offset: at,
            line: line_no,
            message: "No usable value for path".into(),
            eof: false,
            data: true,
        });
    };
    Ok(FileLogEntry {
        path,
        timestamp_ms: match f.timestamp {
            Some(t) => t,
            None => f.modification_time.flatten(),
        },
        batch_id: f.batch_id.flatten(),
        size: f.size.flatten(),
        action: f.action.flatten(),
    })
}

/// `CompactibleFileStreamLog.isCompactionBatch`: `(batchId + 1) % interval == 0`.
pub fn is_compaction_batch(batch_id: i64, interval: i64) -> bool {
    interval > 0 && batch_id.checked_add(1).is_some_and(|b| b % interval == 0)
}

/// The path of batch `batch_id`'s file in the log folder `dir` with compaction interval `interval`, as
/// `CompactibleFileStreamLog.batchIdToPath` names it: `<dir>/<id>.compact` at a compaction batch, `<dir>/<id>`
/// otherwise.
pub fn batch_id_to_path(dir: &str, batch_id: i64, interval: i64) -> String {
    format!("{dir}/{batch_id}{}", if is_compaction_batch(batch_id, interval) { ".compact" } else { "" })
}

/// Infers the compaction interval the way Spark does when it reopens a log (`CompactibleFileStreamLog
/// .compactInterval`): with two or more `.compact` files, the difference of the two newest; with exactly one
/// (`c.compact`), `deriveCompactInterval(default, c)`: `c + 1` when it is at most the default, else, when the
/// default is below `(c + 1) / 2`, the smallest divisor of `c + 1` from the default on (`c + 1` itself without
/// one), else `c + 1`; with none, the configured default. `compact_ids` need not be sorted.
pub fn infer_compact_interval(compact_ids: &[i64], default_interval: i64) -> i64 {
    let mut ids: Vec<i64> = compact_ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    match ids.len() {
        0 => default_interval,
        1 => {
            let n = ids[0].saturating_add(1);
            let d = default_interval.max(1);
            if n <= d {
                return n.max(1);
            }
            if d < n / 2 {
                // `(min to n/2).view.filter(n % _ == 0) :+ n`, its head; the walk bounded for a hostile id.
                let limit = (n / 2).min(d.saturating_add(1_000_000));
                let mut i = d;
                while i <= limit {
                    if n % i == 0 {
                        return i;
                    }
                    i += 1;
                }
            }
            n
        }
        k => ids[k - 1] - ids[k - 2],
    }
}

/// The batch files Spark reads to get every live entry up to `latest` (`allFiles`): the newest compaction
/// batch at or below `latest` (if any) followed by the plain batches after it.
pub fn files_needed(latest: i64, interval: i64) -> (Option<i64>, std::ops::RangeInclusive<i64>) {
    if interval <= 0 {
        return (None, 0..=latest);
    }
    let start = (latest.saturating_add(1) / interval).saturating_mul(interval) - 1;
    if start >= 0 && is_compaction_batch(start, interval) {
        (Some(start), (start + 1)..=latest)
    } else {
        (None, 0..=latest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_source_and_sink_entries() {
        let b = parse(b"v1\n{\"path\":\"file:///a\",\"timestamp\":1,\"batchId\":0}\n{\"path\":\"file:///b\",\"timestamp\":2,\"batchId\":0}").unwrap();
        assert_eq!(b.entries.len(), 2);
        assert_eq!(b.entries[1].batch_id, Some(0));
        let s = parse(b"v1\n{\"path\":\"p\",\"size\":12,\"isDir\":false,\"modificationTime\":3,\"blockReplication\":1,\"blockSize\":3,\"action\":\"add\"}").unwrap();
        assert_eq!(s.entries[0].action.as_deref(), Some("add"));
        assert_eq!(parse(b""), Err(LogError::Empty));
        assert!(matches!(parse(b"v1\n{\"pa"), Err(LogError::BadJson { eof: true, .. })));
    }

    #[test]
    fn an_empty_piece_between_cr_and_lf_keeps_one_line_end() {
        let whole = b"v1\r\n{\"path\":\"a\"}\r\n{\"path\":\"b\"}";
        let mut p = Parser::new(u64::MAX, usize::MAX);
        for piece in [&whole[..3], b"", &whole[3..19], b"", b"", &whole[19..]] {
            p.push(piece);
        }
        assert_eq!(p.finish(), parse(whole));
        assert_eq!(parse(whole).unwrap().entries.len(), 2);
    }

    #[test]
    fn compaction_arithmetic() {
        assert!(is_compaction_batch(9, 10));
        assert!(!is_compaction_batch(10, 10));
        assert_eq!(infer_compact_interval(&[9, 19], 10), 10);
        assert_eq!(infer_compact_interval(&[4], 10), 5);
        assert_eq!(infer_compact_interval(&[29], 10), 10);
        assert_eq!(infer_compact_interval(&[], 7), 7);
        // deriveCompactInterval searches a divisor only below (c + 1) / 2: 9.compact with 5 is 10, 19.compact
        // with 10 is 20; 9.compact with 2 is 2, with 3 is 5.
        assert_eq!(infer_compact_interval(&[9], 5), 10);
        assert_eq!(infer_compact_interval(&[19], 10), 20);
        assert_eq!(infer_compact_interval(&[9], 2), 2);
        assert_eq!(infer_compact_interval(&[9], 3), 5);
        assert_eq!(files_needed(23, 10), (Some(19), 20..=23));
        assert_eq!(files_needed(5, 10), (None, 0..=5));
    }
}
