//! Why the journal cannot read the work directory or make a recorded state
//! of it again. The texts are what a run's warning, its journal's
//! `unrecorded` reason or its error says.

use super::ENTRIES_VAR;

/// A limit the environment sets that is not a number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{var}={text:?} is not a number (of bytes or entries)")]
pub struct BadLimit {
    pub var: &'static str,
    pub text: String,
}

/// The work directory has more entries than the journal compares.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the work directory has more than {limit} entries, the journal's limit ({})", ENTRIES_VAR)]
pub struct TooManyEntries {
    pub limit: usize,
}

/// A recorded state the journal cannot put in the work directory. The
/// checks before anything is touched name every path (each with why) at
/// once; the others are the first write that failed.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// The jail refused the recorded path: its reason.
    #[error("{0}")]
    Path(String),
    #[error("cannot restore {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("cannot restore {path}: the journal lacks its bytes (blob {sha256})")]
    NoBytes { path: String, sha256: String },
    #[error("cannot restore {path} ({size} bytes): the journal has its hash only")]
    HashOnly { path: String, size: u64 },
    #[error("the journal cannot restore the files of this call: {}", .0.join("; "))]
    CallFiles(Vec<String>),
    #[error("cannot make the cut-off call again from the state it started in: {}", .0.join("; "))]
    CutOffCall(Vec<String>),
    #[error("cannot go back in time: the journal cannot restore the work directory: {}", .0.join("; "))]
    GoBack(Vec<String>),
}
