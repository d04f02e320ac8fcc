//! How much of one model reply is taken: a reply over a limit fails as soon
//! as it passes it, a stream is read no further, and nothing past the limit is
//! held.

use std::io;

use serde_json::Value;

use crate::types::{MAX_TOOL_ARGUMENTS, push_arguments};
use crate::{ChatEvent, ToolCall};

/// The most text one reply may carry (the longest answers models give are a
/// few hundred KiB).
pub const MAX_REPLY_TEXT: usize = 4 << 20;

/// The most tool-call arguments one reply may carry in all, as JSON text; each
/// call counts at most [`MAX_TOOL_ARGUMENTS`] and one byte, what is held of it.
pub const MAX_REPLY_TOOL_ARGUMENTS: usize = 16 << 20;

/// The most tool calls one reply may make.
pub const MAX_REPLY_TOOL_CALLS: usize = 1024;

/// The longest body of a reply that is not streamed.
pub const MAX_REPLY_BODY: usize = 32 << 20;

/// The events a decoder makes of one reply, and how much of the limits the
/// reply has used so far.
#[derive(Debug, Default)]
pub(crate) struct Out {
    /// Made since the owner last took them.
    pub(crate) events: Vec<ChatEvent>,
    text: usize,
    arguments: usize,
    calls: usize,
}

impl Out {
    /// A text delta; empty text makes none.
    pub(crate) fn text(&mut self, text: &str) -> Result<(), String> {
        if text.is_empty() {
            return Ok(());
        }
        self.text += text.len();
        if self.text > MAX_REPLY_TEXT {
            return Err(format!(
                "the reply has more than {} MiB of text, the limit for one model reply; reading stopped there",
                MAX_REPLY_TEXT >> 20
            ));
        }
        self.events.push(ChatEvent::TextDelta(text.to_owned()));
        Ok(())
    }

    /// Counts a tool call the reply begins.
    pub(crate) fn begin_call(&mut self) -> Result<(), String> {
        self.calls += 1;
        if self.calls > MAX_REPLY_TOOL_CALLS {
            return Err(format!(
                "the reply has more than {MAX_REPLY_TOOL_CALLS} tool calls, the limit for one model reply; \
                 reading stopped there"
            ));
        }
        Ok(())
    }

    /// Appends a fragment of streamed arguments to `raw` (see
    /// [`push_arguments`]), counting what is kept.
    pub(crate) fn arguments(&mut self, raw: &mut String, fragment: &str) -> Result<(), String> {
        let before = raw.len();
        push_arguments(raw, fragment);
        self.count_arguments(raw.len() - before)
    }

    /// Counts arguments that arrived whole, as a JSON value.
    pub(crate) fn object_arguments(&mut self, arguments: &Value) -> Result<(), String> {
        self.count_arguments(json_len(arguments).min(MAX_TOOL_ARGUMENTS + 1))
    }

    fn count_arguments(&mut self, len: usize) -> Result<(), String> {
        self.arguments += len;
        if self.arguments > MAX_REPLY_TOOL_ARGUMENTS {
            return Err(format!(
                "the reply's tool calls have more than {} MiB of arguments in all, the limit for one model reply; \
                 reading stopped there",
                MAX_REPLY_TOOL_ARGUMENTS >> 20
            ));
        }
        Ok(())
    }

    /// A complete tool call, already counted.
    pub(crate) fn call(&mut self, call: ToolCall) {
        self.events.push(ChatEvent::ToolCall(call));
    }

    /// Usage or the finish, which no limit counts.
    pub(crate) fn push(&mut self, event: ChatEvent) {
        self.events.push(event);
    }
}

/// The length of a value as JSON text, without writing the text.
pub(crate) fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` to a sink that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn text_past_the_limit_is_an_error_naming_it() {
        let mut out = Out::default();
        let piece = "é".repeat(1 << 10);
        let mut sent = 0;
        let err = loop {
            match out.text(&piece) {
                Ok(()) => sent += piece.len(),
                Err(err) => break err,
            }
        };
        assert_eq!(sent, MAX_REPLY_TEXT, "all of the limit is allowed");
        assert!(err.contains("more than 4 MiB of text"), "{err}");
        assert_eq!(out.events.len(), MAX_REPLY_TEXT / piece.len(), "nothing past the limit is held");
        assert_eq!(Out::default().text(""), Ok(()));
    }

    #[test]
    fn arguments_count_what_is_held_across_calls() {
        let mut out = Out::default();
        // A call far over its own limit counts only the part held of it.
        let mut huge = String::new();
        for _ in 0..16 {
            out.arguments(&mut huge, &"x".repeat(1 << 20)).unwrap();
        }
        assert_eq!(out.arguments, MAX_TOOL_ARGUMENTS + 1);
        out.object_arguments(&json!({"content": "y".repeat(8 << 20)})).unwrap();
        out.object_arguments(&json!({"a": 1})).unwrap();
        assert_eq!(out.arguments, 2 * (MAX_TOOL_ARGUMENTS + 1) + 7);
        let mut calls = vec![String::new(); 3];
        let err = calls
            .iter_mut()
            .find_map(|raw| (0..5).find_map(|_| out.arguments(raw, &"z".repeat(1 << 20)).err()))
            .unwrap();
        assert!(err.contains("more than 16 MiB of arguments in all"), "{err}");
        assert_eq!(json_len(&json!({"a": [1, "é"]})), json!({"a": [1, "é"]}).to_string().len());
    }

    #[test]
    fn calls_past_the_limit_are_an_error() {
        let mut out = Out::default();
        for _ in 0..MAX_REPLY_TOOL_CALLS {
            out.begin_call().unwrap();
        }
        let err = out.begin_call().unwrap_err();
        assert!(err.contains("more than 1024 tool calls"), "{err}");
    }
}
