use expect_test::{Expect, expect};
use serde_json::{Value, json};

use super::*;

/// An SSE event of the JSON-RPC result `result`.
fn event(result: Value) -> String {
    format!("data: {}\n\n", json!({"jsonrpc": "2.0", "id": 1, "result": result}))
}

/// What reading `stream` (fed `chunk` bytes at a time) reports, a line per
/// update, then how it ends: the outcome, an error, or `open` (no final state).
fn read(stream: &str, task: Option<&str>, chunk: usize) -> String {
    let (mut sse, mut follow) = (Sse::default(), Follow::new(task));
    let mut lines = Vec::new();
    for bytes in stream.as_bytes().chunks(chunk) {
        let data = match sse.feed(bytes) {
            Ok(data) => data,
            Err(e) => return lines.join("\n") + &format!("\nerror: {e}"),
        };
        for data in data {
            let event: Value = match serde_json::from_str(&data) {
                Ok(event) => event,
                Err(_) => return lines.join("\n") + "\nerror: not JSON",
            };
            match follow.event(&event) {
                Ok((update, end)) => {
                    lines.push(format!("{} {}: {}", update.task_id, update.state, update.text));
                    if let Some(end) = end {
                        return lines.join("\n") + &format!("\n=> {end:?}");
                    }
                }
                Err(e) => return lines.join("\n") + &format!("\nerror: {e}"),
            }
        }
    }
    lines.join("\n") + "\nopen"
}

fn check(stream: &str, task: Option<&str>, expect: Expect) {
    let whole = read(stream, task, usize::MAX);
    // Cut anywhere, the same: a byte at a time.
    assert_eq!(read(stream, task, 1), whole, "fed a byte at a time");
    expect.assert_eq(&whole);
}

fn v10() -> Vec<String> {
    let status = |state: &str, text: &str| {
        json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1",
               "status": {"state": state, "message": {"role": "ROLE_AGENT", "parts": [{"text": text}]}}}})
    };
    vec![
        event(json!({"task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_SUBMITTED"}}})),
        event(status("TASK_STATE_WORKING", "reading the change")),
        event(
            json!({"artifactUpdate": {"taskId": "t-1", "artifact": {"artifactId": "a", "parts": [{"text": "looks "}]}}}),
        ),
        event(
            json!({"artifactUpdate": {"taskId": "t-1", "append": true, "artifact": {"artifactId": "a", "parts": [{"text": "good"}]}}}),
        ),
        event(
            json!({"artifactUpdate": {"taskId": "t-1", "artifact": {"artifactId": "b", "parts": [{"data": {"words": 2}}]}}}),
        ),
        event(status("TASK_STATE_COMPLETED", "")),
    ]
}

#[test]
fn a_1_0_stream_reports_each_update_and_ends_with_what_send_message_gives() {
    check(
        &v10().concat(),
        None,
        expect![[r#"
            t-1 submitted: 
            t-1 working: reading the change
            t-1 working: looks 
            t-1 working: good
            t-1 working: {"words":2}
            t-1 completed: 
            => Answer("looks \ngood\n{\"words\":2}")"#]],
    );
}

#[test]
fn a_0_3_stream_keep_alives_and_other_fields_are_read_too() {
    let update = |state: &str, last: bool| {
        event(
            json!({"kind": "status-update", "taskId": "t", "contextId": "c", "final": last, "status": {"state": state}}),
        )
    };
    let stream = [
        ": keep-alive\r\n\r\n".to_string(),
        "event: message\nid: 1\nretry: 10\n".to_string() + &event(json!({"kind": "task", "id": "t", "status": {"state": "submitted"}})),
        update("working", false),
        event(json!({"kind": "artifact-update", "taskId": "t", "artifact": {"artifactId": "r", "parts": [{"kind": "text", "text": "hi"}]}})),
        // A data field split over two lines is one event.
        update("completed", true).replacen("data: {", "data: {\ndata: ", 1),
    ]
    .concat();
    check(
        &stream,
        None,
        expect![[r#"
            t submitted: 
            t working: 
            t working: hi
            t completed: 
            => Answer("hi")"#]],
    );
}

#[test]
fn a_question_a_failure_a_message_and_an_open_stream_end_as_they_should() {
    let question = event(json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1",
        "status": {"state": "TASK_STATE_INPUT_REQUIRED", "message": {"parts": [{"text": "Which branch?"}]}}}}));
    check(
        &question,
        Some("t-1"),
        expect![[r#"
            t-1 input-required: Which branch?
            => InputRequired { question: "Which branch?", task_id: "t-1", context_id: Some("c-1") }"#]],
    );
    let failed = event(json!({"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_FAILED"}}}));
    check(
        &failed,
        None,
        expect![[r#"
            t-1 failed: 
            => Failed("the remote task is failed")"#]],
    );
    check(
        &event(json!({"message": {"role": "ROLE_AGENT", "parts": [{"text": "hello"}]}})),
        None,
        expect![[r#"
             message: hello
            => Answer("hello")"#]],
    );
    // Ends before a final state: the caller polls the task.
    check(
        &v10()[..2].concat(),
        None,
        expect![[r#"
            t-1 submitted: 
            t-1 working: reading the change
            open"#]],
    );
}

#[test]
fn every_event_of_a_good_stream_made_hostile_is_an_error_that_says_what_came() {
    let good = v10();
    /// How an event is spoiled.
    type Spoil = fn(&str) -> String;
    let ways: [(&str, Spoil); 7] = [
        ("another task", |e| e.replace("\"t-1\"", "\"t-2\"")),
        ("not JSON", |e| e.replacen("data: {", "data: {{", 1)),
        ("not an SSE line", |e| format!("<html>\n{e}")),
        ("no task id", |e| {
            let data = e.trim().strip_prefix("data: ").unwrap_or_default();
            let mut response: Value = serde_json::from_str(data).unwrap_or_default();
            for object in response["result"].as_object_mut().into_iter().flat_map(|r| r.values_mut()) {
                object.as_object_mut().map(|o| (o.remove("id"), o.remove("taskId")));
            }
            format!("data: {response}\n\n")
        }),
        ("an error", |_| {
            event(json!(null)).replace("\"result\":null", "\"error\":{\"code\":-32603,\"message\":\"boom\"}")
        }),
        ("an unknown kind", |e| e.replace("Update\":", "Upd\":").replace("\"task\":", "\"tsk\":")),
        ("not a response", |e| e.replace("\"result\"", "\"resolt\"")),
    ];
    for index in 0..good.len() {
        for (way, spoil) in &ways {
            let mut stream = good.clone();
            stream[index] = spoil(&good[index]);
            // The first event names the task: another id there is the task.
            if *way == "another task" && index == 0 {
                continue;
            }
            let ended = read(&stream.concat(), None, 7);
            let last = ended.lines().last().unwrap_or_default();
            assert!(last.starts_with("error: "), "{way} at event {index}: {ended}");
            assert!(last.len() < 400, "{way} at event {index}: a long error: {last}");
        }
    }
    let mut sse = Sse::default();
    let error = sse.feed(b"data: \xff\xfe\n\n").unwrap_err();
    assert_eq!(error.to_string(), "the stream has a line that is not UTF-8");
}
