//! Datasets: JSONL (one case per line) or YAML (a list of cases). Every
//! problem is reported with the file, the line (and column when the parser
//! knows it) and the field, and loading stops at the first one.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use sr_runtime::ids::{self, IdKind};
use sr_runtime::tools::{Jail, Opened};

use crate::relative::{DATASET_DIR, WORK_DIR, check_relative};
use crate::scorer::Scorer;

/// One case of a dataset.
#[derive(Debug)]
pub struct Case {
    pub id: String,
    /// The message the run starts with, `${name}` replaced by `input` values.
    pub prompt: String,
    pub files: Files,
    pub expect: Vec<Scorer>,
}

/// What a case's work directory starts with.
#[derive(Debug, Clone, PartialEq)]
pub enum Files {
    /// Relative path → content.
    Map(BTreeMap<String, String>),
    /// A directory inside the dataset's directory (`base`, canonical) copied
    /// in; it is read through a jail on `base`.
    Dir { base: PathBuf, relative: PathBuf },
}

/// A dataset problem: where, and what.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetError {
    pub file: PathBuf,
    /// 1-based; 0 when the problem is with the whole file.
    pub line: usize,
    pub column: Option<usize>,
    pub message: String,
}

impl fmt::Display for DatasetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        if let Some(column) = self.column {
            write!(f, ":{column}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A case as written, before its prompt is filled in.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    id: CaseId,
    prompt: String,
    #[serde(default)]
    files: Option<RawFiles>,
    #[serde(default)]
    input: BTreeMap<String, Value>,
    expect: Vec<Scorer>,
}

/// `files` as written: its paths are checked as they are read, so a bad one
/// is reported at its line and column.
enum RawFiles {
    Map(BTreeMap<String, String>),
    Dir(String),
}

impl<'de> Deserialize<'de> for RawFiles {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RawFiles;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of relative path to content, or a directory relative to the dataset's")
            }

            fn visit_str<E: serde::de::Error>(self, dir: &str) -> Result<RawFiles, E> {
                check_relative(dir, DATASET_DIR).map_err(|e| E::custom(format!("files: {dir:?} {e}")))?;
                Ok(RawFiles::Dir(dir.to_string()))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<RawFiles, A::Error> {
                let mut files = BTreeMap::new();
                while let Some((path, text)) = map.next_entry::<String, String>()? {
                    check_relative(&path, WORK_DIR)
                        .map_err(|e| serde::de::Error::custom(format!("files: {path:?} {e}")))?;
                    files.insert(path, text);
                }
                Ok(RawFiles::Map(files))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// A case id: it names directories, so it follows the id rule.
struct CaseId(String);

impl<'de> Deserialize<'de> for CaseId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = String::deserialize(deserializer)?;
        ids::check(IdKind::Case, &id).map_err(|e| serde::de::Error::custom(format!("id: {e}")))?;
        Ok(CaseId(id))
    }
}

/// The largest dataset read (256 MiB); larger ones are refused before reading.
pub const MAX_DATASET_BYTES: u64 = 256 << 20;

/// Reads the dataset at `path`: `.jsonl` is JSON lines, `.yaml`/`.yml` YAML.
pub fn load(path: &Path) -> Result<Vec<Case>, DatasetError> {
    let whole = |message: String| DatasetError { file: path.to_path_buf(), line: 0, column: None, message };
    let parse = match path.extension().and_then(|e| e.to_str()) {
        Some("jsonl") => parse_jsonl,
        Some("yaml" | "yml") => parse_yaml,
        _ => return Err(whole("a dataset is a .jsonl or .yaml file".to_string())),
    };
    let text = read(path).map_err(whole)?;
    parse(&text, path, path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")))
}

/// A regular file of at most [`MAX_DATASET_BYTES`] as text; FIFOs and devices
/// are refused without being opened.
fn read(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        return Err("cannot read: not a regular file".to_string());
    }
    let too_large = || format!("cannot read: larger than {} MiB", MAX_DATASET_BYTES >> 20);
    if meta.len() > MAX_DATASET_BYTES {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    file.take(MAX_DATASET_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > MAX_DATASET_BYTES {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

/// JSON lines: blank lines are skipped.
pub fn parse_jsonl(text: &str, file: &Path, base: &Path) -> Result<Vec<Case>, DatasetError> {
    let mut cases = Vec::new();
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |column: Option<usize>, message: String| DatasetError {
            file: file.to_path_buf(),
            line: index + 1,
            column,
            message,
        };
        let raw: RawCase = serde_json::from_str(line).map_err(|e| at(Some(e.column()), clean(&e.to_string())))?;
        cases.push(finish(raw, base).map_err(|message| at(None, message))?);
        lines.push(index + 1);
    }
    check_unique(&cases, file, &lines)?;
    Ok(cases)
}

/// YAML: a list of cases.
pub fn parse_yaml(text: &str, file: &Path, base: &Path) -> Result<Vec<Case>, DatasetError> {
    let at = |location: Option<serde_norway::Location>, message: String| DatasetError {
        file: file.to_path_buf(),
        line: location.as_ref().map_or(0, |l| l.line()),
        column: location.map(|l| l.column()),
        message,
    };
    let raws: Vec<RawCase> = serde_norway::from_str(text).map_err(|e| at(e.location(), clean(&e.to_string())))?;
    // serde_norway gives no positions once parsed: later problems name the case.
    let starts = case_lines(text);
    let mut cases = Vec::new();
    for (index, raw) in raws.into_iter().enumerate() {
        let line = starts.get(index).copied().unwrap_or(0);
        let id = raw.id.0.clone();
        let case = finish(raw, base).map_err(|message| DatasetError {
            file: file.to_path_buf(),
            line,
            column: None,
            message: format!("case {id:?}: {message}"),
        })?;
        cases.push(case);
    }
    check_unique(&cases, file, &starts)?;
    Ok(cases)
}

/// The lines where the top-level list's items start (`- ` at column 1).
fn case_lines(text: &str) -> Vec<usize> {
    text.lines().enumerate().filter(|(_, l)| l.starts_with("- ") || *l == "-").map(|(i, _)| i + 1).collect()
}

/// Serde's messages end with their own " at line L column C"; ours carry the
/// position separately.
fn clean(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

fn finish(raw: RawCase, base: &Path) -> Result<Case, String> {
    let files = match raw.files {
        None => Files::Map(BTreeMap::new()),
        Some(RawFiles::Map(map)) => Files::Map(map),
        Some(RawFiles::Dir(dir)) => {
            // Opened as a copy will open it: beneath the dataset's directory,
            // through no symlink that leaves it.
            let jail = Jail::read_only(base)
                .map_err(|e| format!("files: cannot open the dataset's directory {}: {e}", base.display()))?;
            let relative = PathBuf::from(&dir);
            match jail.open_read(&relative) {
                Ok(Opened::Dir(_)) => Files::Dir { base: jail.root().to_path_buf(), relative },
                Ok(Opened::File(_)) => return Err(format!("files: {dir:?} is not a directory")),
                Err(e) => return Err(format!("files: {dir:?} is not a directory inside {DATASET_DIR}: {e}")),
            }
        }
    };
    let mut expect = raw.expect;
    for scorer in &mut expect {
        if let Scorer::Flow(flow) = scorer {
            flow.load(base)?;
        }
    }
    Ok(Case { prompt: fill(&raw.prompt, &raw.input), id: raw.id.0, files, expect })
}

/// Replaces `${name}` with the input `name` (strings as they are, other
/// values as JSON); other `${...}` text stays as written.
fn fill(prompt: &str, input: &BTreeMap<String, Value>) -> String {
    let mut out = String::with_capacity(prompt.len());
    let mut rest = prompt;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let name = &after[..end];
        match input.get(name) {
            Some(Value::String(text)) => out.push_str(text),
            Some(value) => out.push_str(&value.to_string()),
            None => out.push_str(&rest[start..start + 3 + end]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn check_unique(cases: &[Case], file: &Path, lines: &[usize]) -> Result<(), DatasetError> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (index, case) in cases.iter().enumerate() {
        if let Some(first) = seen.insert(&case.id, index) {
            let line = |i: usize| lines.get(i).copied().unwrap_or(0);
            return Err(DatasetError {
                file: file.to_path_buf(),
                line: line(index),
                column: None,
                message: format!("id: {:?} is already the id of the case at line {}", case.id, line(first)),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
