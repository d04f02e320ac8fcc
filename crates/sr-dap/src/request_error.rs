//! Why a request about threads, forks, breakpoints or answers is refused,
//! and why an inspection request is: one module, as each can hold the other
//! (a console `:answer` inside an evaluate, a travel inside a request); the
//! text is the message of the error response.

use std::path::PathBuf;

use crate::evaluate::ExpressionError;
use crate::variables::EditError;

/// The console command that answers.
pub const COMMAND: &str = ":answer";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// A DAP thread id that names no runtime thread.
    #[error("there is no thread {0}")]
    NoThread(i64),
    /// A DAP thread id.
    #[error("thread {0} is not stopped")]
    NotStopped(i64),
    /// A DAP thread id.
    #[error("thread {0} is not waiting for an answer")]
    NotAsking(i64),
    #[error("no thread is waiting for an answer")]
    NoneAsking,
    /// A request's argument the request cannot do without.
    #[error("{command} needs `{field}`, {what}")]
    Missing { command: &'static str, field: &'static str, what: &'static str },
    #[error("no thread is stopped")]
    NoneStopped,
    #[error("not a console command")]
    NotConsoleCommand,
    /// The first word of a console line that begins with a colon.
    #[error("`{0}` is not a console command; `{COMMAND} TEXT` answers the pending `escalate to human`")]
    UnknownConsoleCommand(String),
    #[error("setBreakpoints needs a source with a path")]
    NoSourcePath,
    #[error("a step needs a threadId")]
    StepNeedsThread,
    #[error("a replay never goes live: launch without `replay` to make calls for real")]
    ReplayNeverLive,
    /// A fork's number as the client names it (1 is the original run).
    #[error("there is no fork {0}")]
    NoFork(i64),
    /// A fork's number as the client names it.
    #[error("fork {0} is the one the run is in")]
    CurrentFork(i64),
    #[error("the original run has no fork point")]
    NoForkPoint,
    #[error(transparent)]
    Travel(#[from] InspectError),
}

/// The journals a travel keeps and reads could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("cannot read the run's journal {}: {source}", path.display())]
    ReadRun { path: PathBuf, source: std::io::Error },
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

/// Why an inspection request (stack trace, scopes, variables, evaluate,
/// setVariable, exception info, going back) is refused; its text is the
/// message of the error response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InspectError {
    #[error("there is no frame {0} (the thread has moved on)")]
    NoFrame(i64),
    #[error("there is no variable {0} (the thread has moved on)")]
    NoVariable(i64),
    /// A DAP thread id.
    #[error("thread {0} is not stopped")]
    NotStopped(i64),
    #[error("the thread has moved on")]
    MovedOn,
    #[error("the call is gone")]
    CallGone,
    #[error("the value is gone")]
    ValueGone,
    #[error("evaluation needs a stopped thread")]
    NoStoppedThread,
    #[error("only a model call about to be sent, or its reply, can be changed")]
    CallNotEditable,
    #[error("only the run's variables and a model call can be changed")]
    NotEditable,
    #[error("not an index")]
    NotAnIndex,
    #[error("the thread did not stop on an exception")]
    NoException,
    #[error("going back needs a threadId")]
    NoThreadId,
    #[error("this is the first point of the run")]
    FirstPoint,
    /// A runtime thread number.
    #[error("this is the first point of branch {0}: the branch has no earlier point of its own")]
    FirstPointOfBranch(u32),
    /// The expression or value could not be read or evaluated.
    #[error(transparent)]
    Expression(#[from] ExpressionError),
    /// The new value does not fit where it goes.
    #[error(transparent)]
    Edit(#[from] EditError),
    /// A debug console command (`:answer`) failed.
    #[error(transparent)]
    Console(Box<RequestError>),
}
