//! Protocol torture for the real `sr-dap` binary: every kind of malformed
//! input an editor, a proxy or an attacker can send, each followed by a valid
//! request that must still be answered; the end of stdin; the flags.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;

struct Adapter(common::Process);

impl Adapter {
    fn start() -> Adapter {
        Adapter(common::Process::spawn(None, &[]))
    }

    async fn send_raw(&mut self, bytes: &[u8]) {
        self.0.write_raw(bytes).await;
    }

    async fn next(&mut self) -> Value {
        self.0.next().await
    }

    /// The next response; any message before it must be an event.
    async fn response(&mut self) -> Value {
        loop {
            let message = self.next().await;
            if message["type"] == "response" {
                return message;
            }
            assert_eq!(message["type"], "event", "{message}");
        }
    }

    /// `threads` with `seq` must be answered with the (empty) list of threads.
    async fn still_serving(&mut self, seq: i64) {
        self.send_raw(&frame(&json!({"seq": seq, "type": "request", "command": "threads"}).to_string())).await;
        let reply = self.response().await;
        assert_eq!(
            (&reply["request_seq"], &reply["command"], &reply["success"]),
            (&json!(seq), &json!("threads"), &json!(true)),
            "after an attack: {reply}"
        );
        assert!(reply["body"]["threads"].is_array(), "{reply}");
    }
}

fn frame(body: &str) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

#[tokio::test]
async fn malformed_messages_are_answered_or_skipped_and_serving_goes_on() {
    let mut dap = Adapter::start();
    let mut seq = 100;
    dap.send_raw(&frame(r#"{"seq": 1, "type": "request", "command": "initialize", "arguments": {}}"#)).await;
    let init = dap.response().await;
    assert_eq!(
        (init["success"].clone(), init["body"]["supportsConfigurationDoneRequest"].clone()),
        (json!(true), json!(true))
    );

    // Nothing that could be answered: skipped, and serving goes on.
    let skipped: Vec<Vec<u8>> = vec![
        frame("{not json"),
        frame("[1, 2]"),
        frame("\"x\""),
        frame("{}"),
        frame(r#"{"arguments": {}}"#),
        frame(r#"{"seq": 5, "type": "response", "request_seq": 1, "command": "runInTerminal", "success": true}"#),
        frame(r#"{"seq": 6, "type": "event", "event": "x"}"#),
        b"garbage without a colon\r\n\r\n".to_vec(),
        b"Content-Type: application/json\r\n\r\n".to_vec(),
        b"Content-Length: -5\r\n\r\n".to_vec(),
        format!("X-Long: {}\r\n\r\n", "a".repeat(100_000)).into_bytes(),
    ];
    for bytes in skipped {
        dap.send_raw(&bytes).await;
        seq += 1;
        dap.still_serving(seq).await;
    }

    // Meant as requests but malformed: an error response to each.
    let refused = [
        (r#"{"seq": 7, "command": "threads"}"#, 7, "threads", "a request needs \"type\": \"request\""),
        (r#"{"seq": 8, "type": "request"}"#, 8, "", "a request needs a \"command\" string"),
        (r#"{"type": "request", "command": "threads"}"#, 0, "threads", "a request needs an integer \"seq\""),
        (
            r#"{"seq": 9, "type": "request", "command": "frobnicate"}"#,
            9,
            "frobnicate",
            "sr-dap does not handle the request 'frobnicate'",
        ),
        (r#"{"seq": 10, "type": "request", "command": "evaluate", "arguments": 3}"#, 10, "evaluate", ""),
    ];
    for (body, request_seq, command, message) in refused {
        dap.send_raw(&frame(body)).await;
        let reply = dap.response().await;
        assert_eq!(
            (&reply["request_seq"], &reply["command"], &reply["success"]),
            (&json!(request_seq), &json!(command), &json!(false)),
            "{body}: {reply}"
        );
        let text = reply["message"].as_str().unwrap_or_else(|| panic!("no message: {reply}"));
        assert!(!text.is_empty() && text.starts_with(message), "{body}: {reply}");
        seq += 1;
        dap.still_serving(seq).await;
    }

    // Framing: Content-Type with and without charset, lowercase names.
    let threads = |seq: i64| json!({"seq": seq, "type": "request", "command": "threads"}).to_string();
    for header in ["Content-Type: application/vscode-jsonrpc; charset=utf-8", "Content-Type: application/json"] {
        seq += 1;
        let body = threads(seq);
        dap.send_raw(format!("{header}\r\nContent-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).await;
        assert_eq!(dap.response().await["request_seq"], seq, "{header}");
    }
    seq += 1;
    let body = threads(seq);
    dap.send_raw(format!("content-length: {}\r\ncontent-type: application/json\r\n\r\n{body}", body.len()).as_bytes())
        .await;
    assert_eq!(dap.response().await["request_seq"], seq);

    // A length over the limit, then a valid message right after the bogus body.
    seq += 1;
    let mut bytes = b"Content-Length: 99999999999\r\n\r\n{\"seq\": 1}".to_vec();
    bytes.extend(frame(&threads(seq)));
    dap.send_raw(&bytes).await;
    assert_eq!(dap.response().await["request_seq"], seq, "after an oversized length");

    // A body shorter than its length, then a valid message: only the short
    // message is lost.
    seq += 1;
    let short = r#"{"seq": 2, "type": "req"#;
    let mut bytes = format!("Content-Length: {}\r\n\r\n{short}", short.len() + 40).into_bytes();
    bytes.extend(frame(&threads(seq)));
    dap.send_raw(&bytes).await;
    assert_eq!(dap.response().await["request_seq"], seq, "after a short body");

    // Lone surrogates, escaped and raw, in a request's arguments: replaced,
    // and the request is answered.
    seq += 1;
    let escaped = format!(
        r#"{{"seq": {seq}, "type": "request", "command": "evaluate", "arguments": {{"expression": "\ud800 + 1"}}}}"#
    );
    dap.send_raw(&frame(&escaped)).await;
    let reply = dap.response().await;
    assert_eq!((reply["request_seq"].clone(), reply["success"].clone()), (json!(seq), json!(false)), "{reply}");
    seq += 1;
    let mut raw = format!(r#"{{"seq": {seq}, "type": "request", "command": "setFunctionBreakpoints", "arguments": {{"breakpoints": [{{"name": "a"#).into_bytes();
    raw.extend_from_slice(b"\xed\xa0\x80\"}]}}");
    let mut bytes = format!("Content-Length: {}\r\n\r\n", raw.len()).into_bytes();
    bytes.extend(raw);
    dap.send_raw(&bytes).await;
    let reply = dap.response().await;
    assert_eq!((reply["request_seq"].clone(), reply["success"].clone()), (json!(seq), json!(true)), "{reply}");
    assert_eq!(reply["body"]["breakpoints"].as_array().map(Vec::len), Some(1), "{reply}");
    seq += 1;
    dap.still_serving(seq).await;

    // The end of stdin ends the adapter promptly, with exit code 0.
    let started = Instant::now();
    let status = dap.0.close().await;
    assert_eq!(status.code(), Some(0));
    assert!(started.elapsed() < Duration::from_secs(2), "exit took {:?}", started.elapsed());
}

#[test]
fn version_help_and_unknown_flags() {
    let run = |arg: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_sr-dap")).arg(arg).stdin(Stdio::null()).output().unwrap()
    };
    let version = run("--version");
    assert!(version.status.success());
    assert_eq!(String::from_utf8_lossy(&version.stdout), format!("sr-dap {}\n", env!("CARGO_PKG_VERSION")));
    for flag in ["--help", "-h"] {
        let help = run(flag);
        assert!(help.status.success());
        assert!(
            String::from_utf8_lossy(&help.stdout).contains("usage: sr-dap [--stdio | --version | --help]"),
            "{flag}"
        );
    }
    let unknown = run("--frobnicate");
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("unknown argument '--frobnicate'"));
    assert!(unknown.stdout.is_empty());
}
