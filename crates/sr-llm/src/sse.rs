//! Server-sent events framing: bytes in, `event:`/`data:` records out. The one
//! parser of the workspace: the providers' streams and the MCP SSE transport
//! (`sr-runtime`) both read events with it.
//!
//! Our own small parser rather than a crate: every provider needs exact control
//! of `[DONE]`, `event:` names and errors inside a 200 stream, and chunks may
//! split lines (and UTF-8 characters) anywhere. A line or an event longer than
//! `MAX_EVENT_BYTES` is an error, so a server cannot make it buffer without end.

use std::collections::VecDeque;
use std::fmt::Display;

use bytes::Bytes;
use futures::stream::{BoxStream, Stream, StreamExt};

/// The longest line, and the most data one event may gather.
pub const MAX_EVENT_BYTES: usize = 16 << 20;

/// Why a byte stream is not an event stream, or stopped being one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error("an event-stream line is not UTF-8")]
    NotUtf8,
    #[error("an event-stream line is longer than {} MiB", MAX_EVENT_BYTES >> 20)]
    LineTooLong,
    #[error("an event's data is longer than {} MiB", MAX_EVENT_BYTES >> 20)]
    DataTooLong,
    /// The transport failed: its error, as it tells it.
    #[error("the event stream broke: {0}")]
    Broke(String),
}

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    /// How much of `buffer` holds no newline: searched already.
    scanned: usize,
    event: Option<String>,
    data: Option<String>,
}

impl SseParser {
    /// Feeds a chunk, pushing every event it completes.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        self.buffer.extend_from_slice(chunk);
        let mut start = 0;
        let mut from = self.scanned;
        while let Some(newline) = self.buffer[from..].iter().position(|&b| b == b'\n') {
            let end = from + newline;
            let line = self.buffer[start..end].strip_suffix(b"\r").unwrap_or(&self.buffer[start..end]);
            let line = std::str::from_utf8(line).map_err(|_| SseError::NotUtf8)?;
            let line = line.to_owned();
            start = end + 1;
            from = start;
            self.line(&line, out)?;
        }
        self.buffer.drain(..start);
        self.scanned = self.buffer.len();
        if self.buffer.len() > MAX_EVENT_BYTES {
            return Err(SseError::LineTooLong);
        }
        Ok(())
    }

    /// Ends the input: a last line without a newline and an event without its
    /// blank line are still delivered, as lenient servers end streams that way.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if !self.buffer.is_empty() {
            self.push(b"\n", out)?;
        }
        self.line("", out)
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                out.push(SseEvent { event: self.event.take(), data });
            }
            self.event = None;
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "data" => match &mut self.data {
                Some(data) => {
                    if data.len() + value.len() > MAX_EVENT_BYTES {
                        return Err(SseError::DataTooLong);
                    }
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "event" => self.event = Some(value.to_owned()),
            _ => {}
        }
        Ok(())
    }
}

/// The events of a byte stream, in order. A transport error or a bad line is
/// the last item; the end of the stream delivers an event left unterminated.
pub fn events<E: Display + Send + 'static>(
    bytes: impl Stream<Item = Result<Bytes, E>> + Send + 'static,
) -> BoxStream<'static, Result<SseEvent, SseError>> {
    struct State<E> {
        bytes: BoxStream<'static, Result<Bytes, E>>,
        parser: SseParser,
        ready: VecDeque<Result<SseEvent, SseError>>,
        ended: bool,
    }
    let state = State { bytes: bytes.boxed(), parser: SseParser::default(), ready: VecDeque::new(), ended: false };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(next) = state.ready.pop_front() {
                if next.is_err() {
                    state.ended = true;
                    state.ready.clear();
                }
                return Some((next, state));
            }
            if state.ended {
                return None;
            }
            let mut out = Vec::new();
            let parsed = match state.bytes.next().await {
                Some(Ok(chunk)) => state.parser.push(&chunk, &mut out),
                Some(Err(e)) => Err(SseError::Broke(e.to_string())),
                None => {
                    state.ended = true;
                    state.parser.finish(&mut out)
                }
            };
            state.ready.extend(out.into_iter().map(Ok));
            if let Err(message) = parsed {
                state.ready.push_back(Err(message));
            }
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_chunks(input: &[u8], size: usize) -> Vec<SseEvent> {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        for chunk in input.chunks(size) {
            parser.push(chunk, &mut out).unwrap();
        }
        parser.finish(&mut out).unwrap();
        out
    }

    fn event(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent { event: event.map(str::to_owned), data: data.to_owned() }
    }

    #[test]
    fn events_survive_any_chunking() {
        let input = "event: message_start\r\ndata: {\"a\":\"é\"}\r\n\r\n: keep-alive\n\ndata:x\ndata: y\nid: 7\n\ndata: [DONE]\n\n";
        let expected = vec![event(Some("message_start"), "{\"a\":\"é\"}"), event(None, "x\ny"), event(None, "[DONE]")];
        for size in 1..input.len() {
            assert_eq!(parse_in_chunks(input.as_bytes(), size), expected, "chunk size {size}");
        }
    }

    #[test]
    fn an_unterminated_last_event_is_delivered() {
        assert_eq!(parse_in_chunks(b"data: {}\n\ndata: last", 4), vec![event(None, "{}"), event(None, "last")]);
    }

    #[test]
    fn an_event_name_without_data_is_dropped() {
        assert_eq!(parse_in_chunks(b"event: ping\n\ndata: 1\n\n", 3), vec![event(None, "1")]);
    }

    #[test]
    fn an_endless_line_or_event_is_an_error() {
        let mut parser = SseParser::default();
        let chunk = vec![b'x'; 1 << 20];
        let errors: Vec<String> =
            (0..17).filter_map(|_| parser.push(&chunk, &mut Vec::new()).err().map(|e| e.to_string())).collect();
        assert_eq!(errors, ["an event-stream line is longer than 16 MiB"]);

        // Sixteen 1 MiB lines and their line breaks pass 16 MiB.
        let mut parser = SseParser::default();
        let line = format!("data: {}\n", "y".repeat(1 << 20));
        let first = (1..=16).find_map(|n| parser.push(line.as_bytes(), &mut Vec::new()).err().map(|e| (n, e)));
        assert_eq!(
            first.map(|(n, e)| (n, e.to_string())),
            Some((16, "an event's data is longer than 16 MiB".to_string()))
        );
    }

    /// A long line in small chunks is scanned once: rescanning the buffer on
    /// every chunk would take 32,768 scans of up to 2 MiB here, minutes, not
    /// milliseconds.
    #[test]
    fn a_long_line_in_small_chunks_is_scanned_once() {
        let line = format!("data: {}\n\n", "z".repeat(2 << 20));
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        for chunk in line.as_bytes().chunks(64) {
            parser.push(chunk, &mut out).unwrap();
        }
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data.len(), 2 << 20);
    }

    #[tokio::test]
    async fn a_byte_stream_becomes_events_then_its_error() {
        let chunks: Vec<Result<Bytes, String>> =
            vec![Ok(Bytes::from("data: a\n\nda")), Ok(Bytes::from("ta: b\n")), Err("reset".to_string())];
        let got: Vec<Result<SseEvent, SseError>> = events(futures::stream::iter(chunks)).collect().await;
        assert_eq!(got, [Ok(event(None, "a")), Err(SseError::Broke("reset".to_string()))]);
        assert_eq!(SseError::Broke("reset".to_string()).to_string(), "the event stream broke: reset");
        let chunks: Vec<Result<Bytes, String>> = vec![Ok(Bytes::from("event: endpoint\ndata: /m"))];
        let got: Vec<Result<SseEvent, SseError>> = events(futures::stream::iter(chunks)).collect().await;
        assert_eq!(got, [Ok(event(Some("endpoint"), "/m"))]);
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let mut parser = SseParser::default();
        let err = parser.push(b"data: \xff\xfe\n\n", &mut Vec::new()).unwrap_err();
        assert_eq!(err, SseError::NotUtf8);
        assert!(err.to_string().contains("UTF-8"));
    }
}
