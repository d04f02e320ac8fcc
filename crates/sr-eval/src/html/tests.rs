use serde_json::json;

use super::*;
use crate::results::Tokens;
use crate::scorer::Score;

fn case(id: &str, model: &str, passed: bool, output: Value, events: Option<&str>) -> CaseResult {
    CaseResult {
        id: id.into(),
        workload: "review.sr".into(),
        entry: None,
        model: Some(model.into()),
        passed,
        score: if passed { 1.0 } else { 0.0 },
        scores: vec![Score { kind: "contains".into(), passed, score: 0.0, detail: "the output <b>".into() }],
        output,
        error: None,
        tokens: Tokens { input: 100, output: 10 },
        cost_usd: None,
        latency_ms: 5,
        model_calls: 1,
        events: events.map(str::to_string),
    }
}

#[test]
fn the_page_has_a_row_and_bars_per_variant_and_every_case_with_its_transcript() {
    let out = tempfile::tempdir().unwrap();
    let events = "cases/c1/review/a/events.jsonl";
    std::fs::create_dir_all(out.path().join("cases/c1/review/a")).unwrap();
    let mut lines = vec![json!({"seq": 1, "invocation_id": "i", "path": ["flow:main"], "type": "tool_call", "tool": "read_file", "args": {"path": "<x>"}}).to_string()];
    lines.extend((0..70).map(|i| json!({"seq": i + 2, "path": [], "type": "log", "message": i}).to_string()));
    lines.push("not json".to_string());
    std::fs::write(out.path().join(events), lines.join("\n")).unwrap();
    let mut dear = case("c1", "b", true, json!({"found": 1}), None);
    dear.cost_usd = Some(0.02);
    let results = Results::of(vec![
        case("c1", "a", false, json!("<script>alert(1)</script>"), Some(events)),
        case("c2", "a", true, json!("ok"), Some("cases/missing/events.jsonl")),
        dear,
    ]);
    let page = report(&results, out.path());

    let table = &page[page.find("<table id=\"summary\">").unwrap()..page.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr><td>").count(), 2);
    assert!(table.contains("<td>review.sr × a</td><td>1/2</td><td>50.0%</td>"), "{table}");
    assert!(table.contains("<td>0.0200</td>"), "{table}");
    // Pass rate of 300 px; the cost bar is relative to the dearest variant.
    assert!(page.contains("<h2>Pass rate and cost</h2>"));
    assert!(page.contains("class=\"pass-rate\" x=\"260\" y=\"10\" width=\"150.0\""), "{page}");
    assert!(page.contains("class=\"cost\" x=\"260\" y=\"28\" width=\"0.0\""), "{page}");
    assert!(page.contains("class=\"cost\" x=\"260\" y=\"72\" width=\"300.0\""), "{page}");
    assert_eq!(page.matches("<details class=\"case ").count(), 3);
    assert!(
        page.contains("<details class=\"case fail\"><summary>c1 — review.sr × a — FAIL (score 0.00, 5 ms)</summary>")
    );

    // Everything from the run is escaped, and nothing is fetched.
    assert!(!page.contains("<script") && page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("✗ contains (0.00): the output &lt;b&gt;"));
    assert!(!page.contains(" src=") && !page.contains(" href=") && !page.contains("@import"));
    assert_eq!(page.matches("://").count(), 1, "no address but the SVG namespace");
    assert!(page.contains(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
    ));

    let transcript = &page[page.find("<ol class=\"transcript\">").unwrap()..];
    let transcript = &transcript[..transcript.find("</ol>").unwrap()];
    assert_eq!(transcript.matches("<li>").count(), MAX_EVENTS);
    assert!(transcript.starts_with(
        "<ol class=\"transcript\"><li><b>tool_call</b> [&quot;flow:main&quot;] {&quot;args&quot;:{&quot;path&quot;:&quot;&lt;x&gt;&quot;},&quot;tool&quot;:&quot;read_file&quot;}</li>"
    ), "{transcript}");
    assert!(page.contains("<p>12 more event(s) in "), "the 11 logs past the cap and the bad line");
    assert!(page.contains("<p>no transcript</p>"));
}
