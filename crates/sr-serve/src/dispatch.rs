//! The in-process dispatcher: claims queued runs from the store (at most
//! `workers` at a time) and runs each through the runtime's one run path
//! (`sr_runtime::launch` → `Launched::run`), in a work directory of its own.
//! A run that was started before (a restart found it running, or a paused
//! run got its answer) continues from its journal (`ResumeSpec`), so what it
//! completed is served, never done again. A tool call its journal shows cut
//! off is made again only for an idempotent tool; otherwise the run stops
//! `in_doubt` with the question, and continues with the decision `/input`
//! gives it (`sr_runtime::in_doubt`).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use sr_runtime::RunOptions;
use sr_runtime::event::{self, Event, EventSink, Payload};
use sr_runtime::hook::{NoHook, StepHook};
use sr_runtime::human::Unattended;
use sr_runtime::in_doubt::{Decision, Once};
use sr_runtime::launch::{
    Finished, LaunchError, LaunchSpec, Launched, Models, Recording, ResumeSpec, ResumeWorkDir, Storage, launch,
};
use sr_runtime::state::StateDir;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tracing::Instrument;

use crate::copies::{RunJournal, StoreCopies};
use crate::metrics::RunTimer;
use crate::store::{Ending, RunRow, RunStatus, StoreError};
use crate::{Server, cache, fence, locked, replayed, travel};

pub use crate::store::MAX_EVENT_BYTES;

/// Claims and starts runs until the server drains.
pub async fn dispatch(server: Arc<Server>) {
    let permits = Arc::new(Semaphore::new(server.settings.workers.max(1)));
    loop {
        let Ok(permit) = permits.clone().acquire_owned().await else { return };
        if server.draining() {
            return;
        }
        match server.store.claim_next().await {
            Ok((Some(run), more)) => {
                tokio::spawn(execute(server.clone(), run, permit));
                if !more {
                    // Nothing else was queued: the next submission wakes us.
                    let _ = tokio::time::timeout(Duration::from_secs(1), server.wake.notified()).await;
                }
            }
            Ok((None, _)) => {
                drop(permit);
                // Woken by a submission, an answer or a run's end; the tick
                // is a backstop.
                let _ = tokio::time::timeout(Duration::from_secs(1), server.wake.notified()).await;
            }
            Err(error) => {
                drop(permit);
                tracing::error!(%error, "cannot claim a run");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// Runs one claimed run to its end (or pause), as a task the API can abort
/// (cancel) and the drain can stop.
async fn execute(server: Arc<Server>, run: RunRow, _permit: OwnedSemaphorePermit) {
    let (id, epoch, session) = (run.id.clone(), run.epoch, run.session.clone());
    let span = tracing::info_span!("run", run = %id, session = %run.session, workload = %run.workload, epoch);
    // This process claimed the run again while an older claim of its own is
    // still winding down (its lease expired while the process was stalled):
    // that one stops first, as any superseded claim does.
    server.lose(&id, "the run was claimed again");
    while server.claims_lock().contains_key(&id) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.claims_lock().insert(id.clone(), epoch);
    let held = Arc::new(Held::default());
    let journal = RunJournal::new(server.clone(), id.clone(), epoch);
    let flusher = tokio::spawn(journal.clone().flush_late());
    let task = tokio::spawn(attempt(server.clone(), run, held.clone(), journal.clone()).instrument(span.clone()));
    server.tasks_lock().insert(id.clone(), task.abort_handle());
    // A cancel that came between the claim and here.
    if server.cancelled_lock().contains(&id) {
        task.abort();
    }
    let ended = task.await;
    flusher.abort();
    server.tasks_lock().remove(&id);
    server.claims_lock().remove(&id);
    let cancelled = server.cancelled_lock().remove(&id);
    let lost = server.lost_lock().remove(&id);
    let _entered = span.enter();
    let outcome = match ended {
        // Another replica claimed the run: it writes the run from now on.
        _ if lost => {
            server.changed(&id);
            return;
        }
        Ok(outcome) => outcome,
        Err(e) if e.is_cancelled() && cancelled => {
            Outcome { status: RunStatus::Cancelled, result: None, error: Some("cancelled by request".to_string()) }
        }
        // Stopped by the drain: left running, for the next start to resume.
        Err(e) if e.is_cancelled() => {
            tracing::info!("stopped by the drain; resumes at the next start");
            server.changed(&id);
            return;
        }
        Err(e) => {
            tracing::error!(error = %e, "the run's task failed");
            Outcome {
                status: RunStatus::Failed,
                result: None,
                error: Some("the run's task panicked; see the server log".to_string()),
            }
        }
    };
    // A cancelled run's end is the cancel, whatever its runtime emitted last.
    let tail = if cancelled { Vec::new() } else { std::mem::take(&mut *locked(&held.events)) };
    let invocation = locked(&held.invocation).clone();
    let error = outcome.error.as_deref().map(|error| server.without_paths(error));
    // What the attempt changed of the session, stored with the end; a run
    // that never started an attempt changed nothing.
    let record = match *locked(&held.attempt) {
        Some(_) => match cache::collect(&server, &session) {
            Ok(record) => Some(record),
            Err(error) => {
                tracing::error!(%error, "the session's record is not stored with the run's end");
                None
            }
        },
        None => None,
    };
    let (lines, events) = journal.rest();
    let ending = Ending::new(outcome.status, outcome.result, error, tail, &invocation)
        .recording(record)
        .with_journal(lines)
        .with_events(events);
    // A run of the session queued behind this one can start now; the
    // dispatcher's free worker needs no wake (it waits for the permit).
    let queued = match server.store.end(&id, epoch, &ending).await {
        Ok(queued) => {
            tracing::info!(status = %ending.status, "run ended");
            queued
        }
        Err(error @ StoreError::Fenced { .. }) => {
            tracing::warn!(%error, "the run's end was not stored");
            false
        }
        Err(error) => {
            tracing::error!(%error, "cannot store the run's end");
            true
        }
    };
    server.status_changed(&id);
    if queued {
        server.wake.notify_one();
    }
}

struct Outcome {
    status: RunStatus,
    result: Option<Value>,
    error: Option<String>,
}

fn failed(error: impl Into<String>) -> Outcome {
    Outcome { status: RunStatus::Failed, result: None, error: Some(error.into()) }
}

/// What a run's sink keeps back for its end: its `run_finished` and every
/// event after it, written with its status in one transaction (`Ending`).
#[derive(Default)]
struct Held {
    events: Mutex<Vec<Event>>,
    /// The invocation id of the run's events, for a `run_finished` the server writes.
    invocation: Mutex<String>,
    /// The runtime's run number of this claim's attempt, once launched.
    attempt: Mutex<Option<i64>>,
}

async fn attempt(server: Arc<Server>, run: RunRow, held: Arc<Held>, journal: Arc<RunJournal>) -> Outcome {
    let Some(workload) = server.workloads.get(&run.workload).cloned() else {
        return failed(format!("workload '{}' is not served by this server", run.workload));
    };
    let work_dir = server.settings.state_dir.join("runs").join(&run.id).join("work");
    // A run continued here for the first time (another replica ran it so
    // far) gets its files back from its journal.
    let fresh = !work_dir.exists();
    if let Err(e) = std::fs::create_dir_all(&work_dir) {
        return failed(format!("cannot create the run's work directory: {e}"));
    }
    if let Err(e) = cache::hydrate(&server, &run).await {
        return failed(e.to_string());
    }
    // The files A2A messages brought (the store keeps them for any replica).
    if run.a2a
        && let Err(e) = crate::a2a::place_inbox(&server, &run.id, &work_dir, fresh).await
    {
        return failed(e.to_string());
    }
    // A run in doubt continues with its decision; a pending input of any
    // other run is a human's answer.
    let decision = match attempt_in_doubt(&server, &run) {
        true => match run.pending_input.as_deref().map(str::parse::<Decision>).transpose() {
            Ok(decision) => decision,
            Err(e) => return failed(format!("the decision stored for the run: {e}")),
        },
        false => None,
    };
    // The context an A2A task's messages brought is the workload's to read,
    // not its tools' to forge (nor to make when there is none).
    let protected: Vec<PathBuf> = if run.a2a { vec![crate::a2a::CONTEXT_FILE.into()] } else { Vec::new() };
    let spec = |from| LaunchSpec {
        program: workload.program.clone(),
        message: run.message.clone(),
        work_dir: work_dir.clone(),
        read_only: false,
        storage: Some(storage(&server, &run, from, decision.is_none(), fresh, &journal)),
        models: server.settings.replay.clone().map_or(Models::Live, |file| Models::Replay(Recording::File(file))),
        options: RunOptions {
            default_model: run.model.clone(),
            entry: run.entry.clone(),
            protected: protected.clone(),
            ..RunOptions::default()
        },
        human: Arc::new(Unattended),
        in_doubt: Arc::new(Once::new(decision)),
    };
    // A fork (`travel::fork`) starts from another run's journal; once started,
    // it resumes from its own like any run, its variable edits made again.
    let launched = match travel::fork::find(&server.store, &run.id).await {
        None => launch_when_free(&server, &run, spec)
            .await
            .map(|launched| (launched, Arc::new(NoHook) as Arc<dyn StepHook>)),
        Some(Ok(plan)) if run.attempt_run.is_none() => match travel::fork::journal(&server.store, &plan).await {
            Ok(journal) => travel::fork::launch(spec(None), &plan, journal),
            Err(e) => return failed(e.to_string()),
        },
        Some(Ok(plan)) => {
            launch_when_free(&server, &run, spec).await.map(|launched| (launched, travel::fork::resuming(&plan)))
        }
        Some(Err(e)) => return failed(e.to_string()),
    };
    let (launched, hook) = match launched {
        Ok(launched) => launched,
        Err(e) => return failed(e.to_string()),
    };
    // The store records the attempt with its journal's first lines (`copies`).
    *locked(&held.attempt) = launched.run_number();
    let (last, replayed) = match stored_tally(&server, &run).await {
        Ok(tally) => tally,
        Err(error) => return failed(format!("cannot read the run's events: {error}")),
    };
    tracing::info!(attempt = launched.run_number(), resumed = run.attempt_run.is_some(), "run started");
    journal.number_from(last + 1);
    let sink = Arc::new(RunSink {
        server: server.clone(),
        journal: journal.clone(),
        skip: Mutex::new(replayed),
        timer: RunTimer::default(),
        held,
    });
    let hook = Arc::new(fence::Fenced { journal, inner: hook });
    // With a tracer, the run's spans go into its trace: a random id the first
    // time it is traced, the stored one for every later attempt (whose
    // events its journal serves again make no spans: an earlier attempt's did).
    let mut sinks: Vec<Arc<dyn EventSink>> = vec![sink];
    if let Some(tracer) = &server.settings.tracer {
        let new = uuid::Uuid::new_v4().simple().to_string();
        match server.store.trace(&run.id, &new).await {
            Ok(Some(trace_id)) => sinks.push(tracer(&trace_id, replayed)),
            Ok(None) => tracing::warn!("the run is not traced: it is no longer stored"),
            Err(error) => tracing::warn!(%error, "the run is not traced: its trace id cannot be stored"),
        }
    }
    match launched.run(hook, sinks).await {
        Ok(Finished { status: Some(event::RunStatus::Paused), in_doubt: Some(question), .. }) => {
            tracing::info!(tool = %question.tool, key = %question.idempotency_key, "a tool call is in doubt");
            Outcome {
                status: RunStatus::InDoubt,
                error: Some(question.describe()),
                result: serde_json::to_value(&question).ok(),
            }
        }
        Ok(Finished { status: Some(status), result, error, .. }) => {
            Outcome { status: RunStatus::from_runtime(status), result, error }
        }
        Ok(Finished { status: None, .. }) => failed("the run never reported its end"),
        Err(e) => failed(e.to_string()),
    }
}

/// The runtime's session of the run: a new run of it the first time, a
/// continuation of its last run (from its journal; its files rebuilt when
/// its work directory is `fresh`) after that. Its journal is copied to the store.
fn storage(
    server: &Arc<Server>,
    run: &RunRow,
    from: Option<u64>,
    answered: bool,
    fresh: bool,
    journal: &Arc<RunJournal>,
) -> Storage {
    let state = StateDir { dir: server.settings.state_dir.clone() };
    let input = run.pending_input.clone().filter(|_| answered);
    let resume = run.attempt_run.map(|_| ResumeSpec {
        session: run.session.clone(),
        input,
        from,
        rebuild_files: fresh,
        work_dir: ResumeWorkDir::Spec,
    });
    Storage {
        sessions: state.sessions_db(),
        state,
        session: if resume.is_some() { None } else { Some(run.session.clone()) },
        resume,
        copies: Some(Arc::new(StoreCopies(journal.clone()))),
    }
}

/// Launches the run; while the runtime says its previous attempt still runs
/// (a replica that lost the claim but has not noticed yet holds the
/// runtime's lease), waits for it to let go. The heartbeat stops this wait
/// if this claim is lost in turn. An attempt that such a replica carried to
/// its end before it noticed cannot be resumed: it is replayed whole from
/// its journal (every step served, none done again), which stores the
/// events and the end its replica could not.
async fn launch_when_free(
    server: &Server,
    run: &RunRow,
    spec: impl Fn(Option<u64>) -> LaunchSpec,
) -> Result<Launched, LaunchError> {
    let mut told = false;
    let mut from = None;
    loop {
        match launch(spec(from)) {
            Err(LaunchError::NotResumable(why))
                if run.attempt_run.is_some() && from.is_none() && ended_attempt(server, run) =>
            {
                tracing::info!(run = %run.id, %why, "the previous attempt ended unrecorded; replaying it from its journal");
                from = Some(i64::MAX as u64);
            }
            Err(why @ LaunchError::Busy { .. }) => {
                if !told {
                    tracing::info!(run = %run.id, %why, "waiting for the run's previous attempt to stop");
                    told = true;
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            other => return other,
        }
    }
}

/// Whether the runtime's last run of the run's session stopped in doubt.
fn attempt_in_doubt(server: &Server, run: &RunRow) -> bool {
    server.sessions.runs(&run.session).is_ok_and(|runs| {
        runs.last().is_some_and(|(n, status)| {
            Some(*n) == run.attempt_run && RunStatus::of_attempt(status) == Some(RunStatus::InDoubt)
        })
    })
}

/// Whether the runtime's last run of the run's session has ended.
fn ended_attempt(server: &Server, run: &RunRow) -> bool {
    server.sessions.runs(&run.session).is_ok_and(|runs| {
        runs.last().is_some_and(|(n, status)| {
            Some(*n) == run.attempt_run
                && RunStatus::of_attempt(status).is_some_and(|s| s.is_ended() || s == RunStatus::Paused)
        })
    })
}

/// A run's last stored event id, and how many of its stored events a replay
/// of its journal emits again (`replayed::repeated`): what a continued run skips.
/// A run claimed for the first time that never opened an attempt has none.
async fn stored_tally(server: &Server, run: &RunRow) -> Result<(u64, u64), StoreError> {
    if run.epoch == 1 && run.attempt_run.is_none() {
        return Ok((0, 0));
    }
    let events = replayed::stored_events(&server.store, &run.id).await?;
    let last = events.last().map_or(0, |e| e.id);
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    Ok((last, replayed::repeated(&kinds).into_iter().filter(|r| *r).count() as u64))
}

/// Gives each event of a run the run's next event id, for the journal's
/// next batch to store (`copies::RunJournal`); from its `run_finished` on,
/// keeps them back for the run's end (`Held`). A continued run first
/// replays what its journal holds: the `skip` events already stored
/// (`stored_tally`) are not stored again. Once the drain has stopped the
/// server's runs, it keeps nothing.
struct RunSink {
    server: Arc<Server>,
    journal: Arc<RunJournal>,
    skip: Mutex<u64>,
    timer: RunTimer,
    held: Arc<Held>,
}

impl EventSink for RunSink {
    fn record(&self, event: &Event) {
        if self.server.halted() {
            return;
        }
        {
            let mut skip = self.skip.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if *skip > 0 {
                if !matches!(event.payload, Payload::TextDelta { .. }) {
                    *skip -= 1;
                }
                return;
            }
        }
        self.timer.observe(event, &self.server.metrics);
        {
            let mut invocation = locked(&self.held.invocation);
            if invocation.is_empty() {
                invocation.clone_from(&event.invocation_id);
            }
        }
        {
            let mut held = locked(&self.held.events);
            if !held.is_empty() || matches!(event.payload, Payload::RunFinished { .. }) {
                held.push(event.clone());
                return;
            }
        }
        self.journal.add_event(event);
    }
}
