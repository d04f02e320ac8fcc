//! Model ids. A client of `sr serve` may choose one, and Gemini puts it in its
//! URL, which is sent with the server's key: an id is checked before any
//! request, and escaped where it becomes part of a path.

use crate::LlmError;

/// The longest model id accepted, in bytes.
pub const MAX_MODEL_ID: usize = 256;

/// Whether `model` may name a model: not empty, at most [`MAX_MODEL_ID`]
/// bytes of letters, digits, `.`, `_`, `:`, `/` and `-`, and no `..`. The
/// error says why not.
pub fn check_model_id(model: &str) -> Result<(), LlmError> {
    let problem = if model.is_empty() {
        "it is empty".to_owned()
    } else if model.len() > MAX_MODEL_ID {
        format!("it is {} bytes long, over the limit of {MAX_MODEL_ID}", model.len())
    } else if let Some(c) =
        model.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '/' | '-')))
    {
        format!("{c:?} is not allowed: a model id has only letters, digits and `.`, `_`, `:`, `/`, `-`")
    } else if model.contains("..") {
        "it contains `..`".to_owned()
    } else {
        return Ok(());
    };
    Err(LlmError::InvalidModel { model: shown(model), problem })
}

/// The id as one path segment of a URL: every byte but letters, digits, `.`,
/// `_` and `-` percent-encoded, so that a `/` or `:` in it cannot reach
/// another path or method.
pub(crate) fn path_segment(model: &str) -> String {
    let mut segment = String::with_capacity(model.len());
    for byte in model.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-' => segment.push(char::from(byte)),
            _ => segment.push_str(&format!("%{byte:02X}")),
        }
    }
    segment
}

/// An id as an error message shows it: at most 100 characters of it.
fn shown(model: &str) -> String {
    const SHOWN: usize = 100;
    match model.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}…", &model[..end]),
        None => model.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_of_every_provider_are_accepted() {
        for model in [
            "gpt-4o",
            "openai/gpt-4o-mini",
            "ollama/llama3.2:3b",
            "openrouter/meta-llama/llama-3.1-405b-instruct:free",
            "models/gemini-2.0-flash",
            "hosted_vllm//models/Meta-Llama-3-8B",
            "claude-sonnet-4-5",
        ] {
            assert_eq!(check_model_id(model), Ok(()), "{model}");
        }
        assert_eq!(check_model_id(&"m".repeat(MAX_MODEL_ID)), Ok(()));
    }

    #[test]
    fn hostile_ids_are_refused_saying_why() {
        let cases = [
            ("", "it is empty"),
            ("gemini/../../upload", "contains `..`"),
            ("x?key=1", "'?' is not allowed"),
            ("x#y", "'#' is not allowed"),
            ("x%2e%2e", "'%' is not allowed"),
            ("x y", "' ' is not allowed"),
            ("x\ny", "'\\n' is not allowed"),
            ("x\\y", "'\\\\' is not allowed"),
            ("modèle", "'è' is not allowed"),
        ];
        for (model, problem) in cases {
            let err = check_model_id(model).unwrap_err();
            assert!(err.to_string().contains(problem), "{model:?}: {err}");
        }
        let long = "m".repeat(10_000);
        let err = check_model_id(&long).unwrap_err().to_string();
        assert!(err.contains("10000 bytes long, over the limit of 256"), "{err}");
        assert!(err.len() < 300, "the id is shown cut: {err}");
    }

    #[test]
    fn a_segment_escapes_separators() {
        assert_eq!(path_segment("gemini-2.0-flash"), "gemini-2.0-flash");
        assert_eq!(path_segment("tunedModels/x:y"), "tunedModels%2Fx%3Ay");
    }
}
