use std::sync::Arc;

use sr_llm::mock::{MOCK_KEY, MockReply, MockServer};
use sr_llm::{LlmError, Provider, Router};

use crate::{Waits, ask, drain, failure, http, reply, router};

#[tokio::test]
async fn a_missing_key_fails_before_any_request() {
    let server = MockServer::start().await;
    let waits = Arc::new(Waits::default());
    let url = server.url();
    // The base URL points at the server, but there is no key.
    let router = Router::from_vars(http(&waits), move |name| (name == "OPENAI_BASE_URL").then(|| format!("{url}/v1")));
    let events = drain(router.chat(ask("openai/gpt-4o", "Hi"))).await;
    let [Err(err)] = &events[..] else { panic!("{events:?}") };
    assert_eq!(
        *err,
        LlmError::MissingEnv {
            provider: "openai".into(),
            what: "API key".into(),
            variables: vec!["OPENAI_API_KEY".into()],
        }
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn each_prefix_reaches_its_protocol() {
    let server = MockServer::start().await;
    let waits = Arc::new(Waits::default());
    let router = router(&server, &waits);
    let cases = [
        ("openai/gpt-4o", "/v1/chat/completions"),
        ("anthropic/claude-sonnet-4-5", "/v1/messages"),
        ("gemini/gemini-2.5-flash", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
        ("ollama/llama3.2:3b", "/v1/chat/completions"),
    ];
    for (model, _) in cases {
        server.push(MockReply::text(format!("hello from {model}")));
        let response = reply(router.chat(ask(model, "Hi"))).await;
        assert_eq!(response.text, format!("hello from {model}"));
    }
    let requests = server.requests();
    for ((model, path), request) in cases.iter().zip(&requests) {
        assert_eq!(request.path, *path, "{model}");
    }
    assert_eq!(requests[0].body["model"], "gpt-4o");
    assert_eq!(requests[1].body["model"], "claude-sonnet-4-5");
    assert_eq!(requests[3].body["model"], "llama3.2:3b");
    assert_eq!(requests[3].header("authorization"), None, "ollama needs no key");
}

#[tokio::test]
async fn keys_quoted_back_by_a_server_are_redacted() {
    let server = MockServer::start().await;
    server.push(MockReply::error(401, format!("Incorrect API key provided: {MOCK_KEY}.")));
    let waits = Arc::new(Waits::default());
    let err = failure(router(&server, &waits).chat(ask("openai/gpt-4o", "Hi"))).await;
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains(MOCK_KEY), "{shown}");
    assert!(shown.contains("Incorrect API key provided: [redacted]."), "{shown}");
}

#[tokio::test]
async fn an_unscripted_request_fails_clearly() {
    let server = MockServer::start().await;
    let waits = Arc::new(Waits::default());
    let err = failure(router(&server, &waits).chat(ask("openai/gpt-4o", "Hi"))).await;
    assert!(err.to_string().contains("no scripted reply left for POST /v1/chat/completions"), "{err}");
}
