//! Why a run's journal cannot be opened, written, or its files put back. The
//! texts are what the run's error or warning says.

use std::path::PathBuf;

use sr_llm::LlmError;

use super::workspace::RestoreError;

/// The model errors it holds are boxed: they are large, and a launch's error
/// carries this one.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The journal file (or its directory) cannot be made at `path`.
    #[error("cannot write {}: {source}", path.display())]
    Create { path: PathBuf, source: std::io::Error },
    /// The journal file at `path` cannot be opened to add lines to.
    #[error("cannot write {}: {source}", path.display())]
    Open { path: PathBuf, source: Box<LlmError> },
    /// A journal of its own for exchanges outside a run cannot be made.
    #[error("{}: {source}", path.display())]
    New { path: PathBuf, source: Box<LlmError> },
    /// A line cannot be added to the journal.
    #[error("cannot write the journal: {0}")]
    Write(#[source] Box<LlmError>),
    /// The run's `meta`, its first line, cannot be written.
    #[error("{0}")]
    Meta(Box<LlmError>),
    /// The MCP servers' tool lists cannot be written.
    #[error("cannot record the MCP tools: {0}")]
    McpTools(Box<LlmError>),
    /// The recorded files cannot be put in the work directory.
    #[error(transparent)]
    Restore(#[from] RestoreError),
}

/// Why a text is not a journal this program reads ([`super::Recorded::parse`]).
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("line {line} of the journal is not JSON: {source}")]
    NotJson { line: usize, source: serde_json::Error },
    /// A line of a known kind that lacks a field or holds a bad one: which, and why.
    #[error("line {line} of the journal: {problem}")]
    BadLine { line: usize, problem: String },
    #[error("this recording was made by an earlier version of sr (journal format {format}): record it again")]
    Older { format: u64 },
    #[error("this recording has journal format {format}, newer than this program's")]
    Newer { format: u64 },
}
