//! The default backend: bubblewrap. New user, pid, network, ipc, uts and cgroup
//! namespaces (so no network at all), the host's `/usr` read-only, a read-only root,
//! tmpfs `/work` and `/tmp`, an unprivileged uid, and rlimits set by `prlimit`.
//! Run as root, it first drops to `uid`/`gid` on the host too, so the sandbox's
//! user is unprivileged outside its namespace as well.

use std::path::{Path, PathBuf};

use tokio::process::Command;

use super::child;
use super::{Backend, Launch, MOUNT_POINT, Sandbox, running_as_root};
use crate::bridge::SocketAccess;
use crate::{BoxFuture, SandboxError};

/// Top-level directories that hold programs and libraries, bound when present.
const SYSTEM_DIRS: &[&str] = &["bin", "lib", "lib32", "lib64", "libx32", "sbin"];
/// Files from `/etc` that the interpreter reads.
const ETC_FILES: &[&str] = &["/etc/ld.so.cache", "/etc/localtime"];

#[derive(Debug, Clone)]
pub struct Bubblewrap {
    /// The interpreter, a path under a bound directory. Default `/usr/bin/python3`.
    pub python: PathBuf,
    /// The sandbox's uid and gid (inside, and on the host when we are root).
    pub uid: u32,
    pub gid: u32,
    /// Further host directories to bind read-only at the same path (a virtualenv).
    pub read_only: Vec<PathBuf>,
}

impl Default for Bubblewrap {
    fn default() -> Bubblewrap {
        Bubblewrap { python: PathBuf::from("/usr/bin/python3"), uid: 65534, gid: 65534, read_only: Vec::new() }
    }
}

impl Bubblewrap {
    /// Whether `bwrap` and `prlimit` can be run.
    pub fn available() -> bool {
        ["bwrap", "prlimit"].iter().all(|program| {
            std::process::Command::new(program)
                .arg("--version")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|status| status.success())
        })
    }

    fn command(&self, launch: &Launch, as_root: bool) -> Command {
        let limits = &launch.limits;
        let mut command = Command::new("prlimit");
        command.arg(format!("--as={}", limits.memory_bytes));
        command.arg(format!("--cpu={}", limits.cpu_seconds));
        command.arg(format!("--nofile={}", limits.open_files));
        command.arg("--core=0");
        if as_root {
            // Counted per host uid, so only meaningful for our own sandbox uid.
            command.arg(format!("--nproc={}", limits.processes));
        }
        command.args(["--", "bwrap"]);
        command.args(["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"]);
        command.args(["--cap-drop", "ALL", "--hostname", "sandbox"]);
        command.args(["--uid", &self.uid.to_string(), "--gid", &self.gid.to_string()]);
        command.args(["--ro-bind", "/usr", "/usr"]);
        for dir in SYSTEM_DIRS {
            let host = Path::new("/").join(dir);
            match std::fs::read_link(&host) {
                Ok(target) => {
                    command.arg("--symlink").arg(target).arg(&host);
                }
                Err(_) if host.is_dir() => {
                    command.arg("--ro-bind").arg(&host).arg(&host);
                }
                Err(_) => {}
            }
        }
        for file in ETC_FILES {
            command.args(["--ro-bind-try", file, file]);
        }
        for dir in &self.read_only {
            command.arg("--ro-bind").arg(dir).arg(dir);
        }
        command.args(["--proc", "/proc", "--dev", "/dev"]);
        let size = limits.scratch_bytes.to_string();
        command.args(["--size", &size, "--tmpfs", "/tmp", "--size", &size, "--tmpfs", "/work"]);
        command.arg("--ro-bind").arg(&launch.dir).arg(MOUNT_POINT);
        command.args(["--remount-ro", "/", "--chdir", "/work", "--clearenv"]);
        command.args(["--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/work", "--setenv", "LANG", "C.UTF-8"]);
        command.arg("--").arg(&self.python).args(Launch::driver_args(MOUNT_POINT));
        command.env_clear().env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        if as_root {
            command.uid(self.uid).gid(self.gid);
        }
        command
    }
}

impl Backend for Bubblewrap {
    fn name(&self) -> &'static str {
        "bubblewrap"
    }

    fn socket_access(&self) -> SocketAccess {
        if running_as_root() { SocketAccess::User { uid: self.uid, gid: self.gid } } else { SocketAccess::Owner }
    }

    fn launch<'a>(&'a self, launch: &'a Launch) -> BoxFuture<'a, Result<Box<dyn Sandbox>, SandboxError>> {
        Box::pin(async move {
            let command = self.command(launch, running_as_root());
            child::spawn(command, launch, true).await
        })
    }
}
