//! Session ids become directories of the state directory: `launch` refuses
//! every id that breaks the id rule (`sr_runtime::ids`), for a new session and
//! for a resumed one, before anything is created anywhere.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use sr_hir::RootDatabase;
use sr_runtime::human::Unattended;
use sr_runtime::ids::{RULE, hostile};
use sr_runtime::launch::{LaunchError, LaunchSpec, Models, ResumeSpec, Storage, launch};
use sr_runtime::{RunOptions, compile};

#[test]
fn launch_refuses_hostile_session_ids_and_creates_nothing() {
    let dir = tempfile::Builder::new().prefix("sr-runtime-ids-").tempdir().unwrap();
    let top = dir.path();
    let work = top.join("a/b/work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("agent.sr"),
        "model main = openai/gpt-4o\nprompt p: \"\"\"x\"\"\"\nagent:\n    instruction p\n",
    )
    .unwrap();
    let program = compile::compile_path(&mut RootDatabase::default(), &work.join("agent.sr")).unwrap();
    let state = top.join("a/b/state");
    for id in hostile() {
        for resume in [false, true] {
            let mut storage = Storage::resolve(Some(&state), None, &work).unwrap();
            if resume {
                storage.resume = Some(ResumeSpec { session: id.clone(), ..ResumeSpec::default() });
            } else {
                storage.session = Some(id.clone());
            }
            let spec = LaunchSpec {
                program: program.clone(),
                message: "go".to_string(),
                work_dir: work.clone(),
                read_only: false,
                storage: Some(storage),
                models: Models::Live,
                options: RunOptions::default(),
                human: Arc::new(Unattended),
                in_doubt: sr_runtime::in_doubt::skip_all(),
            };
            let Err(error) = launch(spec) else { panic!("session {id:?} was launched") };
            let LaunchError::BadId(error) = error else { panic!("{error:?} is not a bad id") };
            let error = error.to_string();
            assert!(error.starts_with("session id ") && error.ends_with(RULE), "{error}");
        }
    }
    let mut made: Vec<_> = walk(top);
    made.sort();
    assert_eq!(made, ["a", "a/b", "a/b/work", "a/b/work/agent.sr"]);
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path.clone());
            }
            out.push(path.strip_prefix(dir).unwrap().display().to_string());
        }
    }
    out
}
