//! A provider that answers from a script instead of a model, for this and
//! other crates' tests and benchmarks (the `testing` feature; not in the
//! shipped binaries). Each request goes to the first rule whose matcher
//! accepts it; a rule answers with text or tool calls, once or every time.

use std::sync::Mutex;
use std::time::Duration;

use futures::{StreamExt, stream};
use serde_json::Value;
use sr_llm::{ChatEvent, ChatRequest, ChatStream, FinishReason, LlmError, Provider, Role, ToolCall, Usage};

/// What a scripted model says.
#[derive(Debug, Clone)]
pub enum Reply {
    Text(String),
    /// Tool calls: (name, arguments).
    Calls(Vec<(String, Value)>),
    Error(String),
}

type Matcher = Box<dyn Fn(&ChatRequest) -> bool + Send + Sync>;
type Responder = Box<dyn Fn(&ChatRequest) -> Reply + Send + Sync>;

struct Rule {
    matcher: Matcher,
    replies: Vec<Reply>,
    /// Repeat the last reply forever.
    repeat: bool,
    used: usize,
}

/// Scripted answers, by request.
#[derive(Default)]
pub struct ScriptedProvider {
    rules: Mutex<Vec<Rule>>,
    /// Answers what no rule answers.
    responder: Option<Responder>,
    delay: Option<Duration>,
    calls: Mutex<u64>,
    /// Every request, in order.
    requests: Mutex<Vec<ChatRequest>>,
}

impl ScriptedProvider {
    pub fn new() -> ScriptedProvider {
        ScriptedProvider::default()
    }

    /// Every reply waits this long (to test concurrency and timeouts).
    pub fn with_delay(mut self, delay: Duration) -> ScriptedProvider {
        self.delay = Some(delay);
        self
    }

    /// Answers requests `matcher` accepts with `replies`, one per request, in order.
    pub fn on(
        self,
        matcher: impl Fn(&ChatRequest) -> bool + Send + Sync + 'static,
        replies: Vec<Reply>,
    ) -> ScriptedProvider {
        self.rules.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(Rule {
            matcher: Box::new(matcher),
            replies,
            repeat: false,
            used: 0,
        });
        self
    }

    /// Like `on`, and the last reply answers every further request.
    pub fn always(
        self,
        matcher: impl Fn(&ChatRequest) -> bool + Send + Sync + 'static,
        reply: Reply,
    ) -> ScriptedProvider {
        self.rules.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(Rule {
            matcher: Box::new(matcher),
            replies: vec![reply],
            repeat: true,
            used: 0,
        });
        self
    }

    /// How many requests were answered.
    pub fn calls(&self) -> u64 {
        *self.calls.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    fn answer(&self, request: &ChatRequest) -> Result<Reply, String> {
        let mut rules = self.rules.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        for rule in rules.iter_mut() {
            if rule.used < rule.replies.len() || rule.repeat {
                if !(rule.matcher)(request) {
                    continue;
                }
                let reply = rule.replies[rule.used.min(rule.replies.len() - 1)].clone();
                rule.used += 1;
                *self.calls.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) += 1;
                return Ok(reply);
            }
        }
        if let Some(responder) = &self.responder {
            *self.calls.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) += 1;
            return Ok(responder(request));
        }
        Err(format!(
            "the script has no answer for a request to {} whose last message is {:?}",
            request.model,
            request.messages.last().map(|m| m.text()).unwrap_or_default()
        ))
    }
}

/// Answers every request: with a value of the requested schema when the request
/// asks for one (natively or in its text), else with `text`.
pub fn conforming(text: &str) -> ScriptedProvider {
    let text = text.to_string();
    ScriptedProvider {
        responder: Some(Box::new(move |r| Reply::Text(conforming_reply(r, &text)))),
        ..ScriptedProvider::default()
    }
}

fn conforming_reply(request: &ChatRequest, text: &str) -> String {
    let schema = request.response_schema.clone().or_else(|| {
        let prompt =
            request.system.clone().unwrap_or_default() + &request.messages.iter().map(|m| m.text()).collect::<String>();
        let start = prompt.find("this schema:\n```json\n")? + "this schema:\n```json\n".len();
        let end = prompt[start..].find("```")?;
        serde_json::from_str(&prompt[start..start + end]).ok()
    });
    match schema {
        Some(schema) => instance_of(&schema).to_string(),
        None => text.to_string(),
    }
}

/// A small value that satisfies `schema`.
pub fn instance_of(schema: &Value) -> Value {
    let ty = match &schema["type"] {
        Value::Array(types) => types.iter().find(|t| *t != "null").cloned().unwrap_or(Value::Null),
        other => other.clone(),
    };
    match ty.as_str() {
        Some("object") => {
            let mut object = serde_json::Map::new();
            if let Some(properties) = schema["properties"].as_object() {
                for (name, property) in properties {
                    object.insert(name.clone(), instance_of(property));
                }
            }
            Value::Object(object)
        }
        Some("array") => Value::Array(vec![instance_of(&schema["items"])]),
        Some("integer") => Value::from(1),
        Some("number") => Value::from(1.5),
        Some("boolean") => Value::Bool(true),
        Some("string") => Value::String("text".into()),
        _ => Value::Null,
    }
}

/// Matches requests whose system prompt (an agent's instruction) contains `text`.
pub fn instruction_contains(text: &str) -> impl Fn(&ChatRequest) -> bool + Send + Sync + 'static {
    let text = text.to_string();
    move |r| r.system.as_deref().is_some_and(|s| s.contains(&text))
}

/// Matches requests whose last user message contains `text`.
pub fn user_says(text: &str) -> impl Fn(&ChatRequest) -> bool + Send + Sync + 'static {
    let text = text.to_string();
    move |r| r.messages.iter().rev().find(|m| m.role == Role::User).is_some_and(|m| m.text().contains(&text))
}

/// Matches requests whose last message carries tool results.
pub fn after_tool_results() -> impl Fn(&ChatRequest) -> bool + Send + Sync + 'static {
    |r| r.messages.last().is_some_and(|m| m.role == Role::Tool)
}

impl Provider for ScriptedProvider {
    fn chat(&self, request: ChatRequest) -> ChatStream {
        self.requests.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(request.clone());
        let events: Vec<Result<ChatEvent, LlmError>> = match self.answer(&request) {
            Ok(Reply::Text(text)) => {
                // Split into a few deltas, as a streaming model would send them.
                let mut events: Vec<_> = split_deltas(&text).into_iter().map(|d| Ok(ChatEvent::TextDelta(d))).collect();
                events.push(Ok(ChatEvent::Usage(Usage {
                    input_tokens: 10,
                    output_tokens: text.len() as u64 / 4 + 1,
                    ..Usage::default()
                })));
                events.push(Ok(ChatEvent::Finished { reason: FinishReason::Stop }));
                events
            }
            Ok(Reply::Calls(calls)) => {
                let mut events: Vec<_> = calls
                    .into_iter()
                    .enumerate()
                    .map(|(i, (name, args))| Ok(ChatEvent::ToolCall(ToolCall::new(format!("call_{i}"), name, args))))
                    .collect();
                events.push(Ok(ChatEvent::Usage(Usage { input_tokens: 10, output_tokens: 5, ..Usage::default() })));
                events.push(Ok(ChatEvent::Finished { reason: FinishReason::ToolCalls }));
                events
            }
            Ok(Reply::Error(message)) | Err(message) => {
                vec![Err(LlmError::Api {
                    provider: "scripted".into(),
                    status: Some(500),
                    code: None,
                    message,
                    retry_after_ms: None,
                })]
            }
        };
        match self.delay {
            Some(delay) => {
                stream::once(tokio::time::sleep(delay)).flat_map(move |_| stream::iter(events.clone())).boxed()
            }
            None => stream::iter(events).boxed(),
        }
    }
}

fn split_deltas(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for (i, word) in text.split_inclusive(' ').enumerate() {
        current.push_str(word);
        if i % 4 == 3 {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() || out.is_empty() {
        out.push(current);
    }
    out
}
