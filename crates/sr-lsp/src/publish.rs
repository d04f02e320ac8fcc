//! Diagnostics pushed per document version: after a change and a quiet
//! time (debounce), computed on a snapshot, sent only when they differ from
//! what the editor has; empty when a document closes.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::mpsc;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::Diagnostic;

use crate::config::Config;
use crate::handlers;
use crate::owner::Event;
use crate::shared::Shared;

pub(crate) async fn run(client: Client, shared: Arc<Shared>, mut events: mpsc::UnboundedReceiver<Event>) {
    let mut published: HashMap<String, (i32, Vec<Diagnostic>)> = HashMap::new();
    let mut debounce = Config::default().debounce;
    while let Some(event) = events.recv().await {
        let mut closed = Vec::new();
        let mut event = Some(event);
        // Wait for a quiet time; every new event restarts it.
        loop {
            if let Some(Event::Closed(uri)) = event.take() {
                closed.push(uri);
            }
            match tokio::time::timeout(debounce, events.recv()).await {
                Ok(Some(next)) => event = Some(next),
                Ok(None) => return,
                Err(_) => break,
            }
        }
        for uri in closed {
            published.remove(uri.as_str());
            client.publish_diagnostics(uri, Vec::new(), None).await;
        }
        let Some(snapshot) = shared.snapshot().await else { return };
        debounce = snapshot.config.debounce;
        let computed = tokio::task::spawn_blocking(move || handlers::open_diagnostics(&snapshot)).await;
        let documents = match computed {
            Ok(Ok(documents)) => documents,
            // A newer change cancelled us; its event is on its way.
            Ok(Err(_)) => continue,
            Err(panic) => {
                eprintln!("sr-lsp: computing diagnostics panicked: {panic}");
                continue;
            }
        };
        for (uri, version, diagnostics) in documents {
            let entry = (version, diagnostics);
            if published.get(uri.as_str()) == Some(&entry) {
                continue;
            }
            published.insert(uri.as_str().to_string(), entry.clone());
            client.publish_diagnostics(uri, entry.1, Some(entry.0)).await;
        }
    }
}
