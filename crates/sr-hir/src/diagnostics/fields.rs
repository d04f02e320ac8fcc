//! SR104, a field the schema of a value does not have: one check for `$x.f`
//! in code and `${x.f}` in every string (flow and handler strings, `log`,
//! prompt bodies). A prompt body has no assignments of its own, so its
//! variables' types are the program's ([`super::body::var_types`]): known where every
//! assignment in the program's flows and handlers gives the same schema.

use foldhash::{HashMap, HashMapExt};

use super::{Anchor, SemanticDiagnostic};
use crate::diagnostic_kinds::{self as kinds, Listing};
use crate::hir::{Interpolation, ItemData, TypeRef};
use crate::items::Item;
use crate::resolve::Program;
use crate::{Db, Name, item_data};

/// A value's schema type, for field checks.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub(super) enum Ty {
    Schema(Name),
    List(Box<Ty>),
}

impl Ty {
    pub(super) fn of(ty: &TypeRef) -> Option<Ty> {
        match ty {
            TypeRef::Named(named) => Some(Ty::Schema(named.name.clone())),
            TypeRef::List(inner) => Some(Ty::List(Box::new(Ty::of(inner)?))),
            TypeRef::Optional(inner) => Ty::of(inner),
            _ => None,
        }
    }
}

/// A schema's fields by name (the first of two with one name), and the help's
/// list of them: made once per schema, however many accesses check it.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Fields {
    pub(super) types: HashMap<Name, TypeRef>,
    names: Listing,
}

#[salsa::tracked(returns(ref))]
fn schema_fields<'db>(db: &'db dyn Db, item: Item<'db>) -> Fields {
    let ItemData::Schema(data) = &*item_data(db, item) else { return Fields::default() };
    let mut types = HashMap::with_capacity(data.fields.len());
    for field in &data.fields {
        types.entry(field.name.name.clone()).or_insert_with(|| field.ty.clone());
    }
    let names = Listing::new(data.fields.iter().map(|f| f.name.name.to_string()), data.fields.len());
    Fields { types, names }
}

/// The fields of a schema of the program, if it defines one of that name.
pub(super) fn fields_of<'db>(db: &'db dyn Db, program: &Program<'db>, schema: &Name) -> Option<&'db Fields> {
    let &item = program.schemas.get(schema)?;
    Some(schema_fields(db, item))
}

/// The type of `field` of a value of type `ty`: `Err` with SR104 at `anchor`
/// when its schema has no such field, `Ok(None)` when the type is not known.
pub(super) fn field<'db>(
    db: &'db dyn Db,
    program: &Program<'db>,
    ty: &Ty,
    field: &Name,
    anchor: Anchor<'db>,
) -> Result<Option<Ty>, Box<SemanticDiagnostic<'db>>> {
    let Ty::Schema(schema) = ty else { return Ok(None) };
    let Some(fields) = fields_of(db, program, schema) else { return Ok(None) };
    match fields.types.get(field) {
        Some(ty) => Ok(Ty::of(ty)),
        None => Err(Box::new(SemanticDiagnostic::new(
            kinds::UnknownField { schema: schema.to_string(), field: field.to_string(), fields: fields.names.clone() },
            anchor,
        ))),
    }
}

/// SR104 for the first field of `${x.a.b}` that the schema before it lacks,
/// `x` holding `ty`.
pub(super) fn interpolation<'db>(
    db: &'db dyn Db,
    program: &Program<'db>,
    item: Item<'db>,
    ty: Ty,
    interpolation: &Interpolation,
) -> Option<SemanticDiagnostic<'db>> {
    let mut ty = ty;
    for name in interpolation.path.iter().skip(1) {
        match field(db, program, &ty, name, Anchor::Part(item, interpolation.part)) {
            Ok(Some(next)) => ty = next,
            Ok(None) => return None,
            Err(unknown) => return Some(*unknown),
        }
    }
    None
}
