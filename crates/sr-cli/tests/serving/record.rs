//! The store of record's tests: replicas on a PostgreSQL server started by
//! the test, each in a directory of its own with the workloads.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use sr_llm::mock::MockServer;
use sr_testing::postgres::Postgres;

use super::{Serve, temp, wait_until};

/// One agent: a session's turns are one conversation.
pub const CHAT: &str = "model main = openai/gpt-4o-mini\nprompt chat: \"\"\"Answer in one word.\"\"\"\nagent main:\n    instruction chat\n";
pub const PAUSING: &str = include_str!("../fixtures/pausing.sr");
/// A writer, then a reviewer of its draft.
pub const TWO_AGENTS: &str = include_str!("../fixtures/two_agents.sr");
/// An agent with the file tools.
pub const FILER: &str = "model main = openai/gpt-4o-mini\ntool fs = builtin streetrace.fs\nprompt file: \"\"\"File the note.\"\"\"\nagent:\n    instruction file\n    tools fs\n";

/// An agent with one tool, `pay__charge`, an MCP server that notes each
/// call's idempotency key in `log`, outside every replica's directories.
pub fn payer(log: &Path) -> String {
    payer_starting_in(log, 0)
}

/// [`payer`], its MCP server slow to start: it notes its start in
/// `LOG.started` and answers `initialize` `seconds` later (0: at once).
pub fn payer_starting_in(log: &Path, seconds: u32) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/serving/charge_mcp.py");
    let slow = if seconds > 0 { format!(" '{seconds}'") } else { String::new() };
    format!(
        "model main = openai/gpt-4o-mini\ntool pay = mcp \"stdio:python3 '{}' '{}'{slow}\"\n\
         prompt helper: \"\"\"You charge cards.\"\"\"\nagent:\n    instruction helper\n    tools pay\n",
        script.display(),
        log.display()
    )
}

/// Where the charges of test `name` are noted (the host's counter of the tool's effects).
pub fn charges(name: &str) -> PathBuf {
    temp(&format!("{name}-host"), &[]).join("charges.log")
}

/// A directory of its own per replica, each with the workloads: `sr serve`
/// keeps its state in `DIR/state`.
pub fn machines(name: &str) -> (PathBuf, PathBuf) {
    let pay = payer(&charges(name));
    let files =
        [("chat.sr", CHAT), ("reply.sr", PAUSING), ("greet.sr", TWO_AGENTS), ("filer.sr", FILER), ("pay.sr", &pay)];
    let (a, b) = (temp(&format!("{name}-a"), &files), temp(&format!("{name}-b"), &files));
    let (sa, sb) = (a.join("state"), b.join("state"));
    assert!(!sa.starts_with(&sb) && !sb.starts_with(&sa) && !a.starts_with(&b) && !b.starts_with(&a), "no path shared");
    (a, b)
}

/// Replica `name` in `dir`, with a 2 s lease.
pub async fn replica(dir: &Path, mock: &MockServer, db: &Postgres, name: &str) -> Serve {
    replica_with(dir, mock, db, name, &["--lease-secs", "2"]).await
}

/// Replica `name` in `dir` with the flags `extra`.
pub async fn replica_with(dir: &Path, mock: &MockServer, db: &Postgres, name: &str, extra: &[&str]) -> Serve {
    let url = db.url();
    let workloads = ["chat.sr", "reply.sr", "greet.sr", "filer.sr", "pay.sr"];
    let flags = ["--database-url", &url, "--replica-id", name];
    Serve::start(dir, mock, &[&workloads[..], &flags[..], extra].concat()).await
}

/// A client of the test's own on the replicas' database.
pub async fn sql(db: &Postgres) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&db.url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

/// The journal of the run's last attempt as the database holds it: no
/// line twice, no step twice; its lines.
pub async fn stored_journal(client: &tokio_postgres::Client, run: &str) -> Vec<Value> {
    let row = client.query_one("SELECT session, attempt_run FROM runs WHERE id = $1", &[&run]).await.unwrap();
    let (session, attempt): (String, i64) = (row.get(0), row.get(1));
    let lines: Vec<Value> = client
        .query(
            "SELECT body FROM journal_lines WHERE session = $1 AND attempt = $2 ORDER BY line",
            &[&session, &attempt],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_str(r.get::<_, &str>(0)).unwrap())
        .collect();
    // A call's `tool_start` and `tool` lines share its step; progress updates may be many.
    let mut steps: Vec<String> = lines
        .iter()
        .filter(|l| l["kind"] != "tool_update")
        .filter_map(|l| l["step"].as_u64().map(|step| format!("{} {step}", l["kind"])))
        .collect();
    let count = steps.len();
    steps.sort_unstable();
    steps.dedup();
    assert_eq!(steps.len(), count, "no step twice: {lines:?}");
    lines
}

pub fn of_kind<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["kind"] == kind).collect()
}

pub async fn status_is(serve: &Serve, id: &str, status: &str) -> Value {
    let path = format!("/v1/runs/{id}");
    wait_until(Duration::from_secs(60), || async {
        let run = serve.get(&path).await.1;
        (run["status"] == status).then_some(run)
    })
    .await
}
