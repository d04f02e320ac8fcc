//! The service in front of the handlers. tower-lsp-server runs handlers
//! concurrently and calls them only when first polled, so handler order is
//! not wire order; this layer sees messages in wire order (its `call` runs as
//! each is read), hands document and workspace notifications to the owner
//! right there, and turns the answer of a position-bearing request into
//! `ContentModified` when a change arrived while it was computed. Over stdio
//! it also gives each request the [`raw`] slot its handler may answer into.

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use serde_json::Value;
use tower::Service;
use tower_lsp_server::jsonrpc::{Error, Request, Response};
use tower_lsp_server::ls_types::SetTraceParams;
use tower_lsp_server::ls_types::notification::{Notification, SetTrace};

use crate::change::Change;
use crate::owner::Message;
use crate::raw;
use crate::shared::Shared;

/// Requests whose answer holds positions in the document as it was.
fn position_bearing(method: &str) -> bool {
    method.starts_with("textDocument/") && method != "textDocument/semanticTokens/full/delta"
        || method.starts_with("callHierarchy/")
}

pub struct Ordered<S> {
    inner: S,
    shared: Arc<Shared>,
}

impl<S> Ordered<S> {
    pub(crate) fn new(inner: S, shared: Arc<Shared>) -> Ordered<S> {
        Ordered { inner, shared }
    }
}

impl<S> Service<Request> for Ordered<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Option<Response>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let method = request.method().to_string();
        if request.id().is_none() {
            let params = request.params().cloned().unwrap_or(Value::Null);
            // tower-lsp-server drops `$/` notifications it does not know.
            if method == <SetTrace as Notification>::METHOD {
                match serde_json::from_value::<SetTraceParams>(params) {
                    Ok(p) => self.shared.set_trace(p.value),
                    Err(e) => eprintln!("sr-lsp: ignoring {method} with malformed params: {e}"),
                }
                return Box::pin(self.inner.call(request));
            }
            match Change::read(&method, params) {
                Some(Ok(change)) => {
                    self.shared.bump();
                    self.shared.send(Message::Change(change));
                }
                Some(Err(e)) => eprintln!("sr-lsp: ignoring {method} with malformed params: {e}"),
                None => {}
            }
            return Box::pin(self.inner.call(request));
        }
        let generation = self.shared.generation();
        let shared = self.shared.clone();
        let future = self.inner.call(request);
        let slot = raw::Slot::default();
        let raw = shared.raw.is_some().then(|| slot.clone());
        Box::pin(async move {
            let response = match raw {
                Some(slot) => raw::scope(slot, future).await?,
                None => future.await?,
            };
            let stale = shared.generation() != generation && position_bearing(&method);
            let answer = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
            Ok(match response {
                Some(response) if stale && response.is_ok() => {
                    Some(Response::from_error(response.id().clone(), Error::content_modified()))
                }
                Some(response) if response.is_ok() => match (answer, &shared.raw) {
                    (Some(bytes), Some(raw)) => Some(Response::from_ok(response.id().clone(), raw.file(bytes))),
                    _ => Some(response),
                },
                other => other,
            })
        })
    }
}
