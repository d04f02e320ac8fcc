//! Data breakpoints on flow variables: `dataBreakpointInfo` offers one for
//! each variable of a thread's *Variables* scope; the thread that assigns
//! the variable (or a field of it) stops at its next point, after the write,
//! with reason `data breakpoint`; a branch that ends after its write (a
//! `parallel do` branch is one statement) hands it to its parent, which stops
//! after the block. Assignments are read from the run's `state_change` events.

use std::collections::HashMap;

use sr_runtime::eval::Vars;

use crate::trigger::{Trigger, Verdict};

/// A verified data breakpoint: writes to `$variable`.
#[derive(Debug, Clone)]
pub struct Watched {
    pub id: i64,
    pub variable: String,
    pub trigger: Trigger,
}

/// The data breakpoints, and the writes each thread made since its last point.
#[derive(Debug, Default)]
pub struct DataBreakpoints {
    pub watched: Vec<Watched>,
    /// Runtime thread → ids of the breakpoints whose variable it wrote.
    written: HashMap<u32, Vec<i64>>,
}

impl DataBreakpoints {
    /// A `state_change` of `variable` (`name` or `name.field…`) on `thread`.
    pub fn written(&mut self, thread: u32, variable: &str) {
        let name = variable.split('.').next().unwrap_or(variable);
        for watched in self.watched.iter().filter(|w| w.variable == name) {
            let ids = self.written.entry(thread).or_default();
            if !ids.contains(&watched.id) {
                ids.push(watched.id);
            }
        }
    }

    /// The breakpoints that stop `thread` now: those whose variable it wrote
    /// and whose condition and hit count hold on its variables.
    pub fn hits(&mut self, thread: u32, vars: &Vars) -> Vec<i64> {
        let Some(ids) = self.written.remove(&thread) else { return Vec::new() };
        let mut hits = Vec::new();
        for watched in self.watched.iter_mut().filter(|w| ids.contains(&w.id)) {
            if matches!(watched.trigger.check(vars), Verdict::Stop | Verdict::StopFailed(_)) {
                hits.push(watched.id);
            }
        }
        hits
    }

    /// A branch ended: its writes since its last point (a branch that is
    /// one assignment makes its write as it ends) stop its parent at the
    /// parent's next point, after the block, where the branches' values are.
    pub fn hand_over(&mut self, branch: u32, parent: u32) {
        for id in self.written.remove(&branch).unwrap_or_default() {
            let ids = self.written.entry(parent).or_default();
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }

    pub fn clear_writes(&mut self) {
        self.written.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::breakpoints::Breakpoints;
    use crate::protocol::DataBreakpoint;
    use serde_json::json;

    #[test]
    fn writes_to_a_watched_variable_or_its_fields_stop_their_thread_once() {
        let mut breakpoints = Breakpoints::default();
        let request = |id: &str, condition: Option<&str>| DataBreakpoint {
            data_id: id.into(),
            condition: condition.map(str::to_string),
            ..DataBreakpoint::default()
        };
        let set = breakpoints.set_data(vec![request("$total", Some("$total > 5")), request("a b", None)]);
        assert!(set[0].verified && !set[1].verified);
        assert_eq!(set[1].message.as_deref(), Some("'a b' is not a flow variable"));
        let data = &mut breakpoints.data;
        let at = |n: i64| -> Vars { [("total".to_string(), json!(n))].into_iter().collect() };
        data.written(2, "other");
        assert!(data.hits(2, &at(9)).is_empty(), "another variable");
        data.written(2, "total");
        assert!(data.hits(2, &at(3)).is_empty(), "the condition does not hold");
        data.written(2, "total.parts");
        data.written(2, "total");
        assert_eq!(data.hits(2, &at(9)), [set[0].id.unwrap()]);
        assert!(data.hits(2, &at(9)).is_empty(), "taken once");
        data.written(1, "total");
        assert!(data.hits(2, &at(9)).is_empty(), "the writing thread only");
        data.written(3, "total");
        data.written(4, "total");
        data.hand_over(3, 0);
        data.hand_over(4, 0);
        assert!(data.hits(3, &at(9)).is_empty(), "handed over");
        assert_eq!(data.hits(0, &at(9)), [set[0].id.unwrap()], "to the parent, once");
    }
}
