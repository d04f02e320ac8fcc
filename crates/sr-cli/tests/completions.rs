mod common;

use common::{sr, temp_dir};

#[test]
fn completion_scripts_name_every_subcommand() {
    let dir = temp_dir("completions", &[]);
    std::fs::create_dir_all(&dir).unwrap();
    for (shell, marker) in [("bash", "complete -F _sr"), ("zsh", "#compdef sr"), ("fish", "complete -c sr")] {
        let (code, script, stderr) = sr(&["completions", shell], &dir);
        assert_eq!(code, 0, "{stderr}");
        assert!(script.contains(marker), "{shell}: {script}");
        for subcommand in ["check", "fmt", "run", "graph", "lsp", "dap", "sessions"] {
            assert!(script.contains(subcommand), "{shell} completion lacks {subcommand}");
        }
    }
    let (code, _, stderr) = sr(&["completions", "tcsh"], &dir);
    assert_eq!(code, 2);
    assert!(stderr.contains("invalid value 'tcsh'"), "{stderr}");
}
