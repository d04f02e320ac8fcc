//! Settings, from `initializationOptions` and `workspace/configuration`, under
//! the `streetrace` section:
//! `{"diagnostics": {"mode": "default" | "upstream"}, "debounceMs": 200,
//!   "inlayHints": true, "codeLens": true}`.

use std::time::Duration;

use serde_json::Value;
use sr_ide::DiagnosticsMode;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Config {
    pub mode: DiagnosticsMode,
    /// Quiet time after an edit before diagnostics are computed.
    pub debounce: Duration,
    pub inlay_hints: bool,
    pub code_lens: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            mode: DiagnosticsMode::Default,
            debounce: Duration::from_millis(200),
            inlay_hints: true,
            code_lens: true,
        }
    }
}

impl Config {
    /// Applies the settings present in `value` (with or without the
    /// `streetrace` wrapper); absent or malformed fields keep their value.
    pub fn update(&mut self, value: &Value) {
        let value = value.get("streetrace").unwrap_or(value);
        if let Some(mode) = value.pointer("/diagnostics/mode").and_then(Value::as_str) {
            self.mode = if mode == "upstream" { DiagnosticsMode::Upstream } else { DiagnosticsMode::Default };
        }
        if let Some(ms) = value.get("debounceMs").and_then(Value::as_u64) {
            self.debounce = Duration::from_millis(ms.min(10_000));
        }
        if let Some(on) = value.get("inlayHints").and_then(Value::as_bool) {
            self.inlay_hints = on;
        }
        if let Some(on) = value.get("codeLens").and_then(Value::as_bool) {
            self.code_lens = on;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_known_fields_and_ignores_the_rest() {
        let mut config = Config::default();
        config.update(&serde_json::json!({"streetrace": {"diagnostics": {"mode": "upstream"}, "debounceMs": 5, "codeLens": false, "inlayHints": "yes"}}));
        assert_eq!(config.mode, DiagnosticsMode::Upstream);
        assert_eq!(config.debounce, Duration::from_millis(5));
        assert!(!config.code_lens);
        assert!(config.inlay_hints);
        config.update(&serde_json::json!({"diagnostics": {"mode": "default"}}));
        assert_eq!(config.mode, DiagnosticsMode::Default);
        config.update(&serde_json::json!(null));
        assert_eq!(config.debounce, Duration::from_millis(5));
    }
}
