//! A journal's last line half written: a process killed while appending a
//! line leaves it without its newline (the newline is the last byte of each
//! line written), and usually not JSON. That line is dropped, with a warning,
//! so that a crash at any instant leaves a journal that can be resumed;
//! a broken line anywhere else is still an error ([`super::Recorded::parse`]).

/// Drops `text`'s last line when it was cut off mid-write: it has no newline
/// and is not JSON. Returns its line number (from 1).
pub fn cut_torn(text: &mut String) -> Option<usize> {
    if text.is_empty() || text.ends_with('\n') {
        return None;
    }
    let start = text.rfind('\n').map_or(0, |newline| newline + 1);
    let last = &text[start..];
    if last.trim().is_empty() || serde_json::from_str::<serde_json::Value>(last).is_ok() {
        return None;
    }
    let number = text[..start].matches('\n').count() + 1;
    text.truncate(start);
    Some(number)
}

/// The warning for a torn line `number` dropped from `source` (a file's
/// name, or `the recording` for one read already).
pub fn torn_warning(source: &str, number: usize) -> String {
    format!("{source}: line {number} was cut off while it was written (the run was killed): dropped")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_last_line_without_its_newline_that_is_not_json_is_dropped() {
        let mut torn = "{\"a\":1}\n{\"b\":2}\n{\"c\":".to_string();
        assert_eq!(cut_torn(&mut torn), Some(3));
        assert_eq!(torn, "{\"a\":1}\n{\"b\":2}\n");
        let mut whole = "{\"a\":1}\n{\"b\":2}".to_string();
        assert_eq!(cut_torn(&mut whole), None, "a last line missing only its newline is complete");
        assert_eq!(whole, "{\"a\":1}\n{\"b\":2}");
        let mut ended = "{\"a\":1}\nnot json\n".to_string();
        assert_eq!(cut_torn(&mut ended), None, "a line with its newline was written whole: it is not torn");
        let mut alone = "{\"a\"".to_string();
        assert_eq!(cut_torn(&mut alone), Some(1));
        assert_eq!(alone, "");
    }
}
