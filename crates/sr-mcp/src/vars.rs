//! `${env:VAR}` and `${VAR}` in the values of tool definitions (MCP servers'
//! auth and options, remote A2A agents'), resolved when a run starts.

/// Replaces `${env:VAR}` and `${VAR}` in `text` with `lookup(VAR)`. Anything
/// else, including a `${` without its `}`, stays as written.
pub fn substitute(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, MissingVar> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = after[..end].trim();
        let name = inner.strip_prefix("env:").unwrap_or(inner).trim();
        if is_var_name(name) {
            out.push_str(&lookup(name).ok_or_else(|| MissingVar(name.to_string()))?);
        } else {
            out.push_str(&rest[start..start + 2 + end + 1]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An environment variable a connection needs and the process does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingVar(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cr3t".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn both_spellings_are_resolved_and_the_rest_kept() {
        assert_eq!(substitute("${env:TOKEN}", env).unwrap(), "s3cr3t");
        assert_eq!(substitute("a ${TOKEN} b ${ env:TOKEN }", env).unwrap(), "a s3cr3t b s3cr3t");
        assert_eq!(substitute("x${EMPTY}y", env).unwrap(), "xy");
        assert_eq!(substitute("$TOKEN ${} ${1A} ${TOKEN", env).unwrap(), "$TOKEN ${} ${1A} ${TOKEN");
        assert_eq!(substitute("ünï ${TOKEN}€", env).unwrap(), "ünï s3cr3t€");
    }

    #[test]
    fn a_missing_variable_is_named() {
        assert_eq!(substitute("Bearer ${env:NOPE}", env), Err(MissingVar("NOPE".into())));
    }
}
