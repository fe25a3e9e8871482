//! `agent-runtime serve`: the HTTP API and the background jobs, stopped together on a signal.

use std::net::{SocketAddr, TcpListener};
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::{Server, ServerHandle};
use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpServer};
use http_api::{ApiState, Metrics, RenderedPages, WebhookGate, RENDERED_PAGES_BUDGET_BYTES};
use prometheus::Registry;
use runtime::config::ServerConfig;
use runtime::jobs::{ExecutorJob, ExpiryJob, OutboxJob, Stopper, Supervisor};
use runtime::wiring;
use secrecy::ExposeSecret;
use tokio::signal::unix::{signal, SignalKind};

/// Takes the listening socket first, so a taken port fails at once, before any migration, with
/// the setting to change in the message.
fn listen(bind_addr: SocketAddr) -> anyhow::Result<TcpListener> {
    TcpListener::bind(bind_addr).map_err(|error| {
        anyhow::anyhow!(
            "cannot listen on BIND_ADDR {bind_addr}: {error}; set BIND_ADDR to a free address"
        )
    })
}

/// The HTTP workers: one per core, as actix-web's own default.
fn http_workers() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

pub async fn serve(mut config: ServerConfig) -> anyhow::Result<()> {
    let listener = listen(config.bind_addr)?;
    let workers = http_workers();
    // A pool per worker: the connections a worker uses are driven by its own thread, with no
    // wake-up of another thread for each query (decision 0035).
    config.database.pool.shards = workers;
    let database = wiring::open_database(&config.database).await?;
    wiring::check_master_key(&database, &config.provisioning).await?;
    let registry = Registry::new();
    let mut jobs = Supervisor::new(&registry)?;
    jobs.spawn(
        ExpiryJob(wiring::intent_expiry(&database, &config.intents)),
        config.intents.expiry_interval,
    );
    let chain = wiring::chain(&database, &config.chain)?;
    if config.intents.executor_enabled {
        jobs.spawn(
            ExecutorJob(wiring::executor(
                &database,
                &chain,
                &config.provisioning,
                &config.intents,
            )),
            config.intents.executor_interval,
        );
    } else {
        tracing::info!("EXECUTOR_ENABLED=false: confirmed intents are left to other instances");
    }
    if config.email.outbox_enabled {
        jobs.spawn(
            OutboxJob(wiring::outbox_worker(&database, &config.email)?),
            config.email.outbox_interval,
        );
    } else {
        tracing::info!("EMAIL_OUTBOX_ENABLED=false: queued mail is left to other instances");
    }
    let notifications = wiring::notification_hub(&config.database);
    let (agents, auth_cache_follower) = wiring::agent_service(&database, notifications.clone());
    actix_web::rt::spawn(auth_cache_follower);
    let state = web::Data::new(ApiState {
        agents,
        wallets: wiring::wallet_service(
            &database,
            &chain,
            &config.provisioning,
            &config.intents,
            config.cursors.codec(),
        ),
        email: wiring::email_service(&database, &config.email, config.cursors.codec())?,
        sms: wiring::sms_service(&database, notifications.clone(), &config.sms)?,
        codes: wiring::code_service(&database, notifications, &config.sms),
        database: Arc::new(database),
        first_pages: RenderedPages::new(RENDERED_PAGES_BUDGET_BYTES),
        metrics: Metrics::new(registry),
        metrics_token: config
            .metrics_token
            .as_ref()
            .map(|token| token.expose_secret().to_owned()),
        inbound_mail_gate: WebhookGate::inbound_mail(),
        twilio_gate: WebhookGate::twilio(),
    });
    let address = listener.local_addr()?;
    let server = http_server(listener, workers, state.clone(), config.shutdown_timeout)
        .map_err(|error| anyhow::anyhow!("serving on BIND_ADDR {}: {error}", config.bind_addr))?;
    tracing::info!(
        %address,
        chain = config.chain.describe(),
        email = config.email.describe(),
        sms = config.sms.describe(),
        "agent-runtime {} serving on http://{address} (API description at /docs)",
        env!("CARGO_PKG_VERSION"),
    );
    actix_web::rt::spawn(stop_on_signal(server.handle(), jobs.stopper(), state));
    server.await?;
    jobs.stop().await;
    tracing::info!("stopped");
    Ok(())
}

/// As long as a client has to send a request's head; a connection that has not sent a whole one
/// by then is closed, whatever bytes it sent.
const REQUEST_HEAD_TIMEOUT: Duration = Duration::from_secs(5);

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

/// The HTTP server: actix-web, every request (long waits for codes among them) on one stack.
/// A client that closes its side of the connection has left: its request's handler is dropped
/// (a wait ends and frees its place), as hyper and Go's server also read it (decision 0043).
fn http_server(
    listener: TcpListener,
    workers: usize,
    state: web::Data<ApiState>,
    shutdown_timeout: Duration,
) -> std::io::Result<Server> {
    let connections = connections_per_worker(workers);
    tracing::debug!(connections, workers, "client connections per worker");
    Ok(HttpServer::new(move || {
        App::new()
            .wrap(from_fn(http_api::telemetry_middleware))
            .configure(http_api::configure(state.clone()))
    })
    .workers(workers)
    .max_connections(connections)
    .shutdown_timeout(shutdown_timeout.as_secs())
    .disable_signals()
    .client_request_timeout(REQUEST_HEAD_TIMEOUT)
    .client_disconnect_timeout(Duration::from_secs(1))
    .h1_allow_half_closed(false)
    .listen(listener)?
    .run())
}

/// On SIGTERM or SIGINT (Ctrl-C): the jobs finish the step in hand and stop; waits for codes are
/// answered 408 at once; the server stops accepting and lets requests in flight finish within
/// `SHUTDOWN_TIMEOUT_SECS`.
async fn stop_on_signal(server: ServerHandle, jobs: Stopper, state: web::Data<ApiState>) {
    let (Ok(mut terminate), Ok(mut interrupt)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::error!("cannot listen for SIGTERM and SIGINT; stop the server with SIGKILL");
        return;
    };
    let name = tokio::select! {
        _ = terminate.recv() => "SIGTERM",
        _ = interrupt.recv() => "SIGINT",
    };
    tracing::info!(
        signal = name,
        "shutting down: finishing requests and job steps in hand"
    );
    jobs.stop();
    state.sms.shut_down();
    state.codes.shut_down();
    server.stop(true).await;
}
