//! Keeping this process's claims: a heartbeat extends the lease of every
//! run it runs (every quarter of the lease), and stops a run whose claim
//! another replica took, or every run once the store has been unreachable
//! for a whole lease (the others may have taken them by then). With
//! PostgreSQL, the other replicas' changes arrive as notes: they wake the
//! dispatcher, a run's streams, or cancel a run running here.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::Server;
use crate::store::Note;

pub async fn heartbeat(server: Arc<Server>) {
    let lease = server.settings.lease;
    let mut kept = Instant::now();
    loop {
        tokio::time::sleep(lease / 4).await;
        let claims: Vec<(String, i64)> = server.claims_lock().iter().map(|(id, epoch)| (id.clone(), *epoch)).collect();
        match server.store.heartbeat(&claims).await {
            Ok(lost) => {
                kept = Instant::now();
                for id in lost {
                    server.lose(&id, "the run's claim was lost");
                }
            }
            Err(error) => {
                tracing::error!(%error, "cannot extend the leases of this replica's runs");
                if kept.elapsed() >= lease {
                    for (id, _) in &claims {
                        server.lose(id, "the run's lease expired (the store was unreachable)");
                    }
                }
            }
        }
    }
}

pub async fn follow(server: Arc<Server>, mut notes: mpsc::Receiver<Note>) {
    while let Some(note) = notes.recv().await {
        match note {
            Note::Wake => server.wake.notify_one(),
            Note::Run(id) => server.changed(&id),
            Note::Status(id) => server.status_changed(&id),
            Note::Cancel(id) => {
                if server.tasks_lock().contains_key(&id) {
                    server.cancel_task(&id);
                }
            }
        }
    }
}
