//! The seam for tool side effects: tools run live, run and are recorded to a
//! cassette, or are served from one (no side effect at all). Cassettes are the
//! JSON-lines files `sr-llm` writes model exchanges to; tool results are lines
//! of kind `tool`, and the run's identity a line of kind `meta`.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use sr_llm::Cassette;

use crate::tools::{Tool, ToolError};

pub const TOOL_KIND: &str = "tool";
/// Written before a tool runs, so that a call cut off by a crash is known.
pub const TOOL_START_KIND: &str = "tool_start";
pub const META_KIND: &str = "meta";

/// The tools of an MCP server, and its warning the first time they are asked for.
pub type McpTools = (Vec<Arc<dyn Tool>>, Option<String>);

/// How tool calls reach the world.
pub trait ToolGate: Send + Sync {
    fn call<'a>(&'a self, tool: &'a dyn Tool, args: Value) -> BoxFuture<'a, Result<Value, ToolError>>;

    /// The tools an MCP `tool` definition provides, its server connected on
    /// first use; with the server's warning the first time it is asked (it
    /// could not be reached, or, replayed, could not be when recorded).
    fn mcp_tools<'a>(&'a self, name: &'a str) -> BoxFuture<'a, McpTools>;

    /// Warnings for the start of a run.
    fn mcp_warnings(&self) -> Vec<String>;
}

/// Tools run for real; with a cassette, each result is also recorded.
pub struct LiveTools {
    pub cassette: Option<Arc<Cassette>>,
    pub mcp: Arc<crate::mcp::McpHub>,
}

impl ToolGate for LiveTools {
    fn call<'a>(&'a self, tool: &'a dyn Tool, args: Value) -> BoxFuture<'a, Result<Value, ToolError>> {
        async move {
            let Some(cassette) = &self.cassette else { return tool.call(args).await };
            let name = tool.name();
            if let Err(e) = cassette.append(&json!({"kind": TOOL_START_KIND, "name": name, "args": args})) {
                return Err(ToolError(format!("cannot record the tool call: {e}")));
            }
            let result = tool.call(args.clone()).await;
            let entry = match &result {
                Ok(value) => json!({"kind": TOOL_KIND, "name": name, "args": args, "result": value}),
                Err(e) => json!({"kind": TOOL_KIND, "name": name, "args": args, "error": e.0}),
            };
            if let Err(e) = cassette.append(&entry) {
                return Err(ToolError(format!("cannot record the tool result: {e}")));
            }
            result
        }
        .boxed()
    }

    fn mcp_tools<'a>(&'a self, name: &'a str) -> BoxFuture<'a, McpTools> {
        self.mcp.use_tools(name).boxed()
    }

    fn mcp_warnings(&self) -> Vec<String> {
        self.mcp.notices()
    }
}

/// Tool results served from a cassette; a call that was not recorded fails
/// loudly instead of touching the world.
pub struct ReplayedTools {
    queues: Mutex<HashMap<String, VecDeque<Result<Value, String>>>>,
    /// Calls that started and have no result: the process died during them.
    in_doubt: Mutex<HashMap<String, usize>>,
    mcp: Arc<crate::mcp::McpHub>,
}

impl ReplayedTools {
    pub fn from_cassette(text: &str, mcp: Arc<crate::mcp::McpHub>) -> Result<ReplayedTools, String> {
        let mut queues: HashMap<String, VecDeque<Result<Value, String>>> = HashMap::new();
        let mut started: HashMap<String, usize> = HashMap::new();
        for (_, entry) in sr_llm::cassette_entries(text, TOOL_KIND).map_err(|e| e.to_string())? {
            let key = key(entry["name"].as_str().unwrap_or_default(), &entry["args"]);
            let outcome = match entry.get("error").and_then(Value::as_str) {
                Some(error) => Err(error.to_string()),
                None => Ok(entry.get("result").cloned().unwrap_or(Value::Null)),
            };
            queues.entry(key).or_default().push_back(outcome);
        }
        for (_, entry) in sr_llm::cassette_entries(text, TOOL_START_KIND).map_err(|e| e.to_string())? {
            *started.entry(key(entry["name"].as_str().unwrap_or_default(), &entry["args"])).or_default() += 1;
        }
        let in_doubt = started
            .into_iter()
            .filter_map(|(key, n)| Some((key.clone(), n.checked_sub(queues.get(&key).map_or(0, VecDeque::len))?)))
            .filter(|(_, n)| *n > 0)
            .collect();
        Ok(ReplayedTools { queues: Mutex::new(queues), in_doubt: Mutex::new(in_doubt), mcp })
    }
}

impl ReplayedTools {
    /// Whether a call with `key` was cut off; the first time it is asked, yes.
    fn take_in_doubt(&self, key: &str) -> bool {
        let mut in_doubt = self.in_doubt.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match in_doubt.get_mut(key) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }
}

/// Replayed calls get the recorded arguments back from the recorded model
/// replies, so the text of the arguments identifies a call.
fn key(name: &str, args: &Value) -> String {
    format!("{name} {args}")
}

impl ToolGate for ReplayedTools {
    fn call<'a>(&'a self, tool: &'a dyn Tool, args: Value) -> BoxFuture<'a, Result<Value, ToolError>> {
        let name = tool.name();
        let served = self
            .queues
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get_mut(&key(&name, &args))
            .and_then(VecDeque::pop_front);
        let outcome = match served {
            Some(Ok(value)) => Ok(value),
            Some(Err(error)) => Err(ToolError(error)),
            None => Err(ToolError(format!("replay: no recorded result for tool '{name}' with arguments {args}"))),
        };
        std::future::ready(outcome).boxed()
    }

    fn mcp_tools<'a>(&'a self, name: &'a str) -> BoxFuture<'a, McpTools> {
        self.mcp.use_tools(name).boxed()
    }

    fn mcp_warnings(&self) -> Vec<String> {
        self.mcp.notices()
    }
}

/// The identity of a recorded run, so that a replay reproduces its events.
/// A journal's entry also has `answers`: the human answers a resumed run is given.
pub fn meta_entry(invocation_id: &str, workload: &str, input: &str) -> Value {
    json!({"kind": META_KIND, "invocation_id": invocation_id, "workload": workload, "input": input})
}

/// The message and human answers of the last run a journal holds.
pub fn recorded_input(text: &str) -> Option<(String, Vec<String>)> {
    let entries = sr_llm::cassette_entries(text, META_KIND).ok()?;
    let (_, last) = entries.last()?;
    let answers = serde_json::from_value(last["answers"].clone()).unwrap_or_default();
    Some((last["input"].as_str()?.to_string(), answers))
}

/// The invocation id a cassette was recorded with.
pub fn recorded_invocation(text: &str) -> Option<String> {
    let entries = sr_llm::cassette_entries(text, META_KIND).ok()?;
    entries.first().and_then(|(_, e)| e["invocation_id"].as_str().map(str::to_string))
}

/// A resumed run: answers recorded in the journal are served again (nothing
/// completed runs twice); the first request the journal does not have, and
/// every one after it, goes to the live provider.
pub struct Resumed {
    pub journal: sr_llm::Replayer,
    pub live: Arc<dyn sr_llm::Provider>,
}

impl sr_llm::Provider for Resumed {
    fn chat(&self, request: sr_llm::ChatRequest) -> sr_llm::ChatStream {
        use futures::StreamExt;
        let mut replayed = self.journal.chat(request.clone());
        let live = self.live.clone();
        futures::stream::once(async move {
            match replayed.next().await {
                Some(Err(sr_llm::LlmError::NotRecorded { .. })) => live.chat(request),
                Some(first) => futures::stream::once(std::future::ready(first)).chain(replayed).boxed(),
                None => futures::stream::empty().boxed(),
            }
        })
        .flatten()
        .boxed()
    }
}

/// Tools of a resumed run: recorded results first, then live calls.
pub struct ResumedTools {
    pub journal: ReplayedTools,
    pub live: LiveTools,
}

impl ToolGate for ResumedTools {
    fn call<'a>(&'a self, tool: &'a dyn Tool, args: Value) -> BoxFuture<'a, Result<Value, ToolError>> {
        async move {
            let name = tool.name();
            let key = key(&name, &args);
            let served = self
                .journal
                .queues
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .get_mut(&key)
                .and_then(VecDeque::pop_front);
            match served {
                Some(Ok(value)) => Ok(value),
                Some(Err(error)) => Err(ToolError(error)),
                None if self.journal.take_in_doubt(&key) => {
                    // It may have taken effect: never run it twice. The answer
                    // is journaled, so a later resume serves it as well.
                    let error = format!(
                        "the call of '{name}' with {args} was cut off when the run was interrupted; it is not repeated \
                         because it may already have taken effect: check its effect before calling it again"
                    );
                    if let Some(cassette) = &self.live.cassette {
                        let entry = json!({"kind": TOOL_KIND, "name": name, "args": args, "error": error});
                        let start = json!({"kind": TOOL_START_KIND, "name": name, "args": args});
                        cassette
                            .append(&start)
                            .and_then(|()| cassette.append(&entry))
                            .map_err(|e| ToolError(format!("cannot record the tool result: {e}")))?;
                    }
                    Err(ToolError(error))
                }
                None => self.live.call(tool, args).await,
            }
        }
        .boxed()
    }

    fn mcp_tools<'a>(&'a self, name: &'a str) -> BoxFuture<'a, McpTools> {
        self.live.mcp_tools(name)
    }

    fn mcp_warnings(&self) -> Vec<String> {
        self.live.mcp_warnings()
    }
}
