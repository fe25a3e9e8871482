//! Reading the inbox: its pages, a single message, its threads, and searching it.

use actix_web::web::{self, Json, Path};
use actix_web::HttpResponse;
use api_types::{search_query, RequestPart};
use api_types::{
    EmailInboxPage, EmailMessageOut, PageLimit, ThreadDetailOut, ThreadOut, ThreadPageOut,
};
use app::MailPage;

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody, ValidationErrorBody};
use crate::extract::{rejected, QueryParams};
use crate::rendered_pages::{PageKey, PageListing};
use crate::state::ApiState;

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

/// A thread of the agent's inbox, its messages oldest first.
///
/// Its subject and participants as the list of threads gives them, and its messages with full
/// bodies (the newest 100 of a longer thread, `earlier_messages_omitted` counting the rest).
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
    Ok(Json(ThreadDetailOut::from(thread)))
}

/// Searches the agent's inbox by words and filters.
///
/// Answered in the inbox page's shape, best match first, ties newest first. `q` is words, all of
/// which must match, in any order, in the subject, the sender, the recipients or the text (its
/// first 100,000 characters), without regard to case or accents; and optionally `from:ADDRESS`,
/// `to:ADDRESS` (To or Cc; an address or `@domain`), `has:attachment`, `after:YYYY-MM-DD` (that day
/// or later) and `before:YYYY-MM-DD` (UTC). A cursor is bound to its query; results are paged to
/// the 10,000th. A query matching more than 1,000 messages lists them newest first instead of best
/// first. At most `EMAIL_SEARCHES_PER_AGENT` (4) searches of an agent run at once; each may take up
/// to `EMAIL_SEARCH_TIMEOUT_MS` (3 s).
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
