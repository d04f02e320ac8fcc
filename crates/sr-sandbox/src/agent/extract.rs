//! The code in a model reply: its ```python blocks (or, failing those, its untagged
//! ``` blocks), joined. A block the reply never closes runs to the end of the reply.

const PYTHON_TAGS: &[&str] = &["python", "py", "python3"];

pub(crate) fn code(reply: &str) -> Option<String> {
    let blocks = blocks(reply);
    let tagged: Vec<&str> = blocks
        .iter()
        .filter(|(tag, _)| PYTHON_TAGS.contains(&tag.to_ascii_lowercase().as_str()))
        .map(|(_, body)| body.as_str())
        .collect();
    let chosen = if tagged.is_empty() {
        blocks.iter().filter(|(tag, _)| tag.is_empty()).map(|(_, body)| body.as_str()).collect()
    } else {
        tagged
    };
    let code = chosen.join("\n\n");
    (!code.trim().is_empty()).then_some(code)
}

/// (tag, body) of every fenced block, its lines dedented by the fence's indentation.
fn blocks(reply: &str) -> Vec<(String, String)> {
    struct Open<'a> {
        tag: String,
        indent: usize,
        lines: Vec<&'a str>,
    }
    let mut blocks = Vec::new();
    let mut open: Option<Open> = None;
    for line in reply.lines() {
        // ASCII indentation only, so slicing by it stays on character boundaries.
        let trimmed = line.trim_start_matches([' ', '\t']);
        let fence = trimmed.strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(tag)) => {
                open = Some(Open { tag: tag.trim().to_string(), indent: line.len() - trimmed.len(), lines: Vec::new() })
            }
            (Some(_), Some(rest)) if rest.trim().is_empty() => {
                if let Some(block) = open.take() {
                    blocks.push((block.tag, block.lines.join("\n")));
                }
            }
            (Some(block), _) => {
                let strip = (line.len() - trimmed.len()).min(block.indent);
                block.lines.push(&line[strip..]);
            }
            (None, None) => {}
        }
    }
    if let Some(block) = open {
        blocks.push((block.tag, block.lines.join("\n")));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_python_blocks() {
        let reply =
            "Thought: add them.\n```python\nx = add(1, 2)\nprint(x)\n```\nand\n```py\ny = 3\n```\n```text\nno\n```";
        assert_eq!(code(reply).as_deref(), Some("x = add(1, 2)\nprint(x)\n\ny = 3"));
    }

    #[test]
    fn falls_back_to_untagged_blocks_and_unclosed_fences() {
        assert_eq!(code("```\nprint(1)\n```").as_deref(), Some("print(1)"));
        assert_eq!(code("Here:\n```python\nfinal_answer('a\\nb')").as_deref(), Some("final_answer('a\\nb')"));
        assert_eq!(code("  ```Python\n  indented = 1\n    deeper\n  ```").as_deref(), Some("indented = 1\n  deeper"));
    }

    #[test]
    fn odd_indentation_does_not_panic() {
        assert_eq!(code(" ```python\n\u{3000}x = 1\n```").as_deref(), Some("\u{3000}x = 1"));
    }

    #[test]
    fn no_code_is_none() {
        assert_eq!(code("I think the answer is 4."), None);
        assert_eq!(code("```python\n\n```"), None);
        assert_eq!(code("```json\n{}\n```"), None);
        assert_eq!(code(""), None);
    }
}
