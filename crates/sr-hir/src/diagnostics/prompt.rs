//! Checks of one prompt definition: its model and schema (E0001), the
//! variables its body interpolates (E0015) and their fields (SR104).

use sr_syntax::{ItemKind, Reported};

use super::fields;
use super::suggest::{program_names, variable_typos};
use super::vars::program_vars;
use super::{Anchor, BUILTIN_VARIABLES, SemanticDiagnostic, UpstreamAt};
use crate::diagnostic_kinds::{self as kinds, Suggestion};
use crate::hir::ItemData;
use crate::items::Item;
use crate::{Db, File, item_data, program};

/// Upstream's threshold for "did you mean" on prompt variables.
const TYPO_SIMILARITY: f64 = 0.85;

pub(super) fn check<'db>(db: &'db dyn Db, root: File, item: Item<'db>) -> Vec<SemanticDiagnostic<'db>> {
    let ItemData::Prompt(prompt) = &*item_data(db, item) else { return Vec::new() };
    let program = program(db, root);
    let name = item.name(db);
    let at_prompt = UpstreamAt::Other(Anchor::ItemStart(item));
    let mut out = Vec::new();

    if let Some(model) = &prompt.model
        && !program.models.contains_key(&model.name)
    {
        let suggestion = program_names(db, root).of(ItemKind::Model).suggest(&model.name);
        out.push(SemanticDiagnostic {
            upstream_at: at_prompt.clone(),
            ..SemanticDiagnostic::new(
                kinds::UndefinedReference { kind: ItemKind::Model, name: model.name.to_string(), suggestion },
                Anchor::Part(item, model.part),
            )
        });
    }
    if let Some(expecting) = &prompt.expecting
        && !program.schemas.contains_key(&expecting.schema.name)
    {
        out.push(SemanticDiagnostic {
            upstream_at: at_prompt,
            ..SemanticDiagnostic::new(
                kinds::UndefinedReference {
                    kind: ItemKind::Schema,
                    name: expecting.schema.name.to_string(),
                    suggestion: Suggestion::None,
                },
                Anchor::Part(item, expecting.schema.part),
            )
        });
    }

    let Some(body) = &prompt.body else { return out };
    out.extend(super::functions::template_calls(item, &body.template));
    for interpolation in body.template.interpolations().filter(|i| i.path.len() > 1) {
        if let Some(ty) = super::body::var_types(db, root).get(&interpolation.path[0]) {
            out.extend(fields::interpolation(db, program, item, ty.clone(), interpolation));
        }
    }
    let vars = program_vars(db, root);
    let mut interpolations = body.template.interpolations().filter(|i| i.plain).peekable();
    if interpolations.peek().is_none() {
        return out;
    }
    for interpolation in interpolations {
        let var = &interpolation.path[0];
        let known = BUILTIN_VARIABLES.contains(&var.as_str())
            || program.prompts.contains_key(var)
            || program_names(db, root).produced.contains(var)
            || vars.upstream_flow_var_set.contains(var);
        if known {
            continue;
        }
        // Upstream only counts the assignments it sees in flows; the runtime
        // also sees handlers', match arms', `on failure` blocks' and the answer
        // of `escalate to human`.
        let reported = if vars.all_vars.contains(var) { Reported::UpstreamOnly } else { Reported::Always };
        let suggestion = variable_typos(db, root).closest(var, TYPO_SIMILARITY).map(|c| c.to_string());
        out.push(SemanticDiagnostic {
            reported,
            upstream_at: UpstreamAt::PromptText { item, char_offset: interpolation.char_offset },
            ..SemanticDiagnostic::new(
                kinds::UndefinedPromptVariable { prompt: name.to_string(), variable: var.to_string(), suggestion },
                Anchor::Part(item, interpolation.part),
            )
        });
    }
    out
}
