//! The work directory in the journal, judged by the files a replay, a resumed
//! run and a run going back in time leave: commands in parallel branches are
//! credited to the branch that ran them, a resumed run keeps a finished
//! block's order of events, a call a crash cut off keeps its file change,
//! limits are said and refused rather than passed over, and permission bits
//! and symlinks come back.
#![allow(clippy::unwrap_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use common::{Options, bubblewrap_or_skip, run_file, run_with_journal, serving, work_dir};
use serde_json::{Value, json};
use sr_runtime::ErrorKind;
use sr_runtime::event::{Event, Payload, RunStatus, branch_of};
use sr_runtime::journal::{Journal, Limits, Meta, Mode, Recorded, Workspace};
use sr_runtime::scripted::ScriptedProvider;
use sr_runtime::tools::Jail;

fn lines(text: &str) -> Vec<Value> {
    text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

/// The paths each `tool` line of the journal says its call changed, by thread.
fn changed_by_thread(text: &str) -> Vec<(String, Vec<String>)> {
    lines(text)
        .into_iter()
        .filter(|line| line["kind"] == "tool")
        .map(|line| {
            let paths = line["files"]
                .as_array()
                .map(|files| files.iter().map(|f| f["path"].as_str().unwrap().to_string()).collect::<Vec<_>>());
            (line["at"].as_str().unwrap().to_string(), paths.unwrap_or_default())
        })
        .collect()
}

/// A recorded run's journal at `path`, its files those of `dir`, within `limits`.
fn recording_within(path: &Path, dir: &Path, limits: Limits) -> Arc<Journal> {
    let cassette = Arc::new(sr_llm::Cassette::create(path).unwrap());
    let workspace = Workspace::with_limits(Jail::new(dir).unwrap(), limits);
    Arc::new(Journal::recording(cassette, &Meta::new("test.sr", "go"), Some(workspace)).unwrap())
}

fn served_within(mode: Mode, text: &str, dir: &Path, limits: Limits) -> Arc<Journal> {
    let workspace = Workspace::with_limits(Jail::new(dir).unwrap(), limits);
    Arc::new(Journal::new(mode, Recorded::parse(text).unwrap(), None, Some(workspace)))
}

async fn run(path: &Path, dir: &Path, journal: Arc<Journal>) -> common::Run {
    let options = Options { work_dir: dir.to_path_buf(), journal, ..Options::default() };
    run_file(path, "go", Arc::new(ScriptedProvider::new()), options).await
}

fn warnings(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Warning { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn commands_in_parallel_branches_are_credited_to_their_own_branch() {
    if !bubblewrap_or_skip("the cli tool") {
        return;
    }
    let dir = work_dir("journal-parallel-cli");
    let path = dir.join("w.sr");
    // The commands overlap in time: each one's files are its own.
    std::fs::write(
        &path,
        r#"tool cli = builtin streetrace.cli
tool fs = builtin streetrace.fs

flow main:
    parallel do
        $a = cli.execute_cli_command(["sh", "-c", "sleep 0.3; echo a > a.txt"])
        $b = cli.execute_cli_command(["sh", "-c", "echo b > b.txt; sleep 0.3"])
        $c = fs.write_file("c.txt", "c")
    end
    return "done"
"#,
    )
    .unwrap();
    let journal_path = work_dir("journal-parallel-cli-journal").join("run.jsonl");
    let live = run_with_journal(&path, &dir, common::recording(&journal_path, &dir)).await;
    assert_eq!(live.status, RunStatus::Completed, "{:?}", live.error);
    let text = std::fs::read_to_string(&journal_path).unwrap();
    let mut changed = changed_by_thread(&text);
    changed.sort();
    assert_eq!(
        changed,
        [
            ("main/0.0".to_string(), vec!["a.txt".to_string()]),
            ("main/0.1".to_string(), vec!["b.txt".to_string()]),
            ("main/0.2".to_string(), vec!["c.txt".to_string()]),
        ],
        "{text}"
    );
    assert!(!text.contains(".streetrace"), "the sandbox's placeholder was journaled: {text}");

    // A replay makes each branch's file again.
    for name in ["a.txt", "b.txt", "c.txt"] {
        std::fs::remove_file(dir.join(name)).unwrap();
    }
    let replay = run_with_journal(&path, &dir, serving(Mode::Replay, &text, &dir, None)).await;
    assert_eq!(replay.status, RunStatus::Completed, "{:?}", replay.error);
    assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "a\n");
    assert_eq!(std::fs::read_to_string(dir.join("b.txt")).unwrap(), "b\n");

    // Going back in time undoes them all, then the run puts them back.
    let travel = serving(Mode::Travel, &text, &dir, None);
    travel.rewind_files().unwrap();
    assert!(!dir.join("a.txt").exists() && !dir.join("b.txt").exists() && !dir.join("c.txt").exists());
    let again = run_with_journal(&path, &dir, travel).await;
    assert_eq!(again.status, RunStatus::Completed, "{:?}", again.error);
    assert_eq!(std::fs::read_to_string(dir.join("c.txt")).unwrap(), "c");
}

/// The branch index of each event a block's branches emitted, in order
/// (their threads are numbered in branch order).
fn branch_order(events: &[Event]) -> Vec<u32> {
    let ids: Vec<u32> = events.iter().filter_map(|e| e.path.iter().find_map(|p| branch_of(p))).collect();
    let first = ids.iter().copied().min().unwrap_or(0);
    ids.into_iter().map(|id| id - first).collect()
}

#[tokio::test]
async fn a_resumed_run_keeps_a_finished_blocks_order_and_never_writes_it_again() {
    let dir = work_dir("journal-resume-order");
    let path = dir.join("w.sr");
    std::fs::write(
        &path,
        r#"tool fs = builtin streetrace.fs

flow main:
    parallel do
        $a = fs.write_file("a.txt", "a")
        $b = fs.write_file("b.txt", "b")
    end
    $c = fs.write_file("c.txt", $a + $b)
    return "done"
"#,
    )
    .unwrap();
    let journal_path = work_dir("journal-resume-order-journal").join("run.jsonl");
    let live = run(&path, &dir, common::recording(&journal_path, &dir)).await;
    assert_eq!(live.outcome.status, RunStatus::Completed, "{:?}", live.outcome.error);
    let live_order = branch_order(&live.events);
    assert!(live_order.contains(&0) && live_order.contains(&1), "{live_order:?}");

    // The journal of a run killed after the block: its order is reversed
    // (an order the resumed run would not come to by itself).
    let text = std::fs::read_to_string(&journal_path).unwrap();
    let mut kept = Vec::new();
    for mut line in lines(&text) {
        if line["kind"] == "tool_start" && line["args"]["path"] == "c.txt" {
            break;
        }
        if line["kind"] == "interleave" {
            let count = |branch| live_order.iter().filter(|&&b| b == branch).count();
            line["order"] = json!([[1, count(1)], [0, count(0)]]);
        }
        kept.push(line.to_string());
    }
    let cut = kept.join("\n") + "\n";
    assert!(cut.contains("\"interleave\""));
    let expected: Vec<u32> = [1]
        .repeat(live_order.iter().filter(|&&b| b == 1).count())
        .into_iter()
        .chain([0].repeat(live_order.iter().filter(|&&b| b == 0).count()))
        .collect();

    let resumed_path = journal_path.with_file_name("resumed.jsonl");
    let resumed = run(&path, &dir, serving(Mode::Resume, &cut, &dir, Some(&resumed_path))).await;
    assert_eq!(resumed.outcome.status, RunStatus::Completed, "{:?}", resumed.outcome.error);
    assert_eq!(branch_order(&resumed.events), expected, "the resume emitted the block in another order");
    let journaled = std::fs::read_to_string(&resumed_path).unwrap();
    let interleaves: Vec<Value> = lines(&journaled).into_iter().filter(|l| l["kind"] == "interleave").collect();
    assert_eq!(interleaves.len(), 1, "the resume wrote the block's order again: {interleaves:?}");
    assert_eq!(std::fs::read_to_string(dir.join("c.txt")).unwrap(), "wrote 1 byteswrote 1 bytes");

    // A replay of the final journal emits the same order again.
    let replay = run(&path, &dir, serving(Mode::Replay, &journaled, &dir, None)).await;
    assert_eq!(replay.outcome.status, RunStatus::Completed, "{:?}", replay.outcome.error);
    assert_eq!(branch_order(&replay.events), expected);
}

#[tokio::test]
async fn a_call_cut_off_by_a_crash_keeps_its_file_change_in_the_journal() {
    let dir = work_dir("journal-cut-off");
    let path = dir.join("w.sr");
    std::fs::write(
        &path,
        "tool fs = builtin streetrace.fs\n\nflow main:\n    $a = fs.write_file(\"out/a.txt\", \"written once\")\n    \
         $b = fs.read_file(\"out/a.txt\")\n    return $b\n",
    )
    .unwrap();
    let journal_path = work_dir("journal-cut-off-journal").join("run.jsonl");
    let live = run_with_journal(&path, &dir, common::recording(&journal_path, &dir)).await;
    assert_eq!(live.status, RunStatus::Completed, "{:?}", live.error);

    // Killed during the write: the file is written, its `tool` line is not.
    let text = std::fs::read_to_string(&journal_path).unwrap();
    let start = text.lines().position(|l| l.contains(r#""kind":"tool_start""#)).unwrap();
    let cut: String = text.lines().take(start + 1).flat_map(|l| [l, "\n"]).collect();
    let resumed_path = journal_path.with_file_name("resumed.jsonl");
    let resumed = run_with_journal(&path, &dir, serving(Mode::Resume, &cut, &dir, Some(&resumed_path))).await;
    assert_eq!(resumed.status, RunStatus::Completed, "{:?}", resumed.error);
    assert_eq!(resumed.result, Some(json!("written once")));

    // A replay of the final journal, in a directory without the file, makes it.
    let journaled = std::fs::read_to_string(&resumed_path).unwrap();
    std::fs::remove_dir_all(dir.join("out")).unwrap();
    let replay = run_with_journal(&path, &dir, serving(Mode::Replay, &journaled, &dir, None)).await;
    assert_eq!(replay.status, RunStatus::Completed, "{:?}", replay.error);
    assert_eq!(std::fs::read_to_string(dir.join("out/a.txt")).unwrap(), "written once");

    // Going back in time undoes it too: before the run, there was no `out`.
    let travel = serving(Mode::Travel, &journaled, &dir, None);
    travel.rewind_files().unwrap();
    assert!(!dir.join("out").exists(), "the cut-off call's directory was not undone");
}

/// Found by `cargo xtask simulate` (seed 20261505): killed after an append
/// changed its file but before its result was journaled, a resume that
/// retries the append appended twice.
#[tokio::test]
async fn an_append_cut_off_by_a_crash_and_retried_appends_once() {
    let dir = work_dir("journal-cut-off-append");
    let path = dir.join("w.sr");
    std::fs::write(
        &path,
        "tool fs = builtin streetrace.fs\n\nflow main:\n    fs.append_to_file(\"a.txt\", \"once\")\n    \
         fs.append_to_file(\"a.txt\", \" again\")\n    $b = fs.read_file(\"a.txt\")\n    return $b\n",
    )
    .unwrap();
    let journal_path = work_dir("journal-cut-off-append-journal").join("run.jsonl");
    let live = run_with_journal(&path, &dir, common::recording(&journal_path, &dir)).await;
    assert_eq!(live.result, Some(json!("once again")), "{:?}", live.error);

    // Killed during the first append: the file has it, the journal has its
    // `tool_start` (and the blob of what it wrote), not its `tool` line.
    let text = std::fs::read_to_string(&journal_path).unwrap();
    let start = text.lines().position(|l| l.contains(r#""kind":"tool_start""#)).unwrap();
    let cut: String = text.lines().take(start + 1).flat_map(|l| [l, "\n"]).collect();
    std::fs::write(dir.join("a.txt"), "once").unwrap();
    let resumed_path = journal_path.with_file_name("resumed.jsonl");
    let retry = Arc::new(sr_runtime::in_doubt::Always(sr_runtime::in_doubt::Decision::Retry));
    let journal = Arc::into_inner(serving(Mode::Resume, &cut, &dir, Some(&resumed_path))).unwrap();
    let resumed = run_with_journal(&path, &dir, Arc::new(journal.deciding("test", retry))).await;
    assert_eq!(resumed.status, RunStatus::Completed, "{:?}", resumed.error);
    assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "once again", "the append was made twice");
    assert_eq!(resumed.result, Some(json!("once again")));
}

#[tokio::test]
async fn a_command_cut_off_by_a_crash_keeps_its_file_change_in_the_journal() {
    if !bubblewrap_or_skip("the cli tool") {
        return;
    }
    let dir = work_dir("journal-cut-off-cli");
    std::fs::write(dir.join("old.txt"), "there before").unwrap();
    let path = dir.join("w.sr");
    std::fs::write(
        &path,
        r#"tool cli = builtin streetrace.cli

flow main:
    $a = cli.execute_cli_command(["sh", "-c", "echo made > made.txt && chmod 700 made.txt && rm old.txt"])
    on failure:
        return "skipped"
    return "done"
"#,
    )
    .unwrap();
    let journal_path = work_dir("journal-cut-off-cli-journal").join("run.jsonl");
    let live = run_with_journal(&path, &dir, common::recording(&journal_path, &dir)).await;
    assert_eq!(live.status, RunStatus::Completed, "{:?}", live.error);

    // Killed during the command: it ran, its `tool` line is missing. The
    // resumed run does not repeat it (the decision is `skip`).
    let text = std::fs::read_to_string(&journal_path).unwrap();
    let start = text.lines().position(|l| l.contains(r#""kind":"tool_start""#)).unwrap();
    let cut: String = text.lines().take(start + 1).flat_map(|l| [l, "\n"]).collect();
    let resumed_path = journal_path.with_file_name("resumed.jsonl");
    let resumed = run_with_journal(&path, &dir, serving(Mode::Resume, &cut, &dir, Some(&resumed_path))).await;
    assert_eq!(resumed.result, Some(json!("skipped")), "{:?}", resumed.error);

    // A replay of the final journal, from the files the run started with,
    // ends with the command's files.
    let journaled = std::fs::read_to_string(&resumed_path).unwrap();
    std::fs::remove_file(dir.join("made.txt")).unwrap();
    std::fs::write(dir.join("old.txt"), "there before").unwrap();
    let replay = run_with_journal(&path, &dir, serving(Mode::Replay, &journaled, &dir, None)).await;
    assert_eq!(replay.result, Some(json!("skipped")), "{:?}", replay.error);
    assert_eq!(std::fs::read_to_string(dir.join("made.txt")).unwrap(), "made\n");
    assert_eq!(std::fs::metadata(dir.join("made.txt")).unwrap().permissions().mode() & 0o777, 0o700);
    assert!(!dir.join("old.txt").exists(), "the command's removal was not journaled");
}

/// Found by `cargo xtask simulate` (seed 20261393): a branch's command that
/// the live run cancelled when a sibling failed the `parallel` block was
/// taken by a resumed run for a call a crash cut off (in doubt).
#[tokio::test]
async fn a_call_its_failed_block_cancelled_is_cancelled_again_on_resume() {
    if !bubblewrap_or_skip("the cli tool") {
        return;
    }
    let dir = work_dir("journal-cancelled-branch");
    let path = dir.join("w.sr");
    std::fs::write(
        &path,
        r#"tool cli = builtin streetrace.cli
tool fs = builtin streetrace.fs

flow main:
    parallel do
        $c = cli.execute_cli_command(["sh", "-c", "sleep 5; echo ran >> ran.txt"])
        fs.write_file("rc.txt", str($c.return_code))
    end
    on failure:
        fs.write_file("failed.txt", "failed")
    fs.write_file("after.txt", "after")
    return "done"
"#,
    )
    .unwrap();
    let journal_path = work_dir("journal-cancelled-branch-journal").join("run.jsonl");
    let live = run_with_journal(&path, &dir, common::recording(&journal_path, &dir)).await;
    assert_eq!(live.result, Some(json!("done")), "{:?}", live.error);

    // Killed before `after.txt`: the block, its cancelled command and the
    // failure handler are journaled.
    let text = std::fs::read_to_string(&journal_path).unwrap();
    let last = text.lines().position(|l| l.contains(r#""after.txt""#)).unwrap();
    let cut: String = text.lines().take(last).flat_map(|l| [l, "\n"]).collect();
    let resumed_path = journal_path.with_file_name("resumed.jsonl");
    let resumed = run_with_journal(&path, &dir, serving(Mode::Resume, &cut, &dir, Some(&resumed_path))).await;
    assert_eq!(resumed.result, Some(json!("done")), "{:?}", resumed.error);
    let journaled = std::fs::read_to_string(&resumed_path).unwrap();
    assert!(!journaled.contains(r#""kind":"in_doubt""#), "the cancelled command was taken for one a crash cut off");
}

/// Runs a block of two file writes live (the second writes `second`, an
/// expression) and gives its journal as if the live run had cancelled the
/// first branch before its write (which comes first is the scheduler's).
async fn recorded_without_first_branch(
    name: &str,
    second: &str,
) -> (std::path::PathBuf, std::path::PathBuf, common::Run, String) {
    let dir = work_dir(name);
    let path = dir.join("w.sr");
    let source = format!(
        "tool fs = builtin streetrace.fs\n\nflow main:\n    parallel do\n        fs.write_file(\"one.txt\", \"1\")\n        \
         fs.write_file(\"two.txt\", {second})\n    end\n    return \"done\"\n"
    );
    std::fs::write(&path, source).unwrap();
    let journal_path = work_dir(&format!("{name}-journal")).join("run.jsonl");
    let live = run(&path, &dir, common::recording(&journal_path, &dir)).await;
    let text = std::fs::read_to_string(&journal_path).unwrap();
    let cut = text.lines().filter(|l| !l.contains(r#""at":"main/0.0""#)).flat_map(|l| [l, "\n"]).collect();
    (dir, path, live, cut)
}

/// Found by `cargo xtask simulate` (seed 1795939047): a branch that the live
/// run cancelled (a sibling failed) before it made its first effect reached
/// that effect in a replay and diverged, hiding the sibling's failure; a
/// resumed run made it live, an effect the recorded run never made.
#[tokio::test]
async fn a_branch_cancelled_before_its_effect_waits_to_be_cancelled_again() {
    let (dir, path, live, cut) = recorded_without_first_branch("journal-cut-short-branch", "$missing").await;
    let failure = live.outcome.error.expect("the second branch fails");
    assert!(failure.message.contains("$missing"), "{}", failure.message);
    assert!(cut.contains(r#""kind":"interleave""#), "{cut}");
    let _ = std::fs::remove_file(dir.join("one.txt"));

    for mode in [Mode::Replay, Mode::Resume] {
        let served = run(&path, &dir, serving(mode, &cut, &dir, None)).await;
        let error = served.outcome.error.expect("the sibling fails again");
        assert_eq!((error.kind, error.message), (failure.kind, failure.message.clone()), "{mode:?}");
        assert!(!dir.join("one.txt").exists(), "{mode:?}: the cancelled branch made its write");
    }
}

/// Found by `cargo xtask simulate` (seed 20261863): a block whose first
/// branch failed before any branch emitted an event had no `interleave`
/// line, so a replay could not tell that the block ended there: a sibling
/// the failure cancelled before it drew `random()` (the live run never
/// polled it) reached that draw in a replay whose failing branch took longer
/// (an MCP tool) and diverged instead of being cancelled again.
#[tokio::test]
async fn a_block_that_failed_before_any_event_is_journaled_as_ended() {
    let dir = work_dir("journal-silent-block");
    let path = dir.join("w.sr");
    let source = "tool fs = builtin streetrace.fs\n\nflow main:\n    parallel do\n        \
                  fs.write_file(\"two.txt\", $missing)\n        $r = random()\n    end\n    return \"done\"\n";
    std::fs::write(&path, source).unwrap();
    let journal_path = work_dir("journal-silent-block-journal").join("run.jsonl");
    let live = run(&path, &dir, common::recording(&journal_path, &dir)).await;
    let failure = live.outcome.error.expect("the first branch fails");
    assert!(failure.message.contains("$missing"), "{}", failure.message);
    let text = std::fs::read_to_string(&journal_path).unwrap();
    let block = lines(&text).into_iter().find(|l| l["kind"] == "interleave").expect("the block's line");
    assert_eq!((block["at"].clone(), block["order"].clone()), (json!("main"), json!([])), "{text}");
    for mode in [Mode::Replay, Mode::Resume] {
        let served = run(&path, &dir, serving(mode, &text, &dir, None)).await;
        let error = served.outcome.error.expect("the branch fails again");
        assert_eq!((error.kind, error.message), (failure.kind, failure.message.clone()), "{mode:?}");
    }
}

/// The other side of the test above: when no sibling fails, a branch that
/// reaches an effect its recording lacks diverged, and says so (no hang).
#[tokio::test]
async fn a_branch_missing_effects_of_a_block_that_ended_well_diverges() {
    let (dir, path, live, cut) = recorded_without_first_branch("journal-missing-branch", "\"2\"").await;
    assert_eq!(live.outcome.result, Some(json!("done")), "{:?}", live.outcome.error);
    for mode in [Mode::Replay, Mode::Resume] {
        let served =
            tokio::time::timeout(std::time::Duration::from_secs(20), run(&path, &dir, serving(mode, &cut, &dir, None)))
                .await
                .expect("the replay ends");
        let error = served.outcome.error.expect("the first branch diverges");
        assert_eq!(error.kind, ErrorKind::Diverged, "{mode:?}: {}", error.message);
        assert!(error.message.contains("thread main/0.0"), "{mode:?}: {}", error.message);
    }
}

#[tokio::test]
async fn past_a_limit_the_run_says_so_and_replays_refuse_rather_than_lose_files() {
    let dir = work_dir("journal-limits");
    let path = dir.join("w.sr");
    std::fs::write(
        &path,
        "tool fs = builtin streetrace.fs\n\nflow main:\n    $a = fs.write_file(\"small.txt\", \"tiny\")\n    \
         $b = fs.write_file(\"big.txt\", \"more than sixteen bytes\")\n    return \"done\"\n",
    )
    .unwrap();
    let limits = Limits { file_bytes: 16, ..Limits::default() };
    let journal_path = work_dir("journal-limits-journal").join("run.jsonl");
    let live = run(&path, &dir, recording_within(&journal_path, &dir, limits)).await;
    assert_eq!(live.outcome.status, RunStatus::Completed, "{:?}", live.outcome.error);
    let said = warnings(&live.events);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("big.txt") && said[0].contains("16 bytes per file (STREETRACE_JOURNAL_FILE_BYTES)"),
        "{said:?}"
    );
    let text = std::fs::read_to_string(&journal_path).unwrap();

    // A replay stops at the call whose file it cannot make, naming it.
    std::fs::remove_file(dir.join("big.txt")).unwrap();
    std::fs::remove_file(dir.join("small.txt")).unwrap();
    let replay = run(&path, &dir, served_within(Mode::Replay, &text, &dir, limits)).await;
    assert_eq!(replay.outcome.status, RunStatus::Failed);
    let error = replay.outcome.error.unwrap();
    assert_eq!(error.kind, ErrorKind::Diverged);
    assert!(error.message.contains("big.txt") && error.message.contains("hash only"), "{}", error.message);
    assert_eq!(warnings(&replay.events), said, "a replay says what the live run said");
    assert_eq!(std::fs::read_to_string(dir.join("small.txt")).unwrap(), "tiny");
    assert!(!dir.join("big.txt").exists());

    // Going back in time refuses, and deletes nothing.
    std::fs::write(dir.join("big.txt"), "more than sixteen bytes").unwrap();
    let travel = served_within(Mode::Travel, &text, &dir, limits);
    let refused = travel.rewind_files().unwrap_err().to_string();
    assert!(refused.contains("big.txt"), "{refused}");
    assert!(dir.join("small.txt").exists() && dir.join("big.txt").exists(), "a refused rewind deleted files");

    // Past the entries limit the call's changes are unknown: said, then refused.
    let tight = Limits { entries: 1, ..Limits::default() };
    let journal_path = journal_path.with_file_name("entries.jsonl");
    let many = dir.join("many.sr");
    std::fs::write(
        &many,
        "tool cli = builtin streetrace.cli\n\nflow main:\n    $a = cli.execute_cli_command([\"true\"])\n    return \"done\"\n",
    )
    .unwrap();
    if !bubblewrap_or_skip("the cli tool") {
        return;
    }
    let live = run(&many, &dir, recording_within(&journal_path, &dir, tight)).await;
    assert_eq!(live.outcome.status, RunStatus::Completed, "{:?}", live.outcome.error);
    assert!(warnings(&live.events).iter().any(|w| w.contains("STREETRACE_JOURNAL_ENTRIES")), "{:?}", live.events);
    let text = std::fs::read_to_string(&journal_path).unwrap();
    let replay = run(&many, &dir, served_within(Mode::Replay, &text, &dir, tight)).await;
    assert_eq!(replay.outcome.status, RunStatus::Failed);
    assert!(replay.outcome.error.unwrap().message.contains("more than 1 entries"));
}

#[tokio::test]
async fn permission_bits_and_symlinks_come_back_and_a_fifo_is_never_opened() {
    if !bubblewrap_or_skip("the cli tool") {
        return;
    }
    let dir = work_dir("journal-modes");
    let path = dir.join("w.sr");
    std::fs::write(
        &path,
        r#"tool cli = builtin streetrace.cli

flow main:
    $a = cli.execute_cli_command(["sh", "-c", "printf 'echo hi' > run.sh && chmod 755 run.sh && ln -s run.sh link && ln -s /etc/passwd out && mkfifo pipe"])
    return $a.return_code
"#,
    )
    .unwrap();
    let journal_path = work_dir("journal-modes-journal").join("run.jsonl");
    let live = run(&path, &dir, common::recording(&journal_path, &dir)).await;
    assert_eq!(live.outcome.status, RunStatus::Completed, "{:?}", live.outcome.error);
    assert_eq!(live.outcome.result, Some(json!(0)));
    let said = warnings(&live.events);
    assert!(said.iter().any(|w| w.contains("pipe") && w.contains("FIFO")), "{said:?}");
    let text = std::fs::read_to_string(&journal_path).unwrap();
    assert!(!text.contains("root:"), "a symlink out of the work directory was followed");

    for name in ["run.sh", "link", "out", "pipe"] {
        std::fs::remove_file(dir.join(name)).unwrap();
    }
    let replay = run(&path, &dir, serving(Mode::Replay, &text, &dir, None)).await;
    assert_eq!(replay.outcome.status, RunStatus::Completed, "{:?}", replay.outcome.error);
    let mode = std::fs::metadata(dir.join("run.sh")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755, "the script lost its executable bits");
    assert_eq!(std::fs::read_link(dir.join("link")).unwrap(), Path::new("run.sh"));
    assert_eq!(std::fs::read_link(dir.join("out")).unwrap(), Path::new("/etc/passwd"));
    assert!(!dir.join("pipe").exists(), "a FIFO is not the journal's");

    // Going back in time removes the links themselves, never their targets.
    let travel = serving(Mode::Travel, &text, &dir, None);
    travel.rewind_files().unwrap();
    assert!(dir.join("run.sh").symlink_metadata().is_err() && dir.join("link").symlink_metadata().is_err());
    assert!(dir.join("out").symlink_metadata().is_err());
    assert!(Path::new("/etc/passwd").exists());
}
