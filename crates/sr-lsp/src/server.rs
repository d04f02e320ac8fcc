//! The `LanguageServer` implementation: capabilities, lifecycle, and each
//! request run on a snapshot in a blocking task (panics there become an
//! internal error for that request only; cancellation becomes
//! `ContentModified` or `RequestCancelled`).

use std::sync::Arc;

use serde_json::json;
use sr_ide::Encoding;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::notification::{DidChangeWatchedFiles, Notification};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use crate::handlers::{self, Failure};
use crate::owner::{Message, Snapshot, workspace_folders};
use crate::shared::{ClientFeatures, Shared};
use crate::{raw, semantic};

pub struct Server {
    client: Client,
    shared: Arc<Shared>,
}

/// Cancels a snapshot's computation when the request future is dropped
/// (`$/cancelRequest` aborts it).
struct CancelOnDrop(Option<sr_ide::CancellationToken>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(token) = self.0.take() {
            token.cancel();
        }
    }
}

impl Server {
    pub(crate) fn new(client: Client, shared: Arc<Shared>) -> Server {
        Server { client, shared }
    }

    async fn run<T: Send + 'static>(
        &self,
        handler: impl FnOnce(&Snapshot) -> handlers::Result<T> + Send + 'static,
    ) -> Result<T> {
        let Some(snapshot) = self.shared.snapshot().await else { return Err(Error::content_modified()) };
        let mut guard = CancelOnDrop(Some(snapshot.analysis.cancellation_token()));
        let result = tokio::task::spawn_blocking(move || handler(&snapshot)).await;
        guard.0 = None;
        match result {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(Failure::Cancelled(sr_ide::Cancelled::Local))) => Err(Error::request_cancelled()),
            Ok(Err(Failure::Cancelled(_))) => Err(Error::content_modified()),
            Ok(Err(Failure::Refused(message))) => {
                Err(Error { code: ErrorCode::ServerError(-32803), message: message.into(), data: None })
            }
            Err(join) => {
                Err(Error { message: format!("request handler panicked: {join}").into(), ..Error::internal_error() })
            }
        }
    }

    /// [`Self::run`] for an answer that may be big: over stdio it is
    /// serialised on the blocking thread into the request's [`raw`] slot.
    async fn run_raw<T: serde::Serialize + Default + Send + 'static>(
        &self,
        handler: impl FnOnce(&Snapshot) -> handlers::Result<T> + Send + 'static,
    ) -> Result<T> {
        let slot = raw::slot();
        self.run(move |s| handler(s).map(|value| raw::answer(slot.as_ref(), value))).await
    }

    /// What the server offers. Pull diagnostics only to a client that pulls
    /// and can be asked to pull again: any other is pushed them.
    fn capabilities(encoding: Encoding, commands: Vec<String>, pull: bool) -> ServerCapabilities {
        ServerCapabilities {
            position_encoding: Some(match encoding {
                Encoding::Utf8 => PositionEncodingKind::UTF8,
                _ => PositionEncodingKind::UTF16,
            }),
            text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                // Saves re-read the closed files the saved document imports.
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                ..Default::default()
            })),
            diagnostic_provider: pull.then(|| {
                DiagnosticServerCapabilities::Options(DiagnosticOptions {
                    identifier: Some("streetrace".to_string()),
                    inter_file_dependencies: true,
                    workspace_diagnostics: true,
                    work_done_progress_options: Default::default(),
                })
            }),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            completion_provider: Some(CompletionOptions {
                trigger_characters: Some(vec!["$".to_string(), "{".to_string(), "\"".to_string()]),
                ..Default::default()
            }),
            definition_provider: Some(OneOf::Left(true)),
            type_definition_provider: Some(TypeDefinitionProviderCapability::Simple(true)),
            signature_help_provider: Some(SignatureHelpOptions {
                trigger_characters: Some(vec!["(".to_string(), ",".to_string()]),
                retrigger_characters: None,
                work_done_progress_options: Default::default(),
            }),
            references_provider: Some(OneOf::Left(true)),
            document_highlight_provider: Some(OneOf::Left(true)),
            document_symbol_provider: Some(OneOf::Left(true)),
            workspace_symbol_provider: Some(OneOf::Left(true)),
            code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                code_action_kinds: Some(vec![
                    CodeActionKind::QUICKFIX,
                    CodeActionKind::REFACTOR_EXTRACT,
                    CodeActionKind::REFACTOR_INLINE,
                    handlers::REFACTOR_MOVE,
                ]),
                ..Default::default()
            })),
            // References counts are computed when the client resolves them.
            code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(true) }),
            document_formatting_provider: Some(OneOf::Left(true)),
            document_range_formatting_provider: Some(OneOf::Left(true)),
            rename_provider: Some(OneOf::Right(RenameOptions {
                prepare_provider: Some(true),
                work_done_progress_options: Default::default(),
            })),
            folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
            selection_range_provider: Some(SelectionRangeProviderCapability::Simple(true)),
            semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
                SemanticTokensOptions {
                    legend: semantic::legend(),
                    range: Some(true),
                    full: Some(SemanticTokensFullOptions::Delta { delta: Some(true) }),
                    ..Default::default()
                },
            )),
            inlay_hint_provider: Some(OneOf::Left(true)),
            document_link_provider: Some(DocumentLinkOptions {
                resolve_provider: Some(false),
                work_done_progress_options: Default::default(),
            }),
            execute_command_provider: Some(ExecuteCommandOptions { commands, ..Default::default() }),
            call_hierarchy_provider: Some(CallHierarchyServerCapability::Simple(true)),
            workspace: Some(WorkspaceServerCapabilities {
                workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                    supported: Some(true),
                    change_notifications: Some(OneOf::Left(true)),
                }),
                // Renaming a `.sr` file, or a folder, rewrites the imports that name it.
                file_operations: Some(WorkspaceFileOperationsServerCapabilities {
                    will_rename: Some(FileOperationRegistrationOptions {
                        filters: vec![
                            FileOperationFilter {
                                scheme: Some("file".to_string()),
                                pattern: FileOperationPattern {
                                    glob: "**/*.sr".to_string(),
                                    matches: Some(FileOperationPatternKind::File),
                                    options: None,
                                },
                            },
                            FileOperationFilter {
                                scheme: Some("file".to_string()),
                                pattern: FileOperationPattern {
                                    glob: "**".to_string(),
                                    matches: Some(FileOperationPatternKind::Folder),
                                    options: None,
                                },
                            },
                        ],
                    }),
                    ..Default::default()
                }),
            }),
            experimental: Some(json!({
                "streetrace": { "serverVersion": env!("CARGO_PKG_VERSION"), "protocolVersion": 1 }
            })),
            ..Default::default()
        }
    }

    fn semantic_full(&self, uri: &Uri, tokens: Vec<SemanticToken>) -> SemanticTokens {
        let result_id = self.shared.result_id();
        self.shared
            .semantic_tokens
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(uri.as_str().to_string(), (result_id.clone(), tokens.clone()));
        SemanticTokens { result_id: Some(result_id), data: tokens }
    }
}

impl LanguageServer for Server {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let offered = params.capabilities.general.as_ref().and_then(|g| g.position_encodings.as_ref());
        let encoding = if offered.is_some_and(|e| e.contains(&PositionEncodingKind::UTF8)) {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        };
        *self.shared.encoding.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = encoding;
        if let Some(options) = params.initialization_options.clone() {
            self.shared.send(Message::Settings(options));
        }
        if let Some(trace) = params.trace {
            self.shared.set_trace(trace);
        }
        let features = client_features(&params.capabilities);
        *self.shared.client_features.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = features;
        let document_changes = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.workspace_edit.as_ref())
            .and_then(|e| e.document_changes)
            .unwrap_or(false);
        self.shared.document_changes.store(document_changes, std::sync::atomic::Ordering::SeqCst);
        self.shared.send(Message::ScanFolders(workspace_folders(&params)));
        Ok(InitializeResult {
            capabilities: Server::capabilities(
                encoding,
                advertised_commands(params.initialization_options.as_ref()),
                features.pull_diagnostics,
            ),
            server_info: Some(ServerInfo {
                name: "sr-lsp".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        let features = self.shared.features();
        if !features.watch {
            tokio::spawn(crate::poll::run(Arc::downgrade(&self.shared)));
        }
        let client = self.client.clone();
        let shared = self.shared.clone();
        // Requests to the client wait for its answer: never inside a handler.
        tokio::spawn(async move {
            if features.watch {
                let registration = Registration {
                    id: "streetrace-watch".to_string(),
                    method: <DidChangeWatchedFiles as Notification>::METHOD.to_string(),
                    register_options: Some(json!({ "watchers": [{ "globPattern": "**/*.sr" }] })),
                };
                let _ = client.register_capability(vec![registration]).await;
            }
            if features.pull_configuration {
                let item = ConfigurationItem { scope_uri: None, section: Some("streetrace".to_string()) };
                if let Ok(values) = client.configuration(vec![item]).await
                    && let Some(value) = values.into_iter().next().filter(|v| !v.is_null())
                {
                    shared.send(Message::Settings(value));
                }
            }
        });
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    // Document changes reach the owner in `Ordered`, in wire order.
    async fn did_open(&self, _: DidOpenTextDocumentParams) {}
    async fn did_change(&self, _: DidChangeTextDocumentParams) {}
    async fn did_close(&self, _: DidCloseTextDocumentParams) {}
    async fn did_save(&self, _: DidSaveTextDocumentParams) {}
    async fn did_change_watched_files(&self, _: DidChangeWatchedFilesParams) {}
    async fn did_change_workspace_folders(&self, _: DidChangeWorkspaceFoldersParams) {}

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        // Clients that push nothing expect the server to pull.
        if self.shared.features().pull_configuration && params.settings.get("streetrace").is_none() {
            let item = ConfigurationItem { scope_uri: None, section: Some("streetrace".to_string()) };
            let (client, shared) = (self.client.clone(), self.shared.clone());
            tokio::spawn(async move {
                if let Ok(values) = client.configuration(vec![item]).await
                    && let Some(value) = values.into_iter().next().filter(|v| !v.is_null())
                {
                    shared.send(Message::Settings(value));
                }
            });
        }
    }

    async fn diagnostic(&self, params: DocumentDiagnosticParams) -> Result<DocumentDiagnosticReportResult> {
        self.run(move |s| Ok(crate::diagnostics::document_report(s, params)?)).await
    }

    async fn workspace_diagnostic(&self, params: WorkspaceDiagnosticParams) -> Result<WorkspaceDiagnosticReportResult> {
        self.shared.workspace_pulled();
        self.run(move |s| Ok(crate::diagnostics::workspace_report(s, params)?)).await
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        self.run(move |s| handlers::hover(s, params)).await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let config = sr_ide::CompletionConfig { snippets: self.shared.features().snippets };
        self.run_raw(move |s| handlers::completion(s, params, config)).await
    }

    async fn goto_definition(&self, params: GotoDefinitionParams) -> Result<Option<GotoDefinitionResponse>> {
        self.run(move |s| handlers::goto_definition(s, params)).await
    }

    async fn goto_type_definition(
        &self,
        params: request::GotoTypeDefinitionParams,
    ) -> Result<Option<request::GotoTypeDefinitionResponse>> {
        self.run(move |s| handlers::goto_type_definition(s, params)).await
    }

    async fn signature_help(&self, params: SignatureHelpParams) -> Result<Option<SignatureHelp>> {
        self.run(move |s| handlers::signature_help(s, params)).await
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        self.run_raw(move |s| handlers::references(s, params)).await
    }

    async fn document_highlight(&self, params: DocumentHighlightParams) -> Result<Option<Vec<DocumentHighlight>>> {
        self.run(move |s| handlers::document_highlight(s, params)).await
    }

    async fn prepare_rename(&self, params: TextDocumentPositionParams) -> Result<Option<PrepareRenameResponse>> {
        self.run(move |s| handlers::prepare_rename(s, params)).await
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        self.run(move |s| handlers::rename(s, params)).await
    }

    async fn document_symbol(&self, params: DocumentSymbolParams) -> Result<Option<DocumentSymbolResponse>> {
        let slot = raw::slot();
        self.run(move |s| handlers::document_symbol(s, params, slot.as_ref())).await
    }

    async fn symbol(&self, params: WorkspaceSymbolParams) -> Result<Option<WorkspaceSymbolResponse>> {
        self.run_raw(move |s| handlers::workspace_symbol(s, params)).await
    }

    async fn semantic_tokens_full(&self, params: SemanticTokensParams) -> Result<Option<SemanticTokensResult>> {
        let uri = params.text_document.uri;
        let for_handler = uri.clone();
        let tokens = self.run(move |s| handlers::semantic_tokens(s, &for_handler, None)).await?;
        let result = tokens.map(|tokens| SemanticTokensResult::Tokens(self.semantic_full(&uri, tokens)));
        Ok(raw::answer(raw::slot().as_ref(), result))
    }

    async fn semantic_tokens_full_delta(
        &self,
        params: SemanticTokensDeltaParams,
    ) -> Result<Option<SemanticTokensFullDeltaResult>> {
        let uri = params.text_document.uri;
        let for_handler = uri.clone();
        let Some(tokens) = self.run(move |s| handlers::semantic_tokens(s, &for_handler, None)).await? else {
            return Ok(None);
        };
        let previous = self
            .shared
            .semantic_tokens
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(uri.as_str())
            .cloned();
        match previous {
            Some((id, old)) if id == params.previous_result_id => {
                let edits = semantic::diff(&old, &tokens);
                let full = self.semantic_full(&uri, tokens);
                Ok(Some(SemanticTokensFullDeltaResult::TokensDelta(SemanticTokensDelta {
                    result_id: full.result_id,
                    edits,
                })))
            }
            _ => Ok(Some(SemanticTokensFullDeltaResult::Tokens(self.semantic_full(&uri, tokens)))),
        }
    }

    async fn semantic_tokens_range(
        &self,
        params: SemanticTokensRangeParams,
    ) -> Result<Option<SemanticTokensRangeResult>> {
        let (uri, range) = (params.text_document.uri, params.range);
        let tokens = self.run(move |s| handlers::semantic_tokens(s, &uri, Some(range))).await?;
        Ok(tokens.map(|data| SemanticTokensRangeResult::Tokens(SemanticTokens { result_id: None, data })))
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        self.run(move |s| handlers::folding_range(s, params)).await
    }

    async fn selection_range(&self, params: SelectionRangeParams) -> Result<Option<Vec<SelectionRange>>> {
        self.run(move |s| handlers::selection_range(s, params)).await
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        self.run_raw(move |s| handlers::formatting(s, &params.text_document.uri, None)).await
    }

    async fn range_formatting(&self, params: DocumentRangeFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        self.run(move |s| handlers::formatting(s, &params.text_document.uri, Some(params.range))).await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        self.run(move |s| handlers::code_action(s, params)).await
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        self.run(move |s| handlers::code_lens(s, params)).await
    }

    async fn code_lens_resolve(&self, lens: CodeLens) -> Result<CodeLens> {
        self.run(move |s| handlers::code_lens_resolve(s, lens)).await
    }

    async fn will_rename_files(&self, params: RenameFilesParams) -> Result<Option<WorkspaceEdit>> {
        self.run(move |s| handlers::will_rename_files(s, params)).await
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        self.run(move |s| handlers::inlay_hint(s, params)).await
    }

    async fn document_link(&self, params: DocumentLinkParams) -> Result<Option<Vec<DocumentLink>>> {
        self.run(move |s| handlers::document_link(s, params)).await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        self.run(move |s| crate::commands::execute(s, params)).await
    }

    async fn prepare_call_hierarchy(
        &self,
        params: CallHierarchyPrepareParams,
    ) -> Result<Option<Vec<CallHierarchyItem>>> {
        self.run(move |s| handlers::prepare_call_hierarchy(s, params)).await
    }

    async fn incoming_calls(
        &self,
        params: CallHierarchyIncomingCallsParams,
    ) -> Result<Option<Vec<CallHierarchyIncomingCall>>> {
        self.run(move |s| handlers::incoming_calls(s, params)).await
    }

    async fn outgoing_calls(
        &self,
        params: CallHierarchyOutgoingCallsParams,
    ) -> Result<Option<Vec<CallHierarchyOutgoingCall>>> {
        self.run(move |s| handlers::outgoing_calls(s, params)).await
    }
}

/// What the client supports, from its capabilities.
fn client_features(capabilities: &ClientCapabilities) -> ClientFeatures {
    let workspace = capabilities.workspace.as_ref();
    let refresh = workspace.and_then(|w| w.diagnostics.as_ref()).and_then(|d| d.refresh_support).unwrap_or(false);
    ClientFeatures {
        watch: workspace
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|w| w.dynamic_registration)
            .unwrap_or(false),
        pull_configuration: workspace.and_then(|w| w.configuration).unwrap_or(false),
        // A client that pulls but cannot be asked to pull again (Neovim 0.11)
        // would keep a stale result when a file it imports changes: it is
        // offered no pull and pushed instead.
        pull_diagnostics: capabilities.text_document.as_ref().is_some_and(|t| t.diagnostic.is_some()) && refresh,
        diagnostic_refresh: refresh,
        snippets: capabilities
            .text_document
            .as_ref()
            .and_then(|t| t.completion.as_ref())
            .and_then(|c| c.completion_item.as_ref())
            .and_then(|i| i.snippet_support)
            .unwrap_or(false),
        create_files: workspace.and_then(|w| w.workspace_edit.as_ref()).is_some_and(|e| {
            e.document_changes == Some(true)
                && e.resource_operations.as_ref().is_some_and(|ops| ops.contains(&ResourceOperationKind::Create))
        }),
    }
}

/// The commands to advertise: all of them but those the client registers
/// itself (`initializationOptions.streetrace.clientCommands`; VS Code runs
/// `streetrace.run`/`streetrace.debug` in the extension, and a client library
/// that registers every advertised command would clash with them).
fn advertised_commands(options: Option<&serde_json::Value>) -> Vec<String> {
    let own = options.and_then(|o| o["streetrace"]["clientCommands"].as_array());
    crate::command_names::CommandName::ALL
        .iter()
        .map(|c| c.name())
        .filter(|name| !own.is_some_and(|own| own.iter().any(|o| o == *name)))
        .map(str::to_string)
        .collect()
}
