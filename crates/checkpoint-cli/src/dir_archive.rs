//! A directory on disk seen through the core's [`Archive`] trait (native only: the core does no I/O).
//!
//! Walks the tree once, as Spark's Hadoop `LocalFileSystem` would see it, and reads files only when asked:
//! - symbolic links are followed, to folders and to files (a copied checkpoint may link `state/` to a mounted
//!   volume); a link that leads back to a folder it lies in (same device and inode) is a loop, listed and not
//!   followed; a folder reached again under another path is listed again (Spark would find it under both), up
//!   to [`MAX_FOLDERS_LISTED_AGAIN`] times in all, then named and not listed (links that fan out and meet again
//!   would list 2^levels copies); the depth and entry limits bound the rest;
//! - a folder that cannot be listed, a link that points nowhere, a FIFO, socket or device (never opened: opening
//!   a FIFO blocks) or a name that is not UTF-8 is listed as an entry the input cannot give
//!   ([`ArchiveError::Inaccessible`], see [`Archive::unreadable_entries`]): the core reports it, and diagnoses
//!   the rest; nothing in the tree refuses the whole input (only the root itself, or the entry count limit);
//! - a file name is one path component, whatever it holds: `offsets\99` on a Unix file system is a file of
//!   the root with a backslash in its name (Hadoop's `Path` would not read it as `offsets/99`), kept under its
//!   literal name so that it aliases no other path (unlike zip entry names, which
//!   [`checkpoint_core::archive::normalize_path`] reads with `\` as a separator for zips made on Windows);
//! - files are opened read-only (and non-blocking, then checked to be regular files), never for writing.

use checkpoint_core::{Archive, ArchiveError, Entry, Limits};
use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};

/// A directory as an archive.
pub struct DirArchive {
    root: PathBuf,
    entries: Vec<Entry>,
    /// Position in `entries` of each file, by path (a linear search per read made 10^5 log files quadratic).
    by_path: HashMap<String, usize>,
    /// Entries the input cannot give, and why.
    unreadable: Vec<(String, ArchiveError)>,
    /// Position in `entries` → position in `unreadable`.
    blocked: HashMap<usize, usize>,
    name: String,
    bytes: u64,
    limits: Limits,
    total_read: u64,
}

/// The listing under way: what [`DirArchive::open`] collects folder by folder.
struct Walk {
    limits: Limits,
    entries: Vec<Entry>,
    unreadable: Vec<(String, ArchiveError)>,
    /// Position in `entries` → position in `unreadable`.
    blocked: HashMap<usize, usize>,
    bytes: u64,
    /// (device, inode) and relative path of the folders from the root to the one listed (a link to one of them
    /// is a loop).
    ancestors: Vec<((u64, u64), String)>,
    /// (device, inode) of every folder listed, with the first path it was listed under.
    seen: HashMap<(u64, u64), String>,
    /// Folders listed again under another path (through a symbolic link), at most [`MAX_FOLDERS_LISTED_AGAIN`].
    listed_again: usize,
}

/// Folders a walk lists again when a symbolic link leads to one already listed under another path (as Spark would
/// find it under both paths). Past this, such a folder is named and not listed again: links that fan out and meet
/// again ("diamonds", each level doubling the paths) would otherwise list 2^levels copies.
pub const MAX_FOLDERS_LISTED_AGAIN: usize = 1000;

/// The identity of a folder: (device, inode) on Unix; elsewhere none (loops end at the depth limit).
fn folder_id(m: &Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        None
    }
}

/// What a file type that is neither a folder nor a regular file is, for a finding.
fn special_kind(ft: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_block_device() || ft.is_char_device() {
            return "a device";
        }
    }
    let _ = ft;
    "a special file"
}

/// `rel/name` (`name` at the root).
fn join(rel: &str, name: &str) -> String {
    if rel.is_empty() {
        name.to_string()
    } else {
        format!("{rel}/{name}")
    }
}

impl Walk {
    /// Adds an entry; the entry count limit is the one refusal of the whole input (as a zip's).
    fn push(&mut self, e: Entry) -> Result<usize, ArchiveError> {
        self.entries.push(e);
        if self.entries.len() > self.limits.max_entries {
            return Err(ArchiveError::OverLimit {
                what: "number of entries".into(),
                path: None,
                value: self.entries.len() as u64,
                limit: self.limits.max_entries as u64,
            });
        }
        Ok(self.entries.len() - 1)
    }

    /// Adds an entry the input cannot give (`folder`: files may lie inside it, unlisted; `is_dir`: it is known
    /// to be a folder).
    fn push_inaccessible(
        &mut self,
        path: String,
        is_dir: bool,
        folder: bool,
        reason: String,
    ) -> Result<(), ArchiveError> {
        let pos = self.push(Entry { path: path.clone(), size: 0, compressed_size: 0, is_dir, modified_ms: None })?;
        self.blocked.insert(pos, self.unreadable.len());
        self.unreadable.push((path.clone(), ArchiveError::Inaccessible { path, reason, folder }));
        Ok(())
    }

    /// Marks a listed folder as one whose listing failed (its entry stays a folder).
    fn folder_unreadable(&mut self, pos: usize, reason: String) {
        let path = self.entries[pos].path.clone();
        self.blocked.insert(pos, self.unreadable.len());
        self.unreadable.push((path.clone(), ArchiveError::Inaccessible { path, reason, folder: true }));
    }

    /// Lists folder `dir` (relative path `rel`, `depth` components) into the walk. A failure inside is an
    /// entry the input cannot give; only the entry count limit is an error.
    fn folder(&mut self, dir: &Path, rel: &str, depth: usize, rd: std::fs::ReadDir) -> Result<(), ArchiveError> {
        for item in rd {
            let item = match item {
                Ok(i) => i,
                Err(e) => {
                    // The listing broke off (rare: an I/O error): what follows in this folder is unknown.
                    let reason = format!("folder listing broke off: {e}");
                    match self.entries.iter().rposition(|x| x.path == rel && x.is_dir) {
                        Some(pos) => self.folder_unreadable(pos, reason),
                        None => return Err(ArchiveError::Io { reason: format!("{}: {reason}", dir.display()) }),
                    }
                    return Ok(());
                }
            };
            let os_name = item.file_name();
            let Some(name) = os_name.to_str() else {
                let lossy = join(rel, &os_name.to_string_lossy());
                let is_dir = item.file_type().is_ok_and(|t| t.is_dir());
                self.push_inaccessible(
                    lossy,
                    is_dir,
                    is_dir,
                    "its name is not valid UTF-8 (Spark's paths are)".into(),
                )?;
                continue;
            };
            let path = join(rel, name);
            let full = dir.join(&os_name);
            if depth + 1 > self.limits.max_depth {
                let why = format!("deeper than the limit of {} folder levels; not listed", self.limits.max_depth);
                let is_dir = item.file_type().is_ok_and(|t| t.is_dir());
                self.push_inaccessible(path, is_dir, true, why)?;
                continue;
            }
            let link = item.file_type().map(|t| t.is_symlink()).unwrap_or(false);
            // A link is followed (as Hadoop's local file system reads through it); anything else is not.
            let meta = if link { std::fs::metadata(&full) } else { item.metadata() };
            let meta = match meta {
                Ok(m) => m,
                Err(e) if link => {
                    let to = std::fs::read_link(&full).map(|t| t.display().to_string()).unwrap_or_default();
                    let why = format!("symbolic link to {to:?} that cannot be followed: {e}");
                    self.push_inaccessible(path, false, true, why)?;
                    continue;
                }
                Err(e) => {
                    self.push_inaccessible(path, false, true, e.to_string())?;
                    continue;
                }
            };
            let ft = meta.file_type();
            if ft.is_dir() {
                self.subfolder(&full, path, depth + 1, &meta)?;
            } else if ft.is_file() {
                let size = meta.len();
                let modified_ms = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| d.as_millis() as i64);
                self.bytes = self.bytes.saturating_add(size);
                self.push(Entry { path, size, compressed_size: size, is_dir: false, modified_ms })?;
            } else {
                let why = format!("not a regular file ({}); not opened", special_kind(ft));
                self.push_inaccessible(path, false, false, why)?;
            }
        }
        Ok(())
    }

    /// Lists a folder found in the walk (through a link or not), unless it is one of its own ancestors.
    fn subfolder(&mut self, full: &Path, path: String, depth: usize, meta: &Metadata) -> Result<(), ArchiveError> {
        let pos =
            self.push(Entry { path: path.clone(), size: 0, compressed_size: 0, is_dir: true, modified_ms: None })?;
        let id = folder_id(meta);
        if let Some(anc) = id.and_then(|id| self.ancestors.iter().find(|(a, _)| *a == id)) {
            let to = if anc.1.is_empty() { "the checkpoint folder itself".to_string() } else { anc.1.clone() };
            // Its content is listed already (under the folder it leads back to): nothing unknown lies inside.
            let path = self.entries[pos].path.clone();
            let reason = format!("symbolic link loop: it leads back to {to}; not followed");
            self.blocked.insert(pos, self.unreadable.len());
            self.unreadable.push((path.clone(), ArchiveError::Inaccessible { path, reason, folder: false }));
            return Ok(());
        }
        if let Some(first) = id.and_then(|id| self.seen.get(&id)) {
            if self.listed_again >= MAX_FOLDERS_LISTED_AGAIN {
                let path = self.entries[pos].path.clone();
                let reason = format!(
                    "the same folder as {first}, reached again through a symbolic link; over {MAX_FOLDERS_LISTED_AGAIN} folders were reached again this way, so it is not listed again"
                );
                self.blocked.insert(pos, self.unreadable.len());
                self.unreadable.push((path.clone(), ArchiveError::Inaccessible { path, reason, folder: true }));
                return Ok(());
            }
            self.listed_again += 1;
        } else if let Some(id) = id {
            self.seen.insert(id, path.clone());
        }
        match std::fs::read_dir(full) {
            Ok(rd) => {
                if let Some(id) = id {
                    self.ancestors.push((id, path.clone()));
                }
                let r = self.folder(full, &path, depth, rd);
                if id.is_some() {
                    self.ancestors.pop();
                }
                r
            }
            Err(e) => {
                self.folder_unreadable(pos, format!("folder: {e}"));
                Ok(())
            }
        }
    }
}

impl DirArchive {
    /// Lists `root` recursively. Errors: the root cannot be listed ([`ArchiveError::Io`]), more entries than
    /// [`Limits::max_entries`]. Anything below the root that cannot be listed or read is an entry of
    /// [`Archive::unreadable_entries`] instead.
    pub fn open(root: &Path, limits: Limits) -> Result<Self, ArchiveError> {
        let io = |e: std::io::Error| ArchiveError::Io { reason: format!("{}: {e}", root.display()) };
        let meta = std::fs::metadata(root).map_err(io)?;
        let rd = std::fs::read_dir(root).map_err(io)?;
        let mut walk = Walk {
            limits,
            entries: Vec::new(),
            unreadable: Vec::new(),
            blocked: HashMap::new(),
            bytes: 0,
            ancestors: folder_id(&meta).map(|id| (id, String::new())).into_iter().collect(),
            seen: HashMap::new(),
            listed_again: 0,
        };
        walk.folder(root, "", 0, rd)?;
        let Walk { mut entries, unreadable, blocked, bytes, .. } = walk;
        // Sorted by path; `blocked` follows the entries to their new positions.
        let mut order: Vec<usize> = (0..entries.len()).collect();
        order.sort_by(|&a, &b| entries[a].path.cmp(&entries[b].path));
        let blocked: HashMap<usize, usize> =
            order.iter().enumerate().filter_map(|(new, old)| blocked.get(old).map(|&u| (new, u))).collect();
        let mut slots: Vec<Option<Entry>> = entries.drain(..).map(Some).collect();
        let entries: Vec<Entry> = order.iter().filter_map(|&i| slots[i].take()).collect();
        let mut by_path = HashMap::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate().filter(|(_, e)| !e.is_dir) {
            by_path.entry(e.path.clone()).or_insert(i);
        }
        let name =
            root.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| root.display().to_string());
        Ok(DirArchive {
            root: root.to_path_buf(),
            entries,
            by_path,
            unreadable,
            blocked,
            name,
            bytes,
            limits,
            total_read: 0,
        })
    }
}

/// Opens a file read-only and non-blocking (a FIFO put in place after the listing does not block), and
/// checks that what opened is a regular file.
fn open_regular(full: &Path, path: &str) -> Result<std::fs::File, ArchiveError> {
    let inaccessible = |reason: String| ArchiveError::Inaccessible { path: path.to_string(), reason, folder: false };
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let f = opts.open(full).map_err(|e| inaccessible(e.to_string()))?;
    let ft = f.metadata().map_err(|e| inaccessible(e.to_string()))?.file_type();
    if !ft.is_file() {
        return Err(inaccessible(format!("not a regular file ({}); not read", special_kind(ft))));
    }
    Ok(f)
}

impl Archive for DirArchive {
    fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn read(&mut self, path: &str, max_bytes: u64) -> Result<Vec<u8>, ArchiveError> {
        let size = self.by_path.get(path).map_or(0, |&i| self.entries[i].size);
        let mut out = Vec::with_capacity(size.min(max_bytes).min(1 << 20) as usize);
        self.read_each(path, max_bytes, &mut |piece| out.extend_from_slice(piece))?;
        Ok(out)
    }

    fn read_each(&mut self, path: &str, max_bytes: u64, sink: &mut dyn FnMut(&[u8])) -> Result<u64, ArchiveError> {
        let i = *self.by_path.get(path).ok_or_else(|| ArchiveError::NotFound { path: path.to_string() })?;
        if let Some(&u) = self.blocked.get(&i) {
            return Err(self.unreadable[u].1.clone());
        }
        let budget = checkpoint_core::archive::ReadBudget { limits: self.limits, total_read: self.total_read };
        let cap = budget.admit(path, self.entries[i].size, max_bytes)?;
        // The entry's path is its literal components joined by `/` (no component holds a `/`).
        let full = path.split('/').fold(self.root.clone(), |p, c| p.join(c));
        let f = open_regular(&full, path)?;
        // Every byte read is booked, also of a read that fails later.
        let mut handed = 0u64;
        let mut counted = |piece: &[u8]| {
            handed += piece.len() as u64;
            sink(piece)
        };
        let out = checkpoint_core::archive::read_capped_each(f, path, cap, &mut counted);
        self.total_read = self.total_read.saturating_add(handed);
        out.map_err(|e| match e {
            // A read error of the file system, not a stream that does not inflate.
            ArchiveError::Corrupt { path, reason, offset, .. } => ArchiveError::Inaccessible {
                path,
                reason: format!("read error at byte {offset}: {reason}"),
                folder: false,
            },
            e => e,
        })
    }

    fn unreadable_entries(&self) -> &[(String, ArchiveError)] {
        &self.unreadable
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn input_bytes(&self) -> u64 {
        self.bytes
    }
}
