//! Files split into items: the unit of incremental analysis.

use std::cell::RefCell;
use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};
use rowan::{GreenNode, GreenNodeData, NodeCache};
use sr_syntax::ast::{self, AstNode};
use sr_syntax::pieces::{Piece, PieceStarts};
use sr_syntax::{Parse, SyntaxKind, SyntaxNode, TextRange, TextSize};

use crate::last_pieces::{Key, Pieces, Reuse};
use crate::{Db, File, Name};

pub use sr_syntax::ItemKind;

/// A top-level definition (or an agent's handler). Its identity is its file,
/// kind, name, owner and occurrence among the items that share those; its
/// syntax and position are tracked fields, so queries that read only one
/// item's syntax are not invalidated by edits elsewhere in the file.
#[salsa::tracked(debug)]
pub struct Item<'db> {
    #[returns(copy)]
    pub file: File,
    #[returns(copy)]
    pub kind: ItemKind,
    #[returns(ref)]
    pub name: Name,
    /// The agent of an agent-scoped handler.
    #[returns(ref)]
    pub owner: Option<Name>,
    /// How many items before this one share its file, kind, name and owner.
    /// Salsa would tell them apart by creation order too, but it files
    /// identities by a hash that leaves that order out: `n` items with one
    /// identity took `n²` probes to create (32,000 duplicated flows, 8 s).
    #[returns(copy)]
    occurrence: u32,
    #[tracked]
    #[returns(ref)]
    pub green: ItemGreen,
    /// Offset of the item's first token in the file.
    #[tracked]
    #[returns(copy)]
    pub offset: TextSize,
}

/// The file's line index, built once per text (every request that converts
/// ranges asks for it).
#[salsa::tracked(returns(ref), no_eq)]
pub fn line_index(db: &dyn Db, file: File) -> sr_syntax::LineIndex {
    sr_syntax::LineIndex::shared(file.text(db).clone())
}

/// The file's pieces, parsed (memoized by text, so that an edit reparses only
/// the piece it touched; see `sr_syntax::pieces`). Items and syntax errors are
/// read from here; the file's tree is assembled only when asked for
/// ([`parse`]). Never backdated: the text changed, so the pieces did.
#[salsa::tracked(returns(ref), no_eq)]
pub(crate) fn file_pieces(db: &dyn Db, file: File) -> FilePieces {
    let text = file.text(db);
    let last = db.last_pieces().get(file);
    let reuse = last.as_deref().map(|last| Reuse::new(last, text));
    let starts = match &reuse {
        Some(reuse) => reuse.starts(),
        None => PieceStarts::new(text),
    };
    let _cache = PieceCache::install();
    let pieces = sr_syntax::pieces::select_pieces(text, &starts, |start, piece_text, lookahead| {
        let range = TextRange::at(start, TextSize::of(piece_text));
        let key = Key { range, lookahead_end: range.end() + TextSize::of(lookahead) };
        let parsed = match reuse.as_ref().and_then(|r| r.find(key)) {
            Some(parsed) => parsed,
            None => {
                let first = start == TextSize::from(0);
                parse_piece(db, PieceText::new(db, piece_text, lookahead, first)).clone()?
            }
        };
        Some((key, parsed))
    });
    let pieces = Arc::new(Pieces::new(text.clone(), starts, pieces.into_iter().map(|(_, keyed)| keyed).collect()));
    db.last_pieces().set(file, pieces.clone());
    FilePieces { pieces }
}

/// The file's parse. Never backdated: comparing trees costs a walk.
#[salsa::tracked(returns(ref), no_eq)]
pub fn parse(db: &dyn Db, file: File) -> Parse {
    sr_syntax::pieces::assemble(file_pieces(db, file).pieces())
}

/// The syntax errors of [`parse`], without assembling the tree.
#[salsa::tracked(returns(ref))]
pub fn syntax_errors(db: &dyn Db, file: File) -> Vec<sr_syntax::Diagnostic> {
    sr_syntax::pieces::errors(file_pieces(db, file).pieces())
}

/// A file's parsed pieces and the items in them, found once per piece: an
/// edit finds the items of the piece it touched only.
#[derive(Debug)]
pub(crate) struct FilePieces {
    /// In order, with where each starts (shared with [`LastPieces`](crate::LastPieces)).
    pieces: Arc<Pieces<ParsedPiece>>,
}

impl FilePieces {
    fn pieces(&self) -> impl Iterator<Item = (TextSize, &Piece)> {
        self.pieces.iter().map(|(start, parsed)| (start, &parsed.piece))
    }

    fn seed_count(&self) -> usize {
        self.pieces.iter().map(|(_, piece)| piece.seeds.len()).sum()
    }
}

/// An item as the parse finds it: what [`Item`] has but its file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ItemSeed {
    kind: ItemKind,
    name: Name,
    owner: Option<Name>,
    green: GreenNode,
    offset: TextSize,
}

/// A parsed piece and its items (offsets relative to the piece).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ParsedPiece {
    piece: Piece,
    seeds: Vec<ItemSeed>,
}

/// A top-level piece of some file's text, with its lookahead. Collected once
/// no parse has read it for a few revisions (salsa reuses its slot, dropping
/// the text and its parse), so that every version of a piece an editing
/// session produced is not kept for the life of the server. Salsa collects
/// only pieces interned by parses of editor texts (`Durability::LOW`): a piece
/// a file read from disk ever had stays for the life of the database.
#[salsa::interned]
struct PieceText<'db> {
    #[returns(ref)]
    text: String,
    #[returns(ref)]
    lookahead: String,
    #[returns(copy)]
    first: bool,
}

thread_local! {
    /// The node cache of the [`file_pieces`] running on this thread.
    static PIECE_CACHE: RefCell<Option<NodeCache>> = const { RefCell::new(None) };
}

/// One node cache for the pieces one run of [`file_pieces`] parses, so that
/// they share equal tokens and small nodes (a file's thousands of `agent`
/// keywords and indents are one allocation each). It lives for that run only:
/// a cache kept longer would keep every token it ever saw. Sharing changes no
/// tree's value, only where its parts live.
struct PieceCache {
    outer: Option<NodeCache>,
}

impl PieceCache {
    fn install() -> PieceCache {
        PieceCache { outer: PIECE_CACHE.replace(Some(NodeCache::default())) }
    }
}

impl Drop for PieceCache {
    fn drop(&mut self) {
        PIECE_CACHE.set(self.outer.take());
    }
}

#[salsa::tracked(lru = 65536)]
fn parse_piece<'db>(db: &'db dyn Db, piece: PieceText<'db>) -> Option<Arc<ParsedPiece>> {
    let (text, lookahead, first) = (piece.text(db), piece.lookahead(db), piece.first(db));
    let piece = PIECE_CACHE.with_borrow_mut(|cache| match cache {
        Some(cache) => sr_syntax::pieces::parse_piece_with(text, lookahead, first, cache),
        None => sr_syntax::pieces::parse_piece(text, lookahead, first),
    })?;
    let mut seeds = Vec::new();
    let mut offset = TextSize::from(0);
    for child in piece.children() {
        let start = offset;
        offset += child.text_len();
        let Some(green) = child.as_node() else { continue };
        let node = SyntaxNode::new_root(green.clone());
        let Some(kind) = ItemKind::of(node.kind()) else { continue };
        let name = item_name(&node, kind);
        seeds.push(ItemSeed { kind, name: name.clone(), owner: None, green: green.clone(), offset: start });
        if let Some(agent) = ast::AgentDef::cast(node) {
            for handler in agent.handlers() {
                let node = handler.syntax();
                seeds.push(ItemSeed {
                    kind: ItemKind::Handler,
                    name: item_name(node, ItemKind::Handler),
                    owner: Some(name.clone()),
                    green: node.green().to_owned(),
                    offset: start + node.text_range().start(),
                });
            }
        }
    }
    Some(Arc::new(ParsedPiece { piece, seeds }))
}

/// An item's green tree, as the item's parsed piece holds it. After an edit
/// elsewhere the piece is the same one, which makes comparing cheap: neither
/// tree is touched.
#[derive(Clone, Eq)]
pub struct ItemGreen {
    piece: Arc<ParsedPiece>,
    seed: u32,
}

impl PartialEq for ItemGreen {
    fn eq(&self, other: &ItemGreen) -> bool {
        (Arc::ptr_eq(&self.piece, &other.piece) && self.seed == other.seed)
            || std::ptr::eq::<GreenNodeData>(&***self, &***other)
            || **self == **other
    }
}

impl std::fmt::Debug for ItemGreen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ItemGreen").field(&**self).finish()
    }
}

impl std::ops::Deref for ItemGreen {
    type Target = GreenNode;

    fn deref(&self) -> &GreenNode {
        &self.piece.seeds[self.seed as usize].green
    }
}

/// The items of a file in source order; an agent's handlers follow the agent.
#[salsa::tracked(returns(ref))]
pub fn file_items(db: &dyn Db, file: File) -> Vec<Item<'_>> {
    let parse = file_pieces(db, file);
    let mut items = Vec::with_capacity(parse.seed_count());
    let mut occurrences: HashMap<(ItemKind, &Name, Option<&Name>), u32> = HashMap::with_capacity(items.capacity());
    for (start, piece) in parse.pieces.iter() {
        for (i, seed) in piece.seeds.iter().enumerate() {
            let count = occurrences.entry((seed.kind, &seed.name, seed.owner.as_ref())).or_default();
            let occurrence = *count;
            *count += 1;
            let green = ItemGreen { piece: piece.clone(), seed: i as u32 };
            let (name, owner) = (seed.name.clone(), seed.owner.clone());
            items.push(Item::new(db, file, seed.kind, name, owner, occurrence, green, start + seed.offset));
        }
    }
    items
}

/// The name an item is known by: its declared name, `default` for the unnamed
/// agent, `on input`-style text for handlers, the source for imports.
fn item_name(node: &SyntaxNode, kind: ItemKind) -> Name {
    let name = |n: Option<ast::NameDef>| n.map(|n| def_name(&n)).unwrap_or_default();
    match kind {
        ItemKind::Agent => {
            let n = name(ast::AgentDef::cast(node.clone()).and_then(|a| a.name()));
            if n.is_empty() { Name::new_static("default") } else { n }
        }
        ItemKind::Handler => {
            let handler = ast::EventHandler::cast(node.clone());
            let timing = handler.as_ref().and_then(|h| h.timing()).map(|t| t.text().to_string()).unwrap_or_default();
            let event = handler.as_ref().and_then(|h| h.event()).map(|t| t.text().to_string()).unwrap_or_default();
            Name::from(format!("{timing} {event}"))
        }
        ItemKind::Import => {
            let source = ast::Import::cast(node.clone()).and_then(|import| import.source_token());
            source.map(|t| Name::from(t.text())).unwrap_or_default()
        }
        _ => name(node.children().find_map(ast::NameDef::cast)),
    }
}

/// A definition's name; most are one token, read without building a string.
fn def_name(name: &ast::NameDef) -> Name {
    let mut tokens = name
        .syntax()
        .children_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| !t.kind().is_trivia() && t.kind() != SyntaxKind::NEWLINE);
    match (tokens.next(), tokens.next()) {
        (Some(only), None) => Name::from(only.text()),
        _ => Name::from(name.text()),
    }
}

/// The range of the item's declared name, relative to the item; read from its
/// syntax, so symbol lists need no lowering.
pub fn item_name_range(db: &dyn Db, item: Item<'_>) -> Option<TextRange> {
    name_range(&item_syntax(db, item))
}

pub(crate) fn name_range(root: &SyntaxNode) -> Option<TextRange> {
    root.children().find_map(ast::NameDef::cast).map(|n| n.syntax().text_range())
}

/// The item's syntax tree; its ranges are relative to the item's offset.
pub fn item_syntax(db: &dyn Db, item: Item<'_>) -> SyntaxNode {
    SyntaxNode::new_root((**item.green(db)).clone())
}

/// The innermost item containing `offset` (an agent's handler rather than the agent).
pub fn item_at(db: &dyn Db, file: File, offset: TextSize) -> Option<Item<'_>> {
    let mut found = None;
    for &item in file_items(db, file) {
        let range = TextRange::at(item.offset(db), item.green(db).text_len());
        if range.contains_inclusive(offset) {
            found = Some(item);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use rowan::NodeOrToken;

    use super::*;
    use crate::RootDatabase;

    /// The first token of each item's tree (held, so that no address is reused).
    fn first_tokens(db: &RootDatabase, file: File) -> Vec<rowan::GreenToken> {
        file_items(db, file)
            .iter()
            .map(|item| match item.green(db).children().next() {
                Some(NodeOrToken::Token(token)) => token.to_owned(),
                other => panic!("an item starts with its keyword, not {other:?}"),
            })
            .collect()
    }

    #[test]
    fn the_pieces_of_one_parse_share_equal_tokens_and_no_cache_outlives_it() {
        let mut db = RootDatabase::default();
        let text = "prompt a: \"\"\"x\"\"\"\n\nprompt b: \"\"\"y\"\"\"\n\nprompt c: \"\"\"z\"\"\"\n";
        let file = db.set_file("/main.sr", text);
        let same = |a: &rowan::GreenToken, b: &rowan::GreenToken| std::ptr::eq(&**a, &**b);
        let [a, b, c] = &first_tokens(&db, file)[..] else { panic!("three items") };
        assert_eq!(a.text(), "prompt");
        assert!(same(a, b) && same(b, c), "one `prompt` token for the three pieces");
        assert!(PIECE_CACHE.with_borrow(Option::is_none), "the cache went with the parse");

        // An edit reparses one piece, through a cache of its own: its
        // `prompt` is a new token, the others' are still shared.
        db.set_file("/main.sr", text.replace("\"\"\"y", "\"\"\"yy"));
        let [a2, b2, c2] = &first_tokens(&db, file)[..] else { panic!("three items") };
        assert!(same(a, a2) && same(c, c2), "untouched pieces are reused");
        assert!(!same(b, b2), "the edited piece was parsed again");
        assert!(PIECE_CACHE.with_borrow(Option::is_none));
    }
}
