//! MCP servers for the tests: the reference `server-everything` from npm (over
//! stdio, streamable HTTP and SSE), and a small local server that shows which
//! headers a client sent.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// `dist/index.js` of the installed `@modelcontextprotocol/server-everything`,
/// installed by `setup.sh` on first use; `None` (after a loud message) when
/// npm or its registry is out of reach. In CI that is a failure.
pub fn everything() -> Option<&'static Path> {
    static ENTRY: OnceLock<Option<PathBuf>> = OnceLock::new();
    ENTRY.get_or_init(install).as_deref()
}

fn install() -> Option<PathBuf> {
    // sr-runtime's tests include this file too: paths start from crates/.
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dest =
        std::env::var_os("SR_MCP_SERVERS").map(PathBuf::from).unwrap_or_else(|| crates.join("../target/mcp-servers"));
    let entry = dest.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let setup =
        Command::new("bash").arg(crates.join("sr-mcp/tests/mcp/setup.sh")).env("SR_MCP_SERVERS", &dest).output();
    let problem = match setup {
        Ok(out) if out.status.success() && entry.exists() && node_runs() => return Some(entry),
        Ok(out) if out.status.success() => "node is not installed".to_string(),
        Ok(out) => format!(
            "setup.sh failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => format!("cannot run setup.sh: {e}"),
    };
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
    if ci {
        panic!("CI needs the MCP test servers: {problem}");
    }
    // Straight to stderr: the test harness captures `eprintln!`, and this must be seen.
    let bar = "!".repeat(72);
    let _ = writeln!(std::io::stderr(), "\n{bar}\nSKIPPING the MCP tests against real servers: {problem}\n{bar}\n");
    None
}

fn node_runs() -> bool {
    Command::new("node").arg("--version").output().is_ok_and(|out| out.status.success())
}

/// A running `server-everything` on a local port; stopped when dropped.
pub struct HttpServer {
    child: Child,
    pub port: u16,
}

impl HttpServer {
    /// Starts `server-everything` with `transport` (`streamableHttp` or `sse`).
    pub fn start(entry: &Path, transport: &str) -> HttpServer {
        let port = free_port();
        let child = Command::new("node")
            .arg(entry)
            .arg(transport)
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts");
        let mut server = HttpServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("server-everything {transport} exited: {status}");
            }
            assert!(Instant::now() < deadline, "server-everything {transport} did not listen on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The path and headers of each request a [`HeaderServer`] saw.
pub type Seen = Arc<Mutex<Vec<(String, HeaderMap)>>>;

/// A minimal stateless streamable-HTTP MCP server at `/mcp` with one tool,
/// `whoami`, that answers with the `Authorization` header of its call; `/sse`
/// refuses with 401. Every request is kept in `seen`.
pub struct HeaderServer {
    pub addr: SocketAddr,
    seen: Seen,
    task: tokio::task::JoinHandle<()>,
}

impl HeaderServer {
    pub async fn start() -> HeaderServer {
        let seen: Seen = Arc::default();
        let mcp = {
            let seen = seen.clone();
            move |headers: HeaderMap, body: String| {
                let response = answer(&headers, &body);
                seen.lock().unwrap().push(("/mcp".into(), headers));
                std::future::ready(response)
            }
        };
        let sse = {
            let seen = seen.clone();
            move |headers: HeaderMap| {
                seen.lock().unwrap().push(("/sse".into(), headers));
                std::future::ready(StatusCode::UNAUTHORIZED)
            }
        };
        let app = Router::new()
            .route("/mcp", post(mcp).get(|| std::future::ready(StatusCode::METHOD_NOT_ALLOWED)))
            .route("/sse", get(sse));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        HeaderServer { addr, seen, task }
    }

    /// The values of header `name` in the requests to `path`.
    pub fn header(&self, path: &str, name: &str) -> Vec<String> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|(p, _)| p == path)
            .filter_map(|(_, headers)| headers.get(name).map(|v| v.to_str().unwrap().to_string()))
            .collect()
    }
}

impl Drop for HeaderServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn answer(headers: &HeaderMap, body: &str) -> Response {
    let Ok(request) = serde_json::from_str::<Value>(body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let Some(id) = request.get("id") else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match request["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "header-server", "version": "1.0.0"}
        }),
        Some("tools/list") => json!({"tools": [{
            "name": "whoami",
            "description": "The Authorization header of this call",
            "inputSchema": {"type": "object", "properties": {}}
        }]}),
        Some("tools/call") => {
            let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("none");
            json!({"content": [{"type": "text", "text": auth}]})
        }
        _ => {
            return axum::Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}))
                .into_response();
        }
    };
    axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

/// A TCP port that accepts connections and never answers.
pub async fn silent_server() -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    (addr, task)
}
