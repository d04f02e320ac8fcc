//! What the debug console shows: streamed text in batches, the run's result,
//! and values too long to preview.

use sr_runtime::scripted::{Reply, ScriptedProvider, instruction_contains};

use super::Harness;
use crate::output::BATCH;
use crate::variables::MAX_STRING;

const TALKER: &str = "\
streetrace v1

model main = openai/test

prompt talk_instruction: \"\"\"Talk.\"\"\"

agent talker:
    instruction talk_instruction

flow main:
    $reply = run agent talker with \"go\"
    return len($reply)
";

/// A 1 MB reply streamed as 125,000 deltas is about a hundred output events
/// (one per 16 KiB, plus one per 20 ms the stream took; 96 on a debug build).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_streamed_reply_is_batched() {
    let reply = "x ".repeat(500_000);
    let provider = ScriptedProvider::new().always(instruction_contains("Talk"), Reply::Text(reply.clone()));
    let mut h = Harness::new(TALKER, provider);
    h.start(false);
    assert_eq!(h.terminated().await, 0);
    let batches: Vec<&str> = h.output.iter().filter(|(c, _)| c == "stdout").map(|(_, t)| t.as_str()).collect();
    assert_eq!(batches.concat(), format!("{reply}\n"), "every byte, in order");
    assert!(batches.len() < 1_000, "{} output events", batches.len());
    assert!(batches.iter().all(|b| b.len() < BATCH + 16), "no batch much over the limit");
    assert!(h.output("console").contains("run completed: 1000000\n"));
}

/// A value cut at 10,000 characters in previews: expanding it, or copying
/// it (`clipboard`), gives all of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_value_expands_and_copies_whole() {
    let source = "streetrace v1\n\nflow main:\n    $long = \"ab\" * 12000\n    log len($long)\n";
    let mut h = Harness::new(source, ScriptedProvider::new());
    h.lines(vec![super::line(5)]);
    h.start(false);
    h.stopped().await;
    let long = h.var(super::MAIN, "long").unwrap();
    assert_eq!(long.value.chars().count(), 1 + MAX_STRING + 1, "a quote, the first 10,000 characters, an ellipsis");
    assert_eq!(long.indexed_variables, Some(3));
    let pieces = h.children(long.variables_reference);
    let names: Vec<&str> = pieces.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["[0..10000]", "[10000..20000]", "[20000..30000]"]);
    let text: String = pieces.iter().map(|v| serde_json::from_str::<String>(&v.value).unwrap()).collect();
    assert_eq!(text, "ab".repeat(12_000));
    let frame = Some(h.frame_id(super::MAIN, 0));
    assert_eq!(h.evaluate_in(frame, "$long", Some("clipboard")), Ok("ab".repeat(12_000)));
    assert_eq!(h.evaluate_in(frame, "$long", Some("watch")).unwrap().chars().count(), MAX_STRING + 2);
    h.cont();
    assert_eq!(h.terminated().await, 0);
}
