//! The studio, `sr serve`'s web UI: the app that `studio/` builds (Vite, Svelte,
//! TypeScript) is committed in `assets/` and embedded here, so building `sr` needs no
//! Node; `cargo xtask studio-check` rebuilds it and fails when the result differs.
//!
//! [`router`] serves the app at `/`: its files by name, and `index.html` for every
//! other `GET` (the app's own addresses, such as `/runs/ID`), except under `/v1/`, which
//! is the API's (a JSON 404 there), and except names with an extension (a plain 404).
//! Every response carries [`CSP`]: scripts, styles and requests from this origin only,
//! nothing inline, no frames.

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// The content security policy of every response: the app's script and style sheet come
/// from this origin, it talks only to this origin, and nothing inline runs.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                       connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; \
                       form-action 'self'; frame-ancestors 'none'";

/// One built file: where it is served and what it is.
#[derive(Debug, Clone, Copy)]
pub struct Asset {
    pub path: &'static str,
    pub content_type: &'static str,
    pub bytes: &'static [u8],
}

/// Every file of `assets/` (a test checks that the list and the directory agree).
pub const ASSETS: &[Asset] = &[
    Asset {
        path: "/index.html",
        content_type: "text/html; charset=utf-8",
        bytes: include_bytes!("../assets/index.html"),
    },
    Asset {
        path: "/app.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../assets/app.js"),
    },
    Asset { path: "/app.css", content_type: "text/css; charset=utf-8", bytes: include_bytes!("../assets/app.css") },
    Asset { path: "/favicon.svg", content_type: "image/svg+xml", bytes: include_bytes!("../assets/favicon.svg") },
];

const INDEX: Asset = ASSETS[0];

/// The studio's routes, to merge into a router that has no fallback of its own
/// (`api.merge(sr_studio::router())`): the API's routes win, the studio answers the rest.
pub fn router() -> Router {
    let mut router = Router::new().route("/", get(|headers: HeaderMap| async move { serve(INDEX, &headers) }));
    for asset in ASSETS {
        router = router.route(asset.path, get(move |headers: HeaderMap| async move { serve(*asset, &headers) }));
    }
    router.fallback(fallback)
}

async fn fallback(method: Method, uri: Uri, headers: HeaderMap) -> Response {
    let path = uri.path();
    if path == "/v1" || path.starts_with("/v1/") {
        let message = format!("no API route {method} {path}");
        let body = serde_json::json!({"error": {"code": "not_found", "message": message}});
        return secured(StatusCode::NOT_FOUND, "application/json", Body::from(body.to_string()));
    }
    if method != Method::GET && method != Method::HEAD {
        let mut response =
            secured(StatusCode::METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", Body::from("method not allowed\n"));
        response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    // A missing file (`/app-old.js`) is a 404, not the app in its place.
    if path.rsplit('/').next().is_some_and(|last| last.contains('.')) {
        return secured(StatusCode::NOT_FOUND, "text/plain; charset=utf-8", Body::from("not found\n"));
    }
    let mut response = serve(INDEX, &headers);
    if method == Method::HEAD {
        *response.body_mut() = Body::empty();
    }
    response
}

/// `asset`, or 304 when the client holds this build of it already. File names carry no
/// hash, so every response is revalidated (`no-cache`) against the content's ETag.
fn serve(asset: Asset, headers: &HeaderMap) -> Response {
    let tag = etag(asset.bytes);
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag || t.trim() == "*"));
    let mut response = if fresh {
        secured(StatusCode::NOT_MODIFIED, asset.content_type, Body::empty())
    } else {
        secured(StatusCode::OK, asset.content_type, Body::from(asset.bytes))
    };
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(value) = HeaderValue::from_str(&tag) {
        headers.insert(header::ETAG, value);
    }
    response
}

fn secured(status: StatusCode, content_type: &'static str, body: Body) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    response
}

/// A strong ETag of `bytes` (64-bit FNV-1a: this names a build, it guards no secret).
fn etag(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3));
    format!("\"{hash:016x}\"")
}
