//! The fork requests: `streetraceRunLiveFrom` (the stopped thread goes live
//! where it is), `streetraceForks` (the launch's forks, with their parent and
//! fork point) and `streetraceSwitchFork` (the plan that goes to one; the
//! session runs it as a travel). See `forks`.

use sr_runtime::journal::Mode;

use crate::debugger::{Debugger, dap_thread, thread_number};
use crate::protocol::{Fork, ForksBody, RunLiveFromBody};
use crate::request_error::RequestError;
use crate::threads::display;
use crate::travel::{Back, Travel};

impl Debugger {
    /// `streetraceRunLiveFrom`: the stopped thread forks where it is when it
    /// resumes, so that its next effects are made for real (a tool retried
    /// after its cause was fixed, rather than its recorded failure served).
    pub fn run_live_from(&self, thread_id: Option<i64>) -> Result<RunLiveFromBody, RequestError> {
        let mut guard = self.lock();
        let st = &mut *guard;
        if st.run.mode == Some(Mode::Replay) {
            return Err(RequestError::ReplayNeverLive);
        }
        let thread = match thread_id {
            Some(id) => thread_number(id).ok_or(RequestError::NoThread(id))?,
            None => st.run.focus.filter(|t| st.run.stopped.contains_key(t)).ok_or(RequestError::NoneStopped)?,
        };
        let stopped = st.run.stopped.get_mut(&thread).ok_or(RequestError::NotStopped(dap_thread(thread)))?;
        stopped.live = true;
        let at = stopped.at;
        let text = match st.run.mode == Some(Mode::Travel) && st.forks.went_past(thread, at) {
            true => format!(
                "{} goes live here when it resumes: its model and tool calls from here on are made for real, in a new fork",
                display(&st.run.runtime, thread)
            ),
            false => {
                format!(
                    "{} is live from here already: nothing of it past this point was recorded",
                    display(&st.run.runtime, thread)
                )
            }
        };
        self.client.output("console", text);
        Ok(RunLiveFromBody { thread_id: dap_thread(thread) })
    }

    /// `streetraceForks`: every branch, with its parent and fork point.
    pub fn forks(&self) -> ForksBody {
        let st = self.lock();
        let forks = st
            .forks
            .branches
            .iter()
            .enumerate()
            .map(|(index, branch)| {
                let point = branch.point.as_ref();
                let source = point.and_then(|p| st.loaded.as_ref()?.source(p.file?));
                Fork {
                    id: index as i64 + 1,
                    label: match point {
                        Some(point) => format!("{} at {}", point.why.describe(), self.place(&st, point)),
                        None => "the original run".to_string(),
                    },
                    parent: branch.parent.map(|p| p as i64 + 1),
                    reason: point.map(|p| p.why.id()),
                    thread_id: point.map(|p| dap_thread(p.thread)),
                    frame: point.map(|p| p.frame.clone()),
                    source,
                    line: point.map(|p| st.positions.line_out(p.line)),
                    column: point.map(|p| st.positions.column_out(p.column)),
                    current: index == st.forks.current,
                }
            })
            .collect();
        ForksBody { forks, current: st.forks.current as i64 + 1 }
    }

    /// `streetraceSwitchFork`: the branch to go to, and the plan that brings
    /// its thread to where it parts from the current one (see
    /// `Forks::destination`).
    pub fn switch_plan(&self, id: i64) -> Result<(usize, Travel), RequestError> {
        let (to, back) = {
            let st = self.lock();
            let to = id.checked_sub(1).and_then(|to| usize::try_from(to).ok());
            let to = to.ok_or(RequestError::NoFork(id))?;
            let (thread, at) = st.forks.destination(to)?;
            let lineage = st.forks.lineage(to, thread);
            (to, Back::To { thread, point: at.point, lineage })
        };
        Ok((to, self.travel_target(None, back)?))
    }
}
