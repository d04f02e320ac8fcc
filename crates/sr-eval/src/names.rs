//! How reports name a variant: in full (`review.sr@main × openai/gpt-4o`),
//! or short for a chart (the workload's file stem and the entry, with the
//! model only when the variants differ by model).

use std::fmt::Write;
use std::path::Path;

/// What identifies a variant: workload, entry, model.
pub type VariantKey = (String, Option<String>, Option<String>);

/// `workload@entry × model`, as reports and progress lines name a variant.
pub fn variant_name((workload, entry, model): &VariantKey) -> String {
    let mut name = workload.clone();
    if let Some(entry) = entry {
        let _ = write!(name, "@{entry}");
    }
    let _ = write!(name, " × {}", model.as_deref().unwrap_or("default"));
    name
}

/// `stem@entry`, and ` × model` when `all` has more than one model.
pub fn short_name((workload, entry, model): &VariantKey, all: &[VariantKey]) -> String {
    let stem = Path::new(workload).file_stem().map_or_else(|| workload.clone(), |s| s.to_string_lossy().into_owned());
    let mut name = match entry {
        Some(entry) => format!("{stem}@{entry}"),
        None => stem,
    };
    if all.iter().any(|(_, _, m)| m != model) {
        let _ = write!(name, " × {}", model.as_deref().unwrap_or("default"));
    }
    name
}

/// The variant `spec` names among `all`. First by a name of one variant:
/// its full name, `workload@entry`, its short name, `stem@entry`, or the
/// workload (or its file stem) of a variant with no entry; then, when none
/// has such a name, by a part several may share: the workload, its stem,
/// the entry or the model (`solo` for `review.sr@solo`). An error lists the
/// candidates when several match, or every variant when none does.
pub fn select<'a>(spec: &str, all: &'a [VariantKey]) -> Result<&'a VariantKey, String> {
    let stem = |workload: &str| Path::new(workload).file_stem().map(|s| s.to_string_lossy().into_owned());
    let exact = |v: &VariantKey| {
        let (workload, entry, _) = v;
        let mut names = vec![variant_name(v), short_name(v, all)];
        match entry {
            Some(entry) => {
                names.push(format!("{workload}@{entry}"));
                names.extend(stem(workload).map(|s| format!("{s}@{entry}")));
            }
            None => names.extend([Some(workload.clone()), stem(workload)].into_iter().flatten()),
        }
        names
    };
    let part = |v: &VariantKey| {
        let (workload, entry, model) = v;
        [Some(workload.clone()), stem(workload), entry.clone(), model.clone()]
    };
    let mut found: Vec<&VariantKey> = all.iter().filter(|v| exact(v).iter().any(|n| n == spec)).collect();
    if found.is_empty() {
        found = all.iter().filter(|v| part(v).iter().flatten().any(|n| n == spec)).collect();
    }
    let listed = |keys: &[&VariantKey]| keys.iter().map(|v| variant_name(v)).collect::<Vec<_>>().join(", ");
    match found.as_slice() {
        [one] => Ok(one),
        [] => {
            Err(format!("no variant {spec:?} in the results (they have: {})", listed(&all.iter().collect::<Vec<_>>())))
        }
        many => Err(format!("{spec:?} names {} variants ({}): give the full name", many.len(), listed(many))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(workload: &str, entry: Option<&str>, model: Option<&str>) -> VariantKey {
        (workload.into(), entry.map(Into::into), model.map(Into::into))
    }

    #[test]
    fn variants_are_named_in_full_short_and_selected_by_any_name() {
        let review = key("bench/very/long/path/review.sr", None, None);
        let split = key("bench/split.sr", Some("main"), None);
        let all = [review.clone(), split.clone()];
        assert_eq!(variant_name(&split), "bench/split.sr@main × default");
        assert_eq!(short_name(&review, &all), "review");
        assert_eq!(short_name(&split, &all), "split@main");
        let models = [key("a.sr", None, Some("m1")), key("a.sr", None, None)];
        assert_eq!(short_name(&models[0], &models), "a × m1");
        assert_eq!(select("review", &all), Ok(&review));
        assert_eq!(select("bench/split.sr@main", &all), Ok(&split));
        assert_eq!(select("bench/split.sr@main × default", &all), Ok(&split));
        assert!(select("nope", &all).unwrap_err().starts_with("no variant \"nope\" in the results (they have: "));
        assert!(select("a.sr", &models).unwrap_err().contains("names 2 variants"));
    }

    #[test]
    fn a_part_one_variant_has_selects_it_and_a_shared_part_lists_the_candidates() {
        let solo = key("bench/review.sr", Some("solo"), Some("openai/gpt-4o"));
        let team = key("bench/review.sr", Some("team"), Some("openai/gpt-4o"));
        let mini = key("bench/split.sr", None, Some("openai/gpt-4o-mini"));
        let all = [solo.clone(), team.clone(), mini.clone()];
        assert_eq!(select("solo", &all), Ok(&solo));
        assert_eq!(select("review@team", &all), Ok(&team));
        assert_eq!(select("openai/gpt-4o-mini", &all), Ok(&mini));
        assert_eq!(select("split", &all), Ok(&mini));
        assert_eq!(
            select("review", &all),
            Err("\"review\" names 2 variants (bench/review.sr@solo × openai/gpt-4o, \
                 bench/review.sr@team × openai/gpt-4o): give the full name"
                .into())
        );
        assert!(select("openai/gpt-4o", &all).unwrap_err().contains("names 2 variants"));
        let unknown = select("duo", &all).unwrap_err();
        assert!(unknown.contains("no variant \"duo\""), "{unknown}");
        assert!(unknown.contains("bench/split.sr × openai/gpt-4o-mini"), "{unknown}");
        // A variant named exactly wins over one that only has the part.
        let named = [key("solo", None, None), key("review.sr", Some("solo"), None)];
        assert_eq!(select("solo", &named), Ok(&named[0]));
    }
}
