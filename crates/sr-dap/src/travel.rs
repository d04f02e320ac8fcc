//! Time travel by replaying the run's recording. Every point of a run (each
//! statement, model call and reply, tool call) has a position, counted from
//! 1 in the order the run reaches them (a pause inside a model call has the
//! call's). Going back to a position runs the
//! program again from its recording (no model or tool is called), silently
//! and without stopping, up to that position, where the thread stops with the
//! variables of that moment (`setVariable` edits made before it included).
//! Going forward from there serves what the recording has; the first request
//! it does not have goes to the model (a fork of a live run, recorded in turn)
//! or, when the launch replays a recording, fails naming the request.

use crate::debugger::{Debugger, runtime_thread};
use crate::variables::Handle;

/// Where to go back to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Back {
    /// The point before the thread's.
    Step,
    /// The last point before the thread's where a breakpoint stopped, or the
    /// first point of the run.
    Continue,
    /// The first point of a frame of a stopped thread (`restartFrame`); a
    /// model or tool call's frame is its point.
    Frame(i64),
}

/// A travel under way: the position to stop at, and as what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Travel {
    pub to: u64,
    pub reason: &'static str,
}

impl Debugger {
    /// The position `back` goes to from where stopped thread `thread_id` is
    /// (the frame's thread for [`Back::Frame`]).
    pub fn travel_target(&self, thread_id: Option<i64>, back: Back) -> Result<Travel, String> {
        let st = self.lock();
        let here = || -> Result<u64, String> {
            let thread = thread_id.and_then(runtime_thread).ok_or("going back needs a threadId")?;
            Ok(st.run.stopped.get(&thread).ok_or_else(|| format!("thread {} is not stopped", thread + 1))?.position)
        };
        match back {
            Back::Step => match here()? {
                1 => Err("this is the first point of the run".to_string()),
                here => Ok(Travel { to: here - 1, reason: "step" }),
            },
            Back::Continue => {
                let here = here()?;
                Ok(match st.breakpoint_stops.iter().copied().filter(|p| *p < here).max() {
                    Some(to) => Travel { to, reason: "breakpoint" },
                    None => Travel { to: 1, reason: "step" },
                })
            }
            Back::Frame(id) => {
                let Some(Handle::Frame { thread, index }) = st.run.handles.get(id) else {
                    return Err(format!("there is no frame {id} (the thread has moved on)"));
                };
                let stopped = st.run.stopped.get(thread).ok_or("the thread has moved on")?;
                // Shown innermost first, a call above the frame that makes it.
                let call = usize::from(stopped.snapshot.call.is_some());
                let to = match index.checked_sub(call) {
                    None => stopped.position,
                    Some(i) => *stopped.frame_starts.iter().rev().nth(i).ok_or("the thread has moved on")?,
                };
                Ok(Travel { to, reason: "restart" })
            }
        }
    }
}
