//! OTLP export to a collector on this machine: spans arrive as OTLP/HTTP
//! protobuf when the guard is dropped, the run's in the trace it was given. Its own test binary: `init_otlp`
//! installs the process's global subscriber.
#![allow(clippy::unwrap_used)]
#![cfg(feature = "otlp")]

mod common;

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use prost::Message as _;
use serde_json::json;
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results, instruction_contains};
use sr_telemetry::{Telemetry, TelemetryConfig};

type Received = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// A collector on 127.0.0.1 that keeps what is posted to `/v1/traces`; its base URL.
fn collector(received: Received) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let app = axum::Router::new().route(
                "/v1/traces",
                post(move |headers: HeaderMap, body: Bytes| async move {
                    let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default();
                    received.lock().unwrap().push((content_type.to_string(), body.to_vec()));
                    ""
                }),
            );
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    url
}

/// The trace the run is put in (`Telemetry::in_trace`).
const TRACE: &str = "0af7651916cd43dd8448eb211c80319c";

#[test]
fn spans_reach_an_otlp_collector() {
    let received = Received::default();
    let url = collector(received.clone());
    let provider = ScriptedProvider::new().on(after_tool_results(), vec![Reply::Text("Found a.sr.".into())]).on(
        instruction_contains("You work"),
        vec![Reply::Calls(vec![("list_directory".into(), json!({"path": "."}))])],
    );
    let source = r#"
model main = openai/gpt-4o
tool fs = builtin streetrace.fs
prompt worker_prompt: """You work."""
agent worker:
    tools fs
    instruction worker_prompt
"#;
    // As `sr run` may: set up, run and flush inside the async runtime.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let guard = sr_telemetry::init_otlp(Some(&url)).unwrap();
        let telemetry = Arc::new(Telemetry::new(TelemetryConfig::default()).in_trace(TRACE).unwrap());
        common::run_with(source, "go", provider, telemetry).await;
        // MCP's client logs through `tracing`, quoting messages at debug level: only its warnings pass.
        drop(tracing::info_span!(target: "rmcp::service", "rmcp_info"));
        drop(tracing::warn_span!(target: "rmcp::service", "rmcp_warning"));
        drop(guard);
    });

    let received = received.lock().unwrap();
    assert!(!received.is_empty(), "nothing was exported");
    let mut names = Vec::new();
    for (content_type, body) in received.iter() {
        assert_eq!(content_type, "application/x-protobuf");
        let request = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
        for resource in &request.resource_spans {
            let service = resource.resource.as_ref().unwrap().attributes.iter().find(|kv| kv.key == "service.name");
            let service = service.and_then(|kv| kv.value.as_ref()?.value.clone());
            assert_eq!(service, Some(Value::StringValue("streetrace".into())));
            for scope in &resource.scope_spans {
                for span in &scope.spans {
                    // The run's spans are in its trace, its own span the root;
                    // the next root span gets a trace of its own.
                    let trace = span.trace_id.iter().fold(String::new(), |mut text, b| {
                        let _ = write!(text, "{b:02x}");
                        text
                    });
                    assert_eq!(trace == TRACE, span.name != "rmcp_warning", "{}: trace {trace}", span.name);
                    if span.name == "invoke_workflow workload" {
                        assert!(span.parent_span_id.is_empty(), "the run's span has a parent");
                    }
                    names.push(span.name.clone());
                }
            }
        }
    }
    names.sort();
    assert_eq!(
        names,
        [
            "chat gpt-4o",
            "chat gpt-4o",
            "execute_tool list_directory",
            "invoke_agent worker",
            "invoke_workflow workload",
            "rmcp_warning"
        ]
    );
}
