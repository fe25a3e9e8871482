//! Webhooks of the providers, outside `/v1` and outside agent-key auth: each proves where it
//! comes from with its signature. What a provider's webhook says (its headers, signature scheme
//! and fields) is read by the channel's adapter behind its port; here a request becomes a
//! `ProviderWebhookRequest`, read within bounds, and the outcome a status.

use std::time::Duration;

use actix_web::web::{self, Payload};
use actix_web::{HttpRequest, HttpResponse};
use app::{Delivered, IngestError, SmsWebhookError};
use ports::{ProviderWebhookHeaders, ProviderWebhookRefusal, ProviderWebhookRequest};
use serde_json::json;
use tokio::sync::{Semaphore, SemaphorePermit};

use edge::Refusal;

use crate::errors::ApiError;
use crate::extract::body_refused;
use crate::state::ApiState;

/// The largest inbound message taken: providers cap mail at 25 to 40 MB with its encoding.
const MAX_INBOUND_BYTES: usize = 40 * 1024 * 1024;

/// The empty TwiML answer Twilio expects: nothing to send back.
const EMPTY_TWIML: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response></Response>";

/// Twilio's form posts are small; a larger body is not Twilio's.
const MAX_TWILIO_BYTES: usize = 64 * 1024;

/// Bodies of one webhook read and handled at once, the rest waiting their turn: what the bodies
/// of requests not yet verified can hold is this many times their largest size.
#[derive(Debug)]
pub struct WebhookGate {
    bodies: Semaphore,
    /// How long a request waits for its turn before it is answered 429.
    wait: Duration,
    /// How long the body may take to arrive once its turn came.
    read_within: Duration,
}

impl WebhookGate {
    pub fn new(at_once: usize, wait: Duration, read_within: Duration) -> Self {
        Self {
            bodies: Semaphore::new(at_once),
            wait,
            read_within,
        }
    }

    /// The gate of inbound mail: four bodies of up to 40 MiB at once, each to arrive within a
    /// minute (0.7 MB/s).
    pub fn inbound_mail() -> Self {
        Self::new(4, Duration::from_secs(10), Duration::from_secs(60))
    }

    /// The gate of Twilio's webhook: small forms, many at once.
    pub fn twilio() -> Self {
        Self::new(64, Duration::from_secs(10), Duration::from_secs(10))
    }

    /// A turn to read and handle one body: 429 when none came within `wait`; the sender (a
    /// provider) retries.
    async fn turn(&self) -> Result<SemaphorePermit<'_>, ApiError> {
        match tokio::time::timeout(self.wait, self.bodies.acquire()).await {
            Ok(Ok(permit)) => Ok(permit),
            Ok(Err(_)) | Err(_) => Err(Refusal::TooManyRequests {
                detail: "Too many webhooks are being received at once; retry later".into(),
                retry_after: Duration::from_secs(5),
            }
            .into()),
        }
    }

    /// The body, at most `max_bytes` of it, read within `read_within`: 408 otherwise, the
    /// connection closed.
    async fn read(
        &self,
        payload: actix_web::dev::Payload,
        max_bytes: usize,
    ) -> Result<Vec<u8>, ApiError> {
        let limits = edge::BodyLimits {
            max_bytes,
            within: self.read_within,
        };
        edge::read_body(payload, None, limits, None)
            .await
            .map(Vec::from)
            .map_err(body_refused)
    }
}

impl From<SmsWebhookError> for ApiError {
    fn from(error: SmsWebhookError) -> Self {
        match error {
            SmsWebhookError::NotConfigured => Refusal::Unavailable {
                detail: "Inbound SMS webhook is not configured",
                cause: "TWILIO_AUTH_TOKEN or SMS_PUBLIC_BASE_URL is not set".into(),
            }
            .into(),
            SmsWebhookError::Refused(ProviderWebhookRefusal::Signature(detail)) => {
                Refusal::Forbidden(detail).into()
            }
            SmsWebhookError::Refused(ProviderWebhookRefusal::Malformed(detail)) => {
                Refusal::BadRequest(detail).into()
            }
            SmsWebhookError::Store(store) => store.into(),
        }
    }
}

impl From<IngestError> for ApiError {
    fn from(error: IngestError) -> Self {
        match error {
            IngestError::NotConfigured => Refusal::Unavailable {
                detail: "Inbound email webhook is not configured",
                cause: "EMAIL_WEBHOOK_SECRETS is not set".into(),
            }
            .into(),
            IngestError::Refused(ProviderWebhookRefusal::Signature(detail)) => {
                ApiError::Unauthorized(detail)
            }
            IngestError::Refused(ProviderWebhookRefusal::Malformed(detail)) => {
                Refusal::BadRequest(detail).into()
            }
            IngestError::Unreadable(unreadable) => {
                Refusal::BadRequest(unreadable.to_string()).into()
            }
            IngestError::Store(store) => store.into(),
        }
    }
}

/// The request's headers whose values are text (no provider's header is anything else).
fn webhook_headers(request: &HttpRequest) -> ProviderWebhookHeaders {
    ProviderWebhookHeaders::new(request.headers().iter().filter_map(|(name, value)| {
        let value = value.to_str().ok()?;
        Some((name.as_str().to_owned(), value.to_owned()))
    }))
}

/// The request once its body is read: what the adapter behind a webhook's port reads.
fn webhook_request(
    request: &HttpRequest,
    headers: ProviderWebhookHeaders,
    body: Vec<u8>,
) -> ProviderWebhookRequest {
    let path_and_query = request
        .uri()
        .path_and_query()
        .map_or(request.path(), |path| path.as_str());
    ProviderWebhookRequest {
        path_and_query: path_and_query.to_owned(),
        headers,
        body,
    }
}

/// Inbound mail from the email provider, signed per Standard Webhooks. The body is the
/// provider's JSON event (`Content-Type: application/json`) or a raw RFC 5322 message (any
/// other type). 200 when the mail was stored (or had been: a redelivery stores nothing twice),
/// 202 when it is addressed to no inbox of this service (logged and dropped, so the provider does
/// not retry), 401 when the signature is missing, wrong or older than five minutes, 400 when the
/// mail cannot be read. Headers that could never carry a valid signature are refused before the
/// body is read; the body is then read in its turn (`WebhookGate`), within a deadline.
pub async fn inbound_email(
    request: HttpRequest,
    state: web::Data<ApiState>,
    payload: Payload,
) -> Result<HttpResponse, ApiError> {
    let headers = webhook_headers(&request);
    state.services.mail.intake.check_webhook(&headers)?;
    let _turn = state.inbound_mail_gate.turn().await?;
    let body = state
        .inbound_mail_gate
        .read(payload.into_inner(), MAX_INBOUND_BYTES)
        .await?;
    let report = state
        .services
        .mail
        .intake
        .receive_webhook(webhook_request(&request, headers, body))
        .await?;
    let stored: Vec<String> = report.stored.iter().map(|m| m.id.to_string()).collect();
    if stored.is_empty() && report.duplicates == 0 && report.kept_out == 0 {
        return Ok(HttpResponse::Accepted().json(json!({
            "status": "ignored",
            "detail": "No inbox of this service is addressed by the message",
        })));
    }
    Ok(HttpResponse::Ok().json(json!({
        "status": "stored",
        "stored": stored,
        "duplicates": report.duplicates,
        "kept_out": report.kept_out,
    })))
}

/// Inbound SMS from Twilio: a form signed over the public URL (`SMS_PUBLIC_BASE_URL` and the
/// path) and its parameters; a bad signature is 403 (one that could not be a signature, before
/// the body is read), a form Twilio does not post 400. Stored once per message id and routed by
/// its recipient; answered with empty TwiML, also for a number that is not ours (logged), so
/// Twilio does not retry.
pub async fn twilio_sms(
    request: HttpRequest,
    state: web::Data<ApiState>,
    payload: Payload,
) -> Result<HttpResponse, ApiError> {
    let headers = webhook_headers(&request);
    state.services.sms.check_webhook(&headers)?;
    let _turn = state.twilio_gate.turn().await?;
    let body = state
        .twilio_gate
        .read(payload.into_inner(), MAX_TWILIO_BYTES)
        .await?;
    let delivered = state
        .services
        .sms
        .receive_webhook(webhook_request(&request, headers, body))
        .await?;
    if delivered == Delivered::Unrouted {
        tracing::info!("Twilio delivered an SMS for a number that is not ours");
    }
    Ok(HttpResponse::Ok()
        .content_type("text/xml; charset=utf-8")
        .body(EMPTY_TWIML))
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::dev::Payload;
    use actix_web::web::Bytes;
    use futures_util::stream;

    fn gate() -> WebhookGate {
        WebhookGate::new(1, Duration::from_millis(50), Duration::from_millis(50))
    }

    #[tokio::test]
    async fn a_body_waits_for_its_turn_and_is_turned_away_when_none_comes() {
        let gate = gate();
        let first = gate.turn().await.expect("a turn");
        assert!(matches!(
            gate.turn().await,
            Err(ApiError::Refused(Refusal::TooManyRequests { .. }))
        ));
        drop(first);
        assert!(gate.turn().await.is_ok(), "a turn freed is taken again");
    }

    #[tokio::test]
    async fn a_body_that_does_not_arrive_in_time_is_408() {
        let never: Payload = Payload::from(Box::pin(stream::pending::<
            Result<Bytes, actix_web::error::PayloadError>,
        >())
            as std::pin::Pin<Box<dyn futures_util::Stream<Item = _>>>);
        assert!(matches!(
            gate().read(never, 10).await,
            Err(ApiError::Refused(Refusal::TimedOut(_)))
        ));
    }
}
