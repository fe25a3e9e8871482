//! `/v1/events`: the agent's event log as a feed and as a live stream (Server-Sent Events).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::http::header::{self, HeaderName};
use actix_web::web::{self, Bytes, Json};
use actix_web::{HttpRequest, HttpResponse};
use api_types::{EventOut, EventPage, PageLimit, RequestPart, ServerSentEvent};
use app::FollowItem;
use domain::EventTypes;
use futures_util::StreamExt;
use serde_json::json;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody, ValidationErrorBody, ValidationItem};
use crate::extract::{rejected, QueryParams};
use crate::state::ApiState;
use crate::telemetry::Metrics;

/// How a stream holds what its reader has not taken yet.
#[derive(Debug, Clone, Copy)]
pub struct StreamSettings {
    /// Bytes held for the reader at most ...
    pub buffer_bytes: usize,
    /// ... and for how long the next item may wait for room before the reader is cut.
    pub stall: Duration,
    /// How long a stream lives before it ends (its client reconnects).
    pub lifetime: Duration,
}

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
        FollowItem::KeepAlive => Bytes::from_static(b": keep-alive\n\n"),
    }
}

/// An item in a stream's buffer, holding its bytes' room until the reader takes it.
struct Buffered {
    frame: Bytes,
    _room: OwnedSemaphorePermit,
    _counted: BufferedBytes,
}

/// Bytes counted in `event_stream_buffered_bytes` while they wait for their reader.
struct BufferedBytes {
    bytes: i64,
    state: web::Data<ApiState>,
}

impl BufferedBytes {
    fn count(bytes: usize, state: web::Data<ApiState>) -> Self {
        let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
        state.metrics.event_stream_buffered.add(bytes);
        Self { bytes, state }
    }
}

impl Drop for BufferedBytes {
    fn drop(&mut self) {
        self.state.metrics.event_stream_buffered.sub(self.bytes);
    }
}

/// Moves the follower's items into the stream's buffer, at most `buffer_bytes` of them, until
/// the follow ends or the reader goes; an item that finds no room for `stall` cuts the reader
/// (`cut`: its response ends at once, what it holds let go): it resumes with `Last-Event-ID`.
async fn pump(
    mut follower: app::EventFollower,
    buffer: mpsc::UnboundedSender<Buffered>,
    cut: Arc<AtomicBool>,
    settings: StreamSettings,
    state: web::Data<ApiState>,
) {
    // Within what one acquisition can ask for.
    let capacity = settings.buffer_bytes.clamp(1, u32::MAX as usize);
    let room = Arc::new(Semaphore::new(capacity));
    let stall = settings.stall;
    let ends = tokio::time::sleep(settings.lifetime);
    tokio::pin!(ends);
    loop {
        let item = tokio::select! {
            item = follower.next() => item,
            () = buffer.closed() => return,
            () = &mut ends => return,
        };
        let Some(item) = item else {
            return;
        };
        let frame = frame(item);
        // An item larger than the whole buffer waits for all of it.
        let weight = u32::try_from(frame.len().min(capacity)).unwrap_or(u32::MAX);
        let taken = tokio::select! {
            taken = tokio::time::timeout(stall, room.clone().acquire_many_owned(weight)) => taken,
            () = buffer.closed() => return,
        };
        let Ok(Ok(room)) = taken else {
            cut.store(true, Ordering::Release);
            state.metrics.count_stream_cut();
            tracing::info!(
                stalled_secs = stall.as_secs(),
                "an event stream's reader kept up with nothing; it is cut"
            );
            return;
        };
        let counted = BufferedBytes::count(frame.len(), state.clone());
        let buffered = Buffered {
            frame,
            _room: room,
            _counted: counted,
        };
        if buffer.send(buffered).is_err() {
            return;
        }
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
    let (follower, place) = state.services.events.follow(&agent.profile, after, types)?;
    let settings = state.event_streams;
    let (buffer, taken) = mpsc::unbounded_channel();
    let cut = Arc::new(AtomicBool::new(false));
    actix_web::rt::spawn(pump(follower, buffer, cut.clone(), settings, state.clone()));
    let first = futures_util::stream::once(async { Bytes::from_static(b"retry: 3000\n\n") });
    // Each item's room is given back as the server takes its bytes to write them. The body holds
    // the stream's place until it is dropped: a reader that takes nothing keeps its connection,
    // which the server cannot close while it waits to write, so it keeps its place too, and an
    // agent holds no more such connections than it may hold streams.
    let items = futures_util::stream::unfold((taken, place), move |(mut taken, place)| {
        let cut = cut.clone();
        async move {
            if cut.load(Ordering::Acquire) {
                return None;
            }
            let item = taken.recv().await?;
            Some((item.frame, (taken, place)))
        }
    });
    let body = first.chain(items).map(Ok::<_, std::convert::Infallible>);
    // The connection closes when the stream ends (within the server's disconnect timeout), rather
    // than idling as keep-alive with what its reader left unread.
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((HeaderName::from_static("x-accel-buffering"), "no"))
        .force_close()
        .streaming(body))
}

impl Metrics {
    /// Counts an event stream cut for a reader that took nothing for too long.
    pub(crate) fn count_stream_cut(&self) {
        self.event_streams_cut.inc();
    }
}
