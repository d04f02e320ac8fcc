//! Shrinking a failing workflow: drop a statement, or put a block's body in
//! its place, while the failure persists, until no single step keeps it.

use super::{Node, Workflow};

/// The smallest workflow reachable from `workflow` by dropping statements
/// and unwrapping blocks for which `fails` still holds, and the number of
/// candidates tried. `fails(workflow)` is assumed to hold.
pub fn shrink(workflow: &Workflow, mut fails: impl FnMut(&Workflow) -> bool) -> (Workflow, usize) {
    let mut best = workflow.clone();
    let mut tried = 0;
    'progress: loop {
        for candidate in candidates(&best) {
            tried += 1;
            if fails(&candidate) {
                best = candidate;
                continue 'progress;
            }
        }
        return (best, tried);
    }
}

/// Every workflow one step smaller than `w`, larger steps first.
fn candidates(w: &Workflow) -> Vec<Workflow> {
    let mut out = Vec::new();
    if w.guardrails {
        out.push(Workflow { guardrails: false, ..w.clone() });
    }
    if w.returns {
        out.push(Workflow { returns: false, ..w.clone() });
    }
    for smaller in smaller_bodies(&w.main) {
        out.push(Workflow { main: smaller, ..w.clone() });
    }
    for smaller in smaller_bodies(&w.sub) {
        out.push(Workflow { sub: smaller, ..w.clone() });
    }
    out
}

/// The bodies one step smaller than `body`: a statement dropped, a block
/// replaced by its body, or one statement inside made smaller.
fn smaller_bodies(body: &[Node]) -> Vec<Vec<Node>> {
    let mut out = Vec::new();
    for i in 0..body.len() {
        let mut dropped = body.to_vec();
        dropped.remove(i);
        out.push(dropped);
    }
    for (i, node) in body.iter().enumerate() {
        if let Node::Block { body: inner, .. } = node {
            let mut unwrapped = body[..i].to_vec();
            unwrapped.extend(inner.iter().cloned());
            unwrapped.extend(body[i + 1..].iter().cloned());
            out.push(unwrapped);
            for smaller in smaller_bodies(inner) {
                let mut replaced = body.to_vec();
                if let Node::Block { body: b, .. } = &mut replaced[i] {
                    *b = smaller;
                }
                out.push(replaced);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::{Feature, generate};

    #[test]
    fn a_failure_caused_by_one_statement_shrinks_to_that_statement() {
        let all: Vec<Feature> = Feature::ALL.to_vec();
        let uses_mcp = |w: &Workflow| w.render("x").contains("counter.bump(\"");
        let workflow = (1..200).map(|seed| generate(seed, &all, 12)).find(uses_mcp).unwrap();
        let size = workflow.size();
        assert!(size > 5, "{size}");
        let (shrunk, tried) = shrink(&workflow, uses_mcp);
        assert!(tried > 0);
        assert!(uses_mcp(&shrunk));
        assert_eq!(shrunk.size(), 1, "{}", shrunk.render("x"));
        assert!(shrunk.main.len() + shrunk.sub.len() == 1 && !shrunk.guardrails && !shrunk.returns);
    }

    #[test]
    fn shrinking_keeps_a_failure_that_needs_two_statements() {
        let all: Vec<Feature> = Feature::ALL.to_vec();
        let needs = |w: &Workflow| {
            let text = w.render("x");
            text.contains("uuid()") && text.contains("run agent writer with \"task")
        };
        let workflow = (1..500).map(|seed| generate(seed, &all, 14)).find(needs).unwrap();
        let (shrunk, _) = shrink(&workflow, needs);
        assert!(needs(&shrunk));
        assert_eq!(shrunk.size(), 2, "{}", shrunk.render("x"));
    }
}
