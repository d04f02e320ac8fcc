//! SR108 `import-cycle`: files that import each other, with the whole path.
//!
//! ```sr
//! # a.sr
//! import ./b.sr
//! # b.sr
//! import ./a.sr
//! ```
//!
//! `import cycle: a.sr -> b.sr -> a.sr`. Fix: move what both files need into a
//! third file they both import.

use sr_syntax::{Code, Describe};

/// The files of the cycle, the first repeated at the end.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ImportCycle {
    pub files: Vec<String>,
}

impl Describe for ImportCycle {
    fn code(&self) -> Code {
        Code::SR108
    }

    fn message(&self) -> String {
        format!("import cycle: {}", self.files.join(" -> "))
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn shows_the_path() {
        expect!["SR108 error: import cycle: a.sr -> b.sr -> a.sr | help:  | fixes: []"].assert_eq(&render(ImportCycle { files: vec!["a.sr".into(), "b.sr".into(), "a.sr".into()] }));
    }
}
