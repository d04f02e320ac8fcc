//! `GET /v1/runs/{id}/events`: a run's events as Server-Sent Events, each
//! with `id:` its event id. Events are read from the store, after the id the
//! client last saw (`Last-Event-ID`, or `?after=N`), so a reconnect resumes
//! with no gap and no duplicate; the stream waits for new ones and ends when
//! the run has ended (done, failed or cancelled) and every event was sent.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;

use crate::Server;
use crate::error::ApiError;

/// Events read from the store at once.
const BATCH: usize = 256;

struct Cursor {
    server: Arc<Server>,
    run: String,
    after: u64,
    buffer: VecDeque<(u64, String)>,
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
    let cursor = Cursor { server, run: id, after, buffer: VecDeque::new() };
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
    /// everything was sent, or the server stops.
    async fn next(&mut self) -> Option<(u64, String)> {
        let mut closing = self.server.closing.subscribe();
        loop {
            if let Some((id, data)) = self.buffer.pop_front() {
                self.after = id;
                return Some((id, data));
            }
            if *closing.borrow() {
                return None;
            }
            // Subscribed before reading: a change after the read wakes us.
            let mut changes = self.server.subscribe(&self.run);
            let ended = match self.server.store.run(&self.run).await {
                Ok(Some(run)) => run.status.is_ended(),
                Ok(None) => true,
                Err(error) => {
                    tracing::error!(%error, "cannot read a run");
                    return None;
                }
            };
            // Read after the status: a run's events are stored before its end or with it.
            match self.server.store.events_after(&self.run, self.after, BATCH).await {
                Ok(batch) if !batch.is_empty() => {
                    self.buffer.extend(batch);
                    continue;
                }
                Ok(_) if ended => return None,
                Ok(_) => {}
                Err(error) => {
                    tracing::error!(%error, "cannot read a run's events");
                    return None;
                }
            }
            tokio::select! {
                _ = changes.changes.changed() => {}
                _ = closing.changed() => {}
                () = tokio::time::sleep(Duration::from_secs(5)) => {}
            }
        }
    }
}
