//! The studio's router: every built file, the app's own addresses, the API's space and
//! hostile paths, each with the security headers.
// Test helpers outside `#[test]` functions unwrap too.
#![allow(clippy::unwrap_used)]

use axum::body::{Body, to_bytes};
use axum::http::{Method, Request, StatusCode, header};
use sr_studio::{ASSETS, CSP, router};
use tower::ServiceExt;

struct Answer {
    status: StatusCode,
    content_type: String,
    csp: String,
    body: Vec<u8>,
    etag: Option<String>,
}

async fn ask(method: Method, uri: &str, if_none_match: Option<&str>) -> Answer {
    let mut request = Request::builder().method(method).uri(uri);
    if let Some(tag) = if_none_match {
        request = request.header(header::IF_NONE_MATCH, tag);
    }
    let response = router().oneshot(request.body(Body::empty()).unwrap()).await.unwrap();
    let headers = response.headers().clone();
    let text = |name| headers.get(name).map(|v: &axum::http::HeaderValue| v.to_str().unwrap().to_string());
    assert_eq!(text(header::X_CONTENT_TYPE_OPTIONS).as_deref(), Some("nosniff"), "{uri}");
    Answer {
        status: response.status(),
        content_type: text(header::CONTENT_TYPE).unwrap_or_default(),
        csp: text(header::CONTENT_SECURITY_POLICY).unwrap_or_default(),
        etag: text(header::ETAG),
        body: to_bytes(response.into_body(), 1 << 24).await.unwrap().to_vec(),
    }
}

fn index() -> &'static [u8] {
    ASSETS.iter().find(|a| a.path == "/index.html").unwrap().bytes
}

#[test]
fn the_table_lists_every_built_file() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let mut on_disk: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| format!("/{}", e.unwrap().file_name().to_string_lossy())).collect();
    on_disk.sort();
    let mut listed: Vec<String> = ASSETS.iter().map(|a| a.path.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "assets/ and sr_studio::ASSETS differ: add the new file to the table");
}

#[test]
fn the_page_runs_no_inline_code_and_links_its_favicon() {
    let html = String::from_utf8(index().to_vec()).unwrap();
    for (i, _) in html.match_indices("<script") {
        let tag = &html[i..i + html[i..].find('>').unwrap()];
        assert!(tag.contains("src=\"/"), "an inline or foreign script: {tag}");
        let close = &html[i + tag.len() + 1..];
        assert!(close.starts_with("</script>"), "a script with a body: {tag}");
    }
    assert!(!html.contains("<style"), "inline style sheet");
    assert!(!html.contains(" style="), "inline style attribute");
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("//cdn"), "a foreign origin");
    assert!(html.contains(r#"<link rel="icon" type="image/svg+xml" href="/favicon.svg""#));
    assert!(CSP.contains("script-src 'self'") && !CSP.contains("unsafe"), "{CSP}");
}

#[tokio::test]
async fn every_file_is_served_with_its_type_and_the_csp() {
    for asset in ASSETS {
        let answer = ask(Method::GET, asset.path, None).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", asset.path);
        assert_eq!(answer.body, asset.bytes, "{}", asset.path);
        assert_eq!(answer.content_type, asset.content_type, "{}", asset.path);
        assert_eq!(answer.csp, CSP, "{}", asset.path);
        // The client's copy is revalidated, not sent again.
        let etag = answer.etag.unwrap();
        let again = ask(Method::GET, asset.path, Some(&etag)).await;
        assert_eq!(again.status, StatusCode::NOT_MODIFIED, "{}", asset.path);
        assert!(again.body.is_empty());
        let stale = ask(Method::GET, asset.path, Some("\"0\"")).await;
        assert_eq!(stale.status, StatusCode::OK, "{}", asset.path);
    }
    let root = ask(Method::GET, "/", None).await;
    assert_eq!((root.status, root.body.as_slice()), (StatusCode::OK, index()));
}

#[tokio::test]
async fn the_apps_addresses_are_the_app() {
    for path in
        ["/runs", "/runs/r-1", "/runs/r%2F1", "/sessions/s-1", "/workloads", "/evals", "/a/b/c/d", "/runs/x?tab=events"]
    {
        let answer = ask(Method::GET, path, None).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        assert_eq!(answer.body, index(), "{path}");
        assert_eq!(answer.content_type, "text/html; charset=utf-8", "{path}");
        assert_eq!(answer.csp, CSP, "{path}");
    }
    let head = ask(Method::HEAD, "/runs/r-1", None).await;
    assert_eq!(head.status, StatusCode::OK);
    assert!(head.body.is_empty());
}

#[tokio::test]
async fn the_api_space_answers_json_errors() {
    for (method, path) in [(Method::GET, "/v1/nothing"), (Method::POST, "/v1/runs/x/fork"), (Method::GET, "/v1")] {
        let answer = ask(method.clone(), path, None).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(answer.content_type, "application/json");
        let json: serde_json::Value = serde_json::from_slice(&answer.body).unwrap();
        assert_eq!(json["error"]["code"], "not_found");
        assert_eq!(json["error"]["message"], format!("no API route {method} {path}"));
    }
}

/// Hostile paths made from the table: each file's name bent (suffixes, traversal,
/// encodings, doubled slashes, long names) and every method. None is a server error; a
/// path is answered with a listed file, the app, or a 4xx, and never with another file.
#[tokio::test]
async fn hostile_paths_get_a_file_the_app_or_a_client_error() {
    let bends: [&dyn Fn(&str) -> String; 9] = [
        &|p| format!("{p}.map"),
        &|p| format!("/..{p}"),
        &|p| format!("/%2e%2e{p}"),
        &|p| format!("/..%2f..%2f{}", &p[1..]),
        &|p| format!("/{p}"),
        &|p| format!("{p}/"),
        &|p| format!("{p}%00"),
        &|p| format!("/runs/{}", "x".repeat(10_000)) + p,
        &|p| p.to_uppercase(),
    ];
    let allowed: Vec<&[u8]> = ASSETS.iter().map(|a| a.bytes).collect();
    for asset in ASSETS {
        for bend in bends {
            let path = bend(asset.path);
            for method in [Method::GET, Method::HEAD, Method::POST, Method::DELETE] {
                let answer = ask(method.clone(), &path, None).await;
                assert!(!answer.status.is_server_error(), "{method} {path}: {}", answer.status);
                assert_eq!(answer.csp, CSP, "{method} {path}");
                if answer.status.is_success() {
                    assert!(
                        answer.body.is_empty() || allowed.contains(&answer.body.as_slice()),
                        "{method} {path} served something that is not a built file"
                    );
                } else {
                    assert!(answer.status.is_client_error(), "{method} {path}: {}", answer.status);
                }
            }
        }
    }
}
