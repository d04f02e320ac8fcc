//! Opening a session with one server over its transport and listing its tools.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, KillOnDrop};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;

use crate::error::ConnectError;
use crate::server::{Server, Target};
use crate::sse::SseTransport;

/// What a stdio server inherits of the environment, as with the MCP reference
/// SDKs: enough to run, and none of the caller's secrets such as API keys.
#[cfg(unix)]
const INHERITED: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];
#[cfg(windows)]
const INHERITED: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
    "PROGRAMFILES",
];

pub(crate) type Client = RunningService<RoleClient, ClientConfig>;

/// A live session and the tools the server listed.
pub(crate) struct Connected {
    pub(crate) client: Client,
    pub(crate) tools: Vec<rmcp::model::Tool>,
}

pub(crate) async fn connect(server: &Server) -> Result<Connected, ConnectError> {
    match &server.target {
        Target::Stdio { program, args, env } => {
            let mut command = tokio::process::Command::new(program);
            command.args(args).env_clear();
            for name in INHERITED {
                if let Some(value) = std::env::var_os(name) {
                    command.env(name, value);
                }
            }
            command.envs(env.iter().map(|(name, value)| (name, value)));
            let mut command = CommandWrap::from(command);
            command.wrap(KillOnDrop);
            #[cfg(unix)]
            command.wrap(process_wrap::tokio::ProcessGroup::leader());
            let (transport, stderr) = TokioChildProcess::builder(command)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|source| ConnectError::Start { program: program.clone(), source })?;
            let stderr = StderrTail::follow(stderr);
            match handshake(transport).await {
                Ok(connected) => Ok(connected),
                Err(e) => Err(stderr.explain(e).await),
            }
        }
        Target::StreamableHttp { url, headers } => {
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                .custom_headers(headers.iter().cloned().collect());
            handshake(StreamableHttpClientTransport::from_config(config)).await
        }
        Target::Sse { url, headers } => handshake(SseTransport::connect(url, headers).await?).await,
    }
}

async fn handshake<T, E, A>(transport: T) -> Result<Connected, ConnectError>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let info =
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("streetrace", env!("CARGO_PKG_VERSION")));
    let client = info.serve(transport).await.map_err(|e| ConnectError::Handshake(Box::new(e)))?;
    let tools = client.list_all_tools().await.map_err(ConnectError::ListTools)?;
    Ok(Connected { client, tools })
}

/// The last lines a stdio server wrote to stderr: they say why it failed to
/// start. Reading also keeps the pipe from filling up and blocking the server.
struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    reader: Option<tokio::task::JoinHandle<()>>,
}

impl StderrTail {
    const LINES: usize = 10;
    const LINE_CHARS: usize = 300;

    fn follow(stderr: Option<ChildStderr>) -> StderrTail {
        let lines = Arc::new(Mutex::new(VecDeque::new()));
        let reader = stderr.map(|stderr| {
            let lines = lines.clone();
            tokio::spawn(async move {
                let mut stderr = BufReader::new(stderr);
                let mut line = Vec::new();
                while stderr.read_until(b'\n', &mut line).await.is_ok_and(|n| n > 0) {
                    let text: String =
                        String::from_utf8_lossy(&line).trim_end().chars().take(Self::LINE_CHARS).collect();
                    let mut lines = lines.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    if lines.len() == Self::LINES {
                        lines.pop_front();
                    }
                    lines.push_back(text);
                    line.clear();
                }
            })
        });
        StderrTail { lines, reader }
    }

    /// `error`, with what the server said before failing; a server that has
    /// exited has its last words read first.
    async fn explain(mut self, error: ConnectError) -> ConnectError {
        if let Some(reader) = &mut self.reader {
            let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
        }
        let lines = self.lines.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let said: Vec<&str> = lines.iter().map(String::as_str).filter(|l| !l.trim().is_empty()).collect();
        if said.is_empty() {
            error
        } else {
            ConnectError::ServerSaid { error: Box::new(error), said: said.join(" | ") }
        }
    }
}
