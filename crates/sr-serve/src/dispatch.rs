//! The in-process dispatcher: claims queued runs from the store (at most
//! `workers` at a time) and runs each through the runtime's one run path
//! (`sr_runtime::launch` → `Launched::run`), in a work directory of its own.
//! A run that was started before (a restart found it running, or a paused
//! run got its answer) continues from its journal (`ResumeSpec`), so what it
//! completed is served, never done again.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use sr_runtime::RunOptions;
use sr_runtime::event::{Event, EventSink, Payload, RunStatus};
use sr_runtime::hook::{NoHook, StepHook};
use sr_runtime::human::Unattended;
use sr_runtime::launch::{Finished, LaunchSpec, Recording, ResumeSpec, Storage, launch};
use sr_runtime::state::StateDir;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tracing::Instrument;

use crate::metrics::RunTimer;
use crate::store::RunRow;
use crate::{Server, travel};

/// An event over this many bytes of JSON is stored and streamed as an
/// `event_too_large` event that keeps its id, type and size.
pub const MAX_EVENT_BYTES: usize = 1 << 20;

/// Claims and starts runs until the server drains.
pub async fn dispatch(server: Arc<Server>) {
    let permits = Arc::new(Semaphore::new(server.settings.workers.max(1)));
    loop {
        let Ok(permit) = permits.clone().acquire_owned().await else { return };
        if server.draining() {
            return;
        }
        match server.store.claim() {
            Ok(Some(run)) => {
                let server = server.clone();
                tokio::spawn(execute(server, run, permit));
            }
            Ok(None) => {
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
    let id = run.id.clone();
    let span = tracing::info_span!("run", run = %id, session = %run.session, workload = %run.workload);
    let task = tokio::spawn(attempt(server.clone(), run).instrument(span.clone()));
    server.tasks_lock().insert(id.clone(), task.abort_handle());
    // A cancel that came between the claim and here.
    if server.cancelled_lock().contains(&id) {
        task.abort();
    }
    let ended = task.await;
    server.tasks_lock().remove(&id);
    let cancelled = server.cancelled_lock().remove(&id);
    let _entered = span.enter();
    let outcome = match ended {
        Ok(outcome) => outcome,
        Err(e) if e.is_cancelled() && cancelled => {
            Outcome { status: "cancelled", result: None, error: Some("cancelled by request".to_string()) }
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
                status: "failed",
                result: None,
                error: Some("the run's task panicked; see the server log".to_string()),
            }
        }
    };
    match server.store.finish(&id, "running", outcome.status, outcome.result.as_ref(), outcome.error.as_deref()) {
        Ok(_) => tracing::info!(status = outcome.status, "run ended"),
        Err(error) => tracing::error!(%error, "cannot store the run's end"),
    }
    server.changed(&id);
    server.wake.notify_one();
}

struct Outcome {
    status: &'static str,
    result: Option<Value>,
    error: Option<String>,
}

fn failed(error: impl Into<String>) -> Outcome {
    Outcome { status: "failed", result: None, error: Some(error.into()) }
}

async fn attempt(server: Arc<Server>, run: RunRow) -> Outcome {
    let Some(workload) = server.workloads.get(&run.workload).cloned() else {
        return failed(format!("workload '{}' is not served by this server", run.workload));
    };
    let work_dir = server.settings.state_dir.join("runs").join(&run.id).join("work");
    if let Err(e) = std::fs::create_dir_all(&work_dir) {
        return failed(format!("cannot create the run's work directory: {e}"));
    }
    let state = StateDir { dir: server.settings.state_dir.clone() };
    let resume = run.attempt_run.map(|_| ResumeSpec {
        session: run.session.clone(),
        input: run.pending_input.clone(),
        from: None,
    });
    let storage = Storage {
        sessions: state.sessions_db(),
        state,
        session: if resume.is_some() { None } else { Some(run.session.clone()) },
        resume,
    };
    let spec = LaunchSpec {
        program: workload.program.clone(),
        message: run.message.clone(),
        work_dir,
        storage: Some(storage),
        record: None,
        replay: server.settings.replay.clone().map(Recording::File),
        provider: None,
        options: RunOptions { default_model: run.model.clone(), entry: run.entry.clone(), ..RunOptions::default() },
        human: Arc::new(Unattended),
    };
    // A fork (`travel::fork`) starts from another run's journal; once started,
    // it resumes from its own like any run, its variable edits made again.
    let launched = match travel::fork::find(&server.settings.state_dir, &run.id) {
        None => launch(spec).map(|launched| (launched, Arc::new(NoHook) as Arc<dyn StepHook>)),
        Some(Ok(plan)) if run.attempt_run.is_none() => travel::fork::launch(spec, &plan),
        Some(Ok(plan)) => travel::fork::resume(spec, &plan),
        Some(Err(e)) => return failed(e),
    };
    let (launched, hook) = match launched {
        Ok(launched) => launched,
        Err(e) => return failed(e.to_string()),
    };
    if let Some(number) = launched.run_number()
        && let Err(error) = server.store.set_attempt(&run.id, number)
    {
        return failed(format!("cannot store the run's attempt: {error}"));
    }
    let (last, replayed) = match server.store.event_tally(&run.id) {
        Ok(tally) => tally,
        Err(error) => return failed(format!("cannot read the run's events: {error}")),
    };
    tracing::info!(attempt = launched.run_number(), resumed = run.attempt_run.is_some(), "run started");
    let sink = Arc::new(RunSink {
        server: server.clone(),
        run: run.id.clone(),
        next: AtomicU64::new(last + 1),
        skip: Mutex::new(replayed),
        timer: RunTimer::default(),
    });
    match launched.run(hook, vec![sink]).await {
        Ok(Finished { status: Some(status), result, error }) => Outcome {
            status: match status {
                RunStatus::Completed => "done",
                RunStatus::Failed => "failed",
                RunStatus::Paused => "paused",
            },
            result,
            error,
        },
        Ok(Finished { status: None, .. }) => failed("the run never reported its end"),
        Err(e) => failed(e.to_string()),
    }
}

/// Stores each event of a run under the run's next event id and wakes its
/// streams. A continued run first replays what its journal holds: the
/// `skip` events already stored (text deltas aside) are not stored again.
struct RunSink {
    server: Arc<Server>,
    run: String,
    next: AtomicU64,
    skip: Mutex<u64>,
    timer: RunTimer,
}

impl EventSink for RunSink {
    fn record(&self, event: &Event) {
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
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let mut event = event.clone();
        event.seq = id;
        let mut json = serde_json::to_string(&event).unwrap_or_default();
        if json.len() > MAX_EVENT_BYTES {
            let kind = serde_json::to_value(&event.payload).ok().and_then(|v| v["type"].as_str().map(str::to_string));
            json = serde_json::json!({
                "seq": id,
                "invocation_id": event.invocation_id,
                "path": event.path,
                "type": "event_too_large",
                "original_type": kind,
                "bytes": json.len(),
            })
            .to_string();
        }
        if let Err(error) = self.server.store.append_event(&self.run, id, &json) {
            tracing::error!(%error, event = id, "cannot store an event");
        }
        self.server.changed(&self.run);
    }
}
