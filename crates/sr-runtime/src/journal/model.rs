//! Model exchanges through the journal: served as recorded (the reply's
//! events, its error, or — for an exchange the live run cancelled — what it
//! had sent and then nothing, so the timeout or cancellation strikes again),
//! or made live and written when the reply ends or is dropped.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::stream::{self, Stream, StreamExt};
use serde_json::{Value, json};
use sr_llm::{CASSETTE_VERSION, ChatEvent, ChatRequest, ChatResponse, ChatStream, LLM_KIND, LlmError, Provider};

use super::pausing::InFlight;
use super::{Decision, Divergence, Effect, EffectAt, Journal, JournalError, Mode};

impl Journal {
    /// The reply to `request`, made at `at`: from the journal, or from `live`.
    pub fn chat(
        &self,
        at: &EffectAt,
        request: &ChatRequest,
        live: &Arc<dyn Provider>,
    ) -> Result<ChatStream, Divergence> {
        let normalized = sr_llm::normalize(request);
        match self.decide(at) {
            Decision::Serve(Effect::Model { request: recorded, events, error, cancelled, .. }) => {
                if *recorded != normalized {
                    return Err(request_divergence(recorded, &normalized));
                }
                // A resumed run asks again for what the live run cancelled
                // (it never reached the run), unless the block it was in
                // finished there: the sibling's failure that cancelled it is
                // served, and cancels it again. In a block under way, it
                // waits for that failure first ([`super::siblings`]).
                if *cancelled && self.mode != Mode::Replay && !self.recorded.block_finished(&at.thread) {
                    let Some(settled) = self.siblings_settled(&at.thread) else {
                        return Ok(self.live_chat(at, request, normalized, live.as_ref()));
                    };
                    let pending = self.pending(at, normalized);
                    let (calls, at, live, request) = (self.calls.clone(), at.clone(), live.clone(), request.clone());
                    let asked = async move {
                        settled.await;
                        match super::pausing::admit(&calls, &at, "") {
                            Some(in_flight) => record(live.chat(request), pending, in_flight),
                            None => stream::pending().boxed(),
                        }
                    };
                    return Ok(stream::once(asked).flatten().boxed());
                }
                let items: Vec<Result<ChatEvent, LlmError>> =
                    events.iter().cloned().map(Ok).chain(error.clone().map(Err)).collect();
                let served = stream::iter(items);
                Ok(match cancelled {
                    true => served.chain(stream::once(self.parked(&at.thread))).boxed(),
                    false => served.boxed(),
                })
            }
            Decision::Serve(other) => Err(Divergence(format!(
                "the run sends a request to model `{}` where the journal recorded {}",
                request.model,
                other.describe()
            ))),
            Decision::Missing => Err(self.missing(at, &format!("a request to model `{}`", request.model))),
            Decision::Live => Ok(self.live_chat(at, request, normalized, live)),
        }
    }

    /// From now on the reply at `at` is `response` (a debugger's edit): the
    /// thread forks there, and the exchange is journaled with this reply, so
    /// that going back and forth in the fork keeps it.
    pub fn replace_reply(
        &self,
        at: &EffectAt,
        request: &ChatRequest,
        response: &ChatResponse,
    ) -> Result<(), JournalError> {
        self.fork(&at.thread, at.n)?;
        if !self.writes() {
            return Ok(());
        }
        let mut events: Vec<ChatEvent> = Vec::new();
        if !response.text.is_empty() {
            events.push(ChatEvent::TextDelta(response.text.clone()));
        }
        events.extend(response.tool_calls.iter().cloned().map(ChatEvent::ToolCall));
        events.push(ChatEvent::Usage(response.usage));
        events.push(ChatEvent::Finished { reason: response.finish_reason.clone() });
        self.write(&json!({
            "kind": LLM_KIND, "version": CASSETTE_VERSION, "at": &*at.thread, "n": at.n, "step": self.take_step(),
            "request": sr_llm::normalize(request), "events": events,
        }))
    }

    /// Once the run pauses, no request is sent: the stream waits for the
    /// `parallel` block to cancel it ([`super::pausing`]).
    fn live_chat(&self, at: &EffectAt, request: &ChatRequest, normalized: Value, live: &dyn Provider) -> ChatStream {
        let Some(in_flight) = self.admit(at, "") else { return stream::pending().boxed() };
        let inner = live.chat(request.clone());
        record(inner, self.pending(at, normalized), in_flight)
    }

    /// The start of the journal line of the exchange at `at`, and where it
    /// goes, when the journal writes.
    fn pending(&self, at: &EffectAt, normalized: Value) -> Option<(Value, Arc<sr_llm::Cassette>)> {
        let writer = self.writer.as_ref()?;
        let head = json!({
            "kind": LLM_KIND, "version": CASSETTE_VERSION, "at": &*at.thread, "n": at.n, "step": self.take_step(),
            "request": normalized,
        });
        Some((head, writer.cassette.clone()))
    }
}

/// `inner`, journaled as `pending` says (when it says), counted in flight
/// until then.
fn record(inner: ChatStream, pending: Option<(Value, Arc<sr_llm::Cassette>)>, in_flight: InFlight) -> ChatStream {
    let in_flight = Some(in_flight);
    Box::pin(Recording { inner, pending, in_flight, events: Vec::new(), ended: false })
}

/// What differs between the recorded request and the run's, for a divergence.
fn request_divergence(recorded: &Value, requested: &Value) -> Divergence {
    const SHOWN: usize = 4;
    let differences = sr_llm::differences(recorded, requested);
    let mut message =
        format!("the request to model `{}` differs from the journal's at:", requested["model"].as_str().unwrap_or("?"));
    for difference in differences.iter().take(SHOWN) {
        message.push_str(&format!("\n  {difference}"));
    }
    if differences.len() > SHOWN {
        message.push_str(&format!("\n  … and {} more", differences.len() - SHOWN));
    }
    Divergence(message)
}

/// Writes its exchange when the reply finishes or fails, or, marked
/// `cancelled`, when the run drops it before that.
struct Recording {
    inner: ChatStream,
    pending: Option<(Value, Arc<sr_llm::Cassette>)>,
    /// Until the exchange ends.
    in_flight: Option<InFlight>,
    events: Vec<ChatEvent>,
    ended: bool,
}

impl Recording {
    fn write(&mut self, error: Option<&LlmError>, cancelled: bool) -> Result<(), LlmError> {
        let _ended = self.in_flight.take();
        let Some((mut entry, cassette)) = self.pending.take() else { return Ok(()) };
        entry["events"] = serde_json::to_value(std::mem::take(&mut self.events)).expect("events always serialize");
        if let Some(error) = error {
            entry["error"] = serde_json::to_value(error).expect("errors always serialize");
        }
        if cancelled {
            entry["cancelled"] = json!(true);
        }
        cassette.append(&entry)
    }
}

impl Stream for Recording {
    type Item = Result<ChatEvent, LlmError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.ended {
            return Poll::Ready(None);
        }
        let item = match self.inner.poll_next_unpin(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(item) => item,
        };
        Poll::Ready(match item {
            Some(Ok(event)) => {
                self.events.push(event.clone());
                match event {
                    // Nothing follows `Finished`: the exchange is complete even
                    // if the run stops polling now.
                    ChatEvent::Finished { .. } => match self.write(None, false) {
                        Ok(()) => Some(Ok(event)),
                        Err(err) => Some(Err(err)),
                    },
                    event => Some(Ok(event)),
                }
            }
            Some(Err(err)) => {
                self.ended = true;
                // The provider's error matters more than a failed write of it.
                let _ = self.write(Some(&err), false);
                Some(Err(err))
            }
            None => {
                self.ended = true;
                self.write(None, false).err().map(Err)
            }
        })
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        // Nobody is left to report a failed write to.
        let _ = self.write(None, true);
    }
}

/// A provider whose every request is an effect of one thread of the journal
/// (an evaluation's judge, which is no thread of the run).
pub struct JournaledProvider {
    pub journal: Arc<Journal>,
    pub thread: Arc<str>,
    pub live: Arc<dyn Provider>,
    next: std::sync::atomic::AtomicU32,
}

impl JournaledProvider {
    pub fn new(journal: Arc<Journal>, thread: &str, live: Arc<dyn Provider>) -> JournaledProvider {
        JournaledProvider { journal, thread: thread.into(), live, next: Default::default() }
    }
}

impl Provider for JournaledProvider {
    fn chat(&self, request: ChatRequest) -> ChatStream {
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let at = EffectAt { thread: self.thread.clone(), n };
        match self.journal.chat(&at, &request, &self.live) {
            Ok(stream) => stream,
            Err(divergence) => {
                stream::once(async move { Err(LlmError::NotRecorded { message: divergence.0 }) }).boxed()
            }
        }
    }
}
