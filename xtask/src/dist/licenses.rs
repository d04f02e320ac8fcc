//! THIRD_PARTY_LICENSES.md: every crate compiled into the shipped binaries,
//! with its licence, from `cargo metadata`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// The packages the shipped binaries are built from.
const ROOTS: [&str; 3] = ["sr-cli", "sr-lsp", "sr-dap"];

pub fn third_party(root: &Path) -> Result<String, String> {
    let output = Command::new("cargo")
        .args(["metadata", "--format-version", "1", "--locked", "--filter-platform", super::TRIPLE])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!("cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr)));
    }
    let metadata: Value = serde_json::from_slice(&output.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    Ok(render(&shipped(&metadata)))
}

/// (name, version, licence, repository) of every non-workspace package that
/// the roots reach through normal (not dev, not build) dependencies.
fn shipped(metadata: &Value) -> Vec<(String, String, String, String)> {
    let members: BTreeSet<&str> =
        metadata["workspace_members"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let packages: BTreeMap<&str, &Value> =
        metadata["packages"].as_array().into_iter().flatten().filter_map(|p| Some((p["id"].as_str()?, p))).collect();
    let nodes: BTreeMap<&str, &Value> = metadata["resolve"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| Some((n["id"].as_str()?, n)))
        .collect();
    let mut pending: Vec<&str> = packages
        .iter()
        .filter(|(_, p)| p["name"].as_str().is_some_and(|name| ROOTS.contains(&name)))
        .map(|(id, _)| *id)
        .collect();
    let mut seen = BTreeSet::new();
    while let Some(id) = pending.pop() {
        if !seen.insert(id) {
            continue;
        }
        for dep in nodes.get(id).and_then(|n| n["deps"].as_array()).into_iter().flatten() {
            let normal = dep["dep_kinds"].as_array().into_iter().flatten().any(|k| k["kind"].is_null());
            if normal && let Some(pkg) = dep["pkg"].as_str() {
                pending.push(pkg);
            }
        }
    }
    let mut out: Vec<_> = seen
        .into_iter()
        .filter(|id| !members.contains(id))
        .filter_map(|id| packages.get(id))
        .map(|p| {
            let text = |key: &str| p[key].as_str().unwrap_or_default().to_string();
            let licence =
                p["license"].as_str().map_or_else(|| "see the crate's licence file".to_string(), str::to_string);
            (text("name"), text("version"), licence, text("repository"))
        })
        .collect();
    out.sort();
    out
}

fn render(crates: &[(String, String, String, String)]) -> String {
    let mut text = String::from(
        "# Third-party licences\n\nThe `sr`, `sr-lsp` and `sr-dap` binaries contain code from these crates \
         (from crates.io), each under the licence named here; the texts are in each crate's source.\n\n\
         | crate | version | licence | source |\n| --- | --- | --- | --- |\n",
    );
    for (name, version, licence, repository) in crates {
        text.push_str(&format!("| {name} | {version} | {licence} | {repository} |\n"));
    }
    text
}
