//! `/v1/webhooks`: the agent's webhook endpoints, their secrets, deliveries and replays.

use actix_web::web::{self, Json, Path};
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};
use api_types::{
    PageLimit, WebhookAttemptOut, WebhookAttemptPage, WebhookCreateRequest, WebhookOut,
    WebhookReplayRequest, WebhookReplayResponse, WebhookUpdateRequest,
};
use app::WebhookError;
use domain::commands::{CreateWebhook, UpdateWebhook};
use domain::WebhookEndpointId;
use ports::EndpointWithSecret;
use uuid::Uuid;

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody, ValidationErrorBody};
use crate::extract::{rejected, JsonBody, QueryParams};
use crate::routes::{idempotency_key, replayed_if};
use crate::state::ApiState;

/// The endpoint a path names; one that is no UUID is not found.
fn endpoint_id(path: Path<String>) -> Result<WebhookEndpointId, ApiError> {
    Uuid::try_parse(&path.into_inner())
        .map(WebhookEndpointId)
        .map_err(|_| WebhookError::NotFound.into())
}

/// Creates an endpoint; its secret is shown in this answer only.
///
/// At most 10 endpoints per agent (409 beyond). Deliveries are signed per Standard Webhooks with
/// the secret: `webhook-id`, `webhook-timestamp`, `webhook-signature`. The endpoint is the
/// key's that creates it: when the operator rotates the agent's key, it is disabled
/// (`disabled_reason` says so) until the new key enables it again. With an `Idempotency-Key`
/// header, a retry with the same body by the same agent key within 24 hours makes nothing and
/// answers the first answer again, secret included (`Idempotent-Replayed: true`); another body,
/// or a first request still in progress, is 409.
#[utoipa::path(post, path = "/v1/webhooks", tag = "webhooks", operation_id = "create_webhook",
    security(("HTTPBearer" = [])),
    request_body = WebhookCreateRequest,
    params(("Idempotency-Key" = Option<String>, Header, description = "1 to 255 visible ASCII characters, spaces only between them; a retry with the same key and body makes one endpoint",
            min_length = 1, max_length = 255, pattern = "^[!-~]([ -~]*[!-~])?$")),
    responses(
        (status = 201, description = "The endpoint, with its secret; with `Idempotent-Replayed: true` the first answer of the same idempotency key and body", body = WebhookOut,
            headers(("Idempotent-Replayed" = String, description = "`true` when the answer is an earlier request's with the same idempotency key"))),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 409, description = "The agent has 10 endpoints already, or the idempotency key was used for another body or its first request is still in progress", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 429, description = "The agent's request bodies being read reach `REQUEST_BODY_BYTES_PER_AGENT`; retry after `Retry-After`", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn create(
    request: HttpRequest,
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<WebhookCreateRequest>,
) -> Result<HttpResponse, ApiError> {
    let key = idempotency_key(&request)?;
    let command = CreateWebhook::try_from(body.read(&agent).await?)?;
    let made = state
        .services
        .webhooks
        .create(&agent.principal(), command, key)
        .await?;
    Ok(with_secret(HttpResponse::Created(), made))
}

/// An endpoint with the secret its request made, the first answer again when `replayed`.
fn with_secret(response: HttpResponseBuilder, made: EndpointWithSecret) -> HttpResponse {
    let (endpoint, secret) = made.answer;
    replayed_if(response, made.replayed).json(WebhookOut::with_secret(&endpoint, secret))
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

/// Gives the endpoint a new secret, shown in this answer only.
///
/// The one it replaces keeps signing too for 24 hours, and any older one stops: a delivery
/// carries at most two signatures.
///
/// With an `Idempotency-Key` header, a retry for the same endpoint by the same agent key within
/// 24 hours rotates nothing and answers the first answer again, its secret included
/// (`Idempotent-Replayed: true`); the key used for another endpoint, or while its first request
/// is in progress, is 409.
#[utoipa::path(post, path = "/v1/webhooks/{webhook_id}/rotate-secret", tag = "webhooks", operation_id = "rotate_webhook_secret",
    security(("HTTPBearer" = [])),
    params(
        ("webhook_id" = Uuid, Path, description = "The endpoint's id"),
        ("Idempotency-Key" = Option<String>, Header, description = "As for creating an endpoint: a retry with the same key rotates once",
            min_length = 1, max_length = 255, pattern = "^[!-~]([ -~]*[!-~])?$"),
    ),
    responses(
        (status = 200, description = "The endpoint, with its new secret; with `Idempotent-Replayed: true` the first answer of the same idempotency key", body = WebhookOut,
            headers(("Idempotent-Replayed" = String, description = "`true` when the answer is an earlier request's with the same idempotency key"))),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such endpoint of this agent", body = ErrorBody),
        (status = 409, description = "Idempotency key used for another request, or its first request is still in progress", body = ErrorBody),
        (status = 422, description = "An `Idempotency-Key` that is not one", body = ValidationErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn rotate_secret(
    request: HttpRequest,
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    path: Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = endpoint_id(path)?;
    let key = idempotency_key(&request)?;
    let rotated = state
        .services
        .webhooks
        .rotate_secret(&agent.principal(), id, key)
        .await?;
    Ok(with_secret(HttpResponse::Ok(), rotated))
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

/// Delivers the endpoint's kept events again, now.
///
/// Every kept event of a type the endpoint wants with `seq` greater than `after`, whatever
/// became of its delivery; a delivery still waiting for its next attempt is made due at once
/// rather than queued twice.
///
/// An agent may replay an endpoint three times at once, then once a minute (429 with
/// `Retry-After` beyond). With an `Idempotency-Key` header, a retry with the same endpoint and
/// body by the same agent key within 24 hours delivers nothing more, takes none of the replays
/// and answers the first count again (`Idempotent-Replayed: true`); another request under the
/// key, or while its first is in progress, is 409.
#[utoipa::path(post, path = "/v1/webhooks/{webhook_id}/replay", tag = "webhooks", operation_id = "replay_webhook",
    security(("HTTPBearer" = [])),
    params(
        ("webhook_id" = Uuid, Path, description = "The endpoint's id"),
        ("Idempotency-Key" = Option<String>, Header, description = "As for creating an endpoint: a retry with the same key and body delivers once",
            min_length = 1, max_length = 255, pattern = "^[!-~]([ -~]*[!-~])?$"),
    ),
    request_body = WebhookReplayRequest,
    responses(
        (status = 202, description = "Queued; with `Idempotent-Replayed: true` the first answer of the same idempotency key and body", body = WebhookReplayResponse,
            headers(("Idempotent-Replayed" = String, description = "`true` when the answer is an earlier request's with the same idempotency key"))),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such endpoint of this agent", body = ErrorBody),
        (status = 409, description = "Idempotency key used for another request, or its first request is still in progress", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 429, description = "The endpoint's replays are spent for now, or the agent's request bodies being read reach `REQUEST_BODY_BYTES_PER_AGENT`; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = String, description = "Seconds until a replay is taken again"))),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn replay(
    request: HttpRequest,
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    path: Path<String>,
    body: JsonBody<WebhookReplayRequest>,
) -> Result<HttpResponse, ApiError> {
    let id = endpoint_id(path)?;
    let key = idempotency_key(&request)?;
    let after = body.read(&agent).await?.position()?;
    let (queued, replayed) = state
        .services
        .webhooks
        .replay(&agent.principal(), id, after, key)
        .await?;
    Ok(replayed_if(HttpResponse::Accepted(), replayed).json(WebhookReplayResponse { queued }))
}
