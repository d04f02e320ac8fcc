//! The legacy HTTP+SSE transport (MCP 2024-11-05), which rmcp does not ship:
//! a GET opens an event stream whose first `endpoint` event names the URL to
//! POST JSON-RPC messages to; the server's messages arrive on the stream.

use std::io;

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{ACCEPT, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, Url};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use sr_llm::sse::{SseError, SseEvent, events};

use crate::error::ConnectError;

pub(crate) struct SseTransport {
    http: Client,
    endpoint: Url,
    headers: HeaderMap,
    events: BoxStream<'static, Result<SseEvent, SseError>>,
}

impl SseTransport {
    /// Opens the event stream and waits for the endpoint to post to.
    pub(crate) async fn connect(
        url: &str,
        headers: &[(HeaderName, HeaderValue)],
    ) -> Result<SseTransport, ConnectError> {
        let url = Url::parse(url)?;
        let headers: HeaderMap = headers.iter().cloned().collect();
        let http = Client::new();
        let response = http
            .get(url.clone())
            .headers(headers.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(ConnectError::Stream)?;
        if !response.status().is_success() {
            return Err(ConnectError::Refused(response.status()));
        }
        let mut events = events(response.bytes_stream());
        let endpoint = loop {
            match events.next().await {
                Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => break endpoint(&url, &event.data)?,
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(ConnectError::BadStream(e)),
                None => return Err(ConnectError::NoEndpoint),
            }
        };
        Ok(SseTransport { http, endpoint, headers, events })
    }
}

/// The URL messages go to, on the stream's own origin: the headers carry
/// credentials, and a server must not redirect them elsewhere.
fn endpoint(stream: &Url, data: &str) -> Result<Url, ConnectError> {
    let data = data.trim();
    let endpoint = stream.join(data).map_err(|source| ConnectError::Endpoint { data: data.to_string(), source })?;
    if endpoint.origin() != stream.origin() {
        return Err(ConnectError::OtherOrigin { endpoint: endpoint.to_string(), stream: stream.to_string() });
    }
    Ok(endpoint)
}

impl Transport<RoleClient> for SseTransport {
    type Error = io::Error;

    fn send(&mut self, item: ClientJsonRpcMessage) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let request = self.http.post(self.endpoint.clone()).headers(self.headers.clone()).json(&item);
        async move {
            let response = request.send().await.map_err(io::Error::other)?;
            match response.status() {
                status if status.is_success() => Ok(()),
                status => Err(io::Error::other(format!("the server refused a message: HTTP {status}"))),
            }
        }
    }

    /// The next message; events that are not JSON-RPC messages are skipped,
    /// and a broken stream ends the connection.
    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let event = self.events.next().await?.ok()?;
            if matches!(event.event.as_deref(), None | Some("message"))
                && let Ok(message) = serde_json::from_str(&event.data)
            {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        self.events = futures::stream::empty().boxed();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_resolve_against_the_stream_and_stay_on_its_origin() {
        let stream = Url::parse("http://127.0.0.1:3001/sse").unwrap();
        assert_eq!(
            endpoint(&stream, "/message?sessionId=a1\n").unwrap().as_str(),
            "http://127.0.0.1:3001/message?sessionId=a1"
        );
        assert_eq!(endpoint(&stream, "http://127.0.0.1:3001/m").unwrap().as_str(), "http://127.0.0.1:3001/m");
        assert_eq!(
            endpoint(&stream, "http://evil.example/m").unwrap_err().to_string(),
            "the endpoint http://evil.example/m is not on the origin of http://127.0.0.1:3001/sse"
        );
    }
}
