//! What a case's scorers spend on models: the calls of its `judge` and `flow`
//! scorers go through a [`Meter`], and their tokens and cost are added to the
//! case's, as a run's own calls are.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use sr_llm::{ChatEvent, ChatRequest, ChatStream, PriceTable, Provider};
use sr_runtime::event::Usage;

/// A provider that adds up the usage of every reply passing through it.
pub struct Meter {
    inner: Arc<dyn Provider>,
    prices: Option<Arc<PriceTable>>,
    spent: Arc<Mutex<Usage>>,
}

impl Meter {
    pub fn new(inner: Arc<dyn Provider>, prices: Option<Arc<PriceTable>>) -> Meter {
        Meter { inner, prices, spent: Arc::default() }
    }

    /// The tokens so far, and their cost when the price table priced a call.
    pub fn spent(&self) -> Usage {
        self.spent.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}

impl Provider for Meter {
    fn chat(&self, request: ChatRequest) -> ChatStream {
        let (model, prices, spent) = (request.model.clone(), self.prices.clone(), self.spent.clone());
        self.inner
            .chat(request)
            .inspect(move |event| {
                if let Ok(ChatEvent::Usage(usage)) = event {
                    let cost_usd = prices.as_deref().and_then(|p| p.cost(usage, &model));
                    let charged =
                        Usage { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens, cost_usd };
                    spent.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).add(&charged);
                }
            })
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    use sr_llm::{ChatResponse, Price};
    use sr_runtime::scripted::conforming;

    use super::*;

    #[tokio::test]
    async fn every_reply_is_counted_and_priced_by_its_model() {
        let mut prices = PriceTable::new();
        prices.insert("openai/judge", Price { input: 1.0, output: 10.0, cache_read: None, cache_write: None });
        let meter = Meter::new(Arc::new(conforming("{\"score\": 1}")), Some(Arc::new(prices)));
        assert_eq!(meter.spent(), Usage::default());
        for model in ["openai/judge", "openai/judge", "other/unpriced"] {
            ChatResponse::collect(meter.chat(ChatRequest::new(model, vec![]))).await.unwrap();
        }
        let spent = meter.spent();
        // The scripted model answers with 10 input tokens and len / 4 + 1 output tokens.
        assert_eq!((spent.input_tokens, spent.output_tokens), (30, 12));
        // The two priced calls.
        let cost = spent.cost_usd.unwrap();
        assert!((cost - 2.0 * (10.0 * 1.0 + 4.0 * 10.0) / 1e6).abs() < 1e-12, "{cost}");
    }
}
