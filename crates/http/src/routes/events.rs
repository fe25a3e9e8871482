//! `/v1/events`: the agent's event log as a feed and as a live stream (Server-Sent Events).

use std::sync::Arc;
use std::time::Duration;

use actix_web::http::header::HeaderName;
use actix_web::web::{self, Bytes, Json};
use actix_web::{HttpRequest, HttpResponse};
use api_types::{EventOut, EventPage, PageLimit, RequestPart, ServerSentEvent};
use app::FollowItem;
use domain::EventTypes;
use serde_json::json;

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody, ValidationErrorBody, ValidationItem};
use crate::extract::{rejected, QueryParams};
use crate::state::ApiState;

/// `types`: a comma-separated list of event types; every type when absent.
fn types_of(query: &QueryParams) -> Result<EventTypes, ValidationItem> {
    let Some(raw) = query.get("types") else {
        return Ok(EventTypes::all());
    };
    Ok(api_types::read_event_types(RequestPart::Query, raw)?)
}

/// The agent's events, oldest first.
///
/// Events with `seq` greater than `after`, of the `types` asked for. `next_after` is the last
/// item's `seq` when more may follow: pass it as `after` for the next page.
#[utoipa::path(get, path = "/v1/events", tag = "events", operation_id = "list_events",
    security(("HTTPBearer" = [])),
    params(
        ("after" = Option<u64>, Query, description = "Events after this `seq`; 0 when omitted", minimum = 0),
        ("limit" = Option<i64>, Query, description = "Page size; 20 when omitted", minimum = 1, maximum = 100),
        ("types" = Option<String>, Query, description = "Comma-separated event types; every type when omitted"),
    ),
    responses(
        (status = 200, description = "The events", body = EventPage),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn list(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    query: QueryParams,
) -> Result<Json<EventPage>, ApiError> {
    let after = query.sequence("after");
    let limit = query.limit(PageLimit::PAGE);
    let types = types_of(&query);
    let (after, limit, types) = match (after, limit, types) {
        (Ok(after), Ok(limit), Ok(types)) => (after, limit, types),
        (after, limit, types) => return Err(rejected([after.err(), limit.err(), types.err()])),
    };
    let page = state
        .services
        .events
        .page(&agent.profile, after, types, limit as usize)
        .await?;
    Ok(Json(EventPage {
        items: page.items.iter().map(EventOut::from).collect(),
        next_after: page.next_after,
    }))
}

/// How long a client waits before it reconnects: the stream's first line, as the spec gives it.
pub const EVENT_STREAM_RETRY: Duration = Duration::from_millis(3000);

const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// Where a stream starts: after `Last-Event-ID` when the client sends one (a reconnection),
/// else after `?after=`, else from the start.
fn start_of(request: &HttpRequest, query: &QueryParams) -> Result<u64, ValidationItem> {
    let Some(last) = request.headers().get(LAST_EVENT_ID) else {
        return query.sequence("after");
    };
    let text = last.to_str().unwrap_or_default().trim();
    text.parse::<u64>().map_err(|_| {
        ValidationItem::new(
            "int_parsing",
            vec![json!("header"), json!("last-event-id")],
            "Input should be a valid integer, unable to parse string as an integer",
            json!(text),
        )
    })
}

/// One item as the stream writes it.
fn frame(item: FollowItem) -> Bytes {
    match item {
        FollowItem::Event(event) => Bytes::from(format!(
            "id: {}\nevent: {}\ndata: {}\n\n",
            event.seq,
            event.event_type,
            EventOut::to_json(&event)
        )),
        FollowItem::Reset { after } => Bytes::from(format!(
            "event: reset\ndata: {}\n\n",
            json!({ "after": after })
        )),
    }
}

/// The agent's events as they commit (Server-Sent Events).
///
/// `retry: 3000` first; then what the agent missed after `Last-Event-ID` (or `after`), then each
/// event as it commits on any instance: `id: <seq>`, `event: <type>`, `data: <the event>`. A
/// comment line comes at least every 15 s. When the position asked for is older than what is
/// kept, the first message is `event: reset` and the stream goes on from the oldest kept event.
/// A reader too slow to keep up is disconnected; it resumes with `Last-Event-ID`. At most
/// `EVENT_STREAMS_PER_AGENT` (8) streams per agent at once; beyond, 429. A stream ends after an
/// hour (`EVENT_STREAM_MAX_SECS`); its client reconnects with `Last-Event-ID`.
#[utoipa::path(get, path = "/v1/events/stream", tag = "events", operation_id = "stream_events",
    security(("HTTPBearer" = [])),
    params(
        ("after" = Option<u64>, Query, description = "Start after this `seq` when no `Last-Event-ID` is sent; 0 when omitted", minimum = 0),
        ("types" = Option<String>, Query, description = "Comma-separated event types; every type when omitted"),
        ("Last-Event-ID" = Option<u64>, Header, description = "The last `seq` received, sent on reconnection"),
    ),
    responses(
        (status = 200, description = "The stream, one message at a time", content_type = "text/event-stream", body = ServerSentEvent),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 429, description = "Too many streams of this agent at once", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn stream(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    request: HttpRequest,
    query: QueryParams,
) -> Result<HttpResponse, ApiError> {
    let (after, types) = match (start_of(&request, &query), types_of(&query)) {
        (Ok(after), Ok(types)) => (after, types),
        (after, types) => return Err(rejected([after.err(), types.err()])),
    };
    let (follower, place) = state
        .services
        .events
        .follow(&agent.principal(), after, types)?;
    let frames = futures_util::stream::unfold(follower, |mut follower| async move {
        let item = follower.next().await?;
        Some((frame(item), follower))
    });
    let meter = Arc::new(StreamMeter {
        buffered: state.metrics.event_stream_buffered.clone(),
        cut: state.metrics.event_streams_cut.clone(),
    });
    Ok(edge::sse_response(
        frames,
        state.event_streams,
        place,
        meter,
    ))
}

/// The event streams' figures in the metrics.
struct StreamMeter {
    buffered: prometheus::IntGauge,
    cut: prometheus::IntCounter,
}

impl edge::SseMeter for StreamMeter {
    fn buffered(&self, bytes: i64) {
        self.buffered.add(bytes);
    }

    fn cut(&self) {
        self.cut.inc();
    }
}
