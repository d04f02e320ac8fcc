//! Names of definitions, variables and fields.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use smol_str::SmolStr;

/// A short, cheaply cloned string.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name(SmolStr);

// SAFETY: a `Name` holds no database-lifetime reference.
unsafe impl salsa::SalsaValue for Name {}

impl Name {
    pub const fn new_static(text: &'static str) -> Name {
        Name(SmolStr::new_static(text))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Name {
    fn from(text: &str) -> Name {
        Name(SmolStr::new(text))
    }
}

impl From<String> for Name {
    fn from(text: String) -> Name {
        Name(SmolStr::new(text))
    }
}

impl From<&String> for Name {
    fn from(text: &String) -> Name {
        Name(SmolStr::new(text))
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}
