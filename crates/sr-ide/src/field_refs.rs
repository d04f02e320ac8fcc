//! Schema fields: where a field is declared (`schema S:` / `    note: string`)
//! and where it is read or written through a value of that schema, by
//! `var_types` (`$r.note`, `$r.at.file`, `${r.note}` in strings and prompt
//! bodies, `$r.note = …`), in every file of every program holding the schema.
//! A use counts only where the value's type is known, so a field reached
//! through a value of unknown type is not found (nor renamed). `.note` inside
//! `filter … where` is not followed either.

use sr_hir::hir::{Body, Expr, ExprId, ItemData, Place, PlaceUse, Template};
use sr_hir::resolve::Program;
use sr_hir::{Db, File, Item, ItemKind, Name, RootDatabase, body, file_items, item_data, source_map};
use sr_syntax::{TextRange, TextSize};

use crate::FilePosition;
use crate::namespace::analysis_programs;
use crate::var_types::{VarTypes, schema_of};

/// One spelling of a field's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldRef<'db> {
    /// The schema that declares the field.
    pub schema: Item<'db>,
    pub field: Name,
    pub range: TextRange,
    /// The declaration in the schema.
    pub def: bool,
}

/// The field under the cursor.
pub(crate) fn field_at<'db>(db: &'db RootDatabase, position: &FilePosition) -> Option<FieldRef<'db>> {
    let file = db.file(&position.path)?;
    analysis_programs(db, file).find_map(|program| {
        file_refs(db, file, program).into_iter().find(|r| r.range.contains_inclusive(position.offset))
    })
}

/// Every spelling of `field` of `schema`, in every file, sorted and without repeats.
pub(crate) fn references<'db>(db: &'db RootDatabase, schema: Item<'db>, field: &Name) -> Vec<(File, FieldRef<'db>)> {
    let mut out = Vec::new();
    for file in db.files() {
        for program in analysis_programs(db, file) {
            if !program.items.contains(&schema) {
                continue;
            }
            let refs = file_refs(db, file, program).into_iter();
            out.extend(refs.filter(|r| r.schema == schema && &r.field == field).map(|r| (file, r)));
        }
    }
    out.sort_by(|a, b| (a.0.path(db), a.1.range.start()).cmp(&(b.0.path(db), b.1.range.start())));
    out.dedup_by(|a, b| a.0 == b.0 && a.1.range == b.1.range);
    out
}

/// Where `schema` declares `field`: its name in the schema's file.
pub(crate) fn declaration(db: &dyn Db, schema: Item<'_>, field: &Name) -> Option<TextRange> {
    let ItemData::Schema(data) = &*item_data(db, schema) else { return None };
    let declared = data.fields.iter().find(|f| &f.name.name == field)?;
    let range = source_map(db, schema).part(declared.name.part) + schema.offset(db);
    let start = usize::from(range.start());
    let at = schema.file(db).text(db).get(start..usize::from(range.end()))?.find(field.as_str())?;
    Some(TextRange::at(TextSize::from((start + at) as u32), TextSize::of(field.as_str())))
}

/// The fields `schema` declares.
pub(crate) fn declared(db: &dyn Db, schema: Item<'_>) -> Vec<Name> {
    match &*item_data(db, schema) {
        ItemData::Schema(data) => data.fields.iter().map(|f| f.name.name.clone()).collect(),
        _ => Vec::new(),
    }
}

/// Every field spelling in `file`, read in `program`.
fn file_refs<'db>(db: &'db dyn Db, file: File, program: &Program<'db>) -> Vec<FieldRef<'db>> {
    let mut cx =
        Collect { db, program, types: VarTypes::new(db, program), text: file.text(db).clone(), out: Vec::new() };
    for &item in file_items(db, file) {
        cx.item(item);
    }
    cx.out
}

struct Collect<'a, 'db> {
    db: &'db dyn Db,
    program: &'a Program<'db>,
    types: VarTypes<'a, 'db>,
    text: std::sync::Arc<str>,
    out: Vec<FieldRef<'db>>,
}

impl<'db> Collect<'_, 'db> {
    fn item(&mut self, item: Item<'db>) {
        let map = source_map(self.db, item);
        let offset = item.offset(self.db);
        match &*item_data(self.db, item) {
            ItemData::Schema(data) if self.program.schemas.get(item.name(self.db)) == Some(&item) => {
                for field in &data.fields {
                    let name = &field.name.name;
                    if let Some(range) = self.find(map.part(field.name.part) + offset, name) {
                        self.out.push(FieldRef { schema: item, field: name.clone(), range, def: true });
                    }
                }
            }
            ItemData::Prompt(prompt) => {
                if let Some(prompt_body) = &prompt.body {
                    self.template(&prompt_body.template, &map.parts, offset);
                }
            }
            _ if matches!(item.kind(self.db), ItemKind::Flow | ItemKind::Handler) => {
                let body = body(self.db, item);
                body.walk_stmts(&mut |_, stmt| {
                    for (place, used) in stmt.places() {
                        if used == PlaceUse::Bind {
                            self.place(place, &map.parts, offset);
                        }
                    }
                    for root in stmt.exprs() {
                        body.walk_expr(root, &mut |id, expr| match expr {
                            Expr::Field { field, .. } => self.field_expr(&body, id, field, map.exprs[id] + offset),
                            Expr::Template(template) => self.template(template, &map.parts, offset),
                            _ => {}
                        });
                    }
                });
            }
            _ => {}
        }
    }

    /// `$x.a.b` as an expression: the last segment (each prefix is its own expression).
    fn field_expr(&mut self, body: &Body, id: ExprId, field: &Name, range: TextRange) {
        let Some((name, mut fields)) = path_of(body, id) else { return };
        fields.pop();
        let Some(text) = self.text.get(std::ops::Range::<usize>::from(range)) else { return };
        let Some(at) = text.rfind(field.as_str()) else { return };
        let field_range = TextRange::at(range.start() + TextSize::from(at as u32), TextSize::of(field.as_str()));
        self.push(&name, &fields, field, field_range);
    }

    /// `$x.a.b = …`: each field of the place.
    fn place(&mut self, place: &Place, parts: &[TextRange], offset: TextSize) {
        if !place.fields.is_empty() {
            self.path(&place.name, &place.fields, parts[place.part.0 as usize] + offset);
        }
    }

    fn template(&mut self, template: &Template, parts: &[TextRange], offset: TextSize) {
        for interpolation in template.interpolations() {
            if let [name, fields @ ..] = &interpolation.path[..]
                && !fields.is_empty()
            {
                let range = parts[interpolation.part.0 as usize] + offset;
                self.path(name, fields, range);
            }
        }
    }

    /// The fields of `name.f1.f2…` spelled inside `range`, found in order.
    fn path(&mut self, name: &Name, fields: &[Name], range: TextRange) {
        let Some(mut at) = self.find(range, name).map(|r| r.end()) else { return };
        for (i, field) in fields.iter().enumerate() {
            let Some(field_range) = self.find(TextRange::new(at, range.end()), field) else { return };
            at = field_range.end();
            self.push(name, &fields[..i], field, field_range);
        }
    }

    /// A use of `field` on the value `name.prefix…`, when its schema declares it.
    fn push(&mut self, name: &Name, prefix: &[Name], field: &Name, range: TextRange) {
        let prefix: Vec<&str> = prefix.iter().map(Name::as_str).collect();
        let Some(ty) = self.types.path(name, &prefix) else { return };
        let Some(&schema) = schema_of(&ty).and_then(|s| self.program.schemas.get(s)) else { return };
        if declared(self.db, schema).contains(field) {
            self.out.push(FieldRef { schema, field: field.clone(), range, def: false });
        }
    }

    /// `name` as a whole word inside `range`.
    fn find(&self, range: TextRange, name: &str) -> Option<TextRange> {
        if name.is_empty() {
            return None;
        }
        let start = usize::from(range.start());
        let text = self.text.get(start..usize::from(range.end()))?;
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        let mut from = 0;
        while let Some(at) = text[from..].find(name).map(|i| from + i) {
            let end = at + name.len();
            let alone = !text[..at].ends_with(word) && !text[end..].starts_with(word);
            if alone {
                return Some(TextRange::at(TextSize::from((start + at) as u32), TextSize::of(name)));
            }
            from = end;
        }
        None
    }
}

/// `$x.a.b` as the variable and its fields.
fn path_of(body: &Body, id: ExprId) -> Option<(Name, Vec<Name>)> {
    match &body.exprs[id] {
        Expr::Var { name, .. } => Some((name.clone(), Vec::new())),
        Expr::Field { base, field } => {
            let (name, mut fields) = path_of(body, *base)?;
            fields.push(field.clone());
            Some((name, fields))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::{analysis, at_every_offset, position, show};

    /// A workload over three files; `$0` goes after `marker` in `path`.
    fn workload(path: &str, marker: &str) -> String {
        let files = [
            (
                "/ws/types.sr",
                "schema Location:\n    file: string\n    line: int\nschema Finding:\n    note: string\n    at: Location\nschema Other:\n    note: string\n",
            ),
            (
                "/ws/prompts.sr",
                "import ./types.sr\nprompt review expecting Finding: \"\"\"Review ${topic}.\"\"\"\nprompt recap: \"\"\"Recap ${found.note} at ${found.at.file}.\"\"\"\nprompt other expecting Other: \"\"\"Other.\"\"\"\n",
            ),
            (
                "/ws/main.sr",
                "import ./prompts.sr\nflow main:\n    $topic = \"x\"\n    $found = call llm review\n    log $found.note\n    $found.note = \"edited\"\n    log \"${found.note} in ${found.at.file}\"\n    $o = call llm other\n    log $o.note\n    $recap = call llm recap\n",
            ),
        ];
        let mut out = String::new();
        for (p, text) in files {
            let text = if p == path { text.replacen(marker, &format!("{marker}$0"), 1) } else { text.to_string() };
            out.push_str(&format!("//- {p}\n{text}"));
        }
        out
    }

    fn check(path: &str, marker: &str, expect: Expect) {
        let (analysis, fixture) = analysis(&workload(path, marker));
        at_every_offset(&analysis, &fixture, |analysis, at| {
            analysis.find_references(&at, true).unwrap();
            if analysis.prepare_rename(&at).unwrap().is_ok() {
                let _ = analysis.rename(&at, "renamed").unwrap();
            }
        });
        let refs = analysis.find_references(&position(&fixture), true).unwrap();
        let out: Vec<String> = refs.iter().map(|r| show(&fixture, &r.path, r.range)).collect();
        expect.assert_eq(&out.join("\n"));
    }

    #[test]
    fn from_the_declaration_every_use_in_every_file() {
        check(
            "/ws/types.sr",
            "    no",
            expect![[r#"
                /ws/main.sr:92..96 "note"
                /ws/main.sr:108..112 "note"
                /ws/main.sr:141..145 "note"
                /ws/prompts.sr:105..109 "note"
                /ws/types.sr:68..72 "note""#]],
        );
    }

    #[test]
    fn from_a_use_in_a_flow_a_template_or_a_prompt_body() {
        check(
            "/ws/main.sr",
            "log $found.no",
            expect![[r#"
            /ws/main.sr:92..96 "note"
            /ws/main.sr:108..112 "note"
            /ws/main.sr:141..145 "note"
            /ws/prompts.sr:105..109 "note"
            /ws/types.sr:68..72 "note""#]],
        );
        check(
            "/ws/main.sr",
            "${found.no",
            expect![[r#"
            /ws/main.sr:92..96 "note"
            /ws/main.sr:108..112 "note"
            /ws/main.sr:141..145 "note"
            /ws/prompts.sr:105..109 "note"
            /ws/types.sr:68..72 "note""#]],
        );
        check(
            "/ws/prompts.sr",
            "${found.at.fi",
            expect![[r#"
            /ws/main.sr:161..165 "file"
            /ws/prompts.sr:125..129 "file"
            /ws/types.sr:21..25 "file""#]],
        );
        // The field of the same name of another schema is another field.
        check(
            "/ws/main.sr",
            "log $o.no",
            expect![[r#"
            /ws/main.sr:203..207 "note"
            /ws/types.sr:116..120 "note""#]],
        );
    }

    fn check_rename(path: &str, marker: &str, new_name: &str, expect: Expect) {
        let (analysis, fixture) = analysis(&workload(path, marker));
        let out = match analysis.rename(&position(&fixture), new_name).unwrap() {
            Ok(change) => crate::tests::applied(&fixture, &change),
            Err(error) => format!("refused: {error}"),
        };
        expect.assert_eq(&out);
    }

    #[test]
    fn rename_edits_every_file_and_refuses_a_taken_field() {
        check_rename(
            "/ws/main.sr",
            "log $found.no",
            "remark",
            expect![[r#"
            //- /ws/main.sr
            import ./prompts.sr
            flow main:
                $topic = "x"
                $found = call llm review
                log $found.remark
                $found.remark = "edited"
                log "${found.remark} in ${found.at.file}"
                $o = call llm other
                log $o.note
                $recap = call llm recap
            //- /ws/prompts.sr
            import ./types.sr
            prompt review expecting Finding: """Review ${topic}."""
            prompt recap: """Recap ${found.remark} at ${found.at.file}."""
            prompt other expecting Other: """Other."""
            //- /ws/types.sr
            schema Location:
                file: string
                line: int
            schema Finding:
                remark: string
                at: Location
            schema Other:
                note: string
        "#]],
        );
        check_rename(
            "/ws/types.sr",
            "    no",
            "at",
            expect!["refused: 'at' is already a field of schema 'Finding' (/ws/types.sr:4)"],
        );
        check_rename("/ws/types.sr", "    no", "list", expect!["refused: 'list' is a keyword"]);
    }
}
