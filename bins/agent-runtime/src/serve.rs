//! `agent-runtime serve`: the HTTP API and the background jobs, stopped together on a signal.

use std::net::{SocketAddr, TcpListener};
use std::num::NonZeroUsize;
use std::sync::Arc;

use actix_web::dev::ServerHandle;
use actix_web::web;
use console::Console;
use http_api::{
    ApiState, Metrics, RenderedPages, RenderedPolicies, StreamSettings, WebhookGate,
    RENDERED_PAGES_BUDGET_BYTES, RENDERED_POLICIES_BUDGET_BYTES,
};
use mcp::{AllowedHosts, McpEndpoint, McpSettings};
use prometheus::Registry;
use runtime::config::ServerConfig;
use runtime::jobs::{
    AttachmentSweepJob, EventRetentionJob, ExecutorJob, ExpiryJob, OutboxJob, Stopper, Supervisor,
    WebhookJob,
};
use runtime::wiring;
use secrecy::ExposeSecret;
use tokio::signal::unix::{signal, SignalKind};
use url::Url;

/// Takes the listening socket first, so a taken port fails at once, before any migration, with
/// the setting to change in the message.
fn listen(bind_addr: SocketAddr) -> anyhow::Result<TcpListener> {
    TcpListener::bind(bind_addr).map_err(|error| {
        anyhow::anyhow!(
            "cannot listen on BIND_ADDR {bind_addr}: {error}; set BIND_ADDR to a free address"
        )
    })
}

/// How often events past their retention are looked for.
const EVENT_RETENTION_INTERVAL: std::time::Duration = std::time::Duration::from_secs(600);
/// How often due webhook deliveries are looked for besides the wake-up each queued one sends:
/// retries come due without one.
const WEBHOOK_POLL_INTERVAL: std::time::Duration = std::time::Duration::from_millis(500);

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
    let mcp_settings = mcp_settings(&config)?;
    let workers = http_workers();
    // A pool per worker: the connections a worker uses are driven by its own thread, with no
    // wake-up of another thread for each query (decision 0035).
    config.database.pool.shards = workers;
    let database = wiring::open_database(&config.database).await?;
    let services_config = &config.services;
    wiring::check_master_key(&database, &services_config.provisioning).await?;
    let registry = Registry::new();
    let mut jobs = Supervisor::new(&registry)?;
    jobs.spawn(
        ExpiryJob(wiring::intent_expiry(&database, &services_config.intents)),
        services_config.intents.expiry_interval,
    );
    if let Some((sweep, interval)) = wiring::attachment_sweep(&database, &services_config.email) {
        jobs.spawn(AttachmentSweepJob(sweep), interval);
    }
    let chain = wiring::chain(&database, &services_config.chain)?;
    if services_config.intents.executor_enabled {
        jobs.spawn(
            ExecutorJob(wiring::executor(
                &database,
                &chain,
                &services_config.provisioning,
                &services_config.intents,
            )),
            services_config.intents.executor_interval,
        );
    } else {
        tracing::info!("EXECUTOR_ENABLED=false: confirmed intents are left to other instances");
    }
    if services_config.email.outbox_enabled {
        jobs.spawn(
            OutboxJob(wiring::outbox_worker(&database, &services_config.email)?),
            services_config.email.outbox_interval,
        );
    } else {
        tracing::info!("EMAIL_OUTBOX_ENABLED=false: queued mail is left to other instances");
    }
    let events = services_config.events;
    jobs.spawn(
        EventRetentionJob {
            log: wiring::event_log(&database),
            kept_for: events.retention,
        },
        EVENT_RETENTION_INTERVAL,
    );
    let notifications = wiring::notification_hub(&config.database);
    if events.webhooks.enabled {
        jobs.spawn_woken(
            WebhookJob::new(
                Arc::new(wiring::webhook_worker(&database, &events.webhooks)?),
                events.webhooks.concurrency,
            ),
            WEBHOOK_POLL_INTERVAL,
            Some(WebhookJob::woken_by(notifications.clone())),
        );
    } else {
        tracing::info!(
            "WEBHOOK_DELIVERY_ENABLED=false: webhook deliveries are left to other instances"
        );
    }
    let (services, auth_cache_follower) =
        wiring::services(&database, notifications, &chain, services_config)?;
    actix_web::rt::spawn(auth_cache_follower);
    let services = Arc::new(services);
    let mcp = McpEndpoint::new(services.clone(), mcp_settings);
    let console = web::Data::new(Console::new(
        services.clone(),
        &config.services.console_url,
        config.console_trusted_proxies.clone(),
    ));
    let state = web::Data::new(ApiState {
        services,
        mcp,
        console,
        database: Arc::new(database),
        first_pages: RenderedPages::new(RENDERED_PAGES_BUDGET_BYTES),
        policies: RenderedPolicies::policies(RENDERED_POLICIES_BUDGET_BYTES),
        metrics: Metrics::new(registry),
        metrics_token: config
            .metrics_token
            .as_ref()
            .map(|token| token.expose_secret().to_owned()),
        inbound_mail_gate: WebhookGate::inbound_mail(),
        twilio_gate: WebhookGate::twilio(),
        event_streams: StreamSettings {
            buffer_bytes: events.stream_buffer_bytes,
            stall: events.stream_stall,
            lifetime: events.stream_lifetime,
        },
    });
    let server = http_api::server(listener, workers, state.clone(), config.shutdown_timeout)
        .map_err(|error| anyhow::anyhow!("serving on BIND_ADDR {}: {error}", config.bind_addr))?;
    tracing::info!(
        %address,
        chain = services_config.chain.describe(),
        email = services_config.email.describe(),
        sms = services_config.sms.describe(),
        "agent-runtime {} serving on http://{address} (API description at /docs)",
        env!("CARGO_PKG_VERSION"),
    );
    actix_web::rt::spawn(stop_on_signal(server.handle(), jobs.stopper(), state));
    server.await?;
    jobs.stop().await;
    tracing::info!("stopped");
    Ok(())
}

/// `/mcp`'s settings: the public URL (the address listened on when `PUBLIC_BASE_URL` is not set)
/// and the hosts it answers under (`MCP_ALLOWED_HOSTS`, else the public URL's host and the
/// loopback names).
fn mcp_settings(config: &ServerConfig) -> anyhow::Result<McpSettings> {
    let public_base_url = config.services.console_url.clone();
    let names = match &config.mcp_allowed_hosts {
        Some(names) if names.is_empty() => {
            anyhow::bail!("MCP_ALLOWED_HOSTS names no host; leave it unset for the default")
        }
        Some(names) => names.clone(),
        None => Url::parse(&public_base_url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_owned))
            .into_iter()
            .chain(AllowedHosts::LOOPBACK.map(str::to_owned))
            .collect(),
    };
    let allowed_hosts = AllowedHosts::new(&names).map_err(|name| {
        anyhow::anyhow!(
            "MCP_ALLOWED_HOSTS is invalid: {name:?} is not a host name (names only, without \
             scheme or port)"
        )
    })?;
    Ok(McpSettings {
        allowed_hosts,
        public_base_url,
    })
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
    state.services.shut_down();
    server.stop(true).await;
}
