//! `workspace/executeCommand`: the commands the code lenses and editors use,
//! answered by the server so that they work in any client. Each command's
//! arguments are read into [`Command`] first, so a wrong argument is refused
//! with what was expected before anything runs.
//!
//! - `streetrace.showGraph [uri]`: the program's graph as Mermaid text.
//! - `streetrace.previewPrompt [uri, name]`: the prompt's body with what is
//!   statically known of its `${…}` resolved.
//! - `streetrace.run [runnable]` / `streetrace.debug [runnable]`: what the
//!   client must launch for a lens's [`LensRunnable`](crate::runnable::LensRunnable): a command line for
//!   `sr run`, a launch configuration for the `sr dap` debug adapter (its
//!   [`LaunchArguments`], the type the adapter reads).
//! - `streetrace.try [try]`: the `sr try` command line for a Try lens's
//!   [`LensTry`] (with `--format json`, which the client runs and shows), the
//!   inputs file it reads by default, which the client may open, the
//!   variables the item reads (`reads`, which a client offers to type in) and
//!   those of them the inputs file gives (`values`; `inputs_error` says why
//!   the file could not be read).

use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use sr_wire::launch::{DebugConfiguration, LaunchArguments};
use tower_lsp_server::ls_types::{ExecuteCommandParams, Uri};

use crate::command_names::CommandName;
use crate::convert::path_of;
use crate::handlers::{Failure, Result};
use crate::owner::Snapshot;
use crate::runnable::{LensRunnable, LensTry};
use sr_ide::InputsError;

/// A command with its arguments read.
#[derive(Debug, PartialEq)]
pub(crate) enum Command {
    ShowGraph { uri: Uri },
    PreviewPrompt { uri: Uri, prompt: String },
    Run(LensRunnable),
    Debug(LensRunnable),
    Try(LensTry),
}

impl Command {
    pub(crate) fn parse(params: ExecuteCommandParams) -> Result<Command> {
        let args = Value::Array(params.arguments);
        let Some(name) = CommandName::from_name(&params.command) else {
            let known: Vec<&str> = CommandName::ALL.iter().map(|c| c.name()).collect();
            return Err(refused(&format!(
                "unknown command '{}'; this server runs {}",
                params.command,
                known.join(", ")
            )));
        };
        match name {
            CommandName::ShowGraph => {
                let (uri,) = arguments::<(Uri,)>(args, "[uri]")?;
                Ok(Command::ShowGraph { uri })
            }
            CommandName::PreviewPrompt => {
                let (uri, prompt) = arguments::<(Uri, String)>(args, "[uri, prompt name]")?;
                Ok(Command::PreviewPrompt { uri, prompt })
            }
            CommandName::Run => Ok(Command::Run(arguments::<(LensRunnable,)>(args, "[{file, target, entry}]")?.0)),
            CommandName::Debug => Ok(Command::Debug(arguments::<(LensRunnable,)>(args, "[{file, target, entry}]")?.0)),
            CommandName::Try => Ok(Command::Try(arguments::<(LensTry,)>(args, "[{file, item, kind}]")?.0)),
        }
    }
}

/// The arguments as `T`, or a refusal saying what was expected and why not.
fn arguments<T: DeserializeOwned>(args: Value, expected: &str) -> Result<T> {
    serde_json::from_value(args).map_err(|e| refused(&format!("expects {expected}: {e}")))
}

pub(crate) fn execute(s: &Snapshot, params: ExecuteCommandParams) -> Result<Option<Value>> {
    match Command::parse(params)? {
        Command::ShowGraph { uri } => {
            let path = path_of(&uri);
            let graph = s.analysis.graph_mermaid(&path)?.ok_or_else(|| unknown_file(&path))?;
            Ok(Some(Value::String(graph)))
        }
        Command::PreviewPrompt { uri, prompt } => {
            let path = path_of(&uri);
            let text = s.analysis.preview_prompt(&path, &prompt)?;
            let text =
                text.ok_or_else(|| refused(&format!("no prompt '{prompt}' with a body in {}", path.display())))?;
            Ok(Some(Value::String(text)))
        }
        Command::Run(runnable) => {
            let mut args = vec!["run".to_string(), runnable.file.clone()];
            args.extend(runnable.entry_option().map(|e| format!("--entry={e}")));
            Ok(Some(json!({"command": "sr", "args": args, "cwd": runnable.work_dir()})))
        }
        Command::Debug(runnable) => {
            let arguments = LaunchArguments {
                program: Some(runnable.file.clone()),
                work_dir: runnable.work_dir(),
                entry: runnable.entry_option(),
                ..LaunchArguments::default()
            };
            let configuration = DebugConfiguration::launch(format!("Debug {}", runnable.file), arguments);
            Ok(Some(json!({"adapter": {"command": "sr", "args": ["dap"]}, "configuration": configuration})))
        }
        Command::Try(tried) => {
            let entry = tried.entry();
            let args = ["try", &tried.file, &entry, "--format", "json"];
            let reads = s.analysis.try_inputs(Path::new(&tried.file), &entry)?;
            let inputs = tried.inputs();
            let mut answer = json!({"command": "sr", "args": args, "cwd": tried.dir(), "inputs": inputs});
            match given_values(Path::new(&inputs), &reads) {
                Ok(values) => answer["values"] = Value::Object(values),
                Err(why) => answer["inputs_error"] = Value::String(why.to_string()),
            }
            answer["reads"] = json!(reads);
            Ok(Some(answer))
        }
    }
}

/// The values the inputs file at `path` gives the variables `reads`, read as
/// `sr try` reads it (`sr_ide::read_inputs`: a YAML map, no file is no
/// values, a FIFO of that name is refused without blocking the server).
fn given_values(path: &Path, reads: &[String]) -> std::result::Result<serde_json::Map<String, Value>, InputsError> {
    let mut all: serde_json::Map<String, Value> = sr_ide::read_inputs(path, false)?;
    all.retain(|name, _| reads.contains(name));
    Ok(all)
}

fn refused(why: &str) -> Failure {
    Failure::Refused(why.to_string())
}

fn unknown_file(path: &Path) -> Failure {
    refused(&format!("{} is not a file the server knows", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sr_ide::TryKind;

    fn parse(command: &str, arguments: Value) -> Result<Command> {
        let Value::Array(arguments) = arguments else { panic!("arguments are a list") };
        Command::parse(ExecuteCommandParams { command: command.to_string(), arguments, ..Default::default() })
    }

    fn refusal(result: Result<Command>) -> String {
        match result {
            Err(Failure::Refused(why)) => why,
            Err(Failure::Cancelled(_)) => panic!("cancelled, not refused"),
            Ok(command) => panic!("not refused: {command:?}"),
        }
    }

    #[test]
    fn every_command_reads_its_arguments() {
        let uri: Uri = "file:///w/main.sr".parse().unwrap();
        assert_eq!(parse("streetrace.showGraph", json!(["file:///w/main.sr"])).ok(), Some(Command::ShowGraph { uri }));
        let runnable = LensRunnable { file: "/w/main.sr".into(), target: "side".into(), entry: false };
        let lens = serde_json::to_value(&runnable).unwrap();
        assert_eq!(parse("streetrace.debug", json!([lens])).ok(), Some(Command::Debug(runnable)));
        let tried = LensTry { file: "/w/main.sr".into(), item: "ask".into(), kind: TryKind::Prompt };
        let lens = serde_json::to_value(&tried).unwrap();
        assert_eq!(parse("streetrace.try", json!([lens])).ok(), Some(Command::Try(tried)));
    }

    /// Names are distinct, so each reads back as its own command.
    #[test]
    fn every_name_reads_back_as_its_command() {
        for command in CommandName::ALL {
            assert_eq!(CommandName::from_name(command.name()), Some(*command));
        }
    }

    /// Every command, with arguments of every JSON kind but its own: refused
    /// with what it expects, whatever is added to the table.
    #[test]
    fn every_command_refuses_every_wrong_kind_of_argument() {
        let wrong =
            [json!([]), json!([null]), json!([true]), json!([7]), json!([[]]), json!([{}]), json!(["x", 1, {}])];
        for command in CommandName::ALL.iter().map(|c| c.name()) {
            for arguments in &wrong {
                let why = refusal(parse(command, arguments.clone()));
                assert!(why.starts_with("expects "), "{command} {arguments}: {why}");
            }
        }
    }

    #[test]
    fn a_wrong_argument_is_refused_with_what_was_expected() {
        for (command, arguments, expected) in [
            ("streetrace.showGraph", json!([]), "expects [uri]"),
            ("streetrace.showGraph", json!([7]), "expects [uri]"),
            ("streetrace.previewPrompt", json!(["file:///a.sr"]), "expects [uri, prompt name]"),
            ("streetrace.run", json!([{"target": "main"}]), "missing field `file`"),
            ("streetrace.debug", json!(["main.sr"]), "expects [{file, target, entry}]"),
            ("streetrace.try", json!([{"file": "/w/main.sr"}]), "missing field `item`"),
            (
                "streetrace.try",
                json!([{"file": "/w/main.sr", "item": "ask", "kind": "flow"}]),
                "unknown variant `flow`",
            ),
            ("streetrace.explode", json!([]), "unknown command 'streetrace.explode'"),
        ] {
            let why = refusal(parse(command, arguments.clone()));
            assert!(why.contains(expected), "{command} {arguments}: {why}");
        }
    }

    /// The editor is offered the file's values of the variables the item
    /// reads, as `sr try` reads them; a file it cannot read says where.
    #[test]
    fn the_inputs_file_gives_the_values_of_the_variables_read() {
        let dir = std::env::temp_dir().join(format!("sr-lsp-try-inputs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ask.inputs.yaml");
        let reads = ["topic".to_string(), "doc".to_string(), "missing".to_string()];
        let given = |path: &Path| given_values(path, &reads).map_err(|e| e.to_string());
        assert_eq!(given(&file), Ok(serde_json::Map::new()), "no file is no values");
        std::fs::write(&file, "# notes\ntopic: \"a: b\" # said\ndoc:\n  title: T\nother: 1\n").unwrap();
        assert_eq!(given(&file).map(Value::Object), Ok(json!({"topic": "a: b", "doc": {"title": "T"}})));
        std::fs::write(&file, "topic: [\n").unwrap();
        let why = given(&file).unwrap_err();
        assert!(why.starts_with(&format!("{}:2:1: the inputs are a map", file.display())), "{why}");
        // A FIFO is refused at once: the server never waits for a writer.
        let fifo = dir.join("fifo.inputs.yaml");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let refused = format!("cannot read the inputs {}: a FIFO (named pipe), not a regular file", fifo.display());
        assert_eq!(given(&fifo), Err(refused));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// What VS Code's Try page writes for hostile typed values (its unit test
    /// editors/vscode/test/unit/yamlInputs.test.mjs asserts that the writer
    /// makes hostile.inputs.yaml of hostile.inputs.json) reads back as those
    /// very strings.
    #[test]
    fn the_try_pages_yaml_reads_back_as_what_was_typed() {
        let unit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../editors/vscode/test/unit");
        let typed: serde_json::Map<String, Value> =
            serde_json::from_str(&std::fs::read_to_string(unit.join("hostile.inputs.json")).unwrap()).unwrap();
        let names: Vec<String> = typed.keys().cloned().collect();
        assert_eq!(given_values(&unit.join("hostile.inputs.yaml"), &names).ok(), Some(typed));
    }
}
