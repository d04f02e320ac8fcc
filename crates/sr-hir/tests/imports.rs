//! `import ./file.sr`: definitions of imported files are visible; missing files,
//! cycles and cross-file duplicates are reported.

use sr_hir::{RootDatabase, file_diagnostics};
use sr_syntax::Code;

fn codes(db: &RootDatabase, file: sr_hir::File) -> Vec<(Code, String)> {
    file_diagnostics(db, file).iter().filter(|d| d.in_mode(false)).map(|d| (d.code(), d.message())).collect()
}

#[test]
fn imported_definitions_are_visible() {
    let mut db = RootDatabase::default();
    db.set_file("/ws/lib/prompts.sr", "prompt review: \"\"\"Review.\"\"\"\nmodel main = anthropic/claude\n");
    let main = db.set_file("/ws/main.sr", "import ./lib/prompts.sr\nagent:\n    instruction review\n");
    assert_eq!(codes(&db, main), vec![]);
}

#[test]
fn a_missing_import_is_reported_at_its_path() {
    let mut db = RootDatabase::default();
    let main = db.set_file("/ws/main.sr", "import ./nope.sr\nprompt p: \"\"\"P.\"\"\"\nagent:\n    instruction p\n");
    let diagnostics = file_diagnostics(&db, main);
    let d = diagnostics.iter().find(|d| d.code() == Code::SR107).expect("SR107");
    assert_eq!(d.message(), "cannot find imported file './nope.sr'");
    assert_eq!(&db.file("/ws/main.sr").unwrap().text(&db)[d.range], "./nope.sr");
    assert_eq!(d.help().as_deref(), Some("looked for /ws/nope.sr"));
}

/// Once, in the file the cycle's program is judged from; alone, each file
/// reports the cycle as seen from itself.
#[test]
fn an_import_cycle_is_reported() {
    let mut db = RootDatabase::default();
    db.set_file("/ws/b.sr", "import ./a.sr\nprompt p: \"\"\"P.\"\"\"\n");
    let a = db.set_file("/ws/a.sr", "import ./b.sr\nagent:\n    instruction p\n");
    let b = db.file("/ws/b.sr").unwrap();
    assert_eq!(codes(&db, b), vec![]);
    assert_eq!(codes(&db, a), vec![(Code::SR108, "import cycle: a.sr -> b.sr -> a.sr".to_string())]);
    let alone =
        |file| -> Vec<String> { sr_hir::file_diagnostics_alone(&db, file).iter().map(|d| d.message()).collect() };
    assert_eq!(alone(b), ["import cycle: b.sr -> a.sr -> b.sr"]);
}

#[test]
fn a_duplicate_across_files_points_at_the_importer_with_the_first_definition() {
    let mut db = RootDatabase::default();
    db.set_file("/ws/lib.sr", "model main = anthropic/claude\n");
    let main = db.set_file(
        "/ws/main.sr",
        "import ./lib.sr\nmodel main = anthropic/haiku\nprompt p: \"\"\"P.\"\"\"\nagent:\n    instruction p\n",
    );
    let diagnostics = file_diagnostics(&db, main);
    let d = diagnostics.iter().find(|d| d.code() == Code::E0003).expect("E0003");
    assert_eq!(d.message(), "duplicate definition of model 'main'");
    assert_eq!(d.related.len(), 1);
    assert_eq!(d.related[0].file.as_deref(), Some("/ws/lib.sr"));
    assert_eq!(d.help().as_deref(), Some("'main' is already defined in /ws/lib.sr"));
}

#[test]
fn library_files_are_not_asked_for_an_entry_point_or_uses() {
    let mut db = RootDatabase::default();
    let lib = db.set_file(
        "/ws/lib.sr",
        "prompt p: \"\"\"P.\"\"\"\nagent helper:\n    instruction p\nagent other:\n    instruction p\n",
    );
    db.set_file("/ws/main.sr", "import ./lib.sr\nflow main:\n    run agent helper\n");
    assert_eq!(codes(&db, lib), vec![]);
}

#[test]
fn stdio_mcp_servers_of_imported_files_are_reported_at_the_import() {
    let mut db = RootDatabase::default();
    db.set_file(
        "/ws/tools.sr",
        "tool gh = mcp \"stdio:npx -y @acme/gh-server\"\ntool web = mcp \"https://example.com/mcp\"\n",
    );
    db.set_file("/ws/lib.sr", "import ./tools.sr\nprompt p: \"\"\"P.\"\"\"\n");
    let main = db.set_file(
        "/ws/main.sr",
        "import ./lib.sr\ntool local = mcp \"stdio:./server\"\nagent:\n    instruction p\n    tools gh, web, local\n",
    );
    let diagnostics = file_diagnostics(&db, main);
    let found: Vec<_> = diagnostics.iter().filter(|d| d.code() == Code::SR116).collect();
    assert_eq!(found.len(), 1, "{diagnostics:#?}");
    assert_eq!(found[0].message(), "imported tool 'gh' starts a local program: npx -y @acme/gh-server");
    assert_eq!(&db.file("/ws/main.sr").unwrap().text(&db)[found[0].range], "./lib.sr");
    assert_eq!(found[0].related[0].file.as_deref(), Some("/ws/tools.sr"));
    assert!(!file_diagnostics(&db, main).iter().any(|d| d.code() == Code::SR116 && d.in_mode(true)));
}

#[test]
fn a_flow_that_runs_itself_is_reported_at_the_run() {
    let mut db = RootDatabase::default();
    let main = db.set_file("/ws/main.sr", "flow main:\n    run other\n    run main\nflow other:\n    log \"x\"\n");
    let found: Vec<_> = codes(&db, main).into_iter().filter(|(code, _)| *code == Code::SR115).collect();
    assert_eq!(
        found,
        vec![(
            Code::SR115,
            "flow 'main' runs itself: unless a condition stops it, the run fails when flows nest too deep".to_string()
        )]
    );
}

/// Imports of a FIFO, a device and a symlink loop, loaded from disk: each is
/// refused without blocking, and its SR107 says why, where a missing file's
/// says it is missing.
#[test]
fn imports_that_cannot_be_read_say_why() {
    let dir = std::env::temp_dir().join(format!("sr-hir-special-imports-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let main = "import ./pipe.sr\nimport ./zero.sr\nimport ./loop.sr\nimport ./gone.sr\nflow main:\n    log 1\n";
    std::fs::write(dir.join("main.sr"), main).unwrap();
    let status = std::process::Command::new("mkfifo").arg(dir.join("pipe.sr")).status().unwrap();
    assert!(status.success());
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.sr")).unwrap();
    std::os::unix::fs::symlink(dir.join("loop2.sr"), dir.join("loop.sr")).unwrap();
    std::os::unix::fs::symlink(dir.join("loop.sr"), dir.join("loop2.sr")).unwrap();
    let mut db = RootDatabase::default();
    let file = db.load_with_imports(dir.join("main.sr")).unwrap();
    let messages: Vec<String> =
        codes(&db, file).into_iter().map(|(code, message)| format!("{code}: {message}")).collect();
    assert_eq!(
        messages,
        [
            "SR107: cannot read ./pipe.sr: a FIFO (named pipe), not a regular file",
            "SR107: cannot read ./zero.sr: a device, not a regular file",
            "SR107: cannot read ./loop.sr: too many levels of symbolic links (a symlink loop)",
            "SR107: cannot find imported file './gone.sr'",
        ]
    );
    // Once the file can be read, the import is fine and the reason is gone.
    std::fs::remove_file(dir.join("pipe.sr")).unwrap();
    std::fs::write(dir.join("pipe.sr"), "prompt p: \"\"\"P.\"\"\"\n").unwrap();
    db.read_import(&dir.join("pipe.sr")).unwrap();
    assert_eq!(codes(&db, file).len(), 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Files that import each other are one program: a prompt in one sees the
/// variables the other's flow assigns (no false E0015), and each file
/// belongs to the cycle's program, not to a program of its own.
#[test]
fn an_import_cycle_is_judged_as_one_program() {
    let mut db = RootDatabase::default();
    let agents = db.set_file(
        "/ws/agents.sr",
        "import ./main.sr\nprompt write: \"\"\"About ${topic}\"\"\"\nflow helper:\n    $r = call llm write\n    return $r\n",
    );
    let main = db.set_file(
        "/ws/main.sr",
        "import ./agents.sr\nmodel main = anthropic/claude\nflow main:\n    $topic = \"x\"\n    $r = run helper\n    return $r\n",
    );
    let programs =
        |file| sr_hir::programs_of(&db, file).iter().map(|f| f.path(&db).display().to_string()).collect::<Vec<_>>();
    assert_eq!(
        (programs(agents), programs(main)),
        (vec!["/ws/agents.sr".to_string()], vec!["/ws/agents.sr".to_string()])
    );
    let all: Vec<(Code, String)> = [agents, main].into_iter().flat_map(|f| codes(&db, f)).collect();
    assert_eq!(all, vec![(Code::SR108, "import cycle: agents.sr -> main.sr -> agents.sr".to_string())]);
}
