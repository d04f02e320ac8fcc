//! Fuzzy matching of completion labels against the word typed so far.

/// How well `label` matches `typed`, lower first: `None` unless the letters
/// of `typed` appear in `label` in order (ignoring case). Prefix matches come
/// first, all alike (they keep the order they were offered in); then the
/// others by their quality: each matched letter counts one, two more when it
/// starts a word of the label, one more when it follows the previous match.
pub(super) fn rank(typed: &str, label: &str) -> Option<(bool, i32)> {
    let (typed, label) = (typed.to_lowercase(), label.to_lowercase());
    if label.starts_with(&typed) {
        return Some((false, 0));
    }
    let chars: Vec<char> = label.chars().collect();
    let mut quality = 0;
    let mut next = 0;
    let mut previous: Option<usize> = None;
    for wanted in typed.chars() {
        let at = next + chars[next..].iter().position(|&c| c == wanted)?;
        let word_start = at == 0 || matches!(chars[at - 1], '_' | '-' | '.');
        quality += 1 + if word_start { 2 } else { 0 } + i32::from(previous == Some(at.wrapping_sub(1)));
        previous = Some(at);
        next = at + 1;
    }
    Some((true, -quality))
}

#[cfg(test)]
mod tests {
    use super::rank;

    #[test]
    fn prefixes_first_then_word_starts_and_runs() {
        assert_eq!(rank("re", "read_file"), Some((false, 0)));
        assert_eq!(rank("RE", "read_file"), Some((false, 0)));
        assert_eq!(rank("", "anything"), Some((false, 0)));
        assert_eq!(rank("fr", "read_file"), None);
        assert_eq!(rank("readx", "read"), None);
        // r and f both start words of read_file; in write_file only f does.
        assert!(rank("rf", "read_file") < rank("rf", "write_file"));
        // A run of letters beats the same letters scattered.
        assert!(rank("ea", "read") < rank("ea", "feta"));
        // Any prefix match beats any other match.
        assert!(rank("r", "read_file") < rank("rf", "read_file"));
    }
}
