//! Request logging and Prometheus metrics: every request gets a request id (the caller's
//! `X-Request-Id` when it is sane, a new UUID otherwise), a span with its route, and one log line
//! with its status and latency.

use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::web;
use app::LongLivedUsage;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};
use tracing::Instrument;
use uuid::Uuid;

use crate::state::ApiState;
use crate::{route_kind, RouteKind};

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
/// Route label of requests that matched no route, so unknown paths cannot explode cardinality.
const UNMATCHED_ROUTE: &str = "unmatched";

pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    /// Long polls apart, on buckets of their own: they last up to minutes, past every bucket of
    /// `latency`, and would drown its tail.
    long_poll_latency: HistogramVec,
    pool: IntGaugeVec,
    in_flight: IntGaugeVec,
    first_pages: IntGaugeVec,
    policies: IntGaugeVec,
    long_lived: IntGaugeVec,
    event_reads: IntGaugeVec,
    /// What the event streams' buffers hold for their readers, in bytes.
    pub(crate) event_stream_buffered: IntGauge,
    /// Brought up to the registry's count at each scrape, one scrape at a time.
    long_lived_refused: Mutex<IntCounterVec>,
    pub(crate) event_streams_cut: IntCounter,
    /// Brought up to the hub's count at each scrape, one scrape at a time.
    listener_connections: Mutex<IntCounter>,
    listening: IntGauge,
}

impl Metrics {
    /// Registers the HTTP metrics in `registry`, which may hold other metrics of the process
    /// (the background jobs'): `/metrics` shows all of them.
    pub fn new(registry: Registry) -> Self {
        let requests = IntCounterVec::new(
            Opts::new(
                "http_requests_total",
                "HTTP requests by method, route and status",
            ),
            &["method", "route", "status"],
        )
        .expect("valid metric");
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "HTTP request latency by method and route",
            )
            .buckets(vec![
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                10.0,
            ]),
            &["method", "route"],
        )
        .expect("valid metric");
        let long_poll_latency = HistogramVec::new(
            HistogramOpts::new(
                "http_long_poll_duration_seconds",
                "How long long-polling HTTP requests (waits for a code) were held, by method and route",
            )
            .buckets(vec![0.01, 0.1, 1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0]),
            &["method", "route"],
        )
        .expect("valid metric");
        let pool = IntGaugeVec::new(
            Opts::new("db_pool_connections", "Database pool connections by state"),
            &["state"],
        )
        .expect("valid metric");
        let in_flight = IntGaugeVec::new(
            Opts::new(
                "http_requests_in_flight",
                "HTTP requests being served, by route (long waits for codes among them)",
            ),
            &["route"],
        )
        .expect("valid metric");
        let first_pages = IntGaugeVec::new(
            Opts::new(
                "rendered_first_pages",
                "First pages of inboxes and intents kept as rendered: how many, and their bytes",
            ),
            &["measure"],
        )
        .expect("valid metric");
        let policies = IntGaugeVec::new(
            Opts::new(
                "rendered_policies",
                "Agents' policies with their usage kept as rendered: how many, and their bytes",
            ),
            &["measure"],
        )
        .expect("valid metric");
        let long_lived = IntGaugeVec::new(
            Opts::new(
                "long_lived_requests",
                "What agents' requests hold on this instance, by kind: requests (code_wait, event_stream, decision_wait, attachment_download, search) or bytes (request_body_bytes)",
            ),
            &["kind"],
        )
        .expect("valid metric");
        let event_reads = IntGaugeVec::new(
            Opts::new(
                "event_reads_kept",
                "Reads of agents' events kept for the streams that follow them: how many, and their bytes",
            ),
            &["measure"],
        )
        .expect("valid metric");
        let event_stream_buffered = IntGauge::new(
            "event_stream_buffered_bytes",
            "Bytes the event streams hold for readers that have not taken them yet",
        )
        .expect("valid metric");
        let long_lived_refused = IntCounterVec::new(
            Opts::new(
                "long_lived_requests_refused_total",
                "Long-lived requests refused for their agent's cap (429), by kind",
            ),
            &["kind"],
        )
        .expect("valid metric");
        let listener_connections = IntCounter::new(
            "notification_listener_connections_total",
            "Times the notification listener connected: once at start, then once per reconnection",
        )
        .expect("valid metric");
        let listening = IntGauge::new(
            "notification_listener_up",
            "1 while the notification listener is connected; waits and the key cache do without it otherwise",
        )
        .expect("valid metric");
        let event_streams_cut = IntCounter::new(
            "event_streams_cut_total",
            "Event streams cut because their reader took nothing for too long",
        )
        .expect("valid metric");
        for collector in [
            Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(event_streams_cut.clone()),
            Box::new(latency.clone()),
            Box::new(long_poll_latency.clone()),
            Box::new(pool.clone()),
            Box::new(in_flight.clone()),
            Box::new(first_pages.clone()),
            Box::new(policies.clone()),
            Box::new(long_lived.clone()),
            Box::new(event_reads.clone()),
            Box::new(event_stream_buffered.clone()),
            Box::new(long_lived_refused.clone()),
            Box::new(listener_connections.clone()),
            Box::new(listening.clone()),
        ] {
            registry
                .register(collector)
                .expect("metric names are unique");
        }
        Self {
            registry,
            requests,
            latency,
            long_poll_latency,
            pool,
            in_flight,
            first_pages,
            policies,
            long_lived,
            event_reads,
            event_stream_buffered,
            long_lived_refused: Mutex::new(long_lived_refused),
            event_streams_cut,
            listener_connections: Mutex::new(listener_connections),
            listening,
        }
    }

    fn observe(&self, method: &str, route: &str, kind: RouteKind, status: u16, seconds: f64) {
        self.requests
            .with_label_values(&[method, route, &status.to_string()])
            .inc();
        let latency = match kind {
            RouteKind::Plain => &self.latency,
            RouteKind::LongPoll => &self.long_poll_latency,
        };
        latency.with_label_values(&[method, route]).observe(seconds);
    }

    /// The Prometheus text exposition, with the pool's gauges, the kept first pages' (`pages`
    /// and their bytes) and the long-lived requests' read at scrape time.
    pub fn render(
        &self,
        pool: ports::PoolUsage,
        (pages, bytes): (usize, usize),
        (policies, policy_bytes): (usize, usize),
        (event_reads, event_read_bytes): (usize, u64),
        long_lived: &[LongLivedUsage],
        (listener_connections, listening): (u64, bool),
    ) -> String {
        {
            let counted = self
                .listener_connections
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            counted.inc_by(listener_connections.saturating_sub(counted.get()));
        }
        self.listening.set(i64::from(listening));
        for (state, value) in [
            ("max", pool.max_size),
            ("open", pool.open),
            ("idle", pool.idle),
            ("in_use", pool.open.saturating_sub(pool.idle)),
            ("waiting", pool.waiting),
        ] {
            self.pool
                .with_label_values(&[state])
                .set(i64::try_from(value).unwrap_or(i64::MAX));
        }
        for (gauge, measure, value) in [
            (&self.first_pages, "pages", pages),
            (&self.first_pages, "bytes", bytes),
            (&self.policies, "policies", policies),
            (&self.policies, "bytes", policy_bytes),
            (&self.event_reads, "reads", event_reads),
            (
                &self.event_reads,
                "bytes",
                usize::try_from(event_read_bytes).unwrap_or(usize::MAX),
            ),
        ] {
            gauge
                .with_label_values(&[measure])
                .set(i64::try_from(value).unwrap_or(i64::MAX));
        }
        let refused = self
            .long_lived_refused
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for usage in long_lived {
            let kind = usage.kind.as_str();
            self.long_lived
                .with_label_values(&[kind])
                .set(i64::try_from(usage.held).unwrap_or(i64::MAX));
            let counter = refused.with_label_values(&[kind]);
            counter.inc_by(usage.refused.saturating_sub(counter.get()));
        }
        drop(refused);
        let mut buffer = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut buffer)
            .expect("text encoding to memory cannot fail");
        String::from_utf8(buffer).expect("the text encoder writes UTF-8")
    }
}

/// One request counted in `http_requests_in_flight` until it is dropped, answered or not.
struct InFlightRequest(prometheus::IntGauge);

impl InFlightRequest {
    fn start(metrics: &Metrics, route: &str) -> Self {
        let gauge = metrics.in_flight.with_label_values(&[route]);
        gauge.inc();
        Self(gauge)
    }
}

impl Drop for InFlightRequest {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// The method as a metrics label: any request may carry any method, so labels come from a closed
/// set and the rest fold into `other`, keeping `/metrics` and its memory bounded.
fn method_label(method: &str) -> &'static str {
    const KNOWN: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];
    KNOWN
        .into_iter()
        .find(|known| *known == method)
        .unwrap_or("other")
}

/// The caller's request id when it is sane, a new UUID otherwise.
fn request_id(presented: Option<&str>) -> String {
    presented
        .filter(|id| !id.is_empty() && id.len() <= 128 && id.bytes().all(|b| b.is_ascii_graphic()))
        .map_or_else(|| Uuid::new_v4().to_string(), str::to_owned)
}

/// One request's id, span, in-flight count, metrics and log line.
pub(crate) struct RequestTelemetry {
    started: Instant,
    request_id: String,
    method: &'static str,
    route: String,
    kind: RouteKind,
    span: tracing::Span,
    _in_flight: Option<InFlightRequest>,
}

impl RequestTelemetry {
    /// `route` is the matched pattern, never the raw path, so labels stay bounded.
    pub(crate) fn start(
        metrics: Option<&Metrics>,
        method: &Method,
        route: String,
        presented_request_id: Option<&str>,
    ) -> Self {
        let request_id = request_id(presented_request_id);
        let kind = route_kind(method, &route);
        let method = method_label(method.as_str());
        let span = tracing::info_span!("request", %request_id, %method, %route);
        Self {
            started: Instant::now(),
            _in_flight: metrics.map(|metrics| InFlightRequest::start(metrics, &route)),
            request_id,
            method,
            route,
            kind,
            span,
        }
    }

    pub(crate) fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Counts the answer and logs it; returns the request id for the response's header.
    pub(crate) fn finish(self, metrics: Option<&Metrics>, status: u16) -> String {
        let elapsed = self.started.elapsed();
        if let Some(metrics) = metrics {
            metrics.observe(
                self.method,
                &self.route,
                self.kind,
                status,
                elapsed.as_secs_f64(),
            );
        }
        let latency_ms = elapsed.as_secs_f64() * 1000.0;
        self.span
            .in_scope(|| tracing::info!(status, latency_ms, "request finished"));
        self.request_id
    }
}

pub async fn middleware(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let route = request
        .match_pattern()
        .unwrap_or_else(|| UNMATCHED_ROUTE.to_owned());
    let state = request.app_data::<web::Data<ApiState>>().cloned();
    let metrics = state.as_ref().map(|state| &state.metrics);
    let presented = request
        .headers()
        .get(&REQUEST_ID)
        .and_then(|value| value.to_str().ok());
    let telemetry = RequestTelemetry::start(metrics, request.method(), route, presented);
    let mut response = next
        .call(request)
        .instrument(telemetry.span().clone())
        .await?;
    let request_id = telemetry.finish(metrics, response.status().as_u16());
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    Ok(response)
}
