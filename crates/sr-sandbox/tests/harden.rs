//! `harden_process`, judged by what a command run on the host as the same
//! unprivileged user can read of the process that started it: the API key in
//! its environment, through `/proc/$PPID/environ` and `/proc/$PPID/mem`.
//!
//! The test runs this binary again as a helper, once plain and once hardened,
//! each time as uid 65534 when the tests run as root (root reads any process's
//! memory, hardened or not); the helper runs the reader as a host command.
#![allow(clippy::unwrap_used)]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::Duration;

use sr_sandbox::command::{Caps, Placement, run_command};
use support::require;

const SECRET: &str = "sk-harden-test-4f1c9a0e7b2d";
/// Set in the helper's environment: `plain` or `hardened`.
const MODE: &str = "SR_HARDEN_MODE";

/// Reads its parent's environment and, at the addresses `/proc/$PPID/stat`
/// gives, its memory; prints what it got or the error number.
const READER: &str = r#"
import os
ppid = os.getppid()
try:
    print('environ:' + open(f'/proc/{ppid}/environ', 'rb').read().decode('latin1'))
except OSError as error:
    print(f'environ:refused {error.errno}')
try:
    stat = open(f'/proc/{ppid}/stat').read()
    fields = stat[stat.rfind(')') + 2:].split()
    start, end = int(fields[47]), int(fields[48])
    with open(f'/proc/{ppid}/mem', 'rb') as mem:
        mem.seek(start)
        print('mem:' + mem.read(end - start).decode('latin1'))
except OSError as error:
    print(f'mem:refused {error.errno}')
"#;

/// The helper: hardens itself if asked, checks that it can still resolve its
/// own descriptors (the file jail reads `/proc/self/fd`), and runs the reader
/// on the host as a cli `host` tool would.
#[tokio::test]
#[ignore = "run by a_hardened_process_keeps_its_environment_and_memory_from_its_commands"]
async fn helper() {
    let mode = std::env::var(MODE).unwrap();
    assert!(std::env::var("OPENAI_API_KEY").unwrap().contains(SECRET));
    if mode == "hardened" {
        sr_sandbox::harden_process().unwrap();
    }
    let file = std::fs::File::open("/etc/hostname").unwrap();
    let link = std::fs::read_link(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file))).unwrap();
    println!("fd:{}", link.display());
    let placement = Placement::Host { work_dir: "/".into() };
    let caps = Caps { timeout: Duration::from_secs(20), output_bytes: 1 << 20 };
    let output = run_command(&placement, "python3", &["-c".into(), READER.into()], caps).await.unwrap();
    print!("{}", output.stdout.text);
    eprint!("{}", output.stderr.text);
}

/// What the reader printed under the helper in `mode`.
fn read_as_unprivileged(mode: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // Where the unprivileged user can run it: the target directory may not be.
    let exe = dir.path().join("harden-helper");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut command = if running_as_root() {
        let mut command = Command::new("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(&exe);
        command
    } else {
        Command::new(&exe)
    };
    command.args(["helper", "--exact", "--ignored", "--nocapture", "--test-threads=1"]);
    command.env_clear().env("PATH", "/usr/local/bin:/usr/bin:/bin").env(MODE, mode);
    command.env("OPENAI_API_KEY", format!("{SECRET}-api-key"));
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    stdout
}

fn running_as_root() -> bool {
    std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) == 0
}

/// The line of `output` from `prefix` on (libtest prints the test's name before
/// its first line).
fn line<'a>(output: &'a str, prefix: &str) -> &'a str {
    output
        .lines()
        .find_map(|line| line.find(prefix).map(|at| &line[at..]))
        .unwrap_or_else(|| panic!("no {prefix} in {output}"))
}

#[test]
fn a_hardened_process_keeps_its_environment_and_memory_from_its_commands() {
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok_and(|output| output.status.success());
    if !require(!running_as_root() || setpriv, "setpriv (util-linux), to drop to an unprivileged user") {
        return;
    }
    // The control: without hardening, the same reader gets the key both ways.
    let plain = read_as_unprivileged("plain");
    assert!(line(&plain, "environ:").contains(SECRET), "{plain}");
    assert!(line(&plain, "mem:").contains(SECRET), "{plain}");

    let hardened = read_as_unprivileged("hardened");
    assert!(!hardened.contains(SECRET), "{hardened}");
    // 13 is EACCES.
    assert_eq!(line(&hardened, "environ:"), "environ:refused 13", "{hardened}");
    assert_eq!(line(&hardened, "mem:"), "mem:refused 13", "{hardened}");
    assert_eq!(line(&hardened, "fd:"), "fd:/etc/hostname", "{hardened}");
}
