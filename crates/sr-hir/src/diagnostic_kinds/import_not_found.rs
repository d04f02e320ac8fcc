//! SR107 `import-not-found`: `import ./x.sr` names a file that does not exist,
//! or one that cannot be read, with the reason.
//!
//! A FIFO, a device, a symlink loop or a file over 16 MiB cannot be read
//! (`cannot read ./x.sr: a FIFO (named pipe), not a regular file`); neither can a
//! workload file itself for those reasons.
//!
//! ```sr
//! import ./prompts.sr
//! ```
//!
//! `cannot find imported file './prompts.sr'`, help `looked for …` with the
//! resolved path. Fix: correct the path (it is relative to the importing file).

use sr_syntax::{Code, Describe};

/// `import` as written, `looked_for` the path it resolved to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ImportNotFound {
    pub import: String,
    pub looked_for: String,
}

/// A file that exists but cannot be read (a FIFO, a device, a symlink loop, over
/// the size limit): a workload's own, or an import's (`path` as the import
/// writes it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Unreadable {
    pub path: String,
    pub error: String,
}

impl Describe for ImportNotFound {
    fn code(&self) -> Code {
        Code::SR107
    }

    fn message(&self) -> String {
        format!("cannot find imported file '{}'", self.import)
    }

    fn help(&self) -> Option<String> {
        Some(format!("looked for {}", self.looked_for))
    }
}

impl Describe for Unreadable {
    fn code(&self) -> Code {
        Code::SR107
    }

    fn message(&self) -> String {
        format!("cannot read {}: {}", self.path, self.error)
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn missing_and_unreadable() {
        let missing = ImportNotFound { import: "./prompts.sr".into(), looked_for: "/w/prompts.sr".into() };
        let fifo = Unreadable { path: "./x.sr".into(), error: "a FIFO (named pipe), not a regular file".into() };
        expect![[r#"
            SR107 error: cannot find imported file './prompts.sr' | help: looked for /w/prompts.sr | fixes: []
            SR107 error: cannot read ./x.sr: a FIFO (named pipe), not a regular file | help:  | fixes: []"#]].assert_eq(&[render(missing), render(fifo)].join("\n"));
    }
}
