//! The one owner of the database. Every document change reaches it through
//! one channel, in wire order, and it applies them one by one; readers get
//! snapshots from it through the same channel, so a snapshot reflects every
//! change sent before it. Writes wait for older snapshots to drop (salsa
//! cancels those still computing), which is why the owner is a thread of its
//! own and never a task on the async runtime.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use sr_ide::{Analysis, AnalysisHost, Encoding, LineIndex};
use tokio::sync::{mpsc, oneshot};
use tower_lsp_server::ls_types::{self as lsp, DidChangeTextDocumentParams, FileChangeType, Uri};

use crate::change::Change;
use crate::config::Config;
use crate::convert;

pub(crate) enum Message {
    /// A document or workspace change, in wire order.
    Change(Change),
    /// Settings from `initializationOptions` or `workspace/configuration`.
    Settings(Value),
    ScanFolders(Vec<PathBuf>),
    /// Files the server-side watcher ([`crate::poll`]) found changed on
    /// disk, read off the owner: the new text, or `None` when gone or
    /// unreadable.
    Disk(Vec<(PathBuf, Option<String>)>),
    Snapshot(oneshot::Sender<Snapshot>),
}

/// What the diagnostics publisher needs to hear: which files changed, and
/// whether files on disk did (pull clients are then asked to refresh).
pub(crate) struct Event {
    pub changed: Changed,
    pub disk: bool,
}

/// The files whose text or imports changed: only the programs that include
/// them can have new diagnostics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Changed {
    /// Any file's diagnostics may differ: the setting they depend on, the
    /// workspace folders or files on disk changed, or a file was removed
    /// (what imported it is not known any more).
    pub all: bool,
    pub paths: BTreeSet<PathBuf>,
}

impl Changed {
    pub(crate) fn merge(&mut self, other: Changed) {
        self.all |= other.all;
        self.paths.extend(other.paths);
    }

    pub(crate) fn is_empty(&self) -> bool {
        !self.all && self.paths.is_empty()
    }
}

/// A document the editor has open.
#[derive(Debug, Clone)]
pub(crate) struct OpenDocument {
    pub uri: Uri,
    pub version: i32,
}

/// A consistent view: the database and the open documents at one point.
pub(crate) struct Snapshot {
    pub analysis: Analysis,
    pub documents: Arc<BTreeMap<PathBuf, OpenDocument>>,
    /// The workspace folders.
    pub roots: Arc<Vec<PathBuf>>,
    pub config: Config,
    pub encoding: Encoding,
    /// The client takes `documentChanges` in workspace edits (set by the
    /// server from the client's capabilities).
    pub document_changes: bool,
    /// The client creates files a workspace edit asks for (set by the server).
    pub create_files: bool,
}

pub(crate) struct Owner {
    /// Holds the only copy of each open document's text: an edit is applied
    /// to a copy of the database's.
    host: AnalysisHost,
    documents: Arc<BTreeMap<PathBuf, OpenDocument>>,
    roots: Arc<Vec<PathBuf>>,
    config: Config,
    encoding: Arc<Mutex<Encoding>>,
    events: mpsc::UnboundedSender<Event>,
    /// A file on disk changed since the last event.
    disk_changed: bool,
    /// What changed since the last event.
    changed: Changed,
}

impl Owner {
    pub(crate) fn new(encoding: Arc<Mutex<Encoding>>, events: mpsc::UnboundedSender<Event>) -> Owner {
        Owner {
            host: AnalysisHost::new(),
            documents: Arc::default(),
            roots: Arc::default(),
            config: Config::default(),
            encoding,
            events,
            disk_changed: false,
            changed: Changed::default(),
        }
    }

    /// Runs until every sender is gone.
    pub(crate) fn run(mut self, messages: Receiver<Message>) {
        while let Ok(message) = messages.recv() {
            let mut changed = self.handle(message);
            // Apply what queued meanwhile before waking the publisher.
            loop {
                match messages.try_recv() {
                    Ok(message) => changed |= self.handle(message),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return,
                }
            }
            if changed {
                let disk = std::mem::take(&mut self.disk_changed);
                let _ = self.events.send(Event { changed: std::mem::take(&mut self.changed), disk });
            }
        }
    }

    /// Handles one message; `true` when the analysis may have changed.
    fn handle(&mut self, message: Message) -> bool {
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| match message {
            Message::Snapshot(reply) => {
                let _ = reply.send(self.snapshot());
                false
            }
            Message::Settings(value) => {
                let before = self.config.clone();
                self.config.update(&value);
                self.changed.all |= self.config.mode != before.mode;
                self.config != before
            }
            Message::ScanFolders(folders) => {
                folders.iter().for_each(|f| self.scan(f));
                Arc::make_mut(&mut self.roots).extend(folders);
                self.changed.all = true;
                true
            }
            Message::Disk(files) => {
                let mut changed = false;
                for (path, text) in files {
                    changed |= self.set_from_disk(&path, text);
                }
                if changed {
                    self.load_imports_of_open();
                }
                changed
            }
            Message::Change(change) => self.apply(change),
        }));
        result.unwrap_or_else(|_| {
            eprintln!("sr-lsp: the owner recovered from a panic while applying a change");
            self.changed.all = true;
            true
        })
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            analysis: self.host.analysis(),
            documents: self.documents.clone(),
            roots: self.roots.clone(),
            config: self.config.clone(),
            encoding: *self.encoding.lock().unwrap_or_else(|poisoned| poisoned.into_inner()),
            document_changes: false,
            create_files: false,
        }
    }

    fn apply(&mut self, change: Change) -> bool {
        match change {
            Change::Open(p) => {
                let path = convert::path_of(&p.text_document.uri);
                let before = self.imports(&path);
                self.set_document(&path, p.text_document.uri, p.text_document.version, p.text_document.text);
                self.host.load_missing_imports(&path);
                self.text_changed(&path, before);
                true
            }
            Change::Edit(p) => self.change(p),
            Change::Close(p) => {
                let path = convert::path_of(&p.text_document.uri);
                Arc::make_mut(&mut self.documents).remove(&path);
                let before = self.imports(&path);
                match sr_files::read_source(&path) {
                    Ok(text) => {
                        // Closed, the file changes rarely again (even when
                        // its text is what the editor had).
                        self.host.set_disk_file(&path, text);
                        self.text_changed(&path, before);
                    }
                    Err(_) => {
                        self.host.remove_file(&path);
                        self.changed.all = true;
                    }
                }
                true
            }
            Change::Save(p) => self.reload_imports(&convert::path_of(&p.text_document.uri)),
            Change::WatchedFiles(p) => {
                let mut changed = false;
                for event in p.changes {
                    let path = convert::path_of(&event.uri);
                    // A file the database lacks is loaded only where a
                    // workspace scan would list it (the client's watcher
                    // reports ignored and hidden files too).
                    let known = self.host.analysis().file_text(&path).ok().flatten().is_some();
                    if !known && !self.roots.iter().any(|root| sr_files::scanned(root, &path)) {
                        continue;
                    }
                    let text = match event.typ {
                        FileChangeType::DELETED => None,
                        _ => sr_files::read_source(&path).ok(),
                    };
                    changed |= self.set_from_disk(&path, text);
                }
                if changed {
                    self.load_imports_of_open();
                }
                changed
            }
            Change::WorkspaceFolders(p) => {
                // The file list is read into a local first: a snapshot kept
                // alive across `remove_file` would make it wait for itself.
                let files = self.host.analysis().files().unwrap_or_default();
                for folder in p.event.removed {
                    let root = convert::path_of(&folder.uri);
                    Arc::make_mut(&mut self.roots).retain(|r| *r != root);
                    for path in &files {
                        if path.starts_with(&root) && !self.documents.contains_key(path) {
                            self.host.remove_file(path);
                        }
                    }
                }
                for folder in p.event.added {
                    let root = convert::path_of(&folder.uri);
                    self.scan(&root);
                    Arc::make_mut(&mut self.roots).push(root);
                }
                self.disk_changed = true;
                self.changed.all = true;
                true
            }
            Change::Configuration(settings) => self.handle(Message::Settings(settings)),
        }
    }

    /// Applies what is on disk to a file the editor does not have open;
    /// `true` when the database changed.
    fn set_from_disk(&mut self, path: &Path, text: Option<String>) -> bool {
        if self.documents.contains_key(path) {
            return false;
        }
        // The snapshot is a temporary: dropped before the write below.
        let current = self.host.analysis().file_text(path).ok().flatten();
        let changed = match text {
            Some(text) if current.as_deref() != Some(text.as_str()) => {
                self.host.set_disk_file(path, text);
                true
            }
            None if current.is_some() => {
                self.host.remove_file(path);
                true
            }
            _ => false,
        };
        self.disk_changed |= changed;
        // What imported or was imported by a file on disk is not known
        // without reading its old text again: every file is checked.
        self.changed.all |= changed;
        changed
    }

    /// The local files `path` imports now (nothing for a file the database
    /// lacks). The snapshot is a temporary, dropped before any write.
    fn imports(&self, path: &Path) -> Vec<PathBuf> {
        self.host.analysis().imports(path).unwrap_or_default()
    }

    /// Records that `path`'s text changed. When its imports changed too
    /// (`before` is what it imported), the programs of the files either list
    /// reaches may have changed: they are recorded as well, so that a file
    /// an edit stops importing is judged alone again.
    fn text_changed(&mut self, path: &Path, before: Vec<PathBuf>) {
        self.changed.paths.insert(path.to_path_buf());
        let after = self.imports(path);
        if after == before {
            return;
        }
        let analysis = self.host.analysis();
        let mut seen = BTreeSet::new();
        let mut pending: Vec<PathBuf> = before.into_iter().chain(after).collect();
        while let Some(file) = pending.pop() {
            if seen.insert(file.clone()) {
                // The owner is the only writer: this snapshot is never cancelled.
                pending.extend(analysis.imports(&file).unwrap_or_default());
            }
        }
        self.changed.paths.extend(seen);
    }

    /// Loads what the open documents now import that the database lacks: a
    /// file that appeared or changed on disk may import files from outside
    /// the workspace.
    fn load_imports_of_open(&mut self) {
        let open: Vec<PathBuf> = self.documents.keys().cloned().collect();
        open.iter().for_each(|path| self.host.load_missing_imports(path));
    }

    /// After a save: re-reads the closed files `path` imports, transitively
    /// (another program may have changed them, or created or deleted them).
    fn reload_imports(&mut self, path: &Path) -> bool {
        let mut changed = false;
        let mut seen = BTreeSet::new();
        let mut pending = vec![path.to_path_buf()];
        while let Some(file) = pending.pop() {
            let imports = self.host.analysis().document_links(&file).unwrap_or_default();
            for (_, target) in imports {
                if !seen.insert(target.clone()) {
                    continue;
                }
                if !self.documents.contains_key(&target) {
                    let text = sr_files::read_source(&target).ok();
                    changed |= self.set_from_disk(&target, text);
                }
                pending.push(target);
            }
        }
        changed
    }

    fn set_document(&mut self, path: &Path, uri: Uri, version: i32, text: String) {
        self.host.set_file(path, text);
        Arc::make_mut(&mut self.documents).insert(path.to_path_buf(), OpenDocument { uri, version });
    }

    fn change(&mut self, params: DidChangeTextDocumentParams) -> bool {
        let uri = params.text_document.uri;
        let path = convert::path_of(&uri);
        let open = self.documents.contains_key(&path);
        let Some(mut text) =
            self.host.analysis().file_text(&path).ok().flatten().filter(|_| open).map(|t| t.to_string())
        else {
            eprintln!("sr-lsp: change to a document that is not open: {}", uri.as_str());
            return false;
        };
        let before = self.imports(&path);
        let encoding = *self.encoding.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // The database's index of the text before this notification (built
        // once per version and usually already there: diagnostics used it).
        let mut index = self.host.analysis().line_index(&path).ok().flatten();
        for change in params.content_changes {
            match change.range {
                None => text = change.text,
                Some(range) => {
                    let index = index.take().unwrap_or_else(|| LineIndex::new(&text));
                    let range = convert::text_range(&index, range, encoding);
                    text.replace_range(std::ops::Range::<usize>::from(range), &change.text);
                }
            }
            index = None;
        }
        self.set_document(&path, uri, params.text_document.version, text);
        self.host.load_missing_imports(&path);
        self.text_changed(&path, before);
        true
    }

    /// Loads the `.sr` files under a workspace folder (open documents keep
    /// the editor's text).
    fn scan(&mut self, folder: &Path) {
        let scan = sr_files::sr_files(folder);
        for problem in &scan.problems {
            eprintln!("sr-lsp: workspace scan: {problem}");
        }
        for path in scan.files {
            if !self.documents.contains_key(&path)
                && let Ok(text) = sr_files::read_source(&path)
            {
                self.host.set_disk_file(&path, text);
            }
        }
    }
}

/// Folders to scan from `initialize`: the workspace folders, else the root.
pub(crate) fn workspace_folders(params: &lsp::InitializeParams) -> Vec<PathBuf> {
    match &params.workspace_folders {
        Some(folders) if !folders.is_empty() => folders.iter().map(|f| convert::path_of(&f.uri)).collect(),
        #[allow(deprecated)]
        _ => params.root_uri.iter().map(convert::path_of).collect(),
    }
}
