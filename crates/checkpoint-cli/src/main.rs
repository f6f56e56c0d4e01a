//! `checkpoint-inspector`: diagnose a zipped (or unpacked) Spark streaming checkpoint.
//! The command line of `../shared/reference/REPORT-CONTRACT.md`; all logic lives in `checkpoint-core`.

mod dir_archive;
mod read_ahead;
mod render;
mod state_cmd;
mod zip_file;

use checkpoint_core::report::Code;
use checkpoint_core::{diagnose, Archive, Context, Limits, SparkVersion, ZipInput};
use clap::{Parser, Subcommand};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "checkpoint-inspector",
    version,
    about = "Reads a Spark streaming checkpoint and explains whether and why a restart fails"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Diagnose a checkpoint (.zip or directory): facts, findings and the restart prediction.
    Diagnose(DiagnoseArgs),
    /// Print state rows as Spark's `statestore` source does (one JSON object per line), or `--metadata`.
    State(state_cmd::StateArgs),
}

#[derive(clap::Args)]
struct DiagnoseArgs {
    /// The checkpoint: a .zip file or a directory.
    path: PathBuf,
    /// Print the report as JSON (the machine-readable contract).
    #[arg(long)]
    json: bool,
    /// Spark version the restart will use (X.Y.Z); default: the newest consistent with the checkpoint.
    #[arg(long = "spark-version", value_parser = parse_version)]
    spark_version: Option<SparkVersion>,
    /// "Now", as RFC 3339 (2026-11-30T00:00:00Z) or epoch milliseconds; default: the system clock.
    #[arg(long, value_parser = parse_now)]
    now: Option<i64>,
    /// A file holding the error text Spark printed.
    #[arg(long = "error-text")]
    error_text: Option<PathBuf>,
    /// A session conf of the restarted query, `key=value` (repeatable); also the writer options a check needs
    /// (`asyncProgressTrackingEnabled=true` when the restart keeps async progress tracking on).
    #[arg(long = "conf", value_parser = parse_conf)]
    conf: Vec<(String, String)>,
    /// The Delta source table's `_delta_log` (zip or directory).
    #[arg(long = "delta-log")]
    delta_log: Option<PathBuf>,
    /// A file sink's output folder or its `_spark_metadata` log (zip or directory); an output folder whose
    /// `_spark_metadata` was deleted (its `part-` files kept) is a sink log with no batch.
    #[arg(long = "sink-log")]
    sink_log: Option<PathBuf>,
    /// The Kafka brokers' earliest offsets: Spark's JSON `{"topic":{"0":123}}` or the lines
    /// `kafka-get-offsets.sh --time -2` prints (`topic:partition:offset`), inline or a file.
    #[arg(long = "kafka-earliest")]
    kafka_earliest: Option<String>,
    /// The Kafka brokers' latest offsets (`kafka-get-offsets.sh --time -1`), in the same forms.
    #[arg(long = "kafka-latest")]
    kafka_latest: Option<String>,
    /// The path a file source of the restarted query reads now, `N=PATH` (source number N, 0 for the first)
    /// or `PATH` (source 0), repeatable; compared with the files the source's log recorded.
    #[arg(long = "source-path", value_parser = checkpoint_core::context::parse_source_path)]
    source_path: Vec<(u32, String)>,
    /// Exit 1 also when a finding is a warning (`warning`), not only an error (`error`, the default).
    #[arg(long = "fail-on", value_enum, default_value = "error")]
    fail_on: FailOn,
    /// Verify every state file a restart loads and check every row, however large (no read budget).
    #[arg(long, conflicts_with = "verify_budget_mib")]
    deep: bool,
    /// Read budget for state files in MiB (default 256): state files beyond it are listed as not verified.
    #[arg(long = "verify-budget-mib")]
    verify_budget_mib: Option<u64>,
    /// Memory for file source and sink log entries in MiB (default 64; files of those logs are then read up to
    /// four times as many bytes, at least 256 MiB): entries past it are checked but not kept, and answers that
    /// need them are "not verified".
    #[arg(long = "file-log-mib", value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    file_log_mib: Option<u64>,
    /// Print a share link to this report instead of the report: the report (never the checkpoint) redacted,
    /// compressed into the URL fragment `#report=1.…`. Without --base (or CHECKPOINT_INSPECTOR_BASE) only
    /// `#report=…` is printed: append it to the address of any copy of the inspector.
    #[arg(long = "share-link", conflicts_with = "json")]
    share_link: bool,
    /// The inspector's address the link starts with, e.g. https://team.example/inspector/ (default: the
    /// CHECKPOINT_INSPECTOR_BASE environment variable, else none).
    #[arg(long, requires = "share_link")]
    base: Option<String>,
    /// Leave one category unredacted in the share link (repeatable): ids, paths, hosts, topics, tables,
    /// secrets, or all.
    #[arg(long = "no-redact", value_name = "CATEGORY", requires = "share_link", value_parser = parse_no_redact)]
    no_redact: Vec<NoRedact>,
    /// Size budget of the link's fragment in bytes (default 16384); long lists are cut, with notes, to fit.
    #[arg(long = "share-budget", value_name = "BYTES", requires = "share_link")]
    share_budget: Option<usize>,
}

/// The lowest severity that makes `diagnose` exit with 1.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FailOn {
    /// An error finding (the default).
    Error,
    /// An error or a warning finding (for scheduled watches of retention countdowns).
    Warning,
}

/// One `--no-redact` value: a category, a comma-separated list, or `all`.
#[derive(Clone)]
struct NoRedact(Vec<checkpoint_core::share::Category>);

fn parse_no_redact(s: &str) -> Result<NoRedact, String> {
    if s.trim().eq_ignore_ascii_case("all") {
        return Ok(NoRedact(checkpoint_core::share::Category::ALL.to_vec()));
    }
    s.split(',').map(|p| p.parse()).collect::<Result<_, _>>().map(NoRedact)
}

fn parse_version(s: &str) -> Result<SparkVersion, String> {
    s.parse()
}

fn parse_conf(s: &str) -> Result<(String, String), String> {
    let (k, v) = s.split_once('=').ok_or_else(|| format!("expected key=value, got {s:?}"))?;
    Ok((k.trim().to_string(), v.trim().to_string()))
}

fn parse_now(s: &str) -> Result<i64, String> {
    checkpoint_core::time::parse_now(s)
}

fn read_text_file(p: &Path, cap: u64) -> Result<String, String> {
    let f = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
    let mut buf = Vec::new();
    f.take(cap).read_to_end(&mut buf).map_err(|e| format!("{}: {e}", p.display()))?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// The brokers' offsets of `--kafka-earliest` / `--kafka-latest`: a file path, else the text itself (Spark's
/// JSON or `kafka-get-offsets.sh` lines).
fn kafka_offsets(flag: &str, arg: &str) -> Result<checkpoint_core::kafka_offsets::KafkaOffsets, String> {
    let p = Path::new(arg);
    let text = if p.is_file() { read_text_file(p, 16 * 1024 * 1024)? } else { arg.to_string() };
    checkpoint_core::kafka_offsets::parse(&text).map_err(|e| format!("{flag}: {e}"))
}

/// The checkpoint (or log) at `path`: a folder, else a zip. A zip's entries are inflated ahead on a second
/// thread when `ahead` and the process may use more than one core ([`read_ahead`]).
fn open_input(path: &Path, ahead: bool) -> Result<Box<dyn Archive>, String> {
    let limits = Limits::default();
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.is_dir() {
        let a = dir_archive::DirArchive::open(path, limits).map_err(|e| format!("{}: {e}", path.display()))?;
        return Ok(Box::new(a));
    }
    if !meta.is_file() {
        // A device, FIFO or socket has no length to seek in: say so instead of "empty".
        return Err(format!("{}: not a regular file or a directory", path.display()));
    }
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    // A second thread only with a second core to run it (a container's CPU quota counts): on one core it would
    // only add its own work.
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let second = if ahead && cores > 1 { f.try_clone().ok() } else { None };
    let mut z = ZipInput::open(zip_file::ZipFile::new(f, meta.len()), meta.len(), &name, limits)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if let Some(f) = second {
        read_ahead::start(&mut z, f, meta.len());
    }
    Ok(Box::new(z))
}

/// The releases whose behaviour the diagnosis models (FORMATS.md): 3.5 to [`SparkVersion::NEWEST`].
fn modelled(v: SparkVersion) -> bool {
    v.at_least(3, 5) && !v.at_least(SparkVersion::NEWEST.major, SparkVersion::NEWEST.minor + 1)
}

fn run_diagnose(a: DiagnoseArgs) -> Result<ExitCode, String> {
    if let Some(v) = a.spark_version.filter(|v| !modelled(*v)) {
        eprintln!(
            "checkpoint-inspector: warning: Spark {v} is outside the releases this tool models (3.5 to {}.{}); \
             the prediction applies the rules of the nearest one and may be wrong",
            SparkVersion::NEWEST.major,
            SparkVersion::NEWEST.minor
        );
    }
    let mut ctx = Context { spark_version: a.spark_version, ..Default::default() };
    ctx.verify_budget_bytes =
        if a.deep { Some(u64::MAX) } else { a.verify_budget_mib.map(|m| m.saturating_mul(1024 * 1024)) };
    if let Some(mib) = a.file_log_mib {
        let entries = mib.saturating_mul(1024 * 1024);
        ctx.file_log_entry_bytes = Some(entries);
        ctx.file_log_bytes = Some(entries.saturating_mul(4).max(checkpoint_core::read::MAX_FILE_LOG_TOTAL_BYTES));
    }
    ctx.now_ms = a.now.or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok().map(|d| d.as_millis() as i64)
    });
    if let Some(p) = &a.error_text {
        ctx.error_text = Some(read_text_file(p, 1024 * 1024)?);
    }
    for (k, v) in a.conf {
        ctx.session_conf.insert(k, v);
    }
    ctx.source_paths = a.source_path.into_iter().collect();
    ctx.kafka_earliest = a.kafka_earliest.as_deref().map(|k| kafka_offsets("--kafka-earliest", k)).transpose()?;
    ctx.kafka_latest = a.kafka_latest.as_deref().map(|k| kafka_offsets("--kafka-latest", k)).transpose()?;
    if let Some(p) = &a.delta_log {
        if !p.exists() {
            return Err(format!("--delta-log: {}: no such file or directory", p.display()));
        }
        let mut log_input = open_input(p, false).map_err(|e| format!("--delta-log: {e}"))?;
        ctx.delta_logs = checkpoint_core::delta::reader::read_delta_logs(log_input.as_mut());
        if ctx.delta_logs.is_empty() {
            return Err(format!(
                "--delta-log: {}: no _delta_log found (no _delta_log/ folder and no <version>.json or checkpoint \
                 file at the top level)",
                p.display()
            ));
        }
    }
    if let Some(p) = &a.sink_log {
        if !p.exists() {
            return Err(format!("--sink-log: {}: no such file or directory", p.display()));
        }
        let mut log_input = open_input(p, false).map_err(|e| format!("--sink-log: {e}"))?;
        let budget = (
            ctx.file_log_entry_bytes.unwrap_or(checkpoint_core::read::MAX_FILE_LOG_ENTRY_BYTES),
            ctx.file_log_bytes.unwrap_or(checkpoint_core::read::MAX_FILE_LOG_TOTAL_BYTES),
        );
        ctx.sink_logs = checkpoint_core::read::file_logs::read_sink_logs_within(log_input.as_mut(), budget);
        if ctx.sink_logs.is_empty() {
            return Err(format!(
                "--sink-log: {}: no file sink log or output found (no _spark_metadata/ folder, no batch files and no part- data files at the top level; a Delta table or a checkpoint is neither)",
                p.display()
            ));
        }
    }
    let mut archive = open_input(&a.path, true)?;
    let report = diagnose(archive.as_mut(), &ctx);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if a.share_link {
        let mut redaction = checkpoint_core::share::Redaction::default();
        for c in a.no_redact.iter().flat_map(|n| n.0.iter()) {
            redaction.set(*c, false);
        }
        let options = checkpoint_core::share::ShareOptions {
            redaction,
            budget_bytes: a.share_budget.unwrap_or(checkpoint_core::share::DEFAULT_BUDGET_BYTES),
        };
        let link = checkpoint_core::share::share_report(&report, &options).map_err(|e| format!("--share-link: {e}"))?;
        let base = a.base.clone().or_else(|| std::env::var("CHECKPOINT_INSPECTOR_BASE").ok());
        written(writeln!(out, "{}", link.url(base.as_deref().filter(|b| !b.trim().is_empty()))))?;
        // For people, on stderr (stdout stays the link alone, for scripts).
        let replaced: Vec<String> = link.replaced.iter().map(|(c, n)| format!("{n} {c}")).collect();
        eprintln!(
            "share link: {} bytes of fragment (budget {}); redacted: {}",
            link.bytes,
            link.budget_bytes,
            if replaced.is_empty() { "nothing found to redact".to_string() } else { replaced.join(", ") }
        );
        for note in &link.cut_notes {
            eprintln!("share link: cut: {note}");
        }
    } else if a.json {
        let s = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        written(writeln!(out, "{s}"))?;
    } else {
        let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        written(out.write_all(render::human(&report, colour).as_bytes()))?;
    }
    written(out.flush())?;
    // Nothing diagnosed (no checkpoint in the input: the wrong folder zipped, a zip inside a zip) is not a pass.
    let none = report.checkpoints.iter().all(|c| c.findings.iter().any(|f| f.code == Code::NoCheckpointFound));
    if none {
        eprintln!(
            "checkpoint-inspector: {}: no Spark checkpoint found (the report says what the input holds)",
            a.path.display()
        );
        return Ok(ExitCode::from(2));
    }
    let failing = report.has_errors() || (a.fail_on == FailOn::Warning && report.has_warnings());
    Ok(if failing { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The outcome of writing to standard output: a reader that closed the pipe (`| head`) ends the output quietly,
/// as a shell expects; any other failure (a full disk, `> /dev/full`, a closed descriptor) is an error, so a
/// script never takes a cut report for a whole one.
pub(crate) fn written(r: std::io::Result<()>) -> Result<(), String> {
    match r {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("writing to standard output: {e}")),
        _ => Ok(()),
    }
}

/// Keeps freed memory in the process for reuse. By default glibc gives the free top of its heap back to the
/// kernel (trim) and serves blocks over a size threshold with their own `mmap`: `state` builds and frees one
/// store per partition (tens of MB: the entry, its decompressed records, the sorted store), so every partition
/// faulted its pages in again (74,000 page faults, a quarter of the wall time on 1 M rows). Peak memory is
/// unchanged, since the same blocks are reused. 64-bit glibc only (32-bit glibc refuses a 32 MiB threshold).
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
fn keep_freed_memory() {
    // Blocks up to 32 MiB (glibc's largest mmap threshold on 64-bit) come from the heap; up to 256 MiB of free
    // heap top is kept.
    // SAFETY: `mallopt` only sets the allocator's parameters; it is called first in `main`, before any thread.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

fn main() -> ExitCode {
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    keep_freed_memory();
    let cli = Cli::parse();
    match cli.command {
        Command::Diagnose(a) => match run_diagnose(a) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("checkpoint-inspector: {}", render::clip(&e, 1000));
                ExitCode::from(2)
            }
        },
        Command::State(a) => match open_input(&a.path, false) {
            Ok(mut archive) => state_cmd::run(&a, archive.as_mut()),
            Err(e) => {
                eprintln!("checkpoint-inspector: {}", render::clip(&e, 1000));
                ExitCode::from(2)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_now() {
        assert_eq!(parse_now("0"), Ok(0));
        assert_eq!(parse_now("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(parse_now("2026-11-30T00:00:00Z"), Ok(1795996800000));
        assert_eq!(parse_now("2026-11-30T01:00:00.5+01:00"), Ok(1795996800500));
        assert!(parse_now("yesterday").is_err());
        assert!(parse_now("2026-13-45T99:99:99Z").is_err());
        assert!(parse_now("2026-02-29T00:00:00Z").is_err());
        // A non-ASCII offset is an error, not a slice through a character.
        assert!(parse_now("2024-01-01T00:00:00+0\u{e9}00").is_err());
        assert!(parse_now("2024-01-01T00:00:00+00:\u{e9}").is_err());
        assert_eq!(parse_now("2028-02-29T00:00:00Z").map(|m| m > 0), Ok(true));
    }
}
