//! One writer of Server-Sent Events for every live stream an instance serves (the agent's event
//! stream, the console's live list): the retry line first, a comment at least every keep-alive,
//! the end after its lifetime or when the instance stops, and a bounded buffer between the source
//! and a reader that may read slowly or not at all.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::http::header::{self, HeaderName};
use actix_web::web::Bytes;
use actix_web::HttpResponse;
use app::LongLivedPlace;
use futures_util::{Stream, StreamExt};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};

/// How a stream is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseSettings {
    /// How long its client waits before reconnecting, said first (`retry:`).
    pub retry: Duration,
    /// The longest the stream goes without writing something: a comment when its source is
    /// silent.
    pub keep_alive: Duration,
    /// How long it lives before it ends (its client reconnects).
    pub lifetime: Duration,
    /// Bytes held for the reader at most ...
    pub buffer_bytes: usize,
    /// ... and for how long the next frame may wait for room before the reader is cut.
    pub stall: Duration,
}

/// What a stream reports of itself, for the metrics.
pub trait SseMeter: Send + Sync + 'static {
    /// Bytes came into (positive) or left (negative) a stream's buffer.
    fn buffered(&self, bytes: i64);
    /// A reader that kept up with nothing for `stall` was cut.
    fn cut(&self);
}

/// Nothing is counted: for streams without figures of their own.
impl SseMeter for () {
    fn buffered(&self, _: i64) {}
    fn cut(&self) {}
}

const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// The response that writes `frames` (each a whole SSE message, `\n\n` included) as Server-Sent
/// Events. It holds `place` until the response is dropped: a reader that takes nothing keeps its
/// connection, which the server cannot close while it waits to write, so it keeps its place too,
/// and a holder keeps no more such connections than it may hold places. The stream ends when
/// `frames` does, after its lifetime, when the instance stops (the registry's shutdown), or when
/// its reader stalls; its connection closes then rather than idling as keep-alive.
pub fn sse_response(
    frames: impl Stream<Item = Bytes> + Send + 'static,
    settings: SseSettings,
    place: LongLivedPlace,
    meter: Arc<dyn SseMeter>,
) -> HttpResponse {
    let (buffer, taken) = mpsc::unbounded_channel();
    let cut = Arc::new(AtomicBool::new(false));
    actix_web::rt::spawn(pump(
        Box::pin(frames),
        buffer,
        cut.clone(),
        settings,
        place.stopping(),
        meter,
    ));
    let retry = Bytes::from(format!("retry: {}\n\n", settings.retry.as_millis()));
    let first = futures_util::stream::once(async move { retry });
    // Each frame's room is given back as the server takes its bytes to write them.
    let items = futures_util::stream::unfold((taken, place), move |(mut taken, place)| {
        let cut = cut.clone();
        async move {
            if cut.load(Ordering::Acquire) {
                return None;
            }
            let item: Buffered = taken.recv().await?;
            Some((item.frame, (taken, place)))
        }
    });
    let body = first.chain(items).map(Ok::<_, std::convert::Infallible>);
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((HeaderName::from_static("x-accel-buffering"), "no"))
        .force_close()
        .streaming(body)
}

/// A frame in a stream's buffer, holding its bytes' room until the reader takes it.
struct Buffered {
    frame: Bytes,
    _room: OwnedSemaphorePermit,
    _counted: Counted,
}

/// Bytes counted by the meter while they wait for their reader.
struct Counted {
    bytes: i64,
    meter: Arc<dyn SseMeter>,
}

impl Counted {
    fn count(bytes: usize, meter: Arc<dyn SseMeter>) -> Self {
        let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
        meter.buffered(bytes);
        Self { bytes, meter }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.meter.buffered(-self.bytes);
    }
}

/// Moves the source's frames (and keep-alives between them) into the stream's buffer, at most
/// `buffer_bytes` of them, until the source ends, the reader goes, the lifetime passes or the
/// instance stops; a frame that finds no room for `stall` cuts the reader (`cut`: its response
/// ends at once, what it holds let go).
async fn pump(
    mut frames: std::pin::Pin<Box<dyn Stream<Item = Bytes> + Send>>,
    buffer: mpsc::UnboundedSender<Buffered>,
    cut: Arc<AtomicBool>,
    settings: SseSettings,
    stopping: impl std::future::Future<Output = ()>,
    meter: Arc<dyn SseMeter>,
) {
    // Within what one acquisition can ask for.
    let capacity = settings.buffer_bytes.clamp(1, u32::MAX as usize);
    let room = Arc::new(Semaphore::new(capacity));
    let ends = tokio::time::sleep(settings.lifetime);
    tokio::pin!(ends, stopping);
    loop {
        let frame = tokio::select! {
            frame = frames.next() => match frame {
                Some(frame) => frame,
                None => return,
            },
            () = tokio::time::sleep(settings.keep_alive) => Bytes::from_static(KEEP_ALIVE),
            () = buffer.closed() => return,
            () = &mut ends => return,
            () = &mut stopping => return,
        };
        // A frame larger than the whole buffer waits for all of it.
        let weight = u32::try_from(frame.len().min(capacity)).unwrap_or(u32::MAX);
        let taken = tokio::select! {
            taken = tokio::time::timeout(settings.stall, room.clone().acquire_many_owned(weight)) => taken,
            () = buffer.closed() => return,
        };
        let Ok(Ok(room)) = taken else {
            cut.store(true, Ordering::Release);
            meter.cut();
            tracing::info!(
                stalled_secs = settings.stall.as_secs(),
                "a stream's reader kept up with nothing; it is cut"
            );
            return;
        };
        let counted = Counted::count(frame.len(), meter.clone());
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

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::MessageBody;
    use app::{LongLived, LongLivedCaps, LongLivedKind};
    use domain::AgentId;
    use std::sync::atomic::AtomicI64;
    use uuid::Uuid;

    #[derive(Default)]
    struct Counts {
        buffered: AtomicI64,
        cuts: AtomicI64,
    }

    impl SseMeter for Counts {
        fn buffered(&self, bytes: i64) {
            self.buffered.fetch_add(bytes, Ordering::Relaxed);
        }
        fn cut(&self) {
            self.cuts.fetch_add(1, Ordering::Relaxed);
        }
    }

    const SETTINGS: SseSettings = SseSettings {
        retry: Duration::from_millis(3000),
        keep_alive: Duration::from_secs(15),
        lifetime: Duration::from_secs(3600),
        buffer_bytes: 1024,
        stall: Duration::from_secs(10),
    };

    fn place() -> (Arc<LongLived>, LongLivedPlace) {
        let registry = LongLived::new(LongLivedCaps::one_each(0));
        let place = registry
            .enter(AgentId(Uuid::now_v7()), LongLivedKind::EventStream)
            .expect("room");
        (registry, place)
    }

    /// Everything the response writes until it ends.
    async fn written(response: HttpResponse) -> String {
        text_of(response.into_body()).await
    }

    async fn text_of(body: actix_web::body::BoxBody) -> String {
        let body = actix_web::body::to_bytes(body)
            .await
            .map_err(|_| "unreadable")
            .expect("a body");
        String::from_utf8(body.to_vec()).expect("text")
    }

    #[actix_web::test]
    async fn the_retry_line_comes_first_then_each_frame_then_the_end() {
        let (registry, place) = place();
        let frames = futures_util::stream::iter([
            Bytes::from_static(b"event: a\ndata: 1\n\n"),
            Bytes::from_static(b"event: b\ndata: 2\n\n"),
        ]);
        let response = sse_response(frames, SETTINGS, place, Arc::new(Counts::default()));
        assert_eq!(
            response.headers().get(header::CONTENT_TYPE),
            Some(&header::HeaderValue::from_static("text/event-stream"))
        );
        assert_eq!(
            written(response).await,
            "retry: 3000\n\nevent: a\ndata: 1\n\nevent: b\ndata: 2\n\n"
        );
        let held: usize = registry.usage().iter().map(|usage| usage.held).sum();
        assert_eq!(held, 0, "the place is given back with the response");
    }

    #[actix_web::test]
    async fn a_silent_source_gets_keep_alives_until_the_instance_stops() {
        let (registry, place) = place();
        let settings = SseSettings {
            keep_alive: Duration::from_millis(20),
            ..SETTINGS
        };
        let meter = Arc::new(Counts::default());
        let response = sse_response(
            futures_util::stream::pending(),
            settings,
            place,
            meter.clone(),
        );
        let mut body = response.into_body();
        let mut seen = String::new();
        while seen.matches(": keep-alive").count() < 2 {
            let chunk = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_next(cx))
                .await
                .expect("a chunk")
                .expect("bytes");
            seen.push_str(std::str::from_utf8(&chunk).expect("text"));
        }
        registry.shut_down();
        assert_eq!(written_rest(body).await, "", "nothing after the shutdown");
        assert_eq!(meter.buffered.load(Ordering::Relaxed), 0);
    }

    /// What the body writes until it ends, keep-alives aside.
    async fn written_rest(body: actix_web::body::BoxBody) -> String {
        text_of(body).await.replace(": keep-alive\n\n", "")
    }

    #[actix_web::test]
    async fn a_stream_ends_after_its_lifetime() {
        let (_registry, place) = place();
        let settings = SseSettings {
            lifetime: Duration::from_millis(30),
            ..SETTINGS
        };
        let response = sse_response(
            futures_util::stream::pending(),
            settings,
            place,
            Arc::new(Counts::default()),
        );
        assert_eq!(written(response).await, "retry: 3000\n\n");
    }

    #[actix_web::test]
    async fn a_reader_that_takes_nothing_is_cut_once_the_buffer_is_full() {
        let (_registry, place) = place();
        let settings = SseSettings {
            buffer_bytes: 16,
            stall: Duration::from_millis(20),
            ..SETTINGS
        };
        let meter = Arc::new(Counts::default());
        let frames = futures_util::stream::repeat(Bytes::from_static(b"data: 0123456\n\n"));
        let response = sse_response(frames, settings, place, meter.clone());
        // Nobody reads: the first frame fills the buffer; the second waits for room, then cuts.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while meter.cuts.load(Ordering::Relaxed) == 0 {
            assert!(tokio::time::Instant::now() < deadline, "never cut");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let written = written(response).await;
        assert_eq!(written, "retry: 3000\n\n", "a cut reader gets nothing more");
        assert_eq!(meter.buffered.load(Ordering::Relaxed), 0);
    }
}
