use super::*;
use crate::results::tests::case;

fn log_of(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    (dir, path)
}

#[test]
fn appended_runs_read_back_the_same_and_a_new_log_starts_empty() {
    let (_dir, path) = log_of(FILE);
    let (a, b) = (case("a", "m", true, 1.0, 5), case("b", "m", false, 0.25, 7));
    let mut log = RunLog::create(&path).unwrap();
    log.append(&a).unwrap();
    drop(log);
    RunLog::append_to(&path).unwrap().append(&b).unwrap();
    let read = recover(&path).unwrap();
    assert_eq!((read.cases, read.dropped), (vec![a, b], None));
    RunLog::create(&path).unwrap();
    assert!(recover(&path).unwrap().cases.is_empty());
}

#[test]
fn a_torn_last_line_is_cut_off_and_named_and_a_bad_middle_line_is_an_error() {
    let (_dir, path) = log_of(FILE);
    let a = case("a", "m", true, 1.0, 5);
    let line = serde_json::to_string(&a).unwrap();
    for (torn, why) in
        [(&line[..line.len() / 2], "no newline"), ("{\"id\": \"b\"}\n", "not a case run"), (&line[..], "no newline")]
    {
        std::fs::write(&path, format!("{line}\n{torn}")).unwrap();
        let read = recover(&path).unwrap();
        assert_eq!(read.cases, vec![a.clone()]);
        let dropped = read.dropped.unwrap();
        assert!(dropped.contains(&format!("{}: line 2 is incomplete ({why}", path.display())), "{dropped}");
        // Cut off the file: the next run appends on a line of its own.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{line}\n"));
        RunLog::append_to(&path).unwrap().append(&a).unwrap();
        assert_eq!(recover(&path).unwrap().cases.len(), 2);
    }
    std::fs::write(&path, format!("{line}\nnot json\n{line}\n")).unwrap();
    let error = recover(&path).unwrap_err();
    assert!(matches!(error, RunLogError::NotACaseRun { line: 2, .. }), "{error:?}");
    let error = error.to_string();
    assert!(error.starts_with(&format!("{}:2: not a case run", path.display())), "{error}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{line}\nnot json\n{line}\n"), "left as it was");
}
