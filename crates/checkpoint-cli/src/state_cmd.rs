//! `checkpoint-inspector state <PATH>`: the state rows of one operator/store as Spark's `statestore` data source
//! gives them (one JSON object per line), or with `--metadata` the rows of Spark's `state-metadata` source.
//! Option meanings follow Spark's reader (REPORT-CONTRACT.md); all logic lives in `checkpoint_core::state`.

use checkpoint_core::state::{self, JoinSide, StateQuery};
use checkpoint_core::Archive;
use std::io::{BufWriter, Write};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of the `state` subcommand.
#[derive(clap::Args)]
pub struct StateArgs {
    /// The checkpoint: a .zip file or a directory.
    pub path: PathBuf,
    /// Stateful operator id (`operatorId`).
    #[arg(long, default_value_t = 0)]
    pub operator: i64,
    /// State store name (`storeName`), e.g. `left-keyToNumValues` for a join.
    #[arg(long, default_value = "default")]
    pub store: String,
    /// State variable of a transformWithState operator (`stateVarName`).
    #[arg(long = "state-var")]
    pub state_var: Option<String>,
    /// A stream-stream join's side as Spark's joined view (`joinSide`): left or right.
    #[arg(long = "join-side", value_parser = ["left", "right"])]
    pub join_side: Option<String>,
    /// Batch id (`batchId`); the state version read is batch + 1. Default: the last committed batch.
    #[arg(long, value_parser = parse_batch)]
    pub batch: Option<i64>,
    /// Only this state partition.
    #[arg(long)]
    pub partition: Option<u32>,
    /// Read the registered timers of a transformWithState operator (`readRegisteredTimers`): rows
    /// `{"key":..,"expiration_timestamp_ms":..,"partition_id":..}`. Conflicts with --state-var.
    #[arg(long = "read-timers", conflicts_with = "state_var")]
    pub read_timers: bool,
    /// `flattenCollectionTypes`: true (default) gives one row per ListState element (`list_element`) / MapState
    /// entry (`user_map_key`, `user_map_value`); false one row per grouping key with `list_value` / `map_value`.
    #[arg(long = "flatten-collections", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub flatten_collections: bool,
    /// RocksDB stores: Spark 4.3's auto snapshot repair (skip an unreadable snapshot, rebuild from an older one).
    /// Default: on unless the checkpoint's offset log turns it off, as a 4.3 restart does.
    #[arg(long = "auto-snapshot-repair", action = clap::ArgAction::Set, value_name = "BOOL")]
    pub auto_snapshot_repair: Option<bool>,
    /// `readChangeFeed`: the changes of batches --change-start-batch..=--change-end-batch instead of the state:
    /// rows `{"batch_id":..,"change_type":"update"|"delete","key":..,"value":..,"partition_id":..}`.
    #[arg(long = "read-change-feed")]
    pub read_change_feed: bool,
    /// `changeStartBatchId` (with --read-change-feed).
    #[arg(long = "change-start-batch", allow_negative_numbers = true)]
    pub change_start_batch: Option<i64>,
    /// `changeEndBatchId` (with --read-change-feed); default the last committed batch.
    #[arg(long = "change-end-batch", allow_negative_numbers = true)]
    pub change_end_batch: Option<i64>,
    /// `snapshotStartBatchId`: rebuild the state from the snapshot of this batch (needs --snapshot-partition).
    #[arg(long = "snapshot-start-batch", allow_negative_numbers = true)]
    pub snapshot_start_batch: Option<i64>,
    /// `snapshotPartitionId`: the partition read with --snapshot-start-batch.
    #[arg(long = "snapshot-partition", allow_negative_numbers = true)]
    pub snapshot_partition: Option<i64>,
    /// Print the `state-metadata` view (operators, stores, partitions, min/max batch) instead of rows.
    #[arg(long)]
    pub metadata: bool,
    /// The checkpoint folder inside the archive; default: the first folder holding `state/`.
    #[arg(long)]
    pub root: Option<String>,
    /// Output JSON lines (the only format; accepted for symmetry with `diagnose`).
    #[arg(long)]
    pub json: bool,
}

/// A batch id as Spark writes them: `0..=2^60` (larger ids are not Spark's and would overflow `batch + 1`).
fn parse_batch(s: &str) -> Result<i64, String> {
    let b: i64 = s.trim().parse().map_err(|_| format!("not a batch id: {s:?}"))?;
    if !(0..=checkpoint_core::log::MAX_BATCH_ID).contains(&b) {
        return Err(format!("batch id {b} is outside 0..={}", checkpoint_core::log::MAX_BATCH_ID));
    }
    Ok(b)
}

/// Runs the subcommand on an opened archive: 0 when rows were printed, 1 when the state cannot be read (one line
/// on stderr naming the file, the byte offset when known, and Spark's error class). Rows are written as they are
/// decoded ([`state::read_state_text_each`]); rows printed before an error stay printed.
pub fn run(args: &StateArgs, archive: &mut dyn Archive) -> ExitCode {
    let roots = state::find_state_roots(archive);
    let root = match &args.root {
        // A --root that holds no `state/<op>/` folder is an error naming it (not an empty answer).
        Some(r) => match known_root(r, &roots) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("checkpoint-inspector: {}", crate::render::clip(&e, 1000));
                return ExitCode::from(1);
            }
        },
        None => match roots.into_iter().next() {
            Some(r) => r,
            // No checkpoint at all (the wrong folder zipped, a zip inside a zip): say so, not "no committed batch".
            None if checkpoint_core::layout::find_roots(archive.entries()).is_empty() => {
                eprintln!(
                    "checkpoint-inspector: {}: no Spark checkpoint found (no metadata, offsets/, commits/ or state/); \
                     `diagnose` says what the input holds",
                    archive.name()
                );
                return ExitCode::from(1);
            }
            None => String::new(),
        },
    };
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout());
    // A closed pipe (`| head`) ends the output quietly; another write error ends it with the error.
    let mut pipe_closed = false;
    let mut write_error: Option<String> = None;
    let mut sink = |line: &str| {
        if let Err(e) = out.write_all(line.as_bytes()).and_then(|()| out.write_all(b"\n")) {
            match crate::written(Err(e)) {
                Ok(()) => pipe_closed = true,
                Err(m) => write_error = Some(m),
            }
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    };
    let result = if args.metadata {
        state::read_state_metadata(archive, &root).map(|rows| {
            let from_folders: Vec<i64> =
                rows.iter().filter(|r| r.metadata_file.is_none()).map(|r| r.operator_id).collect();
            for r in &rows {
                if sink(&r.to_json().to_string()).is_break() {
                    break;
                }
            }
            if let Some(note) = folders_note(&from_folders) {
                eprintln!("{note}");
            }
        })
    } else {
        let q = query(args);
        let limits = state::StateLimits::default();
        match state::plain_store_read(archive, &root, &q, &limits) {
            Ok(Some(mut plain)) => write_plain(&mut plain, archive, &mut sink),
            Ok(None) => state::read_state_text_each(archive, &root, &q, &limits, &mut sink),
            Err(e) => Err(e),
        }
    };
    let flushed = if pipe_closed || write_error.is_some() { Ok(()) } else { crate::written(out.flush()) };
    if let Some(e) = write_error.or(flushed.err()) {
        drop(out);
        eprintln!("checkpoint-inspector: {}", crate::render::clip(&e, 1000));
        return ExitCode::from(2);
    }
    if pipe_closed {
        return ExitCode::SUCCESS;
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            drop(out);
            eprintln!("checkpoint-inspector: {}", crate::render::clip(&e.to_string(), 1000));
            ExitCode::from(1)
        }
    }
}

/// The note of a `--metadata` view with rows read from the state folders (`operators`: their operator ids, one
/// per row): Spark's `state-metadata` source returns no row for such a checkpoint.
fn folders_note(operators: &[i64]) -> Option<String> {
    let mut ops = operators.to_vec();
    ops.dedup();
    if ops.is_empty() {
        return None;
    }
    let list: Vec<String> = ops.iter().map(|o| format!("state/{o}/_metadata")).collect();
    Some(format!(
        "checkpoint-inspector: note: no operator metadata for operator(s) {} ({}: written before Spark 4.0, or \
         deleted); their rows come from the state folders. Spark's state-metadata source returns no row at all \
         for this checkpoint (it cannot read one operator's metadata).",
        ops.iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
        list.join(", ")
    ))
}

/// The `--root` given, without a trailing `/`, when it is one of the archive's folders holding `state/<op>/`
/// (`roots`, [`state::find_state_roots`]); else the error that names it and the roots there are.
fn known_root(given: &str, roots: &[String]) -> Result<String, String> {
    let r = given.trim_end_matches('/');
    if roots.iter().any(|x| x == r) {
        return Ok(r.to_string());
    }
    let found = match roots.len() {
        0 => "the archive has no folder holding state/<operator>/".to_string(),
        n => {
            let named: Vec<String> = roots
                .iter()
                .take(10)
                .map(|x| if x.is_empty() { "\"\" (the archive top)".into() } else { format!("{x:?}") })
                .collect();
            format!(
                "folders holding state/: {}{}",
                named.join(", "),
                if n > 10 { format!(" and {} more", n - 10) } else { String::new() }
            )
        }
    };
    Err(format!("--root {given:?}: no checkpoint with a state/ folder there; {found}"))
}

/// How the writing thread of [`write_plain`] ended.
enum Written {
    /// Every store it was handed.
    All,
    /// The sink stopped it (a closed pipe).
    Stopped,
    /// A row that does not decode (the rows before it are written): the read ends with its error.
    Failed(state::LoadedStore, usize, checkpoint_core::state::StateError),
}

/// A plain store's rows on two threads: this one loads partition after partition (reading the archive,
/// inflating, rebuilding the store) while another writes the rows of the partition loaded before
/// ([`state::StoreTextWriter`], no archive). A loaded store is handed over only when the writer takes it (a
/// rendezvous channel), so at most two partitions' stores are held: the one being written and the next. The
/// output and the error are the one-thread read's ([`state::read_state_text_each`]): stores are written in order,
/// a row that does not decode ends the read before any later store's load error, and a load error is reported
/// once every store loaded before it is written. One difference: the next store is read before a row error's
/// file and offset are looked up, so within one store of the archive's total read limit (2 GiB) that lookup may
/// be refused and the error then names the store folder only. When no thread can be started, one thread reads.
fn write_plain(
    plain: &mut state::PlainStoreRead,
    archive: &mut dyn Archive,
    sink: &mut (dyn FnMut(&str) -> ControlFlow<()> + Send),
) -> Result<(), checkpoint_core::state::StateError> {
    let mut text = plain.text_writer();
    let (tx, rx) = std::sync::mpsc::sync_channel::<state::LoadedStore>(0);
    let ended = std::thread::scope(|s| {
        let (text, sink) = (&mut text, &mut *sink);
        let writer = std::thread::Builder::new().name("state-writer".into()).spawn_scoped(s, move || {
            for store in rx {
                match text.write(&store, sink) {
                    state::TextEnd::Written => {}
                    state::TextEnd::Stopped => return Written::Stopped,
                    state::TextEnd::Failed { row, error } => return Written::Failed(store, row, error),
                }
            }
            Written::All
        });
        let Ok(writer) = writer else { return None };
        let mut load_error = None;
        for index in 0..plain.partitions().len() {
            match plain.load(archive, index) {
                // A send fails once the writer has stopped: nothing more is needed.
                Ok(store) => {
                    if tx.send(store).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    load_error = Some(e);
                    break;
                }
            }
        }
        drop(tx);
        let written = writer.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        Some((written, load_error))
    });
    match ended {
        None => write_plain_one_thread(plain, archive, &mut text, sink),
        Some((Written::Stopped, _)) => Ok(()),
        // A row error comes before any later load error, as in the one-thread read.
        Some((Written::Failed(store, row, error), _)) => Err(plain.row_error(archive, &store, row, error)),
        Some((Written::All, load_error)) => load_error.map_or(Ok(()), Err),
    }
}

/// [`write_plain`] on this thread alone, as [`state::read_state_text_each`] reads a plain store.
fn write_plain_one_thread(
    plain: &mut state::PlainStoreRead,
    archive: &mut dyn Archive,
    text: &mut state::StoreTextWriter,
    sink: &mut dyn FnMut(&str) -> ControlFlow<()>,
) -> Result<(), checkpoint_core::state::StateError> {
    for index in 0..plain.partitions().len() {
        let store = plain.load(archive, index)?;
        match text.write(&store, sink) {
            state::TextEnd::Written => {}
            state::TextEnd::Stopped => return Ok(()),
            state::TextEnd::Failed { row, error } => return Err(plain.row_error(archive, &store, row, error)),
        }
    }
    Ok(())
}

/// The [`StateQuery`] of the arguments.
fn query(args: &StateArgs) -> StateQuery {
    StateQuery {
        operator_id: args.operator,
        store_name: args.store.clone(),
        state_var: args.state_var.clone(),
        join_side: args.join_side.as_deref().map(|s| if s == "right" { JoinSide::Right } else { JoinSide::Left }),
        batch_id: args.batch,
        partition: args.partition,
        read_registered_timers: args.read_timers,
        flatten_collection_types: args.flatten_collections,
        auto_snapshot_repair: args.auto_snapshot_repair,
        read_change_feed: args.read_change_feed,
        change_start_batch_id: args.change_start_batch,
        change_end_batch_id: args.change_end_batch,
        snapshot_start_batch_id: args.snapshot_start_batch,
        snapshot_partition_id: args.snapshot_partition,
    }
}
