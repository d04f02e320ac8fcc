//! The step hook: before every statement, model call and tool call it decides
//! whether the thread goes on (breakpoints, logpoints, steps, pause, entry,
//! escalations) and, when it stops, parks it until the client resumes it.
//! Failures stop where the runtime reports them, and `escalate to human`
//! stops until the user answers. The runtime's thread ids become the
//! session's thread numbers here (`Debugger::enter`).

use std::collections::BTreeSet;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::json;
use sr_runtime::eval::Vars;
use sr_runtime::hook::{Control, Failure, FrameKind, Step, StepHook, StepPoint};
use tokio::sync::oneshot;

use crate::debugger::{Debugger, Resume, Run, RunInfo, State, Stopped, dap_thread};
use crate::exceptions::{Exception, ExceptionKind};
use crate::protocol::{Event, QuestionEvent, StoppedEvent};
use crate::snapshot::{Edit, ScopeSpec, Shown, Snapshot};
use crate::source::{Loaded, frame_position};
use crate::threads::display;
use crate::travel::{At, Held, Quiet};
use crate::trigger::Verdict;
use crate::variables::{Handle, Handles, Root};
use crate::{prompts, stepping};

/// The debugger as the step hook of the run of `generation`.
pub struct DebugHook {
    pub debugger: Arc<Debugger>,
    pub generation: u64,
}

impl StepHook for DebugHook {
    fn on_step<'a>(&'a self, mut step: Step<'a>) -> BoxFuture<'a, Control> {
        Box::pin(async move {
            match self.debugger.check(&mut step) {
                Check::Continue => Control::Continue,
                Check::Fork => Control::Fork,
                Check::Terminate => Control::Terminate,
                Check::Stop(thread, reason) => self.stop(step, thread, reason, None, false).await.0,
            }
        })
    }

    /// Completes once `pause` is asked for, so that a model call stops at once.
    fn interrupt(&self, _thread: u32) -> BoxFuture<'static, ()> {
        let debugger = self.debugger.clone();
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
        self.debugger.thread_changed(self.generation, thread, parent, started);
    }

    /// Shows the failure and stops if a filter asks to; going back in time,
    /// a thread on its way back stays silent, and one that had stopped on
    /// this failure stops on it again.
    fn on_failure<'a>(&'a self, step: Step<'a>, failure: Failure<'a>) -> BoxFuture<'a, Control> {
        Box::pin(async move {
            let (thread, reason) = {
                let mut guard = self.debugger.lock();
                let st = &mut *guard;
                if st.run.terminate {
                    return Control::Terminate;
                }
                let thread = self.debugger.enter(st, step.thread, step.thread_key);
                self.debugger.went_on(st, thread);
                self.debugger.edited_inside(st, thread, step.vars);
                let reason = match arrived_inside(&mut st.run, thread) {
                    Some(held) => Some(held),
                    None if st.run.quiet.contains_key(&thread) => return Control::Continue,
                    None => {
                        self.debugger.report_failure(st, &step, failure);
                        st.watch.failure(&step.point, failure).map(Reason::Exception)
                    }
                };
                (thread, reason)
            };
            match reason {
                Some(reason) => self.stop(step, thread, reason, None, true).await.0,
                None => Control::Continue,
            }
        })
    }

    /// Stops until the user answers (`answer`); going back in time, a thread
    /// on its way back gets the answer it was given before. Met again in
    /// the branch, the question stops with the branch's answer given already.
    fn on_human<'a>(&'a self, step: Step<'a>, message: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let (thread, reason) = {
                let mut guard = self.debugger.lock();
                let st = &mut *guard;
                if st.run.terminate {
                    return None;
                }
                let thread = self.debugger.enter(st, step.thread, step.thread_key);
                self.debugger.went_on(st, thread);
                self.debugger.edited_inside(st, thread, step.vars);
                let point = st.run.points.get(&thread).copied().unwrap_or_default();
                let before = st.forks.current().answers.get(&(thread, point)).cloned();
                let reason = match arrived_inside(&mut st.run, thread) {
                    Some(held) => held,
                    None if st.run.quiet.contains_key(&thread) => return before,
                    None => {
                        if let Some(answer) = &before {
                            let quoted = serde_json::Value::String(answer.clone());
                            self.debugger.client.output(
                                "console",
                                format!(
                                    "\"{message}\" was answered {quoted} here before: continue gives it again, \
                                     `:answer TEXT` another (a fork)"
                                ),
                            );
                        }
                        Reason::Exception(Exception {
                            kind: ExceptionKind::Human,
                            description: format!(
                                "escalate to human: {message} (answer with `:answer TEXT` in the debug console, then continue)"
                            ),
                            unhandled: false,
                        })
                        .answered(before)
                    }
                };
                (thread, reason)
            };
            self.stop(step, thread, reason, Some(message.to_string()), true).await.1
        })
    }
}

impl DebugHook {
    /// Parks the thread until the client resumes it; what the run does next,
    /// and the answer to `question` if the user gave one. `inside`: the stop
    /// is a failure or a question met while running the thread's point.
    async fn stop(
        &self,
        step: Step<'_>,
        thread: u32,
        reason: Reason,
        question: Option<String>,
        inside: bool,
    ) -> (Control, Option<String>) {
        // A held thread stops again with the edits it had not resumed with.
        if let Reason::Again(held) = &reason
            && let Some((vars, _)) = &held.edited
        {
            step.vars.clone_from(vars);
        }
        let depth = stepping::depth(step.frames.len(), &step.point);
        let asks = question.is_some();
        let parked = self.debugger.park(thread, Snapshot::capture(&step), depth, reason, question, inside);
        match parked.await {
            Ok(Resume { vars, terminate, answer, edit, fork }) => {
                *step.vars = vars;
                // A fork the thread owes since an answer (not at the question
                // itself, which cannot fork: see `Debugger::resumed`).
                let owed = !asks && self.debugger.lock().run.fork_next.remove(&thread);
                let control = match (terminate, edit) {
                    (true, _) => Control::Terminate,
                    (false, Some(Edit::Request(request))) => Control::Replace(request),
                    (false, Some(Edit::Reply(reply))) => Control::Reply(reply),
                    // A new choice (an edit, running live, another answer):
                    // what follows is a fork. (An edit made again when going
                    // back in time is not: the recording went on from it.)
                    (false, None) if fork || owed => Control::Fork,
                    (false, None) => Control::Continue,
                };
                (control, answer)
            }
            // The debugger is gone.
            Err(_) => (Control::Terminate, None),
        }
    }
}

pub enum Check {
    Continue,
    /// Go on, forking here (owed since an answer).
    Fork,
    Terminate,
    /// Stop the session's thread.
    Stop(u32, Reason),
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
    /// Going back in time on another thread: stopped again where it was.
    Again(Box<Held>),
    Exception(Exception),
    /// An `escalate to human` the branch answered before, with that answer.
    Answered(Exception, String),
}

impl Reason {
    /// A question's stop with an answer given already (the branch's).
    fn answered(self, answer: Option<String>) -> Reason {
        match (self, answer) {
            (Reason::Exception(exception), Some(answer)) => Reason::Answered(exception, answer),
            (reason, _) => reason,
        }
    }
}

impl Debugger {
    /// Decides at a point. Conditions, hit counts and logpoints are handled
    /// here, on the thread's live variables. A point where the branch's
    /// thread had been given variables (`setVariable`) gets them again. Going
    /// back in time, a thread on its way back goes on silently and stops
    /// where the plan says.
    pub fn check(&self, step: &mut Step<'_>) -> Check {
        let mut guard = self.lock();
        let st = &mut *guard;
        if st.run.terminate {
            return Check::Terminate;
        }
        let runtime = step.thread;
        let thread = self.enter(st, runtime, step.thread_key);
        // A branch starts with its parent's frames: none of them is new.
        let now = stepping::seen(step.frames);
        let first = if thread == 0 { Vec::new() } else { now.clone() };
        let before = st.run.seen.insert(thread, now).unwrap_or(first);
        // A pause inside a model call is not a point a replay reaches again:
        // it keeps the call's point.
        let points = st.run.points.entry(thread).or_default();
        if !matches!(step.point, StepPoint::ModelStreaming { .. }) {
            *points += 1;
        }
        let point = *points;
        st.forks.reach(thread, point, false);
        // Where each frame of the thread's stack started, outermost first.
        let entered = stepping::entered(&before, step.frames).len();
        let starts = st.run.frame_starts.entry(thread).or_insert_with(|| vec![point; step.frames.len()]);
        starts.truncate(step.frames.len() - entered);
        starts.resize(step.frames.len(), point);
        if let Some(edited) = st.forks.current().edits.get(&(thread, point, false)) {
            step.vars.clone_from(edited);
        }
        let fork = st.run.fork_next.contains(&thread);
        if let Some(quiet) = st.run.quiet.get(&thread) {
            let arrived = point >= quiet.limit();
            let reason = match quiet {
                Quiet::Stop { reason, .. } if arrived => Some(Reason::Travel(reason)),
                Quiet::Hold { at, held } if arrived && !at.inside => Some(Reason::Again(held.clone())),
                // It had gone past this point: it runs on from here.
                Quiet::Run { .. } if arrived => None,
                _ => return Check::Continue,
            };
            st.run.quiet.remove(&thread);
            return match reason {
                Some(reason) => Check::Stop(thread, reason),
                None if fork => self.go_on_forking(st, thread),
                None => Check::Continue,
            };
        }
        let vars: &Vars = step.vars;
        let exception = st.watch.take(runtime);

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
        let data = st.breakpoints.data.hits(runtime, vars);
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
            None if fork => return self.go_on_forking(st, thread),
            None => return Check::Continue,
        };
        st.run.stepping.remove(&thread);
        st.run.orphan = None;
        Check::Stop(thread, reason)
    }

    /// Inside a point (a failure, a question), the variables the fork's
    /// thread was given there, as at its point before it.
    pub fn edited_inside(&self, st: &State, thread: u32, vars: &mut Vars) {
        let point = st.run.points.get(&thread).copied().unwrap_or_default();
        if let Some(edited) = st.forks.current().edits.get(&(thread, point, true)) {
            vars.clone_from(edited);
        }
    }

    /// A thread that owes a fork goes on without stopping: it forks now.
    fn go_on_forking(&self, st: &mut State, thread: u32) -> Check {
        st.run.fork_next.remove(&thread);
        Check::Fork
    }

    /// Parks a thread: records what it shows and tells the client it stopped
    /// (`inside`: on a failure or a question met while running its point).
    pub fn park(
        &self,
        thread: u32,
        snapshot: Snapshot,
        depth: usize,
        reason: Reason,
        question: Option<String>,
        inside: bool,
    ) -> oneshot::Receiver<Resume> {
        let (tx, rx) = oneshot::channel();
        let mut guard = self.lock();
        let st = &mut *guard;
        let name = display(&st.run.runtime, thread);
        let frames = shown(st.loaded.as_ref(), &snapshot, (&st.run.info, &name), thread, &mut st.run.handles);
        let (mut live, mut edited_names) = (false, None::<BTreeSet<String>>);
        let stop = |reason: &str, description: Option<String>, ids| StoppedEvent {
            reason: reason.to_string(),
            description: description.clone(),
            thread_id: dap_thread(thread),
            text: description,
            all_threads_stopped: false,
            hit_breakpoint_ids: ids,
            preserve_focus_hint: false,
        };
        let (event, exception, answer) = match reason {
            Reason::Entry => (stop("entry", None, Vec::new()), None, None),
            Reason::Step => (stop("step", None, Vec::new()), None, None),
            Reason::Pause => (stop("pause", None, Vec::new()), None, None),
            Reason::Breakpoint { ids, function: false, text } => (stop("breakpoint", text, ids), None, None),
            Reason::Breakpoint { ids, function: true, text } => (stop("function breakpoint", text, ids), None, None),
            Reason::Data(ids) => (stop("data breakpoint", None, ids), None, None),
            Reason::Travel(reason) => (stop(reason, None, Vec::new()), None, None),
            Reason::Again(held) => {
                let Held { stopped, exception, answer, edited, live: was_live } = *held;
                live = was_live;
                edited_names = edited.map(|(_, names)| names.into_iter().collect());
                (StoppedEvent { preserve_focus_hint: true, ..stopped }, exception, answer)
            }
            Reason::Exception(e) => (stop("exception", Some(e.description.clone()), Vec::new()), Some(e), None),
            Reason::Answered(e, answer) => {
                (stop("exception", Some(e.description.clone()), Vec::new()), Some(e), Some(answer))
            }
        };
        self.client.event(Event::Stopped(event.clone()));
        if !event.preserve_focus_hint {
            st.run.focus = Some(thread);
        }
        if let Some(question) = &question {
            let question = Some(question.clone());
            self.client.event(Event::Question(QuestionEvent { thread_id: dap_thread(thread), question }));
        }
        let at = At { point: st.run.points.get(&thread).copied().unwrap_or_default(), inside };
        let frame_starts = st.run.frame_starts.get(&thread).cloned().unwrap_or_default();
        if event.reason == "breakpoint" {
            st.breakpoint_stops.insert((thread, at.point));
        }
        let event = StoppedEvent { preserve_focus_hint: false, ..event };
        let stopped = Stopped {
            snapshot,
            frames,
            depth,
            at,
            frame_starts,
            event,
            edited: edited_names.is_some(),
            edited_names: edited_names.unwrap_or_default(),
            live,
            exception,
            question,
            answer,
            resume: tx,
        };
        st.run.stopped.insert(thread, stopped);
        rx
    }
}

/// Going back in time: the stop of a thread held inside its point (on a
/// failure or a question), once it gets there again.
fn arrived_inside(run: &mut Run, thread: u32) -> Option<Reason> {
    let point = run.points.get(&thread).copied().unwrap_or_default();
    match run.quiet.get(&thread)? {
        Quiet::Hold { at, .. } if at.inside && point >= at.point => {}
        _ => return None,
    }
    let Some(Quiet::Hold { held, .. }) = run.quiet.remove(&thread) else { return None };
    Some(Reason::Again(held))
}

/// The frames of a snapshot as the client sees them, innermost first, with ids.
fn shown(
    loaded: Option<&Loaded>,
    snapshot: &Snapshot,
    (info, name): (&RunInfo, &str),
    thread: u32,
    handles: &mut Handles,
) -> Vec<Shown> {
    let run = Root::Value(Arc::new(json!({
        "workload": info.workload,
        "input": info.input,
        "invocation": info.invocation,
        "thread": name,
    })));
    let scope = |name, hint, root| ScopeSpec { name, hint, root };
    let mut out = Vec::new();
    for frame in snapshot.frames.iter().rev() {
        let (file, line, column) = frame_position(loaded, frame);
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
