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
//! Open documents go first: an edit's diagnostics do not wait for the
//! workspace's. After a change on disk, a client that pulls and takes
//! `workspace/diagnostic/refresh` is asked to pull again.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use tokio::sync::mpsc;
use tower_lsp_server::Client;

use crate::config::Config;
use crate::diagnostics::{FileReport, Files, reports};
use crate::memory;
use crate::owner::Event;
use crate::shared::Shared;

pub(crate) async fn run(client: Client, shared: Arc<Shared>, mut events: mpsc::UnboundedReceiver<Event>) {
    let mut published: HashMap<PathBuf, FileReport> = HashMap::new();
    let mut debounce = Config::default().debounce;
    'events: while let Some(event) = events.recv().await {
        let mut disk = false;
        let mut event = Some(event);
        // Wait for a quiet time; every new event restarts it.
        loop {
            if let Some(Event::Changed { disk: changed }) = event.take() {
                disk |= changed;
            }
            if debounce.is_zero() {
                // No quiet time: take what is queued, without a timer (tokio
                // rounds even a zero timeout up to its next millisecond tick).
                match events.try_recv() {
                    Ok(next) => event = Some(next),
                    Err(mpsc::error::TryRecvError::Disconnected) => return,
                    Err(mpsc::error::TryRecvError::Empty) => break,
                }
                continue;
            }
            match tokio::time::timeout(debounce, events.recv()).await {
                Ok(Some(next)) => event = Some(next),
                Ok(None) => return,
                Err(_) => break,
            }
        }
        let features = shared.features();
        if disk && features.pull_diagnostics && features.diagnostic_refresh {
            let client = client.clone();
            // A request to the client waits for its answer: not in this loop.
            tokio::spawn(async move { client.workspace_diagnostic_refresh().await });
        }
        let mut phases = Vec::new();
        if !features.pull_diagnostics {
            phases.push(Files::Open);
        }
        if !shared.pulls_workspace.load(Ordering::SeqCst) {
            phases.push(Files::ClosedInWorkspace);
        }
        let mut current = HashSet::new();
        for files in phases {
            let Some(snapshot) = shared.snapshot().await else { return };
            debounce = snapshot.config.debounce;
            let computed = tokio::task::spawn_blocking(move || {
                let start = Instant::now();
                let computed = reports(&snapshot, files);
                // A long analysis (opening a big file) freed most of what it
                // allocated, in the arena of this thread: give it back rather
                // than keep it resident for the rest of the session.
                if start.elapsed() >= memory::TRIM_AFTER_ANALYSIS {
                    memory::release();
                }
                computed
            })
            .await;
            let computed = match computed {
                Ok(Ok(computed)) => computed,
                // A newer change cancelled us; its event is on its way.
                Ok(Err(_)) => continue 'events,
                // The runtime is shutting down: nothing more to publish.
                Err(join) if join.is_cancelled() => return,
                Err(panic) => {
                    eprintln!("sr-lsp: computing diagnostics panicked: {panic}");
                    continue 'events;
                }
            };
            for (path, report) in computed {
                current.insert(path.clone());
                match published.get(&path) {
                    Some(old) if *old == report => continue,
                    Some(old) if old.uri != report.uri => {
                        client.publish_diagnostics(old.uri.clone(), Vec::new(), None).await
                    }
                    _ => {}
                }
                client.publish_diagnostics(report.uri.clone(), report.items.clone(), report.version).await;
                published.insert(path, report);
            }
        }
        let withdrawn: Vec<PathBuf> = published.keys().filter(|p| !current.contains(*p)).cloned().collect();
        for path in withdrawn {
            if let Some(old) = published.remove(&path) {
                client.publish_diagnostics(old.uri, Vec::new(), None).await;
            }
        }
    }
}
