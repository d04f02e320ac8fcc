//! `GET /v1/runs/{id}/at/{seq}`: a run as it was at one of its events. The
//! run's journal is replayed (`Mode::Replay`: every model reply, tool result
//! and value is served, and an effect the journal lacks stops the replay: it
//! never calls a model or a tool) in a scratch work directory, with a hook
//! that watches every thread's points and variables and ends the replay at
//! the first point after the event of the thread that emitted it (`parallel`
//! branches take their steps in the stored events' order: `turns`). The
//! files are the scratch directory's then: the recorded tools' changes made
//! again.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use sr_runtime::RunOptions;
use sr_runtime::event::{Event, EventSink, Payload, thread_name, thread_of};
use sr_runtime::hook::{Control, Step, StepHook, StepPoint};
use sr_runtime::human::Unattended;
use sr_runtime::launch::{LaunchSpec, Models, Recording, launch};

use sr_api::travel::{Frame, FrameKind, StepAt, ThreadScope, WorkFiles};

use super::files;
use super::replay_failed;
use super::target::Target;
use super::turns::{self, Turns};
use crate::Server;
use crate::error::ApiError;
use crate::locked;
use crate::replayed::counted;
use crate::store::{RunRow, RunStatus};

/// What ends the replay.
#[derive(Debug, Clone, Copy)]
pub enum Stop {
    /// The first point after this many counted events.
    After(u64),
    /// The first model reply after this many counted events, before its
    /// agent sees it (a fork that replaces it).
    Reply(u64),
}

/// A point of a thread: its `n`-th (each statement, model call, model reply
/// and tool call is one), as a fork finds it again: by the thread's journal
/// key (`main/0.1`), which every replay gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Point {
    pub thread: String,
    pub n: u64,
    pub kind: String,
    /// The thread as a person knows it ([`thread_name`]); not kept in a fork's plan.
    #[serde(skip)]
    pub name: String,
}

/// One thread's scope, and the thread's journal key, by which a [`Point`] names it.
#[derive(Debug, Clone)]
pub struct Scope {
    pub key: String,
    pub shown: ThreadScope,
}

/// The run at an event.
#[derive(Debug)]
pub struct Moment {
    pub run: String,
    pub at: u64,
    pub event: String,
    /// The run's status then: `running` before its last event, its final
    /// status (or `paused`) at it.
    pub status: RunStatus,
    /// Where the replay stopped; `None` when the run had no point left after
    /// the event (its end).
    pub point: Option<Point>,
    pub scopes: Vec<Scope>,
    pub files: WorkFiles,
    /// The recorded answers to `escalate to human` the run had been given
    /// before the point, in order: a fork from it is given them again.
    pub answered: Vec<String>,
}

impl Moment {
    /// The moment as `GET /v1/runs/{id}/at/{seq}` answers it.
    pub fn wire(self) -> sr_api::travel::Moment {
        sr_api::travel::Moment {
            run: self.run,
            at: self.at,
            event: self.event,
            status: self.status,
            point: self.point.map(|p| StepAt { thread: p.name, n: p.n, kind: p.kind }),
            scopes: self.scopes.into_iter().map(|s| s.shown).collect(),
            files: self.files,
        }
    }
}

/// Replays `run` (its `journal`) to `target` and describes it there.
pub async fn moment(
    server: &Server,
    run: &RunRow,
    journal: &str,
    target: &Target,
    stop: Stop,
) -> Result<Moment, ApiError> {
    let scratch = server.settings.state_dir.join("travel").join(uuid::Uuid::new_v4().to_string());
    let work = scratch.join("work");
    let described = describe(server, run, journal, &work, target, stop).await;
    if let Err(e) = std::fs::remove_dir_all(&scratch) {
        tracing::warn!(error = %e, dir = %scratch.display(), "cannot remove a travel's scratch directory");
    }
    described
}

async fn describe(
    server: &Server,
    run: &RunRow,
    journal: &str,
    work: &Path,
    target: &Target,
    stop: Stop,
) -> Result<Moment, ApiError> {
    std::fs::create_dir_all(work)
        .map_err(|e| super::file_failed(format!("cannot create the replay's scratch directory: {e}"), work))?;
    let replayed = replay(server, run, journal, work, target, stop).await?;
    Ok(Moment {
        run: run.id.clone(),
        at: target.seq,
        event: target.kind.clone(),
        status: match (target.last, target.kind.as_str(), &replayed.point) {
            (true, _, _) => run.status,
            // A run that paused there (and went on, or waits still).
            (false, "run_finished", _) => RunStatus::Paused,
            (false, _, None) if run.status == RunStatus::Paused => RunStatus::Paused,
            _ => RunStatus::Running,
        },
        point: replayed.point,
        scopes: replayed.scopes,
        files: files::list(work),
        answered: replayed.answered,
    })
}

struct Replayed {
    point: Option<Point>,
    scopes: Vec<Scope>,
    answered: Vec<String>,
}

async fn replay(
    server: &Server,
    run: &RunRow,
    journal: &str,
    work: &Path,
    target: &Target,
    stop: Stop,
) -> Result<Replayed, ApiError> {
    let workload = server.workloads.get(&run.workload).ok_or_else(|| {
        ApiError::conflict("workload_gone", format!("workload '{}' is not served by this server", run.workload))
    })?;
    let answers = super::recorded_answers(journal)?;
    let spec = LaunchSpec {
        program: workload.program.clone(),
        message: run.message.clone(),
        work_dir: work.to_path_buf(),
        read_only: false,
        storage: None,
        models: Models::Replay(Recording::Text(journal.to_string())),
        options: RunOptions { default_model: run.model.clone(), entry: run.entry.clone(), ..RunOptions::default() },
        human: Arc::new(Unattended),
        in_doubt: sr_runtime::in_doubt::skip_all(),
    };
    let launched = launch(spec).map_err(|e| replay_failed(format!("cannot replay the run: {e}")))?;
    let watch = Arc::new(Watch::new(stop, answers, target));
    launched
        .run(watch.clone(), vec![watch.clone() as Arc<dyn EventSink>])
        .await
        .map_err(|e| replay_failed(format!("the replay failed: {e}")))?;
    if let Some(lost) = locked(&watch.lost).take() {
        return Err(replay_failed(format!(
            "the replay could not follow the run's parallel branches to event {}: {lost}",
            target.seq,
        )));
    }
    // The events before the stop are the stored ones.
    let expected = match stop {
        Stop::After(count) | Stop::Reply(count) => &target.kinds[..(count as usize).min(target.kinds.len())],
    };
    let emitted = locked(&watch.kinds).clone();
    if let Some(at) = (0..expected.len()).position(|i| emitted.get(i) != Some(&expected[i])) {
        return Err(replay_failed(format!(
            "the replay does not give the run's stored events: its counted event {} is {}, the store has {}",
            at + 1,
            emitted.get(at).map_or("nothing", String::as_str),
            expected[at],
        )));
    }
    if let Stop::Reply(_) = stop
        && locked(&watch.stopped).as_ref().is_none_or(|p| p.kind != "model_reply")
    {
        return Err(ApiError::bad_request(format!(
            "reply: event {} belongs to no model call whose reply the run received",
            target.seq
        )));
    }
    let point = locked(&watch.stopped).clone();
    let mut threads = std::mem::take(&mut *locked(&watch.threads));
    // What a thread assigned after its last point (the run ended, another
    // thread's step is the stop, or the thread ended) is in its events.
    let names = locked(&watch.names);
    for (thread, changes) in std::mem::take(&mut *locked(&watch.pending)) {
        let name = names.get(&thread).map_or("main", String::as_str);
        if let Some(scope) = threads.iter_mut().find(|s| s.key == name) {
            scope.shown.variables.extend(changes);
        }
    }
    drop(names);
    let answered = std::mem::take(&mut *locked(&watch.answered));
    Ok(Replayed { point, scopes: threads, answered })
}

/// The replay's hook and event sink.
struct Watch {
    stop: Stop,
    /// The recorded run's answers to `escalate to human`, in order, and
    /// those given before the stop.
    answers: Mutex<VecDeque<String>>,
    answered: Mutex<Vec<String>>,
    /// Counted events emitted so far, and their types (up to the target's count).
    emitted: AtomicU64,
    kinds: Mutex<Vec<String>>,
    keep_kinds: u64,
    /// Each thread's points so far, by its journal name.
    points: Mutex<HashMap<String, u64>>,
    /// Each live thread's variables at its last point, in the order threads started.
    threads: Mutex<Vec<Scope>>,
    /// Thread ids to journal names, to drop a thread's scope once it ended
    /// and its parent went on.
    names: Mutex<HashMap<u32, String>>,
    /// Each branch's parent thread.
    parents: Mutex<HashMap<u32, u32>>,
    turns: Turns,
    /// A thread waited for its turn in vain, where: the replay stopped there.
    lost: Mutex<Option<String>>,
    /// Each thread's state changes since its last point.
    pending: Mutex<HashMap<u32, Vec<(String, Value)>>>,
    stopped: Mutex<Option<Point>>,
    done: AtomicBool,
}

impl Watch {
    fn new(stop: Stop, answers: Vec<String>, target: &Target) -> Watch {
        Watch {
            stop,
            answers: Mutex::new(answers.into()),
            answered: Mutex::default(),
            emitted: AtomicU64::new(0),
            kinds: Mutex::default(),
            keep_kinds: target.count,
            points: Mutex::default(),
            threads: Mutex::default(),
            names: Mutex::default(),
            parents: Mutex::default(),
            turns: Turns::new(target.branches.clone(), target.count.saturating_sub(1) as usize),
            lost: Mutex::default(),
            pending: Mutex::default(),
            stopped: Mutex::default(),
            done: AtomicBool::new(false),
        }
    }
}

/// The name of a point's kind, as the API shows it.
pub fn point_kind(point: &StepPoint<'_>) -> &'static str {
    match point {
        StepPoint::Statement { .. } => "statement",
        StepPoint::ModelCall { .. } => "model_call",
        StepPoint::ModelReply { .. } => "model_reply",
        StepPoint::ModelStreaming { .. } => "model_streaming",
        StepPoint::ToolCall { .. } => "tool_call",
    }
}

/// Counts the step as its thread's next point: its number there.
pub fn count_point(points: &Mutex<HashMap<String, u64>>, thread: &str) -> u64 {
    let mut points = locked(points);
    let n = points.entry(thread.to_string()).or_insert(0);
    *n += 1;
    *n
}

fn scope_of(step: &Step<'_>) -> Scope {
    let frames = step
        .frames
        .iter()
        .map(|f| {
            let kind = match f.kind {
                sr_runtime::hook::FrameKind::Flow => FrameKind::Flow,
                sr_runtime::hook::FrameKind::Agent => FrameKind::Agent,
                sr_runtime::hook::FrameKind::Handler => FrameKind::Handler,
            };
            Frame { kind, name: f.name.clone(), location: f.location.clone() }
        })
        .collect();
    let variables = step.vars.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let shown = ThreadScope { thread: thread_name(step.thread), frames, variables };
    Scope { key: step.thread_key.to_string(), shown }
}

impl Watch {
    fn stop_here(&self) {
        self.done.store(true, Ordering::SeqCst);
        self.turns.moved();
    }

    fn stop_count(&self) -> u64 {
        match self.stop {
            Stop::After(count) | Stop::Reply(count) => count,
        }
    }

    /// Drops the scopes of the threads below `thread` that ended: it went on
    /// past their block, with their variables.
    fn forget_ended_below(&self, thread: u32) {
        let parents = locked(&self.parents);
        let below = |mut t: u32| {
            while let Some(&parent) = parents.get(&t) {
                if parent == thread {
                    return true;
                }
                t = parent;
            }
            false
        };
        let gone: Vec<String> = locked(&self.names)
            .iter()
            .filter(|(id, _)| self.turns.has_ended(**id) && below(**id))
            .map(|(_, name)| name.clone())
            .collect();
        if !gone.is_empty() {
            locked(&self.threads).retain(|s| !gone.contains(&s.key));
        }
    }
}

impl StepHook for Watch {
    fn on_step<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Control> {
        Box::pin(async move {
            let emitted = || self.emitted.load(Ordering::SeqCst);
            let done = || self.done.load(Ordering::SeqCst);
            let turn = self.turns.wait(step.thread, emitted, (self.stop_count(), turns::WAIT), done).await;
            if !turn {
                let at = emitted();
                let point = point_kind(&step.point);
                *locked(&self.lost) = Some(format!(
                    "thread {} waited {}s for its turn at a {point} point ({at} events out, the next stored one {})",
                    step.thread_key,
                    turns::WAIT.as_secs(),
                    self.turns.describe(at as usize)
                ));
                self.stop_here();
            }
            if done() {
                return Control::Terminate;
            }
            let n = count_point(&self.points, step.thread_key);
            locked(&self.names).insert(step.thread, step.thread_key.to_string());
            self.forget_ended_below(step.thread);
            {
                let scope = scope_of(&step);
                let mut threads = locked(&self.threads);
                match threads.iter_mut().find(|s| s.key == scope.key) {
                    Some(known) => *known = scope,
                    None => threads.push(scope),
                }
            }
            locked(&self.pending).remove(&step.thread);
            let kind = point_kind(&step.point);
            let target = self.turns.target();
            let here = match self.stop {
                Stop::After(count) => emitted() >= count && (step.thread == target || self.turns.has_ended(target)),
                Stop::Reply(count) => emitted() >= count && kind == "model_reply" && step.thread == target,
            };
            if !here {
                return Control::Continue;
            }
            let name = thread_name(step.thread);
            *locked(&self.stopped) =
                Some(Point { thread: step.thread_key.to_string(), n, kind: kind.to_string(), name });
            self.stop_here();
            Control::Terminate
        })
    }

    fn on_thread(&self, thread: u32, parent: u32, started: bool) {
        match started {
            true => {
                locked(&self.parents).insert(thread, parent);
            }
            false => self.turns.end(thread),
        }
    }

    /// A thread waiting at a call to be cancelled takes no step before a
    /// sibling's failure cancels it: past the target, the target's thread
    /// parked there counts as ended, and the next step of any thread is the stop.
    fn on_parked(&self, thread_key: &str) {
        let id = locked(&self.names).iter().find(|(_, name)| name.as_str() == thread_key).map(|(id, _)| *id);
        if let Some(id) = id {
            self.turns.end(id);
        }
    }

    fn on_human<'a>(&'a self, _step: Step<'a>, _message: &'a str) -> BoxFuture<'a, Option<String>> {
        let answer = locked(&self.answers).pop_front();
        if let Some(answer) = &answer
            && !self.done.load(Ordering::SeqCst)
        {
            locked(&self.answered).push(answer.clone());
        }
        Box::pin(std::future::ready(answer))
    }
}

impl EventSink for Watch {
    fn record(&self, event: &Event) {
        if self.done.load(Ordering::SeqCst) {
            return;
        }
        let kind = serde_json::to_value(&event.payload).ok().and_then(|v| v["type"].as_str().map(str::to_string));
        let Some(kind) = kind.filter(|k| counted(k)) else { return };
        let emitted = self.emitted.fetch_add(1, Ordering::SeqCst) + 1;
        // Up to the target event: its type, and what it assigned.
        if emitted <= self.keep_kinds {
            locked(&self.kinds).push(kind);
            if let Payload::StateChange { variable, value } = &event.payload {
                let thread = thread_of(&event.path);
                locked(&self.pending).entry(thread).or_default().push((variable.clone(), value.clone()));
            }
        }
        self.turns.moved();
    }
}
