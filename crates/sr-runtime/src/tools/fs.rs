//! Upstream's file tools: `read_file`, `write_file`, `append_to_file`,
//! `create_directory`, `list_directory`, `find_in_files`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::jail::{Entry, Opened, read_capped};
use sr_hir::tool_functions::{ToolFunction, ToolKind};

use super::{Jail, Tool, ToolError, ToolSpec, failure, object_schema, string_arg, success};

/// Results of `find_in_files` stop at this many matches.
const MAX_MATCHES: usize = 200;
/// Files larger than this are not read by `read_file` and skipped (and named)
/// by `find_in_files`.
pub(crate) const MAX_FILE: u64 = 16 << 20;
/// `find_in_files` stops with an error after reading this many bytes.
const MAX_SCANNED: u64 = 256 << 20;
/// `find_in_files` stops with an error after visiting this many entries.
const MAX_ENTRIES: usize = 100_000;

pub fn read_only(jail: &Jail) -> Vec<Arc<dyn Tool>> {
    tools(ToolKind::FsReadonly, jail)
}

pub fn read_write(jail: &Jail) -> Vec<Arc<dyn Tool>> {
    tools(ToolKind::Fs, jail)
}

fn tools(kind: ToolKind, jail: &Jail) -> Vec<Arc<dyn Tool>> {
    kind.functions().unwrap_or_default().into_iter().map(|function| tool(function, jail)).collect()
}

pub(super) fn tool(function: &'static ToolFunction, jail: &Jail) -> Arc<dyn Tool> {
    Arc::new(FsTool { function, jail: jail.clone() })
}

/// One function of `sr_hir::tool_functions::FS`.
struct FsTool {
    function: &'static ToolFunction,
    jail: Jail,
}

impl Tool for FsTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.function.name.to_string(),
            description: self.function.doc.to_string(),
            parameters: object_schema(self.function.params),
        }
    }

    fn name(&self) -> String {
        self.function.name.to_string()
    }

    /// Reading, and writing a whole file or a directory, twice is doing it
    /// once; appending is not.
    fn idempotent(&self) -> bool {
        self.function.name != "append_to_file"
    }

    fn call(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        async move {
            let name = self.function.name;
            let outcome = match name {
                "find_in_files" => {
                    find(&self.jail, &string_arg(&args, "pattern")?, &string_arg(&args, "search_string")?)
                }
                _ => {
                    let path = self.jail.relative_path(&string_arg(&args, "path")?)?;
                    let jail = &self.jail;
                    match name {
                        "read_file" => read(jail, &path),
                        "write_file" => {
                            write(jail, &path, args.get("content").and_then(Value::as_str).unwrap_or(""), false)
                        }
                        "append_to_file" => write(jail, &path, &string_arg(&args, "content")?, true),
                        "create_directory" => {
                            jail.create_dir_all(&path).map(|_| json!(format!("created {}", path.display())))
                        }
                        "list_directory" => list(jail, &path),
                        other => unreachable!("`{other}` is in the table but has no implementation"),
                    }
                }
            };
            Ok(match outcome {
                Ok(output) => success(name, output),
                Err(e) => failure(name, e),
            })
        }
        .boxed()
    }
}

/// `list_directory`'s `{dirs, files}` as one list: directories first, each
/// ending in `/`.
pub(super) fn listing_names(output: Value) -> Value {
    let names = |key: &str| output.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
    let dirs = names("dirs").into_iter().map(|d| Value::String(format!("{}/", d.as_str().unwrap_or_default())));
    dirs.chain(names("files")).collect()
}

fn read(jail: &Jail, path: &Path) -> std::io::Result<Value> {
    let bytes = jail.read(path, MAX_FILE)?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => Value::String(text),
        Err(_) => Value::String("<binary>".to_string()),
    })
}

fn write(jail: &Jail, path: &Path, content: &str, append: bool) -> std::io::Result<Value> {
    use std::io::Write;
    jail.open_write(path, append)?.write_all(content.as_bytes())?;
    Ok(json!(format!("wrote {} bytes", content.len())))
}

fn list(jail: &Jail, path: &Path) -> std::io::Result<Value> {
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    for Entry { name, is_dir, .. } in jail.entries(path)? {
        if name == ".git" {
            continue;
        }
        if is_dir { dirs.push(name) } else { files.push(name) }
    }
    Ok(json!({"dirs": dirs, "files": files}))
}

/// Every line containing `needle` in the regular files matching `pattern`,
/// walking the work directory without following symlinks. Files over the size
/// cap are named in the result with `skipped`.
fn find(jail: &Jail, pattern: &str, needle: &str) -> std::io::Result<Value> {
    let glob = globset::Glob::new(pattern).map_err(std::io::Error::other)?.compile_matcher();
    let needle = needle.to_lowercase();
    let mut matches = Vec::new();
    let mut scanned = 0u64;
    let mut visited = 0usize;
    let mut stack = vec![PathBuf::from(".")];
    while let Some(dir) = stack.pop() {
        // A directory that vanished or turned into something else is passed over.
        let Ok(entries) = jail.entries(&dir) else { continue };
        for Entry { name, is_dir, is_file } in entries {
            visited += 1;
            if visited > MAX_ENTRIES {
                return Err(std::io::Error::other(format!(
                    "find_in_files visited more than {MAX_ENTRIES} entries; use a narrower pattern"
                )));
            }
            if name == ".git" {
                continue;
            }
            let path = if dir == Path::new(".") { PathBuf::from(&name) } else { dir.join(&name) };
            let relative = path.display().to_string();
            if is_dir {
                stack.push(path);
                continue;
            }
            if !is_file || !glob.is_match(&relative) {
                continue;
            }
            let Ok(Opened::File(file)) = jail.open_read(&path) else { continue };
            let size = file.metadata()?.len();
            if size > MAX_FILE {
                matches.push(json!({"filepath": relative, "skipped": format!("larger than {} MiB", MAX_FILE >> 20)}));
                continue;
            }
            scanned += size;
            if scanned > MAX_SCANNED {
                return Err(std::io::Error::other(format!(
                    "find_in_files read more than {} MiB; use a narrower pattern",
                    MAX_SCANNED >> 20
                )));
            }
            let Ok(bytes) = read_capped(file, &path, MAX_FILE) else { continue };
            let Ok(text) = String::from_utf8(bytes) else { continue };
            for (n, line) in text.lines().enumerate() {
                if line.to_lowercase().contains(&needle) {
                    matches.push(json!({"filepath": relative, "line_number": n + 1, "snippet": line.trim()}));
                    if matches.len() >= MAX_MATCHES {
                        return Ok(Value::Array(matches));
                    }
                }
            }
        }
    }
    Ok(Value::Array(matches))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jail(name: &str) -> Jail {
        let dir = std::env::temp_dir().join(format!("sr-fs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Jail::new(&dir).unwrap()
    }

    async fn call(jail: &Jail, name: &str, args: Value) -> Value {
        let tools = read_write(jail);
        let tool = tools.iter().find(|t| t.spec().name == name).unwrap();
        tool.call(args).await.unwrap()
    }

    #[tokio::test]
    async fn write_read_append_list_find() {
        let jail = jail("all");
        call(&jail, "write_file", json!({"path": "src/a.txt", "content": "Hello\nworld"})).await;
        call(&jail, "append_to_file", json!({"path": "src/a.txt", "content": "\nWORLD again"})).await;
        let read = call(&jail, "read_file", json!({"path": "src/a.txt"})).await;
        assert_eq!(read["output"], "Hello\nworld\nWORLD again");
        assert_eq!(
            call(&jail, "list_directory", json!({"path": "."})).await["output"],
            json!({"dirs": ["src"], "files": []})
        );
        let found = call(&jail, "find_in_files", json!({"pattern": "**/*.txt", "search_string": "world"})).await;
        assert_eq!(found["output"].as_array().unwrap().len(), 2);
        assert_eq!(found["output"][1]["line_number"], 3);
    }

    #[tokio::test]
    async fn escaping_the_work_directory_is_refused() {
        let jail = jail("escape");
        let tools = read_write(&jail);
        let read = tools.iter().find(|t| t.spec().name == "read_file").unwrap();
        let error = read.call(json!({"path": "../../etc/passwd"})).await.unwrap_err();
        assert!(error.0.contains("outside the work directory"), "{error:?}");
    }

    #[tokio::test]
    async fn missing_files_are_failures_not_errors() {
        let jail = jail("missing");
        let result = call(&jail, "read_file", json!({"path": "nope.txt"})).await;
        assert_eq!(result["result"], "failure");
    }
}
