//! A real editor: headless Neovim (0.7's `vim.lsp.start_client`) attached to
//! the built `sr-lsp`, checking diagnostics, definition, completion,
//! formatting, rename, the diagnostics of a closed file and an import changed
//! on disk. Skipped, loudly, when `nvim` is missing outside
//! CI; in CI (`CI` set) a missing `nvim` fails.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Command;

const FIXTURE: &str = "prompt greet: \"\"\"Hello\"\"\"\nagent:\n    instruction greet\n    tools missing_tool\nflow main:\n    $r = run agent default with \"hi\"\n    log  $r\n";

#[test]
fn neovim_session() {
    if Command::new("nvim").arg("--version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "nvim is required in CI (apt-get install neovim)");
        eprintln!("\n!!! SKIPPED neovim_session: `nvim` is not installed (apt-get install neovim) !!!\n");
        return;
    }
    let dir = std::env::temp_dir().join(format!("sr-lsp-nvim-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("main.sr"), FIXTURE).unwrap();
    std::fs::write(dir.join("broken.sr"), "prompt p \"\"\"x\"\"\"\n").unwrap();
    std::fs::write(dir.join("lib.sr"), "agent helper:\n    instruction q\nprompt q: \"\"\"x\"\"\"\n").unwrap();
    let uses = "import ./lib.sr\nprompt p: \"\"\"x\"\"\"\nagent:\n    instruction p\n    delegate helper\n";
    std::fs::write(dir.join("uses.sr"), uses).unwrap();
    let out = dir.join("out.txt");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/neovim/session.lua");
    let mut child = Command::new("nvim")
        .args(["--headless", "--clean", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("SR_LSP", env!("CARGO_BIN_EXE_sr-lsp"))
        .env("SR_ROOT", &dir)
        .env("SR_OUT", &out)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .spawn()
        .expect("cannot run nvim");
    let status = wait(&mut child);
    assert!(status.success(), "nvim failed: {status:?}");
    let report = std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("nvim wrote no report: {e}"));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        report,
        "diagnostics=E0001@3\n\
         vim_diagnostics=1\n\
         definition=0:7\n\
         completion=default,helper\n\
         formatted=    log $r\n\
         renamed_0=prompt welcome: \"\"\"Hello\"\"\"\n\
         renamed_2=    instruction welcome\n\
         definition_after=0\n\
         closed_file=3\n\
         uses_before=0\n\
         uses_after_disk_change=E0001 undefined reference to agent 'helper'\n"
    );
}

fn wait(child: &mut std::process::Child) -> std::process::ExitStatus {
    for _ in 0..1200 {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!("nvim did not finish within 60 s");
}
