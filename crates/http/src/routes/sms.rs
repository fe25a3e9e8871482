//! `/v1/sms`: the number, its messages, and the wait for a verification code.

use actix_web::http::header::HeaderName;
use actix_web::web::{self, Json};
use actix_web::HttpResponse;
use api_types::{
    CodeOut, CodesWaitRequest, PageLimit, PhoneNumberResponse, SmsMessageOut,
    VerificationCodeResponse, WaitForCodeRequest,
};
use app::{ChannelsWait, CodeWait, FoundCode, WaitError};

use crate::auth::AuthenticatedAgent;
use edge::Refusal;

use crate::errors::{ApiError, ErrorBody, ValidationErrorBody};
use crate::extract::{rejected, JsonBody, QueryParams};
use crate::state::ApiState;

/// Says whether `GET /v1/sms/messages` reflects the provider now (`synced`) or, the provider
/// being unreachable, only what was stored before (`stale`).
const SMS_SYNC: HeaderName = HeaderName::from_static("x-sms-sync");

/// The agent's phone number.
///
/// `null` when it has none.
#[utoipa::path(get, path = "/v1/sms/number", tag = "sms", operation_id = "get_sms_number",
    security(("HTTPBearer" = [])),
    responses(
        (status = 200, description = "The number, or null", body = Option<PhoneNumberResponse>),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn number(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
) -> Result<Json<Option<PhoneNumberResponse>>, ApiError> {
    let number = state.services.sms.number(&agent.profile);
    Ok(Json(number.map(|number| PhoneNumberResponse {
        number: number.number.as_str().to_owned(),
        country_iso2: number.country_iso2.clone(),
        provider: number.provider.clone(),
    })))
}

/// The number's messages, newest first, as a bare array.
///
/// The newest 100 messages at the provider are synced in first (stored once each, however often
/// or concurrently this runs); then `offset` and `limit` apply to the stored messages. When the
/// provider cannot be reached, the stored messages are served and `X-Sms-Sync: stale` says so
/// (`synced` otherwise).
#[utoipa::path(get, path = "/v1/sms/messages", tag = "sms", operation_id = "list_sms_messages",
    security(("HTTPBearer" = [])),
    params(
        ("limit" = Option<i64>, Query, description = "Page size; 20 when omitted", minimum = 0, maximum = 100),
        ("offset" = Option<i64>, Query, description = "Messages to skip; 0 when omitted", minimum = 0, maximum = 4294967295.0),
        ("direction" = Option<api_types::Direction>, Query, description = "`inbound` or `outbound`; both when omitted"),
    ),
    responses(
        (status = 200, description = "The messages", body = Vec<SmsMessageOut>,
            headers(("X-Sms-Sync" = String, description = "`synced`, or `stale` when the provider was unreachable"))),
        (status = 400, description = "No phone number provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn messages(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    query: QueryParams,
) -> Result<HttpResponse, ApiError> {
    // The spec sets no minimum here (it does for the inbox and intents): limit=0 is an empty page.
    let limit = query.limit(PageLimit::SMS);
    let offset = query.integer("offset", 0, 0, u32::MAX);
    let direction = query.direction();
    let (limit, offset, direction) = match (limit, offset, direction) {
        (Ok(limit), Ok(offset), Ok(direction)) => (limit, offset, direction),
        (limit, offset, direction) => {
            return Err(rejected([limit.err(), offset.err(), direction.err()]))
        }
    };
    let history = state
        .services
        .sms
        .messages(&agent.profile, direction, limit as usize, offset as usize)
        .await?;
    let sync = if history.synced { "synced" } else { "stale" };
    Ok(HttpResponse::Ok().insert_header((SMS_SYNC, sync)).json(
        history
            .messages
            .iter()
            .map(SmsMessageOut::from)
            .collect::<Vec<_>>(),
    ))
}

/// Waits for a verification code by SMS.
///
/// The newest message no wait has returned yet (of `service_name`, when given) is returned at
/// once and counts as seen; otherwise the call blocks until one arrives, on any instance, or
/// `timeout` seconds pass (408). With `request_id`, a retry returns what the first call returned,
/// and one made while the first still waits joins it.
#[utoipa::path(post, path = "/v1/sms/wait-for-code", tag = "sms", operation_id = "wait_for_sms_code",
    security(("HTTPBearer" = [])),
    request_body = WaitForCodeRequest,
    responses(
        (status = 200, description = "The code and its message", body = VerificationCodeResponse),
        (status = 400, description = "No phone number provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 408, description = "No new SMS before the timeout", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 429, description = "Too many waits of this agent at once, or its request bodies being read reach `REQUEST_BODY_BYTES_PER_AGENT`", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn wait_for_code(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<WaitForCodeRequest>,
) -> Result<Json<VerificationCodeResponse>, ApiError> {
    let wait = CodeWait::try_from(body.read(&agent).await?)?;
    let request_id = wait.request_id.clone();
    let message = state
        .services
        .codes
        .wait_for_sms(&agent.principal(), wait)
        .await?;
    Ok(Json(VerificationCodeResponse::new(&message, request_id)))
}

/// Waits for a verification code by SMS or by mail, whichever comes first.
///
/// Beyond the spec: sign-up flows send a code by SMS or by mail. Takes the body of
/// `wait-for-code` plus `channels` (`sms`, `email`, or both; every channel the agent has when
/// omitted) and answers with the newest unseen code from any of them, with its `channel` and the
/// message's id; the same seen, `request_id`, `timeout` and 408 rules.
#[utoipa::path(post, path = "/v1/codes/wait", tag = "sms", operation_id = "wait_for_code_any_channel",
    security(("HTTPBearer" = [])),
    request_body = CodesWaitRequest,
    responses(
        (status = 200, description = "The code and where it came from", body = CodeOut),
        (status = 400, description = "A channel asked for is not provisioned, or none is", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 408, description = "No new code before the timeout", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 429, description = "Too many waits of this agent at once, or its request bodies being read reach `REQUEST_BODY_BYTES_PER_AGENT`", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn wait_any_channel(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<CodesWaitRequest>,
) -> Result<Json<CodeOut>, ApiError> {
    let wait = ChannelsWait::try_from(body.read(&agent).await?)?;
    let request_id = wait.wait.request_id.clone();
    let found = state
        .services
        .codes
        .wait(&agent.principal(), wait)
        .await
        .map_err(|error| match error {
            WaitError::TimedOut => {
                Refusal::TimedOut("No new verification code arrived before the timeout".into())
            }
            other => other.into(),
        })?;
    Ok(Json(match &found {
        FoundCode::Sms(message) => CodeOut::from_sms(message, request_id),
        FoundCode::Email(message) => CodeOut::from_email(message, request_id),
    }))
}
