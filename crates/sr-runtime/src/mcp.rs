//! MCP servers' tools (`tool x = mcp "URL" [with auth …]`) through sr-mcp,
//! which documents the URL forms, secrets, names and recordings: a program's
//! definitions become sr-mcp's, and a server's tools become the runtime's
//! [`Tool`]s. Without the `mcp` feature no server is connected: a run shows
//! each server used as unavailable, and replays work as usual.
//!
//! `${env:VAR}` in a stdio server's options becomes its environment
//! (`with GITHUB_TOKEN "${env:GH_TOKEN}"`); an HTTP server gets its options
//! as headers and `with auth bearer|basic "V"` as `Authorization`. The
//! option `idempotent "true"` is neither: it declares the server's tools
//! idempotent (a call a crash cut off is made again on resume, see
//! `crate::in_doubt`). Each call passes its idempotency key in the request's
//! `_meta` (`sr_mcp::IDEMPOTENCY_KEY_META`).

use std::collections::HashSet;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use indexmap::IndexMap;
use serde_json::Value;
use sr_hir::{AuthKind, Name, ToolData};
use sr_llm::{Cassette, LlmError};
use sr_mcp::{Auth, Definition, Hub};

pub use sr_mcp::{MCP_NOTICE_KIND, MCP_TOOLS_KIND, Options as McpOptions};

use crate::a2a::{A2aOptions, Remotes};
use crate::tools::{Tool, ToolError, ToolSpec};

/// What an MCP definition says: `tool x = mcp "URL" with …`, or the long form
/// with `type: mcp` (upstream never reads it, but its intent is plain).
fn definition(data: &ToolData) -> Option<Definition> {
    let options = |options: &[(Name, String)]| {
        options.iter().filter(|(k, _)| k.as_str() != IDEMPOTENT).map(|(k, v)| (k.to_string(), v.clone())).collect()
    };
    match data {
        ToolData::Mcp { url, auth, options: written } => Some(Definition {
            url: url.clone(),
            auth: auth.as_ref().map(|auth| Auth {
                kind: match auth.kind {
                    AuthKind::Bearer => sr_mcp::AuthKind::Bearer,
                    AuthKind::Basic => sr_mcp::AuthKind::Basic,
                },
                value: auth.value.clone(),
            }),
            options: options(written),
        }),
        ToolData::Long { url: Some(url), headers, .. } if data.is_mcp() => {
            Some(Definition { url: url.clone(), auth: None, options: options(headers) })
        }
        ToolData::Long { .. } | ToolData::A2a { .. } | ToolData::Builtin(_) | ToolData::Ref(_) | ToolData::Missing => {
            None
        }
    }
}

fn definitions(tools: &IndexMap<Name, ToolData>) -> impl Iterator<Item = (String, Definition)> + '_ {
    tools.iter().filter_map(|(name, data)| Some((name.to_string(), definition(data)?)))
}

/// The option that declares a server's tools idempotent (`with idempotent "true"`).
const IDEMPOTENT: &str = "idempotent";

/// The servers among `tools` declared `with idempotent "true"`.
fn idempotent(tools: &IndexMap<Name, ToolData>) -> HashSet<String> {
    let declared = |options: &[(Name, String)]| {
        options.iter().any(|(k, v)| k.as_str() == IDEMPOTENT && v.trim().eq_ignore_ascii_case("true"))
    };
    tools
        .iter()
        .filter(|(_, data)| match data {
            ToolData::Mcp { options, .. } => declared(options),
            ToolData::Long { headers, .. } => declared(headers),
            ToolData::A2a { .. } | ToolData::Builtin(_) | ToolData::Ref(_) | ToolData::Missing => false,
        })
        .map(|(name, _)| name.to_string())
        .collect()
}

/// The MCP servers a program defines, connected on first use (with those of
/// them declared idempotent), and its remote A2A agents (`crate::a2a`), which
/// share the hub's place in a run (secrets, notices, no contact before first use),
/// and, in a replay, the servers its recorded run was cut off connecting to.
#[derive(Default)]
pub struct McpHub(Hub, Remotes, HashSet<String>, HashSet<String>);

impl McpHub {
    /// The MCP servers among `tools` (a program's tool definitions), with
    /// `${env:VAR}` read from `env`; nothing is connected yet.
    pub fn new(
        tools: &IndexMap<Name, ToolData>,
        options: &McpOptions,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> McpHub {
        McpHub(
            Hub::new(definitions(tools), options, env),
            Remotes::new(tools, &A2aOptions::default(), env),
            idempotent(tools),
            HashSet::new(),
        )
    }

    /// Like [`McpHub::new`], with the remote A2A agents' limits.
    pub fn with_a2a(
        tools: &IndexMap<Name, ToolData>,
        options: &McpOptions,
        a2a: &A2aOptions,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> McpHub {
        McpHub(
            Hub::new(definitions(tools), options, env),
            Remotes::new(tools, a2a, env),
            idempotent(tools),
            HashSet::new(),
        )
    }

    /// The tool of the remote A2A agent `name` defines (`crate::a2a`).
    pub fn a2a_tool(&self, name: &str, data: &ToolData) -> Option<Arc<dyn Tool>> {
        self.1.tool(name, data)
    }

    /// Connects to the MCP servers among `tools` at once, reading `${env:VAR}`
    /// from the process environment.
    pub async fn connect(tools: &IndexMap<Name, ToolData>, options: &McpOptions) -> McpHub {
        let env = |name: &str| std::env::var(name).ok();
        McpHub(
            Hub::connect(definitions(tools), options).await,
            Remotes::new(tools, &A2aOptions::default(), &env),
            idempotent(tools),
            HashSet::new(),
        )
    }

    /// Like [`McpHub::connect`], reading `${env:VAR}` from `env`.
    pub async fn connect_with_env(
        tools: &IndexMap<Name, ToolData>,
        options: &McpOptions,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> McpHub {
        McpHub(
            Hub::connect_with_env(definitions(tools), options, env).await,
            Remotes::new(tools, &A2aOptions::default(), env),
            idempotent(tools),
            HashSet::new(),
        )
    }

    /// The hub a recorded run had: the same tools, no connections (remote A2A
    /// agents are offered, and the journal serves their calls).
    pub fn from_recording(text: &str) -> Result<McpHub, sr_mcp::RecordingError> {
        Hub::from_recording(text).map(|hub| McpHub(hub, Remotes::default(), HashSet::new(), HashSet::new()))
    }

    /// For the replay of a recorded run that ended: a server among `tools`
    /// that its recording does not list was still connecting when the run
    /// cancelled its use (a sibling branch failed, a timeout struck), as a
    /// listing is journaled once the server answers. Its use then waits to
    /// be cancelled at the same point, as the live run's did, instead of
    /// failing at once as a server without tools.
    pub fn cut_off_unlisted(mut self, tools: &IndexMap<Name, ToolData>) -> McpHub {
        self.3 = definitions(tools).map(|(name, _)| name).filter(|name| !self.0.has(name)).collect();
        self
    }

    /// Records the listings and notices to `cassette`, for [`McpHub::from_recording`].
    pub fn record(&self, cassette: Arc<Cassette>) -> Result<(), LlmError> {
        self.0.record(cassette.clone())?;
        // The remote A2A agents' notices too, so that a replay warns alike.
        for message in self.1.notices() {
            cassette.append(&serde_json::json!({"kind": MCP_NOTICE_KIND, "message": message}))?;
        }
        Ok(())
    }

    /// Whether the server defined as `name` was still connecting when the
    /// recorded run, which never listed its tools, was cancelled: a replay
    /// waits at its first use to be cancelled the same way.
    pub fn never_listed(&self, name: &str) -> bool {
        self.3.contains(name)
    }

    /// The tools of the server defined as `name`, connecting it if this is
    /// its first use; with the server's warning the first time it is asked.
    /// The caller waits instead for a server [`McpHub::never_listed`].
    pub async fn use_tools(&self, name: &str) -> (Vec<Arc<dyn Tool>>, Option<String>) {
        let (tools, warning) = self.0.use_tools(name).await;
        (adapt(tools, self.2.contains(name)), warning)
    }

    /// The tools of the server defined as `name`, if it is connected.
    pub fn tools(&self, name: &str) -> Vec<Arc<dyn Tool>> {
        adapt(self.0.tools(name), self.2.contains(name))
    }

    /// Why some connected servers have no tools, and the run's notices; free of secrets.
    pub fn warnings(&self) -> Vec<String> {
        self.0.warnings()
    }

    /// Warnings for the start of a run: variables too short to be kept secret.
    pub fn notices(&self) -> Vec<String> {
        let mut notices = self.0.notices();
        notices.extend(self.1.notices());
        notices
    }

    /// Adds the values of the variables the servers use to `redactor`.
    pub fn add_secrets(&self, redactor: &sr_llm::Redactor) {
        self.0.add_secrets(redactor);
        self.1.add_secrets(redactor);
    }

    /// Closes every connected session gracefully; the hub has no tools afterwards.
    pub async fn close(&self) {
        self.0.close().await;
    }
}

/// Tool names and warnings only: connections hold secrets.
impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

fn adapt(tools: Vec<Arc<sr_mcp::McpTool>>, idempotent: bool) -> Vec<Arc<dyn Tool>> {
    tools.into_iter().map(|tool| Arc::new(McpTool(tool, idempotent)) as Arc<dyn Tool>).collect()
}

/// A server's tool as the runtime's `Tool`, and whether it is declared idempotent.
struct McpTool(Arc<sr_mcp::McpTool>, bool);

impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        let spec = self.0.spec();
        ToolSpec { name: spec.name.clone(), description: spec.description.clone(), parameters: spec.parameters.clone() }
    }

    fn name(&self) -> String {
        self.0.spec().name.clone()
    }

    fn call(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        async move { self.0.call(args).await.map_err(|e| ToolError(e.to_string())) }.boxed()
    }

    fn call_keyed(&self, args: Value, key: &str) -> BoxFuture<'_, Result<Value, ToolError>> {
        let key = key.to_string();
        async move { self.0.call_keyed(args, &key).await.map_err(|e| ToolError(e.to_string())) }.boxed()
    }

    fn idempotent(&self) -> bool {
        self.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sr_hir::ToolAuth;

    #[test]
    fn the_short_and_long_forms_are_definitions_and_other_tools_are_not() {
        let short = ToolData::Mcp {
            url: "http://h/mcp".into(),
            auth: Some(ToolAuth { kind: AuthKind::Basic, value: "me:${T}".into() }),
            options: vec![("X-Team".into(), "core".into())],
        };
        let expected = Definition {
            url: "http://h/mcp".into(),
            auth: Some(Auth { kind: sr_mcp::AuthKind::Basic, value: "me:${T}".into() }),
            options: vec![("X-Team".into(), "core".into())],
        };
        assert_eq!(definition(&short), Some(expected));
        assert!(short.is_mcp());

        let long = ToolData::Long {
            ty: Some("mcp".into()),
            url: Some("http://h/mcp".into()),
            headers: vec![("X-Key".into(), "v".into())],
        };
        let expected =
            Definition { url: "http://h/mcp".into(), auth: None, options: vec![("X-Key".into(), "v".into())] };
        assert_eq!(definition(&long), Some(expected));
        assert!(long.is_mcp());

        for other in [
            ToolData::Long { ty: Some("mcp".into()), url: None, headers: vec![] },
            ToolData::Long { ty: Some("http".into()), url: Some("http://h".into()), headers: vec![] },
            ToolData::Builtin("streetrace.fs".into()),
        ] {
            assert_eq!(definition(&other), None, "{other:?}");
            assert!(!other.is_mcp(), "{other:?}");
        }
    }

    #[test]
    fn idempotent_true_declares_a_server_idempotent_and_is_never_sent_to_it() {
        let mcp = |value: &str| ToolData::Mcp {
            url: "stdio:srv".into(),
            auth: None,
            options: vec![("idempotent".into(), value.into()), ("TEAM".into(), "core".into())],
        };
        let long = ToolData::Long {
            ty: Some("mcp".into()),
            url: Some("http://h/mcp".into()),
            headers: vec![("idempotent".into(), "true".into())],
        };
        let tools: IndexMap<Name, ToolData> = [
            ("yes", mcp("true")),
            ("upper", mcp(" TRUE ")),
            ("no", mcp("false")),
            ("other", mcp("yes")),
            ("long", long),
            ("files", ToolData::Builtin("streetrace.fs".into())),
        ]
        .into_iter()
        .map(|(name, data)| (Name::from(name), data))
        .collect();
        let mut declared: Vec<String> = idempotent(&tools).into_iter().collect();
        declared.sort();
        assert_eq!(declared, ["long", "upper", "yes"]);
        for (name, definition) in definitions(&tools) {
            assert!(definition.options.iter().all(|(k, _)| k != "idempotent"), "{name}: {:?}", definition.options);
        }
        assert_eq!(definition(&mcp("true")).unwrap().options, [("TEAM".to_string(), "core".to_string())]);
    }
}
