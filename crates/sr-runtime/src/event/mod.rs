//! Events: the contract between the runtime and every front end (terminal,
//! JSONL, the debugger, editors, the session store). Each has a monotonic `seq`
//! per run, the invocation id, the path of flows and agents that produced it
//! and a typed payload. Upstream's flow event types keep their spelling.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod gate;

pub use gate::Gate;
use gate::{GateLink, Pending};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    pub seq: u64,
    pub invocation_id: String,
    /// Producers, outermost first: `flow:main`, `agent:reviewer`, `branch:2`
    /// (a `parallel` branch's thread, named as [`thread_name`] names it).
    pub path: Vec<String>,
    /// When it happened, in milliseconds since the Unix epoch: the run's
    /// [`Clock`] gives it, and a run served from a journal shows the recorded
    /// run's times (the journal keeps them). None only in events stored
    /// before events had times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,
    #[serde(flatten)]
    pub payload: Payload,
}

/// Gives each event the time it happened, once it is numbered.
pub trait Clock: Send + Sync {
    /// `event`'s time, in milliseconds since the Unix epoch.
    fn stamp(&self, event: &Event) -> u64;
}

/// The wall clock: an event happens when it is numbered.
pub struct WallClock;

impl Clock for WallClock {
    fn stamp(&self, _event: &Event) -> u64 {
        now_ms()
    }
}

/// Milliseconds since the Unix epoch now (0 on a clock set before it).
pub fn now_ms() -> u64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// The one name of a thread, wherever a person sees it (events' paths, the
/// state at an event, the debugger): `main`, or `branch:N` for the runtime's
/// thread `N` of a `parallel` branch. A replay gives each branch the id its
/// journal recorded, so a run's replays name its threads as it did.
pub fn thread_name(thread: u32) -> String {
    match thread {
        0 => "main".to_string(),
        n => format!("branch:{n}"),
    }
}

/// The thread a path segment names (`branch:N`), if it names one.
pub fn branch_of(segment: &str) -> Option<u32> {
    segment.strip_prefix("branch:")?.parse().ok()
}

/// The thread that emitted an event with this path: its innermost branch, or
/// `main` (0).
pub fn thread_of<S: AsRef<str>>(path: &[S]) -> u32 {
    path.iter().rev().find_map(|segment| branch_of(segment.as_ref())).unwrap_or(0)
}

/// A 1-based position in a source file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Location {
    /// Shared with the compiled program: every statement's step carries one.
    pub file: Arc<str>,
    pub line: u32,
    pub column: u32,
}

/// How a run ended (or paused): `run_finished`'s `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "RunEnd")]
pub enum RunStatus {
    Completed,
    Failed,
    /// Waiting for a human (`escalate to human`); resumable.
    Paused,
    /// Stopped on request by `sr serve` (a cancel), which writes this end
    /// itself: the runtime never ends a run so.
    Cancelled,
}

/// Tokens a model call took, or a total of several; the cost in USD when the
/// run has a price table (`sr run --prices`) with a price for the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        if let Some(cost) = other.cost_usd {
            *self.cost_usd.get_or_insert(0.0) += cost;
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Payload {
    RunStarted {
        workload: String,
        entry: String,
        input: String,
    },
    RunFinished {
        status: RunStatus,
        result: Option<Value>,
        error: Option<String>,
        /// Every model call of the run.
        usage: Usage,
    },
    FlowStarted {
        flow: String,
    },
    /// The end of a flow, also when it failed (`error`).
    FlowFinished {
        flow: String,
        result: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    AgentStarted {
        agent: String,
        model: String,
        input: String,
    },
    /// The end of an agent run, also when it failed (`error`).
    AgentFinished {
        agent: String,
        output: Value,
        /// The agent's model calls, its sub-agents' included.
        usage: Usage,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    ModelRequest {
        model: String,
        messages: usize,
        tools: Vec<String>,
    },
    TextDelta {
        text: String,
    },
    ModelResponse {
        model: String,
        text: String,
        tool_calls: Vec<String>,
        /// Why the model stopped: `stop`, `length`, `tool_calls`, `content_filter`
        /// or the provider's own word.
        finish_reason: String,
        usage: Usage,
    },
    ToolCall {
        call_id: String,
        tool: String,
        args: Value,
    },
    ToolResult {
        call_id: String,
        tool: String,
        result: Value,
        is_error: bool,
    },
    /// A remote agent's task, called through the tool call `call_id`,
    /// changed state or produced an artifact or a message (`text`) while the
    /// call streams (`crate::a2a`).
    RemoteUpdate {
        call_id: String,
        tool: String,
        task_id: String,
        /// The A2A task state, 0.3's spelling (`working`, `completed`, …).
        state: String,
        text: String,
    },
    /// `delegate`: the conversation moves to another agent.
    Transfer {
        from: String,
        to: String,
    },
    StateChange {
        variable: String,
        value: Value,
    },
    Log {
        message: String,
    },
    Notify {
        message: String,
    },
    Warning {
        message: String,
    },
    Error {
        message: String,
        location: Option<Location>,
    },
    /// A coding agent's step starts running this code.
    CodeStarted {
        step: u32,
        code: String,
    },
    /// What the step printed (`stream` is `stdout` or `stderr`).
    CodeOutput {
        step: u32,
        stream: String,
        text: String,
    },
    /// How the step ended: `success`, `final_answer`, `syntax_error`,
    /// `policy_violation`, `runtime_error`, `timeout`, `tool_error` or `crashed`.
    CodeFinished {
        step: u32,
        outcome: String,
        is_error: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// A human is asked for input (`escalate to human`); the run pauses.
    HumanInputRequested {
        message: String,
    },
    /// A resumed run met a call of a tool not declared idempotent that a
    /// crash cut off: its decider is asked to retry, skip or fail it
    /// (`crate::in_doubt`); without a decision the run pauses in doubt.
    ToolInDoubt {
        tool: String,
        args: Value,
        idempotency_key: String,
    },
    // Upstream's flow events.
    LlmCall {
        prompt_name: String,
        model: String,
        prompt_text: String,
    },
    LlmResponse {
        prompt_name: String,
        content: String,
        is_final: bool,
    },
    FlowResult {
        result: Value,
    },
    Escalation {
        agent_name: String,
        result: Value,
        condition_op: String,
        condition_value: String,
    },
    HistoryCompaction {
        strategy: String,
        original_tokens: u64,
        compacted_tokens: u64,
        messages_removed: u64,
    },
}

/// Receives every event, in `seq` order, synchronously: whatever a sink does
/// (write to SQLite, forward to a channel) is done before the next event exists.
pub trait EventSink: Send + Sync {
    fn record(&self, event: &Event);
}

impl<F: Fn(&Event) + Send + Sync> EventSink for F {
    fn record(&self, event: &Event) {
        self(event)
    }
}

struct Shared {
    seq: u64,
    sinks: Vec<Arc<dyn EventSink>>,
    /// Secrets replaced in every event before any sink sees it.
    redactor: Arc<sr_llm::Redactor>,
    clock: Arc<dyn Clock>,
    /// Per producer path, the end of the streamed text that may be the start
    /// of a secret the next delta completes.
    held: HashMap<Vec<String>, String>,
}

/// Emits events for one producer path. Cloning with [`Emitter::child`] extends
/// the path; all emitters of a run share one sequence.
#[derive(Clone)]
pub struct Emitter {
    shared: Arc<Mutex<Shared>>,
    invocation_id: Arc<str>,
    path: Vec<String>,
    /// The `parallel` block gate (and the blocks around it) this emitter's
    /// events pass before they are numbered ([`gate`]).
    gate: Option<Arc<GateLink>>,
}

impl Emitter {
    pub fn new(invocation_id: impl Into<Arc<str>>, sinks: Vec<Arc<dyn EventSink>>) -> Emitter {
        Emitter {
            shared: Arc::new(Mutex::new(Shared {
                seq: 0,
                sinks,
                redactor: Default::default(),
                clock: Arc::new(WallClock),
                held: HashMap::new(),
            })),
            invocation_id: invocation_id.into(),
            path: Vec::new(),
            gate: None,
        }
    }

    /// Every event (and every tool result, see [`Emitter::redactor`]) is
    /// redacted by `redactor` before it is emitted.
    pub fn with_redactor(self, redactor: Arc<sr_llm::Redactor>) -> Emitter {
        self.shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).redactor = redactor;
        self
    }

    /// Every event's time comes from `clock` (the wall clock's otherwise).
    pub fn with_clock(self, clock: Arc<dyn Clock>) -> Emitter {
        self.shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clock = clock;
        self
    }

    /// The run's secrets.
    pub fn redactor(&self) -> Arc<sr_llm::Redactor> {
        self.shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).redactor.clone()
    }

    pub fn child(&self, segment: impl Into<String>) -> Emitter {
        let mut child = self.clone();
        child.path.push(segment.into());
        child
    }

    /// The emitter of branch `index` of a `parallel` block whose events pass `gate`.
    pub(crate) fn gated(mut self, gate: Arc<Gate>, index: u32) -> Emitter {
        self.gate = Some(Arc::new(GateLink { gate, index, outer: self.gate.take() }));
        self
    }

    /// This emitter's branch paused the run: every `parallel` block it is
    /// in drops the other branches' events from now on ([`Gate::pause`]).
    pub(crate) fn pause_gates(&self) {
        let mut link = self.gate.as_deref();
        while let Some(current) = link {
            current.gate.pause(current.index);
            link = current.outer.as_deref();
        }
    }

    pub fn path(&self) -> &[String] {
        &self.path
    }

    pub fn invocation_id(&self) -> &str {
        &self.invocation_id
    }

    pub fn emit(&self, payload: Payload) {
        let ready = {
            let mut shared = self.shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            self.ready(&mut shared, payload)
        };
        self.release(ready);
    }

    /// What emitting `payload` sends out: a streamed delta may be held back
    /// (or not yet complete), and held text goes out before the next event.
    fn ready(&self, shared: &mut Shared, payload: Payload) -> Vec<Pending> {
        let mut out = Vec::new();
        let payload = match payload {
            // A secret split over two deltas is redacted whole: the text that
            // may begin one waits for the next delta.
            Payload::TextDelta { text } if !shared.redactor.is_empty() => {
                let redactor = shared.redactor.clone();
                let pending = shared.held.entry(self.path.clone()).or_default();
                pending.push_str(&text);
                let ready = pending.len() - redactor.held_back(pending);
                let text: String = pending.drain(..ready).collect();
                if text.is_empty() {
                    return out;
                }
                Payload::TextDelta { text }
            }
            other => {
                // The run's end flushes every path; other events their own.
                if matches!(other, Payload::RunFinished { .. }) {
                    for (path, text) in std::mem::take(&mut shared.held) {
                        if !text.is_empty() {
                            out.push((path, Payload::TextDelta { text }));
                        }
                    }
                } else if !shared.held.is_empty()
                    && let Some(text) = shared.held.remove(&self.path).filter(|t| !t.is_empty())
                {
                    out.push((self.path.clone(), Payload::TextDelta { text }));
                }
                other
            }
        };
        out.push((self.path.clone(), payload));
        out
    }

    /// Sends events out through this emitter's gates: those the gates let
    /// through now get their numbers and reach the sinks.
    pub(crate) fn release(&self, mut items: Vec<Pending>) {
        let mut link = self.gate.as_deref();
        while let Some(current) = link {
            if items.is_empty() {
                return;
            }
            items = current.gate.pass(current.index, items);
            link = current.outer.as_deref();
        }
        if items.is_empty() {
            return;
        }
        let mut shared = self.shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        for (path, payload) in items {
            self.dispatch(&mut shared, path, payload);
        }
    }

    fn dispatch(&self, shared: &mut Shared, path: Vec<String>, payload: Payload) {
        let payload = redacted(&shared.redactor, payload);
        shared.seq += 1;
        let mut event =
            Event { seq: shared.seq, invocation_id: self.invocation_id.to_string(), path, at_ms: None, payload };
        event.at_ms = Some(shared.clock.stamp(&event));
        for sink in &shared.sinks {
            sink.record(&event);
        }
    }
}

/// `payload` with every secret replaced.
fn redacted(redactor: &sr_llm::Redactor, payload: Payload) -> Payload {
    if redactor.is_empty() {
        return payload;
    }
    let Ok(Value::Object(mut fields)) = serde_json::to_value(&payload) else { return payload };
    // The payload's own field names are kept; everything inside is redacted.
    let changed = fields.values_mut().fold(false, |changed, value| redactor.redact_value(value) | changed);
    if !changed {
        return payload;
    }
    serde_json::from_value(Value::Object(fields)).unwrap_or_else(|e| Payload::Warning {
        message: format!("an event that held a secret was withheld: its redacted form does not read back ({e})"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialize_with_upstream_type_names() {
        let event = Event {
            seq: 3,
            invocation_id: "inv".into(),
            path: vec!["flow:main".into()],
            at_ms: Some(1_795_680_000_000),
            payload: Payload::LlmCall { prompt_name: "p".into(), model: "m".into(), prompt_text: "t".into() },
        };
        let json = serde_json::to_string(&event).unwrap();
        assert_eq!(
            json,
            r#"{"seq":3,"invocation_id":"inv","path":["flow:main"],"at_ms":1795680000000,"type":"llm_call","prompt_name":"p","model":"m","prompt_text":"t"}"#
        );
        assert_eq!(serde_json::from_str::<Event>(&json).unwrap(), event);
    }

    #[test]
    fn threads_are_named_and_found_again_by_one_spelling() {
        for thread in [0, 1, 42] {
            let path = ["flow:main".to_string(), thread_name(thread), "agent:a".to_string()];
            assert_eq!(thread_of(&path), thread, "{path:?}");
        }
        assert_eq!(thread_name(0), "main");
        assert_eq!(thread_name(3), "branch:3");
        assert_eq!(thread_of(&["branch:2", "flow:f", "branch:7", "agent:a"]), 7, "the innermost branch");
        for odd in ["branch:", "branch:x", "branch:-1", "flow:branch:2"] {
            assert_eq!(branch_of(odd), None, "{odd}");
        }
    }

    #[test]
    fn children_share_one_sequence() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let root =
            Emitter::new("inv", vec![Arc::new(move |e: &Event| sink.lock().unwrap().push((e.seq, e.path.clone())))]);
        let child = root.child("agent:a");
        root.emit(Payload::Log { message: "1".into() });
        child.emit(Payload::Log { message: "2".into() });
        assert_eq!(*seen.lock().unwrap(), vec![(1, vec![]), (2, vec!["agent:a".to_string()])]);
    }

    fn deltas_through(redactor: sr_llm::Redactor, pieces: &[&str]) -> Vec<String> {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let emitter = Emitter::new("inv", vec![Arc::new(move |e: &Event| sink.lock().unwrap().push(e.clone()))])
            .with_redactor(Arc::new(redactor));
        for piece in pieces {
            emitter.emit(Payload::TextDelta { text: piece.to_string() });
        }
        emitter.emit(Payload::Log { message: "done".into() });
        let events = seen.lock().unwrap().clone();
        assert!(
            matches!(events.last().unwrap().payload, Payload::Log { .. }),
            "the held text comes before the next event"
        );
        events
            .iter()
            .filter_map(|e| match &e.payload {
                Payload::TextDelta { text } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_secret_split_over_streamed_deltas_is_redacted_whole() {
        let redactor = sr_llm::Redactor::new();
        redactor.add("sk-SECRET123").unwrap();
        let deltas = deltas_through(redactor, &["key: sk-SE", "CRET1", "23 done"]);
        assert_eq!(deltas.concat(), "key: [redacted] done");
        assert!(deltas.iter().all(|d| !d.contains("sk-") && !d.contains("CRET")), "{deltas:?}");
    }

    #[test]
    fn text_held_for_a_secret_that_never_comes_is_not_lost() {
        let redactor = sr_llm::Redactor::new();
        redactor.add("sk-SECRET123").unwrap();
        assert_eq!(deltas_through(redactor, &["a sk-S", "x", " and sk-SEC"]).concat(), "a sk-Sx and sk-SEC");
    }
}
