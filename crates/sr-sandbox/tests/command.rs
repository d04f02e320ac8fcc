//! The cli tool's command sandbox, attacked: the workload's files, `.git` and
//! `.streetrace` against every way a command could change or create them, the
//! runtime's state inside the work directory, and the memory of a process tree.
#![allow(clippy::unwrap_used)]

mod support;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sr_sandbox::command::{Caps, CommandOutput, Placement, Status, run_command};
use sr_sandbox::{Bubblewrap, Limits};
use support::require;

fn bubblewrap() -> bool {
    require(Bubblewrap::available(), "bubblewrap (bwrap, prlimit)")
}

fn sandbox(work_dir: &Path, read_only: &[&str], hidden: &[PathBuf]) -> Placement {
    Placement::Sandbox {
        work_dir: work_dir.to_path_buf(),
        read_only: read_only.iter().map(PathBuf::from).collect(),
        hidden: hidden.to_vec(),
        network: false,
        limits: Limits::default(),
    }
}

async fn sh(placement: &Placement, script: &str) -> CommandOutput {
    let caps = Caps { timeout: Duration::from_secs(30), output_bytes: 1 << 16 };
    run_command(placement, "sh", &["-c".to_string(), script.to_string()], caps).await.unwrap()
}

/// Every file, directory and symlink under `dir`: its kind, mode and bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (String, u32, Vec<u8>)> {
    let mut found = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        let Ok(meta) = path.symlink_metadata() else { continue };
        let mode = meta.permissions().mode();
        let relative = path.strip_prefix(dir).unwrap().to_path_buf();
        let entry = if meta.is_symlink() {
            ("link".to_string(), mode, std::fs::read_link(&path).unwrap().into_os_string().into_encoded_bytes())
        } else if meta.is_dir() {
            pending.extend(std::fs::read_dir(&path).unwrap().map(|entry| entry.unwrap().path()));
            ("dir".to_string(), mode, Vec::new())
        } else {
            ("file".to_string(), mode, std::fs::read(&path).unwrap())
        };
        found.insert(relative, entry);
    }
    found
}

/// What a command may do to a path: each line is a shell script with `{p}` for
/// the path.
const ATTACKS: &[&str] = &[
    "echo pwned > {p}",
    "echo pwned >> {p}",
    ": > {p}",
    "rm -rf {p}",
    "mv {p} moved && echo pwned > {p}",
    "mv moved-dir {p}",
    "mkdir -p moved-dir && mv {p} moved-dir/",
    "chmod 777 {p}",
    "touch {p}",
    "ln -sfn /etc/passwd {p}",
    "mkdir -p {p}/hooks && echo pwned > {p}/hooks/pre-commit && chmod +x {p}/hooks/pre-commit",
    "echo pwned > {p}/hooks/pre-commit; chmod +x {p}/hooks/pre-commit",
    "mkdir -p {p}/agents && echo pwned > {p}/agents/x.sr",
    "mv $(dirname {p}) parent-moved && mkdir -p $(dirname {p}) && echo pwned > {p}",
    "rm -rf $(dirname {p}); mkdir -p $(dirname {p}) && echo pwned > {p}",
    "python3 -c \"import os; os.replace('notes.txt', '{p}')\"",
    "python3 -c \"import os; os.link('{p}', 'hard'); open('hard', 'w').write('pwned')\"",
];

#[tokio::test]
async fn protected_paths_survive_every_attack() {
    if !bubblewrap() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let root = work.path();
    std::fs::write(root.join("main.sr"), "import lib/tools.sr\nagent main:\n    instruction x\n").unwrap();
    std::fs::create_dir_all(root.join("lib")).unwrap();
    std::fs::write(root.join("lib/tools.sr"), "tool fs = builtin streetrace.fs\n").unwrap();
    std::fs::write(root.join("lib/notes.md"), "free to change").unwrap();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(root.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
    let protected = ["main.sr", "lib/tools.sr", ".git", ".streetrace"];
    let placement = sandbox(root, &protected, &[]);
    let before: Vec<_> = protected.iter().map(|path| snapshot(&root.join(path))).collect();

    let mut succeeded = Vec::new();
    for path in protected {
        for attack in ATTACKS {
            std::fs::write(root.join("notes.txt"), "notes").unwrap();
            let script = attack.replace("{p}", path);
            if sh(&placement, &script).await.status == Status::Exited(0) {
                succeeded.push(script);
            }
        }
    }
    for (path, before) in protected.iter().zip(&before) {
        assert_eq!(&snapshot(&root.join(path)), before, "{path} changed");
    }
    assert!(!root.join(".streetrace").exists(), "a missing protected directory was left behind or created");
    assert!(!root.join(".git/hooks/pre-commit").exists());
    // Each attack ends by touching the protected path, so each must fail.
    assert!(succeeded.is_empty(), "{succeeded:#?}");

    // The rest of the work directory is as writable as ever, beside and below them.
    std::fs::write(root.join("lib/notes.md"), "free to change").unwrap();
    let output = sh(&placement, "echo made > made.txt && echo more >> lib/notes.md && rm notes.txt && ls -A").await;
    assert_eq!(output.status, Status::Exited(0), "{output:?}");
    assert_eq!(std::fs::read_to_string(root.join("lib/notes.md")).unwrap(), "free to changemore\n");
    assert_eq!(std::fs::read_to_string(root.join("made.txt")).unwrap(), "made\n");
    assert!(output.stdout.text.contains("main.sr"), "{output:?}");
}

#[tokio::test]
async fn a_protected_symlink_protects_its_target() {
    if !bubblewrap() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let root = work.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/real.sr"), "original").unwrap();
    std::os::unix::fs::symlink("src/real.sr", root.join("main.sr")).unwrap();
    let placement = sandbox(root, &["main.sr"], &[]);
    for script in
        ["echo pwned > main.sr", "echo pwned > src/real.sr", "mv src src2 && mkdir src && echo x > src/real.sr"]
    {
        let output = sh(&placement, script).await;
        assert_ne!(output.status, Status::Exited(0), "{script}: {output:?}");
    }
    assert_eq!(std::fs::read_to_string(root.join("src/real.sr")).unwrap(), "original");
}

/// In a work directory nobody may write to (here: immutable, which binds root
/// too), a missing protected path needs no placeholder: commands still run, and
/// cannot create it either.
#[tokio::test]
async fn a_missing_path_nobody_can_create_needs_no_placeholder() {
    if !bubblewrap() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let root = work.path();
    std::fs::write(root.join("notes.txt"), "notes").unwrap();
    let immutable = std::process::Command::new("chattr").arg("+i").arg(root).status().is_ok_and(|s| s.success());
    if !immutable {
        eprintln!(
            "\n!!! SKIPPED: chattr +i is not possible here (needs root and a file system that supports it) !!!\n"
        );
        return;
    }
    let placement = sandbox(root, &[".streetrace"], &[root.join("recording.jsonl")]);
    let listing = sh(&placement, "ls -A").await;
    let create = sh(&placement, "mkdir .streetrace").await;
    std::process::Command::new("chattr").arg("-i").arg(root).status().unwrap();
    assert_eq!(listing.status, Status::Exited(0), "{listing:?}");
    assert_eq!(listing.stdout.text, "notes.txt\n");
    assert_ne!(create.status, Status::Exited(0), "{create:?}");
    assert!(!root.join(".streetrace").exists());
}

/// The state directory where `sr run` in `~` puts it, with the files the runtime
/// keeps there, and a recording not written yet.
fn state_inside(root: &Path) -> (PathBuf, Vec<PathBuf>) {
    let state = root.join(".local/state/streetrace/project-1234");
    std::fs::create_dir_all(state.join("journal/session-1")).unwrap();
    std::fs::create_dir_all(state.join("leases")).unwrap();
    std::fs::write(state.join("sessions.sqlite"), "SQLite format 3").unwrap();
    std::fs::write(state.join("journal/session-1/run-1.jsonl"), "{\"secret\": true}\n").unwrap();
    // What launch passes: the state directory, the database in it, the recording.
    let hidden = vec![state.clone(), state.join("sessions.sqlite"), root.join("recording.jsonl")];
    (state, hidden)
}

#[tokio::test]
async fn the_state_inside_the_work_dir_is_hidden_and_commands_still_work() {
    if !bubblewrap() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let root = work.path();
    let (state, hidden) = state_inside(root);
    let before = snapshot(&state);
    let placement = sandbox(root, &[], &hidden);

    let output = sh(&placement, "echo hello > made.txt && cat made.txt && ls -A").await;
    assert_eq!(output.status, Status::Exited(0), "ordinary commands work: {output:?}");
    assert!(output.stdout.text.starts_with("hello\n"), "{output:?}");
    assert_eq!(std::fs::read_to_string(root.join("made.txt")).unwrap(), "hello\n");

    let output = sh(&placement, "find /work; ls -A .local/state/streetrace/project-1234").await;
    assert_eq!(output.status, Status::Exited(0), "{output:?}");
    for name in ["sessions.sqlite", "journal", "run-1.jsonl", "leases"] {
        assert!(!output.stdout.text.contains(name), "the command saw {name}: {}", output.stdout.text);
    }

    let attacks = [
        "cat .local/state/streetrace/project-1234/sessions.sqlite",
        "echo forged > .local/state/streetrace/project-1234/journal.jsonl",
        "mv .local .local2",
        "mv .local/state/streetrace .local/moved",
        "mv .local/state/streetrace/project-1234 .local/state/streetrace/other",
        "rm -rf .local",
        "ln -s /etc/passwd recording.jsonl",
        "echo forged > recording.jsonl",
        "cat recording.jsonl",
    ];
    for attack in attacks {
        let output = sh(&placement, attack).await;
        assert_ne!(output.status, Status::Exited(0), "{attack}: {output:?}");
    }
    assert_eq!(snapshot(&state), before, "the state changed");
    assert!(!root.join("recording.jsonl").exists() && !root.join("recording.jsonl").is_symlink());
    assert!(!root.join(".local2").exists() && !root.join(".local/moved").exists());
}

#[tokio::test]
async fn a_placeholder_lasts_while_any_command_needs_it_and_keeps_what_the_host_put_there() {
    if !bubblewrap() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let root = work.path().to_path_buf();
    let placement = sandbox(&root, &[".streetrace"], &[]);
    let slow = {
        let placement = placement.clone();
        tokio::spawn(async move { sh(&placement, "sleep 2; mkdir .streetrace/late").await })
    };
    let started = Instant::now();
    while !root.join(".streetrace").exists() {
        assert!(started.elapsed() < Duration::from_secs(10), "no placeholder appeared");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A second command ends first: the first still needs the placeholder.
    let output = sh(&placement, "mkdir .streetrace/x").await;
    assert_ne!(output.status, Status::Exited(0), "{output:?}");
    assert!(root.join(".streetrace").is_dir(), "the placeholder went while a command still ran");
    let output = slow.await.unwrap();
    assert_ne!(output.status, Status::Exited(0), "{output:?}");
    assert!(!root.join(".streetrace").exists(), "the placeholder was left behind");

    // What the host puts in a placeholder meanwhile is kept.
    let slow = {
        let placement = placement.clone();
        tokio::spawn(async move { sh(&placement, "sleep 1").await })
    };
    while !root.join(".streetrace").exists() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    std::fs::write(root.join(".streetrace/config"), "the user's").unwrap();
    slow.await.unwrap();
    assert_eq!(std::fs::read_to_string(root.join(".streetrace/config")).unwrap(), "the user's");
}

/// The sum of resident anonymous and shared memory of this process's
/// descendants, read from the host's `/proc` (independently of the sandbox's
/// own watcher).
fn descendants_memory() -> u64 {
    let mut parent = BTreeMap::new();
    let mut memory = BTreeMap::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else { continue };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .map(|value| value.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap_or(0))
        };
        parent.insert(pid, field("PPid:").unwrap_or(0) as u32);
        memory.insert(pid, (field("RssAnon:").unwrap_or(0) + field("RssShmem:").unwrap_or(0)) << 10);
    }
    let me = std::process::id();
    let descends = |mut pid: u32| {
        while let Some(&up) = parent.get(&pid) {
            if up == me {
                return true;
            }
            pid = up;
        }
        false
    };
    memory.iter().filter(|(pid, _)| descends(**pid)).map(|(_, bytes)| bytes).sum()
}

const CHILDREN: &str = "import os, sys, time\n\
    count, size = int(sys.argv[1]), int(sys.argv[2]) << 20\n\
    pids = []\n\
    for _ in range(count):\n\
    \x20   pid = os.fork()\n\
    \x20   if pid == 0:\n\
    \x20       block = b'x' * size\n\
    \x20       time.sleep(float(sys.argv[3]))\n\
    \x20       os._exit(0)\n\
    \x20   pids.append(pid)\n\
    for pid in pids:\n\
    \x20   os.waitpid(pid, 0)\n\
    print('done')\n";

/// Runs `CHILDREN` with `count` children of `mib` MiB each under a 512 MiB
/// limit, sampling the tree's memory meanwhile; the output and the peak seen.
async fn children(count: u32, mib: u32, seconds: f64) -> (CommandOutput, u64) {
    let work = tempfile::tempdir().unwrap();
    let placement = Placement::Sandbox {
        work_dir: work.path().to_path_buf(),
        read_only: Vec::new(),
        hidden: Vec::new(),
        network: false,
        limits: Limits { memory_bytes: 512 << 20, ..Limits::default() },
    };
    let args: Vec<String> =
        ["-c", CHILDREN, &count.to_string(), &mib.to_string(), &seconds.to_string()].map(String::from).to_vec();
    let caps = Caps { timeout: Duration::from_secs(60), output_bytes: 1 << 16 };
    let command = run_command(&placement, "python3", &args, caps);
    tokio::pin!(command);
    let mut peak = 0;
    loop {
        tokio::select! {
            output = &mut command => return (output.unwrap(), peak),
            () = tokio::time::sleep(Duration::from_millis(2)) => peak = peak.max(descendants_memory()),
        }
    }
}

#[tokio::test]
async fn a_process_tree_over_the_memory_limit_is_stopped_near_it() {
    if !bubblewrap() {
        return;
    }
    let started = Instant::now();
    let (output, peak) = children(6, 300, 30.0).await;
    assert_eq!(output.status, Status::MemoryExceeded { limit_bytes: 512 << 20 }, "{output:?}");
    assert_eq!(output.status.to_string(), "the sandbox used more than 512 MiB in all; it was stopped");
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    let mib = peak >> 20;
    eprintln!("peak of the tree: {mib} MiB");
    assert!(mib >= 300, "the tree never grew: the samples missed it ({mib} MiB)");
    // Alone it stops within a few MiB of the limit; on a loaded machine the
    // watcher may wake late, but never as late as the children's 1800 MiB.
    assert!(mib < 2 * 512, "the tree reached {mib} MiB under a 512 MiB limit");
}

/// A parent holding 200 MiB forks five children that only read it: their
/// resident memory adds up to 1200 MiB, but the pages are the same ones.
#[tokio::test]
async fn forked_copies_of_shared_memory_count_once() {
    if !bubblewrap() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let placement = Placement::Sandbox {
        work_dir: work.path().to_path_buf(),
        read_only: Vec::new(),
        hidden: Vec::new(),
        network: false,
        limits: Limits { memory_bytes: 512 << 20, ..Limits::default() },
    };
    let script = "import os, time\nblock = b'x' * (200 << 20)\npids = []\nfor _ in range(5):\n\
                  \x20   pid = os.fork()\n    if pid == 0:\n        time.sleep(1.5)\n        os._exit(len(block) & 1)\n\
                  \x20   pids.append(pid)\nprint(sum(os.waitpid(pid, 0)[1] for pid in pids))\n";
    let caps = Caps { timeout: Duration::from_secs(60), output_bytes: 1 << 16 };
    let args = ["-c".to_string(), script.to_string()];
    let command = run_command(&placement, "python3", &args, caps);
    tokio::pin!(command);
    let mut peak = 0;
    let output = loop {
        tokio::select! {
            output = &mut command => break output.unwrap(),
            () = tokio::time::sleep(Duration::from_millis(20)) => peak = peak.max(descendants_memory()),
        }
    };
    assert_eq!(output.status, Status::Exited(0), "{output:?}");
    assert_eq!(output.stdout.text, "0\n");
    assert!(peak >> 20 > 1000, "the children did not share the parent's pages: {} MiB", peak >> 20);
}

#[tokio::test]
async fn a_tree_within_the_memory_limit_is_left_alone() {
    if !bubblewrap() {
        return;
    }
    let (output, peak) = children(3, 100, 1.0).await;
    assert_eq!(output.status, Status::Exited(0), "{output:?}");
    assert_eq!(output.stdout.text, "done\n");
    assert!(peak >> 20 >= 250, "the children did not hold their memory: {} MiB", peak >> 20);
}
