//! The accept loop: each connection is served by hyper's HTTP/1 with a
//! deadline for a request's headers (an idle or slow-loris connection is
//! closed when it passes), `TCP_NODELAY` (a streamed event leaves at once,
//! not after the peer's delayed ACK), and at most `per_client` open
//! connections from one IP address (the next ones are closed on accept), so
//! one client cannot take every descriptor from `/healthz` and the others.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::locked;

/// How connections are bounded.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// How long a connection may take to send a request's headers, and stay
    /// idle between requests.
    pub header_timeout: Duration,
    /// Open connections one IP address may hold.
    pub per_client: usize,
}

/// The open connections of each client address.
#[derive(Default)]
struct Clients(Mutex<HashMap<IpAddr, usize>>);

/// One connection's place in [`Clients`], given back when it closes.
struct Slot {
    clients: Arc<Clients>,
    ip: IpAddr,
}

impl Clients {
    fn take(self: &Arc<Self>, ip: IpAddr, limit: usize) -> Option<Slot> {
        let mut open = locked(&self.0);
        let count = open.entry(ip).or_insert(0);
        if *count >= limit {
            return None;
        }
        *count += 1;
        Some(Slot { clients: self.clone(), ip })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = locked(&self.clients.0);
        if let Some(count) = open.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// Serves `router` on `listener` until `closing` turns true; then each
/// connection ends after its request in progress, and this returns once
/// every connection has closed.
pub async fn serve(listener: TcpListener, router: Router, limits: Limits, mut closing: watch::Receiver<bool>) {
    let clients = Arc::new(Clients::default());
    let (open_tx, open_rx) = watch::channel(());
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = closed(&mut closing) => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of descriptors (or another passing failure): the open
                // connections go on; accept again shortly.
                tracing::warn!(%error, "cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Some(slot) = clients.take(peer.ip(), limits.per_client) else {
            tracing::warn!(client = %peer.ip(), limit = limits.per_client, "a client's connections are at the limit: one closed");
            continue;
        };
        if let Err(error) = stream.set_nodelay(true) {
            tracing::warn!(%error, "cannot set TCP_NODELAY");
        }
        let service = TowerToHyperService::new(router.clone());
        let mut closing = closing.clone();
        let open = open_rx.clone();
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = closed(&mut closing) => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            drop((slot, open));
        });
    }
    drop(open_rx);
    // Every connection task holds a receiver: closed once all have ended.
    open_tx.closed().await;
}

/// Resolves once `closing` is true (or its sender is gone).
async fn closed(closing: &mut watch::Receiver<bool>) {
    let _ = closing.wait_for(|closed| *closed).await;
}
