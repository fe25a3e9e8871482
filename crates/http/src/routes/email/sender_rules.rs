//! The inbox's sender rules: who may reach it, who may not, and how much they kept out.

use actix_web::web::{self, Json};
use api_types::{SenderRulesOut, SenderRulesRequest};
use domain::SenderRules;

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody, ValidationErrorBody};
use crate::extract::JsonBody;
use crate::state::ApiState;

/// The JSON body limit of the sender rules: two lists of 1,000 addresses of 254 characters, each
/// escaped, fit with room to spare, so an over-long list is refused naming it.
const MAX_RULES_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The agent's sender rules, and how much inbound mail they kept out.
#[utoipa::path(get, path = "/v1/email/rules", tag = "email", operation_id = "get_email_rules",
    security(("HTTPBearer" = [])),
    responses(
        (status = 200, description = "The rules; both lists empty when never set", body = SenderRulesOut),
        (status = 400, description = "No inbox provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn rules(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
) -> Result<Json<SenderRulesOut>, ApiError> {
    let view = state
        .services
        .mail
        .mailbox
        .sender_rules(&agent.profile)
        .await?;
    Ok(Json(SenderRulesOut::new(&view.rules, view.kept_out_count)))
}

/// Replaces the agent's sender rules.
///
/// With an `allow` list, inbound mail from anyone else is kept out of the inbox; mail from a
/// `block`ed sender is kept out whatever `allow` says. An allow list matches the envelope sender
/// the provider reports (`Return-Path`) where it reports one, else `From`; a block holds against
/// both. Addresses compare without case, quotes around the local part or a trailing dot on the
/// domain. Kept-out mail is counted
/// (`kept_out_count`), not stored, and no event is emitted for it. Mail already stored stays.
#[utoipa::path(put, path = "/v1/email/rules", tag = "email", operation_id = "put_email_rules",
    security(("HTTPBearer" = [])),
    request_body = SenderRulesRequest,
    responses(
        (status = 200, description = "The rules now in force", body = SenderRulesOut),
        (status = 400, description = "No inbox provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 422, description = "An entry that is neither an address nor `@domain`, or more than 1,000 in a list", body = ValidationErrorBody),
        (status = 429, description = "The agent's request bodies being read reach `REQUEST_BODY_BYTES_PER_AGENT`; retry after `Retry-After`", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn set_rules(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<SenderRulesRequest>,
) -> Result<Json<SenderRulesOut>, ApiError> {
    let rules = SenderRules::try_from(body.read_at_most(&agent, MAX_RULES_BODY_BYTES).await?)?;
    let view = state
        .services
        .mail
        .mailbox
        .set_sender_rules(&agent.profile, rules)
        .await?;
    Ok(Json(SenderRulesOut::new(&view.rules, view.kept_out_count)))
}
