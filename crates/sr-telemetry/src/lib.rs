//! Telemetry for StreetRace runs: OpenTelemetry GenAI spans made from the
//! runtime's event stream, so the interpreter carries no instrumentation and a
//! replayed run traces like the live one.
//!
//! [`Telemetry`] is an event sink; it emits `tracing` spans (`invoke_workflow`,
//! `invoke_agent`, `chat`, `execute_tool`) that reach whatever subscriber is
//! installed, and none is by default: nothing leaves the machine unless the
//! user asks. With the `otlp` feature, `init_otlp` installs one that exports
//! them over OTLP/HTTP (`otlp_layer` is that exporter as a layer of another
//! subscriber), and `Telemetry::in_trace` puts a run's spans in a trace
//! whose id the caller chose. Content (prompts, replies, tool arguments and
//! results) is recorded only with [`TelemetryConfig::capture_content`].

mod content;
mod model;
mod open;
#[cfg(feature = "otlp")]
mod otlp;
mod spans;
mod telemetry;
#[cfg(feature = "otlp")]
mod trace_ids;

#[cfg(feature = "otlp")]
pub use crate::otlp::{Error, Guard, init_otlp, otlp_layer};
pub use crate::telemetry::{Telemetry, TelemetryConfig};
