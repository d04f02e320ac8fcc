//! `sr serve`: workloads behind sr-serve's HTTP API. This module reads the
//! flags, sets up the log (structured lines on stderr), and turns SIGTERM and
//! Ctrl-C into the server's drain.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

#[derive(clap::Args)]
pub struct Args {
    /// The `.sr` files to serve; each is named by its file stem (`review` for `review.sr`).
    workloads: Vec<PathBuf>,
    /// The address to listen on. A non-loopback address needs --api-key-file.
    #[arg(long, default_value = "127.0.0.1:8787")]
    bind: SocketAddr,
    /// PostgreSQL shared by replicas (`postgres://USER@HOST/DB`, or `host=… dbname=…`); without
    /// it, SQLite in the state directory. Replicas must share one --state-dir (see docs/serve.md).
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
    /// With --database-url: seconds a replica's claim of a run lasts without a heartbeat; a
    /// replica silent for longer loses its runs to the others.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(2..=3600))]
    lease_secs: u64,
    /// Where the server keeps runs, events, sessions, journals and the runs'
    /// work directories (default: as `sr run`'s state directory for the current directory).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Runs executed at once.
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// This server's name in its logs and on the runs it claims (default: the host name and process id).
    #[arg(long, value_name = "ID")]
    replica_id: Option<String>,
    /// API keys, one a line (at least 16 characters each; `#` starts a comment).
    /// Clients send `Authorization: Bearer KEY`.
    #[arg(long, value_name = "FILE")]
    api_key_file: Option<PathBuf>,
    /// Serve every run's model exchanges and tool results from this recording (offline).
    #[arg(long, value_name = "CASSETTE")]
    replay: Option<PathBuf>,
    /// Allow this origin (`scheme://host[:port]`; `*` is refused) to call the API from a
    /// browser (CORS); repeatable. Default: none.
    #[arg(long, value_name = "ORIGIN")]
    cors_origin: Vec<String>,
    /// Where clients reach the server behind a proxy (`https://agents.example.com`): its host
    /// is answered too, and the A2A agent cards name their endpoints under it.
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// Seconds a connection may take to send a request's headers, or stay idle between requests.
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    header_timeout: u64,
    /// Open connections one client address may hold; more are closed when accepted.
    #[arg(long, value_name = "N", default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_connections_per_client: u64,
    /// MiB of input (runs' messages, pending answers) one session may store.
    #[arg(long, value_name = "MIB", default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    session_quota_mib: u64,
    /// Time travels (`GET /v1/runs/{id}/at/{seq}`, forks) replayed at once; more get 503.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    max_travels: u64,
    /// Seconds SIGTERM waits for running runs before stopping them (they resume at the next start).
    #[arg(long, default_value_t = 30)]
    drain_timeout: u64,
    /// Let A2A push notifications reach webhooks on this host (`HOST` any port, or `HOST:PORT`);
    /// repeatable. Default: none, and push notifications are off.
    #[arg(long, value_name = "HOST")]
    push_host: Vec<String>,
    #[cfg(feature = "otlp")]
    #[command(flatten)]
    trace: crate::trace_args::TraceArgs,
    /// Where a trace is shown, `{trace_id}` standing for its id
    /// (`http://localhost:16686/trace/{trace_id}`): runs link to their trace.
    #[cfg(feature = "otlp")]
    #[arg(long, value_name = "TEMPLATE", requires = "otlp")]
    trace_url: Option<String>,
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

pub fn run(args: Args) -> ExitCode {
    // The server's own lines (requests, runs) at info; other crates' (salsa's
    // query log among them) only when they warn; the runs' spans are for the
    // trace exporter only.
    let targets = tracing_subscriber::filter::Targets::new()
        .with_target("sr_serve", tracing::Level::INFO)
        .with_target("tower_http", tracing::Level::INFO)
        .with_target("sr_telemetry", tracing::level_filters::LevelFilter::OFF)
        .with_default(tracing::Level::WARN);
    let log = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_target(false).with_ansi(false);
    // Made before the async runtime so that it is dropped after it: the
    // traces still queued are sent when the server has stopped.
    #[cfg(feature = "otlp")]
    let (export, _otlp) = match args.trace.otlp.as_deref() {
        Some(endpoint) => match sr_telemetry::otlp_layer(Some(endpoint).filter(|e| !e.is_empty())) {
            Ok((layer, guard)) => (Some(layer), Some(guard)),
            Err(e) => return fail(e),
        },
        None => (None, None),
    };
    #[cfg(not(feature = "otlp"))]
    let export: Option<tracing_subscriber::layer::Identity> = None;
    tracing_subscriber::registry().with(log.with_filter(targets)).with(export).init();
    let cwd = std::env::current_dir().unwrap_or_default();
    let state_dir = match sr_runtime::state::StateDir::resolve(args.state_dir.as_deref(), &cwd) {
        Ok(state) => state.dir,
        Err(e) => return fail(e),
    };
    let tracer = tracer(&args);
    let replica_id = args.replica_id.unwrap_or_else(|| {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        format!("{}-{}", host.trim(), std::process::id())
    });
    let config = sr_serve::Config {
        workloads: args.workloads,
        bind: args.bind,
        state_dir,
        workers: args.workers,
        replica_id,
        api_key_file: args.api_key_file,
        replay: args.replay,
        database_url: args.database_url,
        lease: Duration::from_secs(args.lease_secs),
        cors_origins: args.cors_origin,
        public_url: args.public_url,
        limits: sr_serve::Limits {
            header_timeout: Duration::from_secs(args.header_timeout),
            per_client: usize::try_from(args.max_connections_per_client).unwrap_or(usize::MAX),
        },
        session_quota: usize::try_from(args.session_quota_mib << 20).unwrap_or(usize::MAX),
        travels: usize::try_from(args.max_travels).unwrap_or(usize::MAX),
        drain_timeout: Duration::from_secs(args.drain_timeout),
        frontend: Some(sr_studio::router()),
        push_hosts: args.push_host,
        tracer,
        #[cfg(feature = "otlp")]
        trace_url: args.trace_url,
        #[cfg(not(feature = "otlp"))]
        trace_url: None,
    };
    let runtime = match sr_runtime::async_runtime() {
        Ok(runtime) => runtime,
        Err(e) => return fail(format!("cannot start the async runtime: {e}")),
    };
    runtime.block_on(async {
        let bound = match sr_serve::bind(config).await {
            Ok(bound) => bound,
            Err(e) => return fail(e),
        };
        match bound.local_addr() {
            Ok(addr) => eprintln!("sr serve: listening on http://{addr}"),
            Err(e) => return fail(format!("cannot read the bound address: {e}")),
        }
        match bound.serve(shutdown_signal()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(1)
            }
        }
    })
}

/// With `--otlp`: each run's spans go into the trace the server gives it.
#[cfg(feature = "otlp")]
fn tracer(args: &Args) -> Option<sr_serve::Tracer> {
    args.trace.otlp.as_ref()?;
    let config = args.trace.config();
    Some(std::sync::Arc::new(move |trace_id: &str, served: u64| -> std::sync::Arc<dyn sr_runtime::event::EventSink> {
        match sr_telemetry::Telemetry::new(config).in_trace(trace_id) {
            Ok(telemetry) => std::sync::Arc::new(telemetry.served(served)),
            Err(error) => {
                tracing::warn!(%error, "the run is not traced");
                std::sync::Arc::new(|_: &sr_runtime::event::Event| {})
            }
        }
    }))
}

#[cfg(not(feature = "otlp"))]
fn tracer(_: &Args) -> Option<sr_serve::Tracer> {
    None
}

/// SIGTERM or Ctrl-C.
async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = terminate => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
