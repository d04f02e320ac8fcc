//! The event sink: each event opens, annotates or ends a span as it happens,
//! so span timings are the run's own, and a replayed run gives the same spans.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use serde_json::json;
use sr_runtime::event::{Event, EventSink, Payload, RunStatus};
use tracing::{Dispatch, Span};

use crate::content;
use crate::model;
use crate::open::{OpenSpans, Role};
use crate::spans;

/// `error.type` when the events tell no more than that something failed.
const OTHER: &str = "_OTHER";
/// `error.type` of a tool call whose result is an error.
const TOOL_ERROR: &str = "tool_error";

/// What telemetry records.
#[derive(Debug, Clone, Copy, Default)]
pub struct TelemetryConfig {
    /// Record prompts, replies, tool arguments and results, and error messages
    /// (`gen_ai.input.messages`, `gen_ai.output.messages`,
    /// `gen_ai.tool.call.arguments`, …). Off by default: they may hold personal
    /// or confidential data. Secrets are redacted from events before any sink
    /// sees them, and telemetry records nothing that is not in the events.
    pub capture_content: bool,
}

/// An [`EventSink`] that turns a run's events into `tracing` spans following
/// the OpenTelemetry GenAI conventions: `invoke_workflow` for runs and flows,
/// `invoke_agent`, `chat` and `execute_tool`. Where the spans go is the
/// subscriber's business: nowhere unless one is installed.
pub struct Telemetry {
    config: TelemetryConfig,
    dispatch: Option<Dispatch>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The trace the run's span starts (`Telemetry::in_trace`).
    #[cfg(feature = "otlp")]
    trace: Option<opentelemetry::trace::TraceId>,
    spans: OpenSpans,
    /// `call llm` prompts whose model calls are under way.
    prompts: Vec<Prompt>,
    /// Events still to come that a continued run serves from its journal
    /// (`Telemetry::served`), text deltas not counted.
    served: u64,
}

struct Prompt {
    invocation: String,
    path: Vec<String>,
    name: String,
    /// The rendered prompt (with content capture), for the first model call only:
    /// repair calls send more than this.
    text: Option<String>,
}

impl Telemetry {
    /// Spans go to the default subscriber of the thread that emits each event
    /// (the global one, in `sr run`).
    pub fn new(config: TelemetryConfig) -> Telemetry {
        Telemetry { config, dispatch: None, state: Mutex::default() }
    }

    /// The run's spans go in the trace with id `trace_id` (32 hex digits)
    /// instead of a new one, when an OpenTelemetry exporter of this crate
    /// ([`crate::init_otlp`], [`crate::otlp_layer`]) builds them. For one run
    /// at a time: every run this sink sees starts that trace.
    #[cfg(feature = "otlp")]
    pub fn in_trace(mut self, trace_id: &str) -> Result<Telemetry, crate::Error> {
        let trace = crate::trace_ids::parse(trace_id).ok_or_else(|| crate::Error::TraceId(trace_id.to_string()))?;
        self.state.get_mut().unwrap_or_else(PoisonError::into_inner).trace = Some(trace);
        Ok(self)
    }

    /// The run's first `events` events (text deltas not counted) are served
    /// from its journal: a continued attempt emits again what an earlier one
    /// did, whose spans that one exported. They make no span; the runs,
    /// flows, agents and calls they leave open start their spans at the
    /// first event that is not served, as this attempt's.
    pub fn served(mut self, events: u64) -> Telemetry {
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        state.served = events;
        state.spans.keep_starts(events > 0);
        self
    }

    /// Spans go to `dispatch`, whatever the default is (tests, embedders with
    /// several subscribers).
    pub fn with_dispatch(config: TelemetryConfig, dispatch: Dispatch) -> Telemetry {
        Telemetry { config, dispatch: Some(dispatch), state: Mutex::default() }
    }
}

impl EventSink for Telemetry {
    fn record(&self, event: &Event) {
        // The most frequent event makes no span: no lock, no dispatch.
        if let Payload::TextDelta { .. } = event.payload {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.served > 0 {
            state.served -= 1;
            let served = Dispatch::none();
            tracing::dispatcher::with_default(&served, || state.apply(self.config, event));
            return;
        }
        let mut apply = || {
            if state.spans.reopening() {
                state.spans.keep_starts(false);
                for start in state.spans.reopen() {
                    state.apply(self.config, &start);
                }
            }
            state.apply(self.config, event);
        };
        match &self.dispatch {
            Some(dispatch) => tracing::dispatcher::with_default(dispatch, apply),
            None => apply(),
        }
    }
}

impl State {
    fn apply(&mut self, config: TelemetryConfig, event: &Event) {
        let capture = config.capture_content;
        let abandoned = |span: &Span| spans::fail(span, OTHER, None);
        match &event.payload {
            Payload::RunStarted { workload, entry, input } => {
                let name = Path::new(workload).file_stem().map_or(workload.into(), |s| s.to_string_lossy());
                let span = spans::run(&name, entry, &event.invocation_id);
                #[cfg(feature = "otlp")]
                if let Some(trace) = self.trace {
                    crate::trace_ids::start_in(&span, trace);
                }
                if capture {
                    span.record("gen_ai.input.messages", content::user(input));
                }
                self.spans.push(event, Role::Run, span, abandoned);
            }
            Payload::RunFinished { status, result, error, usage } => {
                let message = error.as_deref().filter(|_| capture);
                let inside = |span: &Span| match status {
                    RunStatus::Failed => spans::fail(span, OTHER, message),
                    RunStatus::Paused => {}
                    RunStatus::Completed | RunStatus::Cancelled => abandoned(span),
                };
                if let Some(span) = self.spans.take(event, |r| matches!(r, Role::Run), inside) {
                    span.record("sr.run.status", status_name(*status));
                    spans::usage(&span, usage);
                    if *status == RunStatus::Failed {
                        spans::fail(&span, OTHER, message);
                    }
                    if let Some(result) = result.as_ref().filter(|r| capture && !r.is_null()) {
                        span.record("gen_ai.output.messages", content::answer(&content::text(result), &[], "stop"));
                    }
                }
                self.prompts.retain(|p| p.invocation != event.invocation_id);
            }
            Payload::FlowStarted { flow } => {
                let span = spans::flow(self.spans.parent_of_node(event, None), flow);
                self.spans.push(event, Role::Flow, span, abandoned);
            }
            Payload::FlowFinished { flow: _, result, error } => {
                if let Some(span) = self.spans.take(event, |r| matches!(r, Role::Flow), abandoned) {
                    match error {
                        Some(error) => spans::fail(&span, OTHER, Some(error.as_str()).filter(|_| capture)),
                        None if capture && !result.is_null() => {
                            let answer = content::answer(&content::text(result), &[], "stop");
                            span.record("gen_ai.output.messages", answer);
                        }
                        None => {}
                    }
                }
            }
            Payload::AgentStarted { agent, model, input } => {
                let (provider, model) = model::split(model);
                let span = spans::agent(self.spans.parent_of_node(event, Some(agent)), agent, provider, model);
                if capture {
                    span.record("gen_ai.input.messages", content::user(input));
                }
                self.spans.push(event, Role::Agent, span, abandoned);
            }
            Payload::AgentFinished { agent: _, output, usage, error } => {
                if let Some(span) = self.spans.take(event, |r| matches!(r, Role::Agent), abandoned) {
                    spans::usage(&span, usage);
                    match error {
                        Some(error) => spans::fail(&span, OTHER, Some(error.as_str()).filter(|_| capture)),
                        None if capture => {
                            span.record("gen_ai.output.messages", content::answer(&content::text(output), &[], "stop"));
                        }
                        None => {}
                    }
                }
            }
            Payload::ModelRequest { model, messages: _, tools: _ } => {
                let (provider, model) = model::split(model);
                let parent = self.parent(event);
                let prompt =
                    self.prompts.iter_mut().rev().find(|p| p.invocation == event.invocation_id && p.path == event.path);
                let span = spans::chat(parent, provider, model, prompt.as_ref().map(|p| p.name.as_str()));
                if let Some(text) = prompt.and_then(|p| p.text.take()) {
                    span.record("gen_ai.input.messages", content::user(&text));
                }
                self.spans.push(event, Role::Chat, span, abandoned);
            }
            Payload::ModelResponse { model: _, text, tool_calls, finish_reason, usage } => {
                if let Some(span) = self.spans.take(event, |r| matches!(r, Role::Chat), abandoned) {
                    spans::usage(&span, usage);
                    span.record("gen_ai.response.finish_reasons", json!([finish_reason]).to_string());
                    if capture {
                        span.record("gen_ai.output.messages", content::answer(text, tool_calls, finish_reason));
                    }
                }
            }
            Payload::ToolCall { call_id, tool, args } => {
                let parent = self.spans.code_step(event).and_then(Span::id);
                let span = spans::tool(parent.or_else(|| self.parent(event)), tool, call_id);
                if capture {
                    span.record("gen_ai.tool.call.arguments", args.to_string());
                }
                let role = Role::Tool { call_id: call_id.clone(), tool: tool.clone() };
                self.spans.push(event, role, span, abandoned);
            }
            Payload::ToolResult { call_id, tool: _, result, is_error } => {
                let is_call = |r: &Role| matches!(r, Role::Tool { call_id: id, .. } if id == call_id);
                if let Some(span) = self.spans.take(event, is_call, abandoned) {
                    if capture {
                        span.record("gen_ai.tool.call.result", content::text(result));
                    }
                    if *is_error {
                        spans::fail(&span, TOOL_ERROR, None);
                    }
                }
            }
            Payload::CodeStarted { step, code } => {
                let call_id = format!("step.{step}");
                let span = spans::code_execution(self.parent(event), &call_id);
                if capture {
                    span.record("gen_ai.tool.call.arguments", code.as_str());
                }
                let role = Role::Tool { call_id, tool: spans::CODE_EXECUTION.to_string() };
                self.spans.push(event, role, span, abandoned);
            }
            Payload::CodeOutput { step: _, stream, text } if capture => {
                spans::note(self.parent(event), stream, Some(text.as_str()))
            }
            Payload::CodeFinished { step, outcome, is_error, message } => {
                let call_id = format!("step.{step}");
                let is_step = |r: &Role| matches!(r, Role::Tool { call_id: id, .. } if *id == call_id);
                if let Some(span) = self.spans.take(event, is_step, abandoned) {
                    let message = message.as_deref().filter(|_| capture);
                    if *is_error {
                        spans::fail(&span, outcome, message);
                    } else if let Some(message) = message {
                        span.record("gen_ai.tool.call.result", message);
                    }
                }
            }
            Payload::LlmCall { prompt_name, model: _, prompt_text } => self.prompts.push(Prompt {
                invocation: event.invocation_id.clone(),
                path: event.path.clone(),
                name: prompt_name.clone(),
                text: capture.then(|| prompt_text.clone()),
            }),
            Payload::LlmResponse { .. } => {
                if let Some(at) =
                    self.prompts.iter().rposition(|p| p.invocation == event.invocation_id && p.path == event.path)
                {
                    self.prompts.remove(at);
                }
            }
            Payload::Error { message: _, location } => {
                if let (Some(span), Some(at)) = (self.spans.node(event), location) {
                    span.record("code.file.path", &*at.file);
                    span.record("code.line.number", at.line);
                    span.record("code.column.number", at.column);
                }
            }
            // The rest become events of the innermost run, flow or agent span;
            // free text (which may quote content) only with capture.
            Payload::Transfer { from: _, to } => spans::transfer(self.parent(event), to),
            Payload::Escalation { agent_name, result: _, condition_op, condition_value: _ } => {
                spans::escalation(self.parent(event), agent_name, condition_op)
            }
            Payload::HistoryCompaction { strategy, original_tokens, compacted_tokens, messages_removed } => {
                spans::compaction(self.parent(event), strategy, *original_tokens, *compacted_tokens, *messages_removed)
            }
            Payload::Warning { message } => {
                spans::warning(self.parent(event), Some(message.as_str()).filter(|_| capture))
            }
            Payload::HumanInputRequested { message } => {
                spans::note(self.parent(event), "human_input_requested", Some(message.as_str()).filter(|_| capture))
            }
            Payload::ToolInDoubt { tool, .. } => spans::note(self.parent(event), "tool_in_doubt", Some(tool.as_str())),
            // The state only: the text is the remote's content.
            Payload::RemoteUpdate { state, .. } => {
                spans::note(self.parent(event), "remote_update", Some(state.as_str()))
            }
            Payload::Log { message } if capture => spans::note(self.parent(event), "log", Some(message.as_str())),
            Payload::Notify { message } if capture => spans::note(self.parent(event), "notify", Some(message.as_str())),
            // Text deltas are too many to matter one by one (`record` skips
            // them); variables hold content and change often; results end
            // flows and runs.
            Payload::Log { .. }
            | Payload::Notify { .. }
            | Payload::CodeOutput { .. }
            | Payload::TextDelta { .. }
            | Payload::StateChange { .. }
            | Payload::FlowResult { .. } => {}
        }
    }

    /// Where an event that opens no span goes.
    fn parent(&self, event: &Event) -> Option<tracing::Id> {
        self.spans.node(event).and_then(Span::id)
    }
}

fn status_name(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Completed => "completed",
        RunStatus::Failed => "failed",
        RunStatus::Paused => "paused",
        RunStatus::Cancelled => "cancelled",
    }
}
