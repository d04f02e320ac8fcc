//! `sr try --save-case`: the run appended to an `sr eval` dataset as a case
//! (the message, the inputs as `vars`, the reply as an `equals` expectation),
//! which `sr eval DATASET --workload FILE --entry ITEM` runs again.

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use super::Outcome;

#[derive(Serialize)]
struct SavedCase<'a> {
    id: String,
    prompt: &'a str,
    #[serde(skip_serializing_if = "sr_runtime::eval::Vars::is_empty")]
    vars: &'a sr_runtime::eval::Vars,
    expect: Vec<Value>,
}

/// Appends `outcome` to `dataset` (created when missing) and returns the
/// case's id: the item's name, or `NAME-2`, `NAME-3`, … when taken. A
/// dataset `sr eval` would refuse is left as it is.
pub fn append(dataset: &Path, outcome: &Outcome) -> Result<String, String> {
    let yaml = match dataset.extension().and_then(|e| e.to_str()) {
        Some("jsonl") => false,
        Some("yaml" | "yml") => true,
        _ => return Err(format!("--save-case {}: a dataset is a .jsonl or .yaml file", dataset.display())),
    };
    let taken: Vec<String> = match dataset.exists() {
        true => match sr_eval::dataset::load(dataset) {
            Ok(read) => read.cases.into_iter().map(|c| c.id).collect(),
            Err(problems) => {
                let first = problems.first().map(ToString::to_string).unwrap_or_default();
                return Err(format!("--save-case: not adding to a dataset with problems: {first}"));
            }
        },
        false => Vec::new(),
    };
    let id = (1..)
        .map(|n| if n == 1 { outcome.item.clone() } else { format!("{}-{n}", outcome.item) })
        .find(|id| !taken.contains(id))
        .expect("some numbered id is free");
    let reply = outcome.reply.clone().unwrap_or(Value::Null);
    let case = SavedCase {
        id: id.clone(),
        prompt: &outcome.message,
        vars: &outcome.inputs,
        expect: vec![json!({"equals": reply})],
    };
    let text = if yaml {
        serde_norway::to_string(&[case]).map_err(|e| format!("--save-case: {e}"))?
    } else {
        format!("{}\n", serde_json::to_string(&case).expect("a case is plain JSON data"))
    };
    let before = std::fs::read(dataset).unwrap_or_default();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dataset)
        .map_err(|e| format!("--save-case: cannot open {}: {e}", dataset.display()))?;
    let separator = if before.is_empty() || before.ends_with(b"\n") { "" } else { "\n" };
    file.write_all(format!("{separator}{text}").as_bytes())
        .map_err(|e| format!("--save-case: cannot write {}: {e}", dataset.display()))?;
    Ok(id)
}
