//! Retry and timeout policies, which upstream parses and never applies. An
//! agent's `retry R` sends a model call that failed for a reason that may pass
//! (a dropped connection, a timeout, 429, 5xx) again, up to R's count, waiting
//! as R's backoff says (or as the server's `Retry-After` asks, if longer). Its
//! `timeout T` bounds each run of the agent; a run that times out is a failure
//! the retry policy also retries, from the start.

use std::time::Duration;

use sr_hir::{AgentTimeout, Backoff, RetryPolicyData};

use crate::event::Payload;
use crate::run::{Runtime, Thread};

/// The first wait of every backoff.
const BASE_DELAY: Duration = Duration::from_secs(1);
/// No wait is longer.
const MAX_DELAY: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Default)]
pub(crate) struct AgentPolicy {
    pub retry: Option<RetryPolicyData>,
    pub timeout: Option<Duration>,
}

impl AgentPolicy {
    /// How many times a failure may be retried.
    pub fn retries(&self) -> u64 {
        self.retry.as_ref().map_or(0, |r| r.times)
    }

    /// The wait before retry number `attempt` (1-based).
    pub fn delay(&self, attempt: u64, asked: Option<Duration>) -> Duration {
        let Some(retry) = &self.retry else { return Duration::ZERO };
        let steps = u32::try_from(attempt.max(1)).unwrap_or(u32::MAX);
        let delay = match retry.backoff {
            Backoff::None | Backoff::Fixed => BASE_DELAY,
            Backoff::Linear => BASE_DELAY.saturating_mul(steps),
            Backoff::Exponential => BASE_DELAY.saturating_mul(2u32.saturating_pow(steps - 1)),
        };
        delay.min(MAX_DELAY).max(asked.unwrap_or_default())
    }
}

impl Runtime {
    /// The policies of agent `name` (none for a name that is not an agent).
    pub(crate) fn agent_policy(&self, name: &str) -> AgentPolicy {
        let Some(spec) = self.program.agents.get(name) else { return AgentPolicy::default() };
        let retry = spec.data.retry.as_ref().and_then(|r| self.program.retry_policies.get(&r.name)).cloned();
        let timeout = match &spec.data.timeout {
            Some(AgentTimeout::Seconds(seconds)) => Some(*seconds),
            Some(AgentTimeout::Named(named)) => self.program.timeout_policies.get(&named.name).and_then(|t| t.seconds),
            None => None,
        };
        AgentPolicy { retry, timeout: timeout.map(Duration::from_secs) }
    }

    /// The policies that govern a model call made on `th`: its innermost agent's.
    pub(crate) fn call_policy(&self, th: &Thread) -> AgentPolicy {
        th.frames
            .iter()
            .rev()
            .find(|f| f.kind == crate::hook::FrameKind::Agent)
            .map(|f| self.agent_policy(&f.name))
            .unwrap_or_default()
    }

    /// Says a failure will be retried (`attempt` of `of`), then waits.
    pub(crate) async fn before_retry(
        &self,
        th: &Thread,
        what: &str,
        error: &str,
        (attempt, of): (u64, u64),
        delay: Duration,
    ) {
        th.emitter.emit(Payload::Warning {
            message: format!("{what} failed ({error}); retry {attempt} of {of} in {}", seconds(delay)),
        });
        tokio::time::sleep(delay).await;
    }
}

fn seconds(delay: Duration) -> String {
    format!("{:.1}s", delay.as_secs_f64())
}
