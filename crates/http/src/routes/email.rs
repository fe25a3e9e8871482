//! `/v1/email`: send and reply through the outbox, the inbox, single messages and their
//! attachments.

use std::time::Duration;

use actix_web::http::header::{self, HeaderValue};
use actix_web::web::{self, Bytes, Json, Path};
use actix_web::{HttpRequest, HttpResponse};
use api_types::{search_query, RequestPart};
use api_types::{
    EmailForward, EmailForwardRequest, EmailInboxPage, EmailMessageOut, EmailReply,
    EmailReplyRequest, EmailSend, EmailSendRequest, EmailSendResponse, PageLimit, SendStatus,
    SenderRulesOut, SenderRulesRequest, ThreadDetailOut, ThreadOut, ThreadPageOut,
    IDEMPOTENCY_KEY_HEADER,
};
use app::{ForwardMail, MailPage, ReplyMail, SendMail};
use domain::{content_disposition, download_content_type, EmailMessageRecord, SenderRules};
use futures_util::TryStreamExt;
use tokio::sync::mpsc;

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody, ValidationErrorBody};
use crate::extract::{rejected, JsonBody, QueryParams};
use crate::rendered_pages::{PageKey, PageListing};
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
    super::ok_replayed_if(replayed).json(EmailSendResponse {
        status: SendStatus::Sent,
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
        .send(&agent.profile, mail)
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
        .reply(&agent.profile, &source.into_inner(), reply)
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
        .forward(&agent.profile, &source.into_inner(), forward)
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
        ("direction" = Option<api_types::Direction>, Query, description = "`inbound` or `outbound`; both when omitted"),
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
    let limit = query.limit(PageLimit::PAGE);
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
                    state.services.mail.mailbox.inbox_first_page(
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
        .mail
        .mailbox
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
        .mail
        .mailbox
        .message(&agent.profile, &id.into_inner())
        .await?;
    Ok(Json(message.into()))
}

/// An attachment of a message of the agent's inbox: its bytes, streamed.
///
/// Served with the stored `Content-Type` (or `application/octet-stream` when absent or not a
/// valid media type), as an attachment to save (`Content-Disposition` with the name made safe:
/// its last path segment, without control characters or marks that reorder text), never to
/// render (`X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox`). The `ETag` is
/// the SHA-256 of the bytes; `If-None-Match` with it answers 304.
#[utoipa::path(get, path = "/v1/email/messages/{message_id}/attachments/{attachment_id}",
    tag = "email", operation_id = "get_email_attachment",
    security(("HTTPBearer" = [])),
    params(
        ("message_id" = String, Path, description = "A message of the agent's inbox"),
        ("attachment_id" = String, Path, description = "The `id` of one of its `attachments`, e.g. `att_1`"),
        ("If-None-Match" = Option<String>, Header, description = "An `ETag` this attachment was served with"),
    ),
    responses(
        (status = 200, description = "The attachment's bytes", content_type = "application/octet-stream", body = Vec<u8>,
            headers(
                ("Content-Type" = String, description = "The stored type, or `application/octet-stream`"),
                ("Content-Disposition" = String, description = "`attachment; filename*=UTF-8''...`"),
                ("Content-Length" = u64, description = "The attachment's size"),
                ("ETag" = String, description = "The SHA-256 of the bytes, quoted"),
                ("X-Content-Type-Options" = String, description = "`nosniff`"),
            )),
        (status = 304, description = "`If-None-Match` named the current `ETag`"),
        (status = 400, description = "No inbox provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such message in the agent's inbox, or no such attachment in it", body = ErrorBody),
        (status = 410, description = "The attachment is listed but its bytes were not stored (`stored: false`)", body = ErrorBody),
        (status = 429, description = "The agent has `EMAIL_ATTACHMENT_DOWNLOADS_PER_AGENT` (8) downloads under way; retry after `Retry-After`", body = ErrorBody),
        (status = 503, description = "The database, or the object store that keeps attachments, is unavailable", body = ErrorBody),
    ))]
pub async fn attachment(
    request: HttpRequest,
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    ids: Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (message_id, attachment_id) = ids.into_inner();
    let download = state
        .services
        .mail
        .mailbox
        .attachment(&agent.profile, &message_id, &attachment_id)
        .await?;
    let etag = download.meta.etag().unwrap_or_default();
    // If-None-Match compares weakly: `W/"…"` names the same bytes as `"…"`.
    let not_modified = request
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|tags| {
            tags.split(',')
                .map(str::trim)
                .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
        });
    if not_modified {
        return Ok(HttpResponse::NotModified()
            .insert_header((header::ETAG, etag))
            .finish());
    }
    let content_type = download_content_type(&download.meta.content_type);
    let content_type = HeaderValue::from_str(content_type)
        .unwrap_or(HeaderValue::from_static(domain::attachments::OCTET_STREAM));
    let disposition = content_disposition(download.meta.filename.as_deref());
    let size = download.meta.size;
    let (buffer, taken) = mpsc::channel(1);
    actix_web::rt::spawn(pump_pieces(download, buffer));
    let pieces = futures_util::stream::unfold(taken, |mut taken| async move {
        taken
            .recv()
            .await
            .map(|piece| (Ok::<_, std::convert::Infallible>(piece), taken))
    });
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, content_type))
        .insert_header((header::CONTENT_DISPOSITION, disposition))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CONTENT_SECURITY_POLICY, "sandbox"))
        .insert_header((header::ETAG, etag))
        .no_chunking(size)
        .streaming(pieces))
}

/// How long a download waits for its reader to take a piece before it is cut: a client that
/// stops reading holds its place among the agent's downloads no longer.
const DOWNLOAD_STALL: Duration = Duration::from_secs(60);

/// Reads the attachment's pieces into the response's buffer, one ahead of its reader; ends early
/// (the connection closes short of `Content-Length`) when the store fails or the reader takes
/// nothing for `DOWNLOAD_STALL`. The download's place goes with it.
async fn pump_pieces(download: app::AttachmentDownload, buffer: mpsc::Sender<Bytes>) {
    let mut pieces = std::pin::pin!(download.pieces());
    loop {
        let piece = match pieces.try_next().await {
            Ok(Some(piece)) => Bytes::from(piece),
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "an attachment's download ended early");
                return;
            }
        };
        match tokio::time::timeout(DOWNLOAD_STALL, buffer.send(piece)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return,
            Err(_) => {
                tracing::info!(
                    stalled_secs = DOWNLOAD_STALL.as_secs(),
                    "an attachment's reader took nothing; the download is cut"
                );
                return;
            }
        }
    }
}

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

/// The inbox's threads, the one with the newest message first, a page at a time.
///
/// A thread is the messages that share a `thread_id`: a reply joins the thread of what it
/// answers. Pass `next_cursor` as `cursor` for the next page.
#[utoipa::path(get, path = "/v1/email/threads", tag = "email", operation_id = "list_email_threads",
    security(("HTTPBearer" = [])),
    params(
        ("limit" = Option<i64>, Query, description = "Page size; 20 when omitted", minimum = 1, maximum = 100),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "One page of threads", body = ThreadPageOut),
        (status = 400, description = "No inbox, or an invalid cursor", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn threads(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    query: QueryParams,
) -> Result<Json<ThreadPageOut>, ApiError> {
    let limit = query
        .limit(PageLimit::PAGE)
        .map_err(|error| rejected([Some(error)]))?;
    let page = state
        .services
        .mail
        .mailbox
        .threads(&agent.profile, query.get("cursor"), limit as usize)
        .await?;
    Ok(Json(ThreadPageOut {
        items: page.items.into_iter().map(ThreadOut::from).collect(),
        next_cursor: page.next_cursor,
    }))
}

/// A thread of the agent's inbox: its messages oldest first, with full bodies (the newest 100
/// of a longer thread, `earlier_messages_omitted` counting the rest).
#[utoipa::path(get, path = "/v1/email/threads/{thread_id}", tag = "email", operation_id = "get_email_thread",
    security(("HTTPBearer" = [])),
    params(("thread_id" = String, Path, description = "The thread's id")),
    responses(
        (status = 200, description = "The thread", body = ThreadDetailOut),
        (status = 400, description = "No inbox provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such thread in the agent's inbox", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn thread(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    id: Path<String>,
) -> Result<Json<ThreadDetailOut>, ApiError> {
    let thread = state
        .services
        .mail
        .mailbox
        .thread(&agent.profile, &id.into_inner())
        .await?;
    Ok(Json(ThreadDetailOut::new(
        thread.thread_id,
        thread.messages,
        thread.earlier_omitted,
    )))
}

/// Searches the agent's inbox: the inbox page's shape, best match first, ties newest first.
///
/// `q` is words, all of which must match, in any order, in the subject, the sender, the
/// recipients or the text (its first 100,000 characters), without regard to case or accents;
/// and optionally `from:ADDRESS`, `to:ADDRESS` (To or Cc; an address or `@domain`),
/// `has:attachment`, `after:YYYY-MM-DD` (that day or later) and `before:YYYY-MM-DD` (UTC). A
/// cursor is bound to its query; results are paged to the 10,000th. A query matching more than
/// 1,000 messages lists them newest first instead of best first. At most
/// `EMAIL_SEARCHES_PER_AGENT` (4) searches of an agent run at once; each may take up to
/// `EMAIL_SEARCH_TIMEOUT_MS` (3 s).
#[utoipa::path(get, path = "/v1/email/search", tag = "email", operation_id = "search_email",
    security(("HTTPBearer" = [])),
    params(
        ("q" = String, Query, description = "Words and narrowings, e.g. `invoice march from:billing@acme.example has:attachment`; at least one letter or digit", min_length = 1, max_length = 1000, pattern = "[A-Za-z0-9]"),
        ("limit" = Option<i64>, Query, description = "Page size; 20 when omitted", minimum = 1, maximum = 100),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page of the same query"),
        ("direction" = Option<api_types::Direction>, Query, description = "`inbound` or `outbound`; both when omitted"),
    ),
    responses(
        (status = 200, description = "One page of matching messages", body = EmailInboxPage),
        (status = 400, description = "No inbox, or a cursor of another query", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 422, description = "An empty or malformed query, or another invalid parameter", body = ValidationErrorBody),
        (status = 429, description = "The agent has `EMAIL_SEARCHES_PER_AGENT` searches under way; retry after `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = String, description = "Seconds to wait"))),
        (status = 503, description = "The database is unavailable, or the search took longer than `EMAIL_SEARCH_TIMEOUT_MS`: narrow it", body = ErrorBody),
    ))]
pub async fn search(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    query: QueryParams,
) -> Result<Json<EmailInboxPage>, ApiError> {
    let searched = search_query(RequestPart::Query, "q", query.get("q")).map_err(Into::into);
    let limit = query.limit(PageLimit::PAGE);
    let direction = query.direction();
    let (searched, limit, direction) = match (searched, limit, direction) {
        (Ok(searched), Ok(limit), Ok(direction)) => (searched, limit, direction),
        (searched, limit, direction) => {
            return Err(rejected([searched.err(), limit.err(), direction.err()]))
        }
    };
    let page = state
        .services
        .mail
        .mailbox
        .search(
            &agent.profile,
            &searched,
            direction,
            query.get("cursor"),
            limit as usize,
        )
        .await?;
    Ok(Json(EmailInboxPage {
        items: page.items.into_iter().map(EmailMessageOut::from).collect(),
        next_cursor: page.next_cursor,
    }))
}
