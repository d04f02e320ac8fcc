//! The step hook: before every statement, model call and tool call it decides
//! whether the thread goes on (breakpoints, logpoints, steps, pause, entry,
//! escalations) and, when it stops, parks it until the client resumes it.
//! Failures stop where the runtime reports them, and `escalate to human`
//! stops until the user answers.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::json;
use sr_runtime::eval::Vars;
use sr_runtime::hook::{Control, Failure, Frame, FrameKind, Step, StepHook, StepPoint};
use tokio::sync::oneshot;

use crate::debugger::{Debugger, Resume, RunInfo, State, Stopped, dap_thread};
use crate::exceptions::{Exception, ExceptionKind};
use crate::protocol::{Event, OutputEvent, QuestionEvent, StoppedEvent};
use crate::snapshot::{Edit, ScopeSpec, Shown, Snapshot};
use crate::source::Loaded;
use crate::trigger::Verdict;
use crate::variables::{Handle, Handles, Root};
use crate::{prompts, stepping};

pub struct DebugHook(pub Arc<Debugger>);

impl StepHook for DebugHook {
    fn on_step<'a>(&'a self, mut step: Step<'a>) -> BoxFuture<'a, Control> {
        Box::pin(async move {
            match self.0.check(&mut step) {
                Check::Continue => Control::Continue,
                Check::Terminate => Control::Terminate,
                Check::Stop(reason) => self.stop(step, reason, None).await.0,
            }
        })
    }

    /// Completes once `pause` is asked for, so that a model call stops at once.
    fn interrupt(&self, _thread: u32) -> BoxFuture<'static, ()> {
        let debugger = self.0.clone();
        Box::pin(async move {
            loop {
                // Created before the check, so a pause between the two is not missed.
                let paused = debugger.paused.notified();
                if debugger.lock().run.pause {
                    return;
                }
                paused.await;
            }
        })
    }

    fn on_thread(&self, thread: u32, parent: u32, started: bool) {
        self.0.thread_changed(thread, parent, started);
    }

    fn on_failure<'a>(&'a self, step: Step<'a>, failure: Failure<'a>) -> BoxFuture<'a, Control> {
        Box::pin(async move {
            let exception = {
                let st = self.0.lock();
                if st.run.terminate {
                    return Control::Terminate;
                }
                if st.run.travel.is_some() {
                    return Control::Continue;
                }
                self.0.report_failure(&st, &step, failure);
                st.watch.failure(&step.point, failure)
            };
            match exception {
                Some(exception) => self.stop(step, Reason::Exception(exception), None).await.0,
                None => Control::Continue,
            }
        })
    }

    fn on_human<'a>(&'a self, step: Step<'a>, message: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            if self.0.lock().run.terminate {
                return None;
            }
            let exception = Exception {
                kind: ExceptionKind::Human,
                description: format!(
                    "escalate to human: {message} (answer with `:answer TEXT` in the debug console, then continue)"
                ),
                unhandled: false,
            };
            self.stop(step, Reason::Exception(exception), Some(message.to_string())).await.1
        })
    }
}

impl DebugHook {
    /// Parks the thread until the client resumes it; what the run does next,
    /// and the answer to `question` if the user gave one.
    async fn stop(&self, step: Step<'_>, reason: Reason, question: Option<String>) -> (Control, Option<String>) {
        let depth = stepping::depth(step.frames.len(), &step.point);
        let parked = self.0.park(step.thread, Snapshot::capture(&step), depth, reason, question);
        match parked.await {
            Ok(Resume { vars, terminate, answer, edit }) => {
                *step.vars = vars;
                let control = match (terminate, edit) {
                    (true, _) => Control::Terminate,
                    (false, Some(Edit::Request(request))) => Control::Replace(request),
                    (false, Some(Edit::Reply(reply))) => Control::Reply(reply),
                    (false, None) => Control::Continue,
                };
                (control, answer)
            }
            // The debugger is gone.
            Err(_) => (Control::Terminate, None),
        }
    }
}

/// The hook of a `noDebug` run: nothing stops, failures still show.
pub struct ReportHook(pub Arc<Debugger>);

impl StepHook for ReportHook {
    fn on_step<'a>(&'a self, _step: Step<'a>) -> BoxFuture<'a, Control> {
        Box::pin(std::future::ready(Control::Continue))
    }

    fn on_failure<'a>(&'a self, step: Step<'a>, failure: Failure<'a>) -> BoxFuture<'a, Control> {
        self.0.report_failure(&self.0.lock(), &step, failure);
        Box::pin(std::future::ready(Control::Continue))
    }
}

pub enum Check {
    Continue,
    Terminate,
    Stop(Reason),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    Entry,
    Step,
    Pause,
    Breakpoint {
        ids: Vec<i64>,
        function: bool,
        /// What a prompt breakpoint's prompt rendered to.
        text: Option<String>,
    },
    /// A watched variable was written.
    Data(Vec<i64>),
    /// Arrived where going back in time went, as a step or a breakpoint.
    Travel(&'static str),
    Exception(Exception),
}

impl Debugger {
    /// Decides at a point. Conditions, hit counts and logpoints are handled
    /// here, on the thread's live variables. Going back in time, a point where
    /// the user had set variables gets them again.
    pub fn check(&self, step: &mut Step<'_>) -> Check {
        let mut guard = self.lock();
        let st = &mut *guard;
        if st.run.terminate {
            return Check::Terminate;
        }
        let thread = step.thread;
        // A branch starts with its parent's frames: none of them is new.
        let now = stepping::seen(step.frames);
        let first = if thread == 0 { Vec::new() } else { now.clone() };
        let before = st.run.seen.insert(thread, now).unwrap_or(first);
        // A pause inside a model call is not a point a replay reaches again:
        // it keeps the call's position.
        if !matches!(step.point, StepPoint::ModelStreaming { .. }) {
            st.run.position += 1;
            let position = st.run.position;
            st.run.at.insert(thread, position);
        }
        let position = st.run.at.get(&thread).copied().unwrap_or_default();
        // Where each frame of the thread's stack started, outermost first.
        let entered = stepping::entered(&before, step.frames).len();
        let starts = st.run.frame_starts.entry(thread).or_insert_with(|| vec![position; step.frames.len()]);
        starts.truncate(step.frames.len() - entered);
        starts.resize(step.frames.len(), position);
        if let (Some(_), Some(edited)) = (st.run.travel, st.edits.get(&position)) {
            step.vars.clone_from(edited);
        }
        let vars: &Vars = step.vars;
        if let Some(travel) = st.run.travel {
            if position < travel.to {
                return Check::Continue;
            }
            st.run.travel = None;
            return Check::Stop(Reason::Travel(travel.reason));
        }
        let exception = st.watch.take(thread);

        let mut ids = Vec::new();
        let mut messages = Vec::new();
        if let StepPoint::Statement { body, stmt } = step.point {
            let offset = step.program.stmt_range(&body.source, stmt).start();
            let source = st.loaded.as_ref().and_then(|l| l.source(body.source.file));
            for bp in st.breakpoints.lines.iter_mut().filter(|b| b.file == body.source.file && b.offset == offset) {
                let line = Some(st.positions.line_out(bp.line));
                match bp.trigger.check(vars) {
                    Verdict::Stop => ids.push(bp.id),
                    Verdict::StopFailed(e) => {
                        ids.push(bp.id);
                        messages.push((format!("breakpoint condition failed: {e}"), source.clone(), line));
                    }
                    Verdict::Log(text) => messages.push((text, source.clone(), line)),
                    Verdict::Skip => {}
                }
            }
        }
        let mut rendered_text = None;
        if let StepPoint::ModelCall { agent, request } = step.point {
            for (prompt, text) in prompts::rendered(step.program, agent, request) {
                for bp in st.breakpoints.prompts.iter_mut().filter(|b| b.prompt == prompt) {
                    match bp.trigger.check(vars) {
                        Verdict::Stop | Verdict::StopFailed(_) => {
                            ids.push(bp.id);
                            rendered_text = Some(format!("prompt {prompt}:\n{text}"));
                        }
                        Verdict::Log(log) => messages.push((log, None, None)),
                        Verdict::Skip => {}
                    }
                }
            }
        }
        let line_hit = !ids.is_empty();
        let data = st.breakpoints.data.hits(thread, vars);
        for frame in stepping::entered(&before, step.frames) {
            if !matches!(frame.kind, FrameKind::Flow | FrameKind::Agent) {
                continue;
            }
            for bp in st.breakpoints.named.iter_mut().filter(|b| b.name == frame.name) {
                match bp.trigger.check(vars) {
                    Verdict::Stop | Verdict::Log(_) => ids.push(bp.id),
                    Verdict::StopFailed(e) => {
                        ids.push(bp.id);
                        messages.push((format!("breakpoint condition failed: {e}"), None, None));
                    }
                    Verdict::Skip => {}
                }
            }
        }
        for (text, source, line) in messages {
            self.client.output_at("console", text, source, line);
        }

        let depth = stepping::depth(step.frames.len(), &step.point);
        let stepped =
            st.run.stepping.get(&thread).is_some_and(|s| s.done(depth)) || st.run.orphan.is_some_and(|s| s.done(depth));
        let entry = std::mem::take(&mut st.run.entry);
        let reason = match exception {
            Some(exception) => Reason::Exception(exception),
            None if !ids.is_empty() => Reason::Breakpoint { ids, function: !line_hit, text: rendered_text },
            None if !data.is_empty() => Reason::Data(data),
            None if stepped => Reason::Step,
            None if st.run.pause => Reason::Pause,
            None if entry => Reason::Entry,
            None => return Check::Continue,
        };
        st.run.stepping.remove(&thread);
        st.run.orphan = None;
        Check::Stop(reason)
    }

    /// Shows a failure in the debug console where it happens, caught or not
    /// (`stderr` when nothing handles it, else `console`), at the statement
    /// it comes from: a model or tool call's is the statement that made it.
    pub fn report_failure(&self, st: &State, step: &Step<'_>, failure: Failure<'_>) {
        let loaded = st.loaded.as_ref();
        let at = match step.point {
            StepPoint::Statement { body, stmt } => loaded.map(|l| {
                let at = l.program.stmt_location(&body.source, stmt);
                (Some(body.source.file), at.line, at.column)
            }),
            _ => step.frames.last().map(|frame| position(loaded, frame)),
        };
        let (category, handled) = match (step.point, failure.caught) {
            (_, false) => ("stderr", ""),
            (StepPoint::ToolCall { .. }, true) => ("console", " (the model gets the error)"),
            (_, true) => ("console", " (handled by `on failure:`)"),
        };
        let (source, line, column, place) = match at {
            Some((file, line, column)) => {
                let source = file.and_then(|f| loaded?.source(f));
                let name = source.as_ref().map_or("", |s| s.name.as_str());
                let place = format!(" at {name}:{line}:{column}");
                (source, Some(st.positions.line_out(line)), Some(st.positions.column_out(column)), place)
            }
            None => (None, None, None, String::new()),
        };
        let output = format!("failure{place}{handled}: {}\n", failure.message);
        let category = category.to_string();
        self.client.event(Event::Output(OutputEvent { category, output, source, line, column }));
    }

    /// Parks a thread: records what it shows and tells the client it stopped.
    pub fn park(
        &self,
        thread: u32,
        snapshot: Snapshot,
        depth: usize,
        reason: Reason,
        question: Option<String>,
    ) -> oneshot::Receiver<Resume> {
        let (tx, rx) = oneshot::channel();
        let mut guard = self.lock();
        let st = &mut *guard;
        let frames = shown(st.loaded.as_ref(), &snapshot, &st.run.info, thread, &mut st.run.handles);
        let (reason_text, description, ids, exception) = match reason {
            Reason::Entry => ("entry", None, Vec::new(), None),
            Reason::Step => ("step", None, Vec::new(), None),
            Reason::Pause => ("pause", None, Vec::new(), None),
            Reason::Breakpoint { ids, function: false, text } => ("breakpoint", text, ids, None),
            Reason::Breakpoint { ids, function: true, text } => ("function breakpoint", text, ids, None),
            Reason::Data(ids) => ("data breakpoint", None, ids, None),
            Reason::Travel(reason) => (reason, None, Vec::new(), None),
            Reason::Exception(e) => ("exception", Some(e.description.clone()), Vec::new(), Some(e)),
        };
        self.client.event(Event::Stopped(StoppedEvent {
            reason: reason_text.to_string(),
            description: description.clone(),
            thread_id: dap_thread(thread),
            text: description,
            all_threads_stopped: false,
            hit_breakpoint_ids: ids,
            preserve_focus_hint: false,
        }));
        if let Some(question) = &question {
            let question = Some(question.clone());
            self.client.event(Event::Question(QuestionEvent { thread_id: dap_thread(thread), question }));
        }
        let position = st.run.at.get(&thread).copied().unwrap_or(st.run.position);
        let frame_starts = st.run.frame_starts.get(&thread).cloned().unwrap_or_default();
        if reason_text == "breakpoint" && !st.breakpoint_stops.contains(&position) {
            st.breakpoint_stops.push(position);
        }
        let stopped = Stopped {
            snapshot,
            frames,
            depth,
            position,
            frame_starts,
            edited: false,
            exception,
            question,
            answer: None,
            resume: tx,
        };
        st.run.stopped.insert(thread, stopped);
        rx
    }
}

/// The frames of a snapshot as the client sees them, innermost first, with ids.
fn shown(
    loaded: Option<&Loaded>,
    snapshot: &Snapshot,
    info: &RunInfo,
    thread: u32,
    handles: &mut Handles,
) -> Vec<Shown> {
    let run = Root::Value(Arc::new(json!({
        "workload": info.workload,
        "input": info.input,
        "invocation": info.invocation,
        "thread": if thread == 0 { "main".to_string() } else { format!("branch {thread}") },
    })));
    let scope = |name, hint, root| ScopeSpec { name, hint, root };
    let mut out = Vec::new();
    for frame in snapshot.frames.iter().rev() {
        let (file, line, column) = position(loaded, frame);
        let mut scopes = vec![scope("Variables", Some("locals"), Root::Vars)];
        if let Some(exchange) = &frame.last_exchange {
            scopes.push(scope("Last model exchange", None, Root::Value(Arc::new(exchange.clone()))));
        }
        scopes.push(scope("Run", None, run.clone()));
        let name = match frame.kind {
            FrameKind::Flow => format!("flow {}", frame.name),
            FrameKind::Handler => format!("handler {}", frame.name),
            FrameKind::Agent => format!("agent {}", frame.name),
        };
        out.push(Shown { id: 0, name, file, line, column, subtle: false, scopes });
    }
    if let Some(call) = &snapshot.call {
        let (file, line, column) = out.first().map_or((None, 1, 1), |f| (f.file, f.line, f.column));
        let scopes = vec![
            scope("Call", Some("arguments"), Root::Call),
            scope("Variables", Some("locals"), Root::Vars),
            scope("Run", None, run.clone()),
        ];
        out.insert(0, Shown { id: 0, name: call.name.clone(), file, line, column, subtle: true, scopes });
    }
    for (index, frame) in out.iter_mut().enumerate() {
        frame.id = handles.add(Handle::Frame { thread, index });
    }
    out
}

/// Where a frame is: the statement a flow or handler is at, an agent's name.
fn position(loaded: Option<&Loaded>, frame: &Frame) -> (Option<usize>, u32, u32) {
    let Some(loaded) = loaded else { return (None, 1, 1) };
    match (&frame.body, frame.stmt) {
        (Some(body), Some(stmt)) => {
            let at = loaded.program.stmt_location(&body.source, stmt);
            (Some(body.source.file), at.line, at.column)
        }
        (Some(body), None) => {
            let (line, column) = loaded.item_position(&body.source);
            (Some(body.source.file), line, column)
        }
        (None, _) => match loaded.program.agents.get(frame.name.as_str()) {
            Some(agent) => {
                let (line, column) = loaded.item_position(&agent.source);
                (Some(agent.source.file), line, column)
            }
            None => (None, 1, 1),
        },
    }
}
