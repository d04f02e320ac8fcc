//! `--otlp` and `--capture-content`, which `sr run` and `sr serve` both take.

/// Where traces go, and what they hold.
#[derive(clap::Args)]
pub struct TraceArgs {
    /// Send traces (OpenTelemetry GenAI spans; `sr serve`: one trace per run, its id on the run)
    /// over OTLP/HTTP: to ENDPOINT (`--otlp=http://host:4318`), else
    /// $OTEL_EXPORTER_OTLP_ENDPOINT, else http://127.0.0.1:4318.
    #[arg(long, value_name = "ENDPOINT", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub otlp: Option<String>,
    /// Put prompts, replies, tool arguments and results in the traces.
    #[arg(long, requires = "otlp")]
    pub capture_content: bool,
}

impl TraceArgs {
    /// What the traces hold.
    pub fn config(&self) -> sr_telemetry::TelemetryConfig {
        sr_telemetry::TelemetryConfig { capture_content: self.capture_content }
    }
}
