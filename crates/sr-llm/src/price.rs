//! Cost of usage from a price table the user configures. No prices are built
//! in: they change more often than this code, and nothing is fetched.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Usage;

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// For cached input tokens read; `input` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// For input tokens written to the cache; `input` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

/// Prices by model: exact ids (`openai/gpt-4o` or `gpt-4o`) or patterns ending
/// in `*` (`anthropic/claude-sonnet-*`). Serializes as a JSON object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PriceTable {
    prices: BTreeMap<String, Price>,
}

impl PriceTable {
    pub fn new() -> PriceTable {
        PriceTable::default()
    }

    pub fn insert(&mut self, model: impl Into<String>, price: Price) {
        self.prices.insert(model.into(), price);
    }

    /// The price of `model`: an exact entry for the full string, then for the id
    /// without its provider prefix, then the longest matching pattern.
    pub fn price(&self, model: &str) -> Option<Price> {
        let bare = model.split_once('/').map(|(_, bare)| bare);
        let exact = self.prices.get(model).or_else(|| bare.and_then(|bare| self.prices.get(bare)));
        exact.copied().or_else(|| {
            self.prices
                .iter()
                .filter_map(|(pattern, price)| Some((pattern.strip_suffix('*')?, price)))
                .filter(|(prefix, _)| model.starts_with(prefix) || bare.is_some_and(|bare| bare.starts_with(prefix)))
                .max_by_key(|(prefix, _)| prefix.len())
                .map(|(_, price)| *price)
        })
    }

    /// USD for `usage` of `model`, or `None` when the table has no price for it.
    pub fn cost(&self, usage: &Usage, model: &str) -> Option<f64> {
        let price = self.price(model)?;
        let cached = usage.cache_read_tokens + usage.cache_write_tokens;
        let fresh = usage.input_tokens.saturating_sub(cached) as f64;
        let dollars = fresh * price.input
            + usage.cache_read_tokens as f64 * price.cache_read.unwrap_or(price.input)
            + usage.cache_write_tokens as f64 * price.cache_write.unwrap_or(price.input)
            + usage.output_tokens as f64 * price.output;
        Some(dollars / 1_000_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> PriceTable {
        serde_json::from_str(
            r#"{
                "gpt-4o": {"input": 2.5, "output": 10.0, "cache_read": 1.25},
                "anthropic/claude-*": {"input": 3.0, "output": 15.0},
                "anthropic/claude-haiku-*": {"input": 1.0, "output": 5.0}
            }"#,
        )
        .unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn costs_count_cached_tokens_at_their_price() {
        let usage =
            Usage { input_tokens: 1_000_000, output_tokens: 100_000, cache_read_tokens: 400_000, ..Usage::default() };
        let cost = table().cost(&usage, "openai/gpt-4o").unwrap();
        assert!(close(cost, 0.6 * 2.5 + 0.4 * 1.25 + 0.1 * 10.0), "{cost}");
    }

    #[test]
    fn the_longest_pattern_wins() {
        let table = table();
        assert_eq!(table.price("anthropic/claude-haiku-4-5").unwrap().input, 1.0);
        assert_eq!(table.price("anthropic/claude-sonnet-4-5").unwrap().input, 3.0);
        assert_eq!(table.price("ollama/llama3"), None);
        assert_eq!(table.cost(&Usage::default(), "ollama/llama3"), None);
    }
}
