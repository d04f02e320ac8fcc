//! `GET /v1/runs/{id}/events`: a run's events as Server-Sent Events, each
//! with `id:` its event id. Events are read from the store, after the id the
//! client last saw (`Last-Event-ID`, or `?after=N`), so a reconnect resumes
//! with no gap and no duplicate; the stream waits for new ones (and for a
//! store that does not answer) and ends when the run has ended (done,
//! failed or cancelled) and every event was sent.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;

use crate::error::ApiError;
use crate::{Server, Subscription};

/// Events read from the store at once.
const BATCH: usize = 256;

struct Cursor {
    server: Arc<Server>,
    run: String,
    after: u64,
    buffer: VecDeque<(u64, String)>,
    /// The run's changes since the last read, while its events are sent.
    changes: Option<Subscription>,
    /// The run had ended at the last read, which got its last events.
    ended: bool,
    /// The last read failed (logged once until a read succeeds).
    unanswered: bool,
}

pub async fn stream(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let after = match (headers.get("last-event-id"), query.get("after")) {
        (Some(header), _) => parse_id("Last-Event-ID", header.to_str().unwrap_or("?"))?,
        (None, Some(after)) => parse_id("after", after)?,
        (None, None) => 0,
    };
    server.find_run(&id).await?;
    let cursor =
        Cursor { server, run: id, after, buffer: VecDeque::new(), changes: None, ended: false, unanswered: false };
    let events = futures::stream::unfold(cursor, |mut cursor| async move {
        let (id, data) = cursor.next().await?;
        Some((Ok(Event::default().id(id.to_string()).data(data)), cursor))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

fn parse_id(field: &str, text: &str) -> Result<u64, ApiError> {
    text.trim()
        .parse()
        .map_err(|_| ApiError::bad_request(format!("{field}: {text:?} is not an event id (a whole number)")))
}

impl Cursor {
    /// The next event, waiting for it; `None` once the run has ended and
    /// everything was sent, or the server stops. One read of the store per
    /// change of the run (its status and its events at once).
    async fn next(&mut self) -> Option<(u64, String)> {
        let mut closing = self.server.closing.subscribe();
        loop {
            if let Some((id, data)) = self.buffer.pop_front() {
                self.after = id;
                return Some((id, data));
            }
            if self.ended || *closing.borrow() {
                return None;
            }
            // Read again only after a change since the last read (or the backstop's tick).
            if let Some(mut changes) = self.changes.take() {
                tokio::select! {
                    _ = changes.changes.changed() => {}
                    _ = closing.changed() => {}
                    () = tokio::time::sleep(Duration::from_secs(5)) => {}
                }
            }
            // Subscribed before reading: a change after the read wakes us.
            let changes = self.server.subscribe(&self.run);
            match self.server.store.follow(&self.run, self.after, BATCH).await {
                Ok(Some((status, batch))) => {
                    self.unanswered = false;
                    let full = batch.len() == BATCH;
                    self.ended = status.is_ended() && !full;
                    self.buffer.extend(batch);
                    // A full batch is followed by a read at once.
                    self.changes = (!full).then_some(changes);
                }
                Ok(None) => return None,
                // The store does not answer (restarting, unreachable): the
                // stream stays open (keep-alives go on) and reads again
                // each second, then goes on from the event it sent last.
                Err(error) => {
                    if !std::mem::replace(&mut self.unanswered, true) {
                        tracing::warn!(%error, run = %self.run, "cannot read a run's events; reading again each second");
                    }
                    tokio::select! {
                        _ = closing.changed() => {}
                        () = tokio::time::sleep(Duration::from_secs(1)) => {}
                    }
                }
            }
        }
    }
}
