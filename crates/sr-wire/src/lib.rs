//! The base protocol of LSP and DAP: a block of `Name: value` header lines,
//! a blank line, then `Content-Length` bytes of JSON.
//!
//! Reading never fails on bad input: a broken message is returned as
//! [`Incoming::Malformed`] and reading goes on; only the end of input or an
//! I/O error ends the stream. Header names are case-insensitive and headers
//! other than `Content-Length` (`Content-Type`, with or without charset) are
//! ignored. A length over [`MAX_BODY`] is refused without reading the body:
//! the reader resynchronises on the next line that starts a `Content-Length`
//! header, so a bogus length cannot swallow the messages after it. Bodies that
//! are not valid UTF-8, or hold `\u` escapes of lone surrogates, are repaired
//! with U+FFFD instead of being refused. A body that is not JSON but holds a
//! `Content-Length` header (its message was shorter than its length said, so
//! the body ran into the next message) is cut there and the rest read again
//! as the next message; a header that follows other text on its line (a
//! short body ending inside the next header) is read from where it starts.
//! So a short body swallows its own message, and the next one only when it
//! ends inside that one's header.
//! Memory for a body grows as its bytes arrive, not with the length claimed.

pub mod launch;
mod repair;

use std::io;

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The largest body read (64 MiB); larger ones are refused.
pub const MAX_BODY: u64 = 64 << 20;
/// A header line longer than this is garbage.
const MAX_HEADER_LINE: u64 = 8 << 10;

/// What one read produced.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    Message(Value),
    /// A message that could not be read. `parse_error` is true when a body
    /// was read but is not JSON (JSON-RPC's -32700); the text is for the log.
    Malformed {
        reason: String,
        parse_error: bool,
    },
}

impl Incoming {
    fn malformed(reason: impl Into<String>) -> Incoming {
        Incoming::Malformed { reason: reason.into(), parse_error: false }
    }
}

/// One frame as read, before its body is parsed.
#[derive(Debug, PartialEq)]
pub enum Frame {
    Body(Vec<u8>),
    /// Broken framing; the text is for the log.
    Malformed(String),
}

/// A reader of framed messages.
pub struct Reader<R> {
    inner: R,
    /// A header line read while resynchronising, to be parsed first.
    pending: Option<String>,
    /// Bytes given back after a short body, read before `inner`.
    replay: Vec<u8>,
    /// How much of `replay` was read.
    replayed: usize,
    /// How many bytes at the start of the last body came from `replay`.
    body_replayed: usize,
}

impl<R: AsyncBufRead + Unpin> Reader<R> {
    pub fn new(inner: R) -> Reader<R> {
        Reader { inner, pending: None, replay: Vec::new(), replayed: 0, body_replayed: 0 }
    }

    /// The next message; `None` at the end of input.
    pub async fn read(&mut self) -> io::Result<Option<Incoming>> {
        Ok(self.read_frame().await?.map(|frame| match frame {
            Frame::Body(mut body) => match repair::parse(&body) {
                Ok(value) => Incoming::Message(value),
                Err(e) => {
                    // Only bytes read for the first time are given back, so
                    // reading stays linear in the input.
                    let fresh = self.body_replayed.min(body.len());
                    if let Some(at) = find_header(&body[fresh..]) {
                        self.replay = body.split_off(fresh + at);
                        self.replayed = 0;
                    }
                    Incoming::Malformed { reason: format!("the body is not JSON: {e}"), parse_error: true }
                }
            },
            Frame::Malformed(reason) => Incoming::malformed(reason),
        }))
    }

    /// The next frame's body as sent, unparsed (for relaying messages that
    /// are known to be well-formed); `None` at the end of input.
    pub async fn read_frame(&mut self) -> io::Result<Option<Frame>> {
        if self.replayed == self.replay.len() {
            self.replay = Vec::new();
            self.replayed = 0;
        }
        let mut length: Option<u64> = None;
        let mut problem = None;
        let mut saw_header = false;
        loop {
            let line = match self.pending.take() {
                Some(line) => line,
                None => match self.line().await? {
                    Line::End => return Ok(None),
                    Line::TooLong => {
                        problem = Some("a header line is too long".to_string());
                        saw_header = true;
                        continue;
                    }
                    Line::Text(line) => line,
                },
            };
            if line.is_empty() {
                if saw_header {
                    break;
                }
                // Blank lines between messages are tolerated.
                continue;
            }
            saw_header = true;
            // A header right after the end of a body that was too short.
            let line = match find_header(line.as_bytes()) {
                Some(at) if at > 0 => line[at..].to_string(),
                _ => line,
            };
            match line.split_once(':') {
                Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                    match value.trim().parse::<u64>() {
                        Ok(n) => length = Some(n),
                        Err(_) => problem = Some(format!("bad Content-Length '{}'", value.trim())),
                    }
                }
                Some(_) => {}
                None => problem = Some(format!("not a header: '{}'", truncate(&line))),
            }
        }
        let Some(length) = length else {
            return Ok(Some(Frame::Malformed(problem.unwrap_or_else(|| "no Content-Length header".to_string()))));
        };
        if length > MAX_BODY {
            self.resynchronise().await?;
            return Ok(Some(Frame::Malformed(format!(
                "a message of {length} bytes is larger than the limit of {MAX_BODY} bytes"
            ))));
        }
        self.body_replayed = self.replay.len() - self.replayed;
        let mut body = Vec::with_capacity(length.min(1 << 16) as usize);
        self.source().take(length).read_to_end(&mut body).await?;
        if (body.len() as u64) < length {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the input ends inside a message"));
        }
        Ok(Some(Frame::Body(body)))
    }

    /// Skips input up to the next line that starts a `Content-Length`
    /// header, which is kept for the next read.
    async fn resynchronise(&mut self) -> io::Result<()> {
        loop {
            match self.line().await? {
                Line::End => return Ok(()),
                Line::TooLong => {}
                Line::Text(line) => {
                    // The previous body may end without a line break, right
                    // before the header: look for the header anywhere in the line.
                    let lower = line.to_ascii_lowercase();
                    if let Some(at) = lower.find("content-length:") {
                        self.pending = Some(line[at..].to_string());
                        return Ok(());
                    }
                }
            }
        }
    }

    /// One line without its line break; lines over the header limit are
    /// skipped to their end.
    async fn line(&mut self) -> io::Result<Line> {
        let mut line = Vec::new();
        let n = self.source().take(MAX_HEADER_LINE).read_until(b'\n', &mut line).await?;
        if n == 0 {
            return Ok(Line::End);
        }
        if !line.ends_with(b"\n") && n as u64 == MAX_HEADER_LINE {
            let mut rest = Vec::new();
            loop {
                rest.clear();
                let n = self.source().take(MAX_HEADER_LINE).read_until(b'\n', &mut rest).await?;
                if n == 0 || rest.ends_with(b"\n") {
                    break;
                }
            }
            return Ok(Line::TooLong);
        }
        let text = String::from_utf8_lossy(&line);
        Ok(Line::Text(text.trim_end_matches(['\r', '\n']).to_string()))
    }

    /// The input: what was given back, then `inner`.
    fn source(&mut self) -> Source<'_, R> {
        Source { replay: &self.replay, replayed: &mut self.replayed, inner: &mut self.inner }
    }
}

/// Where the first line that starts a `Content-Length` header begins in
/// `body` (the previous message may end without a line break before it).
fn find_header(body: &[u8]) -> Option<usize> {
    const HEADER: &[u8] = b"content-length:";
    body.windows(HEADER.len()).position(|w| w.eq_ignore_ascii_case(HEADER))
}

/// The bytes given back, then the inner reader.
struct Source<'a, R> {
    replay: &'a [u8],
    replayed: &'a mut usize,
    inner: &'a mut R,
}

impl<R: AsyncBufRead + Unpin> AsyncRead for Source<'_, R> {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        let this = self.get_mut();
        let rest = &this.replay[*this.replayed..];
        if rest.is_empty() {
            return std::pin::Pin::new(&mut *this.inner).poll_read(cx, buf);
        }
        let n = rest.len().min(buf.remaining());
        buf.put_slice(&rest[..n]);
        *this.replayed += n;
        std::task::Poll::Ready(Ok(()))
    }
}

impl<R: AsyncBufRead + Unpin> AsyncBufRead for Source<'_, R> {
    fn poll_fill_buf(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<&[u8]>> {
        let this = self.get_mut();
        if *this.replayed < this.replay.len() {
            return std::task::Poll::Ready(Ok(&this.replay[*this.replayed..]));
        }
        std::pin::Pin::new(&mut *this.inner).poll_fill_buf(cx)
    }

    fn consume(self: std::pin::Pin<&mut Self>, amount: usize) {
        let this = self.get_mut();
        if *this.replayed < this.replay.len() {
            *this.replayed += amount;
        } else {
            std::pin::Pin::new(&mut *this.inner).consume(amount);
        }
    }
}

enum Line {
    End,
    TooLong,
    Text(String),
}

fn truncate(text: &str) -> &str {
    match text.char_indices().nth(80) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// Writes one message with its `Content-Length` header and flushes.
pub async fn write<W: AsyncWrite + Unpin>(writer: &mut W, message: &Value) -> io::Result<()> {
    write_body(writer, &serde_json::to_vec(message).map_err(io::Error::other)?).await
}

/// Writes one already serialised body with its `Content-Length` header and flushes.
pub async fn write_body<W: AsyncWrite + Unpin>(writer: &mut W, body: &[u8]) -> io::Result<()> {
    writer.write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes()).await?;
    writer.write_all(body).await?;
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn read_all(input: &[u8]) -> Vec<Incoming> {
        let mut reader = Reader::new(tokio::io::BufReader::new(input));
        let mut out = Vec::new();
        while let Some(message) = reader.read().await.unwrap() {
            out.push(message);
        }
        out
    }

    fn malformed(reason: &str) -> Incoming {
        Incoming::malformed(reason)
    }

    #[tokio::test]
    async fn frames_round_trip() {
        let mut buffer = Vec::new();
        write(&mut buffer, &json!({"seq": 1, "command": "é"})).await.unwrap();
        write(&mut buffer, &json!({"seq": 2})).await.unwrap();
        assert!(buffer.starts_with(b"Content-Length: 24\r\n\r\n{"));
        assert_eq!(
            read_all(&buffer).await,
            vec![Incoming::Message(json!({"seq": 1, "command": "é"})), Incoming::Message(json!({"seq": 2}))]
        );
    }

    #[tokio::test]
    async fn broken_messages_are_skipped_and_reading_goes_on() {
        let input = b"Content-Type: x\r\n\r\n\
            Content-Length: 3\r\n\r\n{x}\
            Content-Length: nope\r\n\r\n\
            content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}\
            CONTENT-LENGTH:2\n\n[]";
        assert_eq!(
            read_all(input).await,
            vec![
                malformed("no Content-Length header"),
                Incoming::Malformed {
                    reason: "the body is not JSON: key must be a string at line 1 column 2".into(),
                    parse_error: true
                },
                malformed("bad Content-Length 'nope'"),
                Incoming::Message(json!({})),
                Incoming::Message(json!([])),
            ]
        );
    }

    #[tokio::test]
    async fn an_oversized_length_does_not_swallow_the_messages_after_it() {
        let input = b"Content-Length: 99999999999\r\n\r\n{\"big\": 1}\
            Content-Length: 2\r\n\r\n{}\
            Content-Length: 7\r\n\r\n{\"a\":1}";
        assert_eq!(
            read_all(input).await,
            vec![
                malformed("a message of 99999999999 bytes is larger than the limit of 67108864 bytes"),
                Incoming::Message(json!({})),
                Incoming::Message(json!({"a": 1})),
            ]
        );
    }

    #[tokio::test]
    async fn an_overlong_header_line_is_reported_and_skipped() {
        let mut input = "X: ".to_string() + &"a".repeat(100_000) + "\r\n\r\n";
        input.push_str("Content-Length: 2\r\n\r\n{}");
        assert_eq!(
            read_all(input.as_bytes()).await,
            vec![malformed("a header line is too long"), Incoming::Message(json!({}))]
        );
    }

    #[tokio::test]
    async fn lone_surrogates_and_invalid_utf8_become_replacement_characters() {
        let escaped = br#"{"t":"a\ud800b\udc00c\ud83d\ude00d\\ud800"}"#;
        let mut input = format!("Content-Length: {}\r\n\r\n", escaped.len()).into_bytes();
        input.extend_from_slice(escaped);
        let raw = b"{\"t\":\"x\xed\xa0\x80y\xffz\"}";
        input.extend_from_slice(format!("Content-Length: {}\r\n\r\n", raw.len()).as_bytes());
        input.extend_from_slice(raw);
        assert_eq!(
            read_all(&input).await,
            vec![
                Incoming::Message(json!({"t": "a\u{fffd}b\u{fffd}c😀d\\ud800"})),
                Incoming::Message(json!({"t": "x\u{fffd}\u{fffd}\u{fffd}y\u{fffd}z"})),
            ]
        );
    }

    #[tokio::test]
    async fn a_short_body_swallows_only_its_own_message() {
        let mut next = Vec::new();
        write(&mut next, &json!({"seq": 2, "command": "threads"})).await.unwrap();
        write(&mut next, &json!({"seq": 3})).await.unwrap();
        let short = br#"{"seq": 1, "comm"#;
        // The length says 30 bytes more than the body has: the body runs into
        // the next message's body. Also twice in a row, with lowercase names.
        for (header, times) in [("Content-Length", 1), ("content-length", 2)] {
            let mut input = Vec::new();
            for _ in 0..times {
                input.extend_from_slice(format!("{header}: {}\r\n\r\n", short.len() + 30).as_bytes());
                input.extend_from_slice(short);
            }
            input.extend_from_slice(&next);
            let read = read_all(&input).await;
            assert_eq!(read.len(), times + 2, "{read:?}");
            assert!(read[..times].iter().all(|m| matches!(m, Incoming::Malformed { parse_error: true, .. })));
            assert_eq!(
                read[times..],
                [Incoming::Message(json!({"seq": 2, "command": "threads"})), Incoming::Message(json!({"seq": 3}))]
            );
        }
        // The body ends inside the next header's name: that message is lost
        // too, and the one after it is read.
        let mut input = format!("Content-Length: {}\r\n\r\n", short.len() + 8).into_bytes();
        input.extend_from_slice(short);
        input.extend_from_slice(&next);
        let read = read_all(&input).await;
        assert_eq!(read.last(), Some(&Incoming::Message(json!({"seq": 3}))), "{read:?}");
        assert_eq!(read.iter().filter(|m| matches!(m, Incoming::Message(_))).count(), 1, "{read:?}");
    }

    #[tokio::test]
    async fn a_truncated_body_is_an_error_not_a_panic() {
        let mut reader = Reader::new(tokio::io::BufReader::new(&b"Content-Length: 10\r\n\r\n{}"[..]));
        assert!(reader.read().await.is_err());
    }
}
