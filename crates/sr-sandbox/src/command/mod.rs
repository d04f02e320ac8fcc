//! One program run to completion for a tool (the builtin cli tool): in the same
//! bubblewrap sandbox as coding agents, but with the work directory bound
//! read-write at `/work` (less the read-only and hidden paths, `mounts`); or,
//! when the caller has opted in, on the host. Either way the environment is an
//! allowlist (`PATH`, `HOME`, `LANG`, and what the caller adds: the runtime
//! adds `SR_IDEMPOTENCY_KEY`), stdin is empty, output is captured up to
//! a cap (the rest is read and counted, never kept) and the program and
//! everything it started are killed at the time cap; what it leaves running when
//! it exits is killed too. In the sandbox, the memory of all its processes
//! together is bounded as well.

mod mounts;
mod placeholder;

use std::fmt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use crate::SandboxError;
use crate::backend::bubblewrap::{confine, isolate};
use crate::backend::memory::{MemoryWatch, over_memory};
use crate::backend::{Bubblewrap, Limits};

/// Where the work directory is inside the sandbox.
pub const WORK_DIR: &str = "/work";

/// Files from `/etc` that name resolution and TLS need, bound when the command
/// may use the network.
const NETWORK_ETC: &[&str] = &[
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
];

/// Where and how a command runs.
#[derive(Debug, Clone)]
pub enum Placement {
    /// In a bubblewrap sandbox: the host's programs read-only, the work directory
    /// read-write at [`WORK_DIR`], nothing else of the host.
    Sandbox {
        work_dir: PathBuf,
        /// Paths inside the work directory (absolute, or relative to it) the
        /// command may read but not change, nor create while they do not exist
        /// (the workload's files, `.git`, `.streetrace`). A directory's whole tree
        /// is read-only.
        read_only: Vec<PathBuf>,
        /// Paths inside the work directory (absolute, or relative to it) the
        /// command must not see (the runtime's state): a directory shows empty,
        /// anything else is unreadable, and what does not exist cannot be created.
        hidden: Vec<PathBuf>,
        /// Share the host's network (and the `/etc` files it needs).
        network: bool,
        limits: Limits,
    },
    /// On the host, in the work directory, with our user's rights.
    Host { work_dir: PathBuf },
}

/// Caps on one command.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    pub timeout: Duration,
    /// Bytes kept of each of stdout and stderr.
    pub output_bytes: usize,
}

/// One captured stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The first [`Caps::output_bytes`] bytes, lossily decoded.
    pub text: String,
    /// Bytes read past the cap and dropped.
    pub dropped: u64,
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Exited(i32),
    Signalled(i32),
    /// Killed at the time cap.
    TimedOut,
    /// Killed, with everything it started, when the sandbox's processes together
    /// held more than this much memory.
    MemoryExceeded {
        limit_bytes: u64,
    },
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Exited(code) => write!(f, "exit status {code}"),
            Status::Signalled(signal) => write!(f, "killed by signal {signal}"),
            Status::TimedOut => f.write_str("timed out"),
            Status::MemoryExceeded { limit_bytes } => f.write_str(&over_memory(*limit_bytes)),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutput {
    pub status: Status,
    pub stdout: Captured,
    pub stderr: Captured,
}

/// Removes what a process killed while its command ran in a sandbox on
/// `work_dir` left there: the empty directories and files that
/// stood for missing read-only and hidden paths. A resumed run calls it
/// before anything looks at the work directory.
pub fn remove_left_behind(work_dir: &Path, read_only: &[PathBuf], hidden: &[PathBuf]) {
    if let Ok(root) = std::fs::canonicalize(work_dir) {
        mounts::remove_left_behind(&root, read_only, hidden);
    }
}

/// Runs `program` with `args` as `placement` says, within `caps`.
pub async fn run_command(
    placement: &Placement,
    program: &str,
    args: &[String],
    caps: Caps,
) -> Result<CommandOutput, SandboxError> {
    run_command_with(placement, program, args, caps, &[]).await
}

/// Like [`run_command`], with the variables `env` added to the command's
/// environment (a tool call's idempotency key).
pub async fn run_command_with(
    placement: &Placement,
    program: &str,
    args: &[String],
    caps: Caps,
    env: &[(&str, &str)],
) -> Result<CommandOutput, SandboxError> {
    // `mounts` holds the placeholders the sandbox's mounts need until it has ended.
    let (mut command, mounts) = match placement {
        Placement::Sandbox { work_dir, read_only, hidden, network, limits } => {
            if !Bubblewrap::available() {
                return Err(SandboxError::Start(
                    "commands run in a bubblewrap sandbox, which needs `bwrap` and `prlimit` \
                     (apt-get install bubblewrap); nothing was run"
                        .into(),
                ));
            }
            let (command, mounts) = sandboxed(work_dir, read_only, hidden, *network, limits, env)?;
            (command, Some(mounts))
        }
        Placement::Host { work_dir } => {
            let mut command = Command::new(program);
            command.current_dir(work_dir).env_clear();
            command.env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()));
            command.env("HOME", std::env::var_os("HOME").unwrap_or_else(|| work_dir.clone().into()));
            command.env("LANG", "C.UTF-8");
            command.envs(env.iter().copied());
            // Its own process group, so that the time cap reaches its children.
            command.process_group(0);
            (command, None)
        }
    };
    if matches!(placement, Placement::Sandbox { .. }) {
        command.arg(program);
    }
    command.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    let mut child = command.spawn().map_err(|error| {
        let what = if matches!(placement, Placement::Sandbox { .. }) { "bwrap" } else { program };
        SandboxError::Start(format!("cannot run {what}: {error}"))
    })?;
    let group = child.id();
    let memory = match (placement, group) {
        (Placement::Sandbox { limits, .. }, Some(pid)) => Some(
            MemoryWatch::start(pid, limits.memory_bytes)
                .map_err(|error| SandboxError::Start(format!("cannot watch the sandbox's memory: {error}")))?,
        ),
        _ => None,
    };
    // Dropped before the command ends (its run abandoned), the guard kills the
    // host command's group; `kill_on_drop` only reaches the direct child.
    let mut guard = GroupGuard(group.filter(|_| matches!(placement, Placement::Host { .. })));
    let (stdout, stderr) = (Buffer::default(), Buffer::default());
    let readers = [
        tokio::spawn(capture(child.stdout.take(), stdout.clone(), caps.output_bytes)),
        tokio::spawn(capture(child.stderr.take(), stderr.clone(), caps.output_bytes)),
    ];
    let status = match tokio::time::timeout(caps.timeout, child.wait()).await {
        Ok(Ok(_)) if memory.as_ref().is_some_and(MemoryWatch::tripped) => {
            Status::MemoryExceeded { limit_bytes: memory.as_ref().map_or(0, |memory| memory.limit_bytes) }
        }
        Ok(Ok(status)) => match (status.code(), status.signal()) {
            (Some(code), _) => Status::Exited(code),
            (None, Some(signal)) => Status::Signalled(signal),
            (None, None) => Status::Exited(-1),
        },
        Ok(Err(error)) => return Err(SandboxError::Start(format!("cannot wait for the command: {error}"))),
        Err(_) => {
            // In the sandbox, bwrap's death takes its pid namespace with it.
            let _ = child.kill().await;
            Status::TimedOut
        }
    };
    // On the host, what the command left running in its group stops with it, as
    // in the sandbox, where its pid namespace ends when it does.
    if let Some(group) = guard.0 {
        kill_group(group).await;
        guard.0 = None;
    }
    // Once nothing runs in the sandbox, its placeholders may go.
    if let Some(memory) = &memory {
        memory.ended().await;
    }
    drop(mounts);
    // A process that left the group may still hold a pipe: what it writes later is
    // not waited for.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    for reader in readers {
        let abort = reader.abort_handle();
        if tokio::time::timeout_at(deadline, reader).await.is_err() {
            abort.abort();
        }
    }
    Ok(CommandOutput { status, stdout: stdout.take(), stderr: stderr.take() })
}

fn sandboxed(
    work_dir: &Path,
    read_only: &[PathBuf],
    hidden: &[PathBuf],
    network: bool,
    limits: &Limits,
    env: &[(&str, &str)],
) -> Result<(Command, mounts::Mounts), SandboxError> {
    use std::os::unix::fs::MetadataExt;
    let root = std::fs::canonicalize(work_dir)
        .map_err(|error| SandboxError::Start(format!("bad work directory {}: {error}", work_dir.display())))?;
    let mut command = Command::new("bwrap");
    // As root, the command runs as the work directory's owner, so that the kernel
    // applies `RLIMIT_NPROC` (it exempts uid 0) and what it writes belongs to the
    // project's owner; a directory root owns leaves the command root's files.
    let owner = std::fs::metadata(&root).map(|meta| (meta.uid(), meta.gid())).unwrap_or((0, 0));
    if crate::backend::running_as_root() && owner.0 != 0 {
        command.uid(owner.0).gid(owner.1);
    }
    isolate(&mut command, 65534, 65534, limits, &[]);
    if network {
        command.arg("--share-net");
        for file in NETWORK_ETC {
            command.args(["--ro-bind-try", file, file]);
        }
    }
    command.arg("--bind").arg(&root).arg(WORK_DIR);
    let mounts = mounts::plan(&root, read_only, hidden)
        .map_err(|error| SandboxError::Start(format!("cannot protect paths in the work directory: {error}")))?;
    command.args(&mounts.args);
    command.args(["--remount-ro", "/", "--chdir", WORK_DIR, "--clearenv"]);
    command.args(["--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/tmp"]);
    command.args(["--setenv", "LANG", "C.UTF-8"]);
    for (name, value) in env {
        command.args(["--setenv", name, value]);
    }
    command.arg("--");
    confine(&mut command, limits, false);
    command.env_clear().env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    Ok((command, mounts))
}

/// Kills the host command's process group, again while any member is left (a
/// fork bomb may still be forking), for at most a second.
async fn kill_group(pid: u32) {
    let Some(group) = rustix::process::Pid::from_raw(pid as i32) else { return };
    for _ in 0..50 {
        if rustix::process::kill_process_group(group, rustix::process::Signal::KILL).is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Kills a host command's process group when dropped while it holds one.
struct GroupGuard(Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(group) = self.0.and_then(|pid| rustix::process::Pid::from_raw(pid as i32)) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
    }
}

/// What has been read of one stream so far: the kept bytes and the count dropped.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<(Vec<u8>, u64)>>);

impl Buffer {
    fn take(&self) -> Captured {
        let mut inner = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (kept, dropped) = std::mem::take(&mut *inner);
        Captured { text: String::from_utf8_lossy(&kept).into_owned(), dropped }
    }
}

async fn capture(pipe: Option<impl AsyncRead + Unpin>, into: Buffer, limit: usize) {
    let Some(mut pipe) = pipe else { return };
    let mut chunk = vec![0u8; 64 << 10];
    while let Ok(read) = pipe.read(&mut chunk).await {
        if read == 0 {
            break;
        }
        let mut inner = into.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let room = limit.saturating_sub(inner.0.len()).min(read);
        inner.0.extend_from_slice(&chunk[..room]);
        inner.1 += (read - room) as u64;
    }
}
