//! `/v1/email`: send and reply through the outbox, the inbox and single messages.

use actix_web::web::{self, Json, Path};
use actix_web::{HttpRequest, HttpResponse};
use api_types::{
    EmailInboxPage, EmailMessageOut, EmailReplyRequest, EmailSendRequest, EmailSendResponse,
};
use app::{MailPage, ReadMailError, SendMail, SendMailError};
use domain::email::{MAX_CUSTOM_HEADERS, MAX_CUSTOM_HEADER_BYTES};
use domain::{
    check_custom_header, check_custom_headers_size, check_no_nul, EmailAddress, EmailMessageRecord,
    IdempotencyKey, MAX_BODY_TEXT_BYTES, MAX_RECIPIENTS,
};
use serde_json::{json, Value};

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody, ValidationErrorBody, ValidationItem};
use crate::extract::{rejected, JsonBody, QueryParams};
use crate::rendered_pages::{PageKey, PageListing};
use crate::state::ApiState;

const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// The JSON body limit of send and reply: far above `body_text`'s own limit even with every
/// character escaped, so an over-long text is refused naming `body_text`.
const MAX_SEND_BODY_BYTES: usize = 8 * 1024 * 1024;

/// The spec's fixed wait for a throttled send.
const THROTTLE_RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

impl From<SendMailError> for ApiError {
    fn from(error: SendMailError) -> Self {
        match error {
            SendMailError::NotProvisioned(missing) => missing.into(),
            SendMailError::Category(category) => ApiError::BadRequest(format!(
                "Unsupported category {category:?}: only \"transactional\" mail can be sent \
                 (marketing is unavailable)"
            )),
            SendMailError::Unavailable(field) => {
                ApiError::BadRequest(format!("{field} is unavailable: leave it out"))
            }
            SendMailError::DomainNotVerified(domain) => ApiError::BadRequest(format!(
                "Sending domain {domain} is not verified; mail cannot be sent from it"
            )),
            SendMailError::SourceNotFound => ApiError::NotFound,
            SendMailError::NotReplyable => ApiError::BadRequest(
                "Source message is not a replyable inbound thread: only inbound mail with a \
                 sender address can be answered"
                    .into(),
            ),
            SendMailError::Throttled => ApiError::TooManyRequests {
                detail: "Email send rate exceeded for this sponsor; retry later".into(),
                retry_after: THROTTLE_RETRY_AFTER,
            },
            error @ SendMailError::IdempotencyMismatch { .. } => ApiError::key_mismatch(error),
            SendMailError::KeyInFlight => ApiError::key_in_flight(),
            SendMailError::Store(store) => store.into(),
        }
    }
}

impl From<ReadMailError> for ApiError {
    fn from(error: ReadMailError) -> Self {
        match error {
            ReadMailError::NotProvisioned(missing) => missing.into(),
            ReadMailError::InvalidCursor => ApiError::BadRequest("Invalid cursor".into()),
            ReadMailError::NotFound => ApiError::NotFound,
            ReadMailError::Store(store) => store.into(),
        }
    }
}

fn body_loc(path: &[Value]) -> Vec<Value> {
    std::iter::once(json!("body"))
        .chain(path.iter().cloned())
        .collect()
}

/// Each address of one recipient field, or an item per invalid one.
fn parse_addresses(
    field: &str,
    raw: &[String],
    failures: &mut Vec<ValidationItem>,
) -> Vec<EmailAddress> {
    raw.iter()
        .enumerate()
        .filter_map(
            |(index, candidate)| match EmailAddress::parse(candidate.trim()) {
                Ok(address) => Some(address),
                Err(error) => {
                    failures.push(ValidationItem::new(
                        "value_error",
                        body_loc(&[json!(field), json!(index)]),
                        format!("value is not a valid email address: {error}"),
                        json!(candidate),
                    ));
                    None
                }
            },
        )
        .collect()
}

fn check_body_text(text: &str) -> Option<ValidationItem> {
    if text.len() > MAX_BODY_TEXT_BYTES {
        return Some(
            ValidationItem::new(
                "value_error",
                body_loc(&[json!("body_text")]),
                format!(
                    "Value error, body_text must be at most {MAX_BODY_TEXT_BYTES} bytes of \
                     UTF-8, got {}",
                    text.len()
                ),
                // The text itself is not echoed back: it is over the limit by definition.
                json!({ "bytes": text.len() }),
            )
            .with_ctx(json!({ "max_bytes": MAX_BODY_TEXT_BYTES })),
        );
    }
    check_no_nul(text).err().map(|refused| {
        ValidationItem::new(
            "value_error",
            body_loc(&[json!("body_text")]),
            format!("Value error, body_text {refused}"),
            json!(text),
        )
    })
}

/// The `Idempotency-Key` header, or pydantic's words for what is wrong with it.
fn idempotency_key(request: &HttpRequest) -> Result<Option<IdempotencyKey>, ValidationItem> {
    let Some(raw) = request.headers().get(IDEMPOTENCY_KEY) else {
        return Ok(None);
    };
    let loc = vec![json!("header"), json!(IDEMPOTENCY_KEY)];
    let text = raw.to_str().map_err(|_| {
        ValidationItem::new(
            "value_error",
            loc.clone(),
            "Value error, the idempotency key must be visible ASCII",
            Value::Null,
        )
    })?;
    IdempotencyKey::parse(text).map(Some).map_err(|error| {
        ValidationItem::new(
            "value_error",
            loc,
            format!("Value error, {error}"),
            json!(text),
        )
    })
}

/// The send as the use case takes it, or every field that is wrong.
fn parse_send(body: EmailSendRequest, key: Option<IdempotencyKey>) -> Result<SendMail, ApiError> {
    let mut failures = Vec::new();
    if body.to.is_empty() {
        failures.push(
            ValidationItem::new(
                "too_short",
                body_loc(&[json!("to")]),
                "List should have at least 1 item after validation, not 0",
                json!([]),
            )
            .with_ctx(json!({"field_type": "List", "min_length": 1, "actual_length": 0})),
        );
    }
    let cc_raw = body.cc.unwrap_or_default();
    let bcc_raw = body.bcc.unwrap_or_default();
    let to = parse_addresses("to", &body.to, &mut failures);
    let cc = parse_addresses("cc", &cc_raw, &mut failures);
    let bcc = parse_addresses("bcc", &bcc_raw, &mut failures);
    let mut counted = 0;
    for (field, list) in [("to", &body.to), ("cc", &cc_raw), ("bcc", &bcc_raw)] {
        let before = counted;
        counted += list.len();
        if before <= MAX_RECIPIENTS && counted > MAX_RECIPIENTS {
            failures.push(
                ValidationItem::new(
                    "value_error",
                    body_loc(&[json!(field)]),
                    format!(
                        "Value error, at most {MAX_RECIPIENTS} recipients are allowed over to, \
                         cc and bcc together"
                    ),
                    json!(list),
                )
                .with_ctx(json!({ "max_recipients": MAX_RECIPIENTS })),
            );
        }
    }
    if body.subject.contains(['\r', '\n']) {
        failures.push(ValidationItem::new(
            "value_error",
            body_loc(&[json!("subject")]),
            "Value error, the subject is a header: it must not contain CR or LF",
            json!(body.subject),
        ));
    } else if let Err(refused) = check_no_nul(&body.subject) {
        failures.push(ValidationItem::new(
            "value_error",
            body_loc(&[json!("subject")]),
            format!("Value error, the subject {refused}"),
            json!(body.subject),
        ));
    }
    failures.extend(check_body_text(&body.body_text));
    let headers: Vec<(String, String)> = body.headers.unwrap_or_default().into_iter().collect();
    if let Err(refused) = check_custom_headers_size(
        headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str())),
    ) {
        failures.push(
            ValidationItem::new(
                "value_error",
                body_loc(&[json!("headers")]),
                format!("Value error, {refused}"),
                json!({ "headers": headers.len() }),
            )
            .with_ctx(json!({
                "max_headers": MAX_CUSTOM_HEADERS,
                "max_bytes": MAX_CUSTOM_HEADER_BYTES,
            })),
        );
    }
    for (name, value) in &headers {
        if let Err(refused) = check_custom_header(name, value) {
            failures.push(ValidationItem::new(
                "value_error",
                body_loc(&[json!("headers"), json!(name)]),
                format!("Value error, {refused}"),
                json!(value),
            ));
        }
    }
    if !failures.is_empty() {
        return Err(ApiError::Validation(failures));
    }
    Ok(SendMail {
        to,
        cc,
        bcc,
        subject: body.subject,
        text: body.body_text,
        headers,
        category: body.category,
        reply_to_given: body.reply_to.is_some_and(|list| !list.is_empty()),
        html_given: body.body_html.is_some_and(|html| !html.is_empty()),
        idempotency_key: key,
    })
}

fn sent(message: EmailMessageRecord, replayed: bool) -> HttpResponse {
    super::ok_replayed_if(replayed).json(EmailSendResponse {
        status: "sent".into(),
        data: message.into(),
    })
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
        (status = 422, description = "Invalid addresses, more than 20 recipients, body_text over 256 KB, CR or LF in a header, a sensitive header", body = ValidationErrorBody),
        (status = 429, description = "The sponsor's send rate is exhausted; nothing was stored", body = ErrorBody,
            headers(("Retry-After" = String, description = "Always 5"))),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn send(
    request: HttpRequest,
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<EmailSendRequest>,
) -> Result<HttpResponse, ApiError> {
    let key = idempotency_key(&request);
    let body = body.read_at_most(MAX_SEND_BODY_BYTES).await?;
    let key = key.map_err(|item| rejected([Some(item)]))?;
    let mail = parse_send(body, key)?;
    let (message, replayed) = state.services.email.send(&agent.profile, mail).await?;
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
        (status = 429, description = "The sponsor's send rate is exhausted", body = ErrorBody,
            headers(("Retry-After" = String, description = "Always 5"))),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn reply(
    request: HttpRequest,
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    source: Path<String>,
    body: JsonBody<EmailReplyRequest>,
) -> Result<HttpResponse, ApiError> {
    let key = idempotency_key(&request);
    let body = body.read_at_most(MAX_SEND_BODY_BYTES).await?;
    let key = key.map_err(|item| rejected([Some(item)]))?;
    if let Some(item) = check_body_text(&body.body_text) {
        return Err(rejected([Some(item)]));
    }
    let (message, replayed) = state
        .services
        .email
        .reply(&agent.profile, &source.into_inner(), body.body_text, key)
        .await?;
    Ok(sent(message, replayed))
}

/// The agent's inbox, newest first, a page at a time.
///
/// Ordered by `created_at` with the id as tie-breaker; pass `next_cursor` as `cursor` for the
/// next page. Bodies are cut to their first 4,096 characters here; read a message for all of it.
#[utoipa::path(get, path = "/v1/email/inbox", tag = "email", operation_id = "list_email_inbox",
    security(("HTTPBearer" = [])),
    params(
        ("limit" = Option<i64>, Query, description = "Page size; 20 when omitted", minimum = 1, maximum = 100),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
        ("direction" = Option<String>, Query, description = "`inbound` or `outbound`; both when omitted", pattern = "^(inbound|outbound)$"),
    ),
    responses(
        (status = 200, description = "One page of messages", body = EmailInboxPage),
        (status = 400, description = "No inbox, or an invalid cursor", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn inbox(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    query: QueryParams,
) -> Result<HttpResponse, ApiError> {
    let limit = query.integer("limit", 20, 1, 100);
    let direction = query.direction();
    let (limit, direction) = match (limit, direction) {
        (Ok(limit), Ok(direction)) => (limit, direction),
        (limit, direction) => return Err(rejected([limit.err(), direction.err()])),
    };
    let render = |page: MailPage| EmailInboxPage {
        items: page.items.into_iter().map(EmailMessageOut::from).collect(),
        next_cursor: page.next_cursor,
    };
    let Some(cursor) = query.get("cursor") else {
        let key = PageKey {
            agent: agent.profile.agent.id,
            listing: PageListing::Inbox(direction),
            limit,
        };
        return state
            .first_pages
            .answer(
                key,
                |held| {
                    state.services.email.inbox_first_page(
                        &agent.profile,
                        direction,
                        limit as usize,
                        held,
                    )
                },
                render,
            )
            .await;
    };
    let page = state
        .services
        .email
        .inbox(&agent.profile, direction, Some(cursor), limit as usize)
        .await?;
    Ok(HttpResponse::Ok().json(render(page)))
}

/// A message of the agent's inbox with its full body.
#[utoipa::path(get, path = "/v1/email/messages/{message_id}", tag = "email", operation_id = "get_email_message",
    security(("HTTPBearer" = [])),
    params(("message_id" = String, Path, description = "The message's id")),
    responses(
        (status = 200, description = "The message", body = EmailMessageOut),
        (status = 400, description = "No inbox provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such message in the agent's inbox", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn message(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    id: Path<String>,
) -> Result<Json<EmailMessageOut>, ApiError> {
    let message = state
        .services
        .email
        .message(&agent.profile, &id.into_inner())
        .await?;
    Ok(Json(message.into()))
}
