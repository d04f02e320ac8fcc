//! OTLP export, only when the user asks for it (`sr run --otlp`, `sr serve
//! --otlp`): a `tracing` layer that hands the spans to a batch processor,
//! which sends them as OTLP/HTTP protobuf from its own thread, so the run
//! never waits on the collector and the caller's async runtime is not involved.

use std::fmt;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{ExporterBuildError, Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::subscriber::SetGlobalDefaultError;
use tracing::{Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::registry::LookupSpan;

use crate::trace_ids::RunTraceIds;

/// A collector on this machine (the OTLP/HTTP port).
const LOCAL_COLLECTOR: &str = "http://127.0.0.1:4318";

/// Why OTLP export could not start.
#[derive(Debug)]
pub enum Error {
    /// The exporter could not be built (a malformed endpoint, say).
    Exporter(ExporterBuildError),
    /// A global subscriber is installed already.
    Subscriber(SetGlobalDefaultError),
    /// A trace id that is not 32 hex digits (or is all zeros).
    TraceId(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Exporter(e) => write!(f, "cannot export OTLP: {e}"),
            Error::Subscriber(e) => write!(f, "cannot install the OTLP subscriber: {e}"),
            Error::TraceId(id) => write!(f, "{id:?} is not a trace id (32 hex digits, not all zero)"),
        }
    }
}

impl std::error::Error for Error {}

/// Keeps export running; dropping it sends the spans still queued and waits
/// for the collector's answer (up to the exporter's timeout, 10 s by default).
#[must_use = "export stops, and queued spans are lost, when the guard is dropped"]
pub struct Guard {
    provider: SdkTracerProvider,
}

impl Drop for Guard {
    fn drop(&mut self) {
        // Nothing to tell the user at exit: a collector that is down loses the
        // trace, not the run.
        let _ = self.provider.shutdown();
    }
}

/// Installs a global `tracing` subscriber that exports spans to the OTLP/HTTP
/// collector at `endpoint` (its base URL, `/v1/traces` is added), else at
/// `$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `$OTEL_EXPORTER_OTLP_ENDPOINT` as
/// the OTLP specification reads them, else at `http://127.0.0.1:4318`.
/// `$OTEL_EXPORTER_OTLP_HEADERS` (API keys) and `$OTEL_SERVICE_NAME` apply.
/// `rmcp` logs at `warn` only: its debug logs may quote MCP messages.
pub fn init_otlp(endpoint: Option<&str>) -> Result<Guard, Error> {
    let provider = provider(endpoint)?;
    let filter = Targets::new().with_default(Level::INFO).with_target("rmcp", Level::WARN);
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer(&provider).with_filter(filter)))
        .map_err(Error::Subscriber)?;
    Ok(Guard { provider })
}

/// A layer that exports the runs' spans (target `sr_telemetry`) and nothing
/// else to the collector `endpoint` names (as [`init_otlp`]'s), for a
/// subscriber that also does other things (`sr serve`'s log).
pub fn otlp_layer<S>(endpoint: Option<&str>) -> Result<(impl Layer<S> + use<S>, Guard), Error>
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    let provider = provider(endpoint)?;
    let filter = Targets::new().with_target(crate::spans::TARGET, Level::INFO);
    Ok((layer(&provider).with_filter(filter), Guard { provider }))
}

fn provider(endpoint: Option<&str>) -> Result<SdkTracerProvider, Error> {
    let mut exporter = SpanExporter::builder().with_http().with_protocol(Protocol::HttpBinary);
    if let Some(url) = traces_url(endpoint, |var| std::env::var_os(var).is_some_and(|v| !v.is_empty())) {
        exporter = exporter.with_endpoint(url);
    }
    let exporter = exporter.build().map_err(Error::Exporter)?;
    let mut resource = Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("streetrace");
    }
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_id_generator(RunTraceIds::default())
        .with_resource(resource.build())
        .build())
}

fn layer<S>(provider: &SdkTracerProvider) -> impl Layer<S> + use<S>
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    // Source locations and threads would be telemetry's own, not the run's.
    tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("sr-telemetry"))
        .with_location(false)
        .with_threads(false)
        .with_tracked_inactivity(false)
}

/// The URL spans are posted to; `None` leaves the environment's URL to the
/// exporter, which reads it as the specification says.
fn traces_url(endpoint: Option<&str>, is_set: impl Fn(&str) -> bool) -> Option<String> {
    let base = match endpoint {
        Some(base) => base,
        None if is_set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") || is_set("OTEL_EXPORTER_OTLP_ENDPOINT") => return None,
        None => LOCAL_COLLECTOR,
    };
    let base = base.trim_end_matches('/');
    Some(if base.ends_with("/v1/traces") { base.to_string() } else { format!("{base}/v1/traces") })
}

#[cfg(test)]
mod tests {
    use super::traces_url;

    #[test]
    fn endpoints_are_base_urls_and_the_environment_comes_second() {
        let unset = |_: &str| false;
        assert_eq!(traces_url(None, unset).as_deref(), Some("http://127.0.0.1:4318/v1/traces"));
        assert_eq!(traces_url(Some("http://c:4318/"), unset).as_deref(), Some("http://c:4318/v1/traces"));
        assert_eq!(traces_url(Some("https://c/v1/traces"), unset).as_deref(), Some("https://c/v1/traces"));
        let set = |var: &str| var == "OTEL_EXPORTER_OTLP_ENDPOINT";
        assert_eq!(traces_url(None, set), None);
        assert_eq!(traces_url(Some("http://c:4318"), set).as_deref(), Some("http://c:4318/v1/traces"));
    }
}
