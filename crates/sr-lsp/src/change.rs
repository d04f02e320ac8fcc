//! The notifications that change documents or the workspace, typed: read once
//! from the wire (in wire order, by `ordered`) and applied by the owner.

use serde::de::DeserializeOwned;
use serde_json::Value;
use tower_lsp_server::ls_types::notification::{
    DidChangeConfiguration, DidChangeTextDocument, DidChangeWatchedFiles, DidChangeWorkspaceFolders,
    DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument, Notification,
};
use tower_lsp_server::ls_types::{
    DidChangeTextDocumentParams, DidChangeWatchedFilesParams, DidChangeWorkspaceFoldersParams,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, DidSaveTextDocumentParams,
};

pub(crate) enum Change {
    Open(DidOpenTextDocumentParams),
    Edit(DidChangeTextDocumentParams),
    Close(DidCloseTextDocumentParams),
    Save(DidSaveTextDocumentParams),
    WatchedFiles(DidChangeWatchedFilesParams),
    WorkspaceFolders(DidChangeWorkspaceFoldersParams),
    /// The `settings` of `workspace/didChangeConfiguration`.
    Configuration(Value),
}

impl Change {
    /// The change a notification makes; `None` for a method that changes
    /// nothing, an error for params of the wrong shape.
    pub(crate) fn read(method: &str, params: Value) -> Option<Result<Change, String>> {
        fn typed<T: DeserializeOwned>(params: Value, wrap: fn(T) -> Change) -> Result<Change, String> {
            serde_json::from_value(params).map(wrap).map_err(|e| e.to_string())
        }
        Some(match method {
            DidOpenTextDocument::METHOD => typed(params, Change::Open),
            DidChangeTextDocument::METHOD => typed(params, Change::Edit),
            DidCloseTextDocument::METHOD => typed(params, Change::Close),
            DidSaveTextDocument::METHOD => typed(params, Change::Save),
            DidChangeWatchedFiles::METHOD => typed(params, Change::WatchedFiles),
            DidChangeWorkspaceFolders::METHOD => typed(params, Change::WorkspaceFolders),
            DidChangeConfiguration::METHOD => {
                Ok(Change::Configuration(params.get("settings").cloned().unwrap_or(Value::Null)))
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn changes_are_read_by_method_and_malformed_params_are_errors() {
        let open = json!({"textDocument": {"uri": "file:///a.sr", "languageId": "sr", "version": 1, "text": "x"}});
        assert!(
            matches!(Change::read("textDocument/didOpen", open), Some(Ok(Change::Open(p))) if p.text_document.text == "x")
        );
        assert!(matches!(Change::read("textDocument/didOpen", json!({"textDocument": 3})), Some(Err(_))));
        let save = json!({"textDocument": {"uri": "file:///a.sr"}});
        assert!(matches!(
            Change::read("textDocument/didSave", save),
            Some(Ok(Change::Save(p))) if p.text_document.uri.as_str() == "file:///a.sr"
        ));
        let settings = json!({"settings": {"streetrace": {"compat": "upstream"}}});
        assert!(matches!(
            Change::read("workspace/didChangeConfiguration", settings),
            Some(Ok(Change::Configuration(v))) if v["streetrace"]["compat"] == "upstream"
        ));
        assert!(Change::read("textDocument/hover", json!({})).is_none());
        assert!(Change::read("initialized", json!({})).is_none());
    }
}
