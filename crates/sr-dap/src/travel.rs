//! Time travel by replaying the run's recording. Every point of a run (each
//! statement, model call and reply, tool call) has a position, counted from
//! 1 in the order the run reaches them (a pause inside a model call has the
//! call's). Going back to a position runs the program again from its
//! recording (no model or tool is called), silently and without stopping, up
//! to that position, where the thread stops with the variables of that moment
//! (`setVariable` edits made before it included). Going forward from there
//! serves what the recording has; the first request it does not have goes to
//! the model (a fork of a live run, recorded in turn) or, when the launch
//! replays a recording, fails naming the request. `Debugger::travel_target`
//! (in `inspect`) finds the position to go back to.

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
