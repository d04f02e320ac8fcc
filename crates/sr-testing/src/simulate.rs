//! The workflows of `cargo xtask simulate`, a deterministic simulation tester
//! in the manner of FoundationDB's and TigerBeetle's: a seed gives a
//! workflow (a `.sr` file) built from the language's tables, which the driver
//! runs live against a scripted model, then replays, kills and resumes, sends
//! back and forth in time and forks, comparing files, events and host-side
//! effect counts. A failing workflow is shrunk ([`shrink`]) to a smallest one
//! that still fails.
//!
//! Every statement kind, value source and tool kind is a [`Feature`] that a
//! run can include or exclude; [`KNOWN_ESCAPES`] names the features whose
//! oracles are known to fail on `main`, so CI runs the rest green.

mod features;
mod generate;
mod shrink;

pub use features::{Feature, KNOWN_ESCAPES, KnownEscape};
pub use generate::{COUNTER_MCP, Node, Workflow, generate};
pub use shrink::shrink;
