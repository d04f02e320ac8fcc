//! The LLM provider layer of the StreetRace runtime.
//!
//! Everything the runtime says to a model goes through one seam, [`Provider`]:
//! `chat(ChatRequest) -> ChatStream`, a stream of [`ChatEvent`]s that yields
//! text deltas live, complete tool calls, then [`Usage`] and `Finished`.
//! Dropping the stream cancels the request. [`ChatResponse::collect`] folds a
//! stream into one reply. `chat` itself does no I/O; the stream does, when
//! polled inside a Tokio runtime.
//!
//! Implementations:
//! - protocol clients over reqwest: [`OpenAi`] (Chat Completions, also Ollama,
//!   vLLM, llama.cpp, LiteLLM, ...), [`Anthropic`] (Messages) and [`Gemini`]
//!   (generateContent), with retries and timeouts from [`HttpOptions`];
//! - [`Router`], which picks one of those from the model string's prefix and
//!   the environment;
//! - [`Cassette`], the JSON-lines file the runtime's journal is written to;
//! - with the `mock` feature, `mock::MockServer` is a local HTTP server that
//!   speaks the three wire protocols with scripted answers, for tests.
//!
//! # Models and environment
//!
//! | prefix | protocol | API key | base URL (default) |
//! |---|---|---|---|
//! | `openai/` | OpenAI | `OPENAI_API_KEY` | `OPENAI_BASE_URL`, `OPENAI_API_BASE` (`https://api.openai.com/v1`) |
//! | `anthropic/` | Anthropic | `ANTHROPIC_API_KEY` | `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_BASE` (`https://api.anthropic.com`) |
//! | `gemini/` | Gemini | `GEMINI_API_KEY`, `GOOGLE_API_KEY` | `GEMINI_BASE_URL`, `GEMINI_API_BASE` (`https://generativelanguage.googleapis.com`) |
//! | `ollama/`, `ollama_chat/` | OpenAI | optional `OLLAMA_API_KEY` | `OLLAMA_API_BASE` (`http://localhost:11434`; `/v1` is added) |
//! | `hosted_vllm/` | OpenAI | optional `HOSTED_VLLM_API_KEY` | `HOSTED_VLLM_API_BASE` (required) |
//! | `lm_studio/` | OpenAI | optional `LM_STUDIO_API_KEY` | `LM_STUDIO_API_BASE` (`http://localhost:1234/v1`) |
//! | `openrouter/` | OpenAI | `OPENROUTER_API_KEY` | `OPENROUTER_API_BASE` (`https://openrouter.ai/api/v1`) |
//! | `groq/` | OpenAI | `GROQ_API_KEY` | `GROQ_API_BASE` (`https://api.groq.com/openai/v1`) |
//! | `deepseek/` | OpenAI | `DEEPSEEK_API_KEY` | `DEEPSEEK_API_BASE` (`https://api.deepseek.com/v1`) |
//! | `mistral/` | OpenAI | `MISTRAL_API_KEY` | `MISTRAL_API_BASE` (`https://api.mistral.ai/v1`) |
//! | `xai/` | OpenAI | `XAI_API_KEY` | `XAI_API_BASE` (`https://api.x.ai/v1`) |
//!
//! Bare names starting `gpt-`, `chatgpt-`, `o1`, `o3`, `o4`, `claude-` or
//! `gemini-` go to OpenAI, Anthropic and Gemini as LiteLLM does. OpenAI-style
//! base URLs include the version (`.../v1`); Anthropic and Gemini ones do not.
//! A missing key is an [`LlmError::MissingEnv`] naming the variable, returned
//! by [`Router::resolve`] (and as the stream's only item by `chat`) before any
//! request is sent. Keys are held as [`ApiKey`], which never shows in `Debug`,
//! and are redacted from every message quoted back from a server.
//!
//! # Limits
//!
//! One reply may carry at most [`MAX_REPLY_TEXT`] of text,
//! [`MAX_REPLY_TOOL_ARGUMENTS`] of tool-call arguments in all,
//! [`MAX_REPLY_TOOL_CALLS`] calls and, not streamed, a [`MAX_REPLY_BODY`] body;
//! reading stops when one is passed and the stream ends with an
//! [`LlmError::Protocol`] naming it. Model ids are checked by
//! [`check_model_id`] before any request, and Gemini's is one escaped path
//! segment of its URL.
//!
//! # Retries and timeouts
//!
//! Connection failures, timeouts, HTTP 408/409/429/5xx and overload errors
//! inside a stream are retried with capped exponential backoff and jitter
//! ([`RetryPolicy`]), waiting what `retry-after-ms` or `Retry-After` (seconds or
//! HTTP date) ask for. Retries stop once any event reached the consumer: the
//! error is then returned, because the consumer may have shown partial output.
//! [`HttpOptions::timeout`] bounds the wait for a response head (and a whole
//! non-streamed body), [`HttpOptions::idle_timeout`] the silence between stream
//! chunks. The [`Sleeper`] is injectable so tests do not wait.
//!
//! # Cassettes
//!
//! A cassette is an append-only JSON-lines file ([`Cassette::create`] starts
//! one, [`Cassette::append_to`] adds to one, [`Cassette::append`] writes and
//! flushes a line, redacted and mirrored as the handle says) read back with
//! [`cassette_entries`]. The runtime's journal is one: model exchanges are
//! its lines of kind `"llm"` ([`LLM_KIND`]), whose `request` is the
//! [`ChatRequest`] as [`normalize`] makes it (object keys sorted, tool-call ids
//! renamed `call_0`, `call_1`, ... by first appearance, since providers invent
//! new ids on every run) and whose `events` are the [`ChatEvent`]s delivered.
//! [`differences`] says where a request differs from a recorded one, leaf by
//! leaf, for the runtime's divergence errors.

mod anthropic;
mod cassette;
mod error;
mod gemini;
mod http;
mod limits;
#[cfg(feature = "mock")]
pub mod mock;
mod model_id;
mod openai;
#[cfg(test)]
mod prefix;
mod price;
mod provider;
mod redact;
mod retry;
mod router;
mod secret;
pub mod sse;
mod types;

pub use crate::anthropic::Anthropic;
pub use crate::cassette::{CASSETTE_VERSION, Cassette, LLM_KIND, LineCopy, cassette_entries, differences, normalize};
pub use crate::error::LlmError;
pub use crate::gemini::Gemini;
pub use crate::http::{HttpClient, HttpOptions};
pub use crate::limits::{MAX_REPLY_BODY, MAX_REPLY_TEXT, MAX_REPLY_TOOL_ARGUMENTS, MAX_REPLY_TOOL_CALLS};
pub use crate::model_id::{MAX_MODEL_ID, check_model_id};
pub use crate::openai::OpenAi;
pub use crate::price::{Price, PriceTable};
pub use crate::provider::{ChatStream, Endpoint, Provider};
pub use crate::redact::{REDACTED, Redactor, TooShort};
pub use crate::retry::{RetryPolicy, Sleeper, TokioSleeper};
pub use crate::router::{Route, Router, bare_model_prefix};
pub use crate::secret::ApiKey;
pub use crate::types::{
    ChatEvent, ChatRequest, ChatResponse, FinishReason, MAX_TOOL_ARGUMENTS, Message, Part, Role, ToolCall, ToolResult,
    ToolSpec, Usage,
};
