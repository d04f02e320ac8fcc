//! The simulator's generator covers the language: every statement kind of
//! the syntax tree, every value source of the standard library and every
//! builtin tool function is some feature's, and the generator makes it; a new
//! kind or function without a generator fails here. Generated workflows are
//! valid.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;

use sr_hir::{RootDatabase, file_diagnostics, stdlib, tool_functions};
use sr_syntax::{Severity, StreetRace, SyntaxKind, WalkEvent, parse};
use sr_testing::simulate::{Feature, generate};

/// Every node kind that is a statement: `*_STMT`, and `on failure:`.
fn statement_kinds() -> Vec<String> {
    let first = SyntaxKind::SOURCE_FILE as u16;
    let last = SyntaxKind::__LAST as u16;
    (first..last)
        .map(|raw| format!("{:?}", <StreetRace as rowan::Language>::kind_from_raw(rowan::SyntaxKind(raw))))
        .filter(|name| name.ends_with("_STMT") || name == "FAILURE_BLOCK")
        .collect()
}

fn kinds_in(text: &str) -> BTreeSet<String> {
    let mut kinds = BTreeSet::new();
    for event in parse(text).syntax().preorder() {
        if let WalkEvent::Enter(node) = event {
            kinds.insert(format!("{:?}", node.kind()));
        }
    }
    kinds
}

/// The texts of workflows of `features` from seeds 0..n.
fn texts(features: &[Feature], n: u64) -> Vec<String> {
    (0..n).map(|seed| generate(seed, features, 10).render("python3 counter.py counts.txt")).collect()
}

#[test]
fn every_statement_kind_is_a_feature_the_generator_makes() {
    let mut problems = Vec::new();
    for kind in statement_kinds() {
        let Some(feature) = Feature::ALL.iter().find(|f| f.statement_kinds().contains(&kind.as_str())) else {
            problems.push(format!("{kind}: no feature of sr_testing::simulate generates it"));
            continue;
        };
        // The feature with the blocks and statements it is generated inside or after.
        let features = [*feature, Feature::If, Feature::Loop, Feature::FileTools, Feature::Return];
        if !texts(&features, 40).iter().any(|t| kinds_in(t).contains(&kind)) {
            problems.push(format!("{kind}: feature {} made none in 40 workflows", feature.name()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_value_source_and_tool_function_is_a_feature_the_generator_calls() {
    let tools = tool_functions::FS
        .iter()
        .chain(tool_functions::CLI)
        .chain(tool_functions::STATE)
        .chain(tool_functions::EXECUTOR);
    let calls =
        stdlib::NONDETERMINISTIC.iter().map(|name| format!("{name}(")).chain(tools.map(|f| format!(".{}(", f.name)));
    let mut problems = Vec::new();
    for call in calls {
        let name = call.trim_start_matches('.').trim_end_matches('(');
        let Some(feature) = Feature::ALL.iter().find(|f| f.functions().contains(&name)) else {
            problems.push(format!("{name}: no feature of sr_testing::simulate calls it"));
            continue;
        };
        let features = [*feature, Feature::Loop];
        if !texts(&features, 60).iter().any(|t| t.contains(&call)) {
            problems.push(format!("{name}: feature {} made no call in 60 workflows", feature.name()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn generated_workflows_have_no_errors() {
    for (seed, text) in texts(Feature::ALL, 60).iter().enumerate() {
        let mut db = RootDatabase::default();
        let file = db.set_file("/ws/w.sr", text.clone());
        let errors: Vec<String> = file_diagnostics(&db, file)
            .iter()
            .filter(|d| d.in_mode(false) && d.severity == Severity::Error)
            .map(|d| format!("{} {:?}: {}", d.code(), d.range, d.message()))
            .collect();
        assert!(errors.is_empty(), "seed {seed}:\n{text}\n{}", errors.join("\n"));
    }
}

#[test]
fn a_feature_left_out_is_never_generated() {
    let without: Vec<Feature> = Feature::ALL.iter().copied().filter(|f| *f != Feature::Uuid).collect();
    for text in texts(&without, 40) {
        assert!(!text.contains("uuid()"), "{text}");
    }
    assert!(texts(Feature::ALL, 40).iter().any(|t| t.contains("uuid()")));
}

#[test]
fn a_question_is_asked_in_a_parallel_branch_that_writes_its_answer() {
    let texts = texts(&[Feature::Escalate, Feature::Parallel, Feature::FileTools], 40);
    // The question's branch is the block's last, after a sibling: the
    // sibling's call is under way when the run pauses.
    let branch = |t: &&String| {
        t.lines().collect::<Vec<_>>().windows(5).any(|w| {
            w[0] != "    parallel do"
                && w[1] == "        if true:"
                && w[2].starts_with("            escalate to human")
                && w[3].starts_with("            fs.write_file(\"h")
                && w[4] == "    end"
        })
    };
    let asked = texts.iter().filter(branch).count();
    assert!(asked >= 4, "{asked} of 40 workflows ask in a block's last branch");
}
