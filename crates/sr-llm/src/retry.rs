//! Retries with capped exponential backoff and jitter, honouring `Retry-After`.
//!
//! A retry replays the whole request, so it is only allowed while nothing has
//! reached the consumer: once a delta was delivered, a failure is reported and
//! the caller decides (it may have shown the partial text already).

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use futures::stream::{self, StreamExt};
use reqwest::header::HeaderMap;

use crate::{ChatEvent, ChatStream, LlmError};

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included; 1 disables retries.
    pub max_attempts: u32,
    /// Backoff before the first retry; doubled (by `multiplier`) each time.
    pub initial_delay: Duration,
    pub multiplier: f64,
    /// Cap of the computed backoff.
    pub max_delay: Duration,
    /// A server asking to wait longer than this is not retried: its error is returned.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 5,
            initial_delay: Duration::from_millis(500),
            multiplier: 2.0,
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    pub fn no_retries() -> RetryPolicy {
        RetryPolicy { max_attempts: 1, ..RetryPolicy::default() }
    }

    /// The wait before the next attempt after `failed` failed attempts, or `None`
    /// to give up. `jitter` in `[0, 1]` spreads the backoff over its upper half.
    pub fn delay(&self, failed: u32, retry_after: Option<Duration>, jitter: f64) -> Option<Duration> {
        if failed >= self.max_attempts {
            return None;
        }
        if let Some(wait) = retry_after {
            return (wait <= self.max_retry_after).then_some(wait);
        }
        let exponent = failed.saturating_sub(1).min(64) as i32;
        let backoff = self.initial_delay.as_secs_f64() * self.multiplier.powi(exponent);
        let capped = backoff.min(self.max_delay.as_secs_f64());
        // A nonsensical policy (a negative multiplier) must not panic: it waits the cap.
        Some(Duration::try_from_secs_f64(capped * (0.5 + 0.5 * jitter.clamp(0.0, 1.0))).unwrap_or(self.max_delay))
    }
}

/// Waits between attempts; injectable so tests neither sleep nor guess.
pub trait Sleeper: Send + Sync {
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
}

/// The real sleeper.
#[derive(Debug, Default)]
pub struct TokioSleeper;

impl Sleeper for TokioSleeper {
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// The wait a response asks for: `retry-after-ms` (OpenAI), else `Retry-After`
/// in seconds or as an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok()).map(str::trim);
    if let Some(ms) = header("retry-after-ms").and_then(|ms| ms.parse::<f64>().ok()) {
        return duration_from_secs(ms / 1000.0);
    }
    parse_retry_after(header("retry-after")?, now)
}

pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    if let Ok(secs) = value.parse::<f64>() {
        return duration_from_secs(secs);
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

fn duration_from_secs(secs: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(secs).ok()
}

fn jitter() -> f64 {
    (RandomState::new().hash_one(SystemTime::now()) >> 11) as f64 / (1u64 << 53) as f64
}

/// Runs `attempt` until it yields a stream that ends well, retrying retryable
/// failures that happen before the first event reaches the consumer.
pub(crate) fn with_retries<F, Fut>(policy: RetryPolicy, sleeper: Arc<dyn Sleeper>, attempt: F) -> ChatStream
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: Future<Output = Result<ChatStream, LlmError>> + Send + 'static,
{
    let state = Retrying {
        policy,
        sleeper,
        attempt,
        current: None,
        failed: 0,
        delivered: false,
        done: false,
        pending_sleep: None,
    };
    stream::unfold(state, |mut state| async move {
        loop {
            if state.done {
                return None;
            }
            if let Some(delay) = state.pending_sleep.take() {
                state.sleeper.sleep(delay).await;
            }
            let err = match state.current.as_mut() {
                None => match (state.attempt)().await {
                    Ok(stream) => {
                        state.current = Some(stream);
                        continue;
                    }
                    Err(err) => err,
                },
                Some(stream) => match stream.next().await {
                    Some(Ok(event)) => {
                        state.delivered = true;
                        return Some((Ok(event), state));
                    }
                    Some(Err(err)) => {
                        state.current = None;
                        err
                    }
                    None => return None,
                },
            };
            state.failed += 1;
            let delay = match !state.delivered && err.is_retryable() {
                true => state.policy.delay(state.failed, err.retry_after(), jitter()),
                false => None,
            };
            match delay {
                Some(delay) => {
                    // Said before the wait, so that a consumer can show why it waits.
                    let retrying = ChatEvent::Retrying {
                        attempt: state.failed,
                        error: err.to_string(),
                        delay_ms: delay.as_millis() as u64,
                    };
                    state.pending_sleep = Some(delay);
                    return Some((Ok(retrying), state));
                }
                None => {
                    state.done = true;
                    return Some((Err(err), state));
                }
            }
        }
    })
    .boxed()
}

struct Retrying<F> {
    policy: RetryPolicy,
    sleeper: Arc<dyn Sleeper>,
    attempt: F,
    current: Option<ChatStream>,
    /// The backoff to wait before the next attempt, once `Retrying` was yielded.
    pending_sleep: Option<Duration>,
    failed: u32,
    delivered: bool,
    done: bool,
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;
    use crate::{ChatEvent, FinishReason};

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 4,
            initial_delay: Duration::from_millis(100),
            multiplier: 2.0,
            max_delay: Duration::from_millis(300),
            max_retry_after: Duration::from_secs(10),
        }
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = policy();
        assert_eq!(p.delay(1, None, 1.0), Some(Duration::from_millis(100)));
        assert_eq!(p.delay(2, None, 1.0), Some(Duration::from_millis(200)));
        assert_eq!(p.delay(3, None, 1.0), Some(Duration::from_millis(300)));
        assert_eq!(p.delay(2, None, 0.0), Some(Duration::from_millis(100)));
        assert_eq!(p.delay(4, None, 1.0), None, "attempts exhausted");
        let odd = RetryPolicy { multiplier: -3.0, ..policy() };
        assert_eq!(odd.delay(2, None, 1.0), Some(odd.max_delay));
    }

    #[test]
    fn retry_after_wins_unless_too_long() {
        let p = policy();
        assert_eq!(p.delay(1, Some(Duration::from_secs(7)), 0.3), Some(Duration::from_secs(7)));
        assert_eq!(p.delay(1, Some(Duration::from_secs(11)), 0.3), None);
    }

    #[test]
    fn retry_after_parses_seconds_and_dates() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("0.25", now), Some(Duration::from_millis(250)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:05 GMT", now), Some(Duration::from_secs(5)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("soon", now), None);

        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "9".parse().unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(9)));
        headers.insert("retry-after-ms", "1500".parse().unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::from_millis(1500)));
    }

    #[test]
    fn jitter_is_a_fraction() {
        for _ in 0..100 {
            assert!((0.0..1.0).contains(&jitter()));
        }
    }

    #[derive(Default)]
    struct Recorded(Mutex<Vec<Duration>>);

    impl Sleeper for Recorded {
        fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
            self.0.lock().unwrap().push(duration);
            Box::pin(async {})
        }
    }

    fn overloaded() -> LlmError {
        LlmError::Api {
            provider: "p".into(),
            status: Some(503),
            code: None,
            message: "busy".into(),
            retry_after_ms: Some(20),
        }
    }

    fn finished() -> ChatEvent {
        ChatEvent::Finished { reason: FinishReason::Stop }
    }

    fn retrying(attempt: u32) -> ChatEvent {
        ChatEvent::Retrying { attempt, error: overloaded().to_string(), delay_ms: 20 }
    }

    #[tokio::test]
    async fn failures_before_output_are_retried() {
        let sleeper = Arc::new(Recorded::default());
        let calls = Arc::new(AtomicU32::new(0));
        let counter = calls.clone();
        let stream = with_retries(policy(), sleeper.clone(), move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            async move {
                match n {
                    0 => Err(overloaded()),
                    // Fails inside the stream, but before any event.
                    1 => Ok(stream::iter([Err(overloaded())]).boxed()),
                    _ => Ok(stream::iter([Ok(finished())]).boxed()),
                }
            }
        });
        let events: Vec<_> = stream.collect().await;
        // Each retry is announced before its wait.
        let retrying = |attempt| Ok(retrying(attempt));
        assert_eq!(events, vec![retrying(1), retrying(2), Ok(finished())]);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(*sleeper.0.lock().unwrap(), vec![Duration::from_millis(20); 2]);
    }

    #[tokio::test]
    async fn failures_after_output_are_not_retried() {
        let sleeper = Arc::new(Recorded::default());
        let calls = Arc::new(AtomicU32::new(0));
        let counter = calls.clone();
        let stream = with_retries(policy(), sleeper.clone(), move || {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Ok(stream::iter([Ok(ChatEvent::TextDelta("partial".into())), Err(overloaded())]).boxed()) }
        });
        let events: Vec<_> = stream.collect().await;
        assert_eq!(events, vec![Ok(ChatEvent::TextDelta("partial".into())), Err(overloaded())]);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(sleeper.0.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn attempts_are_limited_and_the_last_error_returned() {
        let sleeper = Arc::new(Recorded::default());
        let calls = Arc::new(AtomicU32::new(0));
        let counter = calls.clone();
        let stream = with_retries(policy(), sleeper.clone(), move || {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Err(overloaded()) }
        });
        let events: Vec<_> = stream.collect().await;
        assert_eq!(events, vec![Ok(retrying(1)), Ok(retrying(2)), Ok(retrying(3)), Err(overloaded())]);
        assert_eq!(calls.load(Ordering::SeqCst), 4);
        assert_eq!(sleeper.0.lock().unwrap().len(), 3);
    }

    #[tokio::test]
    async fn permanent_errors_are_not_retried() {
        let calls = Arc::new(AtomicU32::new(0));
        let counter = calls.clone();
        let unauthorized = LlmError::Api {
            provider: "p".into(),
            status: Some(401),
            code: None,
            message: "bad key".into(),
            retry_after_ms: None,
        };
        let err = unauthorized.clone();
        let stream = with_retries(policy(), Arc::new(Recorded::default()), move || {
            counter.fetch_add(1, Ordering::SeqCst);
            let err = err.clone();
            async move { Err(err) }
        });
        let events: Vec<_> = stream.collect().await;
        assert_eq!(events, vec![Err(unauthorized)]);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
