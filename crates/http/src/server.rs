//! The HTTP server: every route on actix-web's `HttpServer`, long waits for codes among them, with
//! the connection rules that keep slow, silent or departed clients from holding the instance.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpServer};
use app::Services;
use console::Console;
use domain::TrustedProxies;
use mcp::{McpEndpoint, McpSettings};
use ports::{DatabaseHealth, Notifications};
use prometheus::Registry;

use crate::rendered_pages::{
    RenderedPages, RenderedPolicies, RENDERED_PAGES_BUDGET_BYTES, RENDERED_POLICIES_BUDGET_BYTES,
};
use crate::routes::provider_webhooks::WebhookGate;
use crate::state::ApiState;
use crate::telemetry::Metrics;
use edge::SseSettings;

/// As long as a client has to send a request's head; a connection that has not sent a whole one
/// by then is closed, whatever bytes it sent.
const REQUEST_HEAD_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a connection may sit idle between requests: three times the idle time of common
/// short-lived clients' pools (httpx 5 s, Node's undici 4 s), so for them the client always closes
/// first and never sends a request on a connection the server is closing in that instant (a POST
/// lost that way is not retried); and short, so idle connections give their slots back soon
/// (decision 0057).
const IDLE_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Descriptors kept for what is not a client connection: the database pools and the hub's
/// listening connection, provider and node connections, the log, the listener.
const RESERVED_DESCRIPTORS: u64 = 256;

/// Connections one worker serves at once when the descriptor limit allows more: actix-server's
/// own default.
const MOST_CONNECTIONS_PER_WORKER: u64 = 25_000;

/// How many client connections each worker takes at once, so that together they never run the
/// process out of file descriptors: past it, new connections wait in the listen backlog instead
/// of failing every `accept` (and every other file the process opens). The soft descriptor limit
/// is raised to the hard one first.
fn connections_per_worker(workers: usize) -> usize {
    let descriptors = match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => limit,
        Err(error) => {
            tracing::warn!(%error, "cannot read the open-file limit; assuming 1024");
            1024
        }
    };
    let workers = u64::try_from(workers.max(1)).unwrap_or(u64::MAX);
    let per_worker = (descriptors.saturating_sub(RESERVED_DESCRIPTORS) / workers)
        .clamp(1, MOST_CONNECTIONS_PER_WORKER);
    usize::try_from(per_worker).unwrap_or(usize::MAX)
}

/// What the HTTP server is started with beside the use cases, each from the configuration.
pub struct ServeSettings {
    /// HTTP workers: one per core, as actix-web's own default.
    pub workers: usize,
    /// How long requests in flight may finish once the server stops (`SHUTDOWN_TIMEOUT_SECS`).
    pub shutdown_timeout: Duration,
    /// `/mcp`'s hosts and the public URL its approval links lead to.
    pub mcp: McpSettings,
    /// Where the console is reached: its passkeys and its origin check are bound to it.
    pub console_url: String,
    /// The proxies whose forwarded address the console believes (`CONSOLE_TRUSTED_PROXIES`).
    pub console_trusted_proxies: Option<TrustedProxies>,
    /// When set, `/metrics` answers only `Authorization: Bearer <this token>`.
    pub metrics_token: Option<String>,
    /// How event streams hold what their readers have not taken yet.
    pub event_streams: SseSettings,
}

/// Every way in on `listener`: the REST API, `/mcp` and the console over the same use cases,
/// with `database` behind `/readyz`, and the server's metrics (with the pool's and the
/// `notifications` hub's) in `registry`.
pub fn serve(
    listener: TcpListener,
    services: Arc<Services>,
    database: Arc<dyn DatabaseHealth>,
    notifications: Arc<dyn Notifications>,
    settings: ServeSettings,
    registry: Registry,
) -> std::io::Result<Server> {
    let console_base_url = settings
        .mcp
        .public_base_url
        .trim_end_matches('/')
        .to_owned();
    let state = web::Data::new(ApiState {
        mcp: McpEndpoint::new(services.clone(), settings.mcp),
        console: web::Data::new(Console::new(
            services.clone(),
            &settings.console_url,
            settings.console_trusted_proxies,
        )),
        services,
        database,
        notifications,
        first_pages: RenderedPages::new(RENDERED_PAGES_BUDGET_BYTES),
        policies: RenderedPolicies::policies(RENDERED_POLICIES_BUDGET_BYTES),
        metrics: Metrics::new(registry),
        metrics_token: settings.metrics_token,
        inbound_mail_gate: WebhookGate::inbound_mail(),
        twilio_gate: WebhookGate::twilio(),
        event_streams: settings.event_streams,
        console_base_url,
    });
    server(listener, settings.workers, state, settings.shutdown_timeout)
}

/// The HTTP server: actix-web, every request (long waits for codes among them) on one stack.
/// A client that closes its side of the connection has left: its request's handler is dropped
/// (a wait ends and frees its place), as hyper and Go's server also read it (decision 0043).
fn server(
    listener: TcpListener,
    workers: usize,
    state: web::Data<ApiState>,
    shutdown_timeout: Duration,
) -> std::io::Result<Server> {
    let connections = connections_per_worker(workers);
    tracing::debug!(connections, workers, "client connections per worker");
    Ok(HttpServer::new(move || {
        App::new()
            .wrap(from_fn(crate::telemetry_middleware))
            .configure(crate::configure(state.clone()))
    })
    .workers(workers)
    .max_connections(connections)
    .shutdown_timeout(shutdown_timeout.as_secs())
    .disable_signals()
    .client_request_timeout(REQUEST_HEAD_TIMEOUT)
    .keep_alive(IDLE_KEEP_ALIVE)
    .client_disconnect_timeout(Duration::from_secs(1))
    .h1_allow_half_closed(false)
    .listen(listener)?
    .run())
}
