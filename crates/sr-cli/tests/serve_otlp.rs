//! `sr serve --otlp`: each run's spans reach an OTLP/HTTP collector in one
//! trace per run, whose id the run's answer carries (and `--trace-url` turns
//! into a link); without `--otlp`, a run has neither.
#![allow(clippy::unwrap_used)]
#![cfg(feature = "otlp")]

mod serving;

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use serde_json::json;
use serving::{Serve, temp, wait_until};
use sr_llm::mock::{MockReply, MockServer};

/// A flow that asks a human between two model calls: two attempts, one run.
const PAUSING: &str = include_str!("fixtures/pausing.sr");

type Received = Arc<Mutex<Vec<Span>>>;

/// A collector on 127.0.0.1 that keeps every span posted to `/v1/traces`
/// (OTLP/HTTP protobuf, one request per connection); its base URL.
fn collector(received: Received) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let (mut request_line, mut length) = (String::new(), 0);
            reader.read_line(&mut request_line).unwrap();
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap();
                if header.trim().is_empty() {
                    break;
                }
                if let Some((name, value)) = header.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            assert!(request_line.starts_with("POST /v1/traces "), "{request_line}");
            let request = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
            let spans = request.resource_spans.into_iter().flat_map(|r| r.scope_spans).flat_map(|s| s.spans);
            received.lock().unwrap().extend(spans);
            stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").unwrap();
        }
    });
    url
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut text, b| {
        let _ = write!(text, "{b:02x}");
        text
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn each_runs_spans_reach_the_collector_in_the_trace_its_answer_names() {
    let dir = temp("otlp", &[("reply.sr", PAUSING)]);
    let mock = MockServer::start().await;
    let received = Received::default();
    let otlp = format!("--otlp={}", collector(received.clone()));
    let args = ["reply.sr", &otlp, "--trace-url", "http://traces.test/trace/{trace_id}"];
    // The batch processor sends every 100 ms instead of every 5 s.
    let serve = Serve::start_with(&dir, &mock, &args, &[("OTEL_BSP_SCHEDULE_DELAY", "100")]).await;

    mock.push(MockReply::text("Draft: thanks for writing."));
    let run = serve.post("/v1/runs", json!({"workload": "reply", "prompt": "a customer mail", "wait": true})).await;
    assert_eq!(run.1["status"], "paused", "{}", run.1);
    let id = run.1["id"].as_str().unwrap().to_string();
    let trace = run.1["trace_id"].as_str().unwrap().to_string();
    assert!(trace.len() == 32 && trace.bytes().all(|b| b.is_ascii_hexdigit()), "{trace}");
    assert_eq!(run.1["trace_url"], format!("http://traces.test/trace/{trace}"));
    // The answer continues the run in a second attempt: the same trace.
    mock.push(MockReply::text("Thanks for writing."));
    let answered = serve.post(&format!("/v1/runs/{id}/input"), json!({"text": "approved"})).await;
    assert_eq!(answered.0, 202, "{}", answered.1);
    let ended = wait_until(Duration::from_secs(30), || async {
        let run = serve.get(&format!("/v1/runs/{id}")).await.1;
        (run["status"] == "done").then_some(run)
    })
    .await;
    assert_eq!(ended["trace_id"], trace.as_str());

    // Both attempts' runs, and both model calls, are in the run's trace; the
    // second attempt's served first call is not sent again.
    let spans = wait_until(Duration::from_secs(30), || async {
        let spans = received.lock().unwrap().clone();
        let roots = spans.iter().filter(|s| s.name == "invoke_workflow reply").count();
        (roots == 2).then_some(spans)
    })
    .await;
    // A run's span ends last in its attempt: each attempt's spans came before it.
    let chats = spans.iter().filter(|s| s.name.starts_with("chat ")).count();
    assert_eq!(chats, 2, "one model call per attempt: {:?}", spans.iter().map(|s| &s.name).collect::<Vec<_>>());
    for span in &spans {
        assert_eq!(hex(&span.trace_id), trace, "{}", span.name);
        if span.name == "invoke_workflow reply" {
            assert!(span.parent_span_id.is_empty(), "a run's span is a root");
        }
    }
    let mut names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names, ["chat gpt-4o-mini", "invoke_workflow main", "invoke_workflow reply"]);

    // A second run gets a trace of its own.
    mock.push(MockReply::text("Another draft."));
    let other = serve.post("/v1/runs", json!({"workload": "reply", "prompt": "another mail", "wait": true})).await;
    let other_trace = other.1["trace_id"].as_str().unwrap();
    assert_ne!(other_trace, trace);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_otlp_a_run_has_no_trace_and_a_template_must_say_where_the_id_goes() {
    let dir = temp("no-otlp", &[("reply.sr", PAUSING)]);
    let mock = MockServer::start().await;
    mock.push(MockReply::text("Draft."));
    let serve = Serve::start(&dir, &mock, &["reply.sr"]).await;
    let run = serve.post("/v1/runs", json!({"workload": "reply", "prompt": "a mail", "wait": true})).await;
    assert_eq!(run.1["status"], "paused", "{}", run.1);
    assert_eq!((run.1.get("trace_id"), run.1.get("trace_url")), (None, None), "{}", run.1);

    let (code, _, stderr) = serving::sr_plain(
        &dir,
        &["serve", "reply.sr", "--otlp", "--trace-url", "http://traces.test/", "--bind", "127.0.0.1:0"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("put {trace_id} in it"), "{stderr}");
    let (code, _, stderr) = serving::sr_plain(&dir, &["serve", "reply.sr", "--trace-url", "http://t/{trace_id}"]);
    assert_eq!(code, 2, "--trace-url needs --otlp: {stderr}");
}
