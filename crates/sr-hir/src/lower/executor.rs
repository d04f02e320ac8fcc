//! Lowering `executor NAME:` blocks. Every property is `key: expression`;
//! what each key accepts is checked here, and problems (SR110) are kept with
//! the part they concern.

use sr_syntax::ast::{self, AstNode, LiteralValue};

use super::Lower;
use crate::diagnostic_kinds::ExecutorProblem;
use crate::hir::{EXECUTOR_PROPERTIES, ExecutorData, Named, SandboxBackend};

impl Lower {
    pub(super) fn executor(&mut self, executor: ast::ExecutorDef) -> ExecutorData {
        let mut data = ExecutorData::default();
        for property in executor.properties() {
            let Some(key) = property.key() else { continue };
            let Some(value) = property.value() else { continue };
            let at = self.part(value.syntax().text_range());
            let key_part = self.part(key.text_range());
            let mut problem = |problem: ExecutorProblem| data.problems.push((at, problem));
            match key.text() {
                "backend" => match word(&value).as_deref().map(SandboxBackend::named) {
                    Some(Some(backend)) => data.backend = backend,
                    _ => problem(ExecutorProblem::Backend { backends: &SandboxBackend::NAMES }),
                },
                "image" => match string(&value) {
                    Some(image) => data.image = Some(image),
                    None => problem(ExecutorProblem::ImageNotString),
                },
                "socket" => match string(&value) {
                    Some(socket) => data.socket = Some(socket),
                    None => problem(ExecutorProblem::SocketNotString),
                },
                "allow" => match &value {
                    ast::Expr::ListExpr(list) => {
                        for item in list.items() {
                            match string(&item).or_else(|| dotted(&item)).filter(|m| valid_pattern(m)) {
                                Some(module) => data.allow.push(module),
                                None => {
                                    let at = self.part(item.syntax().text_range());
                                    let text = item.syntax().text().to_string();
                                    data.problems.push((at, ExecutorProblem::NotModule { text }));
                                }
                            }
                        }
                    }
                    _ => problem(ExecutorProblem::AllowNotList),
                },
                "files" | "stateless" => match bool_value(&value) {
                    Some(flag) if key.text() == "files" => data.files = flag,
                    Some(flag) => data.stateless = flag,
                    None => problem(ExecutorProblem::NotBool { key: key.text().to_string() }),
                },
                "examples" => match word(&value) {
                    Some(prompt) => data.examples = Some(Named { name: prompt.into(), part: at }),
                    None => problem(ExecutorProblem::ExamplesNotName),
                },
                "timeout" | "memory" | "cpu" | "max_steps" | "max_errors" => {
                    let Some(n) = int(&value).filter(|&n| n > 0) else {
                        problem(ExecutorProblem::NotPositive { key: key.text().to_string() });
                        continue;
                    };
                    let slot = match key.text() {
                        "timeout" => &mut data.timeout,
                        "memory" => &mut data.memory_mb,
                        "cpu" => &mut data.cpu_seconds,
                        "max_steps" => &mut data.max_steps,
                        _ => &mut data.max_errors,
                    };
                    *slot = Some(n);
                }
                other => {
                    let known: Vec<&str> = EXECUTOR_PROPERTIES.iter().map(|(k, _)| *k).collect();
                    data.problems.push((key_part, ExecutorProblem::UnknownProperty { key: other.to_string(), known }));
                }
            }
        }
        if data.backend == SandboxBackend::Container && data.image.is_none() {
            let at = self.map.name.map_or(self.part(self.map.item), |range| self.part(range));
            data.problems.push((at, ExecutorProblem::ContainerWithoutImage));
        }
        data
    }
}

/// `bubblewrap` (a bare name).
fn word(value: &ast::Expr) -> Option<String> {
    match value {
        ast::Expr::Var(var) if var.fields().is_empty() && !var.has_dollar() => var.name(),
        _ => None,
    }
}

/// `os.path` (a name with fields).
fn dotted(value: &ast::Expr) -> Option<String> {
    let ast::Expr::Var(var) = value else { return None };
    if var.has_dollar() {
        return None;
    }
    var.name_token().map(|t| t.text().to_string())
}

fn string(value: &ast::Expr) -> Option<String> {
    match value {
        ast::Expr::Literal(literal) => literal.string(),
        _ => None,
    }
}

fn int(value: &ast::Expr) -> Option<u64> {
    match value {
        ast::Expr::Literal(literal) => match literal.value()? {
            LiteralValue::Int(n) => u64::try_from(n).ok(),
            _ => None,
        },
        _ => None,
    }
}

fn bool_value(value: &ast::Expr) -> Option<bool> {
    match value {
        ast::Expr::Literal(literal) => match literal.value()? {
            LiteralValue::Bool(b) => Some(b),
            _ => None,
        },
        _ => None,
    }
}

/// `json`, `os.path`, `numpy.*`: dotted identifiers, optionally ending in `.*`;
/// or `*`, every module (the sandbox is then the only boundary).
fn valid_pattern(pattern: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    let module = pattern.strip_suffix(".*").unwrap_or(pattern);
    !module.is_empty()
        && module.split('.').all(|part| {
            part.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::valid_pattern;

    #[test]
    fn module_patterns() {
        for good in ["json", "os.path", "numpy.*", "_private", "*"] {
            assert!(valid_pattern(good), "{good}");
        }
        for bad in ["", "**", "numpy.", "a..b", "1abc", "a-b", "numpy.*.x"] {
            assert!(!valid_pattern(bad), "{bad}");
        }
    }
}
