//! What decides whether a breakpoint stops or logs when reached: its
//! condition, hit count and log message, and its hits.

use sr_runtime::eval::Vars;

use crate::evaluate::{Expression, ExpressionError, LogMessage};

/// Why a breakpoint's condition, hit count or log message is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TriggerError {
    #[error("condition: {0}")]
    Condition(ExpressionError),
    /// The hit count as written.
    #[error("hit count `{0}`: expected e.g. `3`, `>= 3`, `% 2`")]
    HitCount(String),
    #[error(transparent)]
    Log(ExpressionError),
}

/// `hitCondition`: `N` or `== N`, `>= N`, `> N`, `< N`, `<= N`, `% N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitCondition {
    Eq(u64),
    Ge(u64),
    Gt(u64),
    Lt(u64),
    Le(u64),
    Every(u64),
}

impl HitCondition {
    pub fn parse(text: &str) -> Result<HitCondition, TriggerError> {
        let text = text.trim();
        let split = text.find(|c: char| c.is_ascii_digit()).unwrap_or(text.len());
        let (op, number) = text.split_at(split);
        let n: u64 = number.trim().parse().map_err(|_| TriggerError::HitCount(text.to_string()))?;
        Ok(match op.trim() {
            "" | "=" | "==" => HitCondition::Eq(n),
            ">=" => HitCondition::Ge(n),
            ">" => HitCondition::Gt(n),
            "<" => HitCondition::Lt(n),
            "<=" => HitCondition::Le(n),
            "%" if n > 0 => HitCondition::Every(n),
            _ => return Err(TriggerError::HitCount(text.to_string())),
        })
    }

    fn stops_at(self, hits: u64) -> bool {
        match self {
            HitCondition::Eq(n) => hits == n,
            HitCondition::Ge(n) => hits >= n,
            HitCondition::Gt(n) => hits > n,
            HitCondition::Lt(n) => hits < n,
            HitCondition::Le(n) => hits <= n,
            HitCondition::Every(n) => hits.is_multiple_of(n),
        }
    }
}

/// What a breakpoint does when reached.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Stop,
    /// The condition failed to evaluate: stop and say why.
    StopFailed(String),
    Log(String),
    Skip,
}

/// The condition, hit count and log message of a breakpoint, and its hits.
#[derive(Debug, Clone)]
pub struct Trigger {
    condition: Option<Expression>,
    hit: Option<HitCondition>,
    log: Option<LogMessage>,
    hits: u64,
}

impl Trigger {
    pub fn new(condition: Option<&str>, hit: Option<&str>, log: Option<&str>) -> Result<Trigger, TriggerError> {
        Ok(Trigger {
            condition: present(condition).map(Expression::parse).transpose().map_err(TriggerError::Condition)?,
            hit: present(hit).map(HitCondition::parse).transpose()?,
            // A log message is kept as written (spaces matter).
            log: log.filter(|l| !l.is_empty()).map(LogMessage::parse).transpose().map_err(TriggerError::Log)?,
            hits: 0,
        })
    }

    /// Decides at a hit; hits count only when the condition holds.
    pub fn check(&mut self, vars: &Vars) -> Verdict {
        let mut failed = None;
        if let Some(condition) = &self.condition {
            match condition.eval(vars) {
                Ok(value) if sr_runtime::value::truthy(&value) => {}
                Ok(_) => return Verdict::Skip,
                Err(e) => failed = Some(e),
            }
        }
        self.hits += 1;
        if let Some(hit) = self.hit
            && !hit.stops_at(self.hits)
        {
            return Verdict::Skip;
        }
        match (failed, &self.log) {
            (Some(e), _) => Verdict::StopFailed(e.to_string()),
            (None, Some(log)) => Verdict::Log(log.render(vars)),
            (None, None) => Verdict::Stop,
        }
    }

    pub fn reset(&mut self) {
        self.hits = 0;
    }
}

/// A field the client sent, unless blank.
fn present(field: Option<&str>) -> Option<&str> {
    field.map(str::trim).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hit_conditions() {
        let stops = |text: &str| {
            let h = HitCondition::parse(text).unwrap();
            (1..=6).filter(|&n| h.stops_at(n)).collect::<Vec<_>>()
        };
        assert_eq!(stops("3"), vec![3]);
        assert_eq!(stops("== 3"), vec![3]);
        assert_eq!(stops(">=5"), vec![5, 6]);
        assert_eq!(stops("> 5"), vec![6]);
        assert_eq!(stops("<3"), vec![1, 2]);
        assert_eq!(stops("<= 2"), vec![1, 2]);
        assert_eq!(stops("% 2"), vec![2, 4, 6]);
        assert!(HitCondition::parse("% 0").is_err());
        assert!(HitCondition::parse("often").is_err());
        assert!(HitCondition::parse("!= 2").is_err());
    }

    #[test]
    fn hits_count_only_when_the_condition_holds() {
        let mut trigger = Trigger::new(Some("$n > 1"), Some("2"), None).unwrap();
        let at = |n: i64| -> Vars { [("n".to_string(), json!(n))].into_iter().collect() };
        assert_eq!(trigger.check(&at(1)), Verdict::Skip);
        assert_eq!(trigger.check(&at(2)), Verdict::Skip, "first hit");
        assert_eq!(trigger.check(&at(0)), Verdict::Skip);
        assert_eq!(trigger.check(&at(3)), Verdict::Stop, "second hit");
        assert_eq!(trigger.check(&at(4)), Verdict::Skip);
    }

    #[test]
    fn logpoints_log_and_failing_conditions_stop() {
        let vars: Vars = [("n".to_string(), json!(7))].into_iter().collect();
        assert_eq!(Trigger::new(None, None, Some("n is {$n}")).unwrap().check(&vars), Verdict::Log("n is 7".into()));
        assert_eq!(
            Trigger::new(Some("$gone"), None, None).unwrap().check(&vars),
            Verdict::StopFailed("variable '$gone' is not defined".into())
        );
        assert!(Trigger::new(Some("1 +"), None, None).unwrap_err().to_string().starts_with("condition: cannot read"));
        assert!(Trigger::new(Some("  "), Some(""), None).is_ok(), "empty fields mean none");
    }
}
