//! Joining the results of shards (or of any runs of distinct cases) into one
//! result set: the cases of all, the runs missing from any that none of the
//! others finished, and each case's events file named from where the merged
//! results are written.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use crate::config::Reduce;
use crate::names::variant_name;
use crate::results::{Results, RunKey};

/// One result set to merge, and the directory its events paths are relative to.
pub struct Part {
    pub results: Results,
    pub dir: PathBuf,
}

/// Why parts cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("the results reduce epochs differently ({0} and {1}): merge results of one kind")]
    Reductions(Reduce, Reduce),
    #[error("case {case}{} of {variant} is in two of the results", epoch_note(*epoch))]
    Twice { case: String, epoch: u32, variant: String },
}

/// ` (epoch N)` past the first.
fn epoch_note(epoch: u32) -> String {
    if epoch > 1 { format!(" (epoch {epoch})") } else { String::new() }
}

/// The merged results, written into `out_dir`. The same run in two parts is
/// an error, as are parts reduced differently.
pub fn merge(parts: Vec<Part>, out_dir: &Path) -> Result<Results, MergeError> {
    let reduce = parts.first().map(|p| p.results.reduce).unwrap_or_default();
    if let Some(other) = parts.iter().find(|p| p.results.reduce != reduce) {
        return Err(MergeError::Reductions(reduce, other.results.reduce));
    }
    let mut seen = HashSet::new();
    let mut cases = Vec::new();
    let mut missing: Vec<RunKey> = Vec::new();
    for part in parts {
        for mut case in part.results.cases {
            if !seen.insert(case.key()) {
                let variant = variant_name(&case.variant());
                return Err(MergeError::Twice { case: case.id, epoch: case.epoch, variant });
            }
            case.events = case.events.map(|events| rebase(&part.dir.join(events), out_dir));
            cases.push(case);
        }
        missing.extend(part.results.missing);
    }
    let mut listed = HashSet::new();
    missing.retain(|k| !seen.contains(k) && listed.insert(k.clone()));
    Ok(Results::with_missing(cases, missing, reduce, None))
}

/// `path` relative to `dir` (both made absolute), with `..` where needed.
pub fn rebase(path: &Path, dir: &Path) -> String {
    let (Ok(path), Ok(dir)) = (std::path::absolute(path), std::path::absolute(dir)) else {
        return path.display().to_string();
    };
    let (path, dir) = (normal(&path), normal(&dir));
    let common = path.iter().zip(&dir).take_while(|(a, b)| a == b).count();
    let mut relative = PathBuf::new();
    for _ in common..dir.len() {
        relative.push("..");
    }
    for part in &path[common..] {
        relative.push(part.as_os_str());
    }
    relative.display().to_string()
}

fn normal(path: &Path) -> Vec<Component<'_>> {
    path.components().filter(|c| *c != Component::CurDir).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Reduce;
    use crate::results::tests::case;

    fn part(dir: &str, cases: &[(&str, &str, bool)]) -> Part {
        let cases = cases
            .iter()
            .map(|(id, m, p)| {
                let mut c = case(id, m, *p, f64::from(u8::from(*p)), 1);
                c.events = Some(format!("cases/{id}/w/{m}/events.jsonl"));
                c
            })
            .collect();
        Part { results: Results::of(cases), dir: dir.into() }
    }

    #[test]
    fn merging_shards_joins_cases_and_recomputes_the_summary() {
        let one = || part("/runs/one", &[("c1", "a", true), ("c3", "a", false)]);
        let two = part("/runs/two", &[("c2", "a", true), ("c2", "b", true)]);
        let merged = merge(vec![one(), two], Path::new("/runs/all")).unwrap();
        assert_eq!(merged.cases.len(), 4);
        let a = &merged.summary[0];
        assert_eq!((a.passed, a.total), (2, 3));
        assert_eq!((merged.summary[1].passed, merged.summary[1].total), (1, 1));
        assert!(merged.complete && merged.run.is_none());
        assert_eq!(merged.cases[0].events.as_deref(), Some("../one/cases/c1/w/a/events.jsonl"));
        let error = merge(vec![one(), one()], Path::new("/runs")).unwrap_err().to_string();
        assert_eq!(error, "case c1 of w.sr × a is in two of the results");
    }

    #[test]
    fn what_one_part_misses_and_no_other_ran_stays_missing() {
        let key = |id: &str| RunKey {
            id: id.into(),
            workload: "w.sr".into(),
            entry: None,
            model: Some("a".into()),
            epoch: 1,
        };
        let mut one = part("o", &[("c1", "a", true)]);
        one.results = Results::assemble(&[key("c1"), key("c2"), key("c3")], one.results.cases, Reduce::Mean, None);
        let two = part("t", &[("c2", "a", true)]);
        let merged = merge(vec![one, two], Path::new(".")).unwrap();
        assert_eq!(merged.missing, [key("c3")]);
        assert_eq!(merged.partial().as_deref(), Some("partial: 2 of 3 cases"));
        let mut max = part("m", &[("c9", "a", true)]);
        max.results.reduce = Reduce::Max;
        assert!(
            merge(vec![part("p", &[]), max], Path::new("."))
                .unwrap_err()
                .to_string()
                .contains("reduce epochs differently")
        );
    }

    #[test]
    fn paths_are_rebased_with_dot_dot() {
        assert_eq!(rebase(Path::new("/a/b/c.jsonl"), Path::new("/a")), "b/c.jsonl");
        assert_eq!(rebase(Path::new("/a/b/c.jsonl"), Path::new("/a/x/y")), "../../b/c.jsonl");
        assert_eq!(rebase(Path::new("/a/./b/c.jsonl"), Path::new("/a/b")), "c.jsonl");
    }
}
