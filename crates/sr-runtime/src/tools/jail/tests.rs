use std::collections::BTreeMap;
use std::os::unix::fs::symlink;

use super::*;

/// The protected names, from the one table.
fn protected_names() -> impl Iterator<Item = &'static str> {
    crate::protected::NAMES.iter().map(|n| n.name)
}

fn temp() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("sr-jail-").tempdir().unwrap()
}

/// Every path under `dir` (symlinks not followed): a file's bytes, a
/// symlink's target, `dir` for a directory.
fn tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let kind = std::fs::symlink_metadata(&path).unwrap().file_type();
            let what = if kind.is_symlink() {
                format!("-> {}", std::fs::read_link(&path).unwrap().display())
            } else if kind.is_dir() {
                pending.push(path.clone());
                "dir".to_string()
            } else {
                String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned()
            };
            out.insert(path.strip_prefix(dir).unwrap().to_path_buf(), what);
        }
    }
    out
}

/// Every way the jail changes files, by name, but those in `skip`.
fn writes(jail: &Jail, relative: &Path, skip: &[&str]) -> Vec<(&'static str, io::Result<()>)> {
    let ops: [(&'static str, &dyn Fn() -> io::Result<()>); 4] = [
        ("write", &|| jail.open_write(relative, false).map(drop)),
        ("append", &|| jail.open_write(relative, true).map(drop)),
        ("create_dir_all", &|| jail.create_dir_all(relative)),
        ("remove_file", &|| jail.remove_file(relative)),
    ];
    ops.into_iter().filter(|(name, _)| !skip.contains(name)).map(|(name, op)| (name, op())).collect()
}

#[test]
fn paths_outside_the_root_are_refused() {
    let dir = temp();
    std::fs::create_dir_all(dir.path().join("inside")).unwrap();
    let jail = Jail::new(dir.path()).unwrap();
    assert_eq!(jail.relative_path("inside/new.txt").unwrap(), Path::new("inside/new.txt"));
    assert_eq!(jail.relative_path(&dir.path().canonicalize().unwrap().display().to_string()).unwrap(), Path::new("."));
    assert!(jail.relative_path("../escape").is_err());
    assert!(jail.relative_path("inside/../../escape").is_err());
    assert!(jail.relative_path("/etc/passwd").is_err());
    symlink("/etc", dir.path().join("link")).unwrap();
    let error = jail.open_read(Path::new("link/passwd")).err().unwrap();
    assert!(error.to_string().contains("outside the work directory"), "{error}");
}

/// A work directory holding a workload that imports a file, a repository
/// with a hook directory and a nested one, and what a model could have made
/// with a command: symlinks to each protected name and to the workload, and
/// a hard link to the workload.
fn protected_setup() -> (tempfile::TempDir, Jail) {
    let dir = temp();
    let root = dir.path();
    for (path, text) in [
        ("agent.sr", "import \"lib/helper.sr\"\n"),
        ("lib/helper.sr", "model main = openai/gpt-4o\n"),
        (".git/config", "[core]\n"),
        (".git/HEAD", "ref: refs/heads/main\n"),
        ("sub/.git/config", "[core]\n"),
        ("sub/plain.txt", "plain\n"),
    ] {
        std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
        std::fs::write(root.join(path), text).unwrap();
    }
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    for name in protected_names() {
        symlink(name, root.join(format!("link{name}"))).unwrap();
    }
    symlink("agent.sr", root.join("w.sr")).unwrap();
    symlink("lib", root.join("liblink")).unwrap();
    std::fs::hard_link(root.join("agent.sr"), root.join("hl.sr")).unwrap();
    let jail = Jail::new(root).unwrap().protect(&root.join("agent.sr")).protect(&root.join("lib/helper.sr"));
    (dir, jail)
}

/// Ways to spell one path: as it is, through `.` and `..`, absolute, with
/// its first component through a symlink (made by `protected_setup` for the
/// protected names) and in other letter cases.
fn spellings(root: &Path, path: &str) -> Vec<String> {
    let mut out = vec![path.to_string(), format!("./{path}"), format!("sub/../{path}"), format!("lib/../{path}")];
    out.push(root.canonicalize().unwrap().join(path).display().to_string());
    if let Some(name) = protected_names().find(|name| path.starts_with(*name)) {
        out.push(format!("link{name}{}", &path[name.len()..]));
        out.push(path.to_uppercase());
    }
    out
}

/// The workload, its imports, every protected name and the directories `sr
/// run NAME` searches (also missing, also nested, through symlinks and hard
/// links, in any spelling) are never changed by any write; each refusal names
/// its rule.
#[test]
fn protected_paths_are_never_changed() {
    let (dir, jail) = protected_setup();
    let root = dir.path();
    let before = tree(root);
    // (path, what the refusal names, operations that do not apply: a symlink
    // of ours may itself be removed, a file is no directory).
    let mut targets: Vec<(String, String, &[&str])> = Vec::new();
    for name in protected_names() {
        for rest in ["", "/config", "/new.txt", "/hooks/pre-commit", "/agents/evil.sr", "/x/../hooks/a"] {
            for spelled in spellings(root, &format!("{name}{rest}")) {
                let skip: &[&str] = if spelled == format!("link{name}") { &["remove_file"] } else { &[] };
                targets.push((spelled, format!("`{name}` is protected: tools cannot change it"), skip));
            }
        }
    }
    let program = "is the workload or a file it imports: tools cannot change it";
    for path in ["agent.sr", "lib/helper.sr", "liblink/helper.sr"] {
        for spelled in spellings(root, path) {
            targets.push((spelled, program.to_string(), &[]));
        }
    }
    let links: &[&str] = &["create_dir_all", "remove_file"];
    targets.push(("w.sr".to_string(), program.to_string(), links));
    targets.push(("hl.sr".to_string(), "has 2 hard links: file tools do not write".to_string(), links));
    for (path, name) in
        [("sub/.git/hooks/post-checkout", ".git"), ("sub/.git/config", ".git"), ("sub/.streetrace/a", ".streetrace")]
    {
        targets.push((path.to_string(), format!("`{name}` is protected: tools cannot change it"), &[]));
    }
    // Where `sr run NAME` looks for workloads, from the one search path.
    for (dir, rest) in [("agents", ""), ("agents", "/evil.sr"), ("Agents", "/evil.sr"), ("agents", "/x/../y.sr")] {
        let rule = "`agents/` is where `sr run` finds workloads by name: tools cannot change it".to_string();
        targets.push((format!("{dir}{rest}"), rule, &[]));
    }
    for (path, rule, skip) in &targets {
        let Ok(relative) = jail.relative_path(path) else { panic!("{path} is inside") };
        for (op, result) in writes(&jail, &relative, skip) {
            let Err(error) = result else { panic!("{op} {path} was allowed") };
            let message = error.to_string();
            // Only `.git` exists: a link to another protected name dangles.
            let missing_link = path.starts_with("link.") && !path.starts_with("link.git");
            // Opening a directory for writing, a symlink to a missing
            // `.streetrace` or removing from a missing directory fails before
            // any rule is asked.
            let before_any_rule = match error.raw_os_error() {
                Some(21) => matches!(op, "write" | "append"),
                Some(2) => missing_link || op == "remove_file",
                _ => missing_link && !path.contains('/') && message.contains("is a symlink to a missing file"),
            };
            assert!(message.contains(rule.as_str()) || before_any_rule, "{op} {path}: {message}");
        }
    }
    assert_eq!(tree(root), before, "a protected path changed");
    // Reading them is fine.
    assert_eq!(jail.read(Path::new(".git/config"), 1 << 10).unwrap(), b"[core]\n");
    assert_eq!(jail.read(Path::new("w.sr"), 1 << 10).unwrap(), b"import \"lib/helper.sr\"\n");
}

/// Names that only look like a protected one, and everything else, are
/// written as usual.
#[test]
fn other_paths_stay_writable() {
    let (dir, jail) = protected_setup();
    for path in [
        "notes.txt",
        "sub/plain.txt",
        "sub/new/deep.txt",
        ".gitignore",
        "a.git/x",
        "git/x",
        ".streetrace2/x",
        "agents2/x.sr",
        "sub/agents/x.sr",
        ".vscodex/settings.json",
        "nvim.lua",
    ] {
        use std::io::Write;
        jail.open_write(Path::new(path), false).unwrap().write_all(b"ok").unwrap();
        assert_eq!(std::fs::read(dir.path().join(path)).unwrap(), b"ok", "{path}");
    }
    jail.create_dir_all(Path::new("src/.gitx")).unwrap();
    jail.remove_file(Path::new("notes.txt")).unwrap();
    assert!(!dir.path().join("notes.txt").exists());
    // Removing a symlink removes the link, never its target.
    jail.remove_file(Path::new("w.sr")).unwrap();
    assert!(dir.path().join("agent.sr").is_file());
}

/// The runtime's state inside the root is not listed, not found and not
/// readable, in any spelling; writing there is refused and changes nothing.
#[test]
fn forbidden_paths_are_invisible() {
    let dir = temp();
    let root = dir.path();
    std::fs::create_dir_all(root.join("state/journal/s")).unwrap();
    std::fs::write(root.join("state/sessions.db"), "db").unwrap();
    std::fs::write(root.join("state/journal/s/1.jsonl"), "{}").unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    symlink("state", root.join("st")).unwrap();
    let jail = Jail::new(root).unwrap().forbid(&root.join("state")).forbid(&root.join("rec.jsonl"));
    let missing = jail.open_read(Path::new("no/such.txt")).err().unwrap().to_string();
    for path in ["state", "state/sessions.db", "./sub/../state/journal/s/1.jsonl", "st/sessions.db", "st", "st/journal"]
    {
        let relative = jail.relative_path(path).unwrap();
        let error = jail.open_read(&relative).err().unwrap();
        assert_eq!((error.kind(), error.to_string()), (io::ErrorKind::NotFound, missing.clone()), "{path}");
        assert!(jail.entries(&relative).is_err() && jail.read(&relative, 1 << 20).is_err(), "{path}");
    }
    let names: Vec<String> = jail.entries(Path::new(".")).unwrap().into_iter().map(|e| e.name).collect();
    assert_eq!(names, ["st", "sub"]);
    let before = tree(root);
    for path in ["state/new.txt", "state/sessions.db", "st/journal/s/2.jsonl", "rec.jsonl", "state/journal/x"] {
        for (op, result) in writes(&jail, Path::new(path), &[]) {
            assert!(result.is_err(), "{op} {path} was allowed");
        }
    }
    assert_eq!(tree(root), before);
}

#[test]
fn a_read_only_jail_refuses_every_write() {
    let dir = temp();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let jail = Jail::read_only(dir.path()).unwrap();
    let before = tree(dir.path());
    for path in ["a.txt", "new.txt", "d/e.txt"] {
        for (op, result) in writes(&jail, Path::new(path), &[]) {
            let message = result.err().unwrap_or_else(|| panic!("{op} {path}")).to_string();
            assert!(message.ends_with("is read-only here"), "{message}");
        }
    }
    assert_eq!(tree(dir.path()), before);
    assert_eq!(jail.read(Path::new("a.txt"), 1).unwrap(), b"a");
}

/// `read` takes regular files only, never blocks on a FIFO, and refuses a
/// file over its cap, named in the message.
#[test]
fn reads_are_of_regular_files_within_the_cap() {
    let dir = temp();
    std::fs::write(dir.path().join("big.txt"), vec![b'x'; 2048]).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(dir.path().join("pipe")).status().unwrap().success());
    let jail = Jail::read_only(dir.path()).unwrap();
    assert_eq!(jail.read(Path::new("big.txt"), 2048).unwrap().len(), 2048);
    assert_eq!(jail.read(Path::new("big.txt"), 1024).unwrap_err().to_string(), "'big.txt' is larger than 1 KiB");
    assert_eq!(jail.read(Path::new("big.txt"), 1000).unwrap_err().to_string(), "'big.txt' is larger than 1000 bytes");
    let fifo = jail.read(Path::new("pipe"), 1024).unwrap_err().to_string();
    assert!(fifo.contains("not a regular file"), "{fifo}");
    assert!(jail.read(Path::new("."), 1024).unwrap_err().to_string().contains("is a directory"));
}

/// A search directory that is a symlink protects the link too: the file
/// tools can neither write through it nor remove it to put their own there.
#[test]
fn a_search_directory_behind_a_symlink_is_protected_as_a_link_and_a_target() {
    let dir = temp();
    let root = dir.path();
    std::fs::create_dir(root.join("shelf")).unwrap();
    std::fs::write(root.join("shelf/main.sr"), "model main = openai/gpt-4o\n").unwrap();
    symlink("shelf", root.join("agents")).unwrap();
    let jail = Jail::new(root).unwrap();
    let before = tree(root);
    // Opening the directory for writing fails before any rule is asked.
    for (op, result) in writes(&jail, Path::new("agents"), &["write", "append"]).into_iter().chain(writes(
        &jail,
        Path::new("agents/planted.sr"),
        &[],
    )) {
        let Err(error) = result else { panic!("{op} was allowed") };
        assert!(error.to_string().contains("is where `sr run` finds workloads by name"), "{op}: {error}");
    }
    assert_eq!(tree(root), before);
    let real = root.canonicalize().unwrap();
    assert!(jail.protected().contains(&real.join("agents")) && jail.protected().contains(&real.join("shelf")));
}
