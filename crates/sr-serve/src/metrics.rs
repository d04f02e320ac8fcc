//! `GET /metrics` in the Prometheus text format: runs by status and the queue
//! depth (read from the store, so they are right after a restart), and
//! latency histograms of model calls and tool steps (this process's, timed
//! from the events between a request and its response).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sr_runtime::event::{Event, Payload};

use crate::store::RunStatus;

/// Upper bounds of the histogram buckets, in seconds.
const BUCKETS: [f64; 12] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];

#[derive(Default)]
pub struct Metrics {
    model_calls: Mutex<Histogram>,
    tool_steps: Mutex<Histogram>,
}

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        for (bound, count) in BUCKETS.iter().zip(&mut self.counts) {
            if seconds <= *bound {
                *count += 1;
            }
        }
        self.count += 1;
        self.sum += seconds;
    }

    fn render(&self, name: &str, help: &str, out: &mut String) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        for (bound, count) in BUCKETS.iter().zip(&self.counts) {
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {count}");
        }
        let _ = writeln!(
            out,
            "{name}_bucket{{le=\"+Inf\"}} {}\n{name}_sum {}\n{name}_count {}",
            self.count, self.sum, self.count
        );
    }
}

/// Times one run's model calls (by the path that makes them) and tool calls
/// (by call id) from its events.
#[derive(Default)]
pub struct RunTimer {
    started: Mutex<HashMap<String, Instant>>,
}

impl RunTimer {
    pub fn observe(&self, event: &Event, metrics: &Metrics) {
        let mut started = self.started.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match &event.payload {
            Payload::ModelRequest { .. } => {
                started.insert(format!("model {}", event.path.join("/")), Instant::now());
            }
            Payload::ModelResponse { .. } => {
                if let Some(at) = started.remove(&format!("model {}", event.path.join("/"))) {
                    metrics.model_calls.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).observe(at.elapsed());
                }
            }
            Payload::ToolCall { call_id, .. } => {
                started.insert(format!("tool {call_id}"), Instant::now());
            }
            Payload::ToolResult { call_id, .. } => {
                if let Some(at) = started.remove(&format!("tool {call_id}")) {
                    metrics.tool_steps.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).observe(at.elapsed());
                }
            }
            _ => {}
        }
    }
}

impl Metrics {
    /// The text `GET /metrics` answers, given the runs by status.
    pub fn render(&self, counts: &[(RunStatus, i64)]) -> String {
        let mut out = String::from("# HELP sr_serve_runs Runs by status.\n# TYPE sr_serve_runs gauge\n");
        for (status, count) in counts {
            let _ = writeln!(out, "sr_serve_runs{{status=\"{status}\"}} {count}");
        }
        let queued = counts.iter().find(|(status, _)| *status == RunStatus::Queued).map_or(0, |(_, n)| *n);
        let _ = writeln!(
            out,
            "# HELP sr_serve_queue_depth Runs waiting for a worker.\n# TYPE sr_serve_queue_depth gauge\nsr_serve_queue_depth {queued}"
        );
        self.model_calls.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).render(
            "sr_serve_model_call_seconds",
            "Time from a model request to its response.",
            &mut out,
        );
        self.tool_steps.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).render(
            "sr_serve_tool_step_seconds",
            "Time from a tool call to its result.",
            &mut out,
        );
        out
    }
}
