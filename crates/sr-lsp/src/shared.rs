//! State the protocol side shares: the owner's channel, the document
//! generation, the negotiated encoding and the semantic-token baselines.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use sr_ide::Encoding;
use tokio::sync::oneshot;
use tower_lsp_server::ls_types::SemanticToken;

use crate::owner::{Message, Snapshot};

pub(crate) struct Shared {
    owner: Mutex<mpsc::Sender<Message>>,
    /// Bumped for every document or workspace change, in wire order.
    generation: AtomicU64,
    pub encoding: Arc<Mutex<Encoding>>,
    /// Per document URI: the last full semantic tokens sent and their id.
    pub semantic_tokens: Mutex<HashMap<String, (String, Vec<SemanticToken>)>>,
    next_result_id: AtomicU64,
    /// What the client supports: (dynamic file watching, pulling configuration).
    pub client_features: Mutex<(bool, bool)>,
    /// The client takes versioned `documentChanges` in workspace edits.
    pub document_changes: std::sync::atomic::AtomicBool,
}

impl Shared {
    pub(crate) fn new(owner: mpsc::Sender<Message>, encoding: Arc<Mutex<Encoding>>) -> Shared {
        Shared {
            owner: Mutex::new(owner),
            generation: AtomicU64::new(0),
            encoding,
            semantic_tokens: Mutex::default(),
            next_result_id: AtomicU64::new(1),
            client_features: Mutex::default(),
            document_changes: Default::default(),
        }
    }

    pub(crate) fn send(&self, message: Message) {
        let _ = self.owner.lock().unwrap().send(message);
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
        Some(snapshot)
    }

    pub(crate) fn result_id(&self) -> String {
        self.next_result_id.fetch_add(1, Ordering::SeqCst).to_string()
    }
}
