//! The StreetRace runtime: runs `.sr` workloads (flows and agents) against real
//! LLM providers and tools, streaming typed events.

mod agent;
mod compaction;
pub mod compile;
pub mod eval;
pub mod event;
mod flow;
pub mod guardrail;
mod handlers;
pub mod hook;
pub mod human;
pub mod lease;
mod llm;
pub mod mcp;
mod policy;
pub mod record;
pub mod run;
pub mod scripted;
pub mod session;
pub mod state;
pub mod stdlib;
pub mod structured;
pub mod tools;
mod usage;
pub mod value;
pub mod workload;
mod yaml;

pub use crate::run::{Env, ErrorKind, RunError, RunOptions, RunOutcome, Runtime, Thread};
