//! Starting a run of the program under the debugger: the runtime gets the
//! debugger as its step hook and event sink; when it ends the client hears
//! `exited` and `terminated`.

use std::sync::Arc;

use sr_runtime::event::EventSink;
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
    let info = RunInfo {
        workload: sr_runtime::compile::display_path(&launched.program().root),
        input: launched.message().to_string(),
        invocation: launched.invocation_id().to_string(),
    };
    let serving = Serving { mode: Some(launched.journal_mode()), piece: launch.piece };
    let generation = debugger.begin_run(info, launch.stop_on_entry && !launch.no_debug, launch.travel, serving);
    let hook: Arc<dyn StepHook> = match launch.no_debug {
        true => Arc::new(ReportHook(debugger.clone())),
        false => Arc::new(DebugHook { debugger: debugger.clone(), generation }),
    };
    let events: Arc<dyn EventSink> = Arc::new(Events::new(debugger.clone(), generation));
    let task = tokio::spawn(async move {
        let finished = launched.run(hook, vec![events]).await;
        debugger.end_run(generation, finished.ok().and_then(|f| f.status));
    });
    Running { generation, task }
}
