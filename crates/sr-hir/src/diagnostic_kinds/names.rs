//! The names a help offers: upstream's "did you mean", and lists of the names
//! that are defined, cut short.

use sr_syntax::Fix;

/// Upstream's "did you mean" for an undefined name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Suggestion {
    None,
    /// A defined name sharing the first three letters: the quick fix replaces the name with it.
    DidYouMean(String),
    /// No close name: the names that are defined.
    Listed(Listing),
}

impl Suggestion {
    /// Upstream's help: "did you mean 'x'?", else "defined {kind}s are: …".
    pub(super) fn help(&self, kind: &str) -> Option<String> {
        match self {
            Suggestion::None => None,
            Suggestion::DidYouMean(name) => Some(format!("did you mean '{name}'?")),
            Suggestion::Listed(names) => Some(format!("defined {kind}s are: {names}")),
        }
    }

    /// The quick fix that replaces the name with the suggested one.
    pub(super) fn replace(&self) -> Option<Fix> {
        match self {
            Suggestion::DidYouMean(name) => Some(Fix::Replace(name.clone())),
            Suggestion::None | Suggestion::Listed(_) => None,
        }
    }
}

/// Names a help lists: the first [`Listing::MAX`] of them, and how many
/// more there are. A program with 20,000 agents does not print 20,000 names
/// for each of its undefined references.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Listing {
    pub names: Vec<String>,
    /// How many names are not in `names`.
    pub more: usize,
}

impl Listing {
    pub const MAX: usize = 20;

    /// The first [`Listing::MAX`] of `names`, of which there are `count`.
    pub fn new<S: Into<String>>(names: impl IntoIterator<Item = S>, count: usize) -> Listing {
        let names: Vec<String> = names.into_iter().take(Self::MAX).map(Into::into).collect();
        let more = count.saturating_sub(names.len());
        Listing { names, more }
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.more == 0
    }
}

impl std::fmt::Display for Listing {
    /// `a, b, c`, then ` and 9980 more` when there are.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.names.join(", "))?;
        if self.more > 0 {
            write!(f, " and {} more", self.more)?;
        }
        Ok(())
    }
}
