//! Why a run's journal cannot be opened, written, or its files put back. The
//! texts are what the run's error or warning says.

use std::path::PathBuf;

use sr_llm::LlmError;

use super::workspace::RestoreError;

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The journal file (or its directory) cannot be made at `path`.
    #[error("cannot write {}: {source}", path.display())]
    Create { path: PathBuf, source: std::io::Error },
    /// The journal file at `path` cannot be opened to add lines to.
    #[error("cannot write {}: {source}", path.display())]
    Open { path: PathBuf, source: LlmError },
    /// The run's `meta`, its first line, cannot be written.
    #[error("{0}")]
    Meta(LlmError),
    /// The MCP servers' tool lists cannot be written.
    #[error("cannot record the MCP tools: {0}")]
    McpTools(LlmError),
    /// The recorded files cannot be put in the work directory.
    #[error(transparent)]
    Restore(#[from] RestoreError),
}
