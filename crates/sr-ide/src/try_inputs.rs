//! The inputs a "Try" of an agent or a prompt reads, which an editor offers
//! to type in: every variable the item's prompts read through `${…}`
//! (composed prompts' included, as `sr try` asks for them), and for an agent
//! its message, `input_prompt`; and the one reader of the inputs file, for
//! `sr try` and the editors alike.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use sr_files::ReadError;

use sr_hir::RootDatabase;
use sr_hir::playground::{Tried, missing_inputs, tried};
use sr_hir::start::EntryName;

/// The names `sr try ROOT ENTRY` reads (ENTRY: `NAME` or `KIND:NAME`), an
/// agent's message first; none when `sr try` would refuse the item (it says
/// why when run).
pub(crate) fn try_inputs(db: &RootDatabase, root: &Path, entry: &str) -> Vec<String> {
    let Some(file) = db.file(root) else { return Vec::new() };
    let (mut out, prompt) = match tried(db, file, entry) {
        Ok(Tried::Prompt) => (Vec::new(), Some(EntryName::parse(entry).name.to_string())),
        Ok(Tried::Agent { instruction }) => (vec!["input_prompt".to_string()], instruction.map(|i| i.to_string())),
        Err(_) => return Vec::new(),
    };
    if let Some(prompt) = prompt {
        out.extend(missing_inputs(db, file, &prompt, &|_| false).into_iter().map(|m| m.name.to_string()));
    }
    out
}

/// Why an inputs file gives no variables.
#[derive(Debug, thiserror::Error)]
pub enum InputsError {
    #[error("cannot read the inputs {}: {source}", path.display())]
    Read { path: PathBuf, source: ReadError },
    /// `at` is `:LINE:COL` when the YAML reader knows where.
    #[error("{}{at}: the inputs are a map of variable name to value: {message}", path.display())]
    NotAMap { path: PathBuf, at: String, message: String },
}

/// The variables in the inputs file `path` (`ITEM.inputs.yaml`, or `sr try
/// --inputs`), a YAML map, read as source files are: a FIFO or a device is
/// refused, not waited on, and so is a file over the source size limit. A
/// file that does not exist is no variables, unless it was `named`; a file
/// of blank lines and comments is none.
pub fn read_inputs<T: DeserializeOwned + Default>(path: &Path, named: bool) -> Result<T, InputsError> {
    let text = match sr_files::read_source(path) {
        Ok(text) => text,
        Err(ReadError::NotFound) if !named => return Ok(T::default()),
        Err(source) => return Err(InputsError::Read { path: path.to_path_buf(), source }),
    };
    if text.lines().all(|l| l.trim().is_empty() || l.trim_start().starts_with('#')) {
        return Ok(T::default());
    }
    serde_norway::from_str(&text).map_err(|e| InputsError::NotAMap {
        path: path.to_path_buf(),
        at: e.location().map(|l| format!(":{}:{}", l.line(), l.column())).unwrap_or_default(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::analysis;

    /// `NAME: input, input` (or `(none)`) for each item tried in the fixture's first file.
    fn check(fixture: &str, items: &[&str], expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        let root = std::path::Path::new(&fixture.files[0].0);
        let mut out = String::new();
        for item in items {
            let names = analysis.try_inputs(root, item).unwrap();
            let names = if names.is_empty() { "(none)".to_string() } else { names.join(", ") };
            out.push_str(&format!("{item}: {names}\n"));
        }
        expect.assert_eq(&out);
    }

    #[test]
    fn a_prompt_a_composed_prompt_and_an_agent_read_their_variables() {
        check(
            r#"
            //- /main.sr
            import ./lib.sr
            prompt tone: """Be ${mood}."""
            prompt greet: """${tone} Hi ${who.name}, ${len(items)} items; ${who.age} ${shared}"""
            agent helper:
                instruction greet
            agent plain:
                instruction fixed
            flow main:
                $r = run agent helper "x"
            //- /lib.sr
            prompt fixed: """Write."""
            prompt shared: """about ${topic}"""
            "#,
            &["tone", "greet", "helper", "plain", "fixed", "main", "nothing", "prompt:greet", "agent:greet"],
            expect![[r#"
                tone: mood
                greet: who, items, mood, topic
                helper: input_prompt, who, items, mood, topic
                plain: input_prompt
                fixed: (none)
                main: (none)
                nothing: (none)
                prompt:greet: who, items, mood, topic
                agent:greet: (none)
            "#]],
        );
    }

    #[test]
    fn inputs_are_a_map_and_a_bad_one_says_where() {
        type Vars = std::collections::BTreeMap<String, String>;
        let dir = std::env::temp_dir().join(format!("sr-ide-inputs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ask.inputs.yaml");
        let read = |named| super::read_inputs::<Vars>(&file, named).map_err(|e| e.to_string());
        assert_eq!(read(false), Ok(Vars::new()), "a missing file not named is no inputs");
        assert_eq!(read(true), Err(format!("cannot read the inputs {}: file not found", file.display())));
        std::fs::write(&file, "# nothing yet\n\n").unwrap();
        assert_eq!(read(true), Ok(Vars::new()));
        std::fs::write(&file, "topic: rust # said\nwho: \"a: b\"\n").unwrap();
        assert_eq!(read(true), Ok(Vars::from([("topic".into(), "rust".into()), ("who".into(), "a: b".into())])));
        std::fs::write(&file, "- a\n- b\n").unwrap();
        let list = read(true).unwrap_err();
        assert!(list.starts_with(&format!("{}:1:1: the inputs are a map of variable name to value", file.display())));
        std::fs::write(&file, "a: x\nb: \"open\n").unwrap();
        let broken = read(true).unwrap_err();
        assert!(broken.starts_with(&format!("{}:3:1: ", file.display())), "{broken}");
        let folder = dir.join("folder.inputs.yaml");
        std::fs::create_dir_all(&folder).unwrap();
        let why = super::read_inputs::<Vars>(&folder, false).unwrap_err().to_string();
        assert_eq!(why, format!("cannot read the inputs {}: a directory, not a regular file", folder.display()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
