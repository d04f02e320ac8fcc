//! The spans open across runs, found by what produced them: the invocation and
//! event path (`flow:main`, `branch:2`, `agent:reviewer`), and the call id for
//! tools. A span ends when its end event arrives; spans still open inside it
//! then (an agent whose failure a flow handled, a branch cancelled by its
//! sibling's failure) end first, in reverse order of opening so that children
//! end before their parents.

use sr_runtime::event::Event;
use tracing::{Id, Span};

pub(crate) enum Role {
    Run,
    Flow,
    Agent,
    /// The model call in progress at its path (a path makes one at a time).
    Chat,
    Tool {
        call_id: String,
        tool: String,
    },
}

impl Role {
    /// Runs, flows and agents: what event paths name.
    fn is_node(&self) -> bool {
        matches!(self, Role::Run | Role::Flow | Role::Agent)
    }

    /// Whether a new span with role `other` at the same path replaces this one.
    fn same_as(&self, other: &Role) -> bool {
        match (self, other) {
            (Role::Tool { call_id: a, .. }, Role::Tool { call_id: b, .. }) => a == b,
            (Role::Chat, Role::Chat) => true,
            (a, b) => a.is_node() && b.is_node(),
        }
    }
}

struct Open {
    invocation: String,
    path: Vec<String>,
    role: Role,
    span: Span,
    /// The event that opened it, while events are served (`Telemetry::served`).
    start: Option<Event>,
}

impl Open {
    fn of(&self, event: &Event) -> bool {
        self.invocation == event.invocation_id
    }
}

#[derive(Default)]
pub(crate) struct OpenSpans {
    open: Vec<Open>,
    /// Keep each span's opening event (served events open spans that make
    /// nothing: those still open when the run goes live open again).
    keep_starts: bool,
}

impl OpenSpans {
    /// Opens `span` for `event`. A span still open for the same producer never
    /// got its end event: its run went on without it, so it failed.
    pub(crate) fn push(&mut self, event: &Event, role: Role, span: Span, failed: impl Fn(&Span)) {
        if let Some(stale) = self.take(event, |r| r.same_as(&role), &failed) {
            failed(&stale);
        }
        let start = self.keep_starts.then(|| event.clone());
        self.open.push(Open { invocation: event.invocation_id.clone(), path: event.path.clone(), role, span, start });
    }

    /// Whether spans keep their opening events (events are served until now).
    pub(crate) fn reopening(&self) -> bool {
        self.keep_starts
    }

    /// From now on, each span keeps the event that opened it, or not.
    pub(crate) fn keep_starts(&mut self, keep: bool) {
        self.keep_starts = keep;
    }

    /// Forgets every open span and returns the events that opened them,
    /// outermost first: to open them again.
    pub(crate) fn reopen(&mut self) -> Vec<Event> {
        self.open.drain(..).filter_map(|open| open.start).collect()
    }

    /// Removes the span at the event's path whose role `is`, ending the spans
    /// opened inside it with `inside` first. Tools have nothing inside: a
    /// sub-agent they run ends before them.
    pub(crate) fn take(&mut self, event: &Event, is: impl Fn(&Role) -> bool, inside: impl Fn(&Span)) -> Option<Span> {
        let at = self.open.iter().rposition(|o| o.of(event) && o.path == event.path && is(&o.role))?;
        let taken = self.open.remove(at);
        if taken.role.is_node() {
            for i in (at..self.open.len()).rev() {
                let open = &self.open[i];
                if open.of(event) && open.path.starts_with(&event.path) {
                    inside(&self.open.remove(i).span);
                }
            }
        }
        Some(taken.span)
    }

    /// The innermost run, flow or agent at the event's path or above it (a
    /// parallel branch's `branch:N` segment has no span of its own).
    pub(crate) fn node(&self, event: &Event) -> Option<&Span> {
        (0..=event.path.len()).rev().find_map(|len| self.node_at(event, &event.path[..len]))
    }

    /// The parent of a run, flow or agent starting with `event`: the innermost
    /// node above it, or the tool call that runs it when an agent is used as a
    /// tool (`use`), as the conventions nest agents called as tools.
    pub(crate) fn parent_of_node(&self, event: &Event, agent: Option<&str>) -> Option<Id> {
        (0..event.path.len()).rev().find_map(|len| {
            let above = &event.path[..len];
            let tool = agent.and_then(|agent| self.tool_at(event, above, agent));
            tool.or_else(|| self.node_at(event, above)).and_then(Span::id)
        })
    }

    /// The code step in progress at the event's path: tool calls the agent's
    /// code makes while it runs are its children, as a tool's own calls.
    pub(crate) fn code_step(&self, event: &Event) -> Option<&Span> {
        self.tool_at(event, &event.path, crate::spans::CODE_EXECUTION)
    }

    /// The innermost open call of `tool` at `path`.
    fn tool_at(&self, event: &Event, path: &[String], tool: &str) -> Option<&Span> {
        self.open
            .iter()
            .rev()
            .find(|o| o.of(event) && o.path == path && matches!(&o.role, Role::Tool { tool: t, .. } if t == tool))
            .map(|o| &o.span)
    }

    fn node_at(&self, event: &Event, path: &[String]) -> Option<&Span> {
        self.open.iter().rev().find(|o| o.of(event) && o.path == path && o.role.is_node()).map(|o| &o.span)
    }
}
