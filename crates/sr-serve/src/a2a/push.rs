//! Push notifications: a task's webhook configurations (given with a send's
//! `configuration` or the `…PushNotificationConfig` methods) and, while a
//! task has one, a follower that POSTs each change of its status to every
//! webhook, with the configuration's token (`X-A2A-Notification-Token`) and
//! authentication (`Authorization: SCHEME CREDENTIALS`), retried with
//! backoff. A webhook's host must be one `sr serve --push-host` allows: a
//! client names the URL, and the server reaches no host it was not told to.
//! The store names the replica that follows a task (`RunStore::follow_a2a`)
//! until the task's end is sent; a restarted process of that name follows
//! its tasks again (`resume`).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::methods::Call;
use super::record::{self, Push};
use super::rpc::{self, RpcError, Version};
use super::shapes;
use crate::Server;
use crate::store::RunStatus;

/// Tries of one notification, and the wait before the second (doubled for each next).
pub const ATTEMPTS: u32 = 4;
pub const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// How long one POST may take.
const POST_TIMEOUT: Duration = Duration::from_secs(10);

/// The tasks this process follows for their webhooks.
static FOLLOWING: Mutex<Option<HashSet<String>>> = Mutex::new(None);

fn refused() -> RpcError {
    RpcError::push_not_supported()
}

/// Checks that push notifications are on and `url`'s host is allowed.
fn allowed(call: &Call, url: &str) -> Result<(), RpcError> {
    let hosts = &call.server.settings.push_hosts;
    if hosts.is_empty() {
        return Err(refused());
    }
    let parsed = reqwest::Url::parse(url).map_err(|e| RpcError::invalid_params(format!("url: not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(RpcError::invalid_params("url: must be http:// or https://"));
    }
    let host = parsed.host_str().unwrap_or_default().to_ascii_lowercase();
    let port = parsed.port_or_known_default().unwrap_or_default();
    let with_port = format!("{host}:{port}");
    if hosts.iter().any(|allowed| *allowed == host || *allowed == with_port) {
        return Ok(());
    }
    let shown: String = host.chars().take(80).collect();
    Err(RpcError::invalid_params(format!(
        "url: host {shown:?} is not one this server may notify (sr serve --push-host)"
    )))
}

/// A configuration as the client gave it: 1.0's (`scheme`) or 0.3's (`schemes`).
fn parse(call: &Call, config: &Value, at: &str) -> Result<Push, RpcError> {
    let Some(config) = config.as_object() else {
        return Err(RpcError::invalid_params(format!("{at}: must be an object")));
    };
    let text =
        |name: &str| rpc::string(config, name).map_err(|e| RpcError::invalid_params(format!("{at}.{}", e.message)));
    let url = text("url")?.ok_or_else(|| RpcError::invalid_params(format!("{at}.url: missing")))?.to_string();
    allowed(call, &url)?;
    let (scheme, credentials) = match config.get("authentication") {
        None | Some(Value::Null) => (None, None),
        Some(Value::Object(authentication)) => authentication_of(authentication, &format!("{at}.authentication"))?,
        Some(_) => return Err(RpcError::invalid_params(format!("{at}.authentication: must be an object"))),
    };
    Ok(Push {
        id: text("id")?.filter(|id| !id.is_empty()).map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_string),
        url,
        token: text("token")?.map(str::to_string),
        scheme: scheme.map(str::to_string),
        credentials: credentials.map(str::to_string),
        v03: call.version == Version::V03,
    })
}

/// An `authentication` object's scheme (1.0's `scheme`, else the first of
/// 0.3's `schemes`) and credentials.
fn authentication_of<'a>(
    authentication: &'a Map<String, Value>,
    at: &str,
) -> Result<(Option<&'a str>, Option<&'a str>), RpcError> {
    let text = |name: &str| {
        rpc::string(authentication, name).map_err(|e| RpcError::invalid_params(format!("{at}.{}", e.message)))
    };
    let schemes = match authentication.get("schemes") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => items.first().and_then(Value::as_str),
        Some(_) => return Err(RpcError::invalid_params(format!("{at}.schemes: must be a list of strings"))),
    };
    let scheme = text("scheme")?.or(schemes);
    Ok((scheme, text("credentials")?))
}

/// A send's configuration (1.0 `configuration.taskPushNotificationConfig`,
/// 0.3 `configuration.pushNotificationConfig`), checked before the task exists.
pub fn from_send(call: &Call, params: &Map<String, Value>) -> Result<Option<Push>, RpcError> {
    let name = match call.version {
        Version::V10 => "taskPushNotificationConfig",
        Version::V03 => "pushNotificationConfig",
    };
    match params.get("configuration").and_then(|c| c.get(name)) {
        None | Some(Value::Null) => Ok(None),
        Some(config) => parse(call, config, &format!("configuration.{name}")).map(Some),
    }
}

/// Keeps `push` for `task` and follows the task for it.
pub async fn attach(call: &Call, task: &str, push: Push) -> Result<(), RpcError> {
    record::update(&call.server, task, &[], |record| {
        record.push.retain(|kept| kept.id != push.id);
        record.push.push(push.clone());
        true
    })
    .await
    .map_err(|e| RpcError::internal(format!("cannot keep the configuration: {e}")))?;
    let server = &call.server;
    server
        .store
        .follow_a2a(task, Some(&server.settings.replica_id))
        .await
        .map_err(|e| RpcError::internal(format!("cannot record who follows the task: {e}")))?;
    follow(call, task);
    Ok(())
}

/// Follows again the tasks a process of this replica's name was following
/// for their webhooks when it stopped: each one's status as it is now (an
/// end reached meanwhile, on any replica, included) is sent first, so a
/// webhook may get a status twice, but not miss the end.
pub async fn resume(server: &Arc<Server>) {
    let runs = match server.store.a2a_followed(&server.settings.replica_id).await {
        Ok(runs) => runs,
        Err(error) => {
            tracing::error!(%error, "cannot read the tasks this replica follows for their webhooks");
            return;
        }
    };
    for task in runs {
        let workload = match server.store.run(&task).await {
            Ok(Some(run)) => server.workloads.get(&run.workload).cloned(),
            Ok(None) => None,
            Err(error) => {
                tracing::error!(%error, %task, "cannot read a task its webhooks wait on");
                continue;
            }
        };
        let Some(workload) = workload else {
            tracing::warn!(%task, "a task's webhooks wait on a workload this server does not serve; not followed");
            continue;
        };
        tracing::info!(%task, "following a task for its webhooks again");
        follow(&Call { server: server.clone(), workload, version: Version::V10 }, &task);
    }
}

/// The task's configurations.
async fn configs(call: &Call, task: &str) -> Result<Vec<Push>, RpcError> {
    let record = record::read(&call.server, task).await;
    Ok(record.map_err(|e| RpcError::internal(format!("cannot read the configurations: {e}")))?.push)
}

/// The configuration as its version shows it.
fn shown(task: &str, push: &Push, version: Version) -> Value {
    let mut config = json!({"id": push.id, "url": push.url});
    if let Some(token) = &push.token {
        config["token"] = json!(token);
    }
    if push.scheme.is_some() || push.credentials.is_some() {
        config["authentication"] = match version {
            Version::V10 => json!({"scheme": push.scheme, "credentials": push.credentials}),
            Version::V03 => json!({"schemes": push.scheme.iter().collect::<Vec<_>>(), "credentials": push.credentials}),
        };
    }
    match version {
        Version::V10 => {
            config["taskId"] = json!(task);
            config
        }
        Version::V03 => json!({"taskId": task, "pushNotificationConfig": config}),
    }
}

/// The task a configuration method names (1.0 `taskId`, 0.3 `id` or `taskId`).
async fn task_of(call: &Call, params: &Map<String, Value>) -> Result<String, RpcError> {
    let task = match call.version {
        Version::V10 => rpc::required(params, "taskId")?,
        Version::V03 => match rpc::string(params, "id")? {
            Some(id) => id,
            None => rpc::required(params, "taskId")?,
        },
    };
    call.find(task).await?;
    Ok(task.to_string())
}

/// `CreateTaskPushNotificationConfig`/`tasks/pushNotificationConfig/set`.
pub async fn set(call: &Call, params: &Map<String, Value>) -> Result<Value, RpcError> {
    if call.server.settings.push_hosts.is_empty() {
        return Err(refused());
    }
    let task = task_of(call, params).await?;
    let push = match call.version {
        Version::V10 => parse(call, &Value::Object(params.clone()), "params")?,
        Version::V03 => {
            let config = params.get("pushNotificationConfig").cloned().unwrap_or(Value::Null);
            parse(call, &config, "pushNotificationConfig")?
        }
    };
    let answer = shown(&task, &push, call.version);
    attach(call, &task, push).await?;
    Ok(answer)
}

/// The configuration id a get or delete names (1.0 `id`, 0.3 `pushNotificationConfigId`).
fn config_id<'a>(call: &Call, params: &'a Map<String, Value>) -> Result<Option<&'a str>, RpcError> {
    match call.version {
        Version::V10 => rpc::required(params, "id").map(Some),
        Version::V03 => rpc::string(params, "pushNotificationConfigId"),
    }
}

/// `GetTaskPushNotificationConfig`/`tasks/pushNotificationConfig/get`.
pub async fn get(call: &Call, params: &Map<String, Value>) -> Result<Value, RpcError> {
    if call.server.settings.push_hosts.is_empty() {
        return Err(refused());
    }
    let task = task_of(call, params).await?;
    let id = config_id(call, params)?;
    let pushes = configs(call, &task).await?;
    let found = pushes.iter().find(|p| id.is_none_or(|id| p.id == id));
    let push = found.ok_or_else(|| match id {
        Some(id) => RpcError::invalid_params(format!("task {task} has no push notification configuration {id}")),
        None => RpcError::invalid_params(format!("task {task} has no push notification configuration")),
    })?;
    Ok(shown(&task, push, call.version))
}

/// `ListTaskPushNotificationConfigs`/`tasks/pushNotificationConfig/list`.
pub async fn list(call: &Call, params: &Map<String, Value>) -> Result<Value, RpcError> {
    if call.server.settings.push_hosts.is_empty() {
        return Err(refused());
    }
    let task = task_of(call, params).await?;
    let configs: Vec<Value> = configs(call, &task).await?.iter().map(|push| shown(&task, push, call.version)).collect();
    Ok(match call.version {
        Version::V10 => json!({"configs": configs, "nextPageToken": ""}),
        Version::V03 => Value::Array(configs),
    })
}

/// `DeleteTaskPushNotificationConfig`/`tasks/pushNotificationConfig/delete`.
pub async fn delete(call: &Call, params: &Map<String, Value>) -> Result<Value, RpcError> {
    if call.server.settings.push_hosts.is_empty() {
        return Err(refused());
    }
    let task = task_of(call, params).await?;
    let Some(id) = config_id(call, params)? else {
        return Err(RpcError::invalid_params("pushNotificationConfigId: missing"));
    };
    let removed = record::update(&call.server, &task, &[], |record| {
        let before = record.push.len();
        record.push.retain(|push| push.id != id);
        before != record.push.len()
    })
    .await
    .map_err(|e| RpcError::internal(format!("cannot change the configurations: {e}")))?;
    if !removed {
        return Err(RpcError::invalid_params(format!("task {task} has no push notification configuration {id}")));
    }
    Ok(Value::Null)
}

/// Whether this process follows `task` for its webhooks now.
#[cfg(test)]
pub(crate) fn is_followed(task: &str) -> bool {
    FOLLOWING.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).as_ref().is_some_and(|f| f.contains(task))
}

/// Follows `task` (unless this process already does) until it ends, the
/// server stops, or it has no configuration left.
fn follow(call: &Call, task: &str) {
    {
        let mut following = FOLLOWING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !following.get_or_insert_with(HashSet::new).insert(task.to_string()) {
            return;
        }
    }
    let call = Call { server: call.server.clone(), workload: call.workload.clone(), version: call.version };
    let task = task.to_string();
    tokio::spawn(async move {
        // Followed to its end: nothing is left to send after a restart.
        if notify_changes(&call, &task).await == Followed::ToTheEnd
            && let Err(error) = call.server.store.follow_a2a(&task, None).await
        {
            tracing::warn!(%error, %task, "cannot record that a task's webhooks have nothing left to be sent");
        }
        let mut following = FOLLOWING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        following.get_or_insert_with(HashSet::new).remove(&task);
    });
}

/// Why a follower stopped.
#[derive(Debug, PartialEq)]
enum Followed {
    /// The task ended (its end sent), has no configuration left, or is gone.
    ToTheEnd,
    /// The server stops, or the store failed: a restart follows it again.
    Stopped,
}

async fn notify_changes(call: &Call, task: &str) -> Followed {
    let client =
        match reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).timeout(POST_TIMEOUT).build() {
            Ok(client) => Arc::new(client),
            Err(error) => {
                tracing::error!(%error, "cannot make the webhooks' HTTP client");
                return Followed::Stopped;
            }
        };
    let server = call.server.clone();
    let mut closing = server.closing.subscribe();
    let mut last: Option<RunStatus> = None;
    loop {
        let mut changes = server.subscribe(task);
        let run = match server.store.run(task).await {
            Ok(Some(run)) => run,
            Ok(None) => return Followed::ToTheEnd,
            Err(error) => {
                tracing::error!(%error, "cannot read a task's run for its webhooks");
                return Followed::Stopped;
            }
        };
        if last != Some(run.status) {
            last = Some(run.status);
            let pushes = match record::read(&server, task).await {
                Ok(record) if record.push.is_empty() => return Followed::ToTheEnd,
                Ok(record) => record.push,
                Err(error) => {
                    tracing::error!(%error, "cannot read a task's webhooks");
                    return Followed::Stopped;
                }
            };
            let view = match call.view(&run, 0, true, true).await {
                Ok(view) => view,
                Err(error) => {
                    tracing::error!(error = %error.message, "cannot read what a task's webhooks are sent");
                    return Followed::Stopped;
                }
            };
            for push in &pushes {
                for body in notifications(&run, &view, push.v03) {
                    post(&client, task, push, &body).await;
                }
            }
            if run.status.is_ended() {
                return Followed::ToTheEnd;
            }
        }
        tokio::select! {
            _ = changes.changes.changed() => {}
            _ = closing.changed() => return Followed::Stopped,
            () = tokio::time::sleep(Duration::from_secs(5)) => {}
        }
    }
}

/// What a webhook is sent at a change: 1.0's stream responses (the
/// artifacts, then the status update), or 0.3's task.
fn notifications(run: &crate::store::RunRow, view: &shapes::View, v03: bool) -> Vec<Value> {
    if v03 {
        return vec![shapes::task(run, Version::V03, view)];
    }
    let mut bodies: Vec<Value> = shapes::artifacts(run, Version::V10, view)
        .into_iter()
        .map(|artifact| json!({"artifactUpdate": shapes::artifact_update(run, Version::V10, artifact)}))
        .collect();
    let update = shapes::status_update(run, Version::V10, view.question.as_deref());
    bodies.push(json!({"statusUpdate": update}));
    bodies
}

/// POSTs one notification, retried with doubling waits until a 2xx answer
/// or the last try.
async fn post(client: &reqwest::Client, task: &str, push: &Push, body: &Value) {
    let mut wait = FIRST_BACKOFF;
    for attempt in 1..=ATTEMPTS {
        let mut request =
            client.post(&push.url).header(reqwest::header::CONTENT_TYPE, "application/json").body(body.to_string());
        if let Some(token) = &push.token {
            request = request.header("X-A2A-Notification-Token", token);
        }
        if let (Some(scheme), Some(credentials)) = (&push.scheme, &push.credentials) {
            request = request.header(reqwest::header::AUTHORIZATION, format!("{scheme} {credentials}"));
        }
        let why = match request.send().await {
            Ok(answer) if answer.status().is_success() => return,
            Ok(answer) => format!("HTTP {}", answer.status().as_u16()),
            Err(error) => error.to_string(),
        };
        tracing::warn!(%task, config = %push.id, attempt, %why, "a push notification was not taken");
        if attempt < ATTEMPTS {
            tokio::time::sleep(wait).await;
            wait *= 2;
        }
    }
    tracing::error!(%task, config = %push.id, "a push notification was given up after {ATTEMPTS} tries");
}
