//! The committed OpenAPI document and the studio's TypeScript types are what
//! the wire types generate: a shape changed without regenerating fails here,
//! with the difference. `UPDATE_EXPECT=1 cargo test -p sr-api --test drift`
//! rewrites both.

use expect_test::expect_file;

#[test]
fn openapi_document_is_current() {
    expect_file!["../openapi.json"].assert_eq(&sr_api::openapi::text());
}

#[test]
fn studio_types_are_current() {
    expect_file!["../../../studio/src/lib/wire.ts"].assert_eq(&sr_api::typescript::module());
}
