//! SR116: a stdio MCP server defined in an imported file. The runtime starts
//! its command, as the user, the first time an agent uses the tool; whoever
//! runs a workload should see which programs its libraries can start.

use std::collections::HashSet;

use super::{Anchor, SemanticDiagnostic};
use crate::diagnostic_kinds as kinds;
use crate::hir::{ImportSource, ItemData, PartId, ToolData};
use crate::items::{Item, ItemKind, file_items};
use crate::resolve::{Program, resolve_import};
use crate::{Db, File, item_data};

pub(super) fn check<'db>(db: &'db dyn Db, program: &Program<'db>) -> Vec<SemanticDiagnostic<'db>> {
    let mut out = Vec::new();
    let mut imports: Option<Vec<(Anchor<'db>, HashSet<File>)>> = None;
    for (name, &tool) in &program.tools {
        let file = tool.file(db);
        if file == program.root {
            continue;
        }
        let Some(command) = stdio_command(&item_data(db, tool)) else { continue };
        let imports = imports.get_or_insert_with(|| root_imports(db, program.root));
        let Some((import, _)) = imports.iter().find(|(_, reached)| reached.contains(&file)) else { continue };
        out.push(SemanticDiagnostic {
            related: vec![(Anchor::ItemName(tool), format!("tool '{name}' is defined here"))],
            ..SemanticDiagnostic::new(kinds::ImportedLocalProgram { tool: name.to_string(), command }, import.clone())
        });
    }
    out
}

/// The command line of a stdio MCP server.
fn stdio_command(data: &ItemData) -> Option<String> {
    let ItemData::Tool(tool) = data else { return None };
    let url = match tool {
        ToolData::Mcp { url, .. } | ToolData::Long { url: Some(url), .. } => url,
        ToolData::Long { url: None, .. }
        | ToolData::A2a { .. }
        | ToolData::Builtin(_)
        | ToolData::Ref(_)
        | ToolData::Missing => return None,
    };
    url.strip_prefix("stdio:").map(|command| command.trim().to_string())
}

/// The path of each `import` of the root, with the files it brings in
/// (transitively).
fn root_imports<'db>(db: &'db dyn Db, root: File) -> Vec<(Anchor<'db>, HashSet<File>)> {
    file_items(db, root)
        .iter()
        .filter_map(|&item| Some((item, import_target(db, root, item)?)))
        .map(|(item, (part, target))| {
            let path = Anchor::Part(item, part);
            let mut reached = HashSet::from([target]);
            let mut pending = vec![target];
            while let Some(file) = pending.pop() {
                for &inner in file_items(db, file) {
                    if let Some((_, next)) = import_target(db, file, inner)
                        && reached.insert(next)
                    {
                        pending.push(next);
                    }
                }
            }
            (path, reached)
        })
        .collect()
}

/// The path of a local `import` item in `file` and the file it loads, when
/// the workspace has it.
fn import_target(db: &dyn Db, file: File, item: Item<'_>) -> Option<(PartId, File)> {
    if item.kind(db) != ItemKind::Import {
        return None;
    }
    let ItemData::Import(import) = &*item_data(db, item) else { return None };
    let ImportSource::Local(relative) = &import.source else { return None };
    let target = db.workspace().files(db).get(&resolve_import(db, file, relative)).copied()?;
    Some((import.source_part, target))
}
