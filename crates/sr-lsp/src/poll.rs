//! The server-side watcher, for clients that do not watch files for the
//! server (no `didChangeWatchedFiles.dynamicRegistration`, e.g. Neovim 0.7).
//!
//! It polls rather than subscribing to the kernel (inotify): a poll needs no
//! watch per directory (inotify's per-user limit is easily reached by a large
//! tree), works on network file systems, sees exactly the files the workspace
//! scan sees ([`sr_files::sr_files`]: ignore files, symlink loops, special
//! files) and reads them only through [`sr_files::read_source`] (size cap,
//! no FIFOs). Its cost is bounded: every [`POLL_EVERY`] it compares the
//! modification stamp of each closed file the database holds (workspace files
//! and imports from elsewhere), and every [`WALK_EVERY`] it walks the
//! workspace folders for new files; when a pass takes longer than a tenth of
//! its period, the period grows to ten times the pass, so comparing and
//! walking each take at most about a tenth of a core. Stats, walks and reads
//! run on a blocking thread; the owner only receives the texts that changed.
//!
//! A file first seen is stamped, then read: the owner ignores a text equal to
//! the one it has, and a write since the server's own read is not missed.

use std::collections::{BTreeSet, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Weak;
use std::time::{Duration, Instant, SystemTime};

use crate::owner::Message;
use crate::shared::Shared;

/// How often closed files' stamps are compared.
const POLL_EVERY: Duration = Duration::from_secs(1);
/// How often the workspace folders are walked for new files.
const WALK_EVERY: Duration = Duration::from_secs(5);

/// Files changed on disk: the new text, or `None` when gone or unreadable.
type Changes = Vec<(PathBuf, Option<String>)>;

/// What tells a file's content changed without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    inode: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp { modified: meta.modified().ok(), len: meta.len(), inode: meta.ino() })
}

/// What one pass looks at: the database's files, which of them are open,
/// and the folders to walk (on walking passes).
struct Pass {
    known: BTreeSet<PathBuf>,
    open: BTreeSet<PathBuf>,
    walk: Vec<PathBuf>,
}

/// Polls until the server is gone.
pub(crate) async fn run(shared: Weak<Shared>) {
    // Per closed file: its stamp at the last look (`None`: not there).
    let mut stamps = HashMap::new();
    let (mut poll_every, mut walk_every) = (POLL_EVERY, WALK_EVERY);
    let mut last_walk = Instant::now();
    loop {
        tokio::time::sleep(poll_every).await;
        let Some(shared) = shared.upgrade() else { return };
        let Some(snapshot) = shared.snapshot().await else { return };
        let walking = last_walk.elapsed() >= walk_every;
        let pass = Pass {
            // Unsaved buffers live under `/untitled/`, never on disk.
            known: snapshot
                .analysis
                .files()
                .unwrap_or_default()
                .into_iter()
                .filter(|p| !p.starts_with("/untitled"))
                .collect(),
            open: snapshot.documents.keys().cloned().collect(),
            walk: if walking { snapshot.roots.to_vec() } else { Vec::new() },
        };
        // A snapshot held across the pass would hold up every write.
        drop(snapshot);
        let started = Instant::now();
        let Ok((kept, changes)) = tokio::task::spawn_blocking(move || check(stamps, &pass)).await else { return };
        stamps = kept;
        let took = started.elapsed();
        if walking {
            walk_every = WALK_EVERY.max(took * 10);
            last_walk = Instant::now();
        } else {
            poll_every = POLL_EVERY.max(took * 10);
        }
        // No generation bump: the open documents, whose positions requests
        // answer in, did not change.
        if !changes.is_empty() {
            shared.send(Message::Disk(changes));
        }
    }
}

/// One pass: the files first seen or whose stamp changed (with their text,
/// `None` when gone or unreadable) and the new files under the walked folders.
fn check(mut stamps: HashMap<PathBuf, Option<Stamp>>, pass: &Pass) -> (HashMap<PathBuf, Option<Stamp>>, Changes) {
    let mut changes = Vec::new();
    stamps.retain(|path, _| pass.known.contains(path) && !pass.open.contains(path));
    for path in pass.known.iter().filter(|p| !pass.open.contains(*p)) {
        let now = stamp(path);
        if stamps.get(path) == Some(&now) {
            continue;
        }
        stamps.insert(path.clone(), now);
        changes.push((path.clone(), now.and_then(|_| sr_files::read_source(path).ok())));
    }
    for root in &pass.walk {
        let scan = sr_files::sr_files(root);
        for path in scan.files {
            if pass.known.contains(&path) || pass.open.contains(&path) {
                continue;
            }
            // Stamped before the read: a write after it shows at the next pass.
            let now = stamp(&path);
            if let Ok(text) = sr_files::read_source(&path) {
                stamps.insert(path.clone(), now);
                changes.push((path, Some(text)));
            }
        }
    }
    (stamps, changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(known: &[&Path], walk: &[&Path]) -> Pass {
        Pass {
            known: known.iter().map(|p| p.to_path_buf()).collect(),
            open: BTreeSet::new(),
            walk: walk.iter().map(|p| p.to_path_buf()).collect(),
        }
    }

    #[test]
    fn a_pass_reports_changed_deleted_and_new_files_once() {
        let dir = std::env::temp_dir().join(format!("sr-lsp-poll-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b, c) = (dir.join("a.sr"), dir.join("b.sr"), dir.join("c.sr"));
        std::fs::write(&a, "flow a:\n    log 1\n").unwrap();
        std::fs::write(&b, "flow b:\n    log 1\n").unwrap();

        // First sight: stamped and read.
        let (stamps, changes) = check(HashMap::new(), &pass(&[&a, &b], &[]));
        assert_eq!(changes.len(), 2);
        std::fs::write(&a, "flow a:\n    log 22\n").unwrap();
        std::fs::remove_file(&b).unwrap();
        std::fs::write(&c, "flow c:\n    log 1\n").unwrap();
        let (stamps, changes) = check(stamps, &pass(&[&a, &b], &[&dir]));
        assert_eq!(
            changes,
            [
                (a.clone(), Some("flow a:\n    log 22\n".to_string())),
                (b.clone(), None),
                (c.clone(), Some("flow c:\n    log 1\n".to_string()))
            ]
        );
        // Nothing changed since: nothing to report.
        let (_, changes) = check(stamps, &pass(&[&a, &c], &[&dir]));
        assert!(changes.is_empty(), "{changes:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
