//! Threads by their journal name. The runtime numbers a run's threads in the
//! order they start, which differs between runs when nested `parallel`
//! blocks start in concurrent branches; the journal names them after where
//! they start (`main`, `main/3.1`: branch 1 of the block that was effect 3
//! of `main`), the same in every run served the same values. The debugger
//! numbers threads by that name, once per session, so that going back in
//! time or to another fork finds the threads the client knows under the ids
//! it knows them by; runtime ids only tell a run's own threads apart, and
//! name them for a person as the run's events do (`branch:2`).

use std::collections::HashMap;
use std::sync::Arc;

use sr_runtime::event::thread_name;

/// The session's thread numbers: `main` is 0, every other name gets the
/// next number when first seen. Numbers are never reused.
#[derive(Debug)]
pub struct Names {
    by_key: HashMap<Arc<str>, u32>,
}

impl Default for Names {
    fn default() -> Names {
        Names { by_key: HashMap::from([("main".into(), 0)]) }
    }
}

impl Names {
    /// The number of the thread named `key`.
    pub fn of(&mut self, key: &str) -> u32 {
        if let Some(&thread) = self.by_key.get(key) {
            return thread;
        }
        let thread = u32::try_from(self.by_key.len()).unwrap_or(u32::MAX);
        self.by_key.insert(key.into(), thread);
        thread
    }
}

/// How the client names the session's thread `thread`: as the run's events
/// and `sr serve`'s state view name it ([`thread_name`] of its runtime id in
/// the current run, `runtime`: runtime id to session number), so that the
/// names in the console, the threads view and a run's events agree. A thread
/// the current run has not started is `thread N` (its session number).
pub fn display(runtime: &HashMap<u32, u32>, thread: u32) -> String {
    if thread == 0 {
        return thread_name(0);
    }
    match runtime.iter().find(|&(_, &number)| number == thread) {
        Some((&id, _)) => thread_name(id),
        None => format!("thread {thread}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_their_numbers_whatever_order_they_come_in() {
        let mut names = Names::default();
        assert_eq!(names.of("main"), 0);
        assert_eq!(names.of("main/2.1"), 1);
        assert_eq!(names.of("main/2.0"), 2);
        assert_eq!(names.of("main/2.1"), 1, "seen again, in another run");
        assert_eq!(names.of("main/2.1/0.0"), 3);
    }

    #[test]
    fn threads_are_shown_by_the_name_the_runs_events_give_them() {
        // Session threads 1 and 2 are the runtime's threads 5 and 3 in this run.
        let runtime = HashMap::from([(5, 1), (3, 2)]);
        assert_eq!(display(&runtime, 0), "main");
        assert_eq!(display(&runtime, 1), "branch:5");
        assert_eq!(display(&runtime, 2), "branch:3");
        assert_eq!(display(&runtime, 4), "thread 4", "not started in this run");
    }
}
