//! Operational endpoints: liveness, readiness, metrics and the API description.

use actix_web::http::header::{self, ContentType};
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Serialize;
use utoipa::{OpenApi, ToSchema};

use crate::errors::{ApiError, ErrorBody};
use crate::openapi::ApiDoc;
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
pub struct StatusBody {
    pub status: &'static str,
}

/// The process is up and serving HTTP.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "The process is up", body = StatusBody)))]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(StatusBody { status: "ok" })
}

/// The process can serve requests: the database answers.
#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses(
        (status = 200, description = "The database answers", body = StatusBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn readyz(state: web::Data<ApiState>) -> Result<HttpResponse, ApiError> {
    state.database.ping().await?;
    Ok(HttpResponse::Ok().json(StatusBody { status: "ready" }))
}

pub async fn metrics(request: HttpRequest, state: web::Data<ApiState>) -> HttpResponse {
    if let Some(token) = &state.metrics_token {
        let presented = crate::auth::bearer_token(&request).unwrap_or_default();
        if !edge::same_secret(&presented, token) {
            return HttpResponse::Unauthorized()
                .insert_header((header::WWW_AUTHENTICATE, "Bearer"))
                .json(ErrorBody {
                    detail: "Invalid metrics token".into(),
                });
        }
    }
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(state.metrics.render(
            state.database.pool_usage(),
            state.first_pages.usage(),
            state.policies.usage(),
            state.services.events.kept_reads(),
            &state.services.long_lived.usage(),
            (
                state.notifications.connections_made(),
                state.notifications.is_listening(),
            ),
        ))
}

pub async fn openapi_json() -> HttpResponse {
    HttpResponse::Ok().insert_header(ContentType::json()).body(
        ApiDoc::openapi()
            .to_pretty_json()
            .expect("the API description serializes"),
    )
}
