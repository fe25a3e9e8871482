//! `/v1/agents`.

use actix_web::web::{self, Json};
use api_types::AgentResponse;
use app::ProfileError;

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody};
use crate::state::ApiState;

impl From<ProfileError> for ApiError {
    fn from(error: ProfileError) -> Self {
        match error {
            // Deleted between authentication and this read: the key no longer opens anything.
            ProfileError::NotFound => ApiError::InvalidKey,
            ProfileError::Store(store) => store.into(),
        }
    }
}

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
) -> Result<Json<AgentResponse>, ApiError> {
    Ok(Json((&state.agents.profile(agent.0).await?).into()))
}
