//! Big answers serialised once, straight to bytes. tower-lsp-server turns every
//! result into a `serde_json::Value` tree before writing it, which for the
//! document symbols of the 9.2 MB benchmark file costs more time and memory than computing
//! them. Over stdio, [`crate::Ordered`] gives each request a [`Slot`]; a
//! handler that answers through [`answer`] serialises its result into it and
//! hands tower-lsp-server an empty default instead; `Ordered` then files the
//! bytes in [`RawAnswers`] and replaces the result with a short marker, which
//! the writer to the client ([`crate::gate::forward`]) swaps for the bytes.
//! Everything else about the request (lifecycle checks, `$/cancelRequest`,
//! `ContentModified`) is what tower-lsp-server and `Ordered` do for any other.
//! In process (no writer to swap markers) no slot is given and handlers
//! answer as usual.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;

/// Where one request's handler leaves its serialised result.
pub(crate) type Slot = Arc<Mutex<Option<Vec<u8>>>>;

tokio::task_local! {
    static SLOT: Slot;
}

/// Runs `future` (a request's handling) with `slot` to answer into.
pub(crate) async fn scope<F: Future>(slot: Slot, future: F) -> F::Output {
    SLOT.scope(slot, future).await
}

/// The slot of the request being handled, if it is answered raw. Read it in
/// the request's task, before moving to a blocking thread.
pub(crate) fn slot() -> Option<Slot> {
    SLOT.try_with(Slot::clone).ok()
}

/// `value` itself, or, when the request has a slot, `value` serialised into
/// it and an empty default in its place.
pub(crate) fn answer<T: Serialize + Default>(slot: Option<&Slot>, value: T) -> T {
    let Some(slot) = slot else { return value };
    match serde_json::to_vec(&value) {
        Ok(bytes) => {
            *slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(bytes);
            T::default()
        }
        Err(e) => {
            eprintln!("sr-lsp: cannot serialise an answer, sending it the slow way: {e}");
            value
        }
    }
}

/// An array answer serialised one element at a time, for answers whose
/// elements are made one at a time: they never all exist at once, as typed
/// values, next to their bytes. The bytes are what `serde_json::to_vec` of
/// the whole array makes.
pub(crate) struct Elements {
    bytes: Vec<u8>,
}

impl Elements {
    pub(crate) fn new() -> Elements {
        Elements { bytes: vec![b'['] }
    }

    pub(crate) fn push<T: Serialize>(&mut self, element: &T) -> serde_json::Result<()> {
        if self.bytes.len() > 1 {
            self.bytes.push(b',');
        }
        serde_json::to_writer(&mut self.bytes, element)
    }

    /// Files the array in `slot` as the request's answer.
    pub(crate) fn answer(mut self, slot: &Slot) {
        self.bytes.push(b']');
        *slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(self.bytes);
    }
}

/// Serialised answers waiting for the writer, by marker.
#[derive(Default)]
pub(crate) struct RawAnswers {
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, Vec<u8>>>,
}

/// How a marker starts (a NUL no real answer's string starts with).
const MARKER: &str = "\u{0}sr-lsp raw answer ";
/// The same, as it appears in the serialised response.
const MARKER_JSON: &[u8] = b"\"\\u0000sr-lsp raw answer ";
/// Longer responses are never markers: the writer skips them without a look.
const MAX_MARKER_RESPONSE: usize = 160;

impl RawAnswers {
    /// Files `bytes` and returns the marker to answer with instead.
    pub(crate) fn file(&self, bytes: Vec<u8>) -> Value {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        self.waiting.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(n, bytes);
        Value::String(format!("{MARKER}{n}"))
    }

    /// The response `body` stands for: `None` unless it is a marker's, else
    /// the whole response with the filed bytes as its result.
    pub(crate) fn expand(&self, body: &[u8]) -> Option<Vec<u8>> {
        if body.len() > MAX_MARKER_RESPONSE || !body.windows(MARKER_JSON.len()).any(|w| w == MARKER_JSON) {
            return None;
        }
        let response: Value = serde_json::from_slice(body).ok()?;
        let n: u64 = response.get("result")?.as_str()?.strip_prefix(MARKER)?.parse().ok()?;
        let result = self.waiting.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(&n)?;
        let id = serde_json::to_vec(response.get("id")?).ok()?;
        let mut head = b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec();
        head.extend_from_slice(&id);
        head.extend_from_slice(b",\"result\":");
        // In the result's own buffer: a second copy of a big answer would be
        // the biggest allocation of its request.
        let mut out = result;
        let len = out.len();
        out.reserve_exact(head.len() + 1);
        out.resize(len + head.len(), 0);
        out.copy_within(..len, head.len());
        out[..head.len()].copy_from_slice(&head);
        out.push(b'}');
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_marker_expands_once_into_its_answer_and_nothing_else_expands() {
        let raw = RawAnswers::default();
        let marker = raw.file(br#"[{"name":"a"}]"#.to_vec());
        let body = serde_json::to_vec(&json!({"jsonrpc": "2.0", "result": marker, "id": 7})).unwrap();
        let expanded = raw.expand(&body).expect("a marker");
        assert_eq!(
            serde_json::from_slice::<Value>(&expanded).unwrap(),
            json!({"jsonrpc": "2.0", "id": 7, "result": [{"name": "a"}]})
        );
        assert_eq!(raw.expand(&body), None, "a marker expands once");
        // A result that only looks like a filed marker is not one.
        let filed = raw.file(b"1".to_vec());
        for result in
            [json!("sr-lsp raw answer 1"), json!("\u{0}sr-lsp raw answer x"), json!([filed]), json!({"a": filed})]
        {
            let body = serde_json::to_vec(&json!({"jsonrpc": "2.0", "result": result, "id": 1})).unwrap();
            assert_eq!(raw.expand(&body), None, "{result}");
        }
    }

    #[test]
    fn elements_make_the_bytes_of_the_whole_array() {
        let element = |i: usize| json!({"name": format!("s{i}"), "children": (0..i % 3).collect::<Vec<_>>()});
        for n in [0, 1, 2, 100] {
            let mut elements = Elements::new();
            for i in 0..n {
                elements.push(&element(i)).unwrap();
            }
            let slot = Slot::default();
            elements.answer(&slot);
            let whole: Vec<Value> = (0..n).map(element).collect();
            assert_eq!(slot.lock().unwrap().take(), Some(serde_json::to_vec(&whole).unwrap()), "{n} elements");
        }
    }

    #[test]
    fn an_answer_expands_the_same_whatever_room_its_buffer_has() {
        let answer = br#"[{"name":"a"}]"#;
        for spare in [0, 1, 64] {
            let raw = RawAnswers::default();
            let mut bytes = Vec::with_capacity(answer.len() + spare);
            bytes.extend_from_slice(answer);
            let marker = raw.file(bytes);
            let body = serde_json::to_vec(&json!({"jsonrpc": "2.0", "result": marker, "id": "a\"b"})).unwrap();
            let expanded = raw.expand(&body).expect("a marker");
            assert_eq!(expanded, br#"{"jsonrpc":"2.0","id":"a\"b","result":[{"name":"a"}]}"#.to_vec(), "{spare}");
        }
    }

    #[tokio::test]
    async fn a_handler_answers_into_the_slot_of_its_request_only() {
        assert_eq!(answer(slot().as_ref(), vec![1, 2]), vec![1, 2], "no slot outside a request");
        let slot = Slot::default();
        let placeholder = scope(slot.clone(), async { answer(super::slot().as_ref(), vec![1, 2]) }).await;
        assert_eq!(placeholder, Vec::<i32>::new());
        assert_eq!(slot.lock().unwrap().take(), Some(b"[1,2]".to_vec()));
    }
}
