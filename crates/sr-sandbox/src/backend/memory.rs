//! The memory of a bubblewrap sandbox as a whole. `RLIMIT_AS` bounds each
//! process; sr makes no cgroup, so the sum is bounded by measuring it: every
//! [`INTERVAL`] a thread lists the processes in the sandbox's own `/proc`
//! (`/proc/<its init>/root/proc` on the host: exactly the sandbox's pid
//! namespace, however its processes fork, exit or reparent), adds up their
//! resident anonymous and shared memory (`RssAnon` + `RssShmem`, so a mapped file
//! the kernel can drop again is not counted) and kills the sandbox when the sum
//! passes the limit. Memory the kernel holds without mapping it into a process
//! (pipe and socket buffers, an unmapped memfd) is not seen, and what a sandbox
//! allocates within one interval can go past the limit before it is stopped.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use rustix::process::{Pid, PidfdFlags, Signal, pidfd_open, pidfd_send_signal};

/// How often the sandbox's memory is measured.
pub const INTERVAL: Duration = Duration::from_millis(10);

/// What the sandbox is told when it was stopped for its memory.
pub fn over_memory(limit_bytes: u64) -> String {
    format!("the sandbox used more than {} MiB in all; it was stopped", limit_bytes >> 20)
}

/// Watches one sandbox until it ends or this is dropped.
pub(crate) struct MemoryWatch {
    /// Bytes measured when the sandbox was killed; 0 while it was not.
    used: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    /// The sandbox's init (on the host), once found; 0 before.
    init: Arc<AtomicU32>,
    pub limit_bytes: u64,
}

impl MemoryWatch {
    /// Watches the sandbox of the bubblewrap process `bwrap`, a child of ours not
    /// yet waited for.
    pub fn start(bwrap: u32, limit_bytes: u64) -> io::Result<MemoryWatch> {
        let pid = Pid::from_raw(bwrap as i32).ok_or_else(|| io::Error::other("no process id"))?;
        // Signals through the pidfd reach this process even if it is reaped meanwhile.
        let pidfd = pidfd_open(pid, PidfdFlags::empty())?;
        let (used, stop, init) = (Arc::default(), Arc::default(), Arc::default());
        let watcher = Watcher {
            bwrap,
            pidfd,
            limit_bytes,
            used: Arc::clone(&used),
            stop: Arc::clone(&stop),
            init: Arc::clone(&init),
        };
        std::thread::Builder::new().name("sandbox-memory".into()).spawn(move || watcher.run())?;
        Ok(MemoryWatch { used, stop, init, limit_bytes })
    }

    /// Whether the sandbox was killed for its memory.
    pub fn tripped(&self) -> bool {
        self.used.load(Ordering::SeqCst) > 0
    }

    /// Resolves once the sandbox's init has ended, and with it every process of
    /// the sandbox, or after a second. Killing bwrap only starts that: its child,
    /// the sandbox's init, gets its own kill as bwrap dies, and the kernel kills
    /// the rest of the pid namespace when the init exits.
    pub async fn ended(&self) {
        let init = self.init.load(Ordering::SeqCst);
        for _ in 0..100 {
            if init == 0 || !alive(init) {
                return;
            }
            tokio::time::sleep(INTERVAL).await;
        }
    }
}

impl Drop for MemoryWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

struct Watcher {
    bwrap: u32,
    pidfd: OwnedFd,
    limit_bytes: u64,
    used: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    init: Arc<AtomicU32>,
}

impl Watcher {
    fn run(self) {
        let (mut procfs, mut init) = (None, None);
        while !self.stop.load(Ordering::SeqCst) {
            std::thread::sleep(INTERVAL);
            if procfs.is_none() {
                if let Some((pid, dir)) = sandbox_proc(self.bwrap) {
                    self.init.store(pid, Ordering::SeqCst);
                    init = Pid::from_raw(pid as i32).and_then(|pid| pidfd_open(pid, PidfdFlags::empty()).ok());
                    procfs = Some(dir);
                } else if !alive(self.bwrap) {
                    return;
                }
            }
            let Some(dir) = &procfs else { continue };
            let Some(used) = resident(dir) else { return };
            if used > self.limit_bytes {
                self.used.store(used, Ordering::SeqCst);
                // The init first: its death ends the pid namespace at once, while
                // bwrap's would reach it only through bwrap's parent-death signal.
                if let Some(init) = &init {
                    let _ = pidfd_send_signal(init, Signal::KILL);
                }
                let _ = pidfd_send_signal(&self.pidfd, Signal::KILL);
                return;
            }
        }
    }
}

/// The sandbox's own `/proc`, once bubblewrap has mounted it: as seen through
/// the root of bwrap's child (the sandbox's init), when that is another procfs
/// than ours.
fn sandbox_proc(bwrap: u32) -> Option<(u32, PathBuf)> {
    let init = children(bwrap).into_iter().next()?;
    let dir = PathBuf::from(format!("/proc/{init}/root/proc"));
    let ours = std::fs::metadata("/proc").ok()?.dev();
    (std::fs::metadata(&dir).ok()?.dev() != ours).then_some((init, dir))
}

/// The processes whose parent is `parent`.
fn children(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| stat(Path::new(&format!("/proc/{pid}"))).is_some_and(|(_, ppid)| ppid == parent))
        .collect()
}

/// State and parent of the process whose `/proc` directory is `dir`.
fn stat(dir: &Path) -> Option<(char, u32)> {
    let text = std::fs::read_to_string(dir.join("stat")).ok()?;
    // The command name, in parentheses, may hold anything: read after its end.
    let mut fields = text[text.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    Some((state, fields.next()?.parse().ok()?))
}

fn alive(pid: u32) -> bool {
    stat(Path::new(&format!("/proc/{pid}"))).is_some_and(|(state, _)| state != 'Z' && state != 'X')
}

/// Resident anonymous and shared memory of every process in the `/proc` at
/// `dir`; `None` once it is gone.
fn resident(dir: &Path) -> Option<u64> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut total = 0;
    for pid in entries.flatten().filter(|entry| entry.file_name().to_str().is_some_and(is_pid)) {
        // A process that exited meanwhile holds nothing.
        let Ok(status) = std::fs::read_to_string(pid.path().join("status")) else { continue };
        for line in status.lines() {
            if let Some(value) = line.strip_prefix("RssAnon:").or_else(|| line.strip_prefix("RssShmem:")) {
                let kib: u64 = value.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
                total += kib << 10;
            }
        }
    }
    Some(total)
}

fn is_pid(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_limit_in_mebibytes() {
        assert_eq!(over_memory(512 << 20), "the sandbox used more than 512 MiB in all; it was stopped");
    }

    #[test]
    fn stat_reads_past_a_hostile_command_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("stat"), "42 (a) S 7 (b) R 9) S 1234 42 42 0 -1").unwrap();
        assert_eq!(stat(dir.path()), Some(('S', 1234)));
    }
}
