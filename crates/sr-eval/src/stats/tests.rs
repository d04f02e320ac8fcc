use super::*;

fn close(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance
}

/// The mean of the drawn values of `data`.
fn mean_of(data: &[f64]) -> impl FnMut(&[usize]) -> Option<f64> + '_ {
    move |drawn| mean(drawn.iter().map(|&i| data[i]))
}

#[test]
fn splitmix64_gives_the_reference_sequence() {
    // The first outputs of the reference implementation (Vigna's splitmix64.c) seeded with 0.
    let mut rng = Rng::new(0);
    assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
    assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
    let mut rng = Rng::new(SEED);
    assert!((0..10_000).all(|_| rng.below(7) < 7));
}

#[test]
fn wilson_intervals_match_statsmodels() {
    // statsmodels.stats.proportion.proportion_confint(count, nobs, method="wilson"):
    // (8, 10) → (0.4901625, 0.9433178); (0, 10) → (0, 0.2775328); (10, 10) → (0.7224672, 1);
    // (1, 2) → (0.0945312, 0.9054688); (5, 6) → (0.4364972, 0.9699466).
    for (count, n, low, high) in [
        (8, 10, 0.4901625, 0.9433178),
        (0, 10, 0.0, 0.2775328),
        (10, 10, 0.7224672, 1.0),
        (1, 2, 0.0945312, 0.9054688),
        (5, 6, 0.4364972, 0.9699466),
    ] {
        let got = wilson(f64::from(count) / f64::from(n), n as usize);
        assert!(close(got.low, low, 1e-7) && close(got.high, high, 1e-7), "{count}/{n}: {got:?}");
    }
    assert_eq!(wilson(0.0, 0), Interval { low: 0.0, high: 1.0 });
}

#[test]
fn mcnemar_exact_matches_the_binomial_test() {
    // scipy.stats.binomtest(min(b, c), b + c, 0.5).pvalue, and by hand:
    // b=1, c=5: 2 · (1 + 6) / 2^6 = 0.21875; b=0, c=10: 2 / 2^10; b=2, c=12:
    // 2 · (1 + 14 + 91) / 2^14 = 0.012939453125; b = c: 1.
    assert!(close(mcnemar_exact(1, 5), 0.21875, 1e-12));
    assert!(close(mcnemar_exact(5, 1), 0.21875, 1e-12));
    assert!(close(mcnemar_exact(0, 10), 0.001953125, 1e-12));
    assert!(close(mcnemar_exact(2, 12), 0.012939453125, 1e-12));
    assert_eq!(mcnemar_exact(3, 3), 1.0);
    assert_eq!(mcnemar_exact(0, 0), 1.0);
    assert_eq!(mcnemar_exact(0, 1), 1.0);
    // Past 0.5^1074's underflow: 2 · 0.5^2000 is 0, not NaN, and a balanced split stays 1.
    assert_eq!(mcnemar_exact(0, 2000), 0.0);
    assert!(close(mcnemar_exact(1000, 1000), 1.0, 1e-9));
    // 40 of 100 against 60: scipy.stats.binomtest(40, 100).pvalue = 0.056887...
    assert!(close(mcnemar_exact(40, 60), 0.05688793364098078, 1e-9), "{}", mcnemar_exact(40, 60));
}

#[test]
fn the_paired_permutation_test_counts_every_assignment() {
    let p = |d: &[f64]| paired::SignFlip::new(d, COMPARE_RESAMPLES, SEED).p_value(0.0);
    // [1, 2, 3]: of the 8 sign assignments only all-plus and all-minus reach
    // |mean| 2 (scipy.stats.permutation_test with permutation_type="samples": 0.25).
    assert!(close(p(&[1.0, 2.0, 3.0]), 0.25, 1e-12));
    // One pair proves nothing.
    assert_eq!(p(&[0.5]), 1.0);
    assert_eq!(p(&[0.0; 4]), 1.0);
    // Ten pairs all one way: 2 / 2^10.
    assert!(close(p(&[1.0; 10]), 2.0 / 1024.0, 1e-12));
    // Past EXACT_PAIRS, Monte Carlo: 30 pairs all one way are p = 2 / 2^30
    // exactly, which 10,000 draws bound by 1 / 10,001; a balanced set is 1.
    assert!(close(p(&[1.0; 30]), 1.0 / 10_001.0, 1e-12));
    let balanced: Vec<f64> = (0..30).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
    assert_eq!(p(&balanced), 1.0);
    // Seeded: the same p-value every time.
    let mixed: Vec<f64> = (0..40).map(|i| f64::from(i % 7) - 2.0).collect();
    assert_eq!(p(&mixed), p(&mixed));
    assert!(p(&mixed) > 0.0 && p(&mixed) < 1.0, "{}", p(&mixed));
}

#[test]
fn the_permutation_interval_is_the_shifts_the_test_does_not_reject() {
    // Reference values from scipy 1.16: the bounds found by bisection on
    // scipy.stats.permutation_test((d - shift,), mean, permutation_type="samples",
    // n_resamples=inf).pvalue < 0.05, and the p-value at 0.
    for (d, p0, low, high) in [
        (vec![0.5, 0.2, 0.9, 0.4, 0.7, 0.1, 0.6], 0.015625, 0.2, 0.75),
        (vec![1.0, -1.0, 2.0, 0.5, -0.5, 1.5, 1.0, 0.25], 0.1640625, -1.0 / 3.0, 1.5),
    ] {
        let flips = paired::SignFlip::new(&d, COMPARE_RESAMPLES, SEED);
        assert!(close(flips.p_value(0.0), p0, 1e-12), "{d:?}");
        let got = flips.interval().unwrap();
        assert!(close(got.low, low, 1e-9) && close(got.high, high, 1e-9), "{d:?}: {got:?}");
        // Zero is outside exactly when p < 0.05.
        assert_eq!(got.low > 0.0 || got.high < 0.0, p0 < paired::ALPHA);
    }
    // Five pairs, all one way, never conclude: no interval.
    assert_eq!(paired::SignFlip::new(&[1.0; 5], COMPARE_RESAMPLES, SEED).interval(), None);
    assert!(!paired::can_conclude(5, 0.05) && paired::can_conclude(6, 0.05));
    assert_eq!((paired::fewest_pairs(0.05), paired::fewest_pairs(0.01)), (6, 8));
    // Past EXACT_PAIRS the same inversion of the seeded Monte Carlo test: 40
    // pairs of mean 1 and spread 1 give an interval around 1, zero outside.
    let d: Vec<f64> = (0..40).map(|i| if i % 2 == 0 { 0.0 } else { 2.0 } + f64::from(i % 3) * 0.1 - 0.1).collect();
    let got = paired::SignFlip::new(&d, COMPARE_RESAMPLES, SEED).interval().unwrap();
    assert!(got.low > 0.5 && got.low < 1.0 && got.high > 1.0 && got.high < 1.5, "{got:?}");
}

#[test]
fn clopper_pearson_and_the_mcnemar_interval_match_scipy() {
    // scipy.stats.binomtest(k, n).proportion_ci(method="exact").
    for (k, n, low, high) in [
        (0, 6, 0.0, 0.45925812643990044),
        (6, 6, 0.5407418735600995, 1.0),
        (2, 10, 0.025210726326833497, 0.5560954623076415),
        (1, 3, 0.008403758659612647, 0.9057006759492866),
        (40, 100, 0.30329476870284483, 0.5027908495776665),
        (0, 1, 0.0, 0.975),
    ] {
        let got = paired::clopper_pearson(k, n);
        assert!(close(got.low, low, 1e-9) && close(got.high, high, 1e-9), "{k}/{n}: {got:?}");
    }
    // 10 of 12 pairs worse, none better: McNemar p = 2 / 2^10, and the
    // interval lies below zero, around -10/12.
    let i = paired::mcnemar_interval(10, 0, 12);
    assert!(i.high < 0.0 && i.low < -10.0 / 12.0 && -10.0 / 12.0 < i.high, "{i:?}");
    // 1 worse and 2 better of 6 (p = 1): the interval holds zero and is not a point.
    let i = paired::mcnemar_interval(1, 2, 6);
    assert!(i.low < 0.0 && 0.0 < i.high && i.high - i.low > 0.5, "{i:?}");
    // Nothing discordant in 20: zero in the middle, and room for a few flips either way.
    let i = paired::mcnemar_interval(0, 0, 20);
    assert!(close(i.low, -0.16843347, 1e-6) && close(i.high, 0.16843347, 1e-6), "{i:?}");
    // It excludes zero exactly when McNemar's p-value is below 0.05.
    for (b, c, n) in [(0, 6, 6), (1, 7, 10), (1, 6, 10), (2, 12, 20), (3, 3, 8), (0, 5, 5)] {
        let i = paired::mcnemar_interval(b, c, n);
        assert_eq!(i.low > 0.0 || i.high < 0.0, mcnemar_exact(b, c) < 0.05, "{b} {c} {n}: {i:?}");
    }
}

#[test]
fn the_bootstrap_p_value_matches_its_interval() {
    // All resamples above zero: the smallest p-value the resamples allow.
    assert!(close(paired::bootstrap_p_value(&[0.1, 0.2, 0.3]).unwrap(), 2.0 / 4.0, 1e-12));
    let above: Vec<f64> = (1..=999).map(f64::from).collect();
    assert!(close(paired::bootstrap_p_value(&above).unwrap(), 2.0 / 1000.0, 1e-12));
    // Centered on zero: 1.
    assert_eq!(paired::bootstrap_p_value(&[-1.0, 0.0, 1.0]), Some(1.0));
    assert_eq!(paired::bootstrap_p_value(&[]), None);
}

#[test]
fn the_bootstrap_is_seeded_and_matches_known_intervals() {
    // A constant sample has a point interval.
    assert_eq!(bootstrap(5, 200, SEED, mean_of(&[0.5; 5])), Some(Interval { low: 0.5, high: 0.5 }));
    // [0, 1]: the bootstrap means are 0, 0.5, 1 with chances 1/4, 1/2, 1/4, so
    // the 2.5th and 97.5th percentiles are 0 and 1.
    assert_eq!(bootstrap(2, 2000, SEED, mean_of(&[0.0, 1.0])), Some(Interval { low: 0.0, high: 1.0 }));
    // 0..100: mean 49.5, standard error 29.011 / 10; the normal interval is
    // 49.5 ± 1.96 · 2.9011 = [43.81, 55.19]; the percentile bootstrap is within 0.6 of it.
    let data: Vec<f64> = (0..100).map(f64::from).collect();
    let got = bootstrap(100, SUMMARY_RESAMPLES, SEED, mean_of(&data)).unwrap();
    assert!(close(got.low, 43.81, 0.6) && close(got.high, 55.19, 0.6), "{got:?}");
    assert_eq!(Some(got), bootstrap(100, SUMMARY_RESAMPLES, SEED, mean_of(&data)));
    assert_ne!(Some(got), bootstrap(100, SUMMARY_RESAMPLES, SEED + 1, mean_of(&data)));
    // Undefined resamples are left out; none defined is no interval.
    assert_eq!(bootstrap(3, 100, SEED, |_| None), None);
    assert_eq!(bootstrap(0, 100, SEED, |_| Some(1.0)), None);
}

#[test]
fn percentiles_interpolate_between_ranks() {
    // numpy.percentile([1, 2, 3, 4], [25, 50, 97.5]) = [1.75, 2.5, 3.925].
    let sorted = [1.0, 2.0, 3.0, 4.0];
    assert!(close(percentile(&sorted, 0.25), 1.75, 1e-12));
    assert!(close(percentile(&sorted, 0.5), 2.5, 1e-12));
    assert!(close(percentile(&sorted, 0.975), 3.925, 1e-12));
    assert_eq!(percentile(&[7.0], 0.975), 7.0);
}

#[test]
fn pass_at_k_is_the_unbiased_estimator() {
    // 1 - C(n - c, k) / C(n, k): n=5, c=2, k=2 → 1 - 3/10; n=10, c=3, k=1 → 0.3.
    assert!(close(pass_at_k(5, 2, 2), 0.7, 1e-12));
    assert!(close(pass_at_k(10, 3, 1), 0.3, 1e-12));
    assert_eq!(pass_at_k(3, 0, 2), 0.0);
    assert_eq!(pass_at_k(3, 2, 2), 1.0);
    assert_eq!(pass_at_k(3, 3, 3), 1.0);
    // k = 1 is the share that passed.
    assert!(close(pass_at_k(3, 1, 1), 1.0 / 3.0, 1e-12));
}
