//! What `sr run` says about a workload before running it: its load errors
//! (with line and column), its entry points and agents (`--list-agents`), and
//! whether the model flags name a model; the price table both `sr run` and
//! `sr eval` read.

use std::path::Path;
use std::sync::Arc;

use sr_runtime::compile::{CompileError, Compiled, Entry};
use sr_syntax::LineIndex;
use sr_syntax::line_index::Encoding;

/// `FILE:LINE:COL: error[CODE]: MESSAGE` for each error (1-based character columns).
pub fn errors(error: &CompileError) -> Vec<String> {
    error
        .diagnostics
        .iter()
        .map(|(file, d)| {
            let at = match crate::files::read(file) {
                Ok(text) => {
                    let index = LineIndex::new(&text);
                    let line = index.line_col(d.range.start()).line + 1;
                    format!(":{line}:{}", index.col_in(d.range.start(), Encoding::Char) + 1)
                }
                Err(_) => String::new(),
            };
            format!("{}{at}: error[{}]: {}", file.display(), d.code(), d.message())
        })
        .collect()
}

/// The entry point, then every flow and agent a run can start at (`--entry`).
pub fn agents(program: &Compiled) -> String {
    let entry = match &program.entry {
        Some(Entry::Flow(name)) => format!("flow {name}"),
        Some(Entry::Agent(name)) => format!("agent {name}"),
        None => "none (pass --entry NAME)".to_string(),
    };
    let mut out = format!("entry point: {entry}\n");
    for name in program.flows.keys() {
        out.push_str(&format!("flow {name}\n"));
    }
    for (name, agent) in &program.agents {
        let instruction = agent.data.instruction.as_ref().map(|i| format!(" (instruction {})", i.name));
        out.push_str(&format!("agent {name}{}\n", instruction.unwrap_or_default()));
    }
    out
}

/// `--model`/`--override-model` must name a model (`openai/` or `` does not) by a
/// valid id (`sr_llm::check_model_id`).
pub fn check_model(flag: &str, model: &str) -> Result<(), String> {
    let model = model.trim();
    match model.rsplit_once('/') {
        _ if model.is_empty() => Err(format!("{flag} is empty: give a model such as openai/gpt-4o")),
        Some((prefix, "")) => Err(format!("{flag} '{model}' names no model after '{prefix}/': e.g. {prefix}/MODEL")),
        Some(("", _)) => Err(format!("{flag} '{model}' has an empty provider before '/'")),
        _ => sr_llm::check_model_id(model).map_err(|e| format!("{flag}: {e}")),
    }
}

/// The price table `--prices` names (USD per million tokens by model).
pub fn prices(file: &Path) -> Result<Arc<sr_llm::PriceTable>, String> {
    std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| format!("not a price table: {e}")))
        .map(Arc::new)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_flag_must_name_a_model() {
        assert_eq!(check_model("--override-model", "openai/gpt-4o"), Ok(()));
        assert_eq!(check_model("--model", "gpt-4o"), Ok(()));
        assert!(check_model("--override-model", "openai/").unwrap_err().contains("names no model after 'openai/'"));
        assert!(check_model("--model", "  ").unwrap_err().contains("is empty"));
        assert!(check_model("--model", "/gpt").unwrap_err().contains("empty provider"));
        let hostile = check_model("--model", "gemini/../../v1beta/files?x").unwrap_err();
        assert!(hostile.starts_with("--model: model id \"gemini/../../v1beta/files?x\" is not valid:"), "{hostile}");
    }
}
