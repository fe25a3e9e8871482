//! `/v1/agents`.

use actix_web::web::Json;
use api_types::AgentResponse;

use crate::auth::AuthenticatedAgent;
use crate::errors::ErrorBody;

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
pub async fn me(agent: AuthenticatedAgent) -> Json<AgentResponse> {
    Json(agent.profile.as_ref().into())
}
