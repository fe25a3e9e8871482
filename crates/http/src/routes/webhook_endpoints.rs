//! `/v1/webhooks`: the agent's webhook endpoints, their secrets, deliveries and replays.

use actix_web::web::{self, Json, Path};
use actix_web::HttpResponse;
use api_types::{
    PageLimit, WebhookAttemptOut, WebhookAttemptPage, WebhookCreateRequest, WebhookOut,
    WebhookReplayRequest, WebhookReplayResponse, WebhookUpdateRequest,
};
use app::WebhookError;
use domain::commands::{CreateWebhook, UpdateWebhook};
use domain::WebhookEndpointId;
use uuid::Uuid;

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody, ValidationErrorBody};
use crate::extract::{rejected, JsonBody, QueryParams};
use crate::state::ApiState;

/// The endpoint a path names; one that is no UUID is not found.
fn endpoint_id(path: Path<String>) -> Result<WebhookEndpointId, ApiError> {
    Uuid::try_parse(&path.into_inner())
        .map(WebhookEndpointId)
        .map_err(|_| WebhookError::NotFound.into())
}

/// Creates an endpoint. Its `secret` is shown in this answer only.
///
/// At most 10 endpoints per agent (409 beyond). Deliveries are signed per Standard Webhooks with
/// the secret: `webhook-id`, `webhook-timestamp`, `webhook-signature`. The endpoint is the
/// key's that creates it: when the operator rotates the agent's key, it is disabled
/// (`disabled_reason` says so) until the new key enables it again.
#[utoipa::path(post, path = "/v1/webhooks", tag = "webhooks", operation_id = "create_webhook",
    security(("HTTPBearer" = [])),
    request_body = WebhookCreateRequest,
    responses(
        (status = 201, description = "The endpoint, with its secret", body = WebhookOut),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 409, description = "The agent has 10 endpoints already", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 429, description = "The agent's request bodies being read reach `REQUEST_BODY_BYTES_PER_AGENT`; retry after `Retry-After`", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn create(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<WebhookCreateRequest>,
) -> Result<HttpResponse, ApiError> {
    let command = CreateWebhook::try_from(body.read(&agent).await?)?;
    let (endpoint, secret) = state
        .services
        .webhooks
        .create(&agent.principal(), command)
        .await?;
    Ok(HttpResponse::Created().json(WebhookOut::with_secret(&endpoint, secret)))
}

/// The agent's endpoints, oldest first, without their secrets.
#[utoipa::path(get, path = "/v1/webhooks", tag = "webhooks", operation_id = "list_webhooks",
    security(("HTTPBearer" = [])),
    responses(
        (status = 200, description = "The endpoints", body = Vec<WebhookOut>),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn list(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
) -> Result<Json<Vec<WebhookOut>>, ApiError> {
    let endpoints = state.services.webhooks.list(&agent.profile).await?;
    Ok(Json(endpoints.iter().map(WebhookOut::new).collect()))
}

/// One endpoint, without its secret.
#[utoipa::path(get, path = "/v1/webhooks/{webhook_id}", tag = "webhooks", operation_id = "get_webhook",
    security(("HTTPBearer" = [])),
    params(("webhook_id" = Uuid, Path, description = "The endpoint's id")),
    responses(
        (status = 200, description = "The endpoint", body = WebhookOut),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such endpoint of this agent", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn get(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    path: Path<String>,
) -> Result<Json<WebhookOut>, ApiError> {
    let endpoint = state
        .services
        .webhooks
        .get(&agent.profile, endpoint_id(path)?)
        .await?;
    Ok(Json(WebhookOut::new(&endpoint)))
}

/// Changes an endpoint: its URL, types, description, or whether it is enabled.
///
/// Enabling clears `disabled_reason` and makes the endpoint the key's that enables it; disabling
/// fails the deliveries queued for it (they stay listed, and can be replayed).
#[utoipa::path(patch, path = "/v1/webhooks/{webhook_id}", tag = "webhooks", operation_id = "update_webhook",
    security(("HTTPBearer" = [])),
    params(("webhook_id" = Uuid, Path, description = "The endpoint's id")),
    request_body = WebhookUpdateRequest,
    responses(
        (status = 200, description = "The endpoint", body = WebhookOut),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such endpoint of this agent", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 429, description = "The agent's request bodies being read reach `REQUEST_BODY_BYTES_PER_AGENT`; retry after `Retry-After`", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn update(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    path: Path<String>,
    body: JsonBody<WebhookUpdateRequest>,
) -> Result<Json<WebhookOut>, ApiError> {
    let id = endpoint_id(path)?;
    let command = UpdateWebhook::try_from(body.read(&agent).await?)?;
    let endpoint = state
        .services
        .webhooks
        .update(&agent.principal(), id, command)
        .await?;
    Ok(Json(WebhookOut::new(&endpoint)))
}

/// Deletes an endpoint; the deliveries queued for it stop.
#[utoipa::path(delete, path = "/v1/webhooks/{webhook_id}", tag = "webhooks", operation_id = "delete_webhook",
    security(("HTTPBearer" = [])),
    params(("webhook_id" = Uuid, Path, description = "The endpoint's id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such endpoint of this agent", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn delete(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    path: Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = endpoint_id(path)?;
    state.services.webhooks.delete(&agent.profile, id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Gives the endpoint a new secret, shown in this answer only; the one it replaces keeps signing
/// too for 24 hours, and any older one stops: a delivery carries at most two signatures.
#[utoipa::path(post, path = "/v1/webhooks/{webhook_id}/rotate-secret", tag = "webhooks", operation_id = "rotate_webhook_secret",
    security(("HTTPBearer" = [])),
    params(("webhook_id" = Uuid, Path, description = "The endpoint's id")),
    responses(
        (status = 200, description = "The endpoint, with its new secret", body = WebhookOut),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such endpoint of this agent", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn rotate_secret(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    path: Path<String>,
) -> Result<Json<WebhookOut>, ApiError> {
    let id = endpoint_id(path)?;
    let (endpoint, secret) = state
        .services
        .webhooks
        .rotate_secret(&agent.profile, id)
        .await?;
    Ok(Json(WebhookOut::with_secret(&endpoint, secret)))
}

/// The attempts at the endpoint's deliveries, newest first.
#[utoipa::path(get, path = "/v1/webhooks/{webhook_id}/deliveries", tag = "webhooks", operation_id = "list_webhook_deliveries",
    security(("HTTPBearer" = [])),
    params(
        ("webhook_id" = Uuid, Path, description = "The endpoint's id"),
        ("limit" = Option<i64>, Query, description = "Page size; 20 when omitted", minimum = 1, maximum = 100),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "The attempts", body = WebhookAttemptPage),
        (status = 400, description = "Invalid cursor", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such endpoint of this agent", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn deliveries(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    path: Path<String>,
    query: QueryParams,
) -> Result<Json<WebhookAttemptPage>, ApiError> {
    let id = endpoint_id(path)?;
    let limit = query
        .limit(PageLimit::PAGE)
        .map_err(|refused| rejected([Some(refused)]))?;
    let page = state
        .services
        .webhooks
        .attempts(&agent.profile, id, query.get("cursor"), limit as usize)
        .await?;
    Ok(Json(WebhookAttemptPage {
        items: page.items.iter().map(WebhookAttemptOut::from).collect(),
        next_cursor: page.next_cursor,
    }))
}

/// Delivers again, now, every kept event of a type the endpoint wants with `seq` greater than
/// `after`, whatever became of its delivery; a delivery still waiting for its next attempt is
/// made due at once rather than queued twice.
///
/// An agent may replay an endpoint three times at once, then once a minute (429 with
/// `Retry-After` beyond).
#[utoipa::path(post, path = "/v1/webhooks/{webhook_id}/replay", tag = "webhooks", operation_id = "replay_webhook",
    security(("HTTPBearer" = [])),
    params(("webhook_id" = Uuid, Path, description = "The endpoint's id")),
    request_body = WebhookReplayRequest,
    responses(
        (status = 202, description = "Queued", body = WebhookReplayResponse),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such endpoint of this agent", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 429, description = "The endpoint's replays are spent for now, or the agent's request bodies being read reach `REQUEST_BODY_BYTES_PER_AGENT`; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = String, description = "Seconds until a replay is taken again"))),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn replay(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    path: Path<String>,
    body: JsonBody<WebhookReplayRequest>,
) -> Result<HttpResponse, ApiError> {
    let id = endpoint_id(path)?;
    let after = body.read(&agent).await?.position()?;
    let queued = state
        .services
        .webhooks
        .replay(&agent.profile, id, after)
        .await?;
    Ok(HttpResponse::Accepted().json(WebhookReplayResponse { queued }))
}
