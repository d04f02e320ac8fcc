//! Why one case could not be set up or run: a module of its own, as the
//! judge scorer reads recordings with it and `case` reaches the scorers
//! through `dataset`.

use std::path::PathBuf;

/// Why a case could not be set up or run to its end (a run that ends
/// failed is not one: its error is the run's).
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    #[error("cannot make a directory for the sessions: {0}")]
    SessionsDir(std::io::Error),
    #[error("cannot create the session store: {0}")]
    SessionStore(rusqlite::Error),
    #[error("cannot make a work directory: {0}")]
    WorkDir(std::io::Error),
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    /// A dataset's `files` directory could not be copied: the path under it.
    #[error("cannot copy {}: {source}", path.display())]
    Copy { path: PathBuf, source: std::io::Error },
    /// A recording (its path) could not be read; not UTF-8 is `InvalidData`.
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot read {}: no such file", path.display())]
    NoSuchFile { path: PathBuf },
    #[error("cannot write the events: {0}")]
    Events(std::io::Error),
    #[error(transparent)]
    Launch(#[from] sr_runtime::launch::LaunchError),
}
