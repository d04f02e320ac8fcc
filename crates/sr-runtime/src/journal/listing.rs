//! A journal as a person reads it: one line per step, in the order the run
//! made them (`sr sessions show ID --steps`), so that `--from STEP` can be
//! chosen.

use std::collections::HashSet;

use serde_json::Value;

use super::ParseError;
use super::entry::{
    END_KIND, FILES_KIND, FORK_KIND, IN_DOUBT_KIND, TOOL_KIND, TOOL_START_KIND, VALUE_KIND, shown, shown_args,
};

/// The steps of journal `text`: `   3  main/3.1#0  tool write_file {"path":"a.txt"} → ok, 1 file changed`.
pub fn steps(text: &str) -> Result<Vec<String>, ParseError> {
    let mut out = Vec::new();
    let mut finished: HashSet<(String, u64)> = HashSet::new();
    let mut started: Vec<(usize, String, u64, String)> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry: Value =
            serde_json::from_str(line).map_err(|source| ParseError::NotJson { line: index + 1, source })?;
        let step = entry["step"].as_u64().unwrap_or(0);
        let at = format!("{}#{}", entry["at"].as_str().unwrap_or("?"), entry["n"].as_u64().unwrap_or(0));
        let what = match entry["kind"].as_str().unwrap_or_default() {
            sr_llm::LLM_KIND => model(&entry),
            TOOL_START_KIND => {
                started.push((out.len(), at.clone(), step, call(&entry)));
                continue;
            }
            TOOL_KIND => {
                finished.insert((at.clone(), step));
                tool(&entry)
            }
            VALUE_KIND => format!(
                "{}({}) → {}",
                entry["source"].as_str().unwrap_or("?"),
                shown_args(&entry["args"]),
                shown(&entry["value"])
            ),
            FORK_KIND => {
                out.push(match entry["from_step"].as_u64() {
                    Some(from) => format!("      live from step {from} on: what follows was done again"),
                    None => format!("      fork: {at} and what follows on its thread are new"),
                });
                continue;
            }
            END_KIND => {
                out.push(format!("      end: {}", entry["status"].as_str().unwrap_or("?")));
                continue;
            }
            FILES_KIND => {
                format!("the call cut off here had changed {} file(s)", entry["files"].as_array().map_or(0, Vec::len))
            }
            IN_DOUBT_KIND => format!(
                "decided {} about the call cut off at step {}",
                entry["decision"].as_str().unwrap_or("?"),
                entry["of"].as_u64().unwrap_or(0)
            ),
            _ => continue,
        };
        out.push(format!("{step:>5}  {at}  {what}"));
    }
    // Calls that started and never returned: the run ended during them.
    for (position, at, step, call) in started.into_iter().rev() {
        if !finished.contains(&(at.clone(), step)) {
            out.insert(position, format!("{step:>5}  {at}  {call} → cut off"));
        }
    }
    Ok(out)
}

fn call(entry: &Value) -> String {
    format!("tool {} {}", entry["name"].as_str().unwrap_or("?"), shown(&entry["args"]))
}

fn tool(entry: &Value) -> String {
    // Builtin tools report a failure as a value: `{"result": "failure", "error": …}`.
    let result = &entry["result"];
    let outcome = match entry.get("error").and_then(Value::as_str) {
        Some(error) => format!("error: {}", cut(error)),
        None if result["result"] == "failure" => {
            format!("failure: {}", cut(result["error"].as_str().unwrap_or(&result.to_string())))
        }
        None => "ok".to_string(),
    };
    let files = entry["files"].as_array().map_or(0, Vec::len);
    let changed = match files {
        0 => String::new(),
        1 => ", 1 file changed".to_string(),
        n => format!(", {n} files changed"),
    };
    format!("{} → {outcome}{changed}", call(entry))
}

fn model(entry: &Value) -> String {
    let name = entry["request"]["model"].as_str().unwrap_or("?");
    let mut text = String::new();
    let mut calls = Vec::new();
    for event in entry["events"].as_array().into_iter().flatten() {
        match event["type"].as_str() {
            Some("text_delta") => text.push_str(event["data"].as_str().unwrap_or_default()),
            Some("tool_call") => calls.push(event["data"]["name"].as_str().unwrap_or("?").to_string()),
            _ => {}
        }
    }
    let answer = match (entry.get("error"), entry["cancelled"] == true) {
        (Some(error), _) if !error.is_null() => format!("error: {}", cut(&error.to_string())),
        (_, true) => "cancelled".to_string(),
        _ if !calls.is_empty() => format!("calls {}", calls.join(", ")),
        _ => shown(&Value::String(text)),
    };
    format!("model {name} → {answer}")
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(120) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_step_reads_as_a_line() {
        let text = [
            r#"{"kind":"meta","format":2,"invocation_id":"i","workload":"w.sr","input":"go"}"#,
            r#"{"kind":"value","at":"main","n":0,"step":1,"source":"uuid","args":[],"value":"u-1"}"#,
            r#"{"kind":"tool_start","at":"main","n":1,"step":2,"name":"write_file","args":{"path":"a"}}"#,
            r#"{"kind":"tool","at":"main","n":1,"step":2,"name":"write_file","args":{"path":"a"},"result":"ok","files":[{}]}"#,
            r#"{"kind":"llm","version":1,"at":"main/2.0","n":0,"step":3,"request":{"model":"m"},"events":[{"type":"text_delta","data":"hi"}]}"#,
            r#"{"kind":"tool_start","at":"main/2.1","n":0,"step":4,"name":"slow","args":{}}"#,
            r#"{"kind":"files","at":"main/2.1","n":0,"step":5,"files":[{}, {}]}"#,
            r#"{"kind":"in_doubt","at":"main/2.1","n":0,"step":6,"of":4,"decision":"retry","key":"i:main/2.1#0:4"}"#,
            r#"{"kind":"fork","from_step":3}"#,
            r#"{"kind":"end","status":"failed"}"#,
        ]
        .join("\n");
        expect_test::expect![[r#"
            1  main#0  uuid() → "u-1"
            2  main#1  tool write_file {"path":"a"} → ok, 1 file changed
            3  main/2.0#0  model m → "hi"
            4  main/2.1#0  tool slow {} → cut off
            5  main/2.1#0  the call cut off here had changed 2 file(s)
            6  main/2.1#0  decided retry about the call cut off at step 4
            live from step 3 on: what follows was done again
            end: failed"#]]
        .assert_eq(&steps(&text).unwrap().iter().map(|l| l.trim()).collect::<Vec<_>>().join("\n"));
    }
}
