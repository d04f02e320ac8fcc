//! Running a workload under a scripted model with telemetry whose spans go to
//! an in-memory OpenTelemetry exporter, through the same bridge as OTLP export.
#![allow(clippy::unwrap_used)]
// Each test binary uses part of this.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use opentelemetry::trace::{Status, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use sr_hir::RootDatabase;
use sr_runtime::event::{Emitter, Event, EventSink};
use sr_runtime::hook::NoHook;
use sr_runtime::human::Unattended;
use sr_runtime::journal::Journal;
use sr_runtime::mcp::McpHub;
use sr_runtime::scripted::ScriptedProvider;
use sr_runtime::tools::Jail;
use sr_runtime::{Env, RunOptions, Runtime};
use sr_telemetry::{Telemetry, TelemetryConfig};
use tracing_subscriber::layer::SubscriberExt as _;

/// Telemetry whose spans are collected in memory.
pub struct Collector {
    pub telemetry: Arc<Telemetry>,
    exporter: InMemorySpanExporter,
    provider: SdkTracerProvider,
}

impl Collector {
    pub fn new(config: TelemetryConfig) -> Collector {
        Collector::served(config, 0)
    }

    /// A collector of a continued attempt whose first `events` events are served.
    pub fn served(config: TelemetryConfig, events: u64) -> Collector {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
        let dispatch = tracing::Dispatch::new(tracing_subscriber::registry().with(layer));
        let telemetry = Telemetry::with_dispatch(config, dispatch).served(events);
        Collector { telemetry: Arc::new(telemetry), exporter, provider }
    }

    /// The spans that have ended.
    pub fn spans(&self) -> Spans {
        self.provider.force_flush().unwrap();
        Spans(self.exporter.get_finished_spans().unwrap())
    }
}

pub struct Run {
    pub spans: Spans,
    pub events: Vec<Event>,
}

/// Runs `source` (a `.sr` file's text) on `input` with telemetry collected in memory.
pub async fn run(source: &str, input: &str, provider: ScriptedProvider, config: TelemetryConfig) -> Run {
    let collector = Collector::new(config);
    let events = run_with(source, input, provider, collector.telemetry.clone()).await;
    Run { spans: collector.spans(), events }
}

/// Runs `source` on `input` with `sink` among the event sinks; returns the
/// events. File tools see a directory holding `a.sr`.
pub async fn run_with(source: &str, input: &str, provider: ScriptedProvider, sink: Arc<dyn EventSink>) -> Vec<Event> {
    let dir = work_dir();
    std::fs::write(dir.join("a.sr"), "model m = a/b\n").unwrap();
    let path = dir.join("workload.sr");
    std::fs::write(&path, source).unwrap();
    let mut db = RootDatabase::default();
    let program = match sr_runtime::compile::compile_path(&mut db, &path) {
        Ok(program) => program,
        Err(e) => panic!("the workload does not compile: {:#?}", e.diagnostics),
    };
    let env = Env {
        provider: Arc::new(provider),
        hook: Arc::new(NoHook),
        jail: Jail::new(&dir).unwrap(),
        mcp: Arc::new(McpHub::default()),
        journal: Arc::new(Journal::unrecorded()),
        human: Arc::new(Unattended),
        options: RunOptions::default(),
    };
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let recorder: Arc<dyn EventSink> = Arc::new(move |e: &Event| seen.lock().unwrap().push(e.clone()));
    let emitter = Emitter::new("test-invocation", vec![sink, recorder]);
    Runtime::new(program, env).run(emitter, input.to_string(), Vec::new()).await;
    events.lock().unwrap().clone()
}

fn work_dir() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("sr-telemetry-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Finished spans, with lookups for assertions.
pub struct Spans(pub Vec<SpanData>);

impl Spans {
    /// The one span named `name`.
    pub fn named(&self, name: &str) -> &SpanData {
        let found: Vec<_> = self.0.iter().filter(|s| s.name == name).collect();
        assert_eq!(found.len(), 1, "spans named {name:?} in {:?}", self.names());
        found[0]
    }

    pub fn names(&self) -> Vec<&str> {
        self.0.iter().map(|s| s.name.as_ref()).collect()
    }

    pub fn parent_of(&self, span: &SpanData) -> Option<&SpanData> {
        self.0.iter().find(|s| s.span_context.span_id() == span.parent_span_id)
    }

    /// The tree of span names, children in the order they started, with the
    /// status of failed spans and the names of span events.
    pub fn tree(&self) -> String {
        let mut out = String::new();
        for root in self.children(None) {
            self.render(root, 0, &mut out);
        }
        out
    }

    fn children(&self, parent: Option<&SpanData>) -> Vec<&SpanData> {
        let mut children: Vec<_> = self
            .0
            .iter()
            .filter(|s| match parent {
                Some(p) => s.parent_span_id == p.span_context.span_id(),
                None => self.parent_of(s).is_none(),
            })
            .collect();
        children.sort_by_key(|s| s.start_time);
        children
    }

    fn render(&self, span: &SpanData, depth: usize, out: &mut String) {
        out.push_str(&format!("{}{}", "  ".repeat(depth), span.name));
        if let Status::Error { .. } = span.status {
            out.push_str(&format!(" [error.type={}]", attr(span, "error.type").unwrap_or_default()));
        }
        for event in span.events.iter() {
            out.push_str(&format!(" +{}", event.name));
        }
        out.push('\n');
        for child in self.children(Some(span)) {
            self.render(child, depth + 1, out);
        }
    }
}

/// An attribute's value as text.
pub fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.to_string())
}

/// Whether any span records content: messages, tool arguments and results, or
/// error messages.
pub fn content_keys(spans: &Spans) -> Vec<String> {
    const CONTENT: &[&str] =
        &["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"];
    let mut found = Vec::new();
    for span in &spans.0 {
        for kv in &span.attributes {
            if CONTENT.contains(&kv.key.as_str()) {
                found.push(format!("{}: {}", span.name, kv.key));
            }
        }
        if let Status::Error { description } = &span.status
            && !description.is_empty()
        {
            found.push(format!("{}: status description", span.name));
        }
        for event in span.events.iter() {
            if event.attributes.iter().any(|kv| kv.key.as_str() == "sr.message") {
                found.push(format!("{}: event {}", span.name, event.name));
            }
        }
    }
    found
}
