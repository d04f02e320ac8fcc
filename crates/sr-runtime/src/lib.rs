//! The StreetRace runtime: runs `.sr` workloads (flows and agents) against real
//! LLM providers and tools, streaming typed events.

mod compaction;
pub mod compile;
pub mod eval;
pub mod event;
pub mod guardrail;
pub mod hook;
pub mod launch;
pub mod lease;
mod llm;
pub mod mcp;
mod policy;
pub mod record;
pub mod run;
#[cfg(feature = "testing")]
pub mod scripted;
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
