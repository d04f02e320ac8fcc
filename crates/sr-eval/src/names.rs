//! How reports name a variant: in full (`review.sr@main × openai/gpt-4o`),
//! or short for a chart (the workload's file stem and the entry, with the
//! model only when the variants differ by model).

use std::fmt::Write;
use std::path::Path;

use crate::results::VariantKey;

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

/// The variant `spec` names among `all`: its full name, `workload@entry`,
/// the workload, or its short name; an error when none or several match.
pub fn select<'a>(spec: &str, all: &'a [VariantKey]) -> Result<&'a VariantKey, String> {
    let names = |v: &VariantKey| {
        let (workload, entry, _) = v;
        let at = entry.as_ref().map(|e| format!("{workload}@{e}"));
        [Some(variant_name(v)), at, Some(workload.clone()), Some(short_name(v, all))]
    };
    let found: Vec<&VariantKey> = all.iter().filter(|v| names(v).iter().flatten().any(|n| n == spec)).collect();
    let listed = || all.iter().map(variant_name).collect::<Vec<_>>().join(", ");
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(format!("no variant {spec:?} in the results (they have: {})", listed())),
        many => Err(format!(
            "{spec:?} names {} variants ({}): give the full name",
            many.len(),
            many.iter().map(|v| variant_name(v)).collect::<Vec<_>>().join(", ")
        )),
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
}
