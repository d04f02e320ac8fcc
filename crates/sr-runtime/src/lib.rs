//! The StreetRace runtime: runs `.sr` workloads (flows and agents) against real
//! LLM providers and tools, streaming typed events.

pub mod a2a;
pub mod compile;
pub mod eval;
pub mod event;
pub mod guardrail;
pub mod hook;
pub mod ids;
pub mod in_doubt;
pub mod journal;
pub mod launch;
pub mod lease;
pub mod mcp;
pub mod protected;
pub mod run;
#[cfg(feature = "testing")]
pub mod scripted;
pub mod served;
pub mod session;
pub mod state;
pub mod stdlib;
pub mod structured;
pub mod tools;
#[cfg(feature = "testing")]
pub mod trace;
pub mod value;
pub mod workload;
mod yaml;

pub use crate::run::human;
pub use crate::run::{Env, ErrorKind, RunError, RunOptions, RunOutcome, Runtime, Thread};

/// The stack of every thread that runs flows. A block nested to the parser's
/// limit (256 levels) polls through a few frames per level: about 35 KiB each
/// in a debug build, so tokio's default 2 MiB overflows at about 60 levels.
pub const RUN_STACK_SIZE: usize = 16 << 20;

/// The async runtime `sr run`, `sr eval` and `sr dap` run workloads on: its
/// worker threads have [`RUN_STACK_SIZE`] stacks.
pub fn async_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().thread_stack_size(RUN_STACK_SIZE).build()
}
