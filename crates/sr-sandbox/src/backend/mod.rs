//! Where the driver runs. Every backend starts `python3 driver.py bridge.sock` with the
//! run directory (driver and socket) mounted at [`MOUNT_POINT`], passes the token on
//! stdin, and can be waited on and killed; the session does the rest.

pub(crate) mod bubblewrap;
mod child;
#[cfg(feature = "container")]
mod container;
pub(crate) mod memory;
mod unsandboxed;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub use bubblewrap::Bubblewrap;
#[cfg(feature = "container")]
pub use container::{Container, LABEL};
pub use unsandboxed::Unsandboxed;

use crate::bridge::{DRIVER_FILE, SOCKET_FILE, SocketAccess};
use crate::{BoxFuture, SandboxError, Stream};

/// Where sandboxes see the run directory.
pub const MOUNT_POINT: &str = "/run/sr";

/// The sandbox's resource limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Memory. Each process's address space (`RLIMIT_AS`: bubblewrap,
    /// unsandboxed), and the resident memory of a bubblewrap sandbox's processes
    /// together (measured every few milliseconds, see `memory`), or the memory
    /// cgroup (containers).
    pub memory_bytes: u64,
    /// CPU time of the interpreter over its whole life (it is restarted when spent).
    pub cpu_seconds: u64,
    /// Processes and threads. Per container as its pids limit; also `RLIMIT_NPROC`,
    /// which bubblewrap sets inside the sandbox's user namespace, where Linux 5.14
    /// and later count it per sandbox (earlier kernels count it per host uid).
    pub processes: u32,
    pub open_files: u32,
    /// Size of each writable scratch directory (`/work`, `/tmp`).
    pub scratch_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { memory_bytes: 512 << 20, cpu_seconds: 300, processes: 256, open_files: 256, scratch_bytes: 64 << 20 }
    }
}

/// What a backend needs to start one driver.
pub struct Launch {
    /// Host directory with `driver.py` and `bridge.sock`.
    pub dir: PathBuf,
    /// Written to the driver's stdin, never to its environment or argv.
    pub token: String,
    pub limits: Limits,
    /// Output of the interpreter process outside the driver's capture (crash messages).
    pub output: RawOutput,
}

impl Launch {
    /// The driver's command line when the run directory is at `dir`.
    pub fn driver_args(dir: &str) -> Vec<String> {
        vec!["-I".into(), "-B".into(), format!("{dir}/{DRIVER_FILE}"), format!("{dir}/{SOCKET_FILE}")]
    }
}

pub trait Backend: Send + Sync {
    fn name(&self) -> &'static str;

    /// Who must be able to connect to the bridge socket.
    fn socket_access(&self) -> SocketAccess;

    fn launch<'a>(&'a self, launch: &'a Launch) -> BoxFuture<'a, Result<Box<dyn Sandbox>, SandboxError>>;
}

/// One running sandbox.
pub trait Sandbox: Send {
    /// Resolves once the sandbox has stopped, saying how ("exit status 1", "killed by
    /// signal 9", "out of memory").
    fn wait(&mut self) -> BoxFuture<'_, String>;

    /// Stops everything in the sandbox.
    fn kill(&mut self) -> BoxFuture<'_, ()>;
}

/// Whether we are root, so a sandbox can drop to its own uid on the host as well.
pub(crate) fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    // `/proc/self` belongs to the effective uid.
    std::fs::metadata("/proc/self").is_ok_and(|meta| meta.uid() == 0)
}

/// Bounded raw stdout and stderr of a sandbox process, kept until a step reads it.
#[derive(Clone, Default)]
pub struct RawOutput {
    inner: Arc<Mutex<RawBuffers>>,
}

#[derive(Default)]
struct RawBuffers {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Raw output past this is dropped: it only carries crash messages.
const RAW_LIMIT: usize = 64 << 10;

impl RawOutput {
    pub fn push(&self, stream: Stream, bytes: &[u8]) {
        let mut buffers = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let buffer = match stream {
            Stream::Stdout => &mut buffers.stdout,
            Stream::Stderr => &mut buffers.stderr,
        };
        let room = RAW_LIMIT.saturating_sub(buffer.len());
        buffer.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    pub(crate) fn take(&self) -> (String, String) {
        let mut buffers = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let stdout = String::from_utf8_lossy(&std::mem::take(&mut buffers.stdout)).into_owned();
        let stderr = String::from_utf8_lossy(&std::mem::take(&mut buffers.stderr)).into_owned();
        (stdout, stderr)
    }
}
