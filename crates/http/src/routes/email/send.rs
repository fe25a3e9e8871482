//! Sending through the outbox: a new message, a reply in its thread, a forward.

use actix_web::web::{self, Path};
use actix_web::{HttpRequest, HttpResponse};
use api_types::{
    EmailForward, EmailForwardRequest, EmailReply, EmailReplyRequest, EmailSend, EmailSendRequest,
    EmailSendResponse, IDEMPOTENCY_KEY_HEADER,
};
use app::{ForwardMail, ReplyMail, SendMail};
use domain::EmailMessageRecord;

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody, ValidationErrorBody};
use crate::extract::JsonBody;
use crate::state::ApiState;

/// The JSON body limit of send, reply and forward: 10 MiB of attachments in base64 (13.4 MiB)
/// beside a `body_text` at its limit, so an over-long text or attachment is refused naming it.
const MAX_SEND_BODY_BYTES: usize = domain::MAX_REQUEST_BODY_BYTES;

/// The `Idempotency-Key` header's bytes, when the request has one.
fn idempotency_key(request: &HttpRequest) -> Option<&[u8]> {
    request
        .headers()
        .get(IDEMPOTENCY_KEY_HEADER)
        .map(|value| value.as_bytes())
}

fn sent(message: EmailMessageRecord, replayed: bool) -> HttpResponse {
    crate::routes::ok_replayed_if(replayed).json(EmailSendResponse::from(message))
}

/// Sends a message from the agent's inbox.
///
/// The message is stored `queued` before the answer; a background job hands it to the email
/// provider and retries while the provider is unavailable, so an accepted message is never lost.
/// Only `transactional` mail; `reply_to` and `body_html` are unavailable. The sponsor's agents
/// share a send rate: beyond it the answer is 429 with `Retry-After: 5` and nothing is stored.
/// With an `Idempotency-Key` header, a retry with the same body within 24 hours returns the
/// original message (`Idempotent-Replayed: true`); another body, or a first request still in
/// progress, is 409.
#[utoipa::path(post, path = "/v1/email/send", tag = "email", operation_id = "send_email",
    security(("HTTPBearer" = [])),
    request_body = EmailSendRequest,
    params(("Idempotency-Key" = Option<String>, Header, description = "1 to 255 visible ASCII characters, spaces only between them; a retry with the same key and body never mails twice",
        min_length = 1, max_length = 255, pattern = "^[!-~]([ -~]*[!-~])?$")),
    responses(
        (status = 200, description = "Accepted: `data.status` is `queued`", body = EmailSendResponse,
            headers(("Idempotent-Replayed" = String, description = "`true` when the message was made by an earlier request with the same idempotency key"))),
        (status = 400, description = "No inbox, an unsupported category, `reply_to` or `body_html` given, or an unverified sending domain", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 409, description = "Idempotency key reused with another body, or its first request is still in progress", body = ErrorBody),
        (status = 422, description = "Invalid addresses, more than 20 recipients, body_text over 256 KB, CR or LF in a header, a sensitive header, more than 10 attachments or over 10 MiB of them, an attachment's invalid name, type or base64, a body over 16 MiB", body = ValidationErrorBody),
        (status = 429, description = "The sponsor's send rate is exhausted, or the agent's request bodies being read reach `REQUEST_BODY_BYTES_PER_AGENT`; nothing was stored", body = ErrorBody,
            headers(("Retry-After" = String, description = "5 for the send rate; 1 for request bodies"))),
        (status = 503, description = "The database, or the object store that keeps attachments, is unavailable", body = ErrorBody),
    ))]
pub async fn send(
    request: HttpRequest,
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<EmailSendRequest>,
) -> Result<HttpResponse, ApiError> {
    let body = body.read_at_most(&agent, MAX_SEND_BODY_BYTES).await?;
    let mail = SendMail::try_from(EmailSend {
        body,
        idempotency_key: idempotency_key(&request),
    })?;
    let (message, replayed) = state
        .services
        .mail
        .outbound
        .send(&agent.principal(), mail)
        .await?;
    Ok(sent(message, replayed))
}

/// Replies to an inbound message, in its thread.
///
/// Goes to the original sender, with the subject prefixed `Re:` (once), `In-Reply-To` and
/// `References` taken from the original, and the original's `thread_id`. Same outbox, throttle
/// and `Idempotency-Key` rules as a send.
#[utoipa::path(post, path = "/v1/email/reply/{message_id}", tag = "email", operation_id = "reply_email",
    security(("HTTPBearer" = [])),
    request_body = EmailReplyRequest,
    params(
        ("message_id" = String, Path, description = "An inbound message of the agent's inbox"),
        ("Idempotency-Key" = Option<String>, Header, description = "As for a send",
            min_length = 1, max_length = 255, pattern = "^[!-~]([ -~]*[!-~])?$"),
    ),
    responses(
        (status = 200, description = "Accepted: `data.status` is `queued`", body = EmailSendResponse),
        (status = 400, description = "No inbox, the source is not a replyable inbound message, or an unverified sending domain", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such message in the agent's inbox", body = ErrorBody),
        (status = 409, description = "Idempotency key conflict", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 429, description = "The sponsor's send rate is exhausted, or the agent's request bodies being read reach `REQUEST_BODY_BYTES_PER_AGENT`", body = ErrorBody,
            headers(("Retry-After" = String, description = "5 for the send rate; 1 for request bodies"))),
        (status = 503, description = "The database, or the object store that keeps attachments, is unavailable", body = ErrorBody),
    ))]
pub async fn reply(
    request: HttpRequest,
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    source: Path<String>,
    body: JsonBody<EmailReplyRequest>,
) -> Result<HttpResponse, ApiError> {
    let body = body.read_at_most(&agent, MAX_SEND_BODY_BYTES).await?;
    let reply = ReplyMail::try_from(EmailReply {
        body,
        idempotency_key: idempotency_key(&request),
    })?;
    let (message, replayed) = state
        .services
        .mail
        .outbound
        .reply(&agent.principal(), &source.into_inner(), reply)
        .await?;
    Ok(sent(message, replayed))
}

/// Forwards a message of the inbox to new recipients.
///
/// A new outbound message in a thread of its own: the subject prefixed `Fwd:` (once),
/// `body_text` above the original quoted under a `Forwarded message` line (its sender, date,
/// subject, recipients and text), and the original's stored attachments attached, then those
/// given. Same outbox, throttle and `Idempotency-Key` rules as a send.
#[utoipa::path(post, path = "/v1/email/forward/{message_id}", tag = "email", operation_id = "forward_email",
    security(("HTTPBearer" = [])),
    request_body = EmailForwardRequest,
    params(
        ("message_id" = String, Path, description = "A message of the agent's inbox, of either direction"),
        ("Idempotency-Key" = Option<String>, Header, description = "As for a send",
            min_length = 1, max_length = 255, pattern = "^[!-~]([ -~]*[!-~])?$"),
    ),
    responses(
        (status = 200, description = "Accepted: `data.status` is `queued`", body = EmailSendResponse,
            headers(("Idempotent-Replayed" = String, description = "`true` when the message was made by an earlier request with the same idempotency key"))),
        (status = 400, description = "No inbox, or an unverified sending domain", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such message in the agent's inbox", body = ErrorBody),
        (status = 409, description = "Idempotency key conflict", body = ErrorBody),
        (status = 422, description = "Request validation failed, as for a send", body = ValidationErrorBody),
        (status = 429, description = "The sponsor's send rate is exhausted, or the agent's request bodies being read reach `REQUEST_BODY_BYTES_PER_AGENT`", body = ErrorBody,
            headers(("Retry-After" = String, description = "5 for the send rate; 1 for request bodies"))),
        (status = 503, description = "The database, or the object store that keeps attachments, is unavailable", body = ErrorBody),
    ))]
pub async fn forward(
    request: HttpRequest,
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    source: Path<String>,
    body: JsonBody<EmailForwardRequest>,
) -> Result<HttpResponse, ApiError> {
    let body = body.read_at_most(&agent, MAX_SEND_BODY_BYTES).await?;
    let forward = ForwardMail::try_from(EmailForward {
        body,
        idempotency_key: idempotency_key(&request),
    })?;
    let (message, replayed) = state
        .services
        .mail
        .outbound
        .forward(&agent.principal(), &source.into_inner(), forward)
        .await?;
    Ok(sent(message, replayed))
}
