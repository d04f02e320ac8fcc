//! Datasets: JSONL (one case per line) or YAML (a list of cases). Every
//! problem is reported, each with the file, the line (and column when it is
//! known) and the field: a case with a problem does not stop the reading of
//! the others, and each of a case's scorers is read on its own.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use sr_runtime::ids::{self, IdKind};
use sr_runtime::tools::{Jail, Opened};

use crate::config::fingerprint;
use crate::relative::{DATASET_DIR, WORK_DIR, check_relative};

use crate::scorer::Scorer;

/// One case of a dataset.
#[derive(Debug)]
pub struct Case {
    pub id: String,
    /// The message the run starts with, `${name}` replaced by `input` values.
    pub prompt: String,
    pub files: Files,
    /// Variables the run starts with (`RunOptions::vars`): a prompt's or
    /// agent's inputs, as `sr try --save-case` writes them.
    pub vars: sr_runtime::eval::Vars,
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
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {message}", place(file, *line, *column))]
pub struct DatasetError {
    pub file: PathBuf,
    /// 1-based; 0 when the problem is with the whole file.
    pub line: usize,
    pub column: Option<usize>,
    pub message: String,
}

/// `file[:line[:column]]`, as compilers print a place.
fn place(file: &Path, line: usize, column: Option<usize>) -> String {
    let mut place = file.display().to_string();
    if line > 0 {
        place.push_str(&format!(":{line}"));
    }
    if let Some(column) = column {
        place.push_str(&format!(":{column}"));
    }
    place
}

/// A case as written, before its prompt is filled in and its scorers are
/// read: `S` is a scorer as written (JSON lines keep its text, for its column).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase<S> {
    id: CaseId,
    prompt: String,
    #[serde(default)]
    files: Option<RawFiles>,
    #[serde(default)]
    input: BTreeMap<String, Value>,
    #[serde(default)]
    vars: sr_runtime::eval::Vars,
    expect: Vec<S>,
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

/// A dataset as read: its cases, and the SHA-256 of its text.
pub struct Dataset {
    pub cases: Vec<Case>,
    pub sha256: String,
}

/// Reads the dataset at `path`: `.jsonl` is JSON lines, `.yaml`/`.yml` YAML.
/// Every problem is reported, each with its place.
pub fn load(path: &Path) -> Result<Dataset, Vec<DatasetError>> {
    let whole = |message: String| vec![DatasetError { file: path.to_path_buf(), line: 0, column: None, message }];
    let parse = match path.extension().and_then(|e| e.to_str()) {
        Some("jsonl") => parse_jsonl,
        Some("yaml" | "yml") => parse_yaml,
        _ => return Err(whole("a dataset is a .jsonl or .yaml file".to_string())),
    };
    let text = read(path).map_err(whole)?;
    let base = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let cases = parse(&text, path, base)?;
    Ok(Dataset { cases, sha256: fingerprint([text.as_bytes()]) })
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

/// Where a problem is: line and, when known, column (1-based, in characters).
type Place = (usize, Option<usize>);

/// Collects a dataset's problems.
struct Problems<'a> {
    file: &'a Path,
    found: Vec<DatasetError>,
}

impl Problems<'_> {
    /// One problem a line: a message over several lines (a regex's) is joined.
    fn add(&mut self, (line, column): Place, message: String) {
        let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
        self.found.push(DatasetError { file: self.file.to_path_buf(), line, column, message });
    }
}

/// JSON lines: blank lines are skipped.
pub fn parse_jsonl(text: &str, file: &Path, base: &Path) -> Result<Vec<Case>, Vec<DatasetError>> {
    let mut problems = Problems { file, found: Vec::new() };
    let mut cases = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let line_no = index + 1;
        let raw: RawCase<&serde_json::value::RawValue> = match serde_json::from_str(line) {
            Ok(raw) => raw,
            Err(e) => {
                problems.add((line_no, Some(char_column(line, e.column()))), clean(&e.to_string()));
                continue;
            }
        };
        let expect = raw
            .expect
            .iter()
            .map(|scorer| {
                // A scorer's text is a slice of the line: its offset is its column.
                let offset = (scorer.get().as_ptr() as usize).saturating_sub(line.as_ptr() as usize);
                let place = (line_no, Some(char_column(line, offset + 1)));
                (serde_json::from_str::<Value>(scorer.get()).unwrap_or(Value::Null), place)
            })
            .collect();
        let raw =
            RawCase { id: raw.id, prompt: raw.prompt, files: raw.files, input: raw.input, vars: raw.vars, expect };
        if let Some(case) = finish(raw, base, (line_no, None), &mut problems, |e| e) {
            cases.push((case, line_no));
        }
    }
    check_unique(&cases, &mut problems);
    done(cases, problems)
}

/// YAML: a list of cases. When the list is written in block style (items
/// starting with `- ` at the first column) each case is read on its own, so
/// that every case's problems are found; otherwise the file is read whole.
pub fn parse_yaml(text: &str, file: &Path, base: &Path) -> Result<Vec<Case>, Vec<DatasetError>> {
    let mut problems = Problems { file, found: Vec::new() };
    let lines: Vec<&str> = text.lines().collect();
    let starts = case_lines(text);
    let preamble_ok = starts
        .first()
        .is_some_and(|first| lines[..first - 1].iter().all(|l| l.trim().is_empty() || l.trim_start().starts_with('#')));
    let mut raws: Vec<(RawCase<Value>, usize)> = Vec::new();
    if preamble_ok {
        for (index, &start) in starts.iter().enumerate() {
            let end = starts.get(index + 1).map_or(lines.len(), |next| next - 1);
            // Blank lines before the case keep serde's line numbers the file's.
            let chunk = format!("{}{}", "\n".repeat(start - 1), lines[start - 1..end].join("\n"));
            match serde_norway::from_str::<Vec<RawCase<Value>>>(&chunk) {
                Ok(mut one) if one.len() == 1 => raws.extend(one.pop().map(|raw| (raw, start))),
                Ok(_) => problems.add((start, None), "expected one case".to_string()),
                Err(e) => {
                    // Read alone, the case is item 0: name it by its place in the file.
                    let message = clean(&e.to_string());
                    let message = match message.strip_prefix(".[0]") {
                        Some(rest) => format!(".[{index}]{rest}"),
                        None => message,
                    };
                    problems.add(yaml_place(e.location(), start), message);
                }
            }
        }
    } else {
        match serde_norway::from_str::<Vec<RawCase<Value>>>(text) {
            Ok(all) => {
                raws.extend(all.into_iter().enumerate().map(|(i, raw)| (raw, starts.get(i).copied().unwrap_or(0))))
            }
            Err(e) => problems.add(yaml_place(e.location(), 0), clean(&e.to_string())),
        }
    }
    let mut cases = Vec::new();
    for (raw, line) in raws {
        let places = scorer_lines(&lines, line, raw.expect.len());
        let expect = raw.expect.into_iter().zip(places).collect();
        let raw =
            RawCase { id: raw.id, prompt: raw.prompt, files: raw.files, input: raw.input, vars: raw.vars, expect };
        let id = raw.id.0.clone();
        if let Some(case) = finish(raw, base, (line, None), &mut problems, |e| format!("case {id:?}: {e}")) {
            cases.push((case, line));
        }
    }
    check_unique(&cases, &mut problems);
    done(cases, problems)
}

fn yaml_place(location: Option<serde_norway::Location>, otherwise: usize) -> Place {
    location.map_or((otherwise, None), |l| (l.line(), Some(l.column())))
}

fn done(cases: Vec<(Case, usize)>, problems: Problems) -> Result<Vec<Case>, Vec<DatasetError>> {
    if problems.found.is_empty() {
        Ok(cases.into_iter().map(|(case, _)| case).collect())
    } else {
        let mut found = problems.found;
        found.sort_by_key(|e| (e.line, e.column));
        Err(found)
    }
}

/// The 1-based character column of the 1-based byte column `byte` in `line`
/// (serde_json counts bytes).
fn char_column(line: &str, byte: usize) -> usize {
    line.get(..byte.saturating_sub(1)).map_or(byte, |before| before.chars().count() + 1)
}

/// The lines where the top-level list's items start (`- ` at column 1).
fn case_lines(text: &str) -> Vec<usize> {
    text.lines().enumerate().filter(|(_, l)| l.starts_with("- ") || *l == "-").map(|(i, _)| i + 1).collect()
}

/// Where each of a YAML case's `count` scorers is: the lines of the block
/// list under its `expect:` key (with the column of each `-`); when the list
/// is not written that way, the line of `expect:` (or of the case).
fn scorer_lines(lines: &[&str], case: usize, count: usize) -> Vec<Place> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let skip = |l: &str| l.trim().is_empty() || l.trim_start().starts_with('#');
    let Some(start) = case.checked_sub(1) else { return vec![(0, None); count] };
    let end = (start + 1..lines.len()).find(|&i| lines[i].starts_with("- ") || lines[i] == "-").unwrap_or(lines.len());
    let key = (start..end).find(|&i| {
        let l = lines[i].strip_prefix("- ").unwrap_or(lines[i]);
        l.trim_start().starts_with("expect:")
    });
    let Some(key) = key else { return vec![(case, None); count] };
    let fallback = vec![(key + 1, None); count];
    let after = lines[key].split_once("expect:").map_or("", |(_, rest)| rest);
    if !after.trim().is_empty() && !after.trim_start().starts_with('#') {
        return fallback;
    }
    let Some(first) = (key + 1..end).find(|&i| !skip(lines[i])) else { return fallback };
    let item = indent(lines[first]);
    let mut places = Vec::new();
    for (i, &l) in lines.iter().enumerate().take(end).skip(first) {
        if skip(l) || indent(l) > item {
            continue;
        }
        if indent(l) < item || !l.trim_start().starts_with('-') {
            break;
        }
        places.push((i + 1, Some(item + 1)));
    }
    if places.len() == count { places } else { fallback }
}

/// Serde's messages end with their own " at line L column C"; ours carry the
/// position separately.
fn clean(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

/// The case, or its problems added to `problems` (`at` is where the case is;
/// `name` words a problem of the case as a whole).
fn finish(
    raw: RawCase<(Value, Place)>,
    base: &Path,
    at: Place,
    problems: &mut Problems,
    name: impl Fn(String) -> String,
) -> Option<Case> {
    let before = problems.found.len();
    let files = match raw.files {
        None => Files::Map(BTreeMap::new()),
        Some(RawFiles::Map(map)) => Files::Map(map),
        Some(RawFiles::Dir(dir)) => match files_dir(&dir, base) {
            Ok(files) => files,
            Err(e) => {
                problems.add(at, name(e));
                Files::Map(BTreeMap::new())
            }
        },
    };
    let mut expect = Vec::new();
    for (value, place) in raw.expect {
        let scorer = crate::scorer::parse(&value).and_then(|mut scorer| {
            if let Scorer::Flow(flow) = &mut scorer {
                flow.load(base)?;
            }
            Ok(scorer)
        });
        match scorer {
            Ok(scorer) => expect.push(scorer),
            Err(e) => problems.add(place, e),
        }
    }
    (problems.found.len() == before).then(|| Case {
        prompt: fill(&raw.prompt, &raw.input),
        id: raw.id.0,
        files,
        vars: raw.vars,
        expect,
    })
}

/// A `files` directory, opened as a copy will open it: beneath the dataset's
/// directory, through no symlink that leaves it.
fn files_dir(dir: &str, base: &Path) -> Result<Files, String> {
    let jail = Jail::read_only(base)
        .map_err(|e| format!("files: cannot open the dataset's directory {}: {e}", base.display()))?;
    let relative = PathBuf::from(dir);
    match jail.open_read(&relative) {
        Ok(Opened::Dir(_)) => Ok(Files::Dir { base: jail.root().to_path_buf(), relative }),
        Ok(Opened::File(_)) => Err(format!("files: {dir:?} is not a directory")),
        Err(e) => Err(format!("files: {dir:?} is not a directory inside {DATASET_DIR}: {e}")),
    }
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

fn check_unique(cases: &[(Case, usize)], problems: &mut Problems) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (case, line) in cases {
        if let Some(first) = seen.insert(&case.id, *line) {
            seen.insert(&case.id, first);
            problems.add((*line, None), format!("id: {:?} is already the id of the case at line {first}", case.id));
        }
    }
}

#[cfg(test)]
mod tests;
