//! Diagnostics of a file, as `sr check` reports them in the chosen mode.

use std::path::Path;

use sr_hir::Diagnostic;
use sr_hir::{RootDatabase, file_diagnostics, file_diagnostics_alone};

/// Which findings to show: ours and upstream's (the default), or exactly
/// upstream's checker (`sr check --compat upstream`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DiagnosticsMode {
    #[default]
    Default,
    Upstream,
}

pub(crate) fn diagnostics(db: &RootDatabase, path: &Path, mode: DiagnosticsMode) -> Vec<Diagnostic> {
    let Some(file) = db.file(path) else { return Vec::new() };
    // Upstream's checker judges each file alone; by default a file is judged
    // as part of the programs that import it.
    let upstream = mode == DiagnosticsMode::Upstream;
    let all = if upstream { file_diagnostics_alone(db, file) } else { file_diagnostics(db, file) };
    all.iter().filter(|d| d.in_mode(upstream)).cloned().collect()
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::DiagnosticsMode;
    use crate::tests::analysis;

    fn check(fixture: &str, mode: DiagnosticsMode, expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        let text = fixture.text("/main.sr");
        let diagnostics = analysis.diagnostics(std::path::Path::new("/main.sr"), mode).unwrap();
        let out: Vec<String> = diagnostics
            .iter()
            .map(|d| {
                let related: Vec<String> =
                    d.related.iter().map(|r| format!(" [{} at {:?}]", r.message, &text[r.range])).collect();
                format!("{} {:?} {:?}: {}{}", d.code(), d.severity, &text[d.range], d.message(), related.concat())
            })
            .collect();
        expect.assert_eq(&out.join("\n"));
    }

    #[test]
    fn default_mode_adds_our_checks_and_related_information() {
        let fixture = r#"
            prompt p: """x"""
            agent a:
                instruction p
                delegate b
            agent b:
                instruction p
                delegate a
            agent a:
                instruction p
            prompt unused: """y"""
            flow main:
                $x = run agent a
            "#;
        check(
            fixture,
            DiagnosticsMode::Default,
            expect![[r#"
            E0011 Error "a": circular agent reference detected: a -> b -> a ['a' delegates to 'b' at "b"] ['b' delegates to 'a' at "a"]
            E0003 Error "a": duplicate definition of agent 'a' [first definition of agent 'a' at "a"]
            SR100 Warning "unused": prompt 'unused' is never used"#]],
        );
        check(
            fixture,
            DiagnosticsMode::Upstream,
            expect![[r#"
            E0011 Error "a": circular agent reference detected: a -> b -> a ['a' delegates to 'b' at "b"] ['b' delegates to 'a' at "a"]
            E0003 Error "a": duplicate definition of agent 'a' [first definition of agent 'a' at "a"]"#]],
        );
    }
}
