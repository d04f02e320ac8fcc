//! What a message brings: the sender's `messageId`s, ADK's context parts
//! kept apart from the input, file parts into `inbox/` and the files a run
//! wrote back as artifacts.
#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::{GREET, fixture_with, greet};
use crate::store::RunStatus;

#[tokio::test]
async fn the_sender_s_message_ids_are_kept_and_adk_context_parts_are_not_the_input() {
    let f = greet("context");
    let parts = json!([
        {"text": "For context:"},
        {"text": "[planner] said: The deploy is ready."},
        {"text": "Approve the deploy"},
    ]);
    let sent = f
        .result(
            "SendMessage",
            json!({"message": {"messageId": "client-42", "role": "ROLE_USER", "parts": parts},
                   "configuration": {"returnImmediately": true}}),
        )
        .await;
    let id = sent["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(f.server.store.run(&id).await.unwrap().unwrap().message, "Approve the deploy");
    // The default entry is recorded when no skill is named.
    assert_eq!(f.server.store.run(&id).await.unwrap().unwrap().entry.as_deref(), Some("main"));
    let history = &sent["task"]["history"];
    assert_eq!(history[0]["messageId"], "client-42");
    assert_eq!(
        history[0]["parts"],
        json!([{"text": "Approve the deploy"}, {"text": "For context:"}, {"text": "[planner] said: The deploy is ready."}])
    );
    f.claim(&id).await;
    f.finish(&id, RunStatus::Running, RunStatus::Paused, None).await;
    // ADK's answer repeats the question as context before the person's own text.
    let answer = json!({"message": {"messageId": "client-43", "taskId": id, "parts": [
        {"text": "For context:"}, {"text": "[approver] said: Ship it? Answer yes or no."}, {"text": "yes"}]},
        "configuration": {"returnImmediately": true}});
    let answered = f.result("SendMessage", answer).await;
    assert_eq!(f.server.store.run(&id).await.unwrap().unwrap().pending_input.as_deref(), Some("yes"));
    let ids: Vec<&str> =
        answered["task"]["history"].as_array().unwrap().iter().map(|m| m["messageId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["client-42", "client-43"]);
    let old = f.result("tasks/get", json!({"id": id})).await;
    assert_eq!(old["history"][1]["parts"][0], json!({"kind": "text", "text": "yes"}));
    // historyLength keeps the newest messages.
    let newest = f.result("GetTask", json!({"id": id, "historyLength": 1})).await;
    let ids: Vec<&str> =
        newest["history"].as_array().unwrap().iter().map(|m| m["messageId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["client-43"]);
    // The workload reads the context parts from its work directory, each message's in turn.
    let work = f.server.settings.state_dir.join("runs").join(&id).join("work");
    assert_eq!(
        std::fs::read_to_string(work.join("inbox/.context.txt")).unwrap(),
        "For context:\n[planner] said: The deploy is ready.\nFor context:\n[approver] said: Ship it? Answer yes or no.\n"
    );
    // Left as it came, it is not a file the run wrote.
    f.finish(&id, RunStatus::Queued, RunStatus::Done, Some(json!("ok"))).await;
    let got = f.result("GetTask", json!({"id": id})).await;
    assert_eq!(got["artifacts"].as_array().unwrap().len(), 1, "{got}");
}

#[tokio::test]
async fn file_parts_land_in_the_inbox_and_the_files_a_run_wrote_come_back_as_artifacts() {
    let f = greet("files");
    let parts = json!([
        {"text": "Summarize the notes"},
        {"raw": "bm90ZXM=", "filename": "../../notes.txt", "mediaType": "text/plain"},
    ]);
    let sent = f
        .result("SendMessage", json!({"message": {"parts": parts}, "configuration": {"returnImmediately": true}}))
        .await;
    let id = sent["task"]["id"].as_str().unwrap().to_string();
    let work = f.server.settings.state_dir.join("runs").join(&id).join("work");
    assert_eq!(std::fs::read_to_string(work.join("inbox/notes.txt")).unwrap(), "notes");
    assert!(!f.server.settings.state_dir.join("runs/notes.txt").exists());
    f.claim(&id).await;
    // What the run writes, as its tools would.
    std::fs::create_dir_all(work.join("out")).unwrap();
    std::fs::write(work.join("out/summary.md"), "# Notes").unwrap();
    f.finish(&id, RunStatus::Running, RunStatus::Done, Some(json!("Summarized."))).await;
    let got = f.result("GetTask", json!({"id": id})).await;
    assert_eq!(
        got["artifacts"][1],
        json!({"artifactId": "files", "name": "files",
               "parts": [{"raw": "IyBOb3Rlcw==", "filename": "out/summary.md", "mediaType": "text/markdown"}]})
    );
    let old = f.result("tasks/get", json!({"id": id})).await;
    assert_eq!(
        old["artifacts"][1]["parts"],
        json!([{"kind": "file", "file": {"bytes": "IyBOb3Rlcw==", "name": "out/summary.md", "mimeType": "text/markdown"}}])
    );
    // A 0.3 file part lands the same way.
    let v03 = json!({"message": {"kind": "message", "messageId": "m", "role": "user",
                     "parts": [{"kind": "file", "file": {"bytes": "eA==", "name": "a.txt"}}]},
                     "configuration": {"blocking": false}});
    let sent = f.result("message/send", v03).await;
    let work = f.server.settings.state_dir.join("runs").join(sent["id"].as_str().unwrap()).join("work");
    assert_eq!(std::fs::read_to_string(work.join("inbox/a.txt")).unwrap(), "x");
}

#[tokio::test]
async fn file_parts_are_refused_in_postgresql_mode_and_a_task_list_carries_no_files() {
    let shared = fixture_with("files-shared", &[("greet.sr", GREET)], None, |server| server.settings.shared = true);
    let file = json!({"message": {"parts": [{"raw": "eA==", "filename": "a.txt"}]}});
    assert_eq!(shared.code("SendMessage", file).await, -32005);
    let f = greet("files-list");
    let id = f.queued("Ada", None).await;
    f.claim(&id).await;
    let work = f.server.settings.state_dir.join("runs").join(&id).join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("out.txt"), "written").unwrap();
    f.finish(&id, RunStatus::Running, RunStatus::Done, Some(json!("done"))).await;
    let listed = f.result("ListTasks", json!({"includeArtifacts": true})).await;
    let ids: Vec<&str> =
        listed["tasks"][0]["artifacts"].as_array().unwrap().iter().map(|a| a["artifactId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["result"]);
    let got = f.result("GetTask", json!({"id": id})).await;
    assert_eq!(got["artifacts"][1]["parts"][0]["filename"], "out.txt");
}
