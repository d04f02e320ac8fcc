//! Upstream's file tools: `read_file`, `write_file`, `append_to_file`,
//! `create_directory`, `list_directory`, `find_in_files`.

use std::path::Path;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::{Jail, Tool, ToolError, ToolSpec, failure, object_schema, string_arg, success};

/// Results of `find_in_files` stop at this many matches.
const MAX_MATCHES: usize = 200;
/// Files larger than this are not read by `read_file`.
const MAX_READ: u64 = 1 << 20;

pub fn read_only(jail: &Jail) -> Vec<Arc<dyn Tool>> {
    [FsOp::Read, FsOp::List, FsOp::Find].into_iter().map(|op| tool(op, jail)).collect()
}

pub fn read_write(jail: &Jail) -> Vec<Arc<dyn Tool>> {
    [FsOp::Read, FsOp::CreateDir, FsOp::Write, FsOp::Append, FsOp::List, FsOp::Find]
        .into_iter()
        .map(|op| tool(op, jail))
        .collect()
}

fn tool(op: FsOp, jail: &Jail) -> Arc<dyn Tool> {
    Arc::new(FsTool { op, jail: jail.clone() })
}

#[derive(Clone, Copy)]
enum FsOp {
    Read,
    Write,
    Append,
    CreateDir,
    List,
    Find,
}

struct FsTool {
    op: FsOp,
    jail: Jail,
}

impl FsOp {
    fn name(self) -> &'static str {
        match self {
            FsOp::Read => "read_file",
            FsOp::Write => "write_file",
            FsOp::Append => "append_to_file",
            FsOp::CreateDir => "create_directory",
            FsOp::List => "list_directory",
            FsOp::Find => "find_in_files",
        }
    }
}

impl Tool for FsTool {
    fn spec(&self) -> ToolSpec {
        let path = ("path", "Path relative to the working directory.");
        let (description, parameters) = match self.op {
            FsOp::Read => ("Read the contents of a text file.", object_schema(&[path], &["path"])),
            FsOp::Write => (
                "Write text to a file, replacing its contents and creating missing directories.",
                object_schema(&[path, ("content", "The text to write.")], &["path"]),
            ),
            FsOp::Append => (
                "Append text to a file.",
                object_schema(&[path, ("content", "The text to append.")], &["path", "content"]),
            ),
            FsOp::CreateDir => ("Create a directory and its parents.", object_schema(&[path], &["path"])),
            FsOp::List => ("List the files and directories in a directory.", object_schema(&[path], &["path"])),
            FsOp::Find => (
                "Search files matching a glob pattern for a string (case-insensitive).",
                object_schema(
                    &[
                        ("pattern", "Glob pattern relative to the working directory, e.g. **/*.py."),
                        ("search_string", "Text to find."),
                    ],
                    &["pattern", "search_string"],
                ),
            ),
        };
        ToolSpec { name: self.op.name().to_string(), description: description.to_string(), parameters }
    }

    fn call(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        async move {
            let name = self.op.name();
            let outcome = match self.op {
                FsOp::Find => find(&self.jail, &string_arg(&args, "pattern")?, &string_arg(&args, "search_string")?),
                _ => {
                    let path = self.jail.resolve(&string_arg(&args, "path")?)?;
                    match self.op {
                        FsOp::Read => read(&path),
                        FsOp::Write => write(&path, args.get("content").and_then(Value::as_str).unwrap_or(""), false),
                        FsOp::Append => write(&path, &string_arg(&args, "content")?, true),
                        FsOp::CreateDir => std::fs::create_dir_all(&path)
                            .map(|_| json!(format!("created {}", self.jail.relative(&path)))),
                        FsOp::List => list(&path),
                        FsOp::Find => unreachable!(),
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

fn read(path: &Path) -> std::io::Result<Value> {
    let metadata = std::fs::metadata(path)?;
    if metadata.len() > MAX_READ {
        return Err(std::io::Error::other(format!("the file is larger than {MAX_READ} bytes")));
    }
    let bytes = std::fs::read(path)?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => Value::String(text),
        Err(_) => Value::String("<binary>".to_string()),
    })
}

fn write(path: &Path, content: &str, append: bool) -> std::io::Result<Value> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if append {
        use std::io::Write;
        std::fs::OpenOptions::new().create(true).append(true).open(path)?.write_all(content.as_bytes())?;
    } else {
        std::fs::write(path, content)?;
    }
    Ok(json!(format!("wrote {} bytes", content.len())))
}

fn list(path: &Path) -> std::io::Result<Value> {
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == ".git" {
            continue;
        }
        if entry.file_type()?.is_dir() { dirs.push(name) } else { files.push(name) }
    }
    dirs.sort();
    files.sort();
    Ok(json!({"dirs": dirs, "files": files}))
}

fn find(jail: &Jail, pattern: &str, needle: &str) -> std::io::Result<Value> {
    let glob = globset::Glob::new(pattern).map_err(std::io::Error::other)?.compile_matcher();
    let needle = needle.to_lowercase();
    let mut matches = Vec::new();
    let mut stack = vec![jail.root().to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)?.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            let relative = jail.relative(&path);
            if entry.file_name() == ".git" {
                continue;
            }
            let file_type = entry.file_type()?;
            if file_type.is_dir() {
                stack.push(path);
            } else if file_type.is_file() && glob.is_match(&relative) {
                let Ok(text) = std::fs::read_to_string(&path) else { continue };
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
