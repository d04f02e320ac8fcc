#![allow(clippy::unwrap_used)]
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sr_llm::mock::{MockReply, MockServer};
use sr_llm::{HttpClient, HttpOptions, LlmError, OpenAi, Provider, RetryPolicy};

use crate::{Waits, ask, endpoint, failure, options, reply, router};

#[tokio::test]
async fn a_429_storm_succeeds_after_retries() {
    let server = MockServer::start().await;
    for _ in 0..3 {
        server.push(MockReply::rate_limited("1"));
    }
    server.push(MockReply::text("finally").usage(3, 1));
    let waits = Arc::new(Waits::default());
    let response = reply(router(&server, &waits).chat(ask("openai/gpt-4o", "Hi"))).await;
    assert_eq!(response.text, "finally");
    assert_eq!(server.requests().len(), 4);
    assert_eq!(waits.taken(), vec![Duration::from_secs(1); 3], "Retry-After honoured");
}

#[tokio::test]
async fn retry_after_as_an_http_date() {
    let server = MockServer::start().await;
    let date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(3));
    server.push(MockReply::rate_limited(&date));
    server.push(MockReply::text("ok"));
    let waits = Arc::new(Waits::default());
    reply(router(&server, &waits).chat(ask("anthropic/claude-sonnet-4-5", "Hi"))).await;
    let [wait] = waits.taken()[..] else { panic!("{:?}", waits.taken()) };
    assert!(wait > Duration::from_secs(1) && wait <= Duration::from_secs(3), "{wait:?}");
}

#[tokio::test]
async fn server_errors_back_off_exponentially() {
    let server = MockServer::start().await;
    server.push(MockReply::error(503, "unavailable"));
    server.push(MockReply::error(500, "internal"));
    server.push(MockReply::text("ok"));
    let waits = Arc::new(Waits::default());
    reply(router(&server, &waits).chat(ask("gemini/gemini-2.5-flash", "Hi"))).await;
    let taken = waits.taken();
    assert_eq!(taken.len(), 2);
    let initial = RetryPolicy::default().initial_delay;
    assert!(taken[0] >= initial / 2 && taken[0] <= initial, "{taken:?}");
    assert!(taken[1] >= initial && taken[1] <= initial * 2, "{taken:?}");
}

#[tokio::test]
async fn retries_give_up_with_the_last_error() {
    let server = MockServer::start().await;
    for _ in 0..4 {
        server.push(MockReply::rate_limited("2"));
    }
    let waits = Arc::new(Waits::default());
    let err = failure(router(&server, &waits).chat(ask("openai/gpt-4o", "Hi"))).await;
    let LlmError::Api { status: Some(429), retry_after_ms: Some(2000), .. } = &err else { panic!("{err:?}") };
    assert_eq!(server.requests().len(), 4, "max_attempts");
    assert_eq!(waits.taken().len(), 3);
}

fn quick(waits: &Arc<Waits>, timeout: Duration, idle_timeout: Duration, max_attempts: u32) -> HttpClient {
    HttpClient::new(HttpOptions {
        timeout,
        idle_timeout,
        retry: RetryPolicy { max_attempts, ..RetryPolicy::default() },
        ..options(waits)
    })
    .unwrap()
}

#[tokio::test]
async fn a_slow_response_times_out_and_is_retried() {
    let server = MockServer::start().await;
    server.push(MockReply::text("late").delay(Duration::from_secs(3)));
    server.push(MockReply::text("late again").delay(Duration::from_secs(3)));
    let waits = Arc::new(Waits::default());
    let http = quick(&waits, Duration::from_millis(200), Duration::from_secs(10), 2);
    let provider = OpenAi::new(endpoint("openai", format!("{}/v1", server.url()), true), http);
    let started = std::time::Instant::now();
    let err = failure(provider.chat(ask("gpt-4o", "Hi"))).await;
    assert_eq!(err, LlmError::Timeout { provider: "openai".into(), after_ms: 200 });
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_silent_stream_times_out() {
    let server = MockServer::start().await;
    server.push(MockReply::chunks(["a", "b"]).chunk_delay(Duration::from_secs(3)));
    let waits = Arc::new(Waits::default());
    let http = quick(&waits, Duration::from_secs(10), Duration::from_millis(200), 1);
    let provider = OpenAi::new(endpoint("openai", format!("{}/v1", server.url()), true), http);
    let err = failure(provider.chat(ask("gpt-4o", "Hi"))).await;
    assert_eq!(err, LlmError::Timeout { provider: "openai".into(), after_ms: 200 });
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let waits = Arc::new(Waits::default());
    let provider = OpenAi::new(endpoint("ollama", format!("http://127.0.0.1:{port}/v1"), true), crate::http(&waits));
    let err = failure(provider.chat(ask("llama3", "Hi"))).await;
    let LlmError::Transport { provider, message } = &err else { panic!("{err:?}") };
    assert_eq!(provider, "ollama");
    assert!(message.contains("127.0.0.1"), "{message}");
    assert_eq!(waits.taken().len(), 3);
}
