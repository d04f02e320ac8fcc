//! Inputs and the database.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use salsa::{Durability, Setter};

use crate::LastPieces;

/// A source file. `path` is absolute and lexically normalised.
#[salsa::input(debug)]
pub struct File {
    #[returns(ref)]
    pub path: PathBuf,
    #[returns(ref)]
    pub text: Arc<str>,
}

/// Every file the database knows, by path. Imports resolve against it.
#[salsa::input(debug)]
pub struct Workspace {
    #[returns(ref)]
    pub files: BTreeMap<PathBuf, File>,
    /// Why files an import names could not be read, by path (a FIFO, a
    /// device, a symlink loop, over the size limit): the import says so
    /// rather than that the file is missing.
    #[returns(ref)]
    pub unreadable: BTreeMap<PathBuf, String>,
}

#[salsa::db]
pub trait Db: salsa::Database {
    fn workspace(&self) -> Workspace;
    /// The pieces of each file's last parse (a cache; see [`LastPieces`]).
    fn last_pieces(&self) -> &LastPieces;
}

/// The database. Cloning it gives a snapshot that shares the storage (for
/// read-only work on another thread).
#[salsa::db]
#[derive(Clone)]
pub struct RootDatabase {
    storage: salsa::Storage<Self>,
    workspace: Option<Workspace>,
    last_pieces: Arc<LastPieces>,
    /// Names of the queries executed since the log was last taken (for tests).
    executed: Arc<Mutex<Option<Vec<String>>>>,
}

impl Default for RootDatabase {
    fn default() -> Self {
        RootDatabase::new(salsa::Storage::new(None), Arc::default())
    }
}

#[salsa::db]
impl salsa::Database for RootDatabase {}

#[salsa::db]
impl Db for RootDatabase {
    fn workspace(&self) -> Workspace {
        self.workspace.expect("RootDatabase::new sets the workspace")
    }

    fn last_pieces(&self) -> &LastPieces {
        &self.last_pieces
    }
}

impl RootDatabase {
    fn new(storage: salsa::Storage<Self>, executed: Arc<Mutex<Option<Vec<String>>>>) -> Self {
        let mut db = RootDatabase { storage, workspace: None, last_pieces: Arc::default(), executed };
        db.workspace =
            Some(Workspace::builder(BTreeMap::new(), BTreeMap::new()).durability(Durability::MEDIUM).new(&db));
        db
    }

    /// A database that records which queries execute and which memos are
    /// validated without executing (`validated …`; see
    /// [`RootDatabase::take_executed`]); the hook costs time, so only tests use it.
    pub fn with_execution_log() -> Self {
        let executed: Arc<Mutex<Option<Vec<String>>>> = Arc::new(Mutex::new(None));
        let log = executed.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            let entry = match event.kind {
                salsa::EventKind::WillExecute { database_key } => format!("{database_key:?}"),
                salsa::EventKind::DidValidateMemoizedValue { database_key } => format!("validated {database_key:?}"),
                _ => return,
            };
            if let Some(log) = log.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).as_mut() {
                log.push(entry);
            }
        })));
        RootDatabase::new(storage, executed)
    }

    /// Adds a file or replaces its text: a text an editor holds, which can
    /// change at every keystroke (salsa's `Durability::LOW`).
    pub fn set_file(&mut self, path: impl AsRef<Path>, text: impl Into<Arc<str>>) -> File {
        let path = normalize(path.as_ref());
        let text = text.into();
        match self.file(&path) {
            Some(file) => {
                if **file.text(self) != *text {
                    file.set_text(self).with_durability(Durability::LOW).to(text);
                }
                file
            }
            None => self.add_file(path, text, Durability::LOW),
        }
    }

    /// Adds a file read from disk or replaces its text, even with an equal
    /// one: a file no editor holds, which changes rarely (`Durability::MEDIUM`).
    /// After an edit to a file set with [`RootDatabase::set_file`], what was
    /// computed from such files alone is current without salsa walking its
    /// inputs again (each piece of their parse): an edit's cost does not grow
    /// with the closed files of the workspace.
    pub fn set_disk_file(&mut self, path: impl AsRef<Path>, text: impl Into<Arc<str>>) -> File {
        let path = normalize(path.as_ref());
        let text = text.into();
        match self.file(&path) {
            Some(file) => {
                file.set_text(self).with_durability(Durability::MEDIUM).to(text);
                file
            }
            None => self.add_file(path, text, Durability::MEDIUM),
        }
    }

    fn add_file(&mut self, path: PathBuf, text: Arc<str>, durability: Durability) -> File {
        // A file's path never changes: it is what the file is.
        let file =
            File::builder(path.clone(), text).path_durability(Durability::HIGH).text_durability(durability).new(self);
        let workspace = self.workspace();
        let mut files = workspace.files(self).clone();
        files.insert(path, file);
        // Files come and go rarely: an edit leaves what reads the list current.
        workspace.set_files(self).with_durability(Durability::MEDIUM).to(files);
        file
    }

    /// Drops `path` from the workspace and empties its text. Salsa keeps a
    /// query's last value until the query runs again: a long-lived database
    /// re-runs the file's queries on the empty text to free their old values.
    pub fn remove_file(&mut self, path: impl AsRef<Path>) {
        let path = normalize(path.as_ref());
        let workspace = self.workspace();
        let mut files = workspace.files(self).clone();
        if let Some(file) = files.remove(&path) {
            self.last_pieces.forget(file);
            file.set_text(self).to(Arc::from(""));
            workspace.set_files(self).with_durability(Durability::MEDIUM).to(files);
        }
    }

    /// Reads a file and, transitively, the local files it imports, from disk.
    /// Imports that cannot be read are left out (and reported as SR107). The
    /// imports are read from the database's own parse, which checking reuses.
    pub fn load_with_imports(&mut self, path: impl AsRef<Path>) -> Result<File, sr_files::ReadError> {
        let path = normalize(path.as_ref());
        let text = sr_files::read_source(&path)?;
        let file = self.set_disk_file(&path, text);
        let mut pending = vec![file];
        while let Some(file) = pending.pop() {
            for target in local_imports(self, file) {
                if self.file(&target).is_none() {
                    pending.extend(self.read_import(&target));
                }
            }
        }
        Ok(file)
    }

    /// Reads a file an import names from disk into the database; when it
    /// cannot be read (and is not simply missing), records why, for the
    /// import's SR107.
    pub fn read_import(&mut self, path: &Path) -> Option<File> {
        let (file, reason) = match sr_files::read_source(path) {
            Ok(text) => (Some(self.set_disk_file(path, text)), None),
            Err(sr_files::ReadError::NotFound) => (None, None),
            Err(e) => (None, Some(e.to_string())),
        };
        let path = normalize(path);
        let workspace = self.workspace();
        if workspace.unreadable(self).get(&path) != reason.as_ref() {
            let mut unreadable = workspace.unreadable(self).clone();
            match reason {
                Some(reason) => unreadable.insert(path, reason),
                None => unreadable.remove(&path),
            };
            workspace.set_unreadable(self).with_durability(Durability::MEDIUM).to(unreadable);
        }
        file
    }

    pub fn file(&self, path: impl AsRef<Path>) -> Option<File> {
        self.workspace().files(self).get(&normalize(path.as_ref())).copied()
    }

    pub fn files(&self) -> Vec<File> {
        self.workspace().files(self).values().copied().collect()
    }

    /// Starts recording which queries execute (see [`RootDatabase::take_executed`]).
    pub fn log_executions(&self) {
        *self.executed.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(Vec::new());
    }

    /// The queries executed since the last call, as `query(id)` strings, and
    /// the memos validated, as `validated query(id)`.
    pub fn take_executed(&self) -> Vec<String> {
        self.executed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }
}

/// Makes a path absolute (against the current directory) and removes `.` and
/// `..` components without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let absolute =
        if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().unwrap_or_default().join(path) };
    let mut out = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The path an `import ./x.sr` in `file` names.
pub fn resolve_import(db: &dyn Db, file: File, relative: &str) -> PathBuf {
    let dir = file.path(db).parent().map(|p| p.to_path_buf()).unwrap_or_default();
    normalize(&dir.join(relative))
}

/// The paths of a file's `import ./path.sr`s.
fn local_imports(db: &RootDatabase, file: File) -> Vec<PathBuf> {
    let imports = crate::file_items(db, file).iter().filter(|item| item.kind(db) == crate::ItemKind::Import);
    imports
        .filter_map(|&item| match &*crate::item_data(db, item) {
            crate::ItemData::Import(crate::hir::ImportData {
                source: crate::hir::ImportSource::Local(relative),
                ..
            }) => Some(resolve_import(db, file, relative)),
            _ => None,
        })
        .collect()
}
