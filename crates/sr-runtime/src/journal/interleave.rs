//! How a journal keeps the order a `parallel` block's events passed its gate
//! ([`crate::event::Gate`]): as runs of one branch index.

use serde_json::{Value, json};

/// `[0,0,0,1,0]` as runs `[[0,3],[1,1],[0,1]]`.
pub(crate) fn compress(order: &[u32]) -> Value {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &index in order {
        match runs.last_mut() {
            Some((last, count)) if *last == index => *count += 1,
            _ => runs.push((index, 1)),
        }
    }
    json!(runs.into_iter().map(|(index, count)| [index, count]).collect::<Vec<_>>())
}

/// The inverse of [`compress`]; `None` for anything else, or a total over a million.
pub(crate) fn expand(runs: &Value) -> Option<Vec<u32>> {
    const MAX: usize = 1 << 20;
    let mut order = Vec::new();
    for run in runs.as_array()? {
        let index = u32::try_from(run.get(0)?.as_u64()?).ok()?;
        let count = usize::try_from(run.get(1)?.as_u64()?).ok()?;
        if order.len() + count > MAX {
            return None;
        }
        order.extend(std::iter::repeat_n(index, count));
    }
    Some(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_order_survives_its_compression_and_a_bad_or_huge_one_is_refused() {
        assert_eq!(compress(&[1, 1, 0]), json!([[1, 2], [0, 1]]));
        assert_eq!(expand(&compress(&[1, 1, 0])).unwrap(), [1, 1, 0]);
        assert_eq!(expand(&json!([[0, 2], [1, 1]])).unwrap(), [0, 0, 1]);
        assert_eq!(expand(&json!([[0, 2000000]])), None);
        assert_eq!(expand(&json!([["x", 1]])), None);
    }
}
