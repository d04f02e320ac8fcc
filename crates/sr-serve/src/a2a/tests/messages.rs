//! What a message brings: the sender's `messageId`s, ADK's context parts
//! kept apart from the input, file parts into `inbox/` and the files a run
//! wrote back as artifacts.
#![allow(clippy::unwrap_used)]

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};
use sr_runtime::journal::Meta;

use super::{Fixture, greet};
use crate::a2a::{inbound, record};
use crate::store::{JournalLines, RunStatus};

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
    // The workload reads the context parts from its work directory, each
    // message's in turn, put there before the attempt the answer starts.
    let work = f.server.settings.state_dir.join("runs").join(&id).join("work");
    crate::a2a::place_inbox(&f.server, &id, &work, false).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(work.join("inbox/.context.txt")).unwrap(),
        "For context:\n[planner] said: The deploy is ready.\nFor context:\n[approver] said: Ship it? Answer yes or no.\n"
    );
    // Left as it came, it is not a file the run wrote.
    f.finish(&id, RunStatus::Queued, RunStatus::Done, Some(json!("ok"))).await;
    let got = f.result("GetTask", json!({"id": id})).await;
    assert_eq!(got["artifacts"].as_array().unwrap().len(), 1, "{got}");
}

/// Stores the journal of claimed run `id` (claim `epoch`): one tool call
/// that wrote each of `files` (path, text), as the run's copies would.
async fn journal_writes(f: &Fixture, id: &str, epoch: i64, files: &[(&str, &str)]) {
    let session = f.server.store.run(id).await.unwrap().unwrap().session;
    let absent = json!({"is": "absent"});
    let changes: Vec<Value> = files
        .iter()
        .map(|(path, text)| {
            let after =
                json!({"is": "file", "sha256": inbound::sha256(text.as_bytes()), "size": text.len(), "kept": true});
            json!({"path": path, "before": absent, "after": after})
        })
        .collect();
    let meta = Meta { invocation_id: "i".into(), ..Meta::new("greet.sr", "go") };
    let mut lines = vec![
        meta.to_entry().to_string(),
        json!({"kind": "tool", "at": "main", "n": 0, "step": 1, "name": "write_file", "args": {}, "result": "ok",
               "files": changes})
        .to_string(),
    ];
    for (_, text) in files {
        lines.push(json!({"kind": "blob", "sha256": inbound::sha256(text.as_bytes()), "text": text}).to_string());
    }
    // The session's next attempt.
    let attempt = f.server.store.record(&session).await.unwrap().journals.len() as i64 + 1;
    let opening = JournalLines { session, attempt, origin: None, opening: true, first: 0, lines };
    f.server.store.write_batch(id, epoch, Some(&opening), &[]).await.unwrap();
}

/// The files artifact of task `id`: each file's path and text.
async fn files_of(f: &Fixture, id: &str) -> Vec<(String, String)> {
    let got = f.result("GetTask", json!({"id": id})).await;
    let artifacts = got["artifacts"].as_array().unwrap();
    let Some(files) = artifacts.iter().find(|a| a["artifactId"] == "files") else { return Vec::new() };
    let decode = |raw: &Value| String::from_utf8(BASE64.decode(raw.as_str().unwrap()).unwrap()).unwrap();
    files["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|part| (part["filename"].as_str().unwrap().to_string(), decode(&part["raw"])))
        .collect()
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
    // The store keeps the file until the replica that runs the task puts it
    // into the work directory, before the attempt.
    let work = f.server.settings.state_dir.join("runs").join(&id).join("work");
    assert!(!work.join("inbox/notes.txt").exists());
    crate::a2a::place_inbox(&f.server, &id, &work, true).await.unwrap();
    assert_eq!(std::fs::read_to_string(work.join("inbox/notes.txt")).unwrap(), "notes");
    assert!(!f.server.settings.state_dir.join("runs/notes.txt").exists());
    // Placed once: a later attempt in the same directory finds it as the run left it.
    std::fs::write(work.join("inbox/notes.txt"), "edited by the run").unwrap();
    crate::a2a::place_inbox(&f.server, &id, &work, false).await.unwrap();
    assert_eq!(std::fs::read_to_string(work.join("inbox/notes.txt")).unwrap(), "edited by the run");
    let epoch = f.claim(&id).await;
    journal_writes(&f, &id, epoch, &[("out/summary.md", "# Notes")]).await;
    // A file in the work directory that the journal does not record is not the run's.
    std::fs::write(work.join("stray.txt"), "not journaled").unwrap();
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
    let id = sent["id"].as_str().unwrap();
    let work = f.server.settings.state_dir.join("runs").join(id).join("work");
    crate::a2a::place_inbox(&f.server, id, &work, true).await.unwrap();
    assert_eq!(std::fs::read_to_string(work.join("inbox/a.txt")).unwrap(), "x");
}

/// Two tasks of one context: each one's artifact lists the files its own
/// run's journal records, not the other's.
#[tokio::test]
async fn each_task_of_a_context_lists_only_the_files_its_own_run_wrote() {
    let f = greet("files-own");
    let first = f.queued("one", None).await;
    let epoch = f.claim(&first).await;
    journal_writes(&f, &first, epoch, &[("a.txt", "first")]).await;
    f.finish(&first, RunStatus::Running, RunStatus::Done, Some(json!("done"))).await;
    let context = f.server.store.run(&first).await.unwrap().unwrap().session;
    let sent = f
        .result(
            "SendMessage",
            json!({"message": {"contextId": context, "parts": [{"text": "two"}]}, "configuration": {"returnImmediately": true}}),
        )
        .await;
    let second = sent["task"]["id"].as_str().unwrap().to_string();
    let epoch = f.claim(&second).await;
    journal_writes(&f, &second, epoch, &[("a.txt", "second"), ("b.txt", "new")]).await;
    f.finish(&second, RunStatus::Running, RunStatus::Done, Some(json!("done"))).await;
    let owned = |files: &[(&str, &str)]| -> Vec<(String, String)> {
        files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()
    };
    assert_eq!(files_of(&f, &first).await, owned(&[("a.txt", "first")]));
    assert_eq!(files_of(&f, &second).await, owned(&[("a.txt", "second"), ("b.txt", "new")]));
}

/// A message's files are kept in the store's record (the replica that runs
/// the task places them), and a page of tasks carries no files.
#[tokio::test]
async fn file_parts_are_kept_in_the_store_and_a_task_list_carries_no_files() {
    let f = greet("files-kept");
    let file = json!({"message": {"parts": [{"raw": "eA==", "filename": "a.txt"}]}, "configuration": {"returnImmediately": true}});
    let sent = f.result("SendMessage", file).await;
    let id = sent["task"]["id"].as_str().unwrap();
    let record = record::read(&f.server, id).await.unwrap();
    let kept: Vec<(&str, bool)> = record.files.iter().map(|d| (d.path.as_str(), d.placed)).collect();
    assert_eq!(kept, [("inbox/a.txt", false)]);
    assert_eq!(f.server.store.a2a_files(id).await.unwrap()[&record.files[0].sha256], b"x");
    let f = greet("files-list");
    let id = f.queued("Ada", None).await;
    let epoch = f.claim(&id).await;
    journal_writes(&f, &id, epoch, &[("out.txt", "written")]).await;
    f.finish(&id, RunStatus::Running, RunStatus::Done, Some(json!("done"))).await;
    let listed = f.result("ListTasks", json!({"includeArtifacts": true})).await;
    let ids: Vec<&str> =
        listed["tasks"][0]["artifacts"].as_array().unwrap().iter().map(|a| a["artifactId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["result"]);
    let got = f.result("GetTask", json!({"id": id})).await;
    assert_eq!(got["artifacts"][1]["parts"][0]["filename"], "out.txt");
}
