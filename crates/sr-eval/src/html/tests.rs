use serde_json::json;

use super::*;
use crate::results::Tokens;
use crate::scorer::{Score, Tally};

fn case(id: &str, model: &str, passed: bool, output: Value, events: Option<&str>) -> CaseResult {
    CaseResult {
        id: id.into(),
        workload: "a/very/long/path/to/the/benchmark/workloads/review.sr".into(),
        entry: None,
        model: Some(model.into()),
        epoch: 1,
        passed,
        score: if passed { 1.0 } else { 0.0 },
        scores: vec![Score::new("contains", passed, "the output <b>".into())],
        output,
        error: None,
        tokens: Tokens { input: 100, output: 10 },
        cost_usd: None,
        latency_ms: 5,
        model_calls: 1,
        events: events.map(str::to_string),
        run: None,
    }
}

/// The events of a one-agent run that reads a file, with setup around the
/// model and tool steps and `noise` log events after them.
fn events(noise: usize) -> String {
    let path = json!(["flow:main", "agent:reviewer"]);
    let usage = json!({"input_tokens": 180, "output_tokens": 20});
    let mut lines = vec![
        json!({"seq": 1, "invocation_id": "i", "path": [], "type": "run_started", "workload": "review.sr", "entry": "flow main", "input": "Review"}),
        json!({"seq": 2, "path": ["flow:main"], "type": "flow_started", "flow": "main"}),
        json!({"seq": 3, "path": path, "type": "model_request", "model": "openai/gpt-4o-mini", "messages": 1, "tools": ["read_file"]}),
        json!({"seq": 4, "path": path, "type": "text_delta", "text": "x"}),
        json!({"seq": 5, "path": path, "type": "model_response", "model": "openai/gpt-4o-mini", "text": "", "tool_calls": ["read_file"], "finish_reason": "tool_calls", "usage": usage}),
        json!({"seq": 6, "path": path, "type": "tool_call", "call_id": "c1", "tool": "read_file", "args": {"path": "<x>"}}),
        json!({"seq": 7, "path": path, "type": "tool_result", "call_id": "c1", "tool": "read_file", "result": "def f(): pass", "is_error": false}),
        json!({"seq": 8, "path": path, "type": "model_request", "model": "openai/gpt-4o-mini", "messages": 3, "tools": []}),
        json!({"seq": 9, "path": path, "type": "model_response", "model": "openai/gpt-4o-mini", "text": "[{\"line\": 3}]", "tool_calls": [], "finish_reason": "stop", "usage": usage}),
    ];
    lines.extend((0..noise).map(|i| json!({"seq": 10 + i, "path": [], "type": "log", "message": i})));
    lines.push(json!({"seq": 999, "path": [], "type": "run_finished", "status": "completed", "result": null, "error": null, "usage": usage}));
    let mut text: Vec<String> = lines.iter().map(Value::to_string).collect();
    text.push("not json".to_string());
    text.join("\n")
}

#[test]
fn the_page_has_a_row_and_bars_per_variant_and_every_case_with_its_transcript() {
    let out = tempfile::tempdir().unwrap();
    let file = "cases/c1/review/a/events.jsonl";
    std::fs::create_dir_all(out.path().join("cases/c1/review/a")).unwrap();
    std::fs::write(out.path().join(file), events(70)).unwrap();
    let mut dear = case("c1", "b", true, json!({"found": 1}), None);
    dear.cost_usd = Some(0.02);
    let results = Results::of(vec![
        case("c1", "a", false, json!("<script>alert(1)</script>"), Some(file)),
        case("c2", "a", true, json!("ok"), Some("cases/missing/events.jsonl")),
        dear,
    ]);
    let page = report(&results, out.path());

    let table = &page[page.find("<table id=\"summary\">").unwrap()..page.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr><td>").count(), 2);
    let full = "a/very/long/path/to/the/benchmark/workloads/review.sr × a";
    assert!(
        table.contains(&format!(
            "<td><span title=\"{full}\">review × a</span></td><td>2</td><td>1/2</td><td>50.0% [9.5, 90.5]</td>"
        )),
        "{table}"
    );
    assert!(table.contains("<td>0.0200</td>"), "{table}");
    // Each variant's name on a line of its own, its figures in bars below it, intervals as whiskers.
    let chart = &page[page.find("<svg id=\"chart\"").unwrap()..page.find("</svg>").unwrap()];
    assert!(chart.contains(&format!("<text class=\"variant\" x=\"0\" y=\"15.0\" font-size=\"13\" font-weight=\"bold\"><title>{full}</title>review × a</text>")), "{chart}");
    assert!(chart.contains("<rect class=\"pass-rate\" x=\"100\" y=\"22.0\" width=\"200.0\""), "{chart}");
    assert!(chart.contains("<rect class=\"cost\" x=\"100\" y=\"62.0\" width=\"0.0\""), "{chart}");
    assert!(chart.contains("<rect class=\"cost\" x=\"100\" y=\"156.0\" width=\"400.0\""), "{chart}");
    assert_eq!(chart.matches("<g class=\"ci\"").count(), 4, "pass rate and mean score of each variant");
    assert!(!chart.contains("class=\"f1\""), "no findings, no F1 bar");
    assert_eq!(page.matches("<details class=\"case ").count(), 3);
    assert!(page.contains(
        "<details class=\"case fail failed-contains\"><summary>c1 — a/very/long/path/to/the/benchmark/workloads/review.sr × a — FAIL (score 0.00, 5 ms)</summary>"
    ));

    // Everything from the run is escaped, and nothing is fetched.
    assert!(!page.contains("<script") && page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("✗ contains (0.00): the output &lt;b&gt;"));
    assert!(!page.contains(" src=") && !page.contains(" href=") && !page.contains("@import"));
    assert_eq!(page.matches("://").count(), 1, "no address but the SVG namespace");
    assert!(page.contains(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
    ));
    assert!(page.contains("<p>no transcript</p>"));
}

#[test]
fn a_transcript_shows_the_model_and_tool_steps_first_and_folds_the_rest() {
    let out = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join("events.jsonl"), events(70)).unwrap();
    let mut page = String::new();
    let jail = Jail::read_only(out.path()).unwrap();
    transcript::transcript(&mut page, Some(&jail), Path::new("events.jsonl"));
    let steps = &page[page.find("<ol class=\"steps\">").unwrap()..page.find("</ol>").unwrap()];
    assert_eq!(steps.matches("<li").count(), 3, "{steps}");
    assert!(steps.starts_with(
        "<ol class=\"steps\"><li class=\"step-model\"><b>model</b> openai/gpt-4o-mini · flow:main › agent:reviewer · 180/20 tokens · tool_calls · calls read_file</li>\
         <li class=\"step-tool\"><b>tool</b> read_file({&quot;path&quot;:&quot;&lt;x&gt;&quot;}) · flow:main › agent:reviewer<br>→ def f(): pass</li>\
         <li class=\"step-model\"><b>model</b> openai/gpt-4o-mini · flow:main › agent:reviewer · 180/20 tokens · stop<br>[{&quot;line&quot;: 3}]</li>"
    ), "{steps}");
    let other = &page[page.find("<details class=\"other\">").unwrap()..];
    assert!(
        other.starts_with("<details class=\"other\"><summary>73 other event(s)"),
        "run, flow, 70 logs, end: {other}"
    );
    assert_eq!(other.matches("<li>").count(), 60);
    assert!(other.contains("<li><b>run_started</b>  {&quot;workload&quot;:&quot;review.sr&quot;"), "{other}");
    assert!(other.contains("<p>13 more in "), "{other}");
}

#[test]
fn a_failed_run_shows_its_error_as_a_step() {
    let out = tempfile::tempdir().unwrap();
    let lines = [
        json!({"path": ["flow:main"], "type": "error", "message": "boom", "location": null}),
        json!({"path": [], "type": "run_finished", "status": "failed", "result": null, "error": "boom", "usage": {"input_tokens": 0, "output_tokens": 0}}),
    ];
    std::fs::write(out.path().join("e.jsonl"), lines.map(|l| l.to_string()).join("\n")).unwrap();
    let mut page = String::new();
    let jail = Jail::read_only(out.path()).unwrap();
    transcript::transcript(&mut page, Some(&jail), Path::new("e.jsonl"));
    assert!(page.contains("<li class=\"step-error\"><b>error</b> · flow:main<br>{&quot;message&quot;:&quot;boom&quot;,&quot;location&quot;:null}</li><li class=\"step-error\"><b>run</b> failed<br>boom</li>"), "{page}");
    assert!(!page.contains("<details class=\"other\">"));
}

#[test]
fn cases_are_filtered_by_outcome_and_failed_scorer_with_css_alone() {
    let mut failing = case("c1", "a", false, json!(1), None);
    let tally = Tally { matched: 0, expected: 1, reported: 0 };
    let mut findings = Score::new("findings", false, "missed".into());
    findings.findings = Some(tally);
    failing.scores.push(findings);
    let mut odd = case("c2", "a", true, json!(1), None);
    odd.scores.push(Score::new("x\"><script>", false, "hand-edited".into()));
    let page = report(&Results::of(vec![failing, odd]), Path::new("."));
    for radio in [
        "outcome-all\" checked",
        "outcome-pass\"",
        "outcome-fail\"",
        "scorer-any\" checked",
        "scorer-contains\"",
        "scorer-findings\"",
    ] {
        assert!(
            page.contains(&format!(
                "<input type=\"radio\" name=\"{}\" id=\"{radio}",
                &radio[..radio.find('-').unwrap()]
            )),
            "{radio}"
        );
    }
    assert!(page.contains("#scorer-findings:checked~#cases .case:not(.failed-findings){display:none}"));
    assert!(page.contains("<details class=\"case fail failed-contains failed-findings\">"));
    // A kind that cannot name a class gets no filter and no class.
    assert!(!page.contains("<script") && page.contains("<details class=\"case pass\">"));
    // The F1 bar appears with findings, with n/a for the variant's undefined figure... here F1 is 0.
    assert!(page.contains("<rect class=\"f1\""));
}

/// Results name their events files; results from elsewhere must not bring a
/// file outside the output directory into the page: not by an absolute path,
/// not by `..`, not through a symlink.
#[test]
fn a_transcript_is_never_read_from_outside_the_output_directory() {
    let root = tempfile::tempdir().unwrap();
    let (out, outside) = (root.path().join("out"), root.path().join("secret.jsonl"));
    std::fs::create_dir_all(&out).unwrap();
    let secret = json!({"path": ["flow:main"], "type": "log", "message": "SECRET-TOKEN"}).to_string();
    std::fs::write(&outside, &secret).unwrap();
    std::os::unix::fs::symlink(&outside, out.join("linked.jsonl")).unwrap();
    std::fs::write(out.join("inside.jsonl"), &secret).unwrap();
    for (events, shown) in [
        (outside.display().to_string(), false),
        ("../secret.jsonl".to_string(), false),
        ("linked.jsonl".to_string(), false),
        ("inside.jsonl".to_string(), true),
    ] {
        let page = report(&Results::of(vec![case("c1", "a", true, json!(1), Some(events.as_str()))]), &out);
        assert_eq!(page.contains("SECRET-TOKEN"), shown, "{events}");
        assert_eq!(page.contains("<p>no transcript</p>"), !shown, "{events}");
    }
}

#[test]
fn the_compare_page_has_the_verdict_the_gate_and_changed_cases_side_by_side() {
    let (base_dir, new_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let file = "cases/c0/review/a/events.jsonl";
    for dir in [&base_dir, &new_dir] {
        std::fs::create_dir_all(dir.path().join("cases/c0/review/a")).unwrap();
        std::fs::write(dir.path().join(file), events(0)).unwrap();
    }
    // c0 passed and now fails; six more cases fail on both sides.
    let side = |first: bool| {
        let mut cases = vec![case("c0", "a", first, json!("x"), Some(file))];
        cases.extend((1..7).map(|i| case(&format!("c{i}"), "a", false, json!("x"), None)));
        Results::of(cases)
    };
    let (base, new) = (side(true), side(false));
    let options = crate::compare::Options {
        rules: vec![crate::compare::Rule::parse("pass_rate drop > 2 points").unwrap()],
        significance: 0.05,
        allow_missing: false,
        variants: None,
    };
    let comparison = crate::compare::compare(&base, &new, &options).unwrap();
    let page = compare::page(&comparison, (&base, base_dir.path()), (&new, new_dir.path()));
    assert!(page.contains("<h1>Comparison: the gate passes</h1>"), "{page}");
    assert!(
        page.contains(
            "<p class=\"verdict\">review, new vs base: no significant difference in pass rate (-14.3 points, p = 1.0)"
        ),
        "{page}"
    );
    assert!(page.contains("<td>pass_rate drop &gt; 2 points</td><td>a/very/long/path/to/the/benchmark/workloads/review.sr × a</td><td>14.286</td><td>1.0</td><td class=\"gate-pass\">pass</td>"), "{page}");
    assert!(page.contains("<tr><td>pass rate</td><td>14.286</td><td>0.000</td><td>-14.286</td><td>[-"), "{page}");
    // The case that changed: its base run (PASS) and new run (FAIL), each with its transcript.
    let changed = &page[page.find("<h2>Cases that changed (1)</h2>").unwrap()..];
    let (left, right) = changed.split_at(changed.find("<h3>new: ").unwrap());
    assert!(left.contains("<h3>base: ") && left.contains("epoch 1: PASS") && left.contains("read_file"), "{left}");
    assert!(right.contains("epoch 1: FAIL") && right.contains("read_file"), "{right}");
}
