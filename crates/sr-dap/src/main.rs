//! `sr-dap`: the StreetRace debug adapter over stdio (also `sr dap`).
//! `--stdio`, the transport clients often pass, is the only one and may be omitted.
// `--version` and `--help` answer on stdout before anything is served.
#![allow(clippy::print_stdout)]

use std::process::ExitCode;

fn main() -> ExitCode {
    // Before any secret is read: the commands and code a run starts as this user
    // cannot read our environment or memory.
    if let Err(error) = sr_sandbox::harden_process() {
        eprintln!(
            "sr-dap: warning: cannot make this process non-dumpable ({error}); the programs it runs as you can read its memory"
        );
    }
    match std::env::args().nth(1).as_deref() {
        None | Some("--stdio") => sr_dap::run_stdio(),
        Some("--version") => {
            println!("sr-dap {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some("--help" | "-h") => {
            println!("sr-dap {}: the StreetRace debug adapter (DAP over stdio)", env!("CARGO_PKG_VERSION"));
            println!("usage: sr-dap [--stdio | --version | --help]");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("sr-dap: unknown argument '{other}'; usage: sr-dap [--stdio | --version | --help]");
            ExitCode::from(2)
        }
    }
}
