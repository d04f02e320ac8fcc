//! The debugger's state, shared by the protocol side (requests) and the run
//! (the step hook, the event sink). A stopped thread is parked in the hook on
//! a oneshot channel, with a snapshot of its frames and variables that
//! requests read and setVariable edits; resuming hands back the variables,
//! the answer to an `escalate to human`, an edited model call or reply, and
//! whether the thread forks there (see `forks`).
//!
//! Threads are the session's (`threads`): numbered by their journal name,
//! the same in every run of the session; runtime thread ids are mapped to
//! them as each thread reaches its first point.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use sr_runtime::compile::Compiled;
use sr_runtime::eval::Vars;
use sr_runtime::event::RunStatus;
use sr_runtime::journal::Mode;
use tokio::sync::{Notify, oneshot};

use crate::breakpoints::{Breakpoints, exception_filters};
use crate::client::Client;
use crate::exceptions::{Exception, Watch};
use crate::forks::{ForkPoint, Forks, Piece, Why};
use crate::protocol::{
    Breakpoint, BreakpointEvent, BreakpointLocation, BreakpointLocationsArguments, ContinuedEvent, Event, ExitedEvent,
    QuestionEvent, SetBreakpointsArguments, SetExceptionBreakpointsArguments, SetFunctionBreakpointsArguments,
    SourceBreakpoint, StoppedEvent, Thread, ThreadEvent,
};
use crate::request_error::RequestError;
use crate::snapshot::{Call, Edit, Shown, Snapshot};
use crate::source::{Loaded, Positions};
use crate::stepping::{Seen, StepKind, Stepping};
use crate::threads::{Names, display};
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
    /// The session's threads, by journal name.
    pub names: Names,
    /// The launch's branches: the edits and answers each was given, and its journal.
    pub forks: Forks,
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
    /// The runtime's thread ids of this run's threads, and the threads the
    /// runtime started whose first point has not come yet.
    pub runtime: HashMap<u32, u32>,
    pub births: HashMap<u32, Birth>,
    /// How the run's journal serves it: a travel (`Mode::Travel`) can fork.
    pub mode: Option<Mode>,
    /// The run's journal, and the current branch's before the run took it on.
    pub piece: Option<Piece>,
    pub previous: Option<Piece>,
    /// The run made a new branch (a run makes at most one).
    pub forked: bool,
    /// Threads that fork at their next point (given another answer).
    pub fork_next: BTreeSet<u32>,
    /// The thread that stopped last (the client's focus).
    pub focus: Option<u32>,
}

/// A thread the runtime started, until its first point names it.
#[derive(Debug, Clone, Copy)]
pub struct Birth {
    pub parent: u32,
    /// The parent's point when it started the thread.
    pub at: u64,
    /// The parent's step in, which the thread takes over.
    pub step: Option<Stepping>,
}

/// How a run is served (`run::spawn`).
#[derive(Debug, Clone, Default)]
pub struct Serving {
    pub mode: Option<Mode>,
    /// The run's journal (a replay's is the recording it serves: `None`).
    pub piece: Option<Piece>,
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
    /// `setVariable` changed the variables (these ones).
    pub edited: bool,
    pub edited_names: BTreeSet<String>,
    /// `streetraceRunLiveFrom`: the thread forks here when it resumes.
    pub live: bool,
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
    /// The thread's effects are live from here: the user set variables or
    /// asked for it (`Control::Fork`).
    pub fork: bool,
}

/// What the client asked a stopped thread to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Continue,
    Step(StepKind),
}

/// DAP thread ids start at 1 (some clients take 0 for "none"); the
/// session's thread numbers (`threads`) at 0.
pub fn dap_thread(thread: u32) -> i64 {
    thread as i64 + 1
}

pub fn thread_number(id: i64) -> Option<u32> {
    u32::try_from(id.checked_sub(1)?).ok()
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
                names: Names::default(),
                forks: Forks::default(),
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

    pub fn set_breakpoints(&self, args: SetBreakpointsArguments) -> Result<Vec<Breakpoint>, RequestError> {
        let path = args.source.path.ok_or(RequestError::NoSourcePath)?;
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
    /// unless it travels in the launch's recordings (in the current branch:
    /// the run takes its journal on, and gives it back if it forks).
    pub fn begin_run(&self, info: RunInfo, stop_on_entry: bool, travel: Option<Travel>, serving: Serving) -> u64 {
        let mut st = self.lock();
        let generation = st.run.generation + 1;
        let mut handles = std::mem::take(&mut st.run.handles);
        handles.forget_all();
        st.run = Run { generation, info, entry: stop_on_entry && travel.is_none(), handles, ..Run::default() };
        st.run.mode = serving.mode;
        st.run.piece.clone_from(&serving.piece);
        match travel {
            None => {
                st.breakpoint_stops.clear();
                st.forks = Forks::new(serving.piece);
            }
            Some(travel) => {
                st.breakpoint_stops.retain(|(t, p)| travel.keeps(*t, *p));
                st.run.quiet = travel.plan;
                st.run.known = travel.known;
                st.run.stepping = travel.stepping;
                if serving.piece.is_some() {
                    st.run.previous = std::mem::replace(&mut st.forks.current_mut().journal, serving.piece);
                }
            }
        }
        st.breakpoints.reset_hits();
        st.watch.clear();
        generation
    }

    /// Records that a thread went on from its last point (into it, or to
    /// its end), unless the run is being stopped.
    pub fn went_on(&self, st: &mut State, thread: u32) {
        if let (false, Some(&point)) = (st.run.terminate, st.run.points.get(&thread)) {
            st.forks.reach(thread, point, true);
        }
    }

    /// The session's number of the runtime's thread `runtime`, named `key`
    /// in the journal. At a thread's first point the debugger learns it: the
    /// client hears that a branch started (unless it knows it already), and
    /// the branch takes over its parent's step in.
    pub fn enter(&self, st: &mut State, runtime: u32, key: &str) -> u32 {
        if let Some(&thread) = st.run.runtime.get(&runtime) {
            return thread;
        }
        let thread = st.names.of(key);
        st.run.runtime.insert(runtime, thread);
        if let Some(birth) = st.run.births.remove(&runtime) {
            st.run.born.insert(thread, (birth.parent, birth.at));
            st.forks.current_mut().born.insert(thread, (birth.parent, birth.at));
            st.run.threads.insert(thread);
            if let Some(step) = birth.step {
                st.run.stepping.insert(thread, step);
            }
            if !st.run.known.contains(&thread) {
                let started = ThreadEvent { reason: "started", thread_id: dap_thread(thread) };
                self.client.event(Event::Thread(started));
            }
        }
        thread
    }

    /// Makes the current run's end silent (it is being replaced).
    pub fn supersede(&self) {
        self.lock().run.generation += 1;
    }

    /// The run of `generation` ended (`None`: it had to be aborted); the
    /// client hears of it unless a restart replaced it.
    pub fn end_run(&self, generation: u64, status: Option<RunStatus>) {
        let mut guard = self.lock();
        let st = &mut *guard;
        if st.run.generation != generation {
            return;
        }
        self.went_on(st, 0);
        let code = match status {
            Some(RunStatus::Completed) => 0,
            Some(RunStatus::Paused) => 3,
            Some(RunStatus::Failed | RunStatus::Cancelled) | None => 1,
        };
        self.client.event(Event::Exited(ExitedEvent { exit_code: code }));
        self.client.event(Event::Terminated);
    }

    pub fn threads(&self) -> Vec<Thread> {
        let st = self.lock();
        std::iter::once(0)
            .chain(st.run.threads.iter().copied())
            .map(|t| Thread { id: dap_thread(t), name: display(&st.run.runtime, t) })
            .collect()
    }

    /// A parallel branch of `parent` started or ended (runtime thread ids,
    /// in the run of `generation`: a run being replaced is not the client's
    /// business). A branch is announced at its first point (see `enter`),
    /// where its journal name is known; it takes over its parent's step in
    /// as it was when it started, so stepping into `parallel do` enters
    /// every branch. Writes to watched variables it made after its last
    /// point are its parent's to stop at. Going back in time, the client
    /// does not hear again of threads it knows.
    pub fn thread_changed(&self, generation: u64, runtime: u32, parent: u32, started: bool) {
        let mut guard = self.lock();
        let st = &mut *guard;
        if st.run.generation != generation {
            return;
        }
        if started {
            let parent = st.run.runtime.get(&parent).copied().unwrap_or(0);
            let at = st.run.points.get(&parent).copied().unwrap_or_default();
            let step = st.run.stepping.get(&parent).copied().filter(|s| s.kind == StepKind::In);
            st.run.births.insert(runtime, Birth { parent, at, step });
            return;
        }
        st.breakpoints.data.hand_over(runtime, parent);
        // A branch that never reached a point was never announced.
        let Some(thread) = st.run.runtime.get(&runtime).copied() else {
            st.run.births.remove(&runtime);
            return;
        };
        self.went_on(st, thread);
        st.run.threads.remove(&thread);
        st.run.ended.insert(thread);
        st.run.seen.remove(&thread);
        if let Some(step) = st.run.stepping.remove(&thread) {
            st.run.orphan = Some(step);
        }
        if !matches!(st.run.quiet.remove(&thread), Some(Quiet::Ended)) {
            let exited = ThreadEvent { reason: "exited", thread_id: dap_thread(thread) };
            self.client.event(Event::Thread(exited));
        }
    }

    /// Resumes. A step moves only `thread`, whatever `single` says: the
    /// other threads stay where they are, stopped or running. `continue`
    /// resumes every stopped thread and cancels every step and the pause, or
    /// with `single` resumes only `thread` and cancels only its step. Every
    /// thread resumed other than `thread` gets a `continued` event.
    /// `ack` runs once the request is known to be valid, before any thread
    /// moves, so that the response precedes the events the move causes.
    pub fn resume(
        &self,
        thread: Option<i64>,
        action: Action,
        single: bool,
        ack: impl FnOnce(),
    ) -> Result<(), RequestError> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let thread = thread.and_then(thread_number);
        let targets: Vec<u32> = match (action, thread) {
            (Action::Step(kind), Some(t)) => {
                let stopped = st.run.stopped.get(&t).ok_or(RequestError::NotStopped(dap_thread(t)))?;
                let step = Stepping { kind, depth: stopped.depth };
                st.run.stepping.insert(t, step);
                vec![t]
            }
            (Action::Step(_), None) => return Err(RequestError::StepNeedsThread),
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
                if Some(t) != thread {
                    let event = ContinuedEvent { thread_id: dap_thread(t), all_threads_continued: false };
                    self.client.event(Event::Continued(event));
                }
                self.no_longer_asks(t, &stopped);
                let (sender, resume) = self.resumed(st, t, stopped);
                let _ = sender.send(resume);
            }
        }
        Ok(())
    }

    /// What a thread resumes with: its variables, answer and edited call,
    /// and whether it forks (a new choice; a new branch when the current one
    /// had gone further). The current branch keeps its edits and answers.
    fn resumed(&self, st: &mut State, thread: u32, stopped: Stopped) -> (oneshot::Sender<Resume>, Resume) {
        let here = (thread, stopped.at.point);
        let edit = stopped.snapshot.call.as_ref().and_then(Call::edit);
        let answered = stopped.question.as_ref().and(stopped.answer.as_ref());
        let why = match (&edit, answered) {
            (Some(Edit::Request(_)), _) => Some(Why::Request),
            (Some(Edit::Reply(_)), _) => Some(Why::Reply),
            (None, _) if stopped.edited => Some(Why::Edit(stopped.edited_names.iter().cloned().collect())),
            (None, _) if stopped.live => Some(Why::Live),
            (None, Some(answer)) if st.forks.current().answers.get(&here) != Some(answer) => {
                Some(Why::Answer(answer.clone()))
            }
            _ => None,
        };
        let fork = why.is_some();
        if let Some(why) = why {
            self.fork(st, thread, &stopped, why);
            // An answer is given from the hook that asked, which cannot fork:
            // the thread forks at its next point, before any effect.
            if stopped.question.is_some() {
                st.run.fork_next.insert(thread);
            }
        }
        if stopped.edited {
            let at = (thread, stopped.at.point, stopped.at.inside);
            st.forks.current_mut().edits.insert(at, stopped.snapshot.vars.clone());
        }
        if let Some(answer) = answered {
            st.forks.current_mut().answers.insert(here, answer.clone());
        }
        let resume = Resume { vars: stopped.snapshot.vars, terminate: false, answer: stopped.answer, edit, fork };
        (stopped.resume, resume)
    }

    /// A thread chose differently at its stop: where the current branch
    /// went further in a run going back in time, the run goes on in a new
    /// branch (its first such choice; later ones are that branch's), which
    /// takes the run's journal on; the branch it leaves keeps the one it had.
    fn fork(&self, st: &mut State, thread: u32, stopped: &Stopped, why: Why) {
        if st.run.mode != Some(Mode::Travel) || st.run.forked || !st.forks.went_past(thread, stopped.at) {
            return;
        }
        let top = stopped.frames.first();
        let point = ForkPoint {
            thread,
            at: stopped.at,
            why,
            frame: top.map(|f| f.name.clone()).unwrap_or_default(),
            file: top.and_then(|f| f.file),
            line: top.map_or(1, |f| f.line),
            column: top.map_or(1, |f| f.column),
        };
        let described = point.why.describe();
        let place = self.place(st, &point);
        let left = st.forks.current + 1;
        st.forks.current_mut().journal.clone_from(&st.run.previous);
        let id = st.forks.fork(point, st.run.piece.clone()) + 1;
        st.run.forked = true;
        self.client.output(
            "console",
            format!("fork {id}: {described} at {place}, leaving fork {left}; the run goes on in fork {id}"),
        );
    }

    /// A fork point as the console shows it: `file:line (thread)`.
    pub fn place(&self, st: &State, point: &ForkPoint) -> String {
        let file = point.file.and_then(|f| st.loaded.as_ref()?.source(f)).map(|s| s.name).unwrap_or_default();
        format!("{file}:{} ({})", st.positions.line_out(point.line), display(&st.run.runtime, point.thread))
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
            let resume = Resume { vars: stopped.snapshot.vars, terminate: true, answer: None, edit: None, fork: false };
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
        assert_eq!(thread_number(1), Some(0));
        assert_eq!(thread_number(0), None);
        assert_eq!(thread_number(i64::MIN), None);
        assert_eq!(thread_number(i64::MAX), None);
    }
}
