//! Starting a run of the program under the debugger: the runtime gets the
//! debugger as its step hook and event sink; when it ends the client hears
//! `exited` and `terminated`.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use sr_runtime::event::Emitter;
use sr_runtime::hook::{NoHook, StepHook};
use sr_runtime::human::Unattended;
use sr_runtime::{Env, Runtime};
use tokio::task::JoinHandle;

use crate::debugger::{Debugger, RunInfo};
use crate::hook::DebugHook;
use crate::launch::Launch;
use crate::output::Events;

/// A run in progress.
pub struct Running {
    pub generation: u64,
    pub task: JoinHandle<()>,
}

pub fn spawn(debugger: Arc<Debugger>, launch: Launch) -> Running {
    let invocation = launch.invocation.unwrap_or_else(new_invocation);
    let info = RunInfo {
        workload: sr_runtime::compile::display_path(&launch.program.root),
        input: launch.prompt.clone(),
        invocation: invocation.clone(),
    };
    let generation = debugger.begin_run(info, launch.stop_on_entry && !launch.no_debug);
    let hook: Arc<dyn StepHook> =
        if launch.no_debug { Arc::new(NoHook) } else { Arc::new(DebugHook(debugger.clone())) };
    let seams = launch.seams;
    let env = Env {
        provider: seams.provider,
        hook,
        jail: seams.jail,
        tools: seams.tools,
        human: Arc::new(Unattended),
        options: seams.options,
    };
    let emitter = Emitter::new(invocation, vec![Arc::new(Events(debugger.clone()))]);
    let runtime = Runtime::new(launch.program, env);
    let prompt = launch.prompt;
    let task = tokio::spawn(async move {
        let outcome = runtime.run(emitter, prompt, Vec::new()).await;
        debugger.after_run().await;
        debugger.end_run(generation, Some(&outcome));
    });
    Running { generation, task }
}

/// An id for a live run (replays keep the recorded one).
fn new_invocation() -> String {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("debug-{}-{nanos:x}", std::process::id())
}
