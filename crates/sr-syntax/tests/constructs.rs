//! Every node kind of the tree has a generator in
//! `sr_testing::hostile::constructs`, which the scaling benchmark and the
//! hostile-input suites repeat `n` times: a new kind cannot be added without
//! one.

use std::collections::BTreeMap;

use sr_syntax::{StreetRace, SyntaxKind, WalkEvent, parse};
use sr_testing::hostile::constructs::{CONSTRUCTS, ONCE};

/// Every node kind, by its name.
fn node_kinds() -> Vec<SyntaxKind> {
    let first = SyntaxKind::SOURCE_FILE as u16;
    let last = SyntaxKind::__LAST as u16;
    (first..last).map(|raw| <StreetRace as rowan::Language>::kind_from_raw(rowan::SyntaxKind(raw))).collect()
}

fn counts(text: &str) -> BTreeMap<SyntaxKind, usize> {
    let mut counts = BTreeMap::new();
    for event in parse(text).syntax().preorder() {
        if let WalkEvent::Enter(node) = event {
            *counts.entry(node.kind()).or_default() += 1;
        }
    }
    counts
}

#[test]
fn every_node_kind_has_a_generator_that_repeats_it() {
    let n = 12;
    let mut problems = Vec::new();
    for kind in node_kinds() {
        let name = format!("{kind:?}");
        if ONCE.contains(&name.as_str()) {
            continue;
        }
        let Some(g) = CONSTRUCTS.iter().find(|g| g.name == name) else {
            problems.push(format!("{name}: no generator in sr_testing::hostile::constructs"));
            continue;
        };
        let found = counts(&(g.make)(n)).get(&kind).copied().unwrap_or(0);
        if found < n {
            problems.push(format!("{name}: {found} nodes at size {n}"));
        }
    }
    for g in CONSTRUCTS {
        if !node_kinds().iter().any(|kind| format!("{kind:?}") == g.name) {
            problems.push(format!("{}: not a node kind", g.name));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The generators make the nodes they are named after without syntax
/// errors, but where the node is an error.
#[test]
fn constructs_parse_cleanly() {
    for g in CONSTRUCTS.iter().filter(|g| g.name != "ERROR") {
        let text = (g.make)(3);
        let errors = parse(&text).errors().to_vec();
        assert!(errors.is_empty(), "{}:\n{text}\n{errors:#?}", g.name);
    }
}
