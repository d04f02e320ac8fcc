//! `sr serve`: StreetRace workloads behind an HTTP API (API v1: workloads,
//! sessions, runs, their events as Server-Sent Events, cancel, answers to
//! `escalate to human`, health and metrics). Embedded mode: the server's
//! records in SQLite in the state directory, one process dispatching runs.
//! PostgreSQL mode (`database_url`): replicas share the records, claim runs
//! under leases and fence each other's writes and effects. Either way the
//! store holds what a run is (its journal, its session's conversation and
//! attempts, fork plans), the runtime's files in the state directory are a
//! cache of it (`cache`), and every run goes through the runtime's one run
//! path; see `docs/serve.md`.

mod a2a;
mod api;
mod auth;
mod cache;
mod copies;
mod dispatch;
mod error;
mod events;
mod fence;
mod gate;
mod lease;
mod listen;
mod metrics;
mod replayed;
mod route;
mod runs;
mod start;
mod store;
mod studio_api;
mod travel;
mod workloads;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use sr_runtime::lease::Lease;
use sr_runtime::session::SessionStore;
use tokio::sync::{Notify, watch};
use tokio::task::AbortHandle;

pub use crate::api::route_table;
pub use crate::auth::{ApiKeys, MIN_KEY_LEN};
pub use crate::dispatch::MAX_EVENT_BYTES;
pub use crate::listen::Limits;
pub use crate::start::{BindError, HttpFailed};

/// The largest request body the API reads.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// How `sr serve` was asked to run.
pub struct Config {
    /// The `.sr` (or YAML) files to serve, each named by its file stem.
    pub workloads: Vec<PathBuf>,
    pub bind: SocketAddr,
    /// Where the embedded store (`serve.db`), the runtime's cache of the
    /// store's sessions and journals, and the runs' work directories live.
    pub state_dir: PathBuf,
    /// Runs executed at once.
    pub workers: usize,
    /// This process's name in logs and, in PostgreSQL mode, on the runs it claims.
    pub replica_id: String,
    /// The file of API keys; required to bind a non-loopback address.
    pub api_key_file: Option<PathBuf>,
    /// Serve every run's model exchanges and tool results from this recording.
    pub replay: Option<PathBuf>,
    /// PostgreSQL shared by replicas (`postgres://…`); `None`: SQLite in the state directory.
    pub database_url: Option<String>,
    /// How long a claim of a run lasts without a heartbeat (PostgreSQL mode):
    /// a replica that stops for longer loses its runs to the others.
    pub lease: Duration,
    /// Origins allowed by CORS (and to change state); none (the default)
    /// sends no CORS headers. `*` is refused.
    pub cors_origins: Vec<String>,
    /// Where clients reach the server when a proxy is in front of it: its
    /// host is answered too, and the agent cards name their endpoints under it.
    pub public_url: Option<String>,
    /// The connections' bounds.
    pub limits: Limits,
    /// The bytes of input one session may store (its runs' messages and
    /// pending answers); past it a run or an answer is 413 `session_full`.
    pub session_quota: usize,
    /// Time travels (`GET …/at/{seq}`, forks' replays) replayed at once; more
    /// are 503 with `Retry-After`.
    pub travels: usize,
    /// How long SIGTERM waits for running runs before stopping them (they
    /// resume at the next start).
    pub drain_timeout: Duration,
    /// Served for every path the API does not answer (a web frontend).
    pub frontend: Option<Router>,
    /// Hosts (`HOST` or `HOST:PORT`) A2A push notifications may be sent to;
    /// none (the default) turns them off.
    pub push_hosts: Vec<String>,
    /// Traces each run's events into the trace whose id it is given (`sr serve
    /// --otlp`); none: runs are not traced and have no trace id.
    pub tracer: Option<Tracer>,
    /// Where a trace is shown, `{trace_id}` standing for its id
    /// (`http://localhost:16686/trace/{trace_id}`); runs' answers carry the URL.
    pub trace_url: Option<String>,
}

/// What `--trace-url` replaces with a run's trace id.
const TRACE_ID: &str = "{trace_id}";

/// Makes the event sink that puts a run's spans in the trace with this id
/// (32 hex digits), the first events of that many (text deltas not counted)
/// served from its journal: a continued attempt's, whose spans an earlier
/// attempt made. sr-cli supplies it, so this crate carries no OpenTelemetry code.
pub type Tracer = Arc<dyn Fn(&str, u64) -> Arc<dyn sr_runtime::event::EventSink> + Send + Sync>;

/// What the dispatcher needs of the configuration.
pub(crate) struct Settings {
    pub state_dir: PathBuf,
    pub workers: usize,
    pub replay: Option<PathBuf>,
    pub lease: Duration,
    /// Where clients reach the server (`--public-url`, else the bound address).
    pub base_url: String,
    pub session_quota: usize,
    pub travels: usize,
    /// Hosts webhooks may be on (`HOST` or `HOST:PORT`, lowercase).
    pub push_hosts: Vec<String>,
    /// This process's name (`--replica-id`): the tasks it follows for their
    /// webhooks are followed again when a process of this name starts.
    pub replica_id: String,
    /// PostgreSQL mode: other replicas may run a run queued here.
    pub shared: bool,
    /// Gives each run's spans a trace of its own (`sr serve --otlp`).
    pub tracer: Option<Tracer>,
    /// Where a run's trace is shown (`--trace-url`, with `{trace_id}`).
    pub trace_url: Option<String>,
}

/// The state every handler and the dispatcher share.
pub struct Server {
    pub(crate) settings: Settings,
    pub(crate) store: store::Store,
    /// The runtime's sessions (for transcripts).
    pub(crate) sessions: SessionStore,
    pub(crate) workloads: BTreeMap<String, Arc<workloads::Workload>>,
    pub(crate) keys: Option<ApiKeys>,
    pub(crate) metrics: metrics::Metrics,
    /// Replays of time travel that may run at once.
    pub(crate) travel_permits: Arc<tokio::sync::Semaphore>,
    /// Wakes the streams and waiters of a run when it has a new event or status.
    progress: Mutex<HashMap<String, watch::Sender<Progress>>>,
    /// Running runs' tasks, to cancel or stop them.
    tasks: Mutex<HashMap<String, AbortHandle>>,
    /// Runs whose cancel was asked: their stop is a cancel, not a drain.
    cancelled: Mutex<HashSet<String>>,
    /// The epoch of each run this process claimed and runs.
    claims: Mutex<HashMap<String, i64>>,
    /// Runs whose claim was lost (another replica claimed them): their stop
    /// writes nothing.
    lost: Mutex<HashSet<String>>,
    pub(crate) wake: Notify,
    draining: AtomicBool,
    /// Set when the drain stops the runs still running: another replica (or
    /// the next start) continues them, so what they emit while they unwind
    /// (an agent's `agent_finished` saying "cancelled") is not stored.
    halted: AtomicBool,
    /// Set when the server stops: open event streams end.
    pub(crate) closing: watch::Sender<bool>,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Server {
    /// A server that is not draining, with no run in progress.
    fn new(
        settings: Settings,
        store: store::Store,
        sessions: SessionStore,
        workloads: BTreeMap<String, Arc<workloads::Workload>>,
        keys: Option<ApiKeys>,
    ) -> Server {
        Server {
            travel_permits: Arc::new(tokio::sync::Semaphore::new(settings.travels.max(1))),
            settings,
            store,
            sessions,
            workloads,
            keys,
            metrics: metrics::Metrics::default(),
            progress: Mutex::default(),
            tasks: Mutex::default(),
            cancelled: Mutex::default(),
            claims: Mutex::default(),
            lost: Mutex::default(),
            wake: Notify::new(),
            draining: AtomicBool::new(false),
            halted: AtomicBool::new(false),
            closing: watch::channel(false).0,
        }
    }

    /// Where the trace `trace_id` is shown (`--trace-url`), if anywhere.
    pub(crate) fn trace_url(&self, trace_id: &str) -> Option<String> {
        self.settings.trace_url.as_ref().map(|template| template.replace(TRACE_ID, trace_id))
    }

    pub(crate) fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Whether the drain has stopped the runs still running.
    pub(crate) fn halted(&self) -> bool {
        self.halted.load(Ordering::SeqCst)
    }

    pub(crate) fn tasks_lock(&self) -> MutexGuard<'_, HashMap<String, AbortHandle>> {
        locked(&self.tasks)
    }

    pub(crate) fn cancelled_lock(&self) -> MutexGuard<'_, HashSet<String>> {
        locked(&self.cancelled)
    }

    pub(crate) fn claims_lock(&self) -> MutexGuard<'_, HashMap<String, i64>> {
        locked(&self.claims)
    }

    pub(crate) fn lost_lock(&self) -> MutexGuard<'_, HashSet<String>> {
        locked(&self.lost)
    }

    /// Stops a run whose claim this process lost: it writes nothing more.
    pub(crate) fn lose(&self, id: &str, why: &str) {
        if !self.claims_lock().contains_key(id) || !self.lost_lock().insert(id.to_string()) {
            return;
        }
        tracing::warn!(run = %id, "{why}: the run stops here (another replica continues it)");
        if let Some(task) = self.tasks_lock().get(id) {
            task.abort();
        }
    }

    /// A receiver that sees every later change of run `id` (an event, a
    /// status); the run's channel goes when its last subscription does.
    pub(crate) fn subscribe(self: &Arc<Self>, id: &str) -> Subscription {
        let changes = locked(&self.progress)
            .entry(id.to_string())
            .or_insert_with(|| watch::channel(Progress::default()).0)
            .subscribe();
        let status = changes.borrow().status;
        Subscription { server: self.clone(), id: id.to_string(), changes, status }
    }

    /// Tells the run's streams and waiters that it has new events.
    pub(crate) fn changed(&self, id: &str) {
        self.progressed(id, |p| p.any += 1);
    }

    /// Tells the run's streams and waiters that its status changed (it
    /// ended, paused, was answered or cancelled), perhaps with new events.
    pub(crate) fn status_changed(&self, id: &str) {
        self.progressed(id, |p| {
            p.any += 1;
            p.status += 1;
        });
    }

    fn progressed(&self, id: &str, change: impl FnOnce(&mut Progress)) {
        let progress = locked(&self.progress);
        if let Some(sender) = progress.get(id) {
            sender.send_modify(change);
        }
    }

    /// The run `id`, or a 404.
    pub(crate) async fn find_run(&self, id: &str) -> Result<store::RunRow, error::ApiError> {
        self.store.run(id).await?.ok_or_else(|| error::ApiError::not_found(format!("no run {id:?}")))
    }

    /// `text` for a client: the state directory's absolute path, which a
    /// runtime error may name, is replaced by `<state>` (the log keeps the
    /// whole text).
    pub(crate) fn without_paths(&self, text: &str) -> String {
        let dir = self.settings.state_dir.display().to_string();
        if !self.settings.state_dir.is_absolute() || !text.contains(&dir) {
            return text.to_string();
        }
        tracing::warn!(error = %text, "an error named the state directory; clients see it as <state>");
        text.replace(&dir, "<state>")
    }

    /// Stops a running run's task, as a cancel.
    pub(crate) fn cancel_task(&self, id: &str) {
        self.cancelled_lock().insert(id.to_string());
        if let Some(task) = self.tasks_lock().get(id) {
            task.abort();
        }
    }
}

/// How many times a run changed since a replica's first subscription to
/// it: any change, and changes of its status alone (which a waiter for its
/// end reads the run after, rather than after each batch of events).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Progress {
    any: u64,
    status: u64,
}

/// What [`Server::subscribe`] gives: the run's changes, while it lives.
pub(crate) struct Subscription {
    server: Arc<Server>,
    id: String,
    pub changes: watch::Receiver<Progress>,
    /// The status changes counted when it subscribed.
    status: u64,
}

impl Subscription {
    /// Waits for a change of the run's status after the subscription.
    pub(crate) async fn status_changed(&mut self) {
        let seen = self.status;
        // The sender lives while this subscription does.
        let _ = self.changes.wait_for(|p| p.status != seen).await;
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut progress = locked(&self.server.progress);
        // Only this subscription's receiver is left: nobody waits on the run.
        if progress.get(&self.id).is_some_and(|sender| sender.receiver_count() <= 1) {
            progress.remove(&self.id);
        }
    }
}

/// A server bound to its address, not yet serving.
pub struct Bound {
    server: Arc<Server>,
    listener: tokio::net::TcpListener,
    router: Router,
    limits: Limits,
    drain_timeout: Duration,
    replica_id: String,
    /// Held while serving: one server per state directory in embedded mode
    /// (replicas of the PostgreSQL mode share theirs).
    _lock: Option<Lease>,
}

/// Checks the configuration, loads the workloads, opens the stores, queues
/// again the runs a previous process left running, and binds. Each error is
/// one line (or a list of a workload's problems) for the user.
pub async fn bind(config: Config) -> Result<Bound, BindError> {
    let keys = config.api_key_file.as_deref().map(ApiKeys::read).transpose()?;
    if !config.bind.ip().is_loopback() && keys.is_none() {
        return Err(BindError::NoKeys(config.bind));
    }
    if config.workloads.is_empty() {
        return Err(BindError::NoWorkload);
    }
    if let Some(template) = config.trace_url.as_deref().filter(|t| !t.contains(TRACE_ID)) {
        return Err(BindError::TraceUrl(template.to_string()));
    }
    let cors = config.cors_origins.iter().map(|origin| gate::cors_origin(origin)).collect::<Result<Vec<_>, _>>();
    let cors = cors.map_err(BindError::Flag)?;
    let public = config.public_url.as_deref().map(gate::PublicUrl::parse).transpose().map_err(BindError::Flag)?;
    let workloads = workloads::load_all(&config.workloads).map_err(BindError::Workloads)?;
    std::fs::create_dir_all(&config.state_dir)
        .map_err(|source| BindError::CreateStateDir { path: config.state_dir.clone(), source })?;
    // Absolute, so that clients' errors can be told from it (`Server::without_paths`).
    let mut config = config;
    config.state_dir = std::path::absolute(&config.state_dir)
        .map_err(|source| BindError::ResolveStateDir { path: config.state_dir.clone(), source })?;
    let (store, lock) = match &config.database_url {
        Some(url) => {
            let store =
                store::Store::connect(url, &config.replica_id, config.lease).await.map_err(BindError::Database)?;
            (store, None)
        }
        None => {
            let lock = Lease::take(&config.state_dir, "serve")
                .map_err(|_| BindError::StateDirBusy(config.state_dir.clone()))?;
            let path = config.state_dir.join("serve.db");
            let store = store::Store::open(&path).map_err(|source| BindError::Store { path, source })?;
            (store, Some(lock))
        }
    };
    let sessions_db = config.state_dir.join("sessions.db");
    let sessions =
        SessionStore::open(&sessions_db).map_err(|source| BindError::Sessions { path: sessions_db, source })?;
    let requeued = store.requeue_running().map_err(BindError::Queue)?;
    let listener = tokio::net::TcpListener::bind(config.bind)
        .await
        .map_err(|source| BindError::Listen { addr: config.bind, source })?;
    if requeued > 0 {
        tracing::info!(requeued, "runs left running by the previous process resume from their journals");
    }
    let addr = listener.local_addr().map_err(BindError::Address)?;
    if addr.ip().is_unspecified() && public.is_none() {
        tracing::warn!(%addr, "the A2A agent cards name their endpoints under http://{addr}: give --public-url");
    }
    let settings = Settings {
        state_dir: config.state_dir,
        workers: config.workers,
        replay: config.replay,
        lease: config.lease,
        base_url: public.as_ref().map_or_else(|| format!("http://{addr}"), |p| p.base.clone()),
        session_quota: config.session_quota,
        travels: config.travels,
        push_hosts: config.push_hosts.iter().map(|host| host.to_ascii_lowercase()).collect(),
        replica_id: config.replica_id.clone(),
        shared: config.database_url.is_some(),
        tracer: config.tracer,
        trace_url: config.trace_url,
    };
    let server = Arc::new(Server::new(settings, store, sessions, workloads, keys));
    let gate = gate::Gate::new(addr, public.as_ref(), &cors);
    let router = api::router(server.clone(), gate, config.frontend)?;
    Ok(Bound {
        server,
        listener,
        router,
        limits: config.limits,
        drain_timeout: config.drain_timeout,
        replica_id: config.replica_id,
        _lock: lock,
    })
}

impl Bound {
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `shutdown` resolves, then drains: `/readyz` answers 503,
    /// no run starts, running runs get `drain_timeout` to end (the rest are
    /// stopped and resume from their journals at the next start), event
    /// streams end, and this returns.
    pub async fn serve(self, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<(), HttpFailed> {
        let Bound { server, listener, router, limits, drain_timeout, replica_id, _lock } = self;
        let dispatcher = tokio::spawn(dispatch::dispatch(server.clone()));
        let heartbeat = tokio::spawn(lease::heartbeat(server.clone()));
        let listener_task = server.store.listen().map(|notes| tokio::spawn(lease::follow(server.clone(), notes)));
        let http = tokio::spawn(listen::serve(listener, router, limits, server.closing.subscribe()));
        a2a::resume_push(&server).await;
        tracing::info!(replica = %replica_id, "serving");
        shutdown.await;
        tracing::info!(replica = %replica_id, "draining");
        server.draining.store(true, Ordering::SeqCst);
        server.wake.notify_one();
        let deadline = tokio::time::Instant::now() + drain_timeout;
        while !server.tasks_lock().is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let stopped: Vec<AbortHandle> = server.tasks_lock().values().cloned().collect();
        let released: Vec<(String, i64)> = server.claims_lock().iter().map(|(id, e)| (id.clone(), *e)).collect();
        server.halted.store(true, Ordering::SeqCst);
        for task in &stopped {
            task.abort();
        }
        if !stopped.is_empty() {
            tracing::warn!(runs = stopped.len(), "runs still running at the drain's end were stopped");
        }
        let grace = tokio::time::Instant::now() + Duration::from_secs(5);
        while !server.tasks_lock().is_empty() && tokio::time::Instant::now() < grace {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        dispatcher.abort();
        heartbeat.abort();
        if let Some(task) = listener_task {
            task.abort();
        }
        // Stopped runs go to another replica at once, not when their leases expire.
        for (id, epoch) in released {
            if let Err(error) = server.store.release(&id, epoch).await {
                tracing::warn!(run = %id, %error, "cannot release the run's claim; it is taken over when it expires");
            }
        }
        server.closing.send_replace(true);
        match tokio::time::timeout(Duration::from_secs(5), http).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(HttpFailed(e)),
            Err(_) => tracing::warn!("connections still open after the drain were dropped"),
        }
        tracing::info!(replica = %replica_id, "stopped");
        Ok(())
    }
}

/// A server on `dir` serving `workloads`, with no dispatcher (tests drive the store).
#[cfg(test)]
pub(crate) fn test_server(dir: &std::path::Path, workloads: BTreeMap<String, Arc<workloads::Workload>>) -> Server {
    let store = store::Store::open(&dir.join("serve.db")).expect("a store in a fresh directory");
    test_server_on(dir, workloads, store)
}

/// The same on `store`.
#[cfg(test)]
pub(crate) fn test_server_on(
    dir: &std::path::Path,
    workloads: BTreeMap<String, Arc<workloads::Workload>>,
    store: store::Store,
) -> Server {
    Server::new(
        Settings {
            state_dir: dir.to_path_buf(),
            workers: 1,
            replay: None,
            lease: Duration::from_secs(10),
            base_url: "http://127.0.0.1:8787".to_string(),
            session_quota: 8 << 20,
            travels: 2,
            push_hosts: Vec::new(),
            replica_id: "test".to_string(),
            shared: false,
            tracer: None,
            trace_url: None,
        },
        store,
        SessionStore::open(&dir.join("sessions.db")).expect("sessions in a fresh directory"),
        workloads,
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(dir: &std::path::Path) -> Server {
        test_server(dir, BTreeMap::new())
    }

    #[test]
    fn a_runs_channel_lives_only_while_someone_waits_on_it() {
        let dir = std::env::temp_dir().join(format!("sr-serve-lib-{}", uuid::Uuid::new_v4()));
        let server = Arc::new(server(&dir));
        let first = server.subscribe("r");
        let second = server.subscribe("r");
        drop(first);
        server.changed("r");
        assert!(second.changes.has_changed().unwrap(), "the one still waiting hears of the change");
        drop(second);
        assert!(locked(&server.progress).is_empty());
        // A change nobody waits for leaves nothing behind.
        server.changed("r");
        assert!(locked(&server.progress).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A waiter for a run's end reads the run once per change of its
    /// status, not once per batch of its events.
    #[tokio::test]
    async fn a_status_waiter_wakes_for_a_status_change_not_for_events() {
        let dir = std::env::temp_dir().join(format!("sr-serve-lib-{}", uuid::Uuid::new_v4()));
        let server = Arc::new(server(&dir));
        let mut waiter = server.subscribe("r");
        let mut stream = server.subscribe("r");
        server.changed("r");
        assert!(stream.changes.has_changed().unwrap(), "a stream hears of events");
        stream.changes.borrow_and_update();
        let soon = std::time::Duration::from_millis(50);
        assert!(tokio::time::timeout(soon, waiter.status_changed()).await.is_err(), "events alone wake no waiter");
        server.status_changed("r");
        assert!(tokio::time::timeout(soon, waiter.status_changed()).await.is_ok(), "a status change wakes it");
        assert!(stream.changes.has_changed().unwrap(), "and is a change for the streams too");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
