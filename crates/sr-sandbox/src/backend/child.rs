//! A sandbox that is one child process of ours (bubblewrap, or plain python3).

use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

use super::memory::{MemoryWatch, over_memory};
use super::{Launch, RawOutput, Sandbox};
use crate::{BoxFuture, SandboxError, Stream};

pub(super) struct ChildSandbox {
    child: Child,
    /// The tasks reading its stdout and stderr.
    collectors: Vec<JoinHandle<()>>,
    /// The child is a supervisor (bwrap) that exits with 128 + N when the driver
    /// dies of signal N.
    shell_codes: bool,
    /// Kills a bubblewrap sandbox whose processes together pass the memory limit.
    memory: Option<MemoryWatch>,
}

/// How a child sandbox is started.
pub(super) struct Spawn {
    /// See [`ChildSandbox::shell_codes`].
    pub shell_codes: bool,
    /// The child is bwrap: watch the whole sandbox's memory.
    pub watch_memory: bool,
}

/// Spawns `command`, writes the token to its stdin and collects its raw output.
pub(super) async fn spawn(mut command: Command, launch: &Launch, how: Spawn) -> Result<Box<dyn Sandbox>, SandboxError> {
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    let program = command.as_std().get_program().to_string_lossy().into_owned();
    let mut child = command.spawn().map_err(|error| SandboxError::Start(format!("cannot run {program}: {error}")))?;
    let memory = match child.id() {
        Some(pid) if how.watch_memory => Some(
            MemoryWatch::start(pid, launch.limits.memory_bytes)
                .map_err(|error| SandboxError::Start(format!("cannot watch the sandbox's memory: {error}")))?,
        ),
        _ => None,
    };
    let mut collectors = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        collectors.push(tokio::spawn(collect(stdout, Stream::Stdout, launch.output.clone())));
    }
    if let Some(stderr) = child.stderr.take() {
        collectors.push(tokio::spawn(collect(stderr, Stream::Stderr, launch.output.clone())));
    }
    if let Some(mut stdin) = child.stdin.take() {
        // A driver that died at once shows up in `wait`, with its stderr.
        let _ = stdin.write_all(format!("{}\n", launch.token).as_bytes()).await;
    }
    Ok(Box::new(ChildSandbox { child, collectors, shell_codes: how.shell_codes, memory }))
}

async fn collect(mut pipe: impl AsyncRead + Unpin, stream: Stream, output: RawOutput) {
    let mut buffer = vec![0u8; 8192];
    while let Ok(read) = pipe.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        output.push(stream, &buffer[..read]);
    }
}

fn describe(status: ExitStatus, shell_codes: bool) -> String {
    match (status.code(), status.signal()) {
        (Some(code @ 129..=159), _) if shell_codes => format!("killed by signal {}", code - 128),
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "stopped".to_string(),
    }
}

impl Sandbox for ChildSandbox {
    fn wait(&mut self) -> BoxFuture<'_, String> {
        Box::pin(async move {
            let mut status = match self.child.wait().await {
                Ok(status) => describe(status, self.shell_codes),
                Err(error) => format!("cannot wait for the sandbox: {error}"),
            };
            if let Some(memory) = self.memory.as_ref().filter(|memory| memory.tripped()) {
                status = over_memory(memory.limit_bytes);
            }
            // Its last words are still in the pipes.
            for collector in self.collectors.drain(..) {
                let _ = tokio::time::timeout(Duration::from_secs(1), collector).await;
            }
            status
        })
    }

    fn kill(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let _ = self.child.kill().await;
        })
    }
}
