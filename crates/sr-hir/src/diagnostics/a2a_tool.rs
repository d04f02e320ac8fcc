//! Checks of our `tool NAME = a2a "URL"` extension (a remote A2A agent): its
//! URL is an http(s) URL (the card is fetched only at run time, so nothing
//! here touches the network), and in `--compat upstream` mode upstream's
//! parser rejects it.

use sr_syntax::diagnostic::{Found, SyntaxHelp};
use sr_syntax::{Reported, SyntaxError};

use super::{Anchor, SemanticDiagnostic};
use crate::diagnostic_kinds::Extension;
use crate::hir::{ItemData, ToolData};
use crate::items::Item;
use crate::{Db, item_data};

pub(super) fn check<'db>(db: &'db dyn Db, item: Item<'db>) -> Vec<SemanticDiagnostic<'db>> {
    let ItemData::Tool(ToolData::A2a { url, keyword_part, url_part, .. }) = &*item_data(db, item) else {
        return Vec::new();
    };
    let mut out = vec![SemanticDiagnostic {
        reported: Reported::UpstreamOnly,
        ..SemanticDiagnostic::new(Extension::A2aTool, Anchor::Part(item, *keyword_part))
    }];
    if !is_http_url(url) {
        let help = "an `a2a` tool takes the http(s) URL of the agent's card, \
                    e.g. \"https://host/.well-known/agent-card.json\"";
        out.push(SemanticDiagnostic {
            reported: Reported::DefaultOnly,
            ..SemanticDiagnostic::new(
                SyntaxError::Syntax {
                    found: Found::Token(format!("\"{url}\"")),
                    help: Some(SyntaxHelp::Explain(help.to_string())),
                },
                Anchor::Part(item, *url_part),
            )
        });
    }
    out
}

/// `http://HOST…` or `https://HOST…` with a host and no whitespace.
pub fn is_http_url(url: &str) -> bool {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
    let Some(rest) = rest else { return false };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = host.rsplit('@').next().unwrap_or_default();
    !host.is_empty() && !host.starts_with(':') && !url.chars().any(char::is_whitespace)
}

/// Whether `name` is a remote A2A agent of the program: `use` and `delegate`
/// may name one as they name a local agent.
pub(crate) fn is_a2a_tool(db: &dyn Db, program: &crate::resolve::Program<'_>, name: &crate::Name) -> bool {
    program.tools.get(name).is_some_and(|&tool| matches!(&*item_data(db, tool), ItemData::Tool(ToolData::A2a { .. })))
}

#[cfg(test)]
mod tests {
    use super::is_http_url;

    #[test]
    fn only_http_and_https_urls_with_a_host_are_card_urls() {
        for good in ["https://h/.well-known/agent-card.json", "http://127.0.0.1:8000", "https://u@h:1/x?y#z"] {
            assert!(is_http_url(good), "{good}");
        }
        for bad in
            ["", "h/card", "ftp://h/x", "https://", "http:///x", "https://:80/x", "stdio:python a.py", "https://h/a b"]
        {
            assert!(!is_http_url(bad), "{bad}");
        }
    }
}
