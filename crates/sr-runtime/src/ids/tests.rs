use std::path::{Component, Path};

use super::*;

#[test]
fn good_ids_pass() {
    for id in ["a", "0", "s1", "A.b_c-d", "x..y", "a.", &"z".repeat(MAX_LEN), "3f1a2b4c-0d9e-4f6a-8b7c-1d2e3f4a5b6c"] {
        assert_eq!(check(IdKind::Session, id), Ok(()), "{id}");
    }
}

/// Every hostile id is refused with a message naming the rule, shown escaped
/// and short; an id the rule allows is one plain path component.
#[test]
fn hostile_ids_are_refused_naming_the_rule() {
    for id in hostile() {
        let error = check(IdKind::Case, &id).expect_err(&id);
        let message = error.to_string();
        assert!(message.starts_with("case id \"") && message.ends_with(RULE), "{message}");
        assert!(!message.contains('\0') && message.len() < 300, "{message:?}");
    }
}

/// `safe_name` turns anything into an id, and different long names into
/// different ids.
#[test]
fn safe_names_are_ids() {
    let mut names = hostile();
    names.extend(["review.sr", "openai/gpt-4o", "stem@entry"].map(String::from));
    for name in &names {
        let safe = safe_name(name);
        assert_eq!(check(IdKind::Case, &safe), Ok(()), "{name:?} → {safe:?}");
        let components: Vec<Component> = Path::new(&safe).components().collect();
        assert!(matches!(components[..], [Component::Normal(_)]), "{safe:?}");
    }
    assert_eq!(safe_name("openai/gpt-4o"), "openai_gpt-4o");
    assert_eq!(safe_name("ok-1.2"), "ok-1.2");
    let long = |last: char| format!("{}{last}", "x".repeat(300));
    assert_ne!(safe_name(&long('a')), safe_name(&long('b')));
}
