//! `/v1/agents`.

use actix_web::web::{self, Json};
use api_types::AgentResponse;
use app::PolicyUsage;

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody};
use crate::state::ApiState;

/// The calling agent with its resources: the first call to verify a key.
///
/// The wallet's spend policy carries its `usage`, as `GET /v1/wallet/policy` does.
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
    let shown = state.services.wallets.shown_policy(&agent.profile).await?;
    Ok(Json(AgentResponse::with_usage(
        &agent.profile,
        Some(&agent.key),
        shown.as_ref().map(PolicyUsage::parts),
    )))
}
