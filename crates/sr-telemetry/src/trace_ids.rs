//! Runs whose trace id is chosen before they start (`sr serve` stores it with
//! the run, so that every attempt of the run, on any replica, lands in one
//! trace). The SDK takes a root span's trace id from its id generator when the
//! span is built, and no span attribute can set it; so the exporter's
//! generator ([`RunTraceIds`]) hands out the id waiting on this thread, and
//! [`start_in`] builds the run's span at once with that id waiting.

use std::cell::Cell;

use opentelemetry::trace::{SpanId, TraceId};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

thread_local! {
    /// The trace id the next root span built on this thread gets.
    static WAITING: Cell<Option<TraceId>> = const { Cell::new(None) };
}

/// Random ids, except a waiting trace id ([`start_in`]).
#[derive(Debug, Default)]
pub(crate) struct RunTraceIds(RandomIdGenerator);

impl IdGenerator for RunTraceIds {
    fn new_trace_id(&self) -> TraceId {
        WAITING.with(Cell::take).unwrap_or_else(|| self.0.new_trace_id())
    }

    fn new_span_id(&self) -> SpanId {
        self.0.new_span_id()
    }
}

/// Builds `root` (a span with no parent) now, in trace `trace`. Under a
/// subscriber that does not export to OpenTelemetry it does nothing.
pub(crate) fn start_in(root: &Span, trace: TraceId) {
    WAITING.with(|waiting| waiting.set(Some(trace)));
    // Asking for the span's context builds it, on this thread.
    let _ = root.context();
    WAITING.with(|waiting| waiting.set(None));
}

/// `text` as a trace id: 32 hex digits, not all zero.
pub(crate) fn parse(text: &str) -> Option<TraceId> {
    let valid = text.len() == 32 && text.bytes().all(|b| b.is_ascii_hexdigit());
    valid.then(|| TraceId::from_hex(text).ok()).flatten().filter(|id| *id != TraceId::INVALID)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn trace_ids_are_32_hex_digits_not_all_zero() {
        let id = "0af7651916cd43dd8448eb211c80319c";
        assert_eq!(parse(id).map(|t| t.to_string()).as_deref(), Some(id));
        for bad in [
            "",
            "0af7651916cd43dd8448eb211c80319",
            "0af7651916cd43dd8448eb211c80319cc",
            &"0".repeat(32),
            &"g".repeat(32),
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
