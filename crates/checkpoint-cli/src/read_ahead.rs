//! The read-ahead thread: a second core inflates the zip entries the diagnosis is about to read while this
//! thread parses and checks the ones it read. The core says what it reads next ([`Archive::prefetch`]: the
//! offset and commit logs newest first with their sidecars, the file source and sink logs, each restart chain),
//! and [`ZipInput`] hands those entries to a [`ReadAhead`]; this one inflates them in that order on its own
//! thread, over its own handle of the same file ([`ZipInput::inflater`]), and gives each back when it is read.
//!
//! What a read returns is the core's business and never changes (see `checkpoint_core::archive::ReadAhead`):
//! an entry whose inflation failed, or that was not inflated in time, is read by the diagnosis itself. Memory is
//! bounded: at most [`MAX_HELD`] bytes of inflated entries wait to be read (plus the one being inflated, at most
//! [`checkpoint_core::archive::READ_AHEAD_MAX_ENTRY`]); at the bound, entries the reads went past are dropped,
//! and queued entries the reads went past are never inflated.
//!
//! [`Archive::prefetch`]: checkpoint_core::Archive::prefetch

use crate::zip_file::ZipFile;
use checkpoint_core::archive::{EntryInflater, ReadAhead};
use checkpoint_core::ZipInput;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// Inflated bytes held for reads to come at most; the thread waits while they are over it.
pub const MAX_HELD: u64 = 16 * 1024 * 1024;

/// Starts the read-ahead thread of `zip` (`len` bytes long), reading through `second`, another handle of the
/// same file. When the thread cannot be started, `zip` reads everything itself, as without.
pub fn start(zip: &mut ZipInput<ZipFile>, second: std::fs::File, len: u64) {
    if let Some(ahead) = spawn(zip.inflater(ZipFile::new(second, len))) {
        zip.set_read_ahead(Box::new(ahead));
    }
}

/// The thread over `inflater`, and the archive's side of it; `None` when no thread can be started.
fn spawn<R: std::io::Read + std::io::Seek + Send + 'static>(mut inflater: EntryInflater<R>) -> Option<Ahead> {
    let shared = Arc::new(Shared::default());
    let theirs = Arc::clone(&shared);
    let spawned = std::thread::Builder::new().name("read-ahead".into()).spawn(move || run(&theirs, &mut inflater));
    spawned.ok().map(|worker| Ahead { shared, worker: Some(worker) })
}

/// The state both threads share, behind one lock. Each thread waits on its own condition variable and is woken
/// only while it waits ([`State::worker_waits`], [`State::reader_waits`]): a wake-up is a system call, and the
/// logs are read tens of thousands of files of ~1 KiB, each in microseconds.
#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Wakes the thread: entries hinted, room made, or the archive dropped.
    for_worker: Condvar,
    /// Wakes a read waiting for the entry the thread inflates.
    for_reader: Condvar,
}

impl Shared {
    /// The state, also after the other thread panicked holding the lock (the state stays consistent: every
    /// change is made in one step under the lock).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn wait<'a>(&self, on: &Condvar, guard: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        on.wait(guard).unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Wakes the thread when it waits (`s` is the state under the lock).
    fn wake_worker(&self, s: &State) {
        if s.worker_waits {
            self.for_worker.notify_one();
        }
    }
}

/// Where a hinted entry is.
enum Status {
    /// Waiting for the thread (or for its read, which then takes it back and reads it itself).
    Queued,
    /// Being inflated by the thread: a read of it waits.
    Working,
    /// Inflated: its bytes, or `None` when the inflation failed (the read reads it itself).
    Done(Option<Vec<u8>>),
}

#[derive(Default)]
struct State {
    /// Entries hinted and not started, in hint order: (hint number, entry). An entry a read took back, or the
    /// reads went past, stays here until the thread reaches it and skips it.
    queue: VecDeque<(u64, u32)>,
    /// Every hinted entry not yet read or dropped: its hint number and where it is.
    entries: HashMap<u32, (u64, Status)>,
    /// Inflated entries in hint order, to drop those the reads went past.
    done: VecDeque<(u64, u32)>,
    /// Bytes of inflated entries held.
    held: u64,
    /// The next hint number.
    next: u64,
    /// The hint number of the latest entry read: queued entries hinted before it are skipped.
    passed: u64,
    /// Set when the archive is dropped: the thread ends.
    closed: bool,
    /// The thread waits on [`Shared::for_worker`].
    worker_waits: bool,
    /// A read waits on [`Shared::for_reader`].
    reader_waits: bool,
}

impl State {
    /// Forgets the records of [`State::done`] whose entry was read or dropped since, from its front: the
    /// records stay about as many as the entries held.
    fn forget_taken(&mut self) {
        while let Some(&(m, e)) = self.done.front() {
            if matches!(self.entries.get(&e), Some((k, Status::Done(_))) if *k == m) {
                return;
            }
            self.done.pop_front();
        }
    }

    /// Drops the inflated entries hinted before `n` (the reads, which follow the hints, went past them).
    /// Returns whether that made room.
    fn drop_before(&mut self, n: u64) -> bool {
        let held = self.held;
        while let Some(&(m, e)) = self.done.front().filter(|(m, _)| *m < n) {
            self.done.pop_front();
            if matches!(self.entries.get(&e), Some((k, Status::Done(_))) if *k == m) {
                if let Some((_, Status::Done(Some(b)))) = self.entries.remove(&e) {
                    self.held -= held_by(&b);
                }
            }
        }
        self.held < held
    }
}

/// The memory an inflated entry holds: its buffer's capacity, not its length.
fn held_by(bytes: &Vec<u8>) -> u64 {
    bytes.capacity() as u64
}

/// The thread: inflates the queued entries in hint order while fewer than [`MAX_HELD`] bytes wait to be read.
fn run<R: std::io::Read + std::io::Seek>(shared: &Shared, inflater: &mut EntryInflater<R>) {
    loop {
        let entry = {
            let mut s = shared.lock();
            loop {
                if s.closed {
                    return;
                }
                if s.held < MAX_HELD {
                    if let Some((n, e)) = s.queue.pop_front() {
                        let passed = s.passed;
                        match s.entries.get_mut(&e) {
                            Some((k, st @ Status::Queued)) if *k == n && n >= passed => {
                                *st = Status::Working;
                                break e;
                            }
                            Some((k, Status::Queued)) if *k == n => {
                                s.entries.remove(&e);
                            }
                            _ => {}
                        }
                        continue;
                    }
                }
                s.worker_waits = true;
                s = shared.wait(&shared.for_worker, s);
                s.worker_waits = false;
            }
        };
        // A panic in the inflater (a bug) is an entry the read reads itself, which then meets it there.
        let bytes = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inflater.inflate(entry))).ok().flatten();
        let mut s = shared.lock();
        let held = bytes.as_ref().map_or(0, held_by);
        if let Some((n, st @ Status::Working)) = s.entries.get_mut(&entry) {
            let n = *n;
            *st = Status::Done(bytes);
            s.held += held;
            s.done.push_back((n, entry));
        }
        if s.reader_waits {
            shared.for_reader.notify_one();
        }
    }
}

/// The archive's side: hints queue entries, reads take them.
struct Ahead {
    shared: Arc<Shared>,
    worker: Option<JoinHandle<()>>,
}

impl ReadAhead for Ahead {
    fn hint(&mut self, entries: &[u32]) {
        let mut s = self.shared.lock();
        for &e in entries {
            if s.entries.contains_key(&e) {
                continue;
            }
            let n = s.next;
            s.next += 1;
            s.entries.insert(e, (n, Status::Queued));
            s.queue.push_back((n, e));
        }
        self.shared.wake_worker(&s);
    }

    fn take(&mut self, entry: u32) -> Option<Vec<u8>> {
        let mut s = self.shared.lock();
        let n = s.entries.get(&entry)?.0;
        s.passed = s.passed.max(n);
        // At the bound, the entries hinted before this one are dropped: the reads went past them (a read out of
        // the hints' order, within the bound, still finds its entry).
        let passed = s.passed;
        if s.held >= MAX_HELD && s.drop_before(passed) {
            self.shared.wake_worker(&s);
        }
        loop {
            match s.entries.get(&entry) {
                Some((_, Status::Working)) => {
                    s.reader_waits = true;
                    s = self.shared.wait(&self.shared.for_reader, s);
                    s.reader_waits = false;
                }
                Some((_, Status::Queued)) => {
                    // Not started: read here (the thread skips it).
                    s.entries.remove(&entry);
                    return None;
                }
                Some((_, Status::Done(_))) => {
                    let Some((_, Status::Done(bytes))) = s.entries.remove(&entry) else { return None };
                    s.forget_taken();
                    s.held -= bytes.as_ref().map_or(0, held_by);
                    // Room for the thread.
                    self.shared.wake_worker(&s);
                    return bytes;
                }
                None => return None,
            }
        }
    }
}

impl Drop for Ahead {
    fn drop(&mut self) {
        let mut s = self.shared.lock();
        s.closed = true;
        self.shared.wake_worker(&s);
        drop(s);
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
#[path = "read_ahead_tests.rs"]
mod tests;
