//! A model id reaches no path of a provider's host but its protocol's own:
//! hostile ids are refused before any request, by the router and by each
//! client, and Gemini's is one escaped path segment.

use std::sync::Arc;

use sr_llm::mock::{MockReply, MockServer};
use sr_llm::{Anthropic, Gemini, LlmError, MAX_MODEL_ID, OpenAi, Provider};

use crate::{Waits, ask, drain, endpoint, http, reply, router};

/// Every injection at the start, middle and end of a real id, and ids that are
/// hostile whole.
fn hostile_ids() -> Vec<String> {
    let injections = [
        "..", "../..", "/../", "/..", "?", "?key=x", "#", "#frag", "%2e%2e", "%2F", "%3F", " ", "\t", "\n", "\r\n",
        "\0", "\\", "\\..\\", ";", "&", "=", "@", "~", "+", "é", "\u{202e}", "\u{ff0f}",
    ];
    let base = "gemini-2.0-flash";
    let mut ids: Vec<String> = injections
        .iter()
        .flat_map(|bad| [format!("{bad}{base}"), format!("gemini-2.0{bad}-flash"), format!("{base}{bad}")])
        .collect();
    ids.extend(["".to_owned(), "..".to_owned(), "x/../../../v1/files".to_owned(), "m".repeat(MAX_MODEL_ID + 1)]);
    ids
}

#[tokio::test]
async fn hostile_model_ids_reach_no_provider() {
    let server = MockServer::start().await;
    let waits = Arc::new(Waits::default());
    let routed = router(&server, &waits);
    let clients: Vec<(&str, Box<dyn Provider>)> = vec![
        ("openai", Box::new(OpenAi::new(endpoint("openai", format!("{}/v1", server.url()), true), http(&waits)))),
        ("anthropic", Box::new(Anthropic::new(endpoint("anthropic", server.url(), true), http(&waits)))),
        ("gemini", Box::new(Gemini::new(endpoint("gemini", server.url(), true), http(&waits)))),
        ("gemini, not streamed", Box::new(Gemini::new(endpoint("gemini", server.url(), false), http(&waits)))),
    ];
    let ids = hostile_ids();
    for id in &ids {
        let mut asked: Vec<(String, &dyn Provider)> = ["openai", "anthropic", "gemini", "ollama"]
            .into_iter()
            .map(|prefix| (format!("{prefix}/{id}"), &routed as &dyn Provider))
            .collect();
        for (name, client) in &clients {
            asked.push((id.clone(), client.as_ref()));
            if name.starts_with("gemini") {
                // Gemini's clients take its `models/` prefix off first.
                asked.push((format!("models/{id}"), client.as_ref()));
            }
        }
        for (model, provider) in asked {
            let items = drain(provider.chat(ask(&model, "Hi"))).await;
            let [Err(LlmError::InvalidModel { problem, .. })] = &items[..] else { panic!("{model:?}: {items:?}") };
            assert!(!problem.is_empty());
        }
    }
    assert!(ids.len() > 80, "{} ids", ids.len());
    let paths: Vec<String> = server.requests().into_iter().map(|request| request.path).collect();
    assert!(paths.is_empty(), "requests reached {paths:?}");
}

#[tokio::test]
async fn ids_with_slashes_and_colons_stay_in_their_path_segment() {
    let server = MockServer::start().await;
    let waits = Arc::new(Waits::default());
    let routed = router(&server, &waits);
    let cases = [
        ("gemini/models/gemini-2.0-flash", "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse", None),
        ("gemini/tunedModels/t:x", "/v1beta/models/tunedModels%2Ft%3Ax:streamGenerateContent?alt=sse", None),
        ("openai/openrouter/x", "/v1/chat/completions", Some("openrouter/x")),
        ("openai/meta-llama/llama-3.1-8b:free", "/v1/chat/completions", Some("meta-llama/llama-3.1-8b:free")),
        ("ollama/llama3.2:3b", "/v1/chat/completions", Some("llama3.2:3b")),
        ("anthropic/claude.v2/x", "/v1/messages", Some("claude.v2/x")),
    ];
    for (model, _, _) in cases {
        server.push(MockReply::text("ok"));
        assert_eq!(reply(routed.chat(ask(model, "Hi"))).await.text, "ok", "{model}");
    }
    let requests = server.requests();
    assert_eq!(requests.len(), cases.len());
    for ((model, path, body_model), request) in cases.iter().zip(&requests) {
        assert_eq!(request.path, *path, "{model}");
        if let Some(body_model) = body_model {
            assert_eq!(request.body["model"], *body_model, "{model}");
        }
    }
}
