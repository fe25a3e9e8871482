//! The actix-web transport of agent-runtime: routes, DTOs, bearer auth, the error model, the
//! OpenAPI description and request telemetry. Depends on the use cases, never on an adapter.

mod auth;
pub mod dto;
mod errors;
mod extract;
mod openapi;
mod routes;
mod state;
mod telemetry;

pub use openapi::ApiDoc;
pub use state::ApiState;
pub use telemetry::{middleware as telemetry_middleware, Metrics};

use actix_web::{web, Resource};
use utoipa::OpenApi;
use utoipa_redoc::{Redoc, Servable};

/// A resource whose other methods get a JSON 405 instead of actix's empty one.
fn resource(path: &str) -> Resource {
    web::resource(path).default_service(web::to(routes::fallback::method_not_allowed))
}

/// Registers every route, the JSON 404 and the shared state on an actix `App`.
pub fn configure(state: web::Data<ApiState>) -> impl FnOnce(&mut web::ServiceConfig) {
    move |config| {
        config
            .app_data(state)
            .service(resource("/v1/agents/me").route(web::get().to(routes::agents::me)))
            .service(resource("/v1/wallet/address").route(web::get().to(routes::wallet::address)))
            .service(resource("/v1/wallet/policy").route(web::get().to(routes::wallet::policy)))
            .service(resource("/v1/wallet/balance").route(web::get().to(routes::wallet::balance)))
            .service(resource("/v1/wallet/send").route(web::post().to(routes::wallet::send)))
            .service(resource("/v1/wallet/intents").route(web::get().to(routes::wallet::intents)))
            .service(resource("/healthz").route(web::get().to(routes::ops::healthz)))
            .service(resource("/readyz").route(web::get().to(routes::ops::readyz)))
            .service(resource("/metrics").route(web::get().to(routes::ops::metrics)))
            .service(resource("/openapi.json").route(web::get().to(routes::ops::openapi_json)))
            .service(Redoc::with_url("/docs", ApiDoc::openapi()))
            .default_service(web::to(routes::fallback::not_found));
    }
}
