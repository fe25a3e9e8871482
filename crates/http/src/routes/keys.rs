//! `/v1/keys`: the agent's keys, made by its own keys for its sub-agents (the keys contract).

use actix_web::web::{self, Json, Path};
use actix_web::{HttpRequest, HttpResponse};
use api_types::{KeyCreateRequest, KeyCreatedOut, KeyCreation, KeyListOut, KeyOut};
use app::{KeyError, KeyedRequest};
use domain::keys::KeyId;
use domain::AgentKey;
use edge::Refusal;

use super::{idempotency_key, replayed_if};
use crate::auth::{bearer_token, AuthenticatedAgent};
use crate::errors::{ApiError, ErrorBody, ValidationErrorBody};
use crate::extract::JsonBody;
use crate::state::ApiState;

/// Makes a narrower key from the one the request is made with.
///
/// The new key holds a subset of its scopes (`agent:read` is always added) and expires no later
/// than it (at its expiry when `expires_in_seconds` is omitted). The new `key` is shown in this
/// answer only.
///
/// At most 50 live keys per agent, the first key included (409 beyond); the first key is depth 0
/// and a key of depth 4 cannot make another (422). A scope the key does not hold, or a lifetime
/// past its own, is a 422 naming it.
///
/// With an `Idempotency-Key` header, a retry with the same key, body and agent key within 24
/// hours answers the key made first, `Idempotent-Replayed: true` (its secret is derived again
/// from the agent key that asks, never stored); another body is a 409.
#[utoipa::path(post, path = "/v1/keys", tag = "keys", operation_id = "create_key",
    security(("HTTPBearer" = [])),
    request_body = KeyCreateRequest,
    params(("Idempotency-Key" = Option<String>, Header, description = "1 to 255 visible ASCII characters, spaces only between them; a retry with the same key and body makes one key",
            min_length = 1, max_length = 255, pattern = "^[!-~]([ -~]*[!-~])?$")),
    responses(
        (status = 201, description = "The key, shown this once; with `Idempotent-Replayed: true` the first answer of the same idempotency key and body", body = KeyCreatedOut,
            headers(("Idempotent-Replayed" = String, description = "`true` when the answer is an earlier request's with the same idempotency key"))),
        (status = 401, description = "Invalid or expired agent key", body = ErrorBody),
        (status = 409, description = "The agent holds 50 live keys, or the idempotency key was used for another body or its first request is still in progress", body = ErrorBody),
        (status = 422, description = "A scope the key does not hold, a lifetime past its own, a chain of 4 keys, or request validation failed", body = ValidationErrorBody),
        (status = 429, description = "The agent's request bodies being read reach `REQUEST_BODY_BYTES_PER_AGENT`; retry after `Retry-After`", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn create(
    request: HttpRequest,
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<KeyCreateRequest>,
) -> Result<HttpResponse, ApiError> {
    let keyed = idempotency_key(&request)?
        .map(|key| {
            // The key `require_scope` authenticated this request with.
            let presented = bearer_token(&request)
                .and_then(|presented| AgentKey::parse(&presented).ok())
                .ok_or(Refusal::InvalidKey)?;
            Ok::<_, Refusal>(KeyedRequest { key, presented })
        })
        .transpose()?;
    let asked = KeyCreation::try_from(body.read(&agent).await?)?;
    let made = state
        .services
        .keys
        .delegate(&agent.principal(), asked.label, asked.request, keyed)
        .await?;
    Ok(replayed_if(HttpResponse::Created(), made.replayed)
        .json(KeyCreatedOut::new(&made.key, &made.record)))
}

/// The agent's live keys, oldest first, without their secrets.
///
/// The first key, the keys made from it and those an operator made.
#[utoipa::path(get, path = "/v1/keys", tag = "keys", operation_id = "list_keys",
    security(("HTTPBearer" = [])),
    responses(
        (status = 200, description = "The live keys", body = KeyListOut),
        (status = 401, description = "Invalid or expired agent key", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn list(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
) -> Result<Json<KeyListOut>, ApiError> {
    let keys = state.services.keys.live(agent.profile.agent.id).await?;
    Ok(Json(KeyListOut {
        items: keys.iter().map(KeyOut::from).collect(),
    }))
}

/// Revokes a key and every key made from it.
///
/// Every key made from it, directly or not, stops working on every instance at once. A key may
/// revoke itself and the keys made from it; any other id is not found.
#[utoipa::path(delete, path = "/v1/keys/{key_id}", tag = "keys", operation_id = "revoke_key",
    security(("HTTPBearer" = [])),
    params(("key_id" = String, Path, description = "The key's id: `key_` and 26 characters")),
    responses(
        (status = 204, description = "Revoked, with the keys made from it"),
        (status = 401, description = "Invalid or expired agent key", body = ErrorBody),
        (status = 404, description = "No key of this id that this key made or is", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn revoke(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    path: Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id: KeyId = path
        .into_inner()
        .parse()
        .map_err(|_| ApiError::from(KeyError::NotFound))?;
    state.services.keys.revoke(&agent.principal(), id).await?;
    Ok(HttpResponse::NoContent().finish())
}
