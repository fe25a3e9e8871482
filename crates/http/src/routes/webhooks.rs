//! Webhooks of the providers, outside `/v1` and outside agent-key auth: each proves where it
//! comes from with its signature.

use actix_web::http::header::CONTENT_TYPE;
use actix_web::web::{self, Payload};
use actix_web::{HttpRequest, HttpResponse};
use app::{Delivered, IngestError, SmsWebhookError};
use ports::{InboundFormat, WebhookSignature};
use serde_json::json;

use crate::errors::ApiError;
use crate::extract::read_payload;
use crate::state::ApiState;

/// The largest inbound message taken: providers cap mail at 25 to 40 MB with its encoding.
const MAX_INBOUND_BYTES: usize = 40 * 1024 * 1024;

/// The empty TwiML answer Twilio expects: nothing to send back.
const EMPTY_TWIML: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response></Response>";

/// Twilio's form posts are small; a larger body is not Twilio's.
const MAX_TWILIO_BYTES: usize = 64 * 1024;

impl From<SmsWebhookError> for ApiError {
    fn from(error: SmsWebhookError) -> Self {
        match error {
            SmsWebhookError::NotConfigured => ApiError::Unavailable {
                detail: "Inbound SMS webhook is not configured",
                cause: "TWILIO_AUTH_TOKEN or SMS_PUBLIC_BASE_URL is not set".into(),
            },
            SmsWebhookError::BadSignature => {
                ApiError::Forbidden("Invalid X-Twilio-Signature".into())
            }
            missing @ SmsWebhookError::Missing(_) => ApiError::BadRequest(missing.to_string()),
            SmsWebhookError::Store(store) => store.into(),
        }
    }
}

impl From<IngestError> for ApiError {
    fn from(error: IngestError) -> Self {
        match error {
            IngestError::NotConfigured => ApiError::Unavailable {
                detail: "Inbound email webhook is not configured",
                cause: "EMAIL_WEBHOOK_SECRETS is not set".into(),
            },
            IngestError::Signature(refused) => {
                ApiError::Unauthorized(format!("Invalid webhook signature: {refused}"))
            }
            IngestError::Unreadable(unreadable) => ApiError::BadRequest(unreadable.to_string()),
            IngestError::Store(store) => store.into(),
        }
    }
}

fn header<'r>(request: &'r HttpRequest, name: &str) -> &'r str {
    request
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
}

/// Inbound mail from the email provider, signed per Standard Webhooks (`webhook-id`,
/// `webhook-timestamp`, `webhook-signature`). The body is the provider's JSON event
/// (`Content-Type: application/json`) or a raw RFC 5322 message (any other type). 200 when the
/// mail was stored (or had been: a redelivery stores nothing twice), 202 when it is addressed to
/// no inbox of this service (logged and dropped, so the provider does not retry), 401 when the
/// signature is missing, wrong or older than five minutes.
pub async fn inbound_email(
    request: HttpRequest,
    state: web::Data<ApiState>,
    payload: Payload,
) -> Result<HttpResponse, ApiError> {
    let body = read_payload(payload.into_inner(), MAX_INBOUND_BYTES).await?;
    let signature = WebhookSignature {
        id: header(&request, "webhook-id"),
        timestamp: header(&request, "webhook-timestamp"),
        signatures: header(&request, "webhook-signature"),
    };
    let json = header(&request, CONTENT_TYPE.as_str())
        .split(';')
        .next()
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"));
    let format = match json {
        true => InboundFormat::ProviderJson,
        false => InboundFormat::Raw,
    };
    let report = state
        .email
        .receive_webhook(signature, format, &body)
        .await?;
    let stored: Vec<String> = report.stored.iter().map(|m| m.id.to_string()).collect();
    if stored.is_empty() && report.duplicates == 0 {
        return Ok(HttpResponse::Accepted().json(json!({
            "status": "ignored",
            "detail": "No inbox of this service is addressed by the message",
        })));
    }
    Ok(HttpResponse::Ok().json(json!({
        "status": "stored",
        "stored": stored,
        "duplicates": report.duplicates,
    })))
}

/// Inbound SMS from Twilio: form-encoded, signed with `X-Twilio-Signature` over the public URL
/// (`SMS_PUBLIC_BASE_URL` and the path) and the sorted parameters; a bad signature is 403.
/// Stored once per `MessageSid` and routed by `To`; answered with empty TwiML, also for a number
/// that is not ours (logged), so Twilio does not retry.
pub async fn twilio_sms(
    request: HttpRequest,
    state: web::Data<ApiState>,
    payload: Payload,
) -> Result<HttpResponse, ApiError> {
    let body = read_payload(payload.into_inner(), MAX_TWILIO_BYTES).await?;
    let params: Vec<(String, String)> = serde_urlencoded::from_bytes(&body)
        .map_err(|error| ApiError::BadRequest(format!("The body is not a form: {error}")))?;
    let path_and_query = request
        .uri()
        .path_and_query()
        .map_or(request.path(), |path| path.as_str());
    let delivered = state
        .sms
        .receive_webhook(
            path_and_query,
            &params,
            header(&request, "x-twilio-signature"),
        )
        .await?;
    if delivered == Delivered::Unrouted {
        tracing::info!("Twilio delivered an SMS for a number that is not ours");
    }
    Ok(HttpResponse::Ok()
        .content_type("text/xml; charset=utf-8")
        .body(EMPTY_TWIML))
}
