//! What a Run, Debug or Try lens carries and the command it sends reads back:
//! one type for both ends, so a lens and its command cannot disagree on a field.

use serde::{Deserialize, Serialize};
use sr_ide::TryKind;

/// The argument of a Run or Debug lens, and of the command it sends back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LensRunnable {
    /// The workload's path.
    pub file: String,
    /// The agent or flow the lens is on.
    pub target: String,
    /// Whether `target` is the workload's entry point (running the file starts it).
    #[serde(default)]
    pub entry: bool,
}

impl From<&sr_ide::Runnable> for LensRunnable {
    fn from(runnable: &sr_ide::Runnable) -> LensRunnable {
        LensRunnable {
            file: runnable.path.display().to_string(),
            target: runnable.target.clone(),
            entry: runnable.entry,
        }
    }
}

impl LensRunnable {
    /// The target to name: none for the entry point, which runs by default.
    pub(crate) fn entry_option(&self) -> Option<String> {
        (!self.entry).then(|| self.target.clone())
    }

    pub(crate) fn work_dir(&self) -> Option<String> {
        std::path::Path::new(&self.file).parent().map(|d| d.display().to_string())
    }
}

/// The argument of a Try lens, and of the `streetrace.try` command it sends back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LensTry {
    /// The file `sr try` loads (the item's own, or its importer's).
    pub file: String,
    /// The agent's or prompt's name.
    pub item: String,
    /// A prompt may share an agent's or a flow's name.
    pub kind: TryKind,
}

impl From<&sr_ide::Tryable> for LensTry {
    fn from(tryable: &sr_ide::Tryable) -> LensTry {
        LensTry { file: tryable.root.display().to_string(), item: tryable.name.clone(), kind: tryable.kind }
    }
}

impl LensTry {
    /// The item as `sr try` takes it: `KIND:NAME`.
    pub(crate) fn entry(&self) -> String {
        self.kind.entry(&self.item)
    }

    pub(crate) fn dir(&self) -> std::path::PathBuf {
        std::path::Path::new(&self.file).parent().map(|d| d.to_path_buf()).unwrap_or_default()
    }

    /// The inputs `sr try` reads when given none: `ITEM.inputs.yaml` beside the file.
    pub(crate) fn inputs(&self) -> String {
        self.dir().join(format!("{}.inputs.yaml", self.item)).display().to_string()
    }
}
