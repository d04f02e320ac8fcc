//! Starting a run of the program under the debugger: the runtime gets the
//! debugger as its step hook and event sink; when it ends the client hears
//! `exited` and `terminated`.

use std::sync::Arc;

use sr_runtime::Runtime;
use sr_runtime::event::Emitter;
use sr_runtime::hook::StepHook;
use tokio::task::JoinHandle;

use crate::debugger::{Debugger, RunInfo, Serving};
use crate::failures::ReportHook;
use crate::hook::DebugHook;
use crate::launch::Launch;
use crate::output::Events;

/// A run in progress.
pub struct Running {
    pub generation: u64,
    pub task: JoinHandle<()>,
}

pub fn spawn(debugger: Arc<Debugger>, launch: Launch) -> Running {
    let launched = launch.launched;
    let invocation = launched.invocation_id.clone();
    let info = RunInfo {
        workload: sr_runtime::compile::display_path(&launched.program.root),
        input: launched.message.clone(),
        invocation: invocation.clone(),
    };
    let serving = Serving { mode: Some(launched.journal.mode()), piece: launch.piece };
    let generation = debugger.begin_run(info, launch.stop_on_entry && !launch.no_debug, launch.travel, serving);
    let hook: Arc<dyn StepHook> = match launch.no_debug {
        true => Arc::new(ReportHook(debugger.clone())),
        false => Arc::new(DebugHook { debugger: debugger.clone(), generation }),
    };
    let emitter = Emitter::new(invocation, vec![Arc::new(Events::new(debugger.clone(), generation))])
        .with_redactor(launched.redactor.clone());
    let runtime = Runtime::new(launched.program.clone(), launched.env(hook));
    let (prompt, mcp) = (launched.message, launched.mcp);
    let task = tokio::spawn(async move {
        let outcome = runtime.run(emitter, prompt, Vec::new()).await;
        mcp.close().await;
        debugger.end_run(generation, Some(&outcome));
    });
    Running { generation, task }
}
