//! The servers a program defines, each connected on first use, and their
//! listings recorded and replayed.

use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use indexmap::IndexMap;
use serde_json::{Value, json};
use sr_llm::{Cassette, LlmError};

#[cfg(feature = "client")]
use crate::connect;
use crate::error::RecordingError;
#[cfg(feature = "client")]
use crate::error::{ConnectError, DefinitionError};
#[cfg(feature = "client")]
use crate::live::{self, Live};
#[cfg(feature = "client")]
use crate::server::Server;
use crate::tool::{McpTool, Source};
use crate::{Definition, MCP_NOTICE_KIND, MCP_TOOLS_KIND, Options, Spec};

/// The MCP servers a program defines, connected on first use.
#[derive(Default)]
pub struct Hub {
    servers: IndexMap<String, Entry>,
    options: Options,
    /// The values of the `${env:…}` variables the servers use.
    secrets: Vec<String>,
    /// Warnings for the start of a run (variables too short to be secret).
    notices: Vec<String>,
    /// Where listings are recorded as servers are connected.
    recording: std::sync::Mutex<Option<Arc<Cassette>>>,
}

/// One server: not used yet, or its tools, or closed.
struct Entry {
    state: tokio::sync::Mutex<State>,
    /// Whether a run was shown the server's warning (at its first use).
    announced: std::sync::atomic::AtomicBool,
}

impl Entry {
    fn new(state: State) -> Entry {
        Entry { state: tokio::sync::Mutex::new(state), announced: Default::default() }
    }
}

enum State {
    /// The server as resolved (or why it cannot be).
    #[cfg(feature = "client")]
    Unused(Result<Server, (String, DefinitionError)>),
    /// Connected, or failed to.
    Ready(Listing),
    Closed,
}

/// One server's tools, or why it has none.
#[derive(Default)]
struct Listing {
    tools: Vec<Arc<McpTool>>,
    warning: Option<String>,
    #[cfg(feature = "client")]
    client: Option<Arc<connect::Client>>,
}

impl Hub {
    /// The servers `definitions` name, with `${env:VAR}` read from `env`;
    /// nothing is connected yet. A later definition of a name replaces an earlier one.
    pub fn new(
        definitions: impl IntoIterator<Item = (String, Definition)>,
        options: &Options,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> Hub {
        let mut hub = Hub { options: options.clone(), ..Hub::default() };
        for (name, definition) in definitions {
            let state = hub.resolve(&name, &definition, env);
            hub.servers.insert(name, Entry::new(state));
        }
        hub
    }

    #[cfg(feature = "client")]
    fn resolve(&mut self, name: &str, definition: &Definition, env: &(dyn Fn(&str) -> Option<String> + Sync)) -> State {
        let resolved = Server::resolve(name, definition, env);
        if let Ok(server) = &resolved {
            self.secrets.extend(server.secrets.values().iter().cloned());
            self.notices.extend(server.secrets.too_short.iter().map(|var| too_short(var)));
        }
        State::Unused(resolved.map_err(|e| (definition.url.clone(), e)))
    }

    /// Without a client every server is unavailable from the start.
    #[cfg(not(feature = "client"))]
    fn resolve(
        &mut self,
        name: &str,
        definition: &Definition,
        _env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> State {
        State::Ready(Listing::failed(name, &definition.url, "this build has no MCP client"))
    }

    /// Connects to the servers `definitions` name, all at once, reading
    /// `${env:VAR}` from the process environment.
    pub async fn connect(definitions: impl IntoIterator<Item = (String, Definition)>, options: &Options) -> Hub {
        Hub::connect_with_env(definitions, options, &|name| std::env::var(name).ok()).await
    }

    /// Like [`Hub::connect`], reading `${env:VAR}` from `env`: every server
    /// is connected, all at once.
    pub async fn connect_with_env(
        definitions: impl IntoIterator<Item = (String, Definition)>,
        options: &Options,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> Hub {
        let hub = Hub::new(definitions, options, env);
        join_all(hub.servers.keys().map(|name| hub.ensure(name))).await;
        hub
    }

    /// The hub a recorded run had: the same tools, no connections.
    pub fn from_recording(text: &str) -> Result<Hub, RecordingError> {
        let mut hub = Hub::default();
        for (line, entry) in sr_llm::cassette_entries(text, MCP_TOOLS_KIND)? {
            let bad = |what: &'static str| RecordingError::Listing { line, what };
            let server = entry["server"].as_str().ok_or_else(|| bad("no server"))?;
            let mut tools: Vec<Arc<McpTool>> = Vec::new();
            for tool in entry["tools"].as_array().map(Vec::as_slice).unwrap_or_default() {
                let name = tool["name"].as_str().ok_or_else(|| bad("a tool without a name"))?;
                let description = tool["description"].as_str().unwrap_or_default();
                let parameters = tool["parameters"].clone();
                let spec = Spec { name: name.to_string(), description: description.to_string(), parameters };
                tools.push(Arc::new(McpTool { spec, source: Source::Listed }));
            }
            let warning = entry["warning"].as_str().map(str::to_string);
            // A resumed run's journal may list a server again: the first listing is the run's.
            let listing = Listing {
                tools,
                warning,
                #[cfg(feature = "client")]
                client: None,
            };
            hub.servers.entry(server.to_string()).or_insert(Entry::new(State::Ready(listing)));
        }
        for (_, entry) in sr_llm::cassette_entries(text, MCP_NOTICE_KIND)? {
            if let Some(message) = entry["message"].as_str()
                && !hub.notices.iter().any(|n| n == message)
            {
                hub.notices.push(message.to_string());
            }
        }
        Ok(hub)
    }

    /// Whether the hub has the server defined as `name` (a recorded hub:
    /// whether the recording lists it).
    pub fn has(&self, name: &str) -> bool {
        self.servers.contains_key(name)
    }

    /// Records the listings to `cassette`, for [`Hub::from_recording`]:
    /// those of servers connected so far now, the others when they connect.
    pub fn record(&self, cassette: Arc<Cassette>) -> Result<(), LlmError> {
        for message in &self.notices {
            cassette.append(&json!({"kind": MCP_NOTICE_KIND, "message": message}))?;
        }
        for (server, entry) in &self.servers {
            if let Ok(state) = entry.state.try_lock()
                && let State::Ready(listing) = &*state
            {
                cassette.append(&listing_entry(server, listing))?;
            }
        }
        *self.recording.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(cassette);
        Ok(())
    }

    /// The tools of the server defined as `name`, connecting it if this is
    /// its first use; with the server's warning the first time it is asked.
    pub async fn use_tools(&self, name: &str) -> (Vec<Arc<McpTool>>, Option<String>) {
        let Some(entry) = self.servers.get(name) else { return (Vec::new(), None) };
        self.ensure(name).await;
        let first = !entry.announced.swap(true, std::sync::atomic::Ordering::Relaxed);
        let state = entry.state.lock().await;
        match &*state {
            State::Ready(listing) => (listing.tools.clone(), if first { listing.warning.clone() } else { None }),
            _ => (Vec::new(), None),
        }
    }

    /// Connects the server `name` unless it was.
    #[cfg(feature = "client")]
    async fn ensure(&self, name: &str) {
        let Some(entry) = self.servers.get(name) else { return };
        let mut state = entry.state.lock().await;
        let State::Unused(resolved) = &*state else { return };
        // The state changes only once the listing is made: a caller dropped
        // while the server starts (a `parallel` branch a sibling's failure
        // cancels) leaves it unused for the next caller, not closed.
        let (url, listing) = match resolved {
            Ok(server) => (server.url.clone(), open(server, &self.options).await),
            Err((url, e)) => (url.clone(), Listing::failed(name, url, &e.to_string())),
        };
        let recording = self.recording.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        *state = State::Ready(match recording.map(|cassette| cassette.append(&listing_entry(name, &listing))) {
            // Without its listing the recording would replay without these tools.
            Some(Err(e)) => Listing::failed(name, &url, &format!("cannot record its tools: {e}")),
            _ => listing,
        });
    }

    /// Without a client every server is ready (and unavailable) from the start.
    /// Async as the client build's is.
    #[cfg(not(feature = "client"))]
    #[allow(clippy::unused_async)]
    async fn ensure(&self, _name: &str) {}

    /// The tools of the server defined as `name`, if it is connected.
    pub fn tools(&self, name: &str) -> Vec<Arc<McpTool>> {
        match self.servers.get(name).and_then(|entry| entry.state.try_lock().ok()) {
            Some(state) => match &*state {
                State::Ready(listing) => listing.tools.clone(),
                _ => Vec::new(),
            },
            None => Vec::new(),
        }
    }

    /// Why some connected servers have no tools, and the run's notices; free of secrets.
    pub fn warnings(&self) -> Vec<String> {
        let listed = self.servers.values().filter_map(|entry| match &*entry.state.try_lock().ok()? {
            State::Ready(listing) => listing.warning.clone(),
            _ => None,
        });
        self.notices.iter().cloned().chain(listed).collect()
    }

    /// Warnings for the start of a run: variables too short to be kept secret.
    pub fn notices(&self) -> Vec<String> {
        self.notices.clone()
    }

    /// Adds the values of the variables the servers use to `redactor`.
    pub fn add_secrets(&self, redactor: &sr_llm::Redactor) {
        for value in &self.secrets {
            let _ = redactor.add(value);
        }
    }

    /// Closes every connected session gracefully, each within the connect
    /// timeout; the hub has no tools afterwards.
    pub async fn close(&self) {
        join_all(self.servers.values().map(|entry| async move {
            let mut state = entry.state.lock().await;
            if let State::Ready(listing) = std::mem::replace(&mut *state, State::Closed) {
                listing.close(self.options.connect_timeout).await;
            }
        }))
        .await;
    }
}

#[cfg(feature = "client")]
fn too_short(var: &str) -> String {
    format!(
        "environment variable '{var}' has a value shorter than {} characters: it is not treated as a secret \
         and may appear in events, sessions and recordings",
        sr_llm::Redactor::MIN_LEN
    )
}

fn listing_entry(server: &str, listing: &Listing) -> Value {
    let mut entry = json!({"kind": MCP_TOOLS_KIND, "server": server});
    match &listing.warning {
        Some(warning) => entry["warning"] = json!(warning),
        None => {
            let tools =
                listing.tools.iter().map(|tool| tool.spec()).map(
                    |spec| json!({"name": spec.name, "description": spec.description, "parameters": spec.parameters}),
                );
            entry["tools"] = Value::Array(tools.collect());
        }
    }
    entry
}

#[cfg(feature = "client")]
async fn open(server: &Server, options: &Options) -> Listing {
    let connected = match tokio::time::timeout(options.connect_timeout, connect::connect(server)).await {
        Ok(Ok(connected)) => connected,
        Ok(Err(e)) => return Listing::failed(&server.name, &server.url, &server.secrets.redact(&e.to_string())),
        Err(_) => {
            let e = ConnectError::Timeout { seconds: options.connect_timeout.as_secs_f64() };
            return Listing::failed(&server.name, &server.url, &e.to_string());
        }
    };
    let client = Arc::new(connected.client);
    let tools = connected.tools.iter().map(|listed| {
        let live = Live {
            remote: listed.name.to_string(),
            server: server.name.clone(),
            client: client.clone(),
            timeout: options.call_timeout,
            secrets: server.secrets.clone(),
        };
        Arc::new(McpTool { spec: live::spec(&server.name, listed), source: Source::Live(live) })
    });
    Listing { tools: tools.collect(), warning: None, client: Some(client) }
}

impl Listing {
    fn failed(name: &str, url: &str, error: &str) -> Listing {
        let warning = format!("MCP server '{name}' ({url}) is unavailable, so are its tools: {error}");
        Listing { warning: Some(warning), ..Listing::default() }
    }

    /// Closes the session gracefully within `timeout`.
    #[cfg(feature = "client")]
    async fn close(self, timeout: Duration) {
        let Some(client) = self.client else { return };
        drop(self.tools);
        match Arc::try_unwrap(client) {
            Ok(mut client) => {
                let _ = client.close_with_timeout(timeout).await;
            }
            // A tool still held elsewhere: stop the session without waiting.
            Err(client) => client.cancellation_token().cancel(),
        }
    }

    /// Async as the client build's is.
    #[cfg(not(feature = "client"))]
    #[allow(clippy::unused_async)]
    async fn close(self, _timeout: Duration) {}
}

/// Tool names and warnings only: connections hold secrets.
impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut map = f.debug_map();
        for (server, entry) in &self.servers {
            match entry.state.try_lock().as_deref() {
                Ok(State::Ready(Listing { warning: Some(warning), .. })) => map.entry(server, warning),
                Ok(State::Ready(listing)) => {
                    map.entry(server, &listing.tools.iter().map(|t| &t.spec().name).collect::<Vec<_>>())
                }
                #[cfg(feature = "client")]
                Ok(State::Unused(_)) => map.entry(server, &"not connected"),
                Ok(State::Closed) => map.entry(server, &"closed"),
                Err(_) => map.entry(server, &"connecting"),
            };
        }
        map.finish()
    }
}

#[cfg(all(test, not(feature = "client")))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn without_a_client_every_server_is_unavailable_and_recordings_still_list_tools() {
        let definition = Definition { url: "stdio:srv".into(), auth: None, options: Vec::new() };
        let hub = Hub::new([("s".to_string(), definition)], &Options::default(), &|_| None);
        let (tools, warning) = hub.use_tools("s").await;
        assert!(tools.is_empty());
        let expected = "MCP server 's' (stdio:srv) is unavailable, so are its tools: this build has no MCP client";
        assert_eq!(warning.as_deref(), Some(expected));

        let recorded = json!({"kind": MCP_TOOLS_KIND, "server": "s", "tools": [{"name": "s__t", "parameters": {}}]});
        let replayed = Hub::from_recording(&recorded.to_string()).unwrap();
        let (tools, warning) = replayed.use_tools("s").await;
        assert_eq!((tools.len(), warning), (1, None));
        assert!(tools[0].call(json!({})).await.unwrap_err().to_string().contains("only listed in the recording"));
    }
}
