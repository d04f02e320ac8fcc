//! The debugger's state, shared by the protocol side (requests) and the run
//! (the step hook, the event sink). A stopped thread is parked in the hook on
//! a oneshot channel, with a snapshot of its frames and variables that
//! requests read and setVariable edits; resuming hands back the variables,
//! the answer to an `escalate to human` and an edited model call or reply.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use sr_runtime::RunOutcome;
use sr_runtime::compile::Compiled;
use sr_runtime::eval::Vars;
use sr_runtime::event::RunStatus;
use tokio::sync::{Notify, oneshot};

use crate::breakpoints::{Breakpoints, exception_filters};
use crate::client::Client;
use crate::exceptions::{Exception, Watch};
use crate::protocol::{
    Breakpoint, BreakpointEvent, BreakpointLocation, BreakpointLocationsArguments, ContinuedEvent, Event, ExitedEvent,
    QuestionEvent, SetBreakpointsArguments, SetExceptionBreakpointsArguments, SetFunctionBreakpointsArguments,
    SourceBreakpoint, StoppedEvent, Thread, ThreadEvent,
};
use crate::snapshot::{Call, Edit, Shown, Snapshot};
use crate::source::{Loaded, Positions};
use crate::stepping::{Seen, StepKind, Stepping};
use crate::travel::{At, Quiet, Travel};
use crate::variables::Handles;

pub struct Debugger {
    state: Mutex<State>,
    pub client: Client,
    /// Woken at `pause`, to interrupt model calls.
    pub paused: Notify,
}

pub struct State {
    pub positions: Positions,
    pub loaded: Option<Loaded>,
    pub breakpoints: Breakpoints,
    pub watch: Watch,
    pub run: Run,
    /// The points (thread, point) where a breakpoint stopped a run of this
    /// launch (kept when going back in time, for reverse continue).
    pub breakpoint_stops: BTreeSet<(u32, u64)>,
    /// The variables a thread resumed with after `setVariable`, by (thread,
    /// point): going back in time sets them again there, as the run had them.
    pub edits: BTreeMap<(u32, u64), Vars>,
    /// The answers to `escalate to human` threads resumed with, by (thread,
    /// point): going back in time gives them again.
    pub answers: BTreeMap<(u32, u64), String>,
}

/// What one run of the program has going on.
#[derive(Default)]
pub struct Run {
    /// Tells this run's end from an earlier one's (restart).
    pub generation: u64,
    pub info: RunInfo,
    pub terminate: bool,
    pub pause: bool,
    /// `stopOnEntry`, until the first point.
    pub entry: bool,
    /// Parallel branches alive (the main thread, 0, always is).
    pub threads: BTreeSet<u32>,
    pub stepping: HashMap<u32, Stepping>,
    /// The step of a branch that ended: the next point at its depth, on any thread.
    pub orphan: Option<Stepping>,
    /// Each thread's stack at its last point.
    pub seen: HashMap<u32, Seen>,
    pub stopped: BTreeMap<u32, Stopped>,
    pub handles: Handles,
    /// The points each thread reached so far (see `travel`).
    pub points: HashMap<u32, u64>,
    /// Each branch's parent, and the parent's point when it started.
    pub born: HashMap<u32, (u32, u64)>,
    /// Branches that ended.
    pub ended: BTreeSet<u32>,
    /// Each thread's stack: the point where each frame started, outermost first.
    pub frame_starts: HashMap<u32, Vec<u64>>,
    /// Going back in time: the threads the replay brings back to where they
    /// were, silently (see `travel`); each leaves it when it gets there.
    pub quiet: HashMap<u32, Quiet>,
    /// Going back in time: the threads the client knew of before.
    pub known: BTreeSet<u32>,
}

/// Facts about the run shown in the "Run" scope.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    pub workload: String,
    pub input: String,
    pub invocation: String,
}

/// A parked thread.
pub struct Stopped {
    pub snapshot: Snapshot,
    /// Innermost first, as the client shows them.
    pub frames: Vec<Shown>,
    pub depth: usize,
    /// The thread's point, and whether it stopped inside it (on a failure
    /// or a question) rather than before it.
    pub at: At,
    /// The point where each frame of the stack started, outermost first.
    pub frame_starts: Vec<u64>,
    /// The `stopped` event the client got.
    pub event: StoppedEvent,
    /// `setVariable` changed the variables.
    pub edited: bool,
    pub exception: Option<Exception>,
    /// The `escalate to human` message the thread waits on, and the answer
    /// the user gave so far.
    pub question: Option<String>,
    pub answer: Option<String>,
    pub resume: oneshot::Sender<Resume>,
}

/// What a parked thread gets back.
pub struct Resume {
    pub vars: Vars,
    pub terminate: bool,
    pub answer: Option<String>,
    /// The model call's request or reply as the user edited it.
    pub edit: Option<Edit>,
    /// The user set variables while the thread was stopped.
    pub edited: bool,
}

/// What the client asked a stopped thread to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Continue,
    Step(StepKind),
}

/// DAP thread ids start at 1 (some clients take 0 for "none"); runtime ids at 0.
pub fn dap_thread(thread: u32) -> i64 {
    thread as i64 + 1
}

pub fn runtime_thread(id: i64) -> Option<u32> {
    u32::try_from(id - 1).ok()
}

impl Debugger {
    pub fn new(client: Client) -> Arc<Debugger> {
        Arc::new(Debugger {
            state: Mutex::new(State {
                positions: Positions::default(),
                loaded: None,
                breakpoints: Breakpoints::default(),
                watch: Watch::default(),
                run: Run::default(),
                breakpoint_stops: BTreeSet::new(),
                edits: BTreeMap::new(),
                answers: BTreeMap::new(),
            }),
            client,
            paused: Notify::new(),
        })
    }

    /// The state; a panic elsewhere while it was held does not make it unusable.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn set_positions(&self, positions: Positions) {
        self.lock().positions = positions;
    }

    /// Makes `program` the one being debugged; breakpoints set earlier are
    /// resolved against it and the client is told their new state.
    pub fn load(&self, program: Arc<Compiled>) {
        let mut st = self.lock();
        let loaded = Loaded::new(program);
        let positions = st.positions;
        let changed = st.breakpoints.reload(&loaded, positions);
        st.loaded = Some(loaded);
        for breakpoint in changed {
            self.client.event(Event::Breakpoint(BreakpointEvent { reason: "changed", breakpoint }));
        }
    }

    pub fn set_breakpoints(&self, args: SetBreakpointsArguments) -> Result<Vec<Breakpoint>, String> {
        let path = args.source.path.ok_or("setBreakpoints needs a source with a path")?;
        let requested = match (args.breakpoints, args.lines) {
            (Some(breakpoints), _) => breakpoints,
            (None, Some(lines)) => {
                lines.into_iter().map(|line| SourceBreakpoint { line, ..Default::default() }).collect()
            }
            (None, None) => Vec::new(),
        };
        let mut guard = self.lock();
        let st = &mut *guard;
        Ok(st.breakpoints.set_source(st.loaded.as_ref(), &path, requested, st.positions))
    }

    pub fn set_function_breakpoints(&self, args: SetFunctionBreakpointsArguments) -> Vec<Breakpoint> {
        let mut guard = self.lock();
        let st = &mut *guard;
        st.breakpoints.set_functions(st.loaded.as_ref(), args.breakpoints, st.positions)
    }

    pub fn set_exception_breakpoints(&self, args: SetExceptionBreakpointsArguments) -> Vec<Breakpoint> {
        let mut filters = args.filters;
        filters.extend(args.filter_options.unwrap_or_default().into_iter().map(|o| o.filter_id));
        let (kinds, answers) = exception_filters(&filters);
        self.lock().watch.enabled = kinds.into_iter().collect();
        answers
    }

    /// The statements a breakpoint can stand on between two lines.
    pub fn breakpoint_locations(&self, args: BreakpointLocationsArguments) -> Vec<BreakpointLocation> {
        let st = self.lock();
        let positions = st.positions;
        let (Some(loaded), Some(path)) = (&st.loaded, &args.source.path) else { return Vec::new() };
        let Some(file) = loaded.file_of(std::path::Path::new(path)) else { return Vec::new() };
        let (Some(first), Some(last)) =
            (positions.line_in(args.line), positions.line_in(args.end_line.unwrap_or(args.line)))
        else {
            return Vec::new();
        };
        let mut sites: Vec<_> = loaded
            .sites(file)
            .into_iter()
            .flat_map(|b| b.sites)
            .filter(|s| first <= s.line && s.line <= last)
            .collect();
        sites.sort_by_key(|s| (s.line, s.column));
        sites
            .into_iter()
            .map(|s| BreakpointLocation { line: positions.line_out(s.line), column: positions.column_out(s.column) })
            .collect()
    }

    /// A new run starts: everything about the previous one is forgotten,
    /// unless it travels back in the previous one's recording.
    pub fn begin_run(&self, info: RunInfo, stop_on_entry: bool, travel: Option<Travel>) -> u64 {
        let mut st = self.lock();
        let generation = st.run.generation + 1;
        let mut handles = std::mem::take(&mut st.run.handles);
        handles.forget_all();
        st.run = Run { generation, info, entry: stop_on_entry && travel.is_none(), handles, ..Run::default() };
        match travel {
            None => {
                st.breakpoint_stops.clear();
                st.edits.clear();
                st.answers.clear();
            }
            // What happened after the points gone back to is another future's.
            Some(travel) => {
                st.breakpoint_stops.retain(|(t, p)| travel.keeps(*t, *p));
                st.edits.retain(|(t, p), _| travel.keeps(*t, *p));
                st.answers.retain(|(t, p), _| travel.keeps(*t, *p));
                st.edits.extend(travel.edits);
                st.run.quiet = travel.plan;
                st.run.known = travel.known;
                st.run.stepping = travel.stepping;
            }
        }
        st.breakpoints.reset_hits();
        st.watch.clear();
        generation
    }

    /// Makes the current run's end silent (it is being replaced).
    pub fn supersede(&self) {
        self.lock().run.generation += 1;
    }

    /// The run of `generation` ended (`None`: it had to be aborted); the
    /// client hears of it unless a restart replaced it.
    pub fn end_run(&self, generation: u64, outcome: Option<&RunOutcome>) {
        let st = self.lock();
        if st.run.generation != generation {
            return;
        }
        let code = match outcome.map(|o| o.status) {
            Some(RunStatus::Completed) => 0,
            Some(RunStatus::Paused) => 3,
            Some(RunStatus::Failed) | None => 1,
        };
        self.client.event(Event::Exited(ExitedEvent { exit_code: code }));
        self.client.event(Event::Terminated);
    }

    pub fn threads(&self) -> Vec<Thread> {
        let st = self.lock();
        std::iter::once(0)
            .chain(st.run.threads.iter().copied())
            .map(|t| Thread { id: dap_thread(t), name: if t == 0 { "main".into() } else { format!("branch {t}") } })
            .collect()
    }

    /// A parallel branch of `parent` started or ended (in the run of
    /// `generation`: a run being replaced is not the client's business). A
    /// branch starts with its parent's step in, so stepping into `parallel
    /// do` enters every branch; writes to watched variables it made after its
    /// last point are its parent's to stop at. Going back in time, the
    /// client does not hear again of threads it knows.
    pub fn thread_changed(&self, generation: u64, thread: u32, parent: u32, started: bool) {
        let mut guard = self.lock();
        let st = &mut *guard;
        if st.run.generation != generation {
            return;
        }
        let heard = if started {
            let at = st.run.points.get(&parent).copied().unwrap_or_default();
            st.run.born.insert(thread, (parent, at));
            st.run.threads.insert(thread);
            if let Some(step) = st.run.stepping.get(&parent).copied().filter(|s| s.kind == StepKind::In) {
                st.run.stepping.insert(thread, step);
            }
            !st.run.known.contains(&thread)
        } else {
            st.run.threads.remove(&thread);
            st.run.ended.insert(thread);
            st.run.seen.remove(&thread);
            if let Some(step) = st.run.stepping.remove(&thread) {
                st.run.orphan = Some(step);
            }
            st.breakpoints.data.hand_over(thread, parent);
            !matches!(st.run.quiet.remove(&thread), Some(Quiet::Ended))
        };
        if heard {
            let reason = if started { "started" } else { "exited" };
            self.client.event(Event::Thread(ThreadEvent { reason, thread_id: dap_thread(thread) }));
        }
    }

    /// Resumes. A step moves only `thread`, whatever `single` says: the
    /// other threads stay where they are, stopped or running. `continue`
    /// resumes every stopped thread and cancels every step and the pause, or
    /// with `single` resumes only `thread` and cancels only its step. Every
    /// thread resumed other than `thread` gets a `continued` event.
    /// `ack` runs once the request is known to be valid, before any thread
    /// moves, so that the response precedes the events the move causes.
    pub fn resume(&self, thread: Option<i64>, action: Action, single: bool, ack: impl FnOnce()) -> Result<(), String> {
        let mut st = self.lock();
        let thread = thread.and_then(runtime_thread);
        let targets: Vec<u32> = match (action, thread) {
            (Action::Step(kind), Some(t)) => {
                let stopped =
                    st.run.stopped.get(&t).ok_or_else(|| format!("thread {} is not stopped", dap_thread(t)))?;
                let step = Stepping { kind, depth: stopped.depth };
                st.run.stepping.insert(t, step);
                vec![t]
            }
            (Action::Step(_), None) => return Err("a step needs a threadId".to_string()),
            (Action::Continue, Some(t)) if single => {
                st.run.stepping.remove(&t);
                vec![t]
            }
            (Action::Continue, _) => {
                st.run.stepping.clear();
                st.run.orphan = None;
                st.run.pause = false;
                st.run.stopped.keys().copied().collect()
            }
        };
        ack();
        for t in targets {
            if let Some(stopped) = st.run.stopped.remove(&t) {
                st.run.handles.release(t);
                let here = (t, stopped.at.point);
                if stopped.edited {
                    st.edits.insert(here, stopped.snapshot.vars.clone());
                }
                if let (Some(_), Some(answer)) = (&stopped.question, &stopped.answer) {
                    st.answers.insert(here, answer.clone());
                }
                if Some(t) != thread {
                    let event = ContinuedEvent { thread_id: dap_thread(t), all_threads_continued: false };
                    self.client.event(Event::Continued(event));
                }
                self.no_longer_asks(t, &stopped);
                let edit = stopped.snapshot.call.as_ref().and_then(Call::edit);
                let edited = stopped.edited;
                let resume =
                    Resume { vars: stopped.snapshot.vars, terminate: false, answer: stopped.answer, edit, edited };
                let _ = stopped.resume.send(resume);
            }
        }
        Ok(())
    }

    /// Tells the client a thread that waited for an answer goes on.
    fn no_longer_asks(&self, thread: u32, stopped: &Stopped) {
        if stopped.question.is_some() {
            let event = QuestionEvent { thread_id: dap_thread(thread), question: None };
            self.client.event(Event::Question(event));
        }
    }

    /// Every thread stops at its next point (statement, model or tool call),
    /// and a thread waiting for a model's reply stops at once.
    pub fn pause(&self) {
        self.lock().run.pause = true;
        self.paused.notify_waiters();
    }

    /// Stops the run: parked threads end now, running ones at their next
    /// point. The client hears that threads that waited for an answer no
    /// longer do, except those going back in time stops again (`held`).
    pub fn terminate(&self, held: &BTreeSet<u32>) {
        let mut st = self.lock();
        st.run.terminate = true;
        for (thread, stopped) in std::mem::take(&mut st.run.stopped) {
            st.run.handles.release(thread);
            if !held.contains(&thread) {
                self.no_longer_asks(thread, &stopped);
            }
            let resume =
                Resume { vars: stopped.snapshot.vars, terminate: true, answer: None, edit: None, edited: false };
            let _ = stopped.resume.send(resume);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_ids_are_shifted_for_clients() {
        assert_eq!(dap_thread(0), 1);
        assert_eq!(runtime_thread(1), Some(0));
        assert_eq!(runtime_thread(0), None);
    }
}
