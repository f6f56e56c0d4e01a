//! A directory on disk seen through the core's [`Archive`] trait (native only: the core does no I/O).
//! Walks the tree once (no symlinks followed), applies the same limits as a zip (entry count, depth,
//! per-file and total bytes), and reads files only when asked.

use checkpoint_core::archive::normalize_path;
use checkpoint_core::{Archive, ArchiveError, Entry, Limits};
use std::path::{Path, PathBuf};

/// A directory as an archive.
pub struct DirArchive {
    root: PathBuf,
    entries: Vec<Entry>,
    /// Position in `entries` of each file, by path (a linear search per read made 10^5 log files quadratic).
    by_path: std::collections::HashMap<String, usize>,
    name: String,
    bytes: u64,
    limits: Limits,
    total_read: u64,
}

impl DirArchive {
    /// Lists `root` recursively.
    pub fn open(root: &Path, limits: Limits) -> Result<Self, ArchiveError> {
        let mut entries = Vec::new();
        let mut bytes = 0u64;
        let mut stack = vec![(root.to_path_buf(), 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            let rd =
                std::fs::read_dir(&dir).map_err(|e| ArchiveError::Io { reason: format!("{}: {e}", dir.display()) })?;
            for item in rd {
                let item = item.map_err(|e| ArchiveError::Io { reason: e.to_string() })?;
                let ft = item.file_type().map_err(|e| ArchiveError::Io { reason: e.to_string() })?;
                if ft.is_symlink() {
                    continue;
                }
                let p = item.path();
                let rel = p.strip_prefix(root).map_err(|e| ArchiveError::Io { reason: e.to_string() })?;
                let rel = rel.to_string_lossy().replace('\\', "/");
                let path = normalize_path(&rel, limits.max_depth)?;
                if ft.is_dir() {
                    entries.push(Entry { path, size: 0, compressed_size: 0, is_dir: true, modified_ms: None });
                    stack.push((p, depth + 1));
                } else if ft.is_file() {
                    let meta = item.metadata().ok();
                    let size = meta.as_ref().map(|m| m.len()).unwrap_or(0);
                    let modified_ms = meta
                        .and_then(|m| m.modified().ok())
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map(|d| d.as_millis() as i64);
                    bytes = bytes.saturating_add(size);
                    entries.push(Entry { path, size, compressed_size: size, is_dir: false, modified_ms });
                }
                if entries.len() > limits.max_entries {
                    return Err(ArchiveError::OverLimit {
                        what: "number of entries".into(),
                        path: None,
                        value: entries.len() as u64,
                        limit: limits.max_entries as u64,
                    });
                }
            }
        }
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        let by_path = entries.iter().enumerate().filter(|(_, e)| !e.is_dir).map(|(i, e)| (e.path.clone(), i)).collect();
        let name =
            root.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| root.display().to_string());
        Ok(DirArchive { root: root.to_path_buf(), entries, by_path, name, bytes, limits, total_read: 0 })
    }
}

impl Archive for DirArchive {
    fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn read(&mut self, path: &str, max_bytes: u64) -> Result<Vec<u8>, ArchiveError> {
        let e = self
            .by_path
            .get(path)
            .map(|&i| &self.entries[i])
            .ok_or_else(|| ArchiveError::NotFound { path: path.to_string() })?;
        let budget = checkpoint_core::archive::ReadBudget { limits: self.limits, total_read: self.total_read };
        let cap = budget.admit(path, e.size, max_bytes)?;
        let f = std::fs::File::open(self.root.join(path))
            .map_err(|e| ArchiveError::Io { reason: format!("{path}: {e}") })?;
        let out = checkpoint_core::archive::read_capped(f, path, cap)?;
        self.total_read += out.len() as u64;
        Ok(out)
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn input_bytes(&self) -> u64 {
        self.bytes
    }
}
