//! `agent-runtime serve`: the HTTP API and the background jobs, stopped together on a signal.

use std::net::{SocketAddr, TcpListener};
use std::num::NonZeroUsize;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use actix_http::HttpService;
use actix_server::{Server, ServerHandle};
use actix_service::{fn_factory, fn_service, map_config, Service, ServiceFactory};
use actix_web::dev::AppConfig;
use actix_web::middleware::from_fn;
use actix_web::rt::net::TcpStream;
use actix_web::{web, App};
use http_api::long_poll;
use http_api::{ApiState, Metrics, RenderedPages, RENDERED_PAGES_BUDGET_BYTES};
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

/// The HTTP server: each new connection goes to actix-web, unless it opens with a whole, plain
/// wait for a code, which `long_poll` serves lean (decision 0029).
fn http_server(
    listener: TcpListener,
    workers: usize,
    state: web::Data<ApiState>,
    shutdown_timeout: Duration,
) -> std::io::Result<Server> {
    let local_addr = listener.local_addr()?;
    let builder = Server::build();
    let stopping = builder.graceful_shutdown_signal();
    Ok(builder
        .workers(workers)
        .shutdown_timeout(shutdown_timeout.as_secs())
        .disable_signals()
        .listen("agent-runtime", listener, move || {
            let app_state = state.clone();
            let stopping = stopping.clone();
            // actix-web's HttpServer, which this replaces, with its defaults: idle connections
            // close as soon as a graceful stop begins.
            let full_stack = HttpService::build()
                .graceful_shutdown_signal(move || {
                    let stopping = stopping.clone();
                    async move { stopping.notified().await }
                })
                .client_request_timeout(long_poll::REQUEST_HEAD_TIMEOUT)
                .client_disconnect_timeout(Duration::from_secs(1))
                .local_addr(local_addr)
                .finish(map_config(
                    App::new()
                        .wrap(from_fn(http_api::telemetry_middleware))
                        .configure(http_api::configure(app_state)),
                    |_| AppConfig::default(),
                ))
                .tcp();
            let state = state.clone();
            fn_factory(move || {
                let full_stack = full_stack.new_service(());
                let state = state.clone();
                async move {
                    let full_stack = Rc::new(full_stack.await?);
                    Ok::<_, ()>(fn_service(move |mut stream: TcpStream| {
                        let full_stack = Rc::clone(&full_stack);
                        let state = state.clone();
                        async move {
                            match long_poll::take_wait(&mut stream).await {
                                Some(wait) => {
                                    long_poll::serve_wait(stream, wait, state).await;
                                    Ok(())
                                }
                                None => full_stack.call(stream).await,
                            }
                        }
                    }))
                }
            })
        })?
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
