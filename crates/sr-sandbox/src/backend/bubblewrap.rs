//! The default backend: bubblewrap. New user, pid, network, ipc, uts and cgroup
//! namespaces (so no network at all), the host's `/usr` read-only, a read-only root,
//! a read-only `/dev` with a bounded `/dev/shm`, tmpfs `/work` and `/tmp`, an
//! unprivileged uid, rlimits set by `prlimit` inside the sandbox, and the
//! memory of all its processes together watched from outside (`memory`).
//! Run as root, it first drops to `uid`/`gid` on the host too, so the sandbox's
//! user is unprivileged outside its namespace as well.

use std::path::{Path, PathBuf};

use tokio::process::Command;

use super::child;
use super::{Backend, Launch, Limits, MOUNT_POINT, Sandbox, running_as_root};
use crate::bridge::SocketAccess;
use crate::{BoxFuture, SandboxError};

/// Top-level directories that hold programs and libraries, bound when present.
const SYSTEM_DIRS: &[&str] = &["bin", "lib", "lib32", "lib64", "libx32", "sbin"];
/// Files from `/etc` that the interpreter reads.
const ETC_FILES: &[&str] = &["/etc/ld.so.cache", "/etc/localtime"];
/// Size of the sandbox's `/dev/shm`.
const SHM_BYTES: u64 = 1 << 20;

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
        let mut command = Command::new("bwrap");
        isolate(&mut command, self.uid, self.gid, limits, &self.read_only);
        command.arg("--size").arg(limits.scratch_bytes.to_string()).args(["--tmpfs", "/work"]);
        command.arg("--ro-bind").arg(&launch.dir).arg(MOUNT_POINT);
        command.args(["--remount-ro", "/", "--chdir", "/work", "--clearenv"]);
        command.args(["--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/work", "--setenv", "LANG", "C.UTF-8"]);
        command.arg("--");
        confine(&mut command, limits, true);
        command.arg(&self.python).args(Launch::driver_args(MOUNT_POINT));
        command.env_clear().env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        if as_root {
            command.uid(self.uid).gid(self.gid);
        }
        command
    }
}

/// The arguments every bubblewrap sandbox starts with: all namespaces new (the
/// network too), no capabilities, no nested user namespaces, the host's programs
/// and libraries read-only, `/proc`, a `/dev` with the usual devices that is
/// read-only but for a bounded `/dev/shm`, and a bounded `/tmp`. What else is
/// mounted, the environment and the program are the caller's.
pub(crate) fn isolate(command: &mut Command, uid: u32, gid: u32, limits: &Limits, read_only: &[PathBuf]) {
    command.args(["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"]);
    command.args(["--cap-drop", "ALL", "--hostname", "sandbox"]);
    command.args(["--uid", &uid.to_string(), "--gid", &gid.to_string()]);
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
    for dir in read_only {
        command.arg("--ro-bind").arg(dir).arg(dir);
    }
    command.args(["--proc", "/proc", "--dev", "/dev", "--size", &SHM_BYTES.to_string(), "--tmpfs", "/dev/shm"]);
    command.args(["--remount-ro", "/dev"]);
    command.arg("--size").arg(limits.scratch_bytes.to_string()).args(["--tmpfs", "/tmp"]);
}

/// `prlimit` with the sandbox's limits, to run inside it in front of the program:
/// there the kernel counts `RLIMIT_NPROC` in the sandbox's own user namespace
/// (Linux 5.14 and later), so sandboxes sharing a host uid do not share it.
pub(crate) fn confine(command: &mut Command, limits: &Limits, cpu: bool) {
    command.arg("prlimit");
    command.arg(format!("--as={}", limits.memory_bytes));
    if cpu {
        command.arg(format!("--cpu={}", limits.cpu_seconds));
    }
    command.arg(format!("--nofile={}", limits.open_files));
    command.arg(format!("--nproc={}", limits.processes));
    command.args(["--core=0", "--"]);
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
            child::spawn(command, launch, child::Spawn { shell_codes: true, watch_memory: true }).await
        })
    }
}
