//! State the protocol side shares: the owner's channel, the document
//! generation, the negotiated encoding, the semantic-token baselines and
//! what the client asked to be traced.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use sr_ide::Encoding;
use tokio::sync::{mpsc as async_mpsc, oneshot};
use tower_lsp_server::ls_types::{SemanticToken, TraceValue};

use crate::owner::{Changed, Event, Message, Snapshot};
use crate::raw::RawAnswers;

/// What the client said it supports, from `initialize`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ClientFeatures {
    /// Registers file watchers on request (`didChangeWatchedFiles.dynamicRegistration`).
    pub watch: bool,
    /// Answers `workspace/configuration`.
    pub pull_configuration: bool,
    /// Pulls the diagnostics of open documents (`textDocument.diagnostic`) and
    /// takes `workspace/diagnostic/refresh`: it is offered pull diagnostics.
    pub pull_diagnostics: bool,
    /// Takes `workspace/diagnostic/refresh`.
    pub diagnostic_refresh: bool,
    /// Takes snippet syntax in completion items (`completionItem.snippetSupport`).
    pub snippets: bool,
    /// Creates files a workspace edit asks for (`documentChanges` with the
    /// `create` resource operation): it is offered "move item to file".
    pub create_files: bool,
}

pub(crate) struct Shared {
    owner: Mutex<mpsc::Sender<Message>>,
    /// Bumped for every document or workspace change, in wire order.
    generation: AtomicU64,
    pub encoding: Arc<Mutex<Encoding>>,
    /// Per document URI: the last full semantic tokens sent and their id.
    pub semantic_tokens: Mutex<HashMap<String, (String, Vec<SemanticToken>)>>,
    next_result_id: AtomicU64,
    pub client_features: Mutex<ClientFeatures>,
    /// Set at the client's first `workspace/diagnostic`: from then on it has
    /// the diagnostics of closed files and the server stops pushing them.
    pub pulls_workspace: AtomicBool,
    /// Wakes the diagnostics publisher.
    events: async_mpsc::UnboundedSender<Event>,
    /// The client takes versioned `documentChanges` in workspace edits.
    pub document_changes: std::sync::atomic::AtomicBool,
    /// Over stdio: where big answers wait, serialised, for the writer.
    pub raw: Option<Arc<RawAnswers>>,
    /// What the client asked to be traced (`initialize`'s `trace`, `$/setTrace`).
    trace: Mutex<TraceValue>,
}

impl Shared {
    pub(crate) fn new(
        owner: mpsc::Sender<Message>,
        encoding: Arc<Mutex<Encoding>>,
        events: async_mpsc::UnboundedSender<Event>,
        raw: Option<Arc<RawAnswers>>,
    ) -> Shared {
        Shared {
            owner: Mutex::new(owner),
            generation: AtomicU64::new(0),
            encoding,
            semantic_tokens: Mutex::default(),
            next_result_id: AtomicU64::new(1),
            client_features: Mutex::default(),
            pulls_workspace: AtomicBool::new(false),
            events,
            document_changes: Default::default(),
            raw,
            trace: Mutex::new(TraceValue::Off),
        }
    }

    pub(crate) fn send(&self, message: Message) {
        let _ = self.owner.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).send(message);
    }

    /// A change arrived: requests in flight may now answer for stale text.
    pub(crate) fn bump(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// A snapshot reflecting every change sent before this call.
    pub(crate) async fn snapshot(&self) -> Option<Snapshot> {
        let (reply, receive) = oneshot::channel();
        self.send(Message::Snapshot(reply));
        let mut snapshot = receive.await.ok()?;
        snapshot.document_changes = self.document_changes.load(Ordering::SeqCst);
        snapshot.create_files = self.features().create_files;
        Some(snapshot)
    }

    pub(crate) fn features(&self) -> ClientFeatures {
        *self.client_features.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The client pulls workspace diagnostics: the publisher withdraws what
    /// it pushed for closed files.
    pub(crate) fn workspace_pulled(&self) {
        if !self.pulls_workspace.swap(true, Ordering::SeqCst) {
            // Every file is looked at again: the pushed closed ones are withdrawn.
            let _ = self.events.send(Event { changed: Changed { all: true, ..Changed::default() }, disk: false });
        }
    }

    pub(crate) fn trace(&self) -> TraceValue {
        *self.trace.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn set_trace(&self, value: TraceValue) {
        *self.trace.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = value;
    }

    pub(crate) fn result_id(&self) -> String {
        self.next_result_id.fetch_add(1, Ordering::SeqCst).to_string()
    }
}
