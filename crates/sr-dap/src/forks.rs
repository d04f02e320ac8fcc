//! Forks: the timelines of one debug session. The launch's run is the
//! original branch; going back in time and then choosing differently (a
//! variable edited, a model request or reply edited, an answer changed, or
//! `streetraceRunLiveFrom`) where the branch had gone further makes a new
//! branch, a child of the current one, which the run goes on in. Every branch
//! keeps its own history: the edits and answers threads resumed with (made
//! again when a run passes there, so going back and forth in a branch stays
//! in it), the furthest point each thread reached, where its threads
//! started, and its journal (see `timeline`). Going to another branch is a
//! travel in that branch's journal.
//!
//! Choosing differently where the branch had not gone further (at its
//! frontier) makes no new branch: the run only goes on. The requests that
//! list forks, go to one and go live are `fork_requests`.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use sr_runtime::eval::Vars;

use crate::request_error::RequestError;
use crate::travel::{At, is_future};

/// Where a branch's journal is: `file` from byte `skip` on (the bytes before
/// are what a travel served the run besides the branch: the whole
/// timeline's file changes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub file: PathBuf,
    pub skip: u64,
}

/// What made a fork.
#[derive(Debug, Clone, PartialEq)]
pub enum Why {
    /// `setVariable` on these variables.
    Edit(Vec<String>),
    /// The model request was edited before it went.
    Request,
    /// The model's reply was replaced before the agent saw it.
    Reply,
    /// `streetraceRunLiveFrom`.
    Live,
    /// Another answer to `escalate to human`.
    Answer(String),
}

impl Why {
    pub fn id(&self) -> &'static str {
        match self {
            Why::Edit(_) => "edit",
            Why::Request => "request",
            Why::Reply => "reply",
            Why::Live => "live",
            Why::Answer(_) => "answer",
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Why::Edit(names) if names.is_empty() => "variables edited".to_string(),
            Why::Edit(names) => {
                let names: Vec<String> = names.iter().map(|n| format!("${n}")).collect();
                format!("{} edited", names.join(", "))
            }
            Why::Request => "the model request edited".to_string(),
            Why::Reply => "the model's reply replaced".to_string(),
            Why::Live => "run live".to_string(),
            Why::Answer(text) => format!("answered {}", serde_json::Value::String(text.clone())),
        }
    }
}

/// Where a branch left its parent: before (or inside) a point of a thread.
#[derive(Debug, Clone, PartialEq)]
pub struct ForkPoint {
    pub thread: u32,
    pub at: At,
    pub why: Why,
    /// The thread's top frame there, as the client was shown it.
    pub frame: String,
    pub file: Option<usize>,
    pub line: u32,
    pub column: u32,
}

/// One timeline.
#[derive(Debug, Clone, Default)]
pub struct Branch {
    pub parent: Option<usize>,
    /// `None` for the original run.
    pub point: Option<ForkPoint>,
    /// The variables threads resumed with after `setVariable`, by thread,
    /// point and whether they were stopped inside it (on a failure or a
    /// question) rather than before it.
    pub edits: BTreeMap<(u32, u64, bool), Vars>,
    /// The answers to `escalate to human` threads resumed with, by (thread, point).
    pub answers: BTreeMap<(u32, u64), String>,
    /// The furthest point each thread reached, and whether it went on from
    /// there (into it: a failure, a question; or to its end).
    pub reached: HashMap<u32, (u64, bool)>,
    /// Each branch thread's parent, and the parent's point when it started.
    pub born: HashMap<u32, (u32, u64)>,
    /// Its journal; `None` in a launch that replays a recording.
    pub journal: Option<Piece>,
}

/// The session's branches (index 0 is the original run) and the current one.
#[derive(Debug)]
pub struct Forks {
    pub branches: Vec<Branch>,
    pub current: usize,
}

impl Default for Forks {
    fn default() -> Forks {
        Forks::new(None)
    }
}

impl Forks {
    /// A launch's forks: its run, recorded in `journal`.
    pub fn new(journal: Option<Piece>) -> Forks {
        Forks { branches: vec![Branch { journal, ..Branch::default() }], current: 0 }
    }

    pub fn current(&self) -> &Branch {
        &self.branches[self.current]
    }

    pub fn current_mut(&mut self) -> &mut Branch {
        &mut self.branches[self.current]
    }

    /// Whether the current branch went past `at` on `thread`: choosing
    /// differently there leaves something of it behind.
    pub fn went_past(&self, thread: u32, at: At) -> bool {
        self.current()
            .reached
            .get(&thread)
            .is_some_and(|&(point, on)| point > at.point || point == at.point && on && !at.inside)
    }

    /// Records that `thread` reached `point` on the current branch, and
    /// (`on`) went on from it.
    pub fn reach(&mut self, thread: u32, point: u64, on: bool) {
        let reached = self.current_mut().reached.entry(thread).or_default();
        *reached = (*reached).max((point, on));
    }

    /// A new branch from the current one at `point`, made current. It keeps
    /// of its parent's history what precedes the fork point: nothing of the
    /// forking thread after it, nor of the threads it started from there.
    pub fn fork(&mut self, point: ForkPoint, journal: Option<Piece>) -> usize {
        let parent = self.current;
        let from = &self.branches[parent];
        let targets = HashMap::from([(point.thread, point.at)]);
        let gone_inside = |thread: u32, at: u64, inside: bool| {
            let after = at > point.at.point || at == point.at.point && inside && !point.at.inside;
            (thread == point.thread && after) || is_future(thread, &from.born, &targets)
        };
        let gone = |thread: u32, at: u64| gone_inside(thread, at, false);
        let mut reached: HashMap<u32, (u64, bool)> =
            from.reached.iter().filter(|(t, _)| !gone(**t, 0)).map(|(t, r)| (*t, *r)).collect();
        reached.insert(point.thread, (point.at.point, point.at.inside));
        let branch = Branch {
            parent: Some(parent),
            edits: from
                .edits
                .iter()
                .filter(|((t, p, i), _)| !gone_inside(*t, *p, *i))
                .map(|(k, v)| (*k, v.clone()))
                .collect(),
            answers: from.answers.iter().filter(|((t, p), _)| !gone(*t, *p)).map(|(k, v)| (*k, v.clone())).collect(),
            reached,
            born: from.born.iter().filter(|(t, _)| !gone(**t, 0)).map(|(t, b)| (*t, *b)).collect(),
            journal,
            point: Some(point),
        };
        self.branches.push(branch);
        self.current = self.branches.len() - 1;
        self.current
    }

    /// The threads that start `thread` in branch `branch`, innermost first,
    /// each with its point that started the next one.
    pub fn lineage(&self, branch: usize, thread: u32) -> Vec<(u32, u64)> {
        let Some(born) = self.branches.get(branch).map(|b| &b.born) else { return Vec::new() };
        let mut lineage = Vec::new();
        let mut at = thread;
        // The bound guards a broken map.
        for _ in 0..=born.len() {
            let Some(&(parent, point)) = born.get(&at) else { break };
            lineage.push((parent, point));
            at = parent;
        }
        lineage
    }

    /// Branch `to`'s ancestors, nearest first.
    fn ancestors(&self, to: usize) -> impl Iterator<Item = usize> + '_ {
        let mut at = self.branches.get(to).and_then(|b| b.parent);
        // Parents come before their children: the bound only guards a broken list.
        (0..self.branches.len()).map_while(move |_| {
            let here = at?;
            at = self.branches[here].parent;
            Some(here)
        })
    }

    /// Where going to branch `to` stops: for an ancestor of the current
    /// branch, the point where the current one left it (its child's fork
    /// point on the way); for any other branch, its own fork point.
    pub fn destination(&self, to: usize) -> Result<(u32, At), RequestError> {
        let number = i64::try_from(to).map_or(i64::MAX, |to| to.saturating_add(1));
        if to >= self.branches.len() {
            return Err(RequestError::NoFork(number));
        }
        if to == self.current {
            return Err(RequestError::CurrentFork(number));
        }
        let departure = std::iter::once(self.current)
            .chain(self.ancestors(self.current))
            .find(|b| self.branches[*b].parent == Some(to));
        let point = match departure {
            Some(child) => self.branches[child].point.as_ref(),
            None => self.branches[to].point.as_ref(),
        };
        let point = point.ok_or(RequestError::NoForkPoint)?;
        Ok((point.thread, At { point: point.at.point, inside: false }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(thread: u32, at: u64) -> ForkPoint {
        ForkPoint {
            thread,
            at: At { point: at, inside: false },
            why: Why::Live,
            frame: "flow main".into(),
            file: None,
            line: 1,
            column: 1,
        }
    }

    #[test]
    fn a_fork_keeps_what_precedes_its_point() {
        let mut forks = Forks::default();
        let original = forks.current_mut();
        // Main (0) reached 9, started 1 at its point 3 and 2 at its point 7.
        original.reached = HashMap::from([(0, (9, false)), (1, (4, false)), (2, (5, true))]);
        original.born = HashMap::from([(1, (0, 3)), (2, (0, 7))]);
        for (thread, at, inside) in [(0, 2, false), (0, 6, false), (0, 6, true), (1, 2, false), (2, 3, false)] {
            original.edits.insert((thread, at, inside), Vars::default());
        }
        assert!(forks.went_past(0, At { point: 6, inside: false }));
        assert!(!forks.went_past(0, At { point: 9, inside: false }), "at its frontier");
        assert!(forks.went_past(2, At { point: 5, inside: false }), "before a point the thread went into");
        assert!(!forks.went_past(2, At { point: 5, inside: true }), "inside it");
        assert_eq!(forks.fork(point(0, 6), None), 1);
        let fork = forks.current();
        let edits: Vec<_> = fork.edits.keys().copied().collect();
        assert_eq!(
            edits,
            [(0, 2, false), (0, 6, false), (1, 2, false)],
            "main's later edits (inside its point 6 too) and branch 2's, started later, are gone"
        );
        assert_eq!(fork.reached.get(&0), Some(&(6, false)));
        assert_eq!(fork.reached.get(&2), None);
        assert_eq!(fork.born.get(&1), Some(&(0, 3)));
        assert_eq!(forks.branches[0].edits.len(), 5, "the parent keeps its own");
        forks.current_mut().born.insert(3, (1, 2));
        assert_eq!(forks.lineage(1, 3), [(1, 2), (0, 3)]);
        assert_eq!(forks.lineage(1, 0), []);
    }

    #[test]
    fn going_to_a_branch_stops_where_it_parts() {
        let mut forks = Forks::default();
        forks.fork(point(0, 5), None); // 1 from 0
        forks.fork(point(0, 8), None); // 2 from 1
        forks.current = 0;
        forks.fork(point(0, 3), None); // 3 from 0
        assert_eq!(forks.current, 3);
        let stop = |at| Ok((0, At { point: at, inside: false }));
        assert_eq!(forks.destination(0), stop(3), "the original: where fork 4 left it");
        assert_eq!(forks.destination(2), stop(8), "another branch: its own fork point");
        let refused = |to| forks.destination(to).map_err(|e| e.to_string());
        assert_eq!(refused(3), Err("fork 4 is the one the run is in".to_string()));
        assert_eq!(refused(7), Err("there is no fork 8".to_string()));
        forks.current = 2;
        assert_eq!(forks.destination(1), stop(8), "an ancestor: where its child on the way left it");
        assert_eq!(forks.destination(0), stop(5));
    }
}
