//! The memory of a bubblewrap sandbox as a whole. `RLIMIT_AS` bounds each
//! process; sr makes no cgroup, so the sum is bounded by measuring it: every
//! [`INTERVAL`] a thread lists the processes in the sandbox's own `/proc`
//! (`/proc/<its init>/root/proc` on the host: exactly the sandbox's pid
//! namespace, however its processes fork, exit or reparent) and adds up their
//! resident anonymous and shared memory (`RssAnon` + `RssShmem`, so a mapped file
//! the kernel can drop again is not counted). That sum counts a page that forked
//! processes share once in each, so when it passes the limit the watcher counts
//! again with each page shared out between its processes (`Pss_Anon` +
//! `Pss_Shmem`, which the kernel takes longer to add up: at most every
//! [`PROPORTIONAL_INTERVAL`]) and kills the sandbox only if that sum passes the
//! limit too (when much is shared, in both orders of the processes: one read while
//! processes fork or exit adds up shares taken at different moments, which can
//! run high). Memory the kernel holds without mapping it into a process (pipe
//! and socket buffers, an unmapped memfd) is not seen, and what a sandbox
//! allocates between two measurements can go past the limit before it is stopped.

use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rustix::fs::{Dir, Mode, OFlags, openat};
use rustix::process::{Pid, PidfdFlags, Signal, pidfd_open, pidfd_send_signal};

/// How often the sandbox's resident memory is added up.
pub const INTERVAL: Duration = Duration::from_millis(10);
/// How often, at most, it is added up again with shared pages shared out.
pub const PROPORTIONAL_INTERVAL: Duration = Duration::from_millis(100);

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
        let mut sandbox: Option<(OwnedFd, Option<OwnedFd>)> = None;
        let mut proportional_at: Option<Instant> = None;
        while !self.stop.load(Ordering::SeqCst) {
            std::thread::sleep(INTERVAL);
            if sandbox.is_none() {
                if let Some((pid, procfs)) = sandbox_proc(self.bwrap) {
                    self.init.store(pid, Ordering::SeqCst);
                    let init = Pid::from_raw(pid as i32).and_then(|pid| pidfd_open(pid, PidfdFlags::empty()).ok());
                    sandbox = Some((procfs, init));
                } else if !alive(self.bwrap) {
                    return;
                }
            }
            let Some((procfs, init)) = &sandbox else { continue };
            let Some(resident) = total(procfs, "status", &["RssAnon:", "RssShmem:"], Order::Forward) else { return };
            if resident <= self.limit_bytes || proportional_at.is_some_and(|at| at.elapsed() < PROPORTIONAL_INTERVAL) {
                continue;
            }
            proportional_at = Some(Instant::now());
            let pss = ["Pss_Anon:", "Pss_Shmem:"];
            let Some(mut used) = total(procfs, "smaps_rollup", &pss, Order::Forward) else { return };
            // The processes are read one after another: while they fork or exit,
            // the ones read first count their shared pages with fewer sharers than
            // the later ones, and the sum runs high. When much is shared, read
            // again the other way round: a sandbox that really holds too much does
            // in both orders.
            if used > self.limit_bytes && resident.saturating_sub(used) > self.limit_bytes / 8 {
                let Some(backward) = total(procfs, "smaps_rollup", &pss, Order::Backward) else { return };
                used = used.min(backward);
            }
            if used > self.limit_bytes {
                self.used.store(used, Ordering::SeqCst);
                // The init first: its death ends the pid namespace at once, while
                // bwrap's would reach it only through bwrap's parent-death signal.
                if let Some(init) = init {
                    let _ = pidfd_send_signal(init, Signal::KILL);
                }
                let _ = pidfd_send_signal(&self.pidfd, Signal::KILL);
                return;
            }
        }
    }
}

/// The sandbox's own `/proc`, once bubblewrap has mounted it, and the host pid
/// of the process it was reached through: the first of bwrap's descendants
/// whose root holds another procfs than ours (the sandbox's init).
fn sandbox_proc(bwrap: u32) -> Option<(u32, OwnedFd)> {
    let ours = std::fs::metadata("/proc").ok()?.dev();
    let parents = parents();
    let mut level = vec![bwrap];
    // bwrap's child is the init; a deeper one is only looked for in case that changes.
    for _ in 0..3 {
        level = parents.iter().filter(|(_, parent)| level.contains(parent)).map(|(pid, _)| *pid).collect();
        for &pid in &level {
            let dir = format!("/proc/{pid}/root/proc");
            if std::fs::metadata(&dir).is_ok_and(|meta| meta.dev() != ours) {
                let fd =
                    rustix::fs::open(dir.as_str(), OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty());
                return Some((pid, fd.ok()?));
            }
        }
    }
    None
}

/// Every process on the host with its parent.
fn parents() -> Vec<(u32, u32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            Some((pid, stat(&entry.path())?.1))
        })
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

/// The order processes are read in, by pid.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    Forward,
    Backward,
}

/// The sum over every process in the `/proc` at `procfs` of the `fields` (in
/// kB) of its file `name`; `None` once that `/proc` is gone.
fn total(procfs: &OwnedFd, name: &str, fields: &[&str], order: Order) -> Option<u64> {
    let mut pids: Vec<u32> = Dir::read_from(procfs)
        .ok()?
        .flatten()
        .filter_map(|entry| entry.file_name().to_str().ok()?.parse().ok())
        .collect();
    pids.sort_unstable();
    if order == Order::Backward {
        pids.reverse();
    }
    let mut sum = 0;
    for pid in pids {
        // A process that exited meanwhile holds nothing.
        let flags = OFlags::RDONLY | OFlags::CLOEXEC;
        let Ok(fd) = openat(procfs, format!("{pid}/{name}").as_str(), flags, Mode::empty()) else { continue };
        let mut text = String::new();
        if std::fs::File::from(fd).read_to_string(&mut text).is_err() {
            continue;
        }
        sum += kibibytes(&text, fields) << 10;
    }
    Some(sum)
}

/// The sum of the `fields` of a `/proc` file of lines like `RssAnon:   1234 kB`.
fn kibibytes(text: &str, fields: &[&str]) -> u64 {
    text.lines()
        .filter_map(|line| fields.iter().find_map(|field| line.strip_prefix(field)))
        .filter_map(|value| value.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_limit_in_mebibytes() {
        assert_eq!(over_memory(512 << 20), "the sandbox used more than 512 MiB in all; it was stopped");
    }

    #[test]
    fn fields_are_added_up_in_bytes() {
        let status = "Name:\tpython3\nRssAnon:\t    2764 kB\nRssFile:\t    3352 kB\nRssShmem:\t       4 kB\n";
        assert_eq!(kibibytes(status, &["RssAnon:", "RssShmem:"]), 2768);
        assert_eq!(kibibytes("Pss_Anon: x kB\nPss_Shmem:\n", &["Pss_Anon:", "Pss_Shmem:"]), 0);
    }

    #[test]
    fn stat_reads_past_a_hostile_command_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("stat"), "42 (a) S 7 (b) R 9) S 1234 42 42 0 -1").unwrap();
        assert_eq!(stat(dir.path()), Some(('S', 1234)));
    }
}
