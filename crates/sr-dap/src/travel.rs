//! Time travel by replaying the run's recording. Each thread counts its own
//! points (each statement, model call and reply, tool call), from 1 (a pause
//! inside a model call has the call's). Going back moves one thread to one of
//! its own earlier points; every other thread stays where it is: the program
//! runs again from its recording (no model or tool is called), silently and
//! without stopping, and each thread is brought back to where it was (a
//! stopped thread is stopped there again, a running one runs on from there,
//! one that had ended ends again), with the variables of that moment
//! (`setVariable` edits and answers to `escalate to human` of the branch
//! made again). Threads are told apart by their journal names (`threads`).
//! Going forward from there serves what the recording has, and goes live
//! only where a thread's recording ends or where the user chooses
//! differently (a fork, see `forks`); a run that asks for something else
//! than its recording has there stops with a divergence. Going to another
//! fork is the same travel in that fork's journal. `Debugger::travel_target`
//! (in `inspect`) makes the plan.

use std::collections::{BTreeSet, HashMap};

use sr_runtime::eval::Vars;

use crate::exceptions::Exception;
use crate::protocol::StoppedEvent;
use crate::stepping::Stepping;

/// Where to go back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Back {
    /// The thread's point before the one it is at (the point itself when it
    /// stopped inside it, on a failure or a question).
    Step,
    /// The thread's last earlier point where a breakpoint stopped it, or its
    /// first point.
    Continue,
    /// The first point of a frame of a stopped thread (`restartFrame`); a
    /// model or tool call's frame is its point.
    Frame(i64),
    /// A thread's point, stopped or not (going to a fork), with the
    /// threads that start it: each ancestor and its point that started the
    /// next one (they go there silently and on, into their `parallel do`).
    To { thread: u32, point: u64, lineage: Vec<(u32, u64)> },
}

/// A point of a thread: its `point`-th, or (`inside`) the failure or
/// question met while running it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct At {
    pub point: u64,
    pub inside: bool,
}

/// What a thread does while the run replays.
#[derive(Debug, Clone)]
pub enum Quiet {
    /// The thread going back: it stops at its `point`-th point (as `reason`).
    Stop { point: u64, reason: &'static str },
    /// A thread that was stopped: it stops again where it was, the client
    /// hears `stopped` again (keeping its focus), and what it was given and
    /// had not resumed with is kept: an answer, the variables the user set
    /// (and which), a `streetraceRunLiveFrom`.
    Hold { at: At, held: Box<Held> },
    /// A thread that was running: silent up to its `point`-th point, where
    /// it runs on as before.
    Run { point: u64 },
    /// A thread that had ended: silent to its end.
    Ended,
}

impl Quiet {
    /// The last point of the thread the run still has when it gets there.
    pub fn limit(&self) -> u64 {
        match self {
            Quiet::Stop { point, .. } | Quiet::Run { point } => *point,
            Quiet::Hold { at, .. } => at.point,
            Quiet::Ended => u64::MAX,
        }
    }
}

/// How a thread had stopped, to stop it again the same way.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub stopped: StoppedEvent,
    pub exception: Option<Exception>,
    pub answer: Option<String>,
    /// The variables the user had set there, and which.
    pub edited: Option<(Vars, Vec<String>)>,
    /// `streetraceRunLiveFrom` had been asked there.
    pub live: bool,
}

/// A travel under way.
#[derive(Debug, Clone, Default)]
pub struct Travel {
    /// What each thread known at the time does; a thread not in it (one the
    /// replay starts only after the moving thread goes on) runs as usual.
    pub plan: HashMap<u32, Quiet>,
    /// The threads the client already knows of (it hears neither that they
    /// start again nor, for those that had ended, that they end again).
    pub known: BTreeSet<u32>,
    /// The steps of running threads, which go on.
    pub stepping: HashMap<u32, Stepping>,
}

impl Travel {
    /// The threads stopped again where they were.
    pub fn held(&self) -> BTreeSet<u32> {
        self.plan.iter().filter(|(_, q)| matches!(q, Quiet::Hold { .. })).map(|(t, _)| *t).collect()
    }

    /// Whether the thread's point, met again, is still what it was (the
    /// same thread, at or before where the plan brings it back).
    pub fn keeps(&self, thread: u32, point: u64) -> bool {
        self.plan.get(&thread).is_some_and(|quiet| point <= quiet.limit())
    }
}

/// Whether a thread starts only after a thread held at `targets` goes on:
/// it was started (as a branch, `born` = parent and the parent's point) by
/// such a thread at or after where it is held, or by such a thread's branch.
pub fn is_future(thread: u32, born: &HashMap<u32, (u32, u64)>, targets: &HashMap<u32, At>) -> bool {
    let mut thread = thread;
    // Parents have smaller ids; the bound only guards against a broken map.
    for _ in 0..=born.len() {
        let Some(&(parent, at)) = born.get(&thread) else { return false };
        if let Some(target) = targets.get(&parent)
            && (at > target.point || at == target.point && !target.inside)
        {
            return true;
        }
        thread = parent;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_started_after_a_held_point_are_future() {
        // Main (0) started 1 and 2 at its point 3; 2 started 3 at its point 2.
        let born: HashMap<u32, (u32, u64)> = [(1, (0, 3)), (2, (0, 3)), (3, (2, 2))].into_iter().collect();
        let at = |point, inside| At { point, inside };
        let held = |thread, target| -> HashMap<u32, At> { [(thread, target)].into_iter().collect() };
        let future = |targets: &HashMap<u32, At>| (0..4).filter(|t| is_future(*t, &born, targets)).collect::<Vec<_>>();
        assert_eq!(future(&held(0, at(3, false))), [1, 2, 3], "main back at its `parallel do`");
        assert_eq!(future(&held(0, at(3, true))), Vec::<u32>::new(), "main inside it: the branches ran");
        assert_eq!(future(&held(0, at(5, false))), Vec::<u32>::new(), "main after the block");
        assert_eq!(future(&held(0, at(2, false))), [1, 2, 3]);
        assert_eq!(future(&held(2, at(2, false))), [3], "a branch back at its own `parallel do`");
        assert_eq!(future(&held(1, at(1, false))), Vec::<u32>::new(), "a sibling's branches are not its");
        assert_eq!(future(&HashMap::new()), Vec::<u32>::new());
        let cycle: HashMap<u32, (u32, u64)> = [(1, (2, 1)), (2, (1, 1))].into_iter().collect();
        assert!(!is_future(1, &cycle, &HashMap::new()), "a broken map ends");
    }
}
