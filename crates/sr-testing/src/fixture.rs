//! Test fixtures in rust-analyzer's style: `//- /path.sr` headers start files,
//! `$0` marks the cursor and `$0…$0` a range. Common indentation is removed so
//! fixtures can be written indented inside raw strings.

/// Parsed fixture: files as (absolute path, text) and the marked position.
#[derive(Debug, Clone)]
pub struct Fixture {
    pub files: Vec<(String, String)>,
    /// (index into `files`, byte offset) of the first `$0`.
    pub cursor: Option<(usize, u32)>,
    /// (index into `files`, start, end) when two `$0` mark a range.
    pub range: Option<(usize, u32, u32)>,
}

impl Fixture {
    pub fn parse(text: &str) -> Fixture {
        let text = trim_indent(text);
        let mut chunks: Vec<(String, String)> = Vec::new();
        if !text.trim_start().starts_with("//- ") {
            chunks.push(("/main.sr".to_string(), text));
        } else {
            for line in text.split_inclusive('\n') {
                if let Some(path) = line.strip_prefix("//- ") {
                    chunks.push((path.trim().to_string(), String::new()));
                } else if let Some((_, body)) = chunks.last_mut() {
                    body.push_str(line);
                }
            }
        }
        let mut fixture = Fixture { files: Vec::new(), cursor: None, range: None };
        for (index, (path, body)) in chunks.into_iter().enumerate() {
            let mut clean = String::with_capacity(body.len());
            let mut marks = Vec::new();
            let mut rest = body.as_str();
            while let Some(at) = rest.find("$0") {
                clean.push_str(&rest[..at]);
                marks.push(clean.len() as u32);
                rest = &rest[at + 2..];
            }
            clean.push_str(rest);
            match marks.as_slice() {
                [] => {}
                [at] => fixture.cursor = Some((index, *at)),
                [start, end] => {
                    fixture.cursor = Some((index, *start));
                    fixture.range = Some((index, *start, *end));
                }
                _ => panic!("more than two `$0` markers in {path}"),
            }
            fixture.files.push((path, clean));
        }
        fixture
    }

    /// The path and offset of the cursor; panics without a `$0`.
    pub fn position(&self) -> (&str, u32) {
        let (file, offset) = self.cursor.expect("fixture has no `$0` cursor");
        (&self.files[file].0, offset)
    }

    /// The text of the file at `path`.
    pub fn text(&self, path: &str) -> &str {
        &self.files.iter().find(|(p, _)| p == path).expect("no such fixture file").1
    }
}

/// Removes the indentation common to all non-blank lines, and a leading line break.
pub fn trim_indent(text: &str) -> String {
    let text = text.strip_prefix('\n').unwrap_or(text);
    let indent = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start_matches(' ').len())
        .min()
        .unwrap_or(0);
    text.split_inclusive('\n')
        .map(|line| {
            if line.len() > indent && line[..indent].trim().is_empty() {
                &line[indent..]
            } else {
                line.trim_start_matches(' ')
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_files_cursor_and_range() {
        let fixture = Fixture::parse(
            r#"
            //- /main.sr
            agent a:
                instruction $0p
            //- /lib.sr
            prompt p: """x"""
            "#,
        );
        assert_eq!(fixture.files.len(), 2);
        assert_eq!(fixture.files[0], ("/main.sr".to_string(), "agent a:\n    instruction p\n".to_string()));
        assert_eq!(fixture.position(), ("/main.sr", 25));
        assert_eq!(fixture.text("/lib.sr"), "prompt p: \"\"\"x\"\"\"\n");

        let ranged = Fixture::parse("flow $0main$0:\n    return 1\n");
        assert_eq!(ranged.range, Some((0, 5, 9)));
        assert_eq!(ranged.files[0].0, "/main.sr");
    }
}
