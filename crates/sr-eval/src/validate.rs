//! What is checked before any case runs, so that a mistake is one message and
//! exit 2 rather than every case failing: each entry a variant starts at is a
//! flow, agent or prompt of its workload (with "did you mean"), each workload has
//! something to start, and each model a run, a judge or a grading flow will
//! call names a known provider and, when the models are live, has its key.

use std::sync::Arc;

use sr_llm::{HttpClient, HttpOptions, LlmError, Router};
use sr_runtime::compile::Compiled;

use crate::dataset::Case;
use crate::scorer::Scorer;
use crate::suggest::closest;

/// The problems of starting `entries` (none: each workload's entry point) in `workloads`.
pub fn entries(workloads: &[(String, Arc<Compiled>)], entries: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, program) in workloads {
        if entries.is_empty() {
            if program.entry.is_none() {
                problems.push(format!("{name} has no entry point: give --entry with one of its flows or agents"));
            }
            continue;
        }
        // The names the hint offers (`resolve_entry` also takes `KIND:NAME`).
        let known: Vec<&str> = program
            .flows
            .keys()
            .chain(program.agents.keys())
            .chain(program.prompts.keys())
            .map(|n| n.as_str())
            .collect();
        for entry in entries.iter().filter(|e| program.resolve_entry(e).is_none()) {
            let hint = match closest(entry, known.iter().copied()) {
                Some(near) => format!(": did you mean `{near}`?"),
                None if known.is_empty() => String::new(),
                None => format!(" (it has: {})", known.join(", ")),
            };
            problems.push(format!("--entry {entry}: {name} has no flow, agent or prompt named `{entry}`{hint}"));
        }
    }
    problems
}

/// The problems of the models the cases will call: `overrides` (`--model`)
/// or else each workload's own, and the judges' and grading flows'. `live`:
/// the calls go to the providers (not a replay), so their keys must be set.
pub fn models(workloads: &[(String, Arc<Compiled>)], overrides: &[String], cases: &[Case], live: bool) -> Vec<String> {
    let mut used: Vec<(String, String)> = Vec::new();
    let mut add = |model: &str, who: String| {
        if !used.iter().any(|(m, _)| m == model) {
            used.push((model.to_string(), who));
        }
    };
    if overrides.is_empty() {
        for (name, program) in workloads {
            program.models.values().for_each(|m| add(&m.id, name.clone()));
        }
    } else {
        overrides.iter().for_each(|m| add(m, "--model".to_string()));
    }
    for case in cases {
        for scorer in &case.expect {
            match scorer {
                Scorer::Judge(judge) => add(&judge.model, format!("the judge of case {}", case.id)),
                Scorer::Flow(flow) => {
                    for m in flow.program.iter().flat_map(|p| p.models.values()) {
                        add(&m.id, format!("the grading flow {} of case {}", flow.path.display(), case.id));
                    }
                }
                _ => {}
            }
        }
    }
    let router = match HttpClient::new(HttpOptions::default()) {
        Ok(http) => Router::from_env(http),
        Err(e) => return vec![format!("cannot make an HTTP client for the models: {e}")],
    };
    let mut problems = Vec::new();
    for (model, who) in used {
        match router.resolve(&model) {
            Err(e @ (LlmError::UnknownProvider { .. } | LlmError::InvalidModel { .. })) => {
                problems.push(format!("{who}: {e}"))
            }
            Err(e) if live => problems.push(format!("{who} calls {model}: {e}")),
            _ => {}
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::dataset::parse_jsonl;

    fn compiled(dir: &Path, name: &str, text: &str) -> (String, Arc<Compiled>) {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let program = sr_runtime::workload::load(&mut sr_hir::RootDatabase::default(), &path).map_err(|_| "compile");
        (name.to_string(), program.unwrap())
    }

    #[test]
    fn entries_must_be_flows_agents_or_prompts_of_every_workload() {
        let dir = tempfile::tempdir().unwrap();
        let helper = compiled(dir.path(), "helper.sr", sr_testing::HELPER_WORKLOAD);
        assert!(entries(std::slice::from_ref(&helper), &[]).is_empty());
        let all = ["main".into(), "helper".into(), "helper_instruction".into()];
        assert!(entries(std::slice::from_ref(&helper), &all).is_empty());
        assert_eq!(
            entries(std::slice::from_ref(&helper), &["mian".into(), "zzz".into()]),
            [
                "--entry mian: helper.sr has no flow, agent or prompt named `mian`: did you mean `main`?",
                "--entry zzz: helper.sr has no flow, agent or prompt named `zzz` (it has: main, helper, helper_instruction)",
            ]
        );
    }

    #[test]
    fn every_model_called_must_name_a_provider_and_live_ones_their_key() {
        let dir = tempfile::tempdir().unwrap();
        let helper = compiled(dir.path(), "helper.sr", sr_testing::HELPER_WORKLOAD);
        let judged = r#"{"id": "c1", "prompt": "p", "expect": [{"judge": "ok?", "model": "nowhere/m"}]}"#;
        let cases = parse_jsonl(judged, Path::new("t.jsonl"), dir.path()).unwrap();
        let workloads = [helper];
        let problems = models(&workloads, &["banana/x".into()], &cases, false);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("--model: cannot tell the provider of model `banana/x`"), "{problems:?}");
        assert!(problems[1].starts_with("the judge of case c1: cannot tell the provider"), "{problems:?}");
        // An id that could leave its place in a URL is a problem, replayed or not.
        let hostile = models(&workloads, &["gemini/../x".into()], &[], false);
        assert_eq!(hostile, ["--model: model id \"gemini/../x\" is not valid: it contains `..`"]);
        // A replay needs no key; a live run does (the test's environment may have one).
        assert!(models(&workloads, &[], &[], false).is_empty());
        let keyless = models(&workloads, &["xai/grok".into()], &[], true);
        if std::env::var_os("XAI_API_KEY").is_none() {
            assert_eq!(keyless, ["--model calls xai/grok: xai: no API key configured: set XAI_API_KEY"]);
        }
    }
}
