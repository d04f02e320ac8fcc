//! The work directory as part of the journal. Every tool call a live run
//! journals records the files it changed, each with its state before and
//! after (a hash, and the bytes as a `blob` line written once per journal):
//! the jailed file tools' own paths, and for every other tool (the `cli`
//! tool, MCP servers, sandboxed code) a comparison of the work directory
//! before and after the call. A replay makes the recorded changes again, a
//! run going back in time first undoes every change the journal holds (in
//! reverse order: the files as the run started) and then redoes them as it is
//! served its tools, so the files follow the run's position.
//!
//! Bounded: files over [`MAX_KEPT_FILE`] and bytes past [`MAX_KEPT_TOTAL`] per
//! run are recorded by hash only (such a change is known but not undone), and a
//! work directory of more than [`MAX_ENTRIES`] entries is not compared at all.
//! `.git` and the runtime's own state are never looked at.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use sha2::Digest;

use super::entry::Recorded;
use super::files::{Change, State, blob_entry};
use super::{EffectAt, Journal};
use crate::tools::{Jail, Opened};

/// A file larger than this is recorded by its hash only.
pub const MAX_KEPT_FILE: u64 = 8 << 20;
/// The most file bytes one run keeps, before and after its changes.
pub const MAX_KEPT_TOTAL: u64 = 256 << 20;
/// A work directory with more entries than this is not compared.
pub const MAX_ENTRIES: usize = 20_000;

/// The run's work directory, seen through its jail.
pub struct Workspace {
    jail: Jail,
    /// The runtime's state and `.git`: never compared.
    skipped: Vec<PathBuf>,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The last state seen of every entry, with what tells a change, once
    /// the first call that needs a comparison has walked the directory.
    known: Option<BTreeMap<String, Seen>>,
    /// Bytes of files as they were, by hash, for the `before` of a change.
    bytes: HashMap<String, Arc<[u8]>>,
    kept: u64,
    /// The directory was too big to compare: said once.
    too_big: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Seen {
    state: State,
    /// inode, size, mtime and ctime in nanoseconds: a file whose stamp is
    /// unchanged is not read again.
    stamp: (u64, u64, i128, i128),
}

/// A file's bytes by their hash, for a `blob` line.
pub(crate) type Blob = (String, Arc<[u8]>);

/// What a tool's call is compared on.
pub(crate) enum Before {
    /// These paths (a file tool's), with their states.
    Paths(Vec<(String, State)>),
    /// The whole directory, as it was.
    Tree(BTreeMap<String, Seen>),
    Nothing,
}

/// The file tools whose one `path` argument is all they change; other
/// builtin file tools change nothing.
const PATH_WRITERS: [&str; 3] = ["write_file", "append_to_file", "create_directory"];
const READERS: [&str; 3] = ["read_file", "list_directory", "find_in_files"];

impl Workspace {
    pub fn new(jail: Jail) -> Workspace {
        let skipped = jail.forbidden().iter().cloned().chain([jail.root().join(".git")]).collect();
        Workspace { jail, skipped, inner: Mutex::new(Inner::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// What to compare the call of tool `name` with `args` on, taken before it runs.
    pub(crate) fn before(&self, name: &str, args: &Value) -> Before {
        if READERS.contains(&name) {
            return Before::Nothing;
        }
        if PATH_WRITERS.contains(&name) {
            let Some(path) = args.get("path").and_then(Value::as_str) else { return Before::Nothing };
            let Ok(relative) = self.jail.relative_path(path) else { return Before::Nothing };
            // The path and each of its ancestors: writing a file makes its
            // missing directories.
            let mut paths = Vec::new();
            let mut current = relative.as_path();
            while !current.as_os_str().is_empty() && current != Path::new(".") {
                paths.push(current.to_path_buf());
                current = current.parent().unwrap_or(Path::new(""));
            }
            let mut inner = self.lock();
            let states = paths.into_iter().rev().map(|p| (slashed(&p), self.state_of(&mut inner, &p))).collect();
            return Before::Paths(states);
        }
        let mut inner = self.lock();
        if inner.known.is_none() {
            inner.known = self.walk(&mut inner);
        }
        match &inner.known {
            Some(known) => Before::Tree(known.clone()),
            None => Before::Nothing,
        }
    }

    /// The changes the call made, and the bytes the journal must hold for them.
    pub(crate) fn after(&self, before: Before) -> (Vec<Change>, Vec<Blob>) {
        let mut inner = self.lock();
        let mut changes = Vec::new();
        match before {
            Before::Nothing => {}
            Before::Paths(paths) => {
                for (path, before) in paths {
                    let after = self.state_of(&mut inner, Path::new(&path));
                    if after != before {
                        // The next comparison starts from a new walk.
                        inner.known = None;
                        changes.push(Change { path, before, after });
                    }
                }
            }
            Before::Tree(old) => {
                // Stamps from the latest walk: a branch's call may have read
                // files since this one's started.
                let latest = inner.known.take();
                let new = self.walk_from(&mut inner, Some(latest.as_ref().unwrap_or(&old)));
                if let Some(new) = &new {
                    changes = diff(&old, new);
                }
                inner.known = new;
            }
        }
        let blobs = changes
            .iter()
            .flat_map(|c| [&c.before, &c.after])
            .filter_map(|state| match state {
                State::File { sha256, kept: true, .. } => Some((sha256.clone(), inner.bytes.get(sha256)?.clone())),
                _ => None,
            })
            .collect();
        (changes, blobs)
    }

    /// The state of `relative` now; a file's bytes are kept when they fit.
    fn state_of(&self, inner: &mut Inner, relative: &Path) -> State {
        match self.jail.open_read(relative) {
            Ok(Opened::Dir(_)) => State::Dir,
            Ok(Opened::File(file)) => self.file_state(inner, file),
            Err(_) => State::Absent,
        }
    }

    fn file_state(&self, inner: &mut Inner, file: std::fs::File) -> State {
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        let mut hasher = sha2::Sha256::new();
        let keep = size <= MAX_KEPT_FILE && inner.kept + size <= MAX_KEPT_TOTAL;
        let mut kept = Vec::new();
        let mut reader = std::io::BufReader::new(file);
        let mut buffer = vec![0u8; 64 << 10];
        let mut read = 0u64;
        loop {
            match reader.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => {
                    hasher.update(&buffer[..n]);
                    read += n as u64;
                    if keep && read <= MAX_KEPT_FILE {
                        kept.extend_from_slice(&buffer[..n]);
                    }
                }
                Err(_) => break,
            }
        }
        let sha256 = hex(&hasher.finalize());
        let keep = keep && read <= MAX_KEPT_FILE;
        if keep && !inner.bytes.contains_key(&sha256) {
            inner.kept += read;
            inner.bytes.insert(sha256.clone(), kept.into());
        }
        State::File { sha256, size: read, kept: keep }
    }

    fn walk(&self, inner: &mut Inner) -> Option<BTreeMap<String, Seen>> {
        self.walk_from(inner, None)
    }

    /// Every entry under the root (not following symlinks), reading only the
    /// files whose stamp differs from `old`'s.
    fn walk_from(&self, inner: &mut Inner, old: Option<&BTreeMap<String, Seen>>) -> Option<BTreeMap<String, Seen>> {
        let mut found = BTreeMap::new();
        let mut stack = vec![PathBuf::new()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(self.jail.root().join(&dir)) else { continue };
            for entry in entries.flatten() {
                let relative = dir.join(entry.file_name());
                let absolute = self.jail.root().join(&relative);
                if self.skipped.iter().any(|s| absolute.starts_with(s)) {
                    continue;
                }
                let Ok(meta) = entry.metadata() else { continue };
                if found.len() >= MAX_ENTRIES {
                    inner.too_big = true;
                    return None;
                }
                let stamp = (
                    meta.ino(),
                    meta.len(),
                    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
                    i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
                );
                let key = slashed(&relative);
                let state = if meta.is_dir() {
                    stack.push(relative);
                    State::Dir
                } else if meta.is_file() {
                    match old.and_then(|old| old.get(&key)).filter(|seen| seen.stamp == stamp) {
                        Some(seen) => seen.state.clone(),
                        None => self.state_of(inner, &relative),
                    }
                } else {
                    // Symlinks, FIFOs, sockets and devices are not the run's files.
                    continue;
                };
                found.insert(key, Seen { state, stamp });
            }
        }
        Some(found)
    }

    /// Writes `state` at `path`, through the jail.
    fn apply(&self, recorded: &Recorded, path: &str, state: &State) -> Result<(), String> {
        let relative = self.jail.relative_path(path).map_err(|e| e.0)?;
        let failed = |e: std::io::Error| format!("cannot restore {path}: {e}");
        match state {
            State::Absent => match self.jail.open_read(&relative) {
                Ok(Opened::Dir(_)) => self.jail.remove_dir(&relative).or_else(|e| match e.raw_os_error() {
                    // Not empty: what is left in it is not the journal's to remove.
                    Some(code) if code == rustix::io::Errno::NOTEMPTY.raw_os_error() => Ok(()),
                    _ => Err(failed(e)),
                }),
                Ok(Opened::File(_)) => self.jail.remove_file(&relative).map_err(failed),
                Err(_) => Ok(()),
            },
            State::Dir => self.jail.create_dir_all(&relative).map_err(failed),
            State::File { sha256, kept: true, .. } => {
                let Some(bytes) = recorded.blobs.get(sha256) else { return Ok(()) };
                let mut file = self.jail.open_write(&relative, false).map_err(failed)?;
                std::io::Write::write_all(&mut file, bytes).map_err(failed)
            }
            // Too large to keep: the change is known, not undone.
            State::File { kept: false, .. } => Ok(()),
        }
    }

    /// Makes recorded changes again: each path gets its `after`.
    pub(crate) fn redo(&self, recorded: &Recorded, changes: &[Change]) -> Result<(), String> {
        for change in changes {
            self.apply(recorded, &change.path, &change.after)?;
        }
        self.lock().known = None;
        Ok(())
    }

    /// Undoes every change the journal holds, last first.
    pub(crate) fn rewind(&self, recorded: &Recorded) -> Result<(), String> {
        for change in recorded.all_changes.iter().rev() {
            self.apply(recorded, &change.path, &change.before)?;
        }
        self.lock().known = None;
        Ok(())
    }

    /// The file changes of a parallel block's branches, made again in the
    /// recorded order.
    pub(crate) fn settle(&self, recorded: &Recorded, block: &EffectAt) -> Result<(), String> {
        for (_, changes) in recorded.changes_under(block) {
            self.redo(recorded, changes)?;
        }
        Ok(())
    }
}

/// The changes from `old` to `new`: creations parents first, removals
/// children first, so that they can be made in order.
fn diff(old: &BTreeMap<String, Seen>, new: &BTreeMap<String, Seen>) -> Vec<Change> {
    let mut made = Vec::new();
    let mut removed = Vec::new();
    for (path, seen) in new {
        match old.get(path) {
            Some(before) if before.state == seen.state => {}
            Some(before) => {
                made.push(Change { path: path.clone(), before: before.state.clone(), after: seen.state.clone() })
            }
            None => made.push(Change { path: path.clone(), before: State::Absent, after: seen.state.clone() }),
        }
    }
    for (path, seen) in old {
        if !new.contains_key(path) {
            removed.push(Change { path: path.clone(), before: seen.state.clone(), after: State::Absent });
        }
    }
    removed.reverse();
    made.extend(removed);
    made
}

fn slashed(path: &Path) -> String {
    path.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes.iter().flat_map(|b| [DIGITS[usize::from(b >> 4)] as char, DIGITS[usize::from(b & 15)] as char]).collect()
}

impl Journal {
    /// Writes the blobs of a call's changes that the journal does not hold yet.
    pub(crate) fn write_blobs(&self, blobs: &[Blob]) -> Result<(), String> {
        let Some(writer) = &self.writer else { return Ok(()) };
        for (sha256, bytes) in blobs {
            let new = writer.blobs.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(sha256.clone());
            if new {
                self.write(&blob_entry(sha256, bytes))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sr-workspace-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_tree_comparison_sees_what_a_command_made_changed_and_removed() {
        let root = dir("tree");
        std::fs::write(root.join("keep.txt"), "same").unwrap();
        std::fs::write(root.join("edit.txt"), "old").unwrap();
        std::fs::create_dir_all(root.join("gone")).unwrap();
        std::fs::write(root.join("gone/x"), "x").unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let workspace = Workspace::new(Jail::new(&root).unwrap());
        let before = workspace.before("execute_cli_command", &json!({}));
        std::fs::write(root.join("edit.txt"), "new").unwrap();
        std::fs::remove_dir_all(root.join("gone")).unwrap();
        std::fs::create_dir_all(root.join("made/deep")).unwrap();
        std::fs::write(root.join("made/deep/f"), "f").unwrap();
        std::fs::write(root.join(".git/HEAD"), "ignored").unwrap();
        let (changes, blobs) = workspace.after(before);
        let shown: Vec<String> =
            changes.iter().map(|c| format!("{} {}->{}", c.path, kind(&c.before), kind(&c.after))).collect();
        assert_eq!(
            shown,
            [
                "edit.txt file->file",
                "made absent->dir",
                "made/deep absent->dir",
                "made/deep/f absent->file",
                "gone/x file->absent",
                "gone dir->absent",
            ]
        );
        // The old and new bytes of every changed file are there to restore.
        let texts: Vec<&[u8]> = blobs.iter().map(|(_, b)| &**b).collect();
        for text in [&b"old"[..], b"new", b"x", b"f"] {
            assert!(texts.contains(&text), "{text:?} missing from {texts:?}");
        }
    }

    fn kind(state: &State) -> &'static str {
        match state {
            State::Absent => "absent",
            State::Dir => "dir",
            State::File { .. } => "file",
        }
    }

    #[test]
    fn changes_are_undone_and_redone_through_the_jail() {
        let root = dir("undo");
        std::fs::write(root.join("a.txt"), "before").unwrap();
        let workspace = Workspace::new(Jail::new(&root).unwrap());
        let before = workspace.before("write_file", &json!({"path": "sub/b.txt"}));
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/b.txt"), "made").unwrap();
        let (made, blobs) = workspace.after(before);
        let before = workspace.before("write_file", &json!({"path": "a.txt"}));
        std::fs::write(root.join("a.txt"), "after").unwrap();
        let (edited, more) = workspace.after(before);
        let mut recorded = Recorded::default();
        for (hash, bytes) in blobs.into_iter().chain(more) {
            recorded.blobs.insert(hash, bytes);
        }
        recorded.all_changes = made.iter().chain(&edited).cloned().collect();
        workspace.rewind(&recorded).unwrap();
        assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "before");
        assert!(!root.join("sub").exists(), "the directory the write made is gone");
        workspace.redo(&recorded, &made).unwrap();
        workspace.redo(&recorded, &edited).unwrap();
        assert_eq!(std::fs::read_to_string(root.join("sub/b.txt")).unwrap(), "made");
        assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "after");

        // A journal naming a path outside the work directory restores nothing there.
        let outside = Change {
            path: "../escaped.txt".into(),
            before: State::Absent,
            after: State::File { sha256: "00".into(), size: 1, kept: true },
        };
        recorded.blobs.insert("00".into(), Arc::from(&b"x"[..]));
        assert!(workspace.redo(&recorded, &[outside]).is_err());
        assert!(!root.parent().unwrap().join("escaped.txt").exists());
    }
}
