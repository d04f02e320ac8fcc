//! Where a definition's server is and how to authenticate to it (the syntax
//! is documented on the crate).

use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue};

use crate::error::DefinitionError;
use crate::secret::Secrets;
use crate::vars::substitute;
use crate::{AuthKind, Definition};

/// One server to connect to, secrets resolved.
#[derive(Debug)]
pub(crate) struct Server {
    /// The name of the `tool` definition.
    pub(crate) name: String,
    /// The URL as written, for messages.
    pub(crate) url: String,
    pub(crate) target: Target,
    pub(crate) secrets: Secrets,
}

pub(crate) enum Target {
    Stdio { program: String, args: Vec<String>, env: Vec<(String, String)> },
    StreamableHttp { url: String, headers: Vec<(HeaderName, HeaderValue)> },
    Sse { url: String, headers: Vec<(HeaderName, HeaderValue)> },
}

/// Names only: values may be secrets.
impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Stdio { program, args, env } => f
                .debug_struct("Stdio")
                .field("program", program)
                .field("args", args)
                .field("env", &env.iter().map(|(name, _)| name).collect::<Vec<_>>())
                .finish(),
            Target::StreamableHttp { url, headers } | Target::Sse { url, headers } => f
                .debug_struct(if matches!(self, Target::Sse { .. }) { "Sse" } else { "StreamableHttp" })
                .field("url", url)
                .field("headers", &headers.iter().map(|(name, _)| name).collect::<Vec<_>>())
                .finish(),
        }
    }
}

impl Server {
    /// Reads the definition `name`; `lookup` reads the environment.
    pub(crate) fn resolve(
        name: &str,
        definition: &Definition,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Server, DefinitionError> {
        let Definition { url, auth, options } = definition;
        let secrets = std::cell::RefCell::new(Secrets::default());
        // Each variable's value is a secret on its own: a server may echo the
        // bare token of `Bearer ${env:T}`.
        let recording = |name: &str| {
            let value = lookup(name);
            if let Some(value) = &value {
                secrets.borrow_mut().add(name, value);
            }
            value
        };
        let resolve = |what: &str, value: &str| {
            substitute(value, recording)
                .map_err(|missing| DefinitionError::MissingVar { var: missing.0, what: what.to_string() })
        };
        let auth = auth
            .as_ref()
            .map(|auth| {
                let scheme = match auth.kind {
                    AuthKind::Bearer => "Bearer",
                    AuthKind::Basic => "Basic",
                };
                resolve("its auth", &auth.value).map(|value| (scheme, value))
            })
            .transpose()?;
        let options = options
            .iter()
            .map(|(key, value)| Ok((key.clone(), resolve(&format!("option '{key}'"), value)?)))
            .collect::<Result<Vec<_>, DefinitionError>>()?;

        let target = if let Some(command) = url.strip_prefix("stdio:") {
            if auth.is_some() {
                return Err(DefinitionError::AuthOnStdio);
            }
            let mut words = shlex::split(command).ok_or(DefinitionError::UnclosedQuote)?.into_iter();
            let program = words.next().ok_or(DefinitionError::EmptyCommand)?;
            Target::Stdio { program, args: words.collect(), env: options }
        } else if url.starts_with("http://") || url.starts_with("https://") {
            let mut headers = Vec::new();
            if let Some((scheme, value)) = auth {
                headers.push((AUTHORIZATION, header_value(&format!("{scheme} {value}"), "the auth value")?));
            }
            for (key, value) in &options {
                let name =
                    HeaderName::from_bytes(key.as_bytes()).map_err(|_| DefinitionError::HeaderName(key.clone()))?;
                headers.push((name, header_value(value, &format!("option '{key}'"))?));
            }
            let url = url.clone();
            if url.to_lowercase().contains("/sse") {
                Target::Sse { url, headers }
            } else {
                Target::StreamableHttp { url, headers }
            }
        } else {
            return Err(DefinitionError::Scheme);
        };
        Ok(Server { name: name.to_string(), url: url.clone(), target, secrets: secrets.into_inner() })
    }
}

/// A header value marked sensitive, so that HTTP clients never log it.
fn header_value(value: &str, what: &str) -> Result<HeaderValue, DefinitionError> {
    let mut value = HeaderValue::from_str(value).map_err(|_| DefinitionError::HeaderValue(what.to_string()))?;
    value.set_sensitive(true);
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Auth;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "tok-123".to_string())
    }

    fn resolve(url: &str, auth: Option<(AuthKind, &str)>, options: &[(&str, &str)]) -> Result<Server, DefinitionError> {
        let auth = auth.map(|(kind, value)| Auth { kind, value: value.into() });
        let options = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Server::resolve("srv", &Definition { url: url.into(), auth, options }, &env)
    }

    #[test]
    fn transports_follow_the_url() {
        let target = |url| format!("{:?}", resolve(url, None, &[]).unwrap().target);
        assert_eq!(
            target("stdio:npx -y '@scope/server x' --flag=\"a b\""),
            r#"Stdio { program: "npx", args: ["-y", "@scope/server x", "--flag=a b"], env: [] }"#
        );
        assert!(target("http://h/mcp").starts_with("StreamableHttp"));
        assert!(target("https://h/SSE").starts_with("Sse"));
        assert!(target("http://h/v1/sse?x=1").starts_with("Sse"));
        let refused = |url| resolve(url, None, &[]).unwrap_err().to_string();
        assert_eq!(refused("ftp://h"), "the URL must start with http://, https:// or stdio:");
        assert!(refused("stdio:  ").contains("empty"));
        assert!(refused("stdio:a 'b").contains("unclosed quote"));
    }

    #[test]
    fn auth_and_options_are_headers_with_secrets_resolved_and_hidden() {
        let server =
            resolve("http://h/mcp", Some((AuthKind::Bearer, "${env:TOKEN}")), &[("X-Team", "t ${TOKEN}")]).unwrap();
        let Target::StreamableHttp { headers, .. } = &server.target else { panic!("{:?}", server.target) };
        assert_eq!(headers[0].0, AUTHORIZATION);
        assert_eq!(headers[0].1.to_str().unwrap(), "Bearer tok-123");
        assert_eq!(headers[1].1.to_str().unwrap(), "t tok-123");
        assert!(headers.iter().all(|(_, v)| v.is_sensitive()));
        let debug = format!("{server:?}");
        assert!(!debug.contains("tok-123"), "{debug}");
        assert_eq!(server.secrets.redact("got t tok-123"), "got t [redacted]");

        let basic = resolve("http://h/sse", Some((AuthKind::Basic, "user:${TOKEN}")), &[]).unwrap();
        let Target::Sse { headers, .. } = &basic.target else { panic!() };
        assert_eq!(headers[0].1.to_str().unwrap(), "Basic user:tok-123");
    }

    #[test]
    fn stdio_options_are_environment_variables_and_auth_is_refused() {
        let server = resolve("stdio:srv", None, &[("API_KEY", "${TOKEN}")]).unwrap();
        let Target::Stdio { env, .. } = &server.target else { panic!() };
        assert_eq!(env, &[("API_KEY".to_string(), "tok-123".to_string())]);
        assert!(!format!("{server:?}").contains("tok-123"));
        assert!(
            resolve("stdio:srv", Some((AuthKind::Bearer, "x")), &[])
                .unwrap_err()
                .to_string()
                .contains("needs an HTTP server")
        );
    }

    #[test]
    fn missing_variables_and_bad_headers_are_clear_errors() {
        assert_eq!(
            resolve("http://h", Some((AuthKind::Bearer, "${env:MISSING_ONE}")), &[]).unwrap_err().to_string(),
            "environment variable 'MISSING_ONE' (needed by its auth) is not set"
        );
        assert_eq!(
            resolve("http://h", None, &[("X", "${NOPE}")]).unwrap_err().to_string(),
            "environment variable 'NOPE' (needed by option 'X') is not set"
        );
        assert_eq!(
            resolve("http://h", None, &[("X", "a\nb")]).unwrap_err().to_string(),
            "option 'X' is not a valid HTTP header value"
        );
        assert_eq!(
            resolve("http://h", None, &[("bad name", "v")]).unwrap_err().to_string(),
            "option 'bad name' is not a valid HTTP header name"
        );
    }
}
