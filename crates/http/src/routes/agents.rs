//! `/v1/agents`.

use actix_web::{web, HttpResponse};
use app::ProfileError;

use crate::auth::AuthenticatedAgent;
use crate::dto::AgentResponse;
use crate::errors::{ApiError, ErrorBody};
use crate::state::ApiState;

/// The calling agent with its provisioned resources; the first call to verify a key.
#[utoipa::path(
    get,
    path = "/v1/agents/me",
    tag = "agents",
    operation_id = "get_agent_me",
    security(("HTTPBearer" = [])),
    responses(
        (status = 200, description = "The authenticated agent", body = AgentResponse),
        (status = 401, description = "Missing, malformed, unknown or deactivated key", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    )
)]
pub async fn me(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
) -> Result<HttpResponse, ApiError> {
    match state.agents.profile(agent.0).await {
        Ok(profile) => Ok(HttpResponse::Ok().json(AgentResponse::from(&profile))),
        // Deleted between authentication and this read: the key no longer opens anything.
        Err(ProfileError::NotFound) => Err(ApiError::InvalidKey),
        Err(ProfileError::Store(error)) => Err(error.into()),
    }
}
