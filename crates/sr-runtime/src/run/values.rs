//! The values of nondeterministic functions (`uuid()`, `now()`, `random()`,
//! `random_int()`): each is an effect of the thread that asks, served from the
//! journal or made and recorded there.

use serde_json::Value;

use crate::journal::Divergence;
use crate::run::{Runtime, Thread};

/// The values of one statement's nondeterministic calls (`uuid()`, …), in
/// the order evaluation reaches them: each is an effect of the thread, served
/// from the journal or made and recorded, and evaluating the expression again
/// (after one of its tool calls) gets the same values.
pub(crate) struct StatementValues<'a> {
    runtime: &'a Runtime,
    thread: &'a Thread,
    made: std::cell::RefCell<Vec<Value>>,
    next: std::cell::Cell<usize>,
    diverged: std::cell::RefCell<Option<Divergence>>,
}

impl<'a> StatementValues<'a> {
    pub(crate) fn new(runtime: &'a Runtime, thread: &'a Thread, made: Vec<Value>) -> StatementValues<'a> {
        StatementValues { runtime, thread, made: made.into(), next: Default::default(), diverged: Default::default() }
    }

    /// The values made so far, or the divergence that stopped evaluation.
    pub(crate) fn into_values(self) -> Result<Vec<Value>, Divergence> {
        match self.diverged.into_inner() {
            Some(divergence) => Err(divergence),
            None => Ok(self.made.into_inner()),
        }
    }
}

impl crate::eval::Values for StatementValues<'_> {
    fn value(&self, function: &str, args: &[Value]) -> crate::eval::EvalResult<Value> {
        let index = self.next.get();
        self.next.set(index + 1);
        if let Some(value) = self.made.borrow().get(index) {
            return Ok(value.clone());
        }
        let at = self.thread.next_effect();
        let live = || crate::stdlib::call(function, args).map_err(|e| e.0);
        match self.runtime.env.journal.value(&at, function, args, live) {
            Ok(Ok(value)) => {
                self.made.borrow_mut().push(value.clone());
                Ok(value)
            }
            Ok(Err(message)) => Err(crate::value::ValueError(message)),
            Err(divergence) => {
                let message = divergence.0.clone();
                *self.diverged.borrow_mut() = Some(divergence);
                Err(crate::value::ValueError(message))
            }
        }
    }
}
