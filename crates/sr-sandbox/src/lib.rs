//! Code execution for the CodingAgent: the model writes Python, which runs in a
//! sandbox and calls the agent's tools as functions.
//!
//! - [`policy`]: the static import policy on the Python AST (a lint, not a boundary).
//! - [`backend`]: where code runs: [`Bubblewrap`] (the default), [`Container`] (Docker
//!   Engine API), [`Unsandboxed`] (trusted local use only).
//! - [`command`]: one program run for a tool, in the same sandbox with the work
//!   directory bound read-write.
//! - [`Session`]: one persistent interpreter per agent run, the tool bridge, replay
//!   after crashes.
//! - [`CodeAgent`]: the ReAct-over-code loop over an abstract [`CodeModel`].
//! - [`harden_process`]: what `sr` and `sr-dap` do first, so that the commands
//!   they run as the same user cannot read their memory or environment.

mod agent;
pub mod backend;
mod bridge;
pub mod command;
mod event;
mod harden;
mod outcome;
pub mod policy;
mod protocol;
mod session;
mod tools;

use std::fmt;
use std::future::Future;
use std::pin::Pin;

pub use agent::{AgentError, Answer, CodeAgent, CodeModel, Message, ModelError, Role, Steps};
#[cfg(feature = "container")]
pub use backend::Container;
pub use backend::{Backend, Bubblewrap, Limits, Unsandboxed};
pub use bridge::SocketAccess;
pub use event::{Event, Stream};
pub use harden::harden_process;
pub use outcome::{Outcome, StepReport, ToolCall};
pub use policy::ImportPolicy;
pub use session::{Session, SessionConfig};
pub use tools::{ToolError, ToolHost, ToolSpec};

/// A boxed future, as `futures::future::BoxFuture`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Failures of the machinery, not of the agent's code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxError {
    /// A sandbox could not be started (or restarted).
    Start(String),
    /// The tool declarations cannot be turned into functions.
    Tools(String),
}

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SandboxError::Start(message) | SandboxError::Tools(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for SandboxError {}
