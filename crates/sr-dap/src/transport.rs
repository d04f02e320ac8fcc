//! The base protocol: `Content-Length: N\r\n\r\n` followed by N bytes of JSON.
//! Reading never fails on bad input: a broken message is reported and skipped,
//! only the end of input (or an I/O error) ends the stream.

use std::io;

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Bodies larger than this are skipped unread.
const MAX_BODY: u64 = 64 << 20;
/// A header line longer than this is garbage.
const MAX_HEADER_LINE: u64 = 8 << 10;

/// What one read produced.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    Message(Value),
    /// A message that could not be read; the reason is for the log.
    Malformed(String),
}

/// Reads the next message; `None` at the end of input.
pub async fn read<R: AsyncBufRead + Unpin>(reader: &mut R) -> io::Result<Option<Incoming>> {
    let mut length: Option<u64> = None;
    let mut problem = None;
    let mut saw_header = false;
    loop {
        let mut line = Vec::new();
        let n = (&mut *reader).take(MAX_HEADER_LINE).read_until(b'\n', &mut line).await?;
        if n == 0 {
            return Ok(None);
        }
        if !line.ends_with(b"\n") && n as u64 == MAX_HEADER_LINE {
            // Skip the rest of an overlong line.
            let mut rest = Vec::new();
            reader.read_until(b'\n', &mut rest).await?;
            problem = Some("a header line is too long".to_string());
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if saw_header {
                break;
            }
            // Blank lines between messages are tolerated.
            continue;
        }
        saw_header = true;
        match text.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                match value.trim().parse::<u64>() {
                    Ok(n) => length = Some(n),
                    Err(_) => problem = Some(format!("bad Content-Length '{}'", value.trim())),
                }
            }
            Some(_) => {}
            None => problem = Some(format!("not a header: '{text}'")),
        }
    }
    let Some(length) = length else {
        return Ok(Some(Incoming::Malformed(problem.unwrap_or_else(|| "no Content-Length header".to_string()))));
    };
    if length > MAX_BODY {
        tokio::io::copy(&mut (&mut *reader).take(length), &mut tokio::io::sink()).await?;
        return Ok(Some(Incoming::Malformed(format!("a message of {length} bytes is too large"))));
    }
    let mut body = vec![0; length as usize];
    reader.read_exact(&mut body).await?;
    Ok(Some(match serde_json::from_slice(&body) {
        Ok(value) => Incoming::Message(value),
        Err(e) => Incoming::Malformed(format!("the body is not JSON: {e}")),
    }))
}

pub async fn write<W: AsyncWrite + Unpin>(writer: &mut W, message: &Value) -> io::Result<()> {
    let body = serde_json::to_vec(message).map_err(io::Error::other)?;
    writer.write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes()).await?;
    writer.write_all(&body).await?;
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn read_all(input: &[u8]) -> Vec<Incoming> {
        let mut reader = tokio::io::BufReader::new(input);
        let mut out = Vec::new();
        while let Some(message) = read(&mut reader).await.unwrap() {
            out.push(message);
        }
        out
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
            content-length: 2\r\nContent-Type: application/json\r\n\r\n{}\
            Content-Length: 99999999999\r\n\r\n{}";
        assert_eq!(
            read_all(input).await,
            vec![
                Incoming::Malformed("no Content-Length header".into()),
                Incoming::Malformed("the body is not JSON: key must be a string at line 1 column 2".into()),
                Incoming::Malformed("bad Content-Length 'nope'".into()),
                Incoming::Message(json!({})),
                Incoming::Malformed("a message of 99999999999 bytes is too large".into()),
            ]
        );
    }

    #[tokio::test]
    async fn a_truncated_body_is_an_error_not_a_panic() {
        let mut reader = tokio::io::BufReader::new(&b"Content-Length: 10\r\n\r\n{}"[..]);
        assert!(read(&mut reader).await.is_err());
    }
}
