//! Diagnostics pushed after a change and a quiet time (debounce), computed on
//! a snapshot, sent only when they differ from what the editor has:
//! - for open documents, with their version, unless the client pulls them
//!   (it declared `textDocument.diagnostic` and takes
//!   `workspace/diagnostic/refresh`; a client that pulls but cannot be asked
//!   to pull again is offered no pull and pushed, so a change to a file an
//!   open document imports never leaves it stale);
//! - for closed files under the workspace folders, without a version, until
//!   the client's first `workspace/diagnostic` (from then on it pulls them);
//! - an empty list for a file whose diagnostics are no longer pushed (closed
//!   outside the workspace, deleted, or now pulled), so nothing shows twice.
//!
//! Only files whose diagnostics a change can alter are checked again: every
//! file of every program that includes a changed file (`Analysis::program_files`;
//! the owner counts a file whose imports changed, and what they reach, as
//! changed). Changes on disk, to the workspace folders or to the diagnostics
//! mode, and a closed document whose file is gone, make every file stale. Open documents are checked and published first;
//! closed files wait until no change came for [`IDLE`] (while the user types,
//! checking them would make each edit wait for them: a write waits for salsa
//! to cancel the check) and follow in short batches; a change that arrives
//! between two batches (or cancels one) interrupts them: the files left stay
//! stale for the next round, which starts with the changed document. With
//! `trace` on (`initialize`, `$/setTrace`), each batch is logged with
//! `$/logTrace`: how many files, how long, and (verbose) their paths. After a
//! change on disk, a client that pulls and takes
//! `workspace/diagnostic/refresh` is asked to pull again.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::notification::LogTrace;
use tower_lsp_server::ls_types::{LogTraceParams, TraceValue};

use crate::config::Config;
use crate::diagnostics::{FileReport, report};
use crate::handlers::Indexes;
use crate::memory;
use crate::owner::{Changed, Event, Snapshot};
use crate::shared::Shared;

/// How long no change must come before closed files are checked.
const IDLE: Duration = Duration::from_secs(1);

/// How long a round a change cancelled waits for that change's event.
const AFTER_CANCEL: Duration = Duration::from_secs(1);

/// How long one batch of closed files may take before what it found is
/// published and queued changes are looked at.
const BATCH: Duration = Duration::from_millis(50);

pub(crate) async fn run(client: Client, shared: Arc<Shared>, mut events: mpsc::UnboundedReceiver<Event>) {
    let mut publisher = Publisher { client, shared, work: Work::default(), published: HashMap::new() };
    let mut debounce = Config::default().debounce;
    let mut cancelled = false;
    loop {
        // Work a change interrupted is still to do: no need to wait for one,
        // unless the change was written (it cancelled the round) and its
        // event, which goes first, is on its way.
        if publisher.work.stale.is_empty() && publisher.work.changed.is_empty() {
            match events.recv().await {
                Some(event) => publisher.work.absorb(event),
                None => return,
            }
        } else if cancelled {
            match tokio::time::timeout(AFTER_CANCEL, events.recv()).await {
                Ok(Some(event)) => publisher.work.absorb(event),
                Ok(None) => return,
                Err(_) => {}
            }
        }
        if !quiet_time(&mut events, &mut publisher.work, debounce).await {
            return;
        }
        let features = publisher.shared.features();
        if std::mem::take(&mut publisher.work.disk) && features.pull_diagnostics && features.diagnostic_refresh {
            let client = publisher.client.clone();
            // A request to the client waits for its answer: not in this loop.
            tokio::spawn(async move { client.workspace_diagnostic_refresh().await });
        }
        let Some(snapshot) = publisher.shared.snapshot().await else { return };
        debounce = snapshot.config.debounce;
        let mut checked = publisher.check_open(snapshot).await;
        if checked.is_ok() && !publisher.work.stale.is_empty() {
            // Closed files wait for a quiet editor: checking them while the
            // user types would make the next edit wait for them. (No
            // snapshot is held meanwhile: it would hold up the next change.)
            match tokio::time::timeout(IDLE, events.recv()).await {
                Ok(Some(event)) => {
                    publisher.work.absorb(event);
                    checked = Err(Stop::Yielded);
                }
                Ok(None) => return,
                Err(_) => match publisher.shared.snapshot().await {
                    Some(snapshot) => checked = publisher.check_closed(snapshot, &mut events).await,
                    None => return,
                },
            }
        }
        cancelled = match checked {
            Ok(()) | Err(Stop::Yielded) => false,
            Err(Stop::Cancelled) => true,
            Err(Stop::Gone) => return,
        };
    }
}

/// Waits until no event came for `debounce`, absorbing those that do;
/// `false` when the server is gone.
async fn quiet_time(events: &mut mpsc::UnboundedReceiver<Event>, work: &mut Work, debounce: Duration) -> bool {
    loop {
        if debounce.is_zero() {
            // No quiet time: take what is queued, without a timer (tokio
            // rounds even a zero timeout up to its next millisecond tick).
            match events.try_recv() {
                Ok(event) => work.absorb(event),
                Err(mpsc::error::TryRecvError::Disconnected) => return false,
                Err(mpsc::error::TryRecvError::Empty) => return true,
            }
            continue;
        }
        match tokio::time::timeout(debounce, events.recv()).await {
            Ok(Some(event)) => work.absorb(event),
            Ok(None) => return false,
            Err(_) => return true,
        }
    }
}

/// What is left to do.
#[derive(Default)]
struct Work {
    /// Changes not yet turned into stale files.
    changed: Changed,
    /// A file on disk changed since the client was last asked to pull.
    disk: bool,
    /// Files whose diagnostics may differ from those published, each once,
    /// the changed files first.
    stale: Vec<PathBuf>,
    in_stale: HashSet<PathBuf>,
}

impl Work {
    fn absorb(&mut self, event: Event) {
        self.changed.merge(event.changed);
        self.disk |= event.disk;
    }

    fn add_stale(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        for path in paths {
            if self.in_stale.insert(path.clone()) {
                self.stale.push(path);
            }
        }
    }

    fn checked(&mut self, done: &HashSet<PathBuf>) {
        self.stale.retain(|p| !done.contains(p));
        self.in_stale.retain(|p| !done.contains(p));
    }
}

/// Why a round stopped short of checking every stale file (those left are
/// checked in the next round).
enum Stop {
    /// A change was written while it computed.
    Cancelled,
    /// A change was queued between two batches (or a check panicked, which
    /// was logged).
    Yielded,
    /// The runtime is shutting down.
    Gone,
}

struct Publisher {
    client: Client,
    shared: Arc<Shared>,
    work: Work,
    published: HashMap<PathBuf, FileReport>,
}

impl Publisher {
    /// A round's first part: turns the changes into stale files, withdraws
    /// what is no longer pushed, checks and publishes the open documents.
    async fn check_open(&mut self, snapshot: Snapshot) -> Result<(), Stop> {
        let changed = std::mem::take(&mut self.work.changed);
        let published: Vec<PathBuf> = if changed.all { self.published.keys().cloned().collect() } else { Vec::new() };
        let (snapshot, stale) =
            blocking(snapshot, move |s| stale_files(s, &changed, published).map_err(|_| changed)).await?;
        match stale {
            Ok(stale) => self.work.add_stale(stale),
            Err(changed) => {
                self.work.changed.merge(changed);
                return Err(Stop::Cancelled);
            }
        }
        // What is no longer pushed is withdrawn rather than checked.
        let (open, _, withdrawn) = self.sort_stale(&snapshot);
        for path in &withdrawn {
            self.withdraw(path).await;
        }
        self.work.checked(&withdrawn);
        if !open.is_empty() {
            let (_, found) = blocking(snapshot, move |s| check_files(s, &open, None)).await?;
            self.publish(found.map_err(|_| Stop::Cancelled)?, "open documents").await;
        }
        Ok(())
    }

    /// A round's second part: the stale closed files, batch by batch, until
    /// a change is queued. Each batch takes a snapshot of its own and drops it
    /// before publishing: a change written meanwhile waits for no idle
    /// snapshot, only for a running batch to be cancelled.
    async fn check_closed(
        &mut self,
        snapshot: Snapshot,
        events: &mut mpsc::UnboundedReceiver<Event>,
    ) -> Result<(), Stop> {
        let (_, closed, _) = self.sort_stale(&snapshot);
        let closed = Arc::new(closed);
        let mut snapshot = Some(snapshot);
        let mut next = 0;
        while next < closed.len() {
            if self.interrupted(events) {
                return Err(Stop::Yielded);
            }
            let batch_snapshot = match snapshot.take() {
                Some(snapshot) => snapshot,
                None => self.shared.snapshot().await.ok_or(Stop::Gone)?,
            };
            let files = closed.clone();
            let (_, found) = blocking(batch_snapshot, move |s| check_files(s, &files[next..], Some(BATCH))).await?;
            let batch = found.map_err(|_| Stop::Cancelled)?;
            next += batch.checked.len();
            self.publish(batch, "closed files").await;
        }
        Ok(())
    }

    /// The stale files by what becomes of them: open documents and closed
    /// files to check, and files whose diagnostics are no longer pushed.
    fn sort_stale(&self, snapshot: &Snapshot) -> (Vec<PathBuf>, Vec<PathBuf>, HashSet<PathBuf>) {
        let features = self.shared.features();
        let pulls_workspace = self.shared.pulls_workspace.load(Ordering::SeqCst);
        let (mut open, mut closed, mut withdrawn) = (Vec::new(), Vec::new(), HashSet::new());
        for path in &self.work.stale {
            if snapshot.documents.contains_key(path) {
                if features.pull_diagnostics {
                    withdrawn.insert(path.clone());
                } else {
                    open.push(path.clone());
                }
            } else if !pulls_workspace && snapshot.in_workspace(path) {
                closed.push(path.clone());
            } else {
                withdrawn.insert(path.clone());
            }
        }
        (open, closed, withdrawn)
    }

    /// Whether a change is queued: it goes before the closed files left.
    fn interrupted(&mut self, events: &mut mpsc::UnboundedReceiver<Event>) -> bool {
        let mut any = false;
        while let Ok(event) = events.try_recv() {
            self.work.absorb(event);
            any = true;
        }
        any
    }

    /// Publishes what changed of `batch`, marks its files checked and traces it.
    async fn publish(&mut self, batch: Batch, what: &str) {
        let done: HashSet<PathBuf> = batch.checked.iter().cloned().collect();
        // A file the database no longer has (removed meanwhile) has no report.
        let reported: HashSet<&PathBuf> = batch.reports.iter().map(|(path, _)| path).collect();
        let gone: Vec<PathBuf> = batch.checked.iter().filter(|p| !reported.contains(p)).cloned().collect();
        for path in &gone {
            self.withdraw(path).await;
        }
        for (path, report) in batch.reports {
            match self.published.get(&path) {
                Some(old) if *old == report => continue,
                Some(old) if old.uri != report.uri => {
                    self.client.publish_diagnostics(old.uri.clone(), Vec::new(), None).await
                }
                _ => {}
            }
            self.client.publish_diagnostics(report.uri.clone(), report.items.clone(), report.version).await;
            self.published.insert(path, report);
        }
        self.work.checked(&done);
        let trace = self.shared.trace();
        if trace != TraceValue::Off && !batch.checked.is_empty() {
            let message = format!("diagnostics: checked {} {what} in {:.1?}", batch.checked.len(), batch.took);
            let verbose = (trace == TraceValue::Verbose)
                .then(|| batch.checked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join("\n"));
            self.client.send_notification::<LogTrace>(LogTraceParams { message, verbose }).await;
        }
    }

    /// Clears what was pushed for `path`, if anything.
    async fn withdraw(&mut self, path: &Path) {
        if let Some(old) = self.published.remove(path) {
            self.client.publish_diagnostics(old.uri, Vec::new(), None).await;
        }
    }
}

/// The files `changed` makes stale: every file of every program that
/// includes a changed file (the changed file first); when everything
/// changed, the open documents, then every other file, then those
/// `published` lists (a file gone since is withdrawn).
fn stale_files(s: &Snapshot, changed: &Changed, published: Vec<PathBuf>) -> sr_ide::Cancellable<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = Vec::new();
    if changed.all {
        out.extend(s.documents.keys().cloned());
        out.extend(s.analysis.files()?);
        out.extend(published);
    }
    for path in &changed.paths {
        out.push(path.clone());
        out.extend(s.analysis.program_files(path)?);
    }
    Ok(out)
}

/// Reports found by one blocking call.
struct Batch {
    /// The files looked at, in order.
    checked: Vec<PathBuf>,
    /// Those the database has, with their reports.
    reports: Vec<(PathBuf, FileReport)>,
    took: Duration,
}

/// The reports of `files` from the first: all of them, or with a `budget`,
/// as many as fit in it (at least one).
fn check_files(s: &Snapshot, files: &[PathBuf], budget: Option<Duration>) -> sr_ide::Cancellable<Batch> {
    let start = Instant::now();
    let mut indexes = Indexes::default();
    let mut batch = Batch { checked: Vec::new(), reports: Vec::new(), took: Duration::ZERO };
    for path in files {
        if budget.is_some_and(|budget| !batch.checked.is_empty() && start.elapsed() >= budget) {
            break;
        }
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| report(s, path, &mut indexes))) {
            Ok(report) => batch.reports.extend(report?.map(|report| (path.clone(), report))),
            // The panic hook printed why. The file is not tried again until a
            // change makes it stale.
            Err(_) => eprintln!("sr-lsp: computing the diagnostics of {} panicked", path.display()),
        }
        batch.checked.push(path.clone());
    }
    batch.took = start.elapsed();
    Ok(batch)
}

/// Runs `f` on a blocking thread with `snapshot` and hands both back. A long analysis (opening a big
/// file) freed most of what it allocated, in the arena of that thread: it is
/// given back rather than kept resident for the rest of the session.
async fn blocking<T: Send + 'static>(
    snapshot: Snapshot,
    f: impl FnOnce(&Snapshot) -> T + Send + 'static,
) -> Result<(Snapshot, T), Stop> {
    let joined = tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        let value = f(&snapshot);
        if start.elapsed() >= memory::TRIM_AFTER_ANALYSIS {
            memory::release();
        }
        (snapshot, value)
    })
    .await;
    match joined {
        Ok(pair) => Ok(pair),
        Err(join) if join.is_cancelled() => Err(Stop::Gone),
        Err(panic) => {
            eprintln!("sr-lsp: computing diagnostics panicked: {panic}");
            Err(Stop::Yielded)
        }
    }
}
