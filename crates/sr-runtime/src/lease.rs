//! Leases of live runs: a run holds an exclusive lock on its lease file for as
//! long as it runs. The kernel drops the lock when the process dies,
//! however it dies (kill -9 included), so a lease that can be locked by
//! someone else belongs to a dead run — no timeout, no guess.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// A held lease; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct Lease {
    path: PathBuf,
    _file: File,
}

impl Lease {
    /// Creates and locks a new lease file in `dir`.
    pub fn take(dir: &Path, name: &str) -> io::Result<Lease> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(format!("{name}.lock"));
        let file = OpenOptions::new().create(true).truncate(false).write(true).open(&path)?;
        file.try_lock().map_err(|e| io::Error::other(format!("cannot lock {}: {e}", path.display())))?;
        Ok(Lease { path, _file: file })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Ends the lease and removes its file, once the run's end is stored (a
    /// `running` run whose lease file is gone counts as interrupted).
    pub fn release(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether a live process holds the lease at `path`. A missing file is not held.
pub fn is_held(path: &Path) -> bool {
    let Ok(file) = OpenOptions::new().write(true).open(path) else { return false };
    match file.try_lock() {
        Ok(()) => false,
        Err(std::fs::TryLockError::WouldBlock) => true,
        Err(std::fs::TryLockError::Error(_)) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_is_held_while_its_holder_lives() {
        let dir = std::env::temp_dir().join(format!("sr-lease-{}", std::process::id()));
        let lease = Lease::take(&dir, "run").unwrap();
        // Another open file description sees the lock, as another process would.
        assert!(is_held(lease.path()));
        let path = lease.path().to_path_buf();
        drop(lease);
        assert!(!is_held(&path));
        let lease = Lease::take(&dir, "run").unwrap();
        lease.release();
        assert!(!path.exists());
        assert!(!is_held(&dir.join("missing.lock")));
    }
}
