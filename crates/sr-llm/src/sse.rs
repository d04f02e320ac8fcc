//! Server-sent events framing: bytes in, `event:`/`data:` records out.
//!
//! Our own small parser rather than a crate: every provider needs exact control
//! of `[DONE]`, `event:` names and errors inside a 200 stream, and chunks may
//! split lines (and UTF-8 characters) anywhere.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub(crate) event: Option<String>,
    pub(crate) data: String,
}

#[derive(Debug, Default)]
pub(crate) struct SseParser {
    buffer: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
}

impl SseParser {
    /// Feeds a chunk, pushing every event it completes.
    pub(crate) fn push(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), String> {
        self.buffer.extend_from_slice(chunk);
        let mut start = 0;
        while let Some(newline) = self.buffer[start..].iter().position(|&b| b == b'\n') {
            let end = start + newline;
            let line = self.buffer[start..end].strip_suffix(b"\r").unwrap_or(&self.buffer[start..end]);
            let line = std::str::from_utf8(line).map_err(|_| "an event-stream line is not UTF-8".to_owned())?;
            let line = line.to_owned();
            start = end + 1;
            self.line(&line, out);
        }
        self.buffer.drain(..start);
        Ok(())
    }

    /// Ends the input: a last line without a newline and an event without its
    /// blank line are still delivered, as lenient servers end streams that way.
    pub(crate) fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), String> {
        if !self.buffer.is_empty() {
            self.push(b"\n", out)?;
        }
        self.line("", out);
        Ok(())
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                out.push(SseEvent { event: self.event.take(), data });
            }
            self.event = None;
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "event" => self.event = Some(value.to_owned()),
            _ => {}
        }
    }
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
    fn invalid_utf8_is_an_error() {
        let mut parser = SseParser::default();
        let err = parser.push(b"data: \xff\xfe\n\n", &mut Vec::new()).unwrap_err();
        assert!(err.contains("UTF-8"));
    }
}
