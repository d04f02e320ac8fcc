//! Every statement kind is decided for `--compat upstream`: either upstream's
//! grammar has it (upstream mode accepts our generator's file of it) or it is
//! our extension (upstream mode reports E0007 on it, as upstream's parser
//! does). A new statement kind fails here until it is put in one list, so the
//! upstream-mode rejection an extension needs cannot be forgotten.
#![allow(clippy::unwrap_used)]

use sr_hir::{RootDatabase, file_diagnostics};
use sr_syntax::{Code, StreetRace, SyntaxKind};
use sr_testing::hostile::constructs::CONSTRUCTS;

/// The statements of upstream's grammar (streetrace 0.1.24), by node kind.
const UPSTREAM: &[&str] = &[
    "ASSIGN_STMT",
    "RUN_STMT",
    "CALL_STMT",
    "RETURN_STMT",
    "FOR_STMT",
    "PARALLEL_STMT",
    "LOOP_STMT",
    "MATCH_STMT",
    "IF_STMT",
    "PUSH_STMT",
    "ESCALATE_STMT",
    "LOG_STMT",
    "NOTIFY_STMT",
    "EXPR_STMT",
    "CONTINUE_STMT",
    "ABORT_STMT",
    "RETRY_STEP_STMT",
    "MASK_STMT",
    "BLOCK_STMT",
    "WARN_STMT",
    "RETRY_WITH_STMT",
];

/// Our statements, which upstream's parser rejects.
const EXTENSIONS: &[&str] = &["BREAK_STMT"];

fn statement_kinds() -> Vec<String> {
    let first = SyntaxKind::SOURCE_FILE as u16;
    let last = SyntaxKind::__LAST as u16;
    (first..last)
        .map(|raw| format!("{:?}", <StreetRace as rowan::Language>::kind_from_raw(rowan::SyntaxKind(raw))))
        .filter(|name| name.ends_with("_STMT"))
        .collect()
}

#[test]
fn every_statement_kind_is_upstreams_or_an_extension_upstream_mode_rejects() {
    let mut db = RootDatabase::default();
    let mut problems = Vec::new();
    for kind in statement_kinds() {
        let (upstream, extension) = (UPSTREAM.contains(&kind.as_str()), EXTENSIONS.contains(&kind.as_str()));
        if upstream == extension {
            problems.push(format!(
                "{kind}: list it in UPSTREAM (upstream's grammar has it) or in EXTENSIONS (ours: \
                 reject it in `--compat upstream` with an `Extension` of sr-hir's E0007)"
            ));
            continue;
        }
        let Some(generator) = CONSTRUCTS.iter().find(|g| g.name == kind) else {
            problems.push(format!("{kind}: no generator in sr_testing::hostile::constructs"));
            continue;
        };
        let file = db.set_file("/compat/statement.sr", (generator.make)(2));
        let rejected = file_diagnostics(&db, file).iter().any(|d| d.in_mode(true) && d.code() == Code::E0007);
        match (extension, rejected) {
            (true, false) => problems.push(format!("{kind}: an extension that `--compat upstream` accepts")),
            (false, true) => problems.push(format!("{kind}: upstream's, but `--compat upstream` reports E0007")),
            _ => {}
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}
