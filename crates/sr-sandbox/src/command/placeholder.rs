//! The empty directories and files made on the host for missing covered paths
//! while a command runs (`mounts`). Each is stamped as ours: its modification
//! time is one second after the epoch, with the process id of the process that
//! made it as the nanoseconds. A process killed before its command ended
//! (`kill -9`) leaves its placeholders behind; a later process removes one it
//! finds stamped by a process that no longer runs, still empty, and never one
//! of a process still running: that process may have a command whose cover
//! stands on it. "Runs" is what this process's pid namespace shows: two `sr`
//! processes in different pid namespaces (containers) must not share a work
//! directory, or one may take the other's running stand-in for a crash's.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use rustix::fs::{AtFlags, CWD, Timespec, Timestamps, utimensat};

/// The stamp's seconds: no real file is modified one second after the epoch.
const STAMP_SECONDS: i64 = 1;

/// Placeholders this process made, by path: how many commands use each, and
/// which file it is, so that only that file is ever removed.
static PLACEHOLDERS: Mutex<BTreeMap<PathBuf, Made>> = Mutex::new(BTreeMap::new());

struct Made {
    users: usize,
    device: u64,
    inode: u64,
}

/// One command's use of a placeholder.
pub(super) struct Placeholder {
    path: PathBuf,
}

impl Placeholder {
    /// A use of the placeholder at `path`, made now (a directory or an empty
    /// file) if nothing is there, or taken over from a process that ended
    /// without removing it; `None` when something real is.
    pub(super) fn claim(path: &Path, directory: bool) -> io::Result<Option<Placeholder>> {
        let mut made = PLACEHOLDERS.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = made.get_mut(path) {
            entry.users += 1;
            return Ok(Some(Placeholder { path: path.to_path_buf() }));
        }
        match path.symlink_metadata() {
            Ok(meta) if left_behind(&meta) && meta.is_dir() == directory => {}
            Ok(_) => return Ok(None),
            Err(_) if directory => fs::create_dir(path)?,
            Err(_) => drop(fs::OpenOptions::new().write(true).create_new(true).open(path)?),
        }
        stamp(path)?;
        let meta = path.symlink_metadata()?;
        // As root, the work directory's owner can remove one left by a crash.
        if crate::backend::running_as_root()
            && let Some(parent) = path.parent().and_then(|parent| parent.metadata().ok())
        {
            let _ = std::os::unix::fs::lchown(path, Some(parent.uid()), Some(parent.gid()));
        }
        made.insert(path.to_path_buf(), Made { users: 1, device: meta.dev(), inode: meta.ino() });
        Ok(Some(Placeholder { path: path.to_path_buf() }))
    }
}

impl Drop for Placeholder {
    fn drop(&mut self) {
        let mut made = PLACEHOLDERS.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(entry) = made.get_mut(&self.path) else { return };
        entry.users -= 1;
        if entry.users > 0 {
            return;
        }
        let Some(Made { device, inode, .. }) = made.remove(&self.path) else { return };
        // Only the empty file or directory we made: anything else is someone's.
        if let Ok(meta) = self.path.symlink_metadata()
            && (meta.dev(), meta.ino()) == (device, inode)
        {
            remove_empty(&self.path, &meta);
        }
    }
}

/// Removes the placeholder at `path` if a process that no longer runs left
/// it there, still empty.
pub(super) fn remove_left_behind(path: &Path) {
    let made = PLACEHOLDERS.lock().unwrap_or_else(PoisonError::into_inner);
    if made.contains_key(path) {
        return;
    }
    if let Ok(meta) = path.symlink_metadata()
        && left_behind(&meta)
    {
        remove_empty(path, &meta);
    }
}

/// Marks the file at `path` as this process's placeholder.
fn stamp(path: &Path) -> io::Result<()> {
    let time = Timespec { tv_sec: STAMP_SECONDS, tv_nsec: std::process::id().into() };
    let times = Timestamps { last_access: time, last_modification: time };
    utimensat(CWD, path, &times, AtFlags::SYMLINK_NOFOLLOW).map_err(io::Error::from)
}

/// Whether `meta` is of a placeholder stamped by a process that no longer runs.
fn left_behind(meta: &fs::Metadata) -> bool {
    if meta.mtime() != STAMP_SECONDS || meta.file_type().is_symlink() {
        return false;
    }
    let Ok(pid) = u32::try_from(meta.mtime_nsec()) else { return false };
    // A process id the kernel does not know: the process ended. (One reused
    // since only keeps the placeholder a while longer.)
    pid != 0 && pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists()
}

fn remove_empty(path: &Path, meta: &fs::Metadata) {
    if meta.is_dir() {
        let _ = fs::remove_dir(path);
    } else if meta.len() == 0 {
        let _ = fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A placeholder as a process with id `pid` stamps it.
    fn stamped_by(path: &Path, pid: u32) {
        let time = Timespec { tv_sec: STAMP_SECONDS, tv_nsec: pid.into() };
        let times = Timestamps { last_access: time, last_modification: time };
        utimensat(CWD, path, &times, AtFlags::SYMLINK_NOFOLLOW).unwrap();
    }

    /// A process id no process has: past the kernel's highest.
    fn ended_pid() -> u32 {
        let max: u32 = fs::read_to_string("/proc/sys/kernel/pid_max").unwrap().trim().parse().unwrap();
        max + 1
    }

    #[test]
    fn a_placeholder_a_crash_left_is_removed_and_one_in_use_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let left = dir.path().join(".git");
        let in_use = dir.path().join(".vscode");
        let full = dir.path().join("agents");
        let real = dir.path().join(".streetrace");
        for path in [&left, &in_use, &full, &real] {
            fs::create_dir(path).unwrap();
        }
        stamped_by(&left, ended_pid());
        stamped_by(&full, ended_pid());
        fs::write(full.join("a.sr"), "").unwrap();
        stamped_by(&full, ended_pid());
        // The test's parent runs: a process that may have a command running.
        stamped_by(&in_use, std::os::unix::process::parent_id());
        for path in [&left, &in_use, &full, &real] {
            remove_left_behind(path);
        }
        assert!(!left.exists(), "an empty placeholder of an ended process goes");
        assert!(in_use.exists(), "a running process's placeholder stays");
        assert!(full.join("a.sr").exists(), "a placeholder something was put in stays");
        assert!(real.exists(), "a directory that is not a placeholder stays");
    }

    #[test]
    fn a_command_takes_over_a_placeholder_a_crash_left_and_removes_it_when_done() {
        let dir = tempfile::tempdir().unwrap();
        let left = dir.path().join("agents");
        fs::create_dir(&left).unwrap();
        stamped_by(&left, ended_pid());
        let claimed = Placeholder::claim(&left, true).unwrap();
        assert!(claimed.is_some(), "taken over as a placeholder, not covered as a real directory");
        let meta = left.symlink_metadata().unwrap();
        assert_eq!(meta.mtime_nsec(), i64::from(std::process::id()), "stamped as this process's now");
        drop(claimed);
        assert!(!left.exists(), "removed when its command ends");
    }
}
