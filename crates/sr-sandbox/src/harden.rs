//! What a process holding secrets does first: it makes itself non-dumpable.

use std::io;

use rustix::process::{DumpableBehavior, set_dumpable_behavior};

/// Makes the calling process non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`): its
/// `/proc/PID/environ`, `/proc/PID/mem` and the rest of `/proc/PID` then belong
/// to root, and `ptrace` needs `CAP_SYS_PTRACE`, so the commands and code it runs
/// as the same user (host cli tools, the unsandboxed backend) cannot read its
/// API keys from its environment or memory; it also writes no core dump. A
/// process of root, or of a user with that capability, still can. The programs
/// it starts are dumpable again once they `exec`. Call it first thing in
/// `main`, before any secret is read.
pub fn harden_process() -> io::Result<()> {
    set_dumpable_behavior(DumpableBehavior::NotDumpable)?;
    Ok(())
}
