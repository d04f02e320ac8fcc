//! OTLP export, only when the user asks for it (`sr run --otlp`): a global
//! subscriber that hands the spans to a batch processor, which sends them as
//! OTLP/HTTP protobuf from its own thread, so the run never waits on the
//! collector and the caller's async runtime is not involved.

use std::fmt;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{ExporterBuildError, Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Level;
use tracing::subscriber::SetGlobalDefaultError;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;

/// A collector on this machine (the OTLP/HTTP port).
const LOCAL_COLLECTOR: &str = "http://127.0.0.1:4318";

/// Why OTLP export could not start.
#[derive(Debug)]
pub enum Error {
    /// The exporter could not be built (a malformed endpoint, say).
    Exporter(ExporterBuildError),
    /// A global subscriber is installed already.
    Subscriber(SetGlobalDefaultError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Exporter(e) => write!(f, "cannot export OTLP: {e}"),
            Error::Subscriber(e) => write!(f, "cannot install the OTLP subscriber: {e}"),
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
    let mut exporter = SpanExporter::builder().with_http().with_protocol(Protocol::HttpBinary);
    if let Some(url) = traces_url(endpoint, |var| std::env::var_os(var).is_some_and(|v| !v.is_empty())) {
        exporter = exporter.with_endpoint(url);
    }
    let exporter = exporter.build().map_err(Error::Exporter)?;
    let mut resource = Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("streetrace");
    }
    let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource.build()).build();
    // Source locations and threads would be telemetry's own, not the run's.
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("sr-telemetry"))
        .with_location(false)
        .with_threads(false)
        .with_tracked_inactivity(false);
    let filter = Targets::new().with_default(Level::INFO).with_target("rmcp", Level::WARN);
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer.with_filter(filter)))
        .map_err(Error::Subscriber)?;
    Ok(Guard { provider })
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
