//! Token accounting: every model call's usage (and cost, with a price table)
//! is added to the run's total and to each agent run in progress on the
//! thread, so events can report totals per agent and per run.

use std::collections::HashSet;
use std::sync::Mutex;

use crate::event::{Payload, Usage};
use crate::run::{Runtime, Thread};

/// The run's total and the models already reported as unpriced.
#[derive(Default)]
pub(crate) struct Accounts {
    total: Mutex<Usage>,
    unpriced: Mutex<HashSet<String>>,
}

impl Accounts {
    pub(crate) fn total(&self) -> Usage {
        self.total.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}

impl Runtime {
    /// Records one model call's usage; returns it with its cost.
    pub(crate) fn charge(&self, th: &mut Thread, model: &str, usage: &sr_llm::Usage) -> Usage {
        let prices = self.env.options.prices.as_deref();
        let cost_usd = prices.and_then(|p| p.cost(usage, model));
        if prices.is_some()
            && cost_usd.is_none()
            && self.accounts.unpriced.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(model.to_string())
        {
            th.emitter.emit(Payload::Warning {
                message: format!("the price table has no price for model '{model}'; costs leave it out"),
            });
        }
        let charged = Usage { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens, cost_usd };
        self.accounts.total.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).add(&charged);
        for open in &mut th.agent_usage {
            open.add(&charged);
        }
        charged
    }
}
