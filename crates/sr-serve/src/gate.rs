//! The checks every request passes before a route sees it, so that a web
//! page of another origin cannot drive the server through the user's
//! browser: on a loopback bind the `Host` must name this server (a
//! DNS-rebound name reads nothing: 421); a request that changes state
//! (any method but `GET`, `HEAD` and `OPTIONS`) must come from no origin,
//! the server's own or a `--cors-origin` (403), and carry a JSON body
//! (`Content-Type: application/json`, 415), which no form and no
//! preflight-free `fetch` can send.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Who may call: the `Host` values and origins this server answers.
pub struct Gate {
    /// `None`: any `Host` (a non-loopback bind, whose clients hold keys).
    hosts: Option<Vec<String>>,
    /// Origins a state-changing request may come from (lower case).
    origins: Vec<String>,
    /// The `--cors-origin`s among them.
    cors: Vec<String>,
}

/// `--public-url`: where clients reach the server (behind a proxy).
pub struct PublicUrl {
    /// `https://host:port`, lower case, no path.
    pub origin: String,
    /// `host:port` as a `Host` header gives it (the port only when the URL has one).
    pub host: String,
    /// The whole URL without its trailing `/`: the base of the agent cards' endpoints.
    pub base: String,
}

impl PublicUrl {
    /// An absolute `http` or `https` URL without query or fragment.
    pub fn parse(text: &str) -> Result<PublicUrl, String> {
        let bad = |why: &str| format!("--public-url {text:?}: {why}");
        let uri: Uri = text.parse().map_err(|_| bad("not a URL"))?;
        let scheme = uri.scheme_str().map(str::to_ascii_lowercase).ok_or_else(|| bad("give http:// or https://"))?;
        if scheme != "http" && scheme != "https" {
            return Err(bad("give http:// or https://"));
        }
        let authority = uri.authority().ok_or_else(|| bad("names no host"))?;
        if authority.as_str().contains('@') {
            return Err(bad("a user name has no place in it"));
        }
        if uri.query().is_some() || text.contains('#') {
            return Err(bad("a query or fragment has no place in it"));
        }
        let host = authority.as_str().to_ascii_lowercase();
        let base = format!("{scheme}://{host}{}", uri.path().trim_end_matches('/'));
        Ok(PublicUrl { origin: format!("{scheme}://{host}"), host, base })
    }
}

/// An origin as `--cors-origin` takes it: `scheme://host[:port]`, lower case.
pub fn cors_origin(text: &str) -> Result<String, String> {
    if text.trim() == "*" {
        return Err("--cors-origin '*' is refused: any web page could then drive the server with its \
                    user's browser; name each origin (e.g. --cors-origin https://app.example.com)"
            .to_string());
    }
    let url = PublicUrl::parse(text).map_err(|_| {
        format!("--cors-origin {text:?} is not an origin: give scheme://host[:port], e.g. https://app.example.com")
    })?;
    if url.base != url.origin {
        return Err(format!("--cors-origin {text:?}: an origin has no path"));
    }
    Ok(url.origin)
}

impl Gate {
    /// The gate of a server listening on `addr`: on loopback it answers only
    /// the loopback names with its port, its address, and `public`'s host.
    pub fn new(addr: SocketAddr, public: Option<&PublicUrl>, cors: &[String]) -> Gate {
        let port = addr.port();
        let mut hosts: Vec<String> =
            ["localhost", "127.0.0.1", "[::1]"].iter().map(|name| format!("{name}:{port}")).collect();
        hosts.push(addr.to_string());
        if port == 80 {
            hosts.extend(["localhost", "127.0.0.1", "[::1]"].map(str::to_string));
        }
        let mut origins: Vec<String> = hosts.iter().map(|host| format!("http://{host}")).collect();
        if let Some(public) = public {
            hosts.push(public.host.clone());
            origins.push(public.origin.clone());
        }
        origins.extend(cors.iter().cloned());
        Gate { hosts: addr.ip().is_loopback().then_some(hosts), origins, cors: cors.to_vec() }
    }

    /// The origins CORS allows.
    pub fn cors_origins(&self) -> &[String] {
        &self.cors
    }

    /// Why `request` is refused, if it is.
    fn refusal(&self, method: &Method, headers: &HeaderMap) -> Option<ApiError> {
        if let Some(hosts) = &self.hosts
            && let Some(host) = headers.get(header::HOST)
            && !host.to_str().is_ok_and(|host| hosts.iter().any(|h| h.eq_ignore_ascii_case(host)))
        {
            return Some(ApiError::new(
                StatusCode::MISDIRECTED_REQUEST,
                "unknown_host",
                "Host: this server answers only its own names (localhost, its address, --public-url)",
            ));
        }
        if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
            return None;
        }
        if let Some(origin) = headers.get(header::ORIGIN)
            && !origin.to_str().is_ok_and(|origin| self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin)))
        {
            return Some(ApiError::new(
                StatusCode::FORBIDDEN,
                "origin_refused",
                "Origin: a web page of another origin cannot change this server's state (see --cors-origin)",
            ));
        }
        if !is_json(headers) {
            return Some(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "Content-Type: send the body as application/json",
            ));
        }
        None
    }
}

/// Whether the body is declared JSON (`application/json`, any parameters).
fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else { return false };
    let media = value.split(';').next().unwrap_or("").trim();
    media.eq_ignore_ascii_case("application/json")
}

/// The middleware in front of every route.
pub async fn check(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    match gate.refusal(request.method(), request.headers()) {
        Some(refusal) => {
            tracing::warn!(code = refusal.code, "request refused");
            refusal.into_response()
        }
        None => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(header::HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    /// A request's method and headers, and the status of its refusal (0: none).
    type Case = (Method, &'static [(&'static str, &'static str)], u16);

    #[test]
    fn hosts_origins_and_content_types_are_checked_as_the_table_says() {
        let public = PublicUrl::parse("https://Agents.Example.com/sr/").unwrap();
        assert_eq!(
            (public.origin.as_str(), public.base.as_str()),
            ("https://agents.example.com", "https://agents.example.com/sr")
        );
        let cors = vec![cors_origin("http://localhost:5173").unwrap()];
        let gate = Gate::new("127.0.0.1:8787".parse().unwrap(), Some(&public), &cors);
        // (method, headers, the status of the refusal or 0 for none)
        let table: [Case; 16] = [
            (Method::GET, &[("host", "127.0.0.1:8787")], 0),
            (Method::GET, &[("host", "LOCALHOST:8787")], 0),
            (Method::GET, &[("host", "[::1]:8787")], 0),
            (Method::GET, &[("host", "agents.example.com")], 0),
            (Method::GET, &[], 0),
            (Method::GET, &[("host", "rebind.test:8787")], 421),
            (Method::GET, &[("host", "localhost:8788")], 421),
            (Method::GET, &[("host", "localhost")], 421),
            (Method::POST, &[("host", "localhost:8787"), ("content-type", "application/json")], 0),
            (
                Method::POST,
                &[("content-type", "Application/JSON; charset=utf-8"), ("origin", "http://localhost:8787")],
                0,
            ),
            (Method::POST, &[("content-type", "application/json"), ("origin", "http://localhost:5173")], 0),
            (Method::POST, &[("content-type", "application/json"), ("origin", "https://agents.example.com")], 0),
            (Method::POST, &[("content-type", "application/json"), ("origin", "http://evil.test")], 403),
            (Method::POST, &[("content-type", "application/json"), ("origin", "null")], 403),
            (Method::POST, &[("content-type", "text/plain")], 415),
            (Method::POST, &[], 415),
        ];
        for (method, pairs, status) in table {
            let got = gate.refusal(&method, &headers(pairs)).map_or(0, |e| e.status.as_u16());
            assert_eq!(got, status, "{method} {pairs:?}");
        }
        // A non-loopback bind (whose clients hold keys) answers any Host, and still checks origins.
        let open = Gate::new("0.0.0.0:8787".parse().unwrap(), None, &[]);
        assert!(open.refusal(&Method::GET, &headers(&[("host", "sr.internal:8787")])).is_none());
        let post = headers(&[("content-type", "application/json"), ("origin", "http://evil.test")]);
        assert_eq!(open.refusal(&Method::POST, &post).map(|e| e.status.as_u16()), Some(403));
    }

    #[test]
    fn a_wildcard_or_a_malformed_origin_is_a_start_error() {
        assert!(cors_origin("*").unwrap_err().contains("name each origin"));
        assert!(cors_origin("localhost:5173").is_err());
        assert!(cors_origin("http://localhost:5173/app").is_err());
        assert!(PublicUrl::parse("ftp://x").is_err());
        assert!(PublicUrl::parse("https://x/?q=1").is_err());
        assert_eq!(cors_origin("HTTP://LocalHost:5173").unwrap(), "http://localhost:5173");
    }
}
