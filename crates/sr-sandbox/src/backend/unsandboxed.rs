//! No sandbox: the driver is a plain python3 child process with our user's rights,
//! for trusted local use only. It keeps the rlimits, the runtime allowlist and the
//! tool bridge, but the code can do whatever we can: the import policy is then
//! the only barrier, and it is a lint. Never a default.

use std::path::PathBuf;

use tokio::process::Command;

use super::{Backend, Launch, Sandbox, child};
use crate::bridge::SocketAccess;
use crate::{BoxFuture, SandboxError};

#[derive(Debug, Clone)]
pub struct Unsandboxed {
    /// The interpreter, looked up on `PATH` if relative. Default `python3`.
    pub python: PathBuf,
}

impl Default for Unsandboxed {
    fn default() -> Unsandboxed {
        Unsandboxed { python: PathBuf::from("python3") }
    }
}

impl Backend for Unsandboxed {
    fn name(&self) -> &'static str {
        "unsandboxed"
    }

    fn socket_access(&self) -> SocketAccess {
        SocketAccess::Owner
    }

    fn launch<'a>(&'a self, launch: &'a Launch) -> BoxFuture<'a, Result<Box<dyn Sandbox>, SandboxError>> {
        Box::pin(async move {
            let limits = &launch.limits;
            let work = launch.dir.join("work");
            std::fs::create_dir_all(&work).map_err(|error| SandboxError::Start(error.to_string()))?;
            let mut command = Command::new("prlimit");
            command.arg(format!("--as={}", limits.memory_bytes));
            command.arg(format!("--cpu={}", limits.cpu_seconds));
            command.arg(format!("--nofile={}", limits.open_files));
            command.arg("--core=0");
            command.arg("--").arg(&self.python).args(Launch::driver_args(&launch.dir.to_string_lossy()));
            command.current_dir(&work).env_clear();
            command.env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()));
            command.env("HOME", &work).env("LANG", "C.UTF-8");
            child::spawn(command, launch, child::Spawn { shell_codes: false, watch_memory: false }).await
        })
    }
}
