//! "Did you mean": the closest of a list of names to one that is not in it,
//! measured by the checker's own similarity (the longest common subsequence
//! over the longer length, at least 0.6).

use sr_hir::diagnostics::similarity;

/// The closest candidate to `name`, if one is close enough.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (similarity(&name.to_lowercase(), &c.to_lowercase()), c))
        .filter(|(score, _)| *score >= 0.6)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// `: did you mean `x`?` when a candidate is close, else `(known: a, b, c)`.
pub fn hint(name: &str, candidates: &[&str]) -> String {
    match closest(name, candidates.iter().copied()) {
        Some(near) => format!(": did you mean `{near}`?"),
        None => format!(" (known: {})", candidates.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_suggested_and_far_ones_listed() {
        let scorers = ["equals", "contains", "regex", "json_path", "findings", "tool_called"];
        assert_eq!(closest("contians", scorers), Some("contains"));
        assert_eq!(closest("Findings", scorers), Some("findings"));
        assert_eq!(closest("toolcalled", scorers), Some("tool_called"));
        assert_eq!(closest("banana", scorers), None);
        assert_eq!(hint("regx", &scorers), ": did you mean `regex`?");
        assert_eq!(hint("zz", &["a", "b"]), " (known: a, b)");
    }
}
