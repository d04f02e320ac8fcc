//! What one route of the API is: its method, path, who may reach it and its
//! handler. API v1, the studio's API, time travel and A2A each contribute
//! rows; the router and the tests are built from the one table.

use std::sync::Arc;

use axum::handler::Handler;
use axum::http::Method;
use axum::routing::{MethodFilter, MethodRouter, on};

use crate::Server;

/// Who may reach a route: anyone (health, the agent cards), or a client
/// with a key when the server has keys.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Open,
    Keyed,
}

/// One route of the API: the router is built from the table of them
/// (`api::routes`), and the tests take the write routes from it.
pub(crate) struct Route {
    pub method: Method,
    pub path: &'static str,
    pub access: Access,
    pub handler: MethodRouter<Arc<Server>>,
}

impl Route {
    pub fn new<H, T>(access: Access, method: Method, path: &'static str, handler: H) -> Route
    where
        H: Handler<T, Arc<Server>>,
        T: 'static,
    {
        let filter = MethodFilter::try_from(method.clone()).expect("the API's methods are GET and POST");
        Route { method, path, access, handler: on(filter, handler) }
    }
}
