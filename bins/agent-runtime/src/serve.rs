//! `agent-runtime serve`: the HTTP API and the background jobs, stopped together on a signal.

use std::net::{SocketAddr, TcpListener};
use std::num::NonZeroUsize;
use std::sync::Arc;

use actix_web::dev::ServerHandle;
use app::Services;
use http_api::{ServeSettings, SseSettings, EVENT_STREAM_RETRY};
use mcp::McpSettings;
use prometheus::Registry;
use runtime::config::ServerConfig;
use runtime::jobs::Stopper;
use runtime::{job_list, wiring};
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
    let address = listener.local_addr()?;
    // Without PUBLIC_BASE_URL the console is reached on this machine, on the port taken (one
    // asked for as 0 is known only now): its passkeys and its origin check are bound to it, and
    // MCP's approval links lead there.
    if config.public_base_url.is_none() {
        config.services.console_url = format!("http://localhost:{}", address.port());
    }
    let mcp = McpSettings::new(
        config.services.console_url.clone(),
        config.mcp_allowed_hosts.as_deref(),
    )
    .map_err(anyhow::Error::msg)?;
    let workers = http_workers();
    // A pool per worker: the connections a worker uses are driven by its own thread, with no
    // wake-up of another thread for each query (decision 0035).
    config.database.pool.shards = workers;
    let database = wiring::open_database(&config.database).await?;
    let services_config = &config.services;
    wiring::check_master_key(&database, &services_config.provisioning).await?;
    let registry = Registry::new();
    let chain = wiring::chain(&database, &services_config.chain)?;
    let notifications = wiring::notification_hub(&config.database);
    let jobs = job_list::start(
        &database,
        &chain,
        &notifications,
        services_config,
        &registry,
    )?;
    let (services, auth_cache_follower) =
        wiring::services(&database, notifications.clone(), &chain, services_config)?;
    actix_web::rt::spawn(auth_cache_follower);
    let services = Arc::new(services);
    let events = services_config.events;
    let settings = ServeSettings {
        workers,
        shutdown_timeout: config.shutdown_timeout,
        mcp,
        console_url: services_config.console_url.clone(),
        console_trusted_proxies: config.console_trusted_proxies.clone(),
        metrics_token: config
            .metrics_token
            .as_ref()
            .map(|token| token.expose_secret().to_owned()),
        event_streams: SseSettings {
            retry: EVENT_STREAM_RETRY,
            keep_alive: events.keep_alive,
            buffer_bytes: events.stream_buffer_bytes,
            stall: events.stream_stall,
            lifetime: events.stream_lifetime,
        },
    };
    let server = http_api::serve(
        listener,
        services.clone(),
        Arc::new(database),
        notifications,
        settings,
        registry,
    )
    .map_err(|error| anyhow::anyhow!("serving on BIND_ADDR {}: {error}", config.bind_addr))?;
    tracing::info!(
        %address,
        chain = services_config.chain.describe(),
        email = services_config.email.describe(),
        sms = services_config.sms.describe(),
        "agent-runtime {} serving on http://{address} (API description at /docs)",
        env!("CARGO_PKG_VERSION"),
    );
    actix_web::rt::spawn(stop_on_signal(server.handle(), jobs.stopper(), services));
    server.await?;
    jobs.stop().await;
    tracing::info!("stopped");
    Ok(())
}

/// On SIGTERM or SIGINT (Ctrl-C): the jobs finish the step in hand and stop; waits for codes are
/// answered 408 at once; the server stops accepting and lets requests in flight finish within
/// `SHUTDOWN_TIMEOUT_SECS`.
async fn stop_on_signal(server: ServerHandle, jobs: Stopper, services: Arc<Services>) {
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
    services.shut_down();
    server.stop(true).await;
}
