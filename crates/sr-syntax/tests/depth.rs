//! The nesting limit: input nested deeper than `MAX_NESTING` parses (on the
//! default 2 MiB test-thread stack) into a tree no deeper than a small multiple
//! of the limit, with an SR111 error at the first place the limit is
//! exceeded, and the lines after the deep part still parse.

use sr_syntax::{Code, MAX_NESTING, SyntaxNode, WalkEvent, parse, pieces};
use sr_testing::hostile::{BLOCKS, EXPRESSIONS, Generator};

/// The tree's depth, counted without recursion.
fn depth(root: &SyntaxNode) -> usize {
    let (mut depth, mut max) = (0, 0);
    for event in root.preorder() {
        match event {
            WalkEvent::Enter(_) => {
                depth += 1;
                max = max.max(depth);
            }
            WalkEvent::Leave(_) => depth -= 1,
        }
    }
    max
}

fn check(g: &Generator, n: usize) {
    let text = (g.make)(n);
    let parse = parse(&text);
    assert_eq!(parse.syntax().text().to_string(), text, "{}", g.name);
    let too_deep: Vec<_> = parse.errors().iter().filter(|e| e.code() == Code::SR111).collect();
    // One error where the limit is exceeded; a construct whose header and
    // body both start past the limit (an `if` condition and its block) has two.
    assert!((1..=2).contains(&too_deep.len()), "{} at {n}: {:?}", g.name, parse.errors());
    assert!(too_deep[0].message().contains("nested more than 256 levels"), "{}", too_deep[0].message());
    let limit = MAX_NESTING as usize;
    let d = depth(&parse.syntax());
    assert!(d <= 4 * limit + 16, "{} at {n}: tree depth {d}", g.name);
    // The limit is exceeded where the input says so, not at its start.
    assert!(usize::from(too_deep[0].range.start()) > limit, "{}", g.name);
}

#[test]
fn deep_expressions_stop_at_the_limit() {
    for g in EXPRESSIONS {
        check(g, 20_000);
    }
}

#[test]
fn deep_blocks_stop_at_the_limit() {
    for g in BLOCKS {
        check(g, 2_000);
    }
}

#[test]
fn nesting_at_the_limit_is_no_error() {
    for g in EXPRESSIONS.iter().filter(|g| !g.name.contains("mixed")) {
        // A chain of n terms has n - 1 operators; every other construct nests
        // once per level, and the statement around it adds none.
        let text = (g.make)(MAX_NESTING as usize - 8);
        let errors: Vec<_> = parse(&text).errors().iter().filter(|e| e.code() == Code::SR111).cloned().collect();
        assert!(errors.is_empty(), "{}: {errors:?}", g.name);
    }
    for g in BLOCKS {
        let text = (g.make)(MAX_NESTING as usize - 8);
        let errors: Vec<_> = parse(&text).errors().iter().filter(|e| e.code() == Code::SR111).cloned().collect();
        assert!(errors.is_empty(), "{}: {errors:?}", g.name);
    }
}

#[test]
fn the_rest_of_the_file_still_parses() {
    let deep = EXPRESSIONS.iter().find(|g| g.name == "paren").unwrap();
    let text = format!("{}\nagent a:\n    instruction p\n    bogus\n", (deep.make)(5_000));
    let parse = parse(&text);
    // The error in the agent after the deep flow is found too.
    assert!(
        parse.errors().iter().any(|e| e.code() == Code::E0007 && text[e.range].contains("bogus")),
        "{:?}",
        parse.errors()
    );
}

#[test]
fn piecewise_parse_agrees_on_deep_input() {
    for g in EXPRESSIONS.iter().chain(BLOCKS) {
        let text = format!("{}\n{}", (g.make)(600), (g.make)(300));
        let whole = parse(&text);
        let pieces = pieces::parse_pieces(&text, pieces::parse_piece);
        assert_eq!(pieces.green(), whole.green(), "{}", g.name);
    }
}
