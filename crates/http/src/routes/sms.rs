//! `/v1/sms`: the number, its messages, and the wait for a verification code.

use actix_web::http::header::HeaderName;
use actix_web::web::{self, Json};
use actix_web::HttpResponse;
use api_types::{
    CodeOut, CodesWaitRequest, PhoneNumberResponse, SmsMessageOut, VerificationCodeResponse,
    WaitForCodeRequest,
};
use app::{ChannelsWait, CodeChannel, CodeWait, FoundCode, SmsError, WaitError};
use domain::{check_no_nul, MAX_REQUEST_ID_CHARS, MAX_WAIT_SECS};
use serde_json::json;

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody, ValidationErrorBody, ValidationItem};
use crate::extract::{rejected, string_length, value_error, JsonBody, QueryParams};
use crate::state::ApiState;

/// Says whether `GET /v1/sms/messages` reflects the provider now (`synced`) or, the provider
/// being unreachable, only what was stored before (`stale`).
const SMS_SYNC: HeaderName = HeaderName::from_static("x-sms-sync");

impl From<SmsError> for ApiError {
    fn from(error: SmsError) -> Self {
        match error {
            SmsError::NotProvisioned(missing) => missing.into(),
            SmsError::Store(store) => store.into(),
        }
    }
}

impl From<WaitError> for ApiError {
    fn from(error: WaitError) -> Self {
        match error {
            WaitError::NotProvisioned(missing) => missing.into(),
            WaitError::TimedOut => ApiError::RequestTimeout(
                "No new SMS with a verification code arrived before the timeout".into(),
            ),
            WaitError::Revoked => ApiError::InvalidKey,
            WaitError::TooManyWaiters => ApiError::TooManyRequests {
                detail: "Too many waits for a code from this agent at once; retry later".into(),
                retry_after: std::time::Duration::from_secs(1),
            },
            WaitError::Store(store) => store.into(),
        }
    }
}

/// The agent's phone number; `null` when it has none.
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
        ("direction" = Option<String>, Query, description = "`inbound` or `outbound`; both when omitted", pattern = "^(inbound|outbound)$"),
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
    let limit = query.integer("limit", 20, 0, 100);
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

/// The wait as the use case takes it, or every field that is wrong.
fn parse_wait(body: WaitForCodeRequest) -> Result<CodeWait, ApiError> {
    wait_fields(body.service_name, body.timeout, body.request_id).map_err(rejected)
}

/// The fields every wait for a code has, or a 422 item for each that is wrong.
fn wait_fields(
    service_name: String,
    timeout: i64,
    request_id: Option<String>,
) -> Result<CodeWait, Vec<Option<ValidationItem>>> {
    let body = WaitForCodeRequest {
        service_name,
        timeout,
        request_id,
    };
    let loc = vec![json!("body"), json!("timeout")];
    let timeout = if body.timeout < 0 {
        Err(ValidationItem::new(
            "greater_than_equal",
            loc,
            "Input should be greater than or equal to 0",
            json!(body.timeout),
        )
        .with_ctx(json!({"ge": 0})))
    } else if body.timeout > i64::from(MAX_WAIT_SECS) {
        Err(ValidationItem::new(
            "less_than_equal",
            loc,
            format!("Input should be less than or equal to {MAX_WAIT_SECS}"),
            json!(body.timeout),
        )
        .with_ctx(json!({"le": MAX_WAIT_SECS})))
    } else {
        Ok(body.timeout.unsigned_abs())
    };
    let request_id = match &body.request_id {
        Some(id) => string_length("request_id", id, 0, MAX_REQUEST_ID_CHARS).and_then(|()| {
            check_no_nul(id).map_err(|refused| {
                value_error("request_id", id.as_str(), format!("request_id {refused}"))
            })
        }),
        None => Ok(()),
    };
    match (timeout, request_id) {
        (Ok(seconds), Ok(())) => Ok(CodeWait {
            service_name: body.service_name,
            timeout: std::time::Duration::from_secs(seconds),
            request_id: body.request_id,
        }),
        (timeout, request_id) => Err(vec![timeout.err(), request_id.err()]),
    }
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
        (status = 429, description = "Too many waits of this agent at once", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn wait_for_code(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<WaitForCodeRequest>,
) -> Result<Json<VerificationCodeResponse>, ApiError> {
    let wait = parse_wait(body.read().await?)?;
    let request_id = wait.request_id.clone();
    let message = state
        .services
        .codes
        .wait_for_sms(&agent.profile, wait)
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
        (status = 429, description = "Too many waits of this agent at once", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn wait_any_channel(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<CodesWaitRequest>,
) -> Result<Json<CodeOut>, ApiError> {
    let body = body.read().await?;
    let channels = body.channels.map(|names| {
        if names.is_empty() {
            // Waiting on no channel would wait for nothing until the timeout.
            return Err(ValidationItem::new(
                "too_short",
                vec![json!("body"), json!("channels")],
                "List should have at least 1 item after validation, not 0",
                json!([]),
            )
            .with_ctx(json!({"field_type": "List", "min_length": 1, "actual_length": 0})));
        }
        names
            .iter()
            .enumerate()
            .map(|(index, name)| {
                CodeChannel::parse(name).ok_or_else(|| {
                    ValidationItem::new(
                        "enum",
                        vec![json!("body"), json!("channels"), json!(index)],
                        "Input should be 'sms' or 'email'",
                        json!(name),
                    )
                    .with_ctx(json!({"expected": "'sms' or 'email'"}))
                })
            })
            .collect::<Result<Vec<_>, _>>()
    });
    let wait = wait_fields(body.service_name, body.timeout, body.request_id);
    let (wait, channels) = match (wait, channels.transpose()) {
        (Ok(wait), Ok(channels)) => (wait, channels),
        (wait, channels) => {
            let mut items = wait.err().unwrap_or_default();
            items.push(channels.err());
            return Err(rejected(items));
        }
    };
    let request_id = wait.request_id.clone();
    let found = state
        .services
        .codes
        .wait(&agent.profile, ChannelsWait { wait, channels })
        .await
        .map_err(|error| match error {
            WaitError::TimedOut => ApiError::RequestTimeout(
                "No new verification code arrived before the timeout".into(),
            ),
            other => other.into(),
        })?;
    Ok(Json(match &found {
        FoundCode::Sms(message) => CodeOut::from_sms(message, request_id),
        FoundCode::Email(message) => CodeOut::from_email(message, request_id),
    }))
}
