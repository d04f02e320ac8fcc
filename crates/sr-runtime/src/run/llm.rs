//! `call llm` and which model each call uses.

use serde_json::Value;
use sr_llm::{ChatRequest, Message};

use crate::event::Payload;
use crate::hook::FrameKind;
use crate::run::{RunError, Runtime, Thread};
use crate::structured;
use crate::value::display;

impl Runtime {
    /// A model name from the program (`using model "fast"`) to a provider
    /// model id; other strings are provider model ids already.
    fn model_id(&self, name: &str) -> String {
        self.program.models.get(name).map_or_else(|| name.to_string(), |m| m.id.clone())
    }

    /// The model of last resort: `main`, else the run's default.
    fn fallback_model(&self, what: &str) -> Result<String, RunError> {
        if let Some(main) = self.program.models.get("main") {
            return Ok(main.id.clone());
        }
        self.env.options.default_model.clone().ok_or_else(|| {
            RunError::failed(
                format!(
                    "no model for {what}: define `model main = provider/model`, use `using model`, or pass --model"
                ),
                None,
            )
        })
    }

    /// An agent's model: its instruction prompt's `using model`, else that of
    /// the agent that uses or delegates to it (the innermost first), else
    /// `main`, else the default; `--override-model` wins over all.
    pub(crate) fn agent_model(&self, th: &Thread, agent: &str) -> Result<String, RunError> {
        if let Some(forced) = &self.env.options.override_model {
            return Ok(forced.clone());
        }
        let callers = th.frames.iter().rev().filter(|f| f.kind == FrameKind::Agent).map(|f| f.name.as_str());
        let own_model = |name: &str| {
            let instruction = self.program.agents.get(name)?.data.instruction.as_ref()?;
            self.program.prompts.get(&instruction.name)?.model.as_ref().map(|m| self.model_id(&m.name))
        };
        match std::iter::once(agent).chain(callers).find_map(own_model) {
            Some(model) => Ok(model),
            None => self.fallback_model(&format!("agent '{agent}'")),
        }
    }

    /// `call llm P [with E] [using model M]`: the prompt rendered with the run's
    /// variables, followed by the `with` value, sent as one user message; with
    /// `expecting S` the reply is validated (and repaired); without it the reply
    /// is the raw text, as upstream.
    pub(crate) async fn call_llm(
        &self,
        th: &mut Thread,
        prompt: &str,
        input: Option<Value>,
        model: Option<String>,
    ) -> Result<Value, RunError> {
        let data = self
            .program
            .prompts
            .get(prompt)
            .ok_or_else(|| RunError::failed(format!("prompt '{prompt}' does not exist"), None))?;
        let model = match (&self.env.options.override_model, model, &data.model) {
            (Some(forced), _, _) => forced.clone(),
            (None, Some(explicit), _) => self.model_id(&explicit),
            (None, None, Some(own)) => self.model_id(&own.name),
            (None, None, None) => self.fallback_model(&format!("prompt '{prompt}'"))?,
        };
        let mut text = crate::eval::render_prompt(prompt, &self.program.prompts, &th.vars, 0)
            .map_err(|e| RunError::failed(e.0, None))?;
        if let Some(input) = &input {
            text.push_str("\n\n");
            text.push_str(&display(input));
        }
        let schema = data.expecting.as_ref().and_then(|e| structured::native_schema(&self.program, e));
        if let Some(expecting) = &data.expecting {
            text.push_str(&structured::instruction_suffix(&self.program, expecting));
        }
        th.emitter.emit(Payload::LlmCall {
            prompt_name: prompt.to_string(),
            model: model.clone(),
            prompt_text: text.clone(),
        });
        let mut messages = vec![Message::user(text)];
        let attempts = if data.expecting.is_some() { structured::MAX_REPAIRS + 1 } else { 1 };
        for attempt in 0..attempts {
            let request = ChatRequest {
                model: model.clone(),
                system: None,
                messages: messages.clone(),
                tools: Vec::new(),
                response_schema: schema.clone(),
                temperature: None,
                max_tokens: None,
            };
            let response = self.model_call(th, &format!("call llm {prompt}"), request).await?;
            let Some(expecting) = &data.expecting else {
                th.emitter.emit(Payload::LlmResponse {
                    prompt_name: prompt.to_string(),
                    content: response.text.clone(),
                    is_final: true,
                });
                return Ok(Value::String(response.text));
            };
            match structured::parse(&self.program, expecting, &response.text) {
                Ok(value) => {
                    th.emitter.emit(Payload::LlmResponse {
                        prompt_name: prompt.to_string(),
                        content: response.text,
                        is_final: true,
                    });
                    return Ok(value);
                }
                Err(problem) if attempt + 1 < attempts => {
                    th.emitter.emit(Payload::Warning {
                        message: format!(
                            "prompt '{prompt}': the reply does not fit schema '{}': {problem}",
                            expecting.schema.name
                        ),
                    });
                    messages.push(Message::assistant(response.text));
                    messages.push(Message::user(structured::repair_message(&problem)));
                }
                Err(problem) => {
                    return Err(RunError::failed(
                        format!(
                            "prompt '{prompt}' did not produce a valid '{}' after {} repairs: {problem}",
                            expecting.schema.name,
                            structured::MAX_REPAIRS
                        ),
                        None,
                    ));
                }
            }
        }
        unreachable!()
    }
}
