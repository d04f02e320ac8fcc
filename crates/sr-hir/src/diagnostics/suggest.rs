//! "Did you mean": the names a suggestion is drawn from, indexed once per
//! program, so that an undefined name costs a lookup and not a pass over every
//! definition. (A file of 20,000 prompts that each interpolate an undefined
//! variable took over a minute when each compared its name with every other.)

use std::collections::BTreeMap;

use foldhash::{HashMap, HashSet};

use super::BUILTIN_VARIABLES;
use super::vars::program_vars;
use crate::diagnostic_kinds::{Listing, Suggestion};
use crate::items::ItemKind;
use crate::{Db, File, Name, program};

/// Names in definition order, and for each lowercase prefix of up to three
/// characters the first name that starts with it.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Candidates {
    names: Vec<Name>,
    first: HashMap<String, u32>,
}

impl Candidates {
    fn new(names: impl IntoIterator<Item = Name>) -> Candidates {
        let mut out = Candidates::default();
        for name in names {
            let lower = name.to_lowercase();
            let mut prefix = String::new();
            let index = out.names.len() as u32;
            out.first.entry(String::new()).or_insert(index);
            for ch in lower.chars().take(3) {
                prefix.push(ch);
                out.first.entry(prefix.clone()).or_insert(index);
            }
            out.names.push(name);
        }
        out
    }

    /// Upstream's rule: the first name whose lowercase form starts with the
    /// first three lowercase characters of `name`.
    pub(crate) fn starting_like(&self, name: &str) -> Option<&Name> {
        let prefix: String = name.to_lowercase().chars().take(3).collect();
        self.first.get(&prefix).map(|&i| &self.names[i as usize])
    }

    /// Upstream's "did you mean": a name [`Candidates::starting_like`] finds,
    /// else the defined names, if there are any.
    pub(crate) fn suggest(&self, name: &str) -> Suggestion {
        match self.starting_like(name) {
            Some(found) => Suggestion::DidYouMean(found.to_string()),
            None if self.names.is_empty() => Suggestion::None,
            None => Suggestion::Listed(self.listing()),
        }
    }

    pub(crate) fn listing(&self) -> Listing {
        Listing::new(self.names.iter().map(|n| n.to_string()), self.names.len())
    }
}

/// The names of one program's definitions, by kind.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ProgramNames {
    kinds: BTreeMap<ItemKind, Candidates>,
    /// What an agent's `prompt` may name: prompts, builtin variables and
    /// what agents produce.
    pub(crate) prompt_or_variable: Candidates,
    /// What agents produce.
    pub(crate) produced: HashSet<Name>,
}

impl ProgramNames {
    /// The definitions of `kind` (none for kinds nothing refers to by name).
    pub(crate) fn of(&self, kind: ItemKind) -> &Candidates {
        static NONE: std::sync::OnceLock<Candidates> = std::sync::OnceLock::new();
        self.kinds.get(&kind).unwrap_or_else(|| NONE.get_or_init(Candidates::default))
    }
}

#[salsa::tracked(returns(ref))]
pub(crate) fn program_names(db: &dyn Db, root: File) -> ProgramNames {
    let program = program(db, root);
    let mut kinds = BTreeMap::new();
    for kind in [
        ItemKind::Model,
        ItemKind::Schema,
        ItemKind::Tool,
        ItemKind::RetryPolicy,
        ItemKind::TimeoutPolicy,
        ItemKind::Policy,
        ItemKind::Executor,
        ItemKind::Agent,
        ItemKind::Flow,
    ] {
        let names = program.defs(kind).into_iter().flat_map(|defs| defs.keys().cloned());
        kinds.insert(kind, Candidates::new(names));
    }
    kinds.insert(ItemKind::Prompt, Candidates::new(program.prompts.keys().cloned()));
    let prompt_or_variable = Candidates::new(
        program
            .prompts
            .keys()
            .cloned()
            .chain(BUILTIN_VARIABLES.iter().map(|b| Name::from(*b)))
            .chain(program.produces.values().cloned()),
    );
    ProgramNames { kinds, prompt_or_variable, produced: program.produces.values().cloned().collect() }
}

/// Names a prompt variable may be a typo of, in upstream's order (builtin
/// variables, prompts, what agents produce, flow variables), grouped by
/// length: a name can only be as similar as its length allows.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Typos {
    names: Vec<Name>,
    lower: Vec<String>,
    /// Positions in `names` by the length of the lowercase name in characters.
    by_length: BTreeMap<usize, Vec<u32>>,
}

/// How many candidates one name is compared with at most: past it, the first
/// in upstream's order.
const MAX_COMPARED: usize = 256;

/// The longest name (in characters) that gets a typo suggestion.
pub(crate) const MAX_TYPO_LENGTH: usize = 64;

impl Typos {
    fn new(names: impl IntoIterator<Item = Name>) -> Typos {
        let mut out = Typos::default();
        for name in names {
            let lower = name.to_lowercase();
            out.by_length.entry(lower.chars().count()).or_default().push(out.names.len() as u32);
            out.names.push(name);
            out.lower.push(lower);
        }
        out
    }

    /// The first of the most similar names to `name` (lowercased), if it is at
    /// least `threshold` similar: what comparing with every name gives, as long
    /// as `name` has at most [`MAX_TYPO_LENGTH`] characters and no more than
    /// [`MAX_COMPARED`] names have a length that could reach the threshold.
    pub(crate) fn closest(&self, name: &str, threshold: f64) -> Option<&Name> {
        let lower: Vec<char> = name.to_lowercase().chars().collect();
        if lower.len() > MAX_TYPO_LENGTH {
            return None;
        }
        let len = lower.len();
        // Similarity is at most the shorter length over the longer.
        let reachable = |other: usize| len.min(other) as f64 / len.max(other).max(1) as f64 >= threshold;
        let low = (len as f64 * threshold).floor() as usize;
        let high = (len as f64 / threshold).ceil() as usize + 1;
        let mut compared: Vec<u32> = Vec::new();
        for (&other, positions) in self.by_length.range(low..=high) {
            if reachable(other) || len == 0 {
                compared.extend(positions.iter().take(MAX_COMPARED));
            }
        }
        compared.sort_unstable();
        compared.truncate(MAX_COMPARED);
        let masks = Masks::new(&lower);
        let mut best: Option<(f64, u32)> = None;
        for i in compared {
            let score = masks.similarity(&self.lower[i as usize]);
            if best.is_none_or(|(b, _)| score > b) {
                best = Some((score, i));
            }
        }
        best.filter(|(score, _)| *score >= threshold).map(|(_, i)| &self.names[i as usize])
    }
}

/// The typo candidates of `root`'s program.
#[salsa::tracked(returns(ref))]
pub(crate) fn variable_typos(db: &dyn Db, root: File) -> Typos {
    let program = program(db, root);
    let vars = program_vars(db, root);
    Typos::new(
        BUILTIN_VARIABLES
            .iter()
            .map(|b| Name::from(*b))
            .chain(program.prompts.keys().cloned())
            .chain(program.produces.values().cloned())
            .chain(vars.upstream_flow_vars.iter().cloned()),
    )
}

/// Longest-common-subsequence similarity (0..=1), as upstream measures typos.
pub fn similarity(a: &str, b: &str) -> f64 {
    if a == b {
        return 1.0;
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let mut prev = vec![0usize; b.len() + 1];
    let mut curr = vec![0usize; b.len() + 1];
    for &ca in &a {
        for (j, &cb) in b.iter().enumerate() {
            curr[j + 1] = if ca == cb { prev[j] + 1 } else { prev[j + 1].max(curr[j]) };
        }
        std::mem::swap(&mut prev, &mut curr);
    }
    prev[b.len()] as f64 / a.len().max(b.len()) as f64
}

/// A name of at most 64 characters as bit masks of where each character
/// occurs, for [`similarity`] in one machine word per character of the other
/// name (Hyyrö's bit-parallel longest common subsequence).
struct Masks<'a> {
    chars: &'a [char],
    ascii: [u64; 128],
    other: Vec<(char, u64)>,
}

impl<'a> Masks<'a> {
    fn new(chars: &'a [char]) -> Masks<'a> {
        debug_assert!(chars.len() <= 64);
        let mut masks = Masks { chars, ascii: [0; 128], other: Vec::new() };
        for (i, &ch) in chars.iter().enumerate() {
            let bit = 1u64 << i;
            match masks.ascii.get_mut(ch as usize) {
                Some(mask) => *mask |= bit,
                None => match masks.other.iter_mut().find(|(c, _)| *c == ch) {
                    Some((_, mask)) => *mask |= bit,
                    None => masks.other.push((ch, bit)),
                },
            }
        }
        masks
    }

    fn mask(&self, ch: char) -> u64 {
        match self.ascii.get(ch as usize) {
            Some(&mask) => mask,
            None => self.other.iter().find(|(c, _)| *c == ch).map_or(0, |(_, mask)| *mask),
        }
    }

    /// [`similarity`] of the masked name and `other`.
    fn similarity(&self, other: &str) -> f64 {
        let len = self.chars.len();
        let mut other_len = 0;
        let mut equal = true;
        let mut v = u64::MAX;
        for (j, ch) in other.chars().enumerate() {
            equal &= self.chars.get(j) == Some(&ch);
            other_len += 1;
            let m = self.mask(ch);
            let u = v & m;
            v = v.wrapping_add(u) | (v & !m);
        }
        if equal && other_len == len {
            return 1.0;
        }
        if len == 0 || other_len == 0 {
            return 0.0;
        }
        let used = if len == 64 { u64::MAX } else { (1u64 << len) - 1 };
        let common = (!v & used).count_ones() as usize;
        common as f64 / len.max(other_len) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random names over a few letters (and a non-ASCII one), as the
    /// dynamic-programming similarity and the bit-parallel one see them.
    #[test]
    fn bit_parallel_similarity_equals_the_table() {
        let letters = ['a', 'b', 'c', 'é', '_'];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let mut word = |max: u64| -> String {
                let len = next() % max;
                (0..len).map(|_| letters[(next() % letters.len() as u64) as usize]).collect()
            };
            let (a, b) = (word(65), word(80));
            let chars: Vec<char> = a.chars().collect();
            assert_eq!(Masks::new(&chars).similarity(&b), similarity(&a, &b), "{a:?} {b:?}");
        }
    }

    #[test]
    fn closest_is_the_first_best_of_all_names() {
        let names = ["input_prompt", "usr", "user", "users", "uzer", "a_much_longer_name"];
        let typos = Typos::new(names.iter().map(|n| Name::from(*n)));
        let all = |name: &str| {
            let mut best: Option<(f64, &str)> = None;
            for candidate in names {
                let score = similarity(&name.to_lowercase(), &candidate.to_lowercase());
                if best.is_none_or(|(b, _)| score > b) {
                    best = Some((score, candidate));
                }
            }
            best.filter(|(s, _)| *s >= 0.85).map(|(_, c)| c.to_string())
        };
        for name in ["user", "usre", "USER", "input_promt", "a_much_longer_nam", "", "x", "users_"] {
            assert_eq!(typos.closest(name, 0.85).map(|n| n.to_string()), all(name), "{name}");
        }
    }

    #[test]
    fn prefixes_find_the_first_name_in_order() {
        let candidates = Candidates::new(["Alpha", "alps", "beta", "b"].map(Name::from));
        assert_eq!(candidates.starting_like("ALPINE").map(|n| n.as_str()), Some("Alpha"));
        assert_eq!(candidates.starting_like("be").map(|n| n.as_str()), Some("beta"));
        assert_eq!(candidates.starting_like("b").map(|n| n.as_str()), Some("beta"));
        assert_eq!(candidates.starting_like("").map(|n| n.as_str()), Some("Alpha"));
        assert_eq!(candidates.starting_like("gamma"), None);
        assert_eq!(
            candidates.suggest("gamma"),
            Suggestion::Listed(Listing::new(["Alpha", "alps", "beta", "b"].map(String::from), 4))
        );
    }
}
