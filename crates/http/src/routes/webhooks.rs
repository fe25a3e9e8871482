//! Webhooks of the providers, outside `/v1` and outside agent-key auth: each proves where it
//! comes from with its signature.

use actix_web::http::header::CONTENT_TYPE;
use actix_web::web::{self, Payload};
use actix_web::{HttpRequest, HttpResponse};
use app::IngestError;
use ports::{InboundFormat, WebhookSignature};
use serde_json::json;

use crate::errors::ApiError;
use crate::extract::read_payload;
use crate::state::ApiState;

/// The largest inbound message taken: providers cap mail at 25 to 40 MB with its encoding.
const MAX_INBOUND_BYTES: usize = 40 * 1024 * 1024;

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
