use std::path::Path;
use std::sync::Arc;

use futures::executor::block_on;
use serde_json::{Value, json};
use sr_runtime::event::{Event, Payload};
use sr_runtime::scripted::{Reply, ScriptedProvider, user_says};

use super::*;

fn scorer(spec: Value) -> Scorer {
    parse(&spec).unwrap()
}

fn refused(spec: Value) -> String {
    parse(&spec).unwrap_err()
}

/// No judge model: only `judge` scorers ask for one.
const NO_JUDGE: &JudgeModel = &Err(NoJudge::NotAsked);

/// What a scorer sees of a run with this output, work directory and events.
fn seen<'a>(output: Option<&'a Value>, work_dir: &'a Path, events: &'a [Event]) -> Observed<'a> {
    Observed { output, work_dir, events, prompt: "", judge: NO_JUDGE }
}

fn event(payload: Payload) -> Event {
    Event { seq: 0, invocation_id: "i".into(), path: vec![], at_ms: None, payload }
}

/// (passed, score) of `spec` on `output`, with no files and no events.
fn on(spec: Value, output: Value) -> (bool, f64) {
    let dir = tempfile::tempdir().unwrap();
    let s = block_on(scorer(spec).score(&seen(Some(&output), dir.path(), &[])));
    (s.passed, s.score)
}

const PASS: (bool, f64) = (true, 1.0);
const FAIL: (bool, f64) = (false, 0.0);

#[test]
fn equals_compares_values_and_trimmed_strings() {
    assert_eq!(on(json!({"equals": "shipped"}), json!(" shipped\n")), PASS);
    assert_eq!(on(json!({"equals": "shipped"}), json!("shipped!")), FAIL);
    assert_eq!(on(json!({"equals": {"a": 1}}), json!({"a": 1})), PASS);
    // A string holding JSON equals that JSON.
    assert_eq!(on(json!({"equals": {"a": 1}}), json!("{\"a\": 1}")), PASS);
    assert_eq!(on(json!({"equals": 7}), json!(8)), FAIL);
}

#[test]
fn contains_and_regex_read_the_output_as_text() {
    assert_eq!(on(json!({"contains": "shipped"}), json!("order 7 has shipped")), PASS);
    assert_eq!(on(json!({"contains": "shipped"}), json!("order 7 is pending")), FAIL);
    assert_eq!(on(json!({"contains": "\"status\":\"ok\""}), json!({"status": "ok"})), PASS);
    assert_eq!(on(json!({"regex": "order\\s+7"}), json!("order  7 shipped")), PASS);
    assert_eq!(on(json!({"regex": "^order 7$"}), json!("order 77")), FAIL);
}

#[test]
fn json_path_finds_values_in_json_outputs_and_json_text() {
    let output = json!("```json\n{\"status\": \"shipped\", \"items\": [{\"sku\": \"A1\"}]}\n```");
    assert_eq!(on(json!({"json_path": "$.status", "equals": "shipped"}), output.clone()), PASS);
    assert_eq!(on(json!({"json_path": "$.status", "equals": "pending"}), output.clone()), FAIL);
    assert_eq!(on(json!({"json_path": "$.items[0].sku", "contains": "A"}), output.clone()), PASS);
    assert_eq!(on(json!({"json_path": "$.items[0].sku", "regex": "^B"}), output.clone()), FAIL);
    assert_eq!(on(json!({"json_path": "$.items"}), output.clone()), PASS);
    assert_eq!(on(json!({"json_path": "$.missing"}), output), FAIL);
    assert_eq!(on(json!({"json_path": "$.status"}), json!("not json")), FAIL);
}

#[test]
fn schema_validates_the_structured_output() {
    let schema =
        json!({"schema": {"type": "object", "required": ["status"], "properties": {"status": {"type": "string"}}}});
    assert_eq!(on(schema.clone(), json!({"status": "ok"})), PASS);
    assert_eq!(on(schema.clone(), json!("{\"status\": \"ok\"}")), PASS);
    assert_eq!(on(schema.clone(), json!({"status": 3})), FAIL);
    assert_eq!(on(schema, json!("plain text")), FAIL);
}

#[test]
fn file_reads_what_the_run_left_in_its_work_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("out")).unwrap();
    std::fs::write(dir.path().join("out/report.txt"), "order 7: shipped\n").unwrap();
    let score = |spec: Value| {
        let s = block_on(scorer(spec).score(&seen(None, dir.path(), &[])));
        (s.passed, s.score)
    };
    assert_eq!(score(json!({"file": "out/report.txt"})), PASS);
    assert_eq!(score(json!({"file": "out/report.txt", "contains": "7"})), PASS);
    assert_eq!(score(json!({"file": "out/report.txt", "contains": "8"})), FAIL);
    assert_eq!(score(json!({"file": "out/report.txt", "regex": "^order \\d+"})), PASS);
    assert_eq!(score(json!({"file": "out/report.txt", "equals": "order 7: shipped"})), PASS);
    assert_eq!(score(json!({"file": "out/report.txt", "equals": "order 8"})), FAIL);
    assert_eq!(score(json!({"file": "missing.txt"})), FAIL);
    // A directory is not a file.
    assert_eq!(score(json!({"file": "out"})), FAIL);
}

#[test]
fn tool_called_reads_the_trajectory() {
    let events = [
        event(Payload::AgentStarted { agent: "triage".into(), model: "m".into(), input: String::new() }),
        event(Payload::ToolCall {
            call_id: "1".into(),
            tool: "read_file".into(),
            args: json!({"path": "a.py", "n": 1}),
        }),
        event(Payload::Transfer { from: "triage".into(), to: "fixer".into() }),
    ];
    let dir = tempfile::tempdir().unwrap();
    let score = |spec: Value| {
        let s = block_on(scorer(spec).score(&seen(None, dir.path(), &events)));
        (s.passed, s.detail)
    };
    assert!(score(json!({"tool_called": "read_file"})).0);
    assert!(score(json!({"tool_called": "read_file", "args": {"path": "a.py"}})).0);
    let (passed, detail) = score(json!({"tool_called": "read_file", "args": {"path": "b.py"}}));
    assert!(!passed);
    assert_eq!(detail, "read_file was called 1 time(s), never with {\"path\":\"b.py\"}");
    assert!(!score(json!({"tool_called": "write_file"})).0);
    assert!(score(json!({"tool_called": "write_file", "called": false})).0);
    assert!(!score(json!({"tool_called": "read_file", "called": false})).0);
    // Agents count, whether run or transferred to.
    assert!(score(json!({"tool_called": "triage"})).0);
    assert!(score(json!({"tool_called": "fixer"})).0);
}

#[test]
fn findings_score_is_f1_and_passes_at_min_f1() {
    let expected = json!([{"file": "a.py", "line": 10}, {"file": "a.py", "line": 30}]);
    let half = json!([{"file": "a.py", "line": 11}]);
    let (passed, score) = on(json!({"findings": expected, "tolerance": 2}), half.clone());
    assert!(!passed, "the default min_f1 is 1");
    assert!((score - 2.0 / 3.0).abs() < 1e-9, "{score}");
    assert!(on(json!({"findings": expected, "tolerance": 2, "min_f1": 0.6}), half.clone()).0);
    assert_eq!(on(json!({"findings": expected, "tolerance": 0}), half), FAIL);
    let both = json!({"findings": [{"file": "a.py", "line": 10}, {"file": "a.py", "line": 29}]});
    assert_eq!(on(json!({"findings": expected, "tolerance": 1}), both), PASS);

    // Nothing reported: precision is undefined, not 0; the counts are kept for the summary.
    let dir = tempfile::tempdir().unwrap();
    let silent = json!({"findings": []});
    let s = block_on(scorer(json!({"findings": expected})).score(&seen(Some(&silent), dir.path(), &[])));
    assert_eq!(s.detail, "precision n/a recall 0.00 F1 0.00 (0 of 2 expected, 0 reported)");
    assert_eq!(s.findings, Some(Tally { matched: 0, expected: 2, reported: 0 }));
    // Nothing expected and nothing reported: the sides agree.
    let s = block_on(scorer(json!({"findings": []})).score(&seen(Some(&silent), dir.path(), &[])));
    assert_eq!(
        (s.passed, s.score, s.detail.as_str()),
        (true, 1.0, "precision n/a recall n/a F1 n/a (0 of 0 expected, 0 reported)")
    );
    // A scorer that never saw the run misses every expected finding.
    let unscored = scorer(json!({"findings": expected})).unscored("timeout");
    assert_eq!((unscored.passed, unscored.detail.as_str()), (false, "not scored: timeout"));
    assert_eq!(unscored.findings, Some(Tally { matched: 0, expected: 2, reported: 0 }));
}

#[test]
fn bad_scorers_are_refused_with_the_field() {
    for (spec, error) in [
        (json!("contains"), "a scorer is an object keyed by its name"),
        (json!({"containz": "x"}), "unknown scorer `containz`: did you mean `contains`?"),
        (json!({"tool_caled": "x"}), "unknown scorer `tool_caled`: did you mean `tool_called`?"),
        (json!({"banana": "x", "kiwi": 1}), "unknown scorer {banana, kiwi} (known: equals, contains, regex, json_path"),
        (json!({"regex": "("}), "bad regex \"(\""),
        (json!({"contains": 3}), "`contains` must be a string, not 3"),
        (json!({"contains": "a", "regex": "b"}), "one of equals, contains, regex; found contains and regex"),
        (json!({"file": "a", "json_path": "$"}), "one scorer per entry, found json_path and file"),
        (json!({"json_path": "a.b"}), "expected `$`"),
        (json!({"json_path": "$.a", "regex": "["}), "json_path: bad regex"),
        (json!({"file": "a", "size": 3}), "file: unknown key `size` (known: file, equals, contains, regex)"),
        (json!({"findings": [], "tolerence": 1}), "findings: unknown key `tolerence`: did you mean `tolerance`?"),
        (json!({"file": 1}), "`file` must be a string"),
        (json!({"tool_called": "t", "called": "yes"}), "`called` must be true or false"),
        (json!({"tool_called": "t", "args": [1]}), "`args` must be an object"),
        (json!({"findings": [{"file": "a"}]}), "findings: a list of {file, line, category?}"),
        (json!({"findings": [], "min_f1": 2}), "`min_f1` must be a number in 0..1"),
        (json!({"findings": [], "tolerance": -1}), "`tolerance` must be a whole number"),
        (json!({"schema": {"type": "no-such-type"}}), "expect: schema:"),
        (json!({"judge": "is it polite?"}), "expect: judge: `model` must be a string, not null"),
        (json!({"judge": "polite?", "model": "m", "min_score": 2}), "`min_score` must be a number in 0..1, not 2"),
        (json!({"judge": "polite?", "model": "m", "rubric": "x"}), "judge: unknown key `rubric`"),
        (json!({"flow": 3}), "`flow` must be a string, not 3"),
        (json!({"flow": "score.sr", "min_score": -1}), "flow: `min_score` must be a number in 0..1, not -1"),
        (json!({"flow": "score.sr", "judge": "x"}), "one scorer per entry, found judge and flow"),
    ] {
        let got = refused(spec.clone());
        assert!(got.contains(error), "{spec}: {got}");
    }
}

#[test]
fn judge_asks_its_model_with_the_rubric_and_keeps_the_verdict_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    let provider = Arc::new(
        ScriptedProvider::new()
            .always(user_says("polite"), Reply::Text(r#"{"score": 0.8, "reason": "Polite and\n short."}"#.into()))
            .always(user_says("rude"), Reply::Text("```json\n{\"score\": 0.2, \"reason\": \"Curt.\"}\n```".into()))
            .always(user_says("broken"), Reply::Text("I think it is fine".into())),
    );
    let model: JudgeModel = Ok(provider.clone());
    let judge = |rubric: &str, output: &str| {
        let output = json!(output);
        let spec = json!({"judge": rubric, "model": "openai/gpt-4o", "min_score": 0.7});
        let observed =
            Observed { output: Some(&output), work_dir: dir.path(), events: &[], prompt: "greet Ann", judge: &model };
        block_on(scorer(spec).score(&observed))
    };
    let s = judge("Is it polite?", "Hello Ann");
    assert_eq!((s.kind.as_str(), s.passed, s.score), ("judge", true, 0.8));
    assert_eq!(s.detail, "0.80 (pass at 0.70): Polite and short.");
    let request = &provider.requests()[0];
    assert_eq!(request.model, "openai/gpt-4o");
    let asked = request.messages[0].text();
    assert!(asked.contains("Is it polite?") && asked.contains("greet Ann") && asked.contains("Hello Ann"), "{asked}");
    assert!(request.response_schema.is_some());

    let s = judge("Is it rude?", "Go away");
    assert_eq!((s.passed, s.score, s.detail.as_str()), (false, 0.2, "0.20 (pass at 0.70): Curt."));
    let s = judge("broken", "x");
    assert_eq!((s.passed, s.score), (false, 0.0));
    assert_eq!(s.detail, "the judge's answer has no score in 0..1: \"I think it is fine\"");
    let s = judge("nothing scripted", "x");
    assert!(!s.passed && s.detail.starts_with("the judge openai/gpt-4o failed: "), "{}", s.detail);

    let output = json!("x");
    let full = sr_llm::LlmError::Cassette { message: "disk full".into() };
    let none: JudgeModel = Err(NoJudge::Record(sr_runtime::journal::JournalError::Write(Box::new(full))));
    let observed = Observed { output: Some(&output), work_dir: dir.path(), events: &[], prompt: "", judge: &none };
    let s = block_on(scorer(json!({"judge": "r", "model": "m"})).score(&observed));
    assert_eq!((s.passed, s.detail.as_str()), (false, "no judge: cannot write the journal: cassette: disk full"));
}

/// A grading flow that reads the run's output and files and returns
/// `{score, reason}`; a number alone; a failure; and one that writes a file.
const GRADER: &str = r#"tool fs = builtin streetrace.fs

flow main:
    $seen = json_parse($input_prompt)
    $words = len(split(trim(join(values($seen.files), "")), " "))
    if $seen.output == "done":
        return {score: 0.9, reason: "said done, notes have ${words} words"}
    return {score: 0.1, reason: "output: ${seen.output}"}

flow bare:
    return 0.4

flow broken:
    return upper(3)

flow writes:
    $wrote = fs.write_file("graded.txt", "x")
    return 1.0
"#;

#[test]
fn a_flow_grades_the_output_and_files_of_the_run() {
    let dataset = tempfile::tempdir().unwrap();
    std::fs::write(dataset.path().join("grade.sr"), GRADER).unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "one two three\n").unwrap();
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let grade = |spec: Value, output: &str| {
        let Scorer::Flow(mut flow) = scorer(spec) else { panic!("not a flow scorer") };
        flow.load(dataset.path()).unwrap();
        let scorer = Scorer::Flow(flow);
        let output = json!(output);
        tokio.block_on(scorer.score(&seen(Some(&output), work.path(), &[])))
    };
    let s = grade(json!({"flow": "grade.sr", "min_score": 0.8}), "done");
    assert_eq!((s.kind.as_str(), s.passed, s.score), ("flow", true, 0.9));
    assert_eq!(s.detail, "0.90 (pass at 0.80): said done, notes have 3 words");
    let s = grade(json!({"flow": "grade.sr"}), "not yet");
    assert_eq!((s.passed, s.score, s.detail.as_str()), (false, 0.1, "0.10 (pass at 0.50): output: not yet"));
    let s = grade(json!({"flow": "grade.sr", "entry": "bare", "min_score": 0.3}), "x");
    assert_eq!((s.passed, s.score), (true, 0.4));
    let s = grade(json!({"flow": "grade.sr", "entry": "broken"}), "x");
    assert!(!s.passed && s.detail.starts_with("the scoring flow failed: "), "{}", s.detail);
    // Its file tools only read the case's work directory.
    let s = grade(json!({"flow": "grade.sr", "entry": "writes"}), "x");
    assert!(!s.passed && s.detail.starts_with("the scoring flow failed: "), "{}", s.detail);
    assert!(!work.path().join("graded.txt").exists());

    // A missing flow, file or entry is a dataset error before anything runs.
    let load = |spec: Value| {
        let Scorer::Flow(mut flow) = scorer(spec) else { panic!("not a flow scorer") };
        flow.load(dataset.path()).unwrap_err()
    };
    assert!(load(json!({"flow": "nope.sr"})).starts_with("expect: flow: "), "{}", load(json!({"flow": "nope.sr"})));
    assert!(load(json!({"flow": "grade.sr", "entry": "other"})).ends_with("has no flow named 'other'"));
}
