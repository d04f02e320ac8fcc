//! The time-travel oracle through `sr serve`: a run of the workflow, then
//! `GET /v1/runs/{id}/at/{seq}` at its last event, back `n` events and
//! forward again. Going back and forth replays the journal: the files at the
//! last event are the same every time, and no model or tool is called.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// `sr serve` on a free port, stopped when dropped.
pub struct Serve {
    child: Child,
    url: String,
    client: reqwest::Client,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Serve {
    pub fn start(sr: &Path, dir: &Path, model_url: &str) -> Result<Serve, String> {
        let port =
            std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map_err(|e| e.to_string())?.port();
        let child = Command::new(sr)
            .args(["serve", "w.sr", "--bind", &format!("127.0.0.1:{port}"), "--state-dir", "serve-state"])
            .current_dir(dir)
            .env("NO_COLOR", "1")
            .env("OPENAI_BASE_URL", format!("{model_url}/v1"))
            .env("OPENAI_API_KEY", "test-key-0000")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let client = reqwest::Client::new();
        Ok(Serve { child, url: format!("http://127.0.0.1:{port}"), client })
    }

    pub async fn ready(&self) -> Result<(), String> {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(20) {
            if self.client.get(format!("{}/v1/workloads", self.url)).send().await.is_ok() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err("sr serve did not answer within 20 s".into())
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Result<Value, String> {
        let mut request = self.client.request(method, format!("{}{path}", self.url));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.map_err(|e| e.to_string())?;
        let status = response.status();
        let value: Value = response.json().await.map_err(|e| e.to_string())?;
        if status.is_success() { Ok(value) } else { Err(format!("{path}: {status} {value}")) }
    }

    /// Runs the workflow to its end; its id.
    pub async fn run(&self) -> Result<String, String> {
        let body = json!({"workload": "w", "prompt": "go", "wait": true});
        let run = self.call(reqwest::Method::POST, "/v1/runs", Some(body)).await?;
        run["id"].as_str().map(str::to_owned).ok_or(format!("no run id in {run}"))
    }

    /// The number of the run's events, from the endpoint's answer to one past them.
    pub async fn events(&self, id: &str) -> Result<u64, String> {
        let Err(error) = self.call(reqwest::Method::GET, &format!("/v1/runs/{id}/at/1000000"), None).await else {
            return Err("event 1000000 was found".into());
        };
        let count = error.split("are 1 to ").nth(1).and_then(|rest| rest.split(';').next());
        count.and_then(|n| n.trim().parse().ok()).ok_or(format!("no event count in {error}"))
    }

    /// The files of the run at event `seq`.
    pub async fn files_at(&self, id: &str, seq: u64) -> Result<Value, String> {
        let at = self.call(reqwest::Method::GET, &format!("/v1/runs/{id}/at/{seq}"), None).await?;
        Ok(at["files"].clone())
    }
}
