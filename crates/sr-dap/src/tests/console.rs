//! What the debug console shows: streamed text in batches, the run's result,
//! and values too long to preview.

use sr_runtime::scripted::{Reply, ScriptedProvider, instruction_contains};

use super::Harness;
use crate::output::BATCH;

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
