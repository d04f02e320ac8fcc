//! Model strings (`anthropic/claude-sonnet-4-5`, `gpt-4o`) to the provider and
//! model the conventions ask for: `gen_ai.provider.name` uses the conventions'
//! well-known values, `gen_ai.request.model` is the id the provider knows.

/// Router prefixes whose well-known name differs, or that name a provider the
/// conventions know; other prefixes (`ollama`, `openrouter`, …) stay as they are.
const PROVIDERS: &[(&str, &str)] = &[
    ("openai", "openai"),
    ("anthropic", "anthropic"),
    ("gemini", "gcp.gemini"),
    ("groq", "groq"),
    ("deepseek", "deepseek"),
    ("mistral", "mistral_ai"),
    ("xai", "x_ai"),
];

/// `(provider, model)` of a model string; a name without a prefix gets the
/// one the router gives it.
pub(crate) fn split(model: &str) -> (&str, &str) {
    let (prefix, id) = model.split_once('/').unwrap_or((sr_llm::bare_model_prefix(model).unwrap_or("unknown"), model));
    (PROVIDERS.iter().find(|(p, _)| *p == prefix).map_or(prefix, |(_, name)| name), id)
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn prefixes_and_bare_names_give_the_conventions_provider_names() {
        assert_eq!(split("anthropic/claude-sonnet-4-5"), ("anthropic", "claude-sonnet-4-5"));
        assert_eq!(split("gemini/gemini-2.5-pro"), ("gcp.gemini", "gemini-2.5-pro"));
        assert_eq!(split("xai/grok-4"), ("x_ai", "grok-4"));
        assert_eq!(split("ollama/llama3.2"), ("ollama", "llama3.2"));
        assert_eq!(split("openrouter/meta/llama-3"), ("openrouter", "meta/llama-3"));
        assert_eq!(split("gpt-4o"), ("openai", "gpt-4o"));
        assert_eq!(split("claude-3-haiku"), ("anthropic", "claude-3-haiku"));
        assert_eq!(split("my-model"), ("unknown", "my-model"));
    }
}
