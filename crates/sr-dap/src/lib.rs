//! The StreetRace debug adapter: the Debug Adapter Protocol over stdio, for
//! flows and agents. It drives the runtime only through its step hook (called
//! before every flow statement, model call and tool call) and its events.
//!
//! - [`protocol`]: DAP messages (their framing is `sr_wire`'s);
//! - `server`: the session (configuration sequence, dispatch, restarts);
//! - `debugger`: the state shared by requests and the run; `hook` decides
//!   at each point and parks stopped threads with a `snapshot` of them; `inspect` answers stack,
//!   scope, variable and evaluation requests on a parked thread's snapshot;
//! - `answer`, `breakpoints`, `data`, `prompts`, `exceptions`, `failures`, `stepping`, `variables`, `evaluate`,
//!   `source`, `output`, `travel`, `forks` (and `fork_requests`), `timeline`, `threads`, `trigger`: one concept each.

mod answer;
mod breakpoints;
mod client;
mod data;
mod debugger;
mod evaluate;
mod exceptions;
mod failures;
mod fork_requests;
mod forks;
mod hook;
mod inspect;
mod launch;
mod output;
mod prompts;
pub mod protocol;
mod request_error;
mod run;
mod server;
mod snapshot;
mod source;
mod stepping;
mod threads;
mod timeline;
mod travel;
mod trigger;
mod variables;

#[cfg(test)]
mod tests;

use std::process::ExitCode;

/// Serves one debug session on stdin/stdout (what `sr dap` runs). Logs go
/// to stderr; stdout carries only protocol messages.
pub fn run_stdio() -> ExitCode {
    let runtime = match sr_runtime::async_runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("sr-dap: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(server::serve(tokio::io::BufReader::new(tokio::io::stdin()), tokio::io::stdout()));
    // A run still blocked in a tool or a provider must not keep the process alive.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    ExitCode::SUCCESS
}
