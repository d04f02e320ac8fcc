//! A2A over the router, without a dispatcher: the tests move runs through
//! their statuses in the store, as the dispatcher would, and read what the
//! endpoint answers in each protocol version.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::Request;
use expect_test::expect;
use serde_json::{Value, json};
use tower::ServiceExt;

use super::rpc::METHODS;
use crate::gate::Gate;
use crate::store::{Ending, RunStatus};
use crate::{ApiKeys, Server, api, test_server, workloads};

pub(super) const GREET: &str = r#"model main = openai/gpt-4o-mini
schema Verdict:
    ok: bool
    reason: string

prompt greet_prompt: """Greet ${input_prompt}."""
prompt judge_prompt expecting Verdict: """Judge this greeting."""

agent judge:
    instruction judge_prompt
    description "Judges a greeting."

flow main:
    $greeting = call llm greet_prompt
    return $greeting
"#;

struct Fixture {
    server: Arc<Server>,
    router: Router,
}

fn fixture(name: &str, files: &[(&str, &str)], keys: Option<&str>) -> Fixture {
    fixture_with(name, files, keys, |_| {})
}

fn fixture_with(name: &str, files: &[(&str, &str)], keys: Option<&str>, edit: impl FnOnce(&mut Server)) -> Fixture {
    let dir = std::env::temp_dir().join(format!("sr-serve-a2a-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut paths = Vec::new();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
        paths.push(dir.join(file));
    }
    let loaded = workloads::load_all(&paths).unwrap_or_else(|e| panic!("{e:?}"));
    let mut server = test_server(&dir.join("state"), loaded);
    server.keys = keys.map(|k| ApiKeys::parse(k).unwrap());
    server.settings.base_url = "http://agents.test:8787".to_string();
    edit(&mut server);
    let server = Arc::new(server);
    let gate = Gate::new("0.0.0.0:8787".parse().unwrap(), None, &[]);
    let router = api::router(server.clone(), gate, None).unwrap();
    Fixture { server, router }
}

fn greet(name: &str) -> Fixture {
    fixture(name, &[("greet.sr", GREET)], None)
}

impl Fixture {
    async fn send(&self, request: Request<Body>) -> (u16, String) {
        let response = tokio::time::timeout(Duration::from_secs(10), self.router.clone().oneshot(request))
            .await
            .expect("the request was answered")
            .unwrap();
        let status = response.status().as_u16();
        let body = tokio::time::timeout(Duration::from_secs(10), axum::body::to_bytes(response.into_body(), 1 << 24))
            .await
            .expect("the body ended")
            .unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let request = Request::get(path).header("host", "agents.test:8787").body(Body::empty()).unwrap();
        let (status, text) = self.send(request).await;
        (status, serde_json::from_str(&text).unwrap())
    }

    async fn post_raw(&self, path: &str, headers: &[(&str, &str)], body: impl Into<Body>) -> (u16, String) {
        let mut request = Request::post(path).header("host", "agents.test").header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        self.send(request.body(body.into()).unwrap()).await
    }

    /// The JSON-RPC response to `method` with `params` at `/a2a`.
    async fn rpc(&self, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string();
        let (status, text) = self.post_raw("/a2a", &[], body).await;
        assert_eq!(status, 200, "{text}");
        let response: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(response["id"], 7, "{response}");
        response
    }

    async fn result(&self, method: &str, params: Value) -> Value {
        let response = self.rpc(method, params).await;
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    async fn code(&self, method: &str, params: Value) -> i64 {
        let response = self.rpc(method, params).await;
        response["error"]["code"].as_i64().unwrap_or_else(|| panic!("{method}: no error: {response}"))
    }

    /// A task queued by a non-blocking 1.0 send.
    async fn queued(&self, text: &str, skill: Option<&str>) -> String {
        let mut params = json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]},
                                "configuration": {"returnImmediately": true}});
        if let Some(skill) = skill {
            params["metadata"] = json!({"skill": skill});
        }
        let sent = self.result("SendMessage", params).await;
        assert_eq!(sent["task"]["status"]["state"], "TASK_STATE_SUBMITTED", "{sent}");
        sent["task"]["id"].as_str().unwrap().to_string()
    }

    /// Moves run `id` from `from` to `to` as the dispatcher would, and tells its watchers.
    async fn finish(&self, id: &str, from: RunStatus, to: RunStatus, result: Option<Value>) {
        assert!(
            self.server.store.finish(id, from, &Ending::of(to, result.as_ref(), None)).await.unwrap(),
            "{id}: {from} → {to}"
        );
        self.server.changed(id);
    }

    /// Claims run `id` as the dispatcher would; the claim's epoch.
    async fn claim(&self, id: &str) -> i64 {
        let claimed = self.server.store.claim().await.unwrap().unwrap();
        assert_eq!(claimed.id, id);
        self.server.changed(id);
        claimed.epoch
    }
}

#[tokio::test]
async fn the_card_describes_the_program_and_the_server() {
    let f = greet("card");
    let (status, card) = f.get("/.well-known/agent-card.json").await;
    assert_eq!(status, 200);
    let mut shown = card.clone();
    shown["version"] = json!("VERSION");
    expect![[r#"
        {
          "name": "greet",
          "description": "The StreetRace workload 'greet', served by sr serve.",
          "version": "VERSION",
          "supportedInterfaces": [
            {
              "url": "http://agents.test:8787/a2a",
              "protocolBinding": "JSONRPC",
              "protocolVersion": "1.0"
            },
            {
              "url": "http://agents.test:8787/a2a",
              "protocolBinding": "JSONRPC",
              "protocolVersion": "0.3"
            }
          ],
          "capabilities": {
            "streaming": true,
            "pushNotifications": false,
            "extensions": [
              {
                "uri": "https://streetrace.dev/a2a/extensions/skill-schemas/v1",
                "description": "Each skill's input and (where the program declares one) output JSON schema, by skill id; a request picks a skill with metadata.skill",
                "required": false,
                "params": {
                  "skills": {
                    "main": {
                      "input": {
                        "type": "string",
                        "description": "the run's message ($input_prompt): its text parts, a data part as its JSON text; files land in inbox/"
                      }
                    },
                    "judge": {
                      "input": {
                        "type": "string",
                        "description": "the run's message ($input_prompt): its text parts, a data part as its JSON text; files land in inbox/"
                      },
                      "output": {
                        "type": "object",
                        "properties": {
                          "ok": {
                            "type": "boolean"
                          },
                          "reason": {
                            "type": "string"
                          }
                        },
                        "required": [
                          "ok",
                          "reason"
                        ]
                      }
                    }
                  }
                }
              }
            ]
          },
          "defaultInputModes": [
            "text/plain",
            "application/json"
          ],
          "defaultOutputModes": [
            "text/plain",
            "application/json"
          ],
          "skills": [
            {
              "id": "main",
              "name": "main",
              "description": "The flow 'main'. The default skill.",
              "tags": [
                "flow"
              ],
              "inputModes": [
                "text/plain",
                "application/json"
              ],
              "outputModes": [
                "text/plain"
              ]
            },
            {
              "id": "judge",
              "name": "judge",
              "description": "Judges a greeting.",
              "tags": [
                "agent"
              ],
              "inputModes": [
                "text/plain",
                "application/json"
              ],
              "outputModes": [
                "application/json"
              ]
            }
          ],
          "url": "http://agents.test:8787/a2a",
          "preferredTransport": "JSONRPC",
          "protocolVersion": "0.3.0"
        }"#]]
    .assert_eq(&serde_json::to_string_pretty(&shown).unwrap());
    assert_eq!(card["version"], env!("CARGO_PKG_VERSION"));
    // The workload's own card names its own endpoint.
    let (status, own) = f.get("/a2a/greet/.well-known/agent-card.json").await;
    assert_eq!((status, own["url"].clone()), (200, json!("http://agents.test:8787/a2a/greet")));
    assert_eq!(own["supportedInterfaces"][0]["url"], own["url"]);
    let (status, missing) = f.get("/a2a/nope/.well-known/agent-card.json").await;
    assert_eq!(status, 404, "{missing}");
    assert!(missing["error"]["message"].as_str().unwrap().contains("served: greet"), "{missing}");
    assert!(card.get("securitySchemes").is_none(), "no keys, no scheme");
}

#[tokio::test]
async fn a_keyed_server_shows_bearer_in_the_card_and_checks_it_on_the_endpoint() {
    let f = fixture("keyed", &[("greet.sr", GREET)], Some("a2a-key-0123456789"));
    let (status, card) = f.get("/.well-known/agent-card.json").await;
    assert_eq!(status, 200, "the card is public: it says how to authenticate");
    assert_eq!(card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"], "Bearer");
    assert_eq!(card["securitySchemes"]["bearer"]["type"], "http");
    assert_eq!(card["securityRequirements"], json!([{"schemes": {"bearer": {"list": []}}}]));
    assert_eq!(card["security"], json!([{"bearer": []}]));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks"}).to_string();
    for path in ["/a2a", "/a2a/greet"] {
        let (status, _) = f.post_raw(path, &[], body.clone()).await;
        assert_eq!(status, 401, "{path}");
        let (status, _) = f.post_raw(path, &[("authorization", "Bearer wrong-key-0123456789")], body.clone()).await;
        assert_eq!(status, 401, "{path}");
        let (status, text) = f.post_raw(path, &[("authorization", "Bearer a2a-key-0123456789")], body.clone()).await;
        assert_eq!(status, 200, "{path}: {text}");
    }
}

#[tokio::test]
async fn several_workloads_each_have_their_card_and_endpoint() {
    let other = GREET.replace("Judges a greeting.", "Judges another greeting.");
    let f = fixture("several", &[("greet.sr", GREET), ("other.sr", &other)], None);
    let (status, refused) = f.get("/.well-known/agent-card.json").await;
    assert_eq!(status, 404);
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("/a2a/greet/.well-known/agent-card.json") && message.contains("/a2a/other/"), "{message}");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks"}).to_string();
    let (status, text) = f.post_raw("/a2a", &[], body.clone()).await;
    assert_eq!(status, 404, "{text}");
    assert!(text.contains("-32600") && text.contains("/a2a/other"), "{text}");
    let (status, _) = f.post_raw("/a2a/other", &[], body).await;
    assert_eq!(status, 200);
    // A task of one workload is not found through another's endpoint.
    let sent = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": {"returnImmediately": true}}});
    let (_, text) = f.post_raw("/a2a/greet", &[], sent.to_string()).await;
    let id = serde_json::from_str::<Value>(&text).unwrap()["result"]["task"]["id"].as_str().unwrap().to_string();
    let get = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": id}}).to_string();
    let (_, text) = f.post_raw("/a2a/other", &[], get.clone()).await;
    assert!(text.contains("-32001"), "{text}");
    let (_, text) = f.post_raw("/a2a/greet", &[], get).await;
    assert!(text.contains("TASK_STATE_SUBMITTED"), "{text}");
}

#[tokio::test]
async fn each_error_has_the_code_the_specification_gives_it() {
    let f = greet("errors");
    let done = f.queued("hi", None).await;
    f.finish(&done, RunStatus::Queued, RunStatus::Done, Some(json!("Hello"))).await;
    let message = |parts: Value| json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": parts}});
    let cases: Vec<(&str, Value, i64)> = vec![
        ("GetTask", json!({}), -32602),
        ("GetTask", json!({"id": 5}), -32602),
        ("GetTask", json!({"id": "no-such-task"}), -32001),
        ("tasks/get", json!({"id": "no-such-task"}), -32001),
        ("CancelTask", json!({"id": "no-such-task"}), -32001),
        ("CancelTask", json!({"id": done}), -32002),
        ("tasks/cancel", json!({"id": done}), -32002),
        ("CreateTaskPushNotificationConfig", json!({}), -32003),
        ("tasks/pushNotificationConfig/set", json!({}), -32003),
        ("SubscribeToTask", json!({"id": done}), -32004),
        ("tasks/resubscribe", json!({"id": done}), -32004),
        ("SendMessage", json!({"message": {"taskId": done, "parts": [{"text": "more"}]}}), -32004),
        ("SendMessage", message(json!([{"url": "https://x.test/f.pdf"}])), -32005),
        ("message/send", message(json!([{"kind": "file", "file": {"uri": "https://x.test/f.pdf"}}])), -32005),
        ("GetExtendedAgentCard", json!({}), -32007),
        ("agent/getAuthenticatedExtendedCard", json!({}), -32007),
        ("SendMessage", json!({}), -32602),
        ("SendMessage", message(json!([])), -32602),
        ("SendMessage", message(json!([{"text": 3}])), -32602),
        ("SendMessage", message(json!([{"nothing": true}])), -32602),
        ("SendMessage", json!({"message": {"parts": [{"text": "x"}]}, "metadata": {"skill": "nope"}}), -32602),
        ("SendMessage", json!({"message": {"parts": [{"text": "x"}], "contextId": "../up"}}), -32602),
        ("ListTasks", json!({"status": "TASK_STATE_SIDEWAYS"}), -32602),
        ("ListTasks", json!({"status": 9}), -32602),
        ("ListTasks", json!({"pageSize": 0}), -32602),
        ("ListTasks", json!({"pageSize": 101}), -32602),
        ("ListTasks", json!({"pageToken": "next"}), -32602),
        ("NoSuchMethod", json!({}), -32601),
        ("tasks/list", json!({}), -32601),
    ];
    for (method, params, code) in cases {
        assert_eq!(f.code(method, params.clone()).await, code, "{method} {params}");
    }
    // The envelope's own errors.
    let envelope: [(&str, i64); 7] = [
        ("{not json", -32700),
        ("", -32700),
        ("[]", -32600),
        ("7", -32600),
        (r#"{"jsonrpc": "2.0", "method": "GetTask"}"#, -32600),
        (r#"{"jsonrpc": "1.0", "id": 1, "method": "GetTask"}"#, -32600),
        (r#"{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": [1]}"#, -32602),
    ];
    for (body, code) in envelope {
        let (status, text) = f.post_raw("/a2a", &[], body).await;
        let response: Value = serde_json::from_str(&text).unwrap();
        assert_eq!((status, response["error"]["code"].as_i64()), (200, Some(code)), "{body}: {text}");
    }
    // A2A-Version: the versions this server speaks pass, any other is refused.
    let list = json!({"jsonrpc": "2.0", "id": "v", "method": "ListTasks"}).to_string();
    for (version, ok) in
        [("1.0", true), ("0.3", true), ("0.3.0", true), ("1.0.0", true), ("2.0", false), ("0.2", false)]
    {
        let (_, text) = f.post_raw("/a2a", &[("a2a-version", version)], list.clone()).await;
        let response: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(response["id"], "v");
        match ok {
            true => assert!(response.get("result").is_some(), "{version}: {text}"),
            false => assert_eq!(response["error"]["code"], -32009, "{version}: {text}"),
        }
    }
    // A body past the limit is refused before it is read whole.
    let (status, text) = f.post_raw("/a2a", &[], vec![b' '; crate::MAX_BODY_BYTES + 1]).await;
    assert_eq!(status, 413, "{text}");
    assert!(text.contains("-32600"), "{text}");
}

/// Every method of the table, with params of every wrong shape: a JSON-RPC
/// error or a result, at once, never a 500 or a hang.
#[tokio::test]
async fn hostile_params_for_every_method_get_an_answer() {
    let f = greet("hostile");
    let hostile = [
        json!(null),
        json!({"id": null}),
        json!({"id": ["x"]}),
        json!({"id": "x".repeat(5000)}),
        json!({"message": 1}),
        json!({"message": {"parts": "text"}}),
        json!({"message": {"parts": [{"text": "x"}], "taskId": 1}}),
        json!({"message": {"parts": [{"text": "x"}], "contextId": ""}}),
        json!({"message": {"parts": [{"text": "x"}], "taskId": "nope"}}),
        json!({"message": {"parts": [{"text": "x"}]}, "metadata": {"skill": 3}}),
        json!({"historyLength": -1, "id": "x"}),
        json!({"historyLength": "all", "id": "x"}),
        json!({"status": 99}),
        json!({"includeArtifacts": "yes"}),
        json!({"contextId": 5}),
    ];
    let known = [-32700, -32600, -32601, -32602, -32001, -32002, -32003, -32004, -32005, -32007, -32009];
    for (method, ..) in METHODS {
        for params in &hostile {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
            let (status, text) = f.post_raw("/a2a", &[], body).await;
            assert_eq!(status, 200, "{method} {params}: {text}");
            let response: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{method} {params}: {text}"));
            if let Some(code) = response["error"]["code"].as_i64() {
                assert!(known.contains(&code), "{method} {params}: {text}");
            } else {
                assert!(response.get("result").is_some(), "{method} {params}: {text}");
            }
        }
    }
}

#[tokio::test]
async fn a_task_in_each_version_shape_from_queued_to_its_result() {
    let f = greet("shapes");
    // 0.3: `blocking: false` answers at once, with 0.3's shapes.
    let sent = f
        .result(
            "message/send",
            json!({"message": {"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "Ada"}]},
                   "configuration": {"blocking": false}}),
        )
        .await;
    assert_eq!((sent["kind"].clone(), sent["status"]["state"].clone()), (json!("task"), json!("submitted")), "{sent}");
    assert_eq!(sent["history"][0]["parts"], json!([{"kind": "text", "text": "Ada"}]));
    assert_eq!(sent["history"][0]["role"], "user");
    let id = sent["id"].as_str().unwrap().to_string();
    let context = sent["contextId"].as_str().unwrap().to_string();
    assert_eq!(f.server.store.run(&id).await.unwrap().unwrap().session, context, "a context is a session");
    f.claim(&id).await;
    let got = f.result("GetTask", json!({"id": id})).await;
    assert_eq!(got["status"]["state"], "TASK_STATE_WORKING");
    f.finish(&id, RunStatus::Running, RunStatus::Done, Some(json!("Hello, Ada."))).await;
    let got = f.result("GetTask", json!({"id": id, "historyLength": 0})).await;
    assert_eq!(got["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        got["artifacts"],
        json!([{"artifactId": "result", "name": "result", "parts": [{"text": "Hello, Ada."}]}])
    );
    assert!(got.get("history").is_none(), "historyLength 0: {got}");
    let old = f.result("tasks/get", json!({"id": id})).await;
    assert_eq!((old["kind"].clone(), old["status"]["state"].clone()), (json!("task"), json!("completed")));
    assert_eq!(old["artifacts"][0]["parts"], json!([{"kind": "text", "text": "Hello, Ada."}]));

    // A structured result is a data part, with its schema.
    let judged = f.queued("Hello, Ada.", Some("judge")).await;
    assert_eq!(f.server.store.run(&judged).await.unwrap().unwrap().entry.as_deref(), Some("judge"));
    f.finish(&judged, RunStatus::Queued, RunStatus::Done, Some(json!({"ok": true, "reason": "warm"}))).await;
    let got = f.result("GetTask", json!({"id": judged})).await;
    let artifact = &got["artifacts"][0];
    assert_eq!(artifact["parts"], json!([{"data": {"ok": true, "reason": "warm"}, "mediaType": "application/json"}]));
    assert_eq!(artifact["metadata"]["schema"]["required"], json!(["ok", "reason"]));
    let old = f.result("tasks/get", json!({"id": judged})).await;
    assert_eq!(old["artifacts"][0]["parts"], json!([{"kind": "data", "data": {"ok": true, "reason": "warm"}}]));

    // Failed and cancelled tasks say why.
    let failing = f.queued("x", None).await;
    assert!(
        f.server
            .store
            .finish(&failing, RunStatus::Queued, &Ending::of(RunStatus::Failed, None, Some("the model is down")))
            .await
            .unwrap()
    );
    let got = f.result("GetTask", json!({"id": failing})).await;
    assert_eq!(got["status"]["state"], "TASK_STATE_FAILED");
    assert_eq!(got["status"]["message"]["parts"], json!([{"text": "the model is down"}]));
    assert_eq!(got["status"]["message"]["role"], "ROLE_AGENT");
    let cancelled = f.queued("x", None).await;
    let got = f.result("CancelTask", json!({"id": cancelled})).await;
    assert_eq!(got["status"]["state"], "TASK_STATE_CANCELED", "{got}");
    let again = f.queued("y", None).await;
    let got = f.result("tasks/cancel", json!({"id": again})).await;
    assert_eq!(got["status"]["state"], "canceled", "{got}");

    // ListTasks: newest first, by context and by state.
    let all = f.result("ListTasks", json!({})).await;
    let ids: Vec<&str> = all["tasks"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [again.as_str(), &cancelled, &failing, &judged, &id]);
    assert_eq!((all["totalSize"].clone(), all["nextPageToken"].clone()), (json!(5), json!("")));
    assert!(all["tasks"][3].get("artifacts").is_none(), "artifacts only when asked");
    let done = f.result("ListTasks", json!({"status": "TASK_STATE_COMPLETED", "includeArtifacts": true})).await;
    let ids: Vec<&str> = done["tasks"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [judged.as_str(), &id]);
    assert_eq!(done["tasks"][0]["artifacts"][0]["artifactId"], "result");
    let by_number = f.result("ListTasks", json!({"status": 3})).await;
    let numbered: Vec<&str> =
        by_number["tasks"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(numbered, [judged.as_str(), &id], "TASK_STATE_COMPLETED is 3");
    for never in ["TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED"] {
        assert_eq!(f.result("ListTasks", json!({"status": never})).await["tasks"], json!([]), "{never}");
    }
    let mine = f.result("ListTasks", json!({"contextId": context})).await;
    assert_eq!(mine["tasks"].as_array().unwrap().len(), 1);
    let page = f.result("ListTasks", json!({"pageSize": 2})).await;
    assert_eq!((page["tasks"].as_array().unwrap().len(), page["totalSize"].clone()), (2, json!(5)));
}

#[tokio::test]
async fn input_required_is_answered_by_the_next_message_of_the_task() {
    let f = greet("input");
    let id = f.queued("Ada", None).await;
    f.claim(&id).await;
    f.server
        .store
        .append_event(&id, 1, 1, r#"{"type": "human_input_requested", "message": "Approve?"}"#)
        .await
        .unwrap();
    f.finish(&id, RunStatus::Running, RunStatus::Paused, None).await;
    let got = f.result("GetTask", json!({"id": id})).await;
    assert_eq!(got["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(got["status"]["message"]["parts"], json!([{"text": "Approve?"}]));
    let old = f.result("tasks/get", json!({"id": id})).await;
    assert_eq!(old["status"]["state"], "input-required");
    // A new task in the same context waits for nobody: it is refused.
    let context = got["contextId"].as_str().unwrap();
    let busy = json!({"message": {"parts": [{"text": "other"}], "contextId": context}});
    assert_eq!(f.code("SendMessage", busy).await, -32004);
    // The answer names the task (and may name its context).
    let wrong = json!({"message": {"parts": [{"text": "yes"}], "taskId": id, "contextId": "another"}});
    assert_eq!(f.code("SendMessage", wrong).await, -32602);
    let answer = json!({"message": {"parts": [{"text": "yes"}], "taskId": id, "contextId": context},
                        "configuration": {"returnImmediately": true}});
    let sent = f.result("SendMessage", answer.clone()).await;
    assert_eq!(
        (sent["task"]["id"].clone(), sent["task"]["status"]["state"].clone()),
        (json!(id), json!("TASK_STATE_SUBMITTED"))
    );
    assert_eq!(f.server.store.run(&id).await.unwrap().unwrap().pending_input.as_deref(), Some("yes"));
    // A task that is not waiting takes no message.
    assert_eq!(f.code("SendMessage", answer).await, -32004);
}

/// The SSE body of a streaming call: each event's JSON-RPC response.
fn sse(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|block| block.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

#[tokio::test]
async fn a_stream_reports_each_status_then_the_result_and_ends() {
    for (method, version) in [("SendStreamingMessage", "1.0"), ("message/stream", "0.3")] {
        let f = greet(&format!("stream-{version}"));
        let body = json!({"jsonrpc": "2.0", "id": "s", "method": method, "params": {
            "message": {"messageId": "m", "role": "user", "parts": [{"text": "Ada"}]}}});
        let driver = {
            let server = f.server.clone();
            tokio::spawn(async move {
                // Wait for the queued run, then move it as the dispatcher would.
                let run = loop {
                    if let Some(run) = server.store.claim().await.unwrap() {
                        break run;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                };
                server.changed(&run.id);
                tokio::time::sleep(Duration::from_millis(100)).await;
                server
                    .store
                    .finish(&run.id, RunStatus::Running, &Ending::of(RunStatus::Done, Some(&json!({"ok": true})), None))
                    .await
                    .unwrap();
                server.changed(&run.id);
            })
        };
        let (status, text) = f.post_raw("/a2a", &[], body.to_string()).await;
        driver.await.unwrap();
        assert_eq!(status, 200, "{text}");
        let events = sse(&text);
        assert!(events.iter().all(|e| e["id"] == "s" && e["jsonrpc"] == "2.0"), "{text}");
        let results: Vec<&Value> = events.iter().map(|e| &e["result"]).collect();
        match version {
            "1.0" => {
                let kinds: Vec<String> = results
                    .iter()
                    .map(|r| {
                        let (kind, value) = r.as_object().unwrap().iter().next().unwrap();
                        format!("{kind}:{}", value["status"]["state"].as_str().unwrap_or("-"))
                    })
                    .collect();
                assert_eq!(
                    kinds,
                    [
                        "task:TASK_STATE_SUBMITTED",
                        "statusUpdate:TASK_STATE_WORKING",
                        "artifactUpdate:-",
                        "statusUpdate:TASK_STATE_COMPLETED"
                    ],
                    "{text}"
                );
                assert_eq!(results[2]["artifactUpdate"]["artifact"]["parts"][0]["data"], json!({"ok": true}));
            }
            _ => {
                let kinds: Vec<String> = results
                    .iter()
                    .map(|r| format!("{}:{}:{}", r["kind"].as_str().unwrap(), r["status"]["state"], r["final"]))
                    .collect();
                assert_eq!(
                    kinds,
                    [
                        "task:\"submitted\":null",
                        "status-update:\"working\":false",
                        "artifact-update:null:null",
                        "status-update:\"completed\":true"
                    ],
                    "{text}"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_subscription_follows_a_task_to_input_required() {
    let f = greet("subscribe");
    let id = f.queued("Ada", None).await;
    f.claim(&id).await;
    let driver = {
        let server = f.server.clone();
        let id = id.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            server
                .store
                .append_event(&id, 1, 1, r#"{"type": "human_input_requested", "message": "Sure?"}"#)
                .await
                .unwrap();
            server.store.finish(&id, RunStatus::Running, &Ending::of(RunStatus::Paused, None, None)).await.unwrap();
            server.changed(&id);
        })
    };
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/resubscribe", "params": {"id": id}});
    let (_, text) = f.post_raw("/a2a", &[], body.to_string()).await;
    driver.await.unwrap();
    let events = sse(&text);
    assert_eq!(events.len(), 2, "{text}");
    assert_eq!(events[0]["result"]["status"]["state"], "working");
    let last = &events[1]["result"];
    assert_eq!((last["status"]["state"].clone(), last["final"].clone()), (json!("input-required"), json!(true)));
    assert_eq!(last["status"]["message"]["parts"][0]["text"], "Sure?");
}

mod messages;
mod push;
