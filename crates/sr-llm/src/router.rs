//! Picks the provider from the model string, written as upstream StreetRace and
//! LiteLLM write it: `openai/gpt-4o`, `anthropic/claude-sonnet-4-5`,
//! `gemini/gemini-2.5-flash`, `ollama/llama3`.
//!
//! The environment is read once, when the router is made, so a missing key is
//! reported by [`Router::resolve`] before any request, naming the variable.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::{Anthropic, ApiKey, ChatRequest, ChatStream, Endpoint, Gemini, HttpClient, LlmError, OpenAi, Provider};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    OpenAi,
    Anthropic,
    Gemini,
}

/// How one prefix is reached.
struct Backend {
    prefix: &'static str,
    protocol: Protocol,
    key_vars: &'static [&'static str],
    /// Local servers work without a key.
    key_required: bool,
    base_vars: &'static [&'static str],
    default_base: Option<&'static str>,
    /// The base is a bare host (Ollama's convention): `/v1` is added unless present.
    add_v1: bool,
}

const fn backend(
    prefix: &'static str,
    protocol: Protocol,
    key_vars: &'static [&'static str],
    base_vars: &'static [&'static str],
    default_base: &'static str,
) -> Backend {
    Backend {
        prefix,
        protocol,
        key_vars,
        key_required: true,
        base_vars,
        default_base: Some(default_base),
        add_v1: false,
    }
}

const fn local(
    prefix: &'static str,
    key_vars: &'static [&'static str],
    base_vars: &'static [&'static str],
    default_base: Option<&'static str>,
    add_v1: bool,
) -> Backend {
    Backend { prefix, protocol: Protocol::OpenAi, key_vars, key_required: false, base_vars, default_base, add_v1 }
}

use Protocol::{Anthropic as Ant, Gemini as Gem, OpenAi as Oai};

/// The providers, in the order error messages list them. Keep the table in the
/// crate docs in sync.
const BACKENDS: &[Backend] = &[
    backend("openai", Oai, &["OPENAI_API_KEY"], &["OPENAI_BASE_URL", "OPENAI_API_BASE"], "https://api.openai.com/v1"),
    backend(
        "anthropic",
        Ant,
        &["ANTHROPIC_API_KEY"],
        &["ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"],
        "https://api.anthropic.com",
    ),
    backend(
        "gemini",
        Gem,
        &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        &["GEMINI_BASE_URL", "GEMINI_API_BASE"],
        "https://generativelanguage.googleapis.com",
    ),
    local("ollama", &["OLLAMA_API_KEY"], &["OLLAMA_API_BASE"], Some("http://localhost:11434"), true),
    local("ollama_chat", &["OLLAMA_API_KEY"], &["OLLAMA_API_BASE"], Some("http://localhost:11434"), true),
    local("hosted_vllm", &["HOSTED_VLLM_API_KEY"], &["HOSTED_VLLM_API_BASE"], None, false),
    local("lm_studio", &["LM_STUDIO_API_KEY"], &["LM_STUDIO_API_BASE"], Some("http://localhost:1234/v1"), false),
    backend("openrouter", Oai, &["OPENROUTER_API_KEY"], &["OPENROUTER_API_BASE"], "https://openrouter.ai/api/v1"),
    backend("groq", Oai, &["GROQ_API_KEY"], &["GROQ_API_BASE"], "https://api.groq.com/openai/v1"),
    backend("deepseek", Oai, &["DEEPSEEK_API_KEY"], &["DEEPSEEK_API_BASE"], "https://api.deepseek.com/v1"),
    backend("mistral", Oai, &["MISTRAL_API_KEY"], &["MISTRAL_API_BASE"], "https://api.mistral.ai/v1"),
    backend("xai", Oai, &["XAI_API_KEY"], &["XAI_API_BASE"], "https://api.x.ai/v1"),
];

/// Bare model names LiteLLM also recognizes without a prefix.
const BARE_NAMES: &[(&str, &str)] = &[
    ("gpt-", "openai"),
    ("chatgpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude-", "anthropic"),
    ("gemini-", "gemini"),
];

/// The router prefix of a model name given without one (`gpt-4o` is
/// `openai`), as LiteLLM reads them.
pub fn bare_model_prefix(model: &str) -> Option<&'static str> {
    BARE_NAMES.iter().find(|(start, _)| model.starts_with(start)).map(|(_, prefix)| *prefix)
}

/// A provider for every model string, configured from the environment.
pub struct Router {
    http: HttpClient,
    keys: BTreeMap<&'static str, ApiKey>,
    bases: BTreeMap<&'static str, String>,
    stream: bool,
    custom: Vec<(String, Arc<dyn Provider>)>,
}

/// Where a model string leads.
pub struct Route {
    pub provider: Arc<dyn Provider>,
    /// The model id the provider knows, without the prefix.
    pub model: String,
}

impl Router {
    /// The environment variables that hold API keys, for a run to redact their values.
    pub fn key_variables() -> impl Iterator<Item = &'static str> {
        let mut names: Vec<&'static str> = BACKENDS.iter().flat_map(|b| b.key_vars.iter().copied()).collect();
        names.sort_unstable();
        names.dedup();
        names.into_iter()
    }

    /// Reads the variables listed in the crate docs from the process environment.
    pub fn from_env(http: HttpClient) -> Router {
        Router::from_vars(http, |name| std::env::var(name).ok())
    }

    /// Reads the variables through `var`, e.g. from a map in tests.
    pub fn from_vars(http: HttpClient, var: impl Fn(&str) -> Option<String>) -> Router {
        let var = |name: &str| var(name).map(|value| value.trim().to_owned()).filter(|value| !value.is_empty());
        let mut keys = BTreeMap::new();
        let mut bases = BTreeMap::new();
        for backend in BACKENDS {
            for &name in backend.key_vars {
                if let Some(value) = var(name) {
                    keys.insert(name, ApiKey::new(value));
                }
            }
            for &name in backend.base_vars {
                if let Some(value) = var(name) {
                    bases.insert(name, value);
                }
            }
        }
        Router { http, keys, bases, stream: true, custom: Vec::new() }
    }

    /// Whether to ask providers for streamed replies (the default).
    pub fn stream(mut self, stream: bool) -> Router {
        self.stream = stream;
        self
    }

    /// Routes `prefix/...` to `provider`, before the built-in prefixes; for
    /// scripted providers in tests, or a provider of the caller's own.
    pub fn with_provider(mut self, prefix: impl Into<String>, provider: Arc<dyn Provider>) -> Router {
        self.custom.push((prefix.into(), provider));
        self
    }

    /// The provider and model id for a model string, or why there is none.
    pub fn resolve(&self, model: &str) -> Result<Route, LlmError> {
        crate::check_model_id(model)?;
        if let Some((prefix, rest)) = model.split_once('/') {
            if let Some((_, provider)) = self.custom.iter().find(|(custom, _)| custom == prefix) {
                return Ok(Route { provider: provider.clone(), model: rest.to_owned() });
            }
            if let Some(backend) = BACKENDS.iter().find(|backend| backend.prefix == prefix) {
                return Ok(Route { provider: self.provider(backend)?, model: rest.to_owned() });
            }
        }
        match bare_model_prefix(model).and_then(|prefix| BACKENDS.iter().find(|backend| backend.prefix == prefix)) {
            Some(backend) => Ok(Route { provider: self.provider(backend)?, model: model.to_owned() }),
            None => Err(LlmError::UnknownProvider {
                model: model.to_owned(),
                known: self
                    .custom
                    .iter()
                    .map(|(prefix, _)| prefix.clone())
                    .chain(BACKENDS.iter().map(|backend| backend.prefix.to_owned()))
                    .collect(),
            }),
        }
    }

    fn provider(&self, backend: &Backend) -> Result<Arc<dyn Provider>, LlmError> {
        let missing = |what: &str, variables: &[&str]| LlmError::MissingEnv {
            provider: backend.prefix.to_owned(),
            what: what.to_owned(),
            variables: variables.iter().map(|name| (*name).to_owned()).collect(),
        };
        let api_key = backend.key_vars.iter().find_map(|name| self.keys.get(name)).cloned();
        if backend.key_required && api_key.is_none() {
            return Err(missing("API key", backend.key_vars));
        }
        let base = backend.base_vars.iter().find_map(|name| self.bases.get(name).map(String::as_str));
        let Some(base) = base.or(backend.default_base) else {
            return Err(missing("base URL", backend.base_vars));
        };
        let mut base_url = base.trim_end_matches('/').to_owned();
        if backend.add_v1 && !base_url.ends_with("/v1") {
            base_url.push_str("/v1");
        }
        let endpoint = Endpoint { name: backend.prefix.to_owned(), base_url, api_key, stream: self.stream };
        let http = self.http.clone();
        Ok(match backend.protocol {
            Protocol::OpenAi => Arc::new(OpenAi::new(endpoint, http)),
            Protocol::Anthropic => Arc::new(Anthropic::new(endpoint, http)),
            Protocol::Gemini => Arc::new(Gemini::new(endpoint, http)),
        })
    }
}

impl Provider for Router {
    fn chat(&self, mut request: ChatRequest) -> ChatStream {
        match self.resolve(&request.model) {
            Ok(route) => {
                request.model = route.model;
                route.provider.chat(request)
            }
            Err(err) => crate::provider::failed(err),
        }
    }
}

impl fmt::Debug for Router {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Router")
            .field("keys", &self.keys)
            .field("bases", &self.bases)
            .field("stream", &self.stream)
            .field("custom", &self.custom.iter().map(|(prefix, _)| prefix).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HttpOptions;

    fn router(vars: &[(&str, &str)]) -> Router {
        let vars: BTreeMap<String, String> = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        Router::from_vars(HttpClient::new(HttpOptions::default()).unwrap(), move |name| vars.get(name).cloned())
    }

    #[test]
    fn prefixes_select_providers_and_are_stripped() {
        let r = router(&[("OPENAI_API_KEY", "k"), ("OPENROUTER_API_KEY", "k")]);
        assert_eq!(r.resolve("openai/gpt-4o").unwrap().model, "gpt-4o");
        assert_eq!(r.resolve("ollama/llama3:8b").unwrap().model, "llama3:8b");
        assert_eq!(r.resolve("openrouter/meta-llama/llama-3").unwrap().model, "meta-llama/llama-3");
        assert_eq!(r.resolve("gpt-4o-mini").unwrap().model, "gpt-4o-mini");
    }

    #[test]
    fn missing_keys_name_the_variable() {
        let r = router(&[("OPENAI_API_KEY", "  ")]);
        let err = r.resolve("openai/gpt-4o").err().unwrap();
        assert_eq!(err.to_string(), "openai: no API key configured: set OPENAI_API_KEY");
        let err = r.resolve("gemini/gemini-2.5-pro").err().unwrap();
        assert_eq!(err.to_string(), "gemini: no API key configured: set GEMINI_API_KEY or GOOGLE_API_KEY");
        let err = r.resolve("claude-sonnet-4-5").err().unwrap();
        assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
        let err = r.resolve("hosted_vllm/m").err().unwrap();
        assert_eq!(err.to_string(), "hosted_vllm: no base URL configured: set HOSTED_VLLM_API_BASE");
    }

    #[test]
    fn google_api_key_is_a_fallback_for_gemini() {
        assert!(router(&[("GOOGLE_API_KEY", "k")]).resolve("gemini/gemini-2.5-pro").is_ok());
    }

    #[test]
    fn unknown_prefixes_list_the_known_ones() {
        let err = router(&[]).resolve("acme/model-1").err().unwrap();
        let LlmError::UnknownProvider { known, .. } = &err else { panic!("{err:?}") };
        assert!(known.iter().any(|p| p == "ollama"));
        assert!(err.to_string().contains("write it as provider/model"));
    }

    #[test]
    fn custom_prefixes_come_first() {
        let r = router(&[]).with_provider("openai", Arc::new(router(&[("OPENAI_API_KEY", "k")])));
        assert_eq!(r.resolve("openai/gpt-4o").unwrap().model, "gpt-4o", "no key needed: routed to the custom provider");
    }

    #[test]
    fn debug_output_hides_keys() {
        let r = router(&[("OPENAI_API_KEY", "sk-very-secret"), ("OLLAMA_API_BASE", "http://box:11434")]);
        let debug = format!("{r:?}");
        assert!(!debug.contains("sk-very-secret"), "{debug}");
        assert!(debug.contains("OPENAI_API_KEY") && debug.contains("http://box:11434"), "{debug}");
    }
}
