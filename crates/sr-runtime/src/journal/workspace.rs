//! The work directory as part of the journal. Every tool call a live run
//! journals records the files it changed, each with its state before and
//! after (a hash, the permission bits, a symlink's target text, and the bytes
//! as a `blob` line written once per journal): the jailed file tools' own
//! paths, and for every other tool (the `cli` tool, MCP servers, sandboxed
//! code) a comparison of the work directory before and after the call. A
//! replay makes the recorded changes again, a run going back in time first
//! undoes every change the journal holds (in reverse order: the files as the
//! run started) and then redoes them as it is served its tools, so the files
//! follow the run's position.
//!
//! Bounded ([`Limits`], set by environment variables): a file over the
//! per-file limit, or past the per-run total, is recorded by hash only, and a
//! work directory of more entries than the limit is not compared at all. Each
//! is said when it happens (the call's warnings), and a replay or a run going
//! back in time refuses, naming the file, rather than leave it out or delete
//! what it cannot put back. `.git`, `.streetrace` (at the root), the
//! directories `sr run NAME` searches (`agents/`, …) and the other protected
//! paths (no tool can change them, and the command sandbox makes empty
//! placeholders for them while a command runs) and the runtime's own state
//! are never looked at;
//! FIFOs, sockets and devices are never opened, only warned about.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustix::fs::FileType;
use serde_json::Value;
use sha2::Digest;
use tokio::sync::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};

use super::entry::Recorded;
use super::files::{Change, State, blob_entry, see};
use super::{EffectAt, Journal};
use crate::tools::{Jail, Opened};

mod error;
pub use error::{BadLimit, RestoreError, TooManyEntries};

/// The variables that set the journal's [`Limits`] (a number of bytes or entries).
pub const FILE_BYTES_VAR: &str = "STREETRACE_JOURNAL_FILE_BYTES";
pub const RUN_BYTES_VAR: &str = "STREETRACE_JOURNAL_RUN_BYTES";
pub const ENTRIES_VAR: &str = "STREETRACE_JOURNAL_ENTRIES";

/// How much of the work directory one run's journal keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A file larger than this is recorded by its hash only.
    pub file_bytes: u64,
    /// The most file bytes one run keeps, before and after its changes.
    pub run_bytes: u64,
    /// A work directory with more entries than this is not compared.
    pub entries: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { file_bytes: 8 << 20, run_bytes: 256 << 20, entries: 20_000 }
    }
}

impl Limits {
    /// The defaults, with what the environment sets; a value that is not a
    /// number is an error naming its variable.
    pub fn from_env() -> Result<Limits, BadLimit> {
        let mut limits = Limits::default();
        let read = |var: &'static str| -> Result<Option<u64>, BadLimit> {
            match std::env::var(var) {
                Ok(text) => text.trim().parse::<u64>().map(Some).map_err(|_| BadLimit { var, text }),
                Err(_) => Ok(None),
            }
        };
        if let Some(bytes) = read(FILE_BYTES_VAR)? {
            limits.file_bytes = bytes;
        }
        if let Some(bytes) = read(RUN_BYTES_VAR)? {
            limits.run_bytes = bytes;
        }
        if let Some(entries) = read(ENTRIES_VAR)? {
            limits.entries = usize::try_from(entries).unwrap_or(usize::MAX);
        }
        Ok(limits)
    }
}

/// The run's work directory, seen through its jail.
pub struct Workspace {
    jail: Jail,
    /// The runtime's state, `.git` and `.streetrace`: never compared.
    skipped: Vec<PathBuf>,
    limits: Limits,
    /// Which calls may run at once. A comparison of the whole directory
    /// credits the call with every change made while it ran, so such a call
    /// (a command, an MCP tool) holds it exclusively from its first look to
    /// its last: calls in parallel branches are then attributed to the
    /// branch that made them, at the cost of running such calls one at a
    /// time. The file tools, which change only their own path, share it.
    /// Which paths an arbitrary program touches cannot be known beforehand,
    /// so nothing finer is correct.
    gate: Arc<RwLock<()>>,
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
    /// Warnings not yet given to a call.
    notes: Vec<String>,
    /// Paths warned about (FIFOs and the like), each said once.
    warned: HashSet<String>,
    /// The work directory as the journal knows it (see [`Recorded::view`]):
    /// what a whole-directory call's `tree` line is the difference from.
    view: BTreeMap<String, State>,
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

/// A call's place at the gate, held until its `tool` line is written: a
/// journal's lines of calls that change files then follow one another as
/// the calls did ([`Recorded::view`] relies on it).
pub(crate) struct Turn {
    /// A file tool's: alongside other file tools.
    _shared: Option<OwnedRwLockReadGuard<()>>,
    /// A whole-directory call's: alone.
    _alone: Option<OwnedRwLockWriteGuard<()>>,
}

/// What a tool's call is compared on, and its place at the gate.
pub(crate) enum Before {
    /// These paths (a file tool's), with their states.
    Paths(Vec<(String, State)>, Turn),
    /// The whole directory, as it was, and how it differs from what the
    /// journal knows (the call's `tree`).
    Tree(BTreeMap<String, Seen>, Vec<(String, State)>, Turn),
    /// The directory cannot be compared: why.
    Unknown(TooManyEntries, Turn),
    Nothing,
}

impl Before {
    /// The paths' states a file tool's call starts from.
    pub(crate) fn paths(&self) -> &[(String, State)] {
        match self {
            Before::Paths(paths, _) => paths,
            _ => &[],
        }
    }

    /// How the directory a whole-directory call starts from differs from
    /// what the journal knows.
    pub(crate) fn tree(&self) -> Option<&[(String, State)]> {
        match self {
            Before::Tree(_, delta, _) => Some(delta),
            _ => None,
        }
    }
}

/// What a call did to the work directory.
#[derive(Default)]
pub(crate) struct Captured {
    pub changes: Vec<Change>,
    pub blobs: Vec<Blob>,
    /// Said to the run as it happens, and journaled with the call.
    pub warnings: Vec<String>,
    /// Why the call's changes are not known.
    pub unrecorded: Option<String>,
    /// The call's place at the gate: dropped once its line is written.
    pub turn: Option<Turn>,
}

/// The file tools whose one `path` argument is all they change; other
/// builtin file tools change nothing.
const PATH_WRITERS: [&str; 3] = ["write_file", "append_to_file", "create_directory"];
const READERS: [&str; 3] = ["read_file", "list_directory", "find_in_files"];

impl Workspace {
    /// The work directory of `jail`, with the limits the environment sets
    /// (a bad one is a warning at the first call, and its default applies).
    pub fn new(jail: Jail) -> Workspace {
        let (limits, note) = match Limits::from_env() {
            Ok(limits) => (limits, None),
            Err(e) => (Limits::default(), Some(format!("{e}: the journal's default limits apply"))),
        };
        let mut workspace = Workspace::with_limits(jail, limits);
        workspace.inner.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()).notes.extend(note);
        workspace
    }

    pub fn with_limits(jail: Jail, limits: Limits) -> Workspace {
        let names = crate::protected::NAMES.iter().map(|name| jail.root().join(name.name));
        // What no tool can change is never compared: the sandbox makes empty
        // placeholders for the protected directories (`agents/`, …) while a
        // command runs, which a sibling's comparison would take for a change.
        let skipped = jail.forbidden().iter().cloned().chain(names).chain(jail.protected()).collect();
        Workspace { jail, skipped, limits, gate: Arc::new(RwLock::new(())), inner: Mutex::new(Inner::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// What to compare the call of tool `name` with `args` on, taken before
    /// it runs; waits for its turn at the gate.
    pub(crate) async fn before(&self, name: &str, args: &Value) -> Before {
        if READERS.contains(&name) {
            return Before::Nothing;
        }
        if PATH_WRITERS.contains(&name) {
            let Some(path) = args.get("path").and_then(Value::as_str) else { return Before::Nothing };
            let Ok(relative) = self.jail.relative_path(path) else { return Before::Nothing };
            let turn = Turn { _shared: Some(self.gate.clone().read_owned().await), _alone: None };
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
            return Before::Paths(states, turn);
        }
        // A coding agent's step takes no turn: its code's own tool calls take
        // theirs while the step is open, and would wait for it for ever.
        let alone = match name {
            super::CODE_STEP => None,
            _ => Some(self.gate.clone().write_owned().await),
        };
        let turn = Turn { _shared: None, _alone: alone };
        let mut inner = self.lock();
        let known = match inner.known.take() {
            Some(known) => known,
            None => match self.walk_from(&mut inner, None) {
                Ok(known) => known,
                Err(why) => return Before::Unknown(why, turn),
            },
        };
        let now: BTreeMap<String, State> =
            known.iter().map(|(path, seen)| (path.clone(), seen.state.clone())).collect();
        let delta = delta(&inner.view, &now);
        inner.view = now;
        inner.known = Some(known.clone());
        Before::Tree(known, delta, turn)
    }

    /// The journal's knowledge of the work directory, as a journal read it
    /// (a resumed run's, whose calls' `tree` lines continue from there).
    pub(crate) fn know(&self, view: &BTreeMap<String, State>) {
        self.lock().view.clone_from(view);
    }

    /// The changes the call made, the bytes the journal must hold for them
    /// and what the run must be told; the call's turn at the gate ends.
    pub(crate) fn after(&self, before: Before) -> Captured {
        let mut inner = self.lock();
        let mut captured = Captured::default();
        match before {
            Before::Nothing => {}
            Before::Paths(paths, turn) => {
                captured.turn = Some(turn);
                for (path, before) in paths {
                    let after = self.state_of(&mut inner, Path::new(&path));
                    if after != before {
                        // The next comparison starts from a new walk.
                        inner.known = None;
                        captured.changes.push(Change { path, before, after });
                    }
                }
            }
            Before::Tree(old, _, turn) => {
                captured.turn = Some(turn);
                // Stamps from the latest walk: a file tool may have read
                // files since this one's started.
                let latest = inner.known.take();
                match self.walk_from(&mut inner, Some(latest.as_ref().unwrap_or(&old))) {
                    Ok(new) => {
                        captured.changes = diff(&old, &new, |seen| &seen.state);
                        inner.known = Some(new);
                    }
                    Err(why) => captured.unrecorded = Some(why.to_string()),
                }
            }
            Before::Unknown(why, turn) => {
                captured.turn = Some(turn);
                captured.unrecorded = Some(why.to_string());
            }
        }
        see(&mut inner.view, &captured.changes);
        captured.blobs = captured
            .changes
            .iter()
            .flat_map(|c| [&c.before, &c.after])
            .filter_map(|state| match state {
                State::File { sha256, kept: true, .. } => Some((sha256.clone(), inner.bytes.get(sha256)?.clone())),
                _ => None,
            })
            .collect();
        captured.warnings = std::mem::take(&mut inner.notes);
        for change in &captured.changes {
            for state in [&change.before, &change.after] {
                if let State::File { kept: false, size, .. } = state {
                    captured.warnings.push(self.over_limit(&change.path, *size));
                }
            }
        }
        if let Some(why) = &captured.unrecorded {
            captured.warnings.push(format!("the journal does not record this call's file changes: {why}"));
        }
        captured
    }

    /// The warning about a file recorded by its hash only.
    fn over_limit(&self, path: &str, size: u64) -> String {
        let limit = if size > self.limits.file_bytes {
            format!("over the journal's limit of {} bytes per file ({FILE_BYTES_VAR})", self.limits.file_bytes)
        } else {
            format!("past the journal's limit of {} bytes per run ({RUN_BYTES_VAR})", self.limits.run_bytes)
        };
        format!(
            "{path} ({size} bytes) is recorded by its hash only, {limit}: a replay or going back in time cannot restore it"
        )
    }

    /// The state of `relative` now (a symlink is not followed); a file's
    /// bytes are kept when they fit.
    fn state_of(&self, inner: &mut Inner, relative: &Path) -> State {
        let Ok(stat) = self.jail.lstat(relative) else { return State::Absent };
        let mode = Some(stat.st_mode & 0o7777);
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Directory => State::Dir { mode },
            FileType::Symlink => match self.jail.read_link(relative) {
                Ok(target) => State::Symlink { target: target.to_string_lossy().into_owned() },
                Err(_) => State::Absent,
            },
            FileType::RegularFile => match self.jail.open_read(relative) {
                Ok(Opened::File(file)) => self.file_state(inner, file, mode),
                _ => State::Absent,
            },
            _ => {
                self.special(inner, relative);
                State::Absent
            }
        }
    }

    /// A FIFO, socket or device: never opened, said once.
    fn special(&self, inner: &mut Inner, relative: &Path) {
        let path = slashed(relative);
        if inner.warned.insert(path.clone()) {
            inner.notes.push(format!(
                "{path} is not a regular file, directory or symlink (a FIFO, socket or device): the journal does not record it"
            ));
        }
    }

    fn file_state(&self, inner: &mut Inner, file: std::fs::File, mode: Option<u32>) -> State {
        let limit = self.limits.file_bytes;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        let mut hasher = sha2::Sha256::new();
        let keep = size <= limit && inner.kept.saturating_add(size) <= self.limits.run_bytes;
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
                    if keep && read <= limit {
                        kept.extend_from_slice(&buffer[..n]);
                    }
                }
                Err(_) => break,
            }
        }
        let sha256 = hex(&hasher.finalize());
        let keep = (keep && read <= limit) || inner.bytes.contains_key(&sha256);
        if keep && !inner.bytes.contains_key(&sha256) {
            inner.kept += read;
            inner.bytes.insert(sha256.clone(), kept.into());
        }
        State::File { sha256, size: read, kept: keep, mode }
    }

    /// Every entry under the root (not following symlinks), reading only the
    /// files whose stamp differs from `old`'s; too many entries is an error
    /// saying so.
    fn walk_from(
        &self,
        inner: &mut Inner,
        old: Option<&BTreeMap<String, Seen>>,
    ) -> Result<BTreeMap<String, Seen>, TooManyEntries> {
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
                if found.len() >= self.limits.entries {
                    return Err(TooManyEntries { limit: self.limits.entries });
                }
                let stamp = (
                    meta.ino(),
                    meta.len(),
                    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
                    i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
                );
                let key = slashed(&relative);
                let kind = meta.file_type();
                let state = if kind.is_dir() {
                    stack.push(relative);
                    State::Dir { mode: Some(meta.mode() & 0o7777) }
                } else if kind.is_file() || kind.is_symlink() {
                    match old.and_then(|old| old.get(&key)).filter(|seen| seen.stamp == stamp) {
                        Some(seen) => seen.state.clone(),
                        None => self.state_of(inner, &relative),
                    }
                } else {
                    self.special(inner, &relative);
                    continue;
                };
                found.insert(key, Seen { state, stamp });
            }
        }
        Ok(found)
    }

    /// Writes `state` at `path`, through the jail.
    fn apply(&self, recorded: &Recorded, path: &str, state: &State) -> Result<(), RestoreError> {
        let relative = self.jail.relative_path(path).map_err(|e| RestoreError::Path(e.0))?;
        let failed = |source| RestoreError::Io { path: path.to_string(), source };
        let there = self.jail.lstat(&relative).ok().map(|stat| FileType::from_raw_mode(stat.st_mode));
        // What is there, unless it is a directory: a file, a symlink (removed
        // itself, never its target).
        let clear = || match there {
            Some(FileType::Directory) | None => Ok(()),
            Some(_) => self.jail.remove_file(&relative).map_err(failed),
        };
        match state {
            State::Absent => match there {
                Some(FileType::Directory) => self.jail.remove_dir(&relative).or_else(|e| match e.raw_os_error() {
                    // Not empty: what is left in it is not the journal's to remove.
                    Some(code) if code == rustix::io::Errno::NOTEMPTY.raw_os_error() => Ok(()),
                    _ => Err(failed(e)),
                }),
                Some(_) => self.jail.remove_file(&relative).map_err(failed),
                None => Ok(()),
            },
            State::Dir { mode } => {
                clear()?;
                self.jail.create_dir_all(&relative).map_err(failed)?;
                match mode {
                    Some(mode) => self.jail.set_mode(&relative, *mode).map_err(failed),
                    None => Ok(()),
                }
            }
            State::File { sha256, kept: true, mode, .. } => {
                let Some(bytes) = recorded.blobs.get(sha256) else {
                    return Err(RestoreError::NoBytes { path: path.to_string(), sha256: sha256.clone() });
                };
                clear()?;
                let mut file = self.jail.open_write(&relative, false).map_err(failed)?;
                std::io::Write::write_all(&mut file, bytes).map_err(failed)?;
                drop(file);
                match mode {
                    Some(mode) => self.jail.set_mode(&relative, *mode).map_err(failed),
                    None => Ok(()),
                }
            }
            State::File { kept: false, size, .. } => {
                Err(RestoreError::HashOnly { path: path.to_string(), size: *size })
            }
            State::Symlink { target } => {
                if there == Some(FileType::Directory) {
                    self.jail.remove_dir(&relative).map_err(failed)?;
                } else {
                    clear()?;
                }
                self.jail.symlink(Path::new(target), &relative).map_err(failed)
            }
        }
    }

    /// Makes recorded changes again: each path gets its `after`. When one
    /// cannot be restored nothing is touched, and the error names it.
    pub(crate) fn redo(&self, recorded: &Recorded, changes: &[Change]) -> Result<(), RestoreError> {
        let unrestorable: Vec<String> =
            changes.iter().filter_map(|c| c.after.unrestorable(&c.path, &recorded.blobs)).collect();
        if !unrestorable.is_empty() {
            return Err(RestoreError::CallFiles(unrestorable));
        }
        for change in changes {
            self.apply(recorded, &change.path, &change.after)?;
        }
        self.lock().known = None;
        Ok(())
    }

    /// Puts `paths` back as they were before a call (its `tool_start`'s
    /// states), so that a call cut off after it changed them is made again
    /// from where it started. When one cannot be put back (a file kept by
    /// hash only), nothing is touched and the error names it.
    pub(crate) fn put_back(&self, recorded: &Recorded, paths: &[(String, State)]) -> Result<(), RestoreError> {
        let unrestorable: Vec<String> =
            paths.iter().filter_map(|(path, state)| state.unrestorable(path, &recorded.blobs)).collect();
        if !unrestorable.is_empty() {
            return Err(RestoreError::CutOffCall(unrestorable));
        }
        for (path, state) in paths {
            self.apply(recorded, path, state)?;
        }
        self.lock().known = None;
        Ok(())
    }

    /// Undoes every change the journal holds, last first. When the journal
    /// cannot put back a state it would pass through (a file kept by hash
    /// only, a call whose changes it does not know), nothing is touched and
    /// the error names what.
    pub(crate) fn rewind(&self, recorded: &Recorded) -> Result<(), RestoreError> {
        let mut missing: Vec<String> = recorded
            .all_changes
            .iter()
            .flat_map(|c| [&c.before, &c.after].map(|state| state.unrestorable(&c.path, &recorded.blobs)))
            .flatten()
            .collect();
        missing.extend(recorded.unrecorded.iter().cloned());
        missing.dedup();
        if !missing.is_empty() {
            return Err(RestoreError::GoBack(missing));
        }
        for change in recorded.all_changes.iter().rev() {
            self.apply(recorded, &change.path, &change.before)?;
        }
        self.lock().known = None;
        Ok(())
    }

    /// The file changes of a parallel block's branches, made again in the
    /// recorded order.
    pub(crate) fn settle(&self, recorded: &Recorded, block: &EffectAt) -> Result<(), RestoreError> {
        for (_, changes) in recorded.changes_under(block) {
            self.redo(recorded, changes)?;
        }
        Ok(())
    }

    /// What a call cut off by a crash changed of its paths (a file tool's,
    /// from its `tool_start`): each path as it is now, against `before`.
    pub(crate) fn cut_off(&self, before: &[(String, State)]) -> Captured {
        let mut inner = self.lock();
        let mut captured = Captured::default();
        for (path, before) in before {
            let after = self.state_of(&mut inner, Path::new(path));
            if after != *before {
                captured.changes.push(Change { path: path.clone(), before: before.clone(), after });
            }
        }
        inner.known = None;
        see(&mut inner.view, &captured.changes);
        captured.blobs = captured
            .changes
            .iter()
            .filter_map(|c| match &c.after {
                State::File { sha256, kept: true, .. } => Some((sha256.clone(), inner.bytes.get(sha256)?.clone())),
                _ => None,
            })
            .collect();
        captured
    }

    /// What a whole-directory call cut off by a crash changed: the directory
    /// as it is now against `then`, the journal's knowledge of it when the
    /// call started. A `before` whose bytes the journal lacks is marked so:
    /// a replay redoes the change, going back in time refuses to undo it.
    pub(crate) fn cut_off_tree(&self, then: &BTreeMap<String, State>, recorded: &Recorded) -> Captured {
        let mut inner = self.lock();
        let mut captured = Captured::default();
        let now = match self.walk_from(&mut inner, None) {
            Ok(now) => now,
            Err(why) => {
                captured.unrecorded = Some(why.to_string());
                return captured;
            }
        };
        let now_states: BTreeMap<String, State> = now.iter().map(|(p, seen)| (p.clone(), seen.state.clone())).collect();
        captured.changes = diff(then, &now_states, |state| state);
        for change in &mut captured.changes {
            if let State::File { sha256, kept, .. } = &mut change.before
                && !recorded.blobs.contains_key(sha256.as_str())
            {
                *kept = false;
            }
        }
        inner.known = Some(now);
        see(&mut inner.view, &captured.changes);
        captured.blobs = captured
            .changes
            .iter()
            .filter_map(|c| match &c.after {
                State::File { sha256, kept: true, .. } => Some((sha256.clone(), inner.bytes.get(sha256)?.clone())),
                _ => None,
            })
            .collect();
        captured
    }

    /// The blobs of the states `paths` hold (a file tool's call, before it
    /// runs: a call cut off can then be undone).
    pub(crate) fn blobs_of(&self, paths: &[(String, State)]) -> Vec<Blob> {
        let inner = self.lock();
        paths
            .iter()
            .filter_map(|(_, state)| match state {
                State::File { sha256, kept: true, .. } => Some((sha256.clone(), inner.bytes.get(sha256)?.clone())),
                _ => None,
            })
            .collect()
    }
}

/// The changes from `old` to `new` (each entry's state as `state` gives it):
/// creations parents first, removals children first, so that they can be
/// made in order.
fn diff<T>(old: &BTreeMap<String, T>, new: &BTreeMap<String, T>, state: impl Fn(&T) -> &State) -> Vec<Change> {
    let mut made = Vec::new();
    let mut removed = Vec::new();
    for (path, seen) in new {
        let after = state(seen);
        match old.get(path).map(&state) {
            Some(before) if before == after => {}
            Some(before) => made.push(Change { path: path.clone(), before: before.clone(), after: after.clone() }),
            None => made.push(Change { path: path.clone(), before: State::Absent, after: after.clone() }),
        }
    }
    for (path, seen) in old {
        if !new.contains_key(path) {
            removed.push(Change { path: path.clone(), before: state(seen).clone(), after: State::Absent });
        }
    }
    removed.reverse();
    made.extend(removed);
    made
}

/// What differs in `now` from `known`: each path's state now, `absent` for
/// one gone.
fn delta(known: &BTreeMap<String, State>, now: &BTreeMap<String, State>) -> Vec<(String, State)> {
    diff(known, now, |state| state).into_iter().map(|change| (change.path, change.after)).collect()
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
    pub(crate) fn write_blobs(&self, blobs: &[Blob]) -> Result<(), super::JournalError> {
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

    #[tokio::test]
    async fn a_tree_comparison_sees_what_a_command_made_changed_and_removed() {
        let root = dir("tree");
        std::fs::write(root.join("keep.txt"), "same").unwrap();
        std::fs::write(root.join("edit.txt"), "old").unwrap();
        std::fs::create_dir_all(root.join("gone")).unwrap();
        std::fs::write(root.join("gone/x"), "x").unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let workspace = Workspace::new(Jail::new(&root).unwrap());
        let before = workspace.before("execute_cli_command", &json!({})).await;
        std::fs::write(root.join("edit.txt"), "new").unwrap();
        std::fs::remove_dir_all(root.join("gone")).unwrap();
        std::fs::create_dir_all(root.join("made/deep")).unwrap();
        std::fs::write(root.join("made/deep/f"), "f").unwrap();
        std::fs::write(root.join(".git/HEAD"), "ignored").unwrap();
        let Captured { changes, blobs, .. } = workspace.after(before);
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

    /// Found by `cargo xtask simulate` (seed 20261148): the placeholder the
    /// sandbox makes for `agents/` while a command runs was journaled as a
    /// change, which a replay then refused to restore.
    #[tokio::test]
    async fn protected_directories_are_never_compared() {
        let root = dir("protected");
        let jail = Jail::new(&root).unwrap().protect_dir(&root.join("agents"));
        let workspace = Workspace::new(jail);
        let before = workspace.before("execute_cli_command", &json!({})).await;
        std::fs::create_dir_all(root.join("agents")).unwrap();
        std::fs::write(root.join("made.txt"), "made").unwrap();
        let Captured { changes, .. } = workspace.after(before);
        let paths: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["made.txt"]);
    }

    fn kind(state: &State) -> &'static str {
        match state {
            State::Absent => "absent",
            State::Dir { .. } => "dir",
            State::Symlink { .. } => "symlink",
            State::File { .. } => "file",
        }
    }

    #[tokio::test]
    async fn changes_are_undone_and_redone_through_the_jail() {
        let root = dir("undo");
        std::fs::write(root.join("a.txt"), "before").unwrap();
        let workspace = Workspace::new(Jail::new(&root).unwrap());
        let before = workspace.before("write_file", &json!({"path": "sub/b.txt"})).await;
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/b.txt"), "made").unwrap();
        let Captured { changes: made, blobs, .. } = workspace.after(before);
        let before = workspace.before("write_file", &json!({"path": "a.txt"})).await;
        std::fs::write(root.join("a.txt"), "after").unwrap();
        let Captured { changes: edited, blobs: more, .. } = workspace.after(before);
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
            after: State::File { sha256: "00".into(), size: 1, kept: true, mode: None },
        };
        recorded.blobs.insert("00".into(), Arc::from(&b"x"[..]));
        assert!(workspace.redo(&recorded, &[outside]).is_err());
        assert!(!root.parent().unwrap().join("escaped.txt").exists());
    }

    #[test]
    fn a_journal_cannot_plant_a_symlink_where_tools_may_not_write() {
        let root = dir("plant");
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        let workspace = Workspace::new(Jail::new(&root).unwrap());
        let recorded = Recorded::default();
        let hook = Change {
            path: ".git/hooks/pre-commit".into(),
            before: State::Absent,
            after: State::Symlink { target: "/bin/sh".into() },
        };
        assert!(workspace.redo(&recorded, &[hook]).is_err());
        assert!(root.join(".git/hooks/pre-commit").symlink_metadata().is_err());
        // A symlink's target is never followed to set its mode.
        std::os::unix::fs::symlink("/etc/passwd", root.join("out")).unwrap();
        let chmod = Change { path: "out".into(), before: State::Absent, after: State::Dir { mode: Some(0o777) } };
        let before = std::fs::metadata("/etc/passwd").unwrap().permissions();
        let _ = workspace.redo(&recorded, &[chmod]);
        assert_eq!(std::fs::metadata("/etc/passwd").unwrap().permissions(), before);
    }
}
