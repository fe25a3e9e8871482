//! `/v1/keys`: the agent's keys, made by its own keys for its sub-agents (the keys contract).

use actix_web::web::{self, Json, Path};
use actix_web::HttpResponse;
use api_types::{KeyCreateRequest, KeyCreatedOut, KeyCreation, KeyListOut, KeyOut};
use app::KeyError;
use domain::keys::KeyId;

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody, ValidationErrorBody};
use crate::extract::JsonBody;
use crate::state::ApiState;

/// Makes a key from the one the request is made with: a subset of its scopes (`agent:read` is
/// always added), expiring no later than it (at its expiry when `expires_in_seconds` is
/// omitted). The new `key` is shown in this answer only.
///
/// At most 50 live keys per agent, the first key included (409 beyond); the first key is depth 0
/// and a key of depth 4 cannot make another (422). A scope the key does not hold, or a lifetime
/// past its own, is a 422 naming it.
#[utoipa::path(post, path = "/v1/keys", tag = "keys", operation_id = "create_key",
    security(("HTTPBearer" = [])),
    request_body = KeyCreateRequest,
    responses(
        (status = 201, description = "The key, shown this once", body = KeyCreatedOut),
        (status = 401, description = "Invalid or expired agent key", body = ErrorBody),
        (status = 409, description = "The agent holds 50 live keys", body = ErrorBody),
        (status = 422, description = "A scope the key does not hold, a lifetime past its own, a chain of 4 keys, or request validation failed", body = ValidationErrorBody),
        (status = 429, description = "The agent's request bodies being read reach `REQUEST_BODY_BYTES_PER_AGENT`; retry after `Retry-After`", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn create(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<KeyCreateRequest>,
) -> Result<HttpResponse, ApiError> {
    let asked = KeyCreation::try_from(body.read(&agent).await?)?;
    let made = state
        .services
        .keys
        .delegate(&agent.principal(), asked.label, asked.request)
        .await?;
    Ok(HttpResponse::Created().json(KeyCreatedOut::new(&made.key, &made.record)))
}

/// The agent's live keys, oldest first, without their secrets: the first key, the keys made from
/// it and those an operator made.
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

/// Revokes the key and every key made from it, directly or not, on every instance at once. A
/// key may revoke itself and the keys made from it; any other id is not found.
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
