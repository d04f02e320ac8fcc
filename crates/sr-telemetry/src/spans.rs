//! One constructor per span kind, with the attributes the OpenTelemetry GenAI
//! semantic conventions give it. `tracing` fixes a span's fields when the span
//! is created, so what is only known later (usage, errors, content) is declared
//! `Empty` here and recorded when it arrives. `otel.name`, `otel.kind` and
//! `otel.status_code` are the fields tracing-opentelemetry turns into the
//! span's name, kind and status; other subscribers see them as plain fields.

use tracing::field::Empty;
use tracing::{Id, Level, Span};

/// The target of every span and span event, for filters (`sr_telemetry=info`).
pub(crate) const TARGET: &str = "sr_telemetry";

/// A run (`invoke_workflow <workload>`): the root of a trace.
pub(crate) fn run(workflow: &str, entry: &str, invocation_id: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        parent: None,
        "invoke_workflow",
        "otel.name" = format_args!("invoke_workflow {workflow}"),
        "otel.kind" = "internal",
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "gen_ai.operation.name" = "invoke_workflow",
        "gen_ai.workflow.name" = workflow,
        "sr.entry" = entry,
        "sr.invocation.id" = invocation_id,
        "sr.run.status" = Empty,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "sr.usage.cost_usd" = Empty,
        "error.type" = Empty,
        "code.file.path" = Empty,
        "code.line.number" = Empty,
        "code.column.number" = Empty,
        "gen_ai.input.messages" = Empty,
        "gen_ai.output.messages" = Empty,
    )
}

/// A flow (`invoke_workflow <flow>`): it coordinates agents and model calls.
pub(crate) fn flow(parent: Option<Id>, flow: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        parent: parent,
        "invoke_workflow",
        "otel.name" = format_args!("invoke_workflow {flow}"),
        "otel.kind" = "internal",
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "gen_ai.operation.name" = "invoke_workflow",
        "gen_ai.workflow.name" = flow,
        "error.type" = Empty,
        "gen_ai.output.messages" = Empty,
    )
}

/// An agent run in this process (`invoke_agent <agent>`, kind internal).
pub(crate) fn agent(parent: Option<Id>, agent: &str, provider: &str, model: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        parent: parent,
        "invoke_agent",
        "otel.name" = format_args!("invoke_agent {agent}"),
        "otel.kind" = "internal",
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "gen_ai.operation.name" = "invoke_agent",
        "gen_ai.agent.name" = agent,
        "gen_ai.provider.name" = provider,
        "gen_ai.request.model" = model,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "sr.usage.cost_usd" = Empty,
        "error.type" = Empty,
        "gen_ai.input.messages" = Empty,
        "gen_ai.output.messages" = Empty,
    )
}

/// A model call (`chat <model>`, kind client: the model is remote).
pub(crate) fn chat(parent: Option<Id>, provider: &str, model: &str, prompt: Option<&str>) -> Span {
    tracing::info_span!(
        target: TARGET,
        parent: parent,
        "chat",
        "otel.name" = format_args!("chat {model}"),
        "otel.kind" = "client",
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "gen_ai.operation.name" = "chat",
        "gen_ai.provider.name" = provider,
        "gen_ai.request.model" = model,
        "sr.prompt.name" = prompt,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "sr.usage.cost_usd" = Empty,
        "gen_ai.response.finish_reasons" = Empty,
        "error.type" = Empty,
        "gen_ai.input.messages" = Empty,
        "gen_ai.output.messages" = Empty,
    )
}

/// A tool call (`execute_tool <tool>`). Every tool runs on this side of the
/// model (builtin, MCP or an agent used as a tool), hence type `function`.
pub(crate) fn tool(parent: Option<Id>, tool: &str, call_id: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        parent: parent,
        "execute_tool",
        "otel.name" = format_args!("execute_tool {tool}"),
        "otel.kind" = "internal",
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "gen_ai.operation.name" = "execute_tool",
        "gen_ai.tool.name" = tool,
        "gen_ai.tool.call.id" = call_id,
        "gen_ai.tool.type" = "function",
        "error.type" = Empty,
        "gen_ai.tool.call.arguments" = Empty,
        "gen_ai.tool.call.result" = Empty,
    )
}

/// One step of a coding agent: its code running in the sandbox.
pub(crate) fn code_execution(parent: Option<Id>, call_id: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        parent: parent,
        "code_execution",
        "otel.name" = "code_execution",
        "otel.kind" = "internal",
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "gen_ai.operation.name" = "execute_tool",
        "gen_ai.tool.name" = CODE_EXECUTION,
        "gen_ai.tool.call.id" = call_id,
        "gen_ai.tool.type" = "extension",
        "error.type" = Empty,
        "gen_ai.tool.call.arguments" = Empty,
        "gen_ai.tool.call.result" = Empty,
    )
}

/// The tool name of coding agents' steps.
pub(crate) const CODE_EXECUTION: &str = "code_execution";

/// A `delegate` hand-over, on the delegating agent's span.
pub(crate) fn transfer(parent: Option<Id>, to: &str) {
    tracing::event!(target: TARGET, parent: parent, Level::INFO, { "sr.transfer.to" = to }, "transfer");
}

/// `on escalate`: an agent's answer met an escalation condition.
pub(crate) fn escalation(parent: Option<Id>, agent: &str, condition: &str) {
    tracing::event!(
        target: TARGET,
        parent: parent,
        Level::INFO,
        { "gen_ai.agent.name" = agent, "sr.escalation.condition" = condition },
        "escalation"
    );
}

/// A conversation was compacted: tokens before and after, messages removed.
pub(crate) fn compaction(parent: Option<Id>, strategy: &str, before: u64, after: u64, removed: u64) {
    tracing::event!(
        target: TARGET,
        parent: parent,
        Level::INFO,
        {
            "sr.compaction.strategy" = strategy,
            "sr.compaction.original_tokens" = before,
            "sr.compaction.compacted_tokens" = after,
            "sr.compaction.messages_removed" = removed,
        },
        "history_compaction"
    );
}

/// A runtime warning; its text only with content capture (it may quote a reply).
pub(crate) fn warning(parent: Option<Id>, text: Option<&str>) {
    tracing::event!(target: TARGET, parent: parent, Level::WARN, { "sr.message" = text }, "warning");
}

/// Something the run said (`log`, `notify`, a question to a human), as an event named `name`.
pub(crate) fn note(parent: Option<Id>, name: &str, text: Option<&str>) {
    tracing::event!(target: TARGET, parent: parent, Level::INFO, { "sr.message" = text }, "{name}");
}

/// Marks `span` failed. `error.type` is low-cardinality by convention; the
/// message (which may quote prompts or replies) only goes with content capture.
pub(crate) fn fail(span: &Span, error_type: &str, message: Option<&str>) {
    span.record("error.type", error_type);
    span.record("otel.status_code", "error");
    if let Some(message) = message {
        span.record("otel.status_description", message);
    }
}

/// Token counts (and the cost, when the run has prices) of a model call or a total.
pub(crate) fn usage(span: &Span, usage: &sr_runtime::event::Usage) {
    span.record("gen_ai.usage.input_tokens", usage.input_tokens);
    span.record("gen_ai.usage.output_tokens", usage.output_tokens);
    if let Some(cost) = usage.cost_usd {
        span.record("sr.usage.cost_usd", cost);
    }
}
