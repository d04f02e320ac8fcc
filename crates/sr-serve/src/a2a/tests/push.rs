//! Push notifications: webhooks on loopback receive each change of a task,
//! with the configuration's token and credentials, a refused one sent
//! again; hostile configurations are refused; a restarted server sends what
//! its stopped predecessor had not.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use serde_json::{Value, json};

use super::{GREET, fixture_with};
use crate::a2a::push::is_followed;
use crate::a2a::rpc::{METHODS, Method, Version};
use crate::store::RunStatus;
use crate::{Server, test_server};

/// A webhook receiver on loopback: records each POST's headers and body;
/// refuses the first with 503, so that the retry is seen.
async fn receiver() -> (String, Arc<std::sync::Mutex<Vec<(axum::http::HeaderMap, Value)>>>) {
    let seen: Arc<std::sync::Mutex<Vec<(axum::http::HeaderMap, Value)>>> = Arc::default();
    let kept = seen.clone();
    let app = Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
            let kept = kept.clone();
            async move {
                let mut seen = kept.lock().unwrap();
                seen.push((headers, serde_json::from_str(&body).unwrap()));
                if seen.len() == 1 { axum::http::StatusCode::SERVICE_UNAVAILABLE } else { axum::http::StatusCode::OK }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

#[tokio::test(flavor = "multi_thread")]
async fn push_notifications_reach_an_allowed_webhook_with_its_token_and_retries() {
    let f = fixture_with("push", &[("greet.sr", GREET)], None, |server| {
        server.settings.push_hosts = vec!["127.0.0.1".to_string()];
    });
    let (_, card) = f.get("/.well-known/agent-card.json").await;
    assert_eq!(card["capabilities"]["pushNotifications"], true);
    let (url, seen) = receiver().await;
    // A host the server was not told of is refused, and no task starts.
    let elsewhere = json!({"message": {"parts": [{"text": "x"}]},
        "configuration": {"taskPushNotificationConfig": {"url": "http://169.254.169.254/hook"}}});
    assert_eq!(f.code("SendMessage", elsewhere).await, -32602);
    assert_eq!(f.result("ListTasks", json!({})).await["tasks"], json!([]));
    let config =
        json!({"url": url, "token": "tok-1", "authentication": {"scheme": "Bearer", "credentials": "hook-secret"}});
    let sent = f
        .result(
            "SendMessage",
            json!({"message": {"parts": [{"text": "Ada"}]},
                   "configuration": {"returnImmediately": true, "taskPushNotificationConfig": config}}),
        )
        .await;
    let id = sent["task"]["id"].as_str().unwrap().to_string();
    let listed = f.result("ListTaskPushNotificationConfigs", json!({"taskId": id})).await;
    let config_id = listed["configs"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(listed["configs"][0]["url"], json!(url));
    let got = f.result("GetTaskPushNotificationConfig", json!({"taskId": id, "id": config_id})).await;
    assert_eq!(got["token"], "tok-1");
    let old = f.result("tasks/pushNotificationConfig/list", json!({"id": id})).await;
    assert_eq!(old[0]["pushNotificationConfig"]["authentication"]["schemes"], json!(["Bearer"]));
    f.claim(&id).await;
    f.finish(&id, RunStatus::Running, RunStatus::Done, Some(json!("Hello, Ada."))).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let last = seen.lock().unwrap().last().map(|(_, body)| body.clone());
        if last.as_ref().is_some_and(|b| b["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED") {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "no completed notification: {:?}", seen.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let seen = seen.lock().unwrap().clone();
    // The refused first notification was sent again.
    assert_eq!(seen[0].1, seen[1].1, "retried after the 503");
    for (headers, _) in &seen {
        assert_eq!(headers["x-a2a-notification-token"], "tok-1");
        assert_eq!(headers["authorization"], "Bearer hook-secret");
    }
    let bodies: Vec<&Value> = seen.iter().map(|(_, body)| body).collect();
    let result = bodies.iter().find(|b| b.get("artifactUpdate").is_some()).expect("the result was pushed");
    assert_eq!(result["artifactUpdate"]["artifact"]["parts"], json!([{"text": "Hello, Ada."}]));
    assert_eq!(result["artifactUpdate"]["taskId"], json!(id));
    // Deleting the configuration leaves none.
    let deleted = f.result("DeleteTaskPushNotificationConfig", json!({"taskId": id, "id": config_id})).await;
    assert_eq!(deleted, Value::Null);
    assert_eq!(f.result("ListTaskPushNotificationConfigs", json!({"taskId": id})).await["configs"], json!([]));
    assert_eq!(f.code("DeleteTaskPushNotificationConfig", json!({"taskId": id, "id": config_id})).await, -32602);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_0_3_webhook_set_on_an_existing_task_is_sent_0_3_s_task() {
    let f = fixture_with("push03", &[("greet.sr", GREET)], None, |server| {
        server.settings.push_hosts = vec!["127.0.0.1".to_string()];
    });
    let (url, seen) = receiver().await;
    let id = f.queued("Ada", None).await;
    let set = json!({"taskId": id, "pushNotificationConfig": {"url": url, "id": "hook-1", "token": "t03",
                     "authentication": {"schemes": ["Basic"], "credentials": "dXNlcjpwdw=="}}});
    let answer = f.result("tasks/pushNotificationConfig/set", set).await;
    assert_eq!(answer["pushNotificationConfig"]["id"], "hook-1");
    let got = f.result("tasks/pushNotificationConfig/get", json!({"id": id})).await;
    assert_eq!(got["pushNotificationConfig"]["token"], "t03", "without an id, the first");
    f.claim(&id).await;
    f.finish(&id, RunStatus::Running, RunStatus::Done, Some(json!("Hello, Ada."))).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !seen.lock().unwrap().last().is_some_and(|(_, body)| body["status"]["state"] == "completed") {
        assert!(tokio::time::Instant::now() < deadline, "no completed task: {:?}", seen.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (headers, task) = seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!((task["kind"].clone(), task["id"].clone()), (json!("task"), json!(id)));
    assert_eq!(task["artifacts"][0]["parts"], json!([{"kind": "text", "text": "Hello, Ada."}]));
    assert_eq!(headers["authorization"], "Basic dXNlcjpwdw==");
    assert_eq!(headers["x-a2a-notification-token"], "t03");
    let deleted = json!({"id": id, "pushNotificationConfigId": "hook-1"});
    assert_eq!(f.result("tasks/pushNotificationConfig/delete", deleted).await, Value::Null);
}

/// With push notifications on, every push method answers hostile params
/// with a JSON-RPC error naming the problem, never a 500, and keeps nothing.
#[tokio::test]
async fn push_methods_refuse_hostile_configurations() {
    let f = fixture_with("push-hostile", &[("greet.sr", GREET)], None, |server| {
        server.settings.push_hosts = vec!["hooks.test:8443".to_string()];
    });
    let id = f.queued("Ada", None).await;
    let cases = [
        ("CreateTaskPushNotificationConfig", json!({"taskId": id}), -32602),
        ("CreateTaskPushNotificationConfig", json!({"taskId": id, "url": 7}), -32602),
        ("CreateTaskPushNotificationConfig", json!({"taskId": id, "url": "not a url"}), -32602),
        ("CreateTaskPushNotificationConfig", json!({"taskId": id, "url": "file:///etc/passwd"}), -32602),
        ("CreateTaskPushNotificationConfig", json!({"taskId": id, "url": "https://hooks.test/x"}), -32602),
        ("CreateTaskPushNotificationConfig", json!({"taskId": id, "url": "https://HOOKS.test.evil/x"}), -32602),
        ("CreateTaskPushNotificationConfig", json!({"taskId": "nope", "url": "https://hooks.test:8443/x"}), -32001),
        ("GetTaskPushNotificationConfig", json!({"taskId": id, "id": "none"}), -32602),
        ("DeleteTaskPushNotificationConfig", json!({"taskId": id}), -32602),
        ("tasks/pushNotificationConfig/set", json!({"id": id, "pushNotificationConfig": []}), -32602),
        ("tasks/pushNotificationConfig/delete", json!({"id": id}), -32602),
        ("tasks/pushNotificationConfig/list", json!({}), -32602),
    ];
    for (method, params, code) in cases {
        assert_eq!(f.code(method, params.clone()).await, code, "{method} {params}");
    }
    assert_eq!(f.result("ListTaskPushNotificationConfigs", json!({"taskId": id})).await["configs"], json!([]));
    // The allowed host and port, in any case.
    let ok =
        f.result("CreateTaskPushNotificationConfig", json!({"taskId": id, "url": "https://Hooks.Test:8443/x"})).await;
    assert_eq!(ok["taskId"], json!(id));
}

/// Valid params of a push method of `version` for task `id`: every field
/// either version defines for it, filled.
fn push_params(method: Method, version: Version, id: &str) -> Value {
    let config = |v03: bool| {
        let authentication = match v03 {
            true => json!({"schemes": ["Bearer"], "credentials": "secret"}),
            false => json!({"scheme": "Bearer", "credentials": "secret"}),
        };
        json!({"url": "https://hooks.test:8443/x", "token": "t", "id": "c1", "authentication": authentication})
    };
    match (method, version) {
        (Method::PushSet, Version::V10) => {
            let mut params = config(false);
            params["taskId"] = json!(id);
            params
        }
        (Method::PushSet, Version::V03) => json!({"id": id, "pushNotificationConfig": config(true)}),
        (Method::PushGet | Method::PushDelete, Version::V10) => json!({"taskId": id, "id": "c1"}),
        (Method::PushGet | Method::PushDelete, Version::V03) => json!({"id": id, "pushNotificationConfigId": "c1"}),
        (Method::PushList, Version::V10) => json!({"taskId": id}),
        (Method::PushList, Version::V03) => json!({"id": id}),
        _ => unreachable!("not a push method"),
    }
}

/// Every field of `value` (a path of keys and list indexes), depth first.
fn fields(value: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let children: Vec<(String, &Value)> = match value {
        Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
        Value::Array(items) => items.iter().enumerate().map(|(i, v)| (i.to_string(), v)).collect(),
        _ => return,
    };
    for (key, child) in children {
        at.push(key);
        out.push(at.clone());
        fields(child, at, out);
        at.pop();
    }
}

fn field_mut<'a>(value: &'a mut Value, path: &[String]) -> &'a mut Value {
    path.iter().fold(value, |v, key| match v {
        Value::Array(items) => &mut items[key.parse::<usize>().unwrap()],
        v => &mut v[key.as_str()],
    })
}

/// Every push method of the method table, every field of its params (from
/// the valid params of its version) given each JSON kind it is not: a
/// JSON-RPC error naming the field, never a 500 or a silently ignored
/// field, and nothing kept.
#[tokio::test]
async fn every_push_method_refuses_each_field_of_the_wrong_kind() {
    let f = fixture_with("push-kinds", &[("greet.sr", GREET)], None, |server| {
        server.settings.push_hosts = vec!["hooks.test:8443".to_string()];
    });
    let id = f.queued("Ada", None).await;
    let kinds = [json!(7), json!(true), json!("text"), json!([1]), json!({"k": 1})];
    let mut tried = 0;
    for (name, method, version) in METHODS {
        if !matches!(method, Method::PushSet | Method::PushGet | Method::PushList | Method::PushDelete) {
            continue;
        }
        let valid = push_params(method, version, &id);
        let mut paths = Vec::new();
        fields(&valid, &mut Vec::new(), &mut paths);
        for path in paths {
            let field = field_mut(&mut valid.clone(), &path).clone();
            for kind in kinds.iter().filter(|k| std::mem::discriminant(*k) != std::mem::discriminant(&field)) {
                let mut params = valid.clone();
                *field_mut(&mut params, &path) = kind.clone();
                let response = f.rpc(name, params.clone()).await;
                let error = &response["error"];
                assert_eq!(error["code"], -32602, "{name} {params}: {response}");
                // The field's name, or its list's for an item.
                let named = path.iter().rev().find(|key| key.parse::<usize>().is_err()).unwrap();
                let message = error["message"].as_str().unwrap();
                assert!(message.contains(named.as_str()), "{name} {params}: {message} does not name {named}");
                tried += 1;
            }
        }
    }
    assert!(tried > 100, "{tried} cases");
    assert_eq!(f.result("ListTaskPushNotificationConfigs", json!({"taskId": id})).await["configs"], json!([]));
}

/// A server that stops while a task it follows for a webhook has not ended
/// leaves the task to the next process of its name (`--replica-id`): the
/// end, reached while no follower ran, is sent by the restarted server,
/// which then records that nothing is left to send.
#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_server_sends_the_end_its_stopped_predecessor_did_not() {
    let allow = |server: &mut Server| server.settings.push_hosts = vec!["127.0.0.1".to_string()];
    let f = fixture_with("push-resume", &[("greet.sr", GREET)], None, allow);
    let (url, seen) = receiver().await;
    let config = json!({"url": url, "token": "tok-r"});
    let params = json!({"message": {"parts": [{"text": "Ada"}]},
                        "configuration": {"returnImmediately": true, "taskPushNotificationConfig": config}});
    let id = f.result("SendMessage", params).await["task"]["id"].as_str().unwrap().to_string();
    let state = |body: &Value| body["statusUpdate"]["status"]["state"].as_str().map(str::to_string);
    let states = || seen.lock().unwrap().iter().filter_map(|(_, body)| state(body)).collect::<Vec<_>>();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    // The first is refused with 503 and sent again.
    while states().len() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "no submitted notification: {:?}", states());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    f.server.closing.send_replace(true);
    while is_followed(&id) {
        assert!(tokio::time::Instant::now() < deadline, "the follower did not stop");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(f.server.store.a2a_followed("test").await.unwrap(), [id.as_str()], "left to the next process");
    f.finish(&id, RunStatus::Queued, RunStatus::Done, Some(json!("Hello, Ada."))).await;
    let mut again = test_server(&f.server.settings.state_dir, f.server.workloads.clone());
    allow(&mut again);
    crate::a2a::resume_push(&Arc::new(again)).await;
    while states().last().is_none_or(|s| s != "TASK_STATE_COMPLETED") {
        assert!(tokio::time::Instant::now() < deadline, "no completed notification: {:?}", states());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(states(), ["TASK_STATE_SUBMITTED", "TASK_STATE_SUBMITTED", "TASK_STATE_COMPLETED"]);
    assert_eq!(seen.lock().unwrap().last().unwrap().0["x-a2a-notification-token"], "tok-r");
    while !f.server.store.a2a_followed("test").await.unwrap().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "the task is still left to follow");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
