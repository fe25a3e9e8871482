//! The agent-runtime server: reads its configuration, migrates, and serves the HTTP API until
//! SIGTERM or Ctrl-C, finishing requests in flight before it exits.

use std::io::IsTerminal;
use std::net::{SocketAddr, TcpListener};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpServer};
use agent_runtime::config::{DatabaseConfig, Environment, LogFormat, ServerConfig};
use agent_runtime::{api_page, wiring};
use app::{Executor, IntentExpiry};
use clap::{Parser, Subcommand};
use http_api::{ApiDoc, ApiState, Metrics};
use tracing_subscriber::EnvFilter;
use utoipa::OpenApi;

#[derive(Parser)]
#[command(
    name = "agent-runtime",
    version,
    about = "The agent-runtime HTTP server"
)]
struct Cli {
    /// Do not apply pending migrations at start-up (same as MIGRATE_ON_START=false).
    #[arg(long, global = true)]
    no_migrate: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the HTTP API (the default).
    Serve,
    /// Apply pending migrations and exit.
    Migrate,
    /// Print the OpenAPI description (or, with --markdown, the API page rendered from it) and exit.
    Openapi {
        /// Print the readable API page (docs/api.md) instead of the JSON document.
        #[arg(long)]
        markdown: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let env = Environment::from_process();
    let outcome = match cli.command.unwrap_or(Command::Serve) {
        Command::Openapi { markdown } => {
            let document = ApiDoc::openapi()
                .to_pretty_json()
                .expect("the API description serializes");
            if markdown {
                let value = serde_json::from_str(&document).expect("utoipa writes valid JSON");
                print!("{}", api_page::render(&value));
            } else {
                println!("{document}");
            }
            Ok(())
        }
        Command::Migrate => DatabaseConfig::from_env(&env)
            .map_err(|error| anyhow::anyhow!("configuration: {error}"))
            .and_then(|config| runtime()?.block_on(migrate(config))),
        Command::Serve => ServerConfig::from_env(&env)
            .map_err(|error| anyhow::anyhow!("configuration: {error}"))
            .and_then(|mut config| {
                config.database.migrate_on_start &= !cli.no_migrate;
                let _flush_logs_on_exit = init_tracing(config.log_format);
                actix_web::rt::System::new().block_on(serve(config))
            }),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("agent-runtime: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// Logs go to stdout through a writer thread, so request workers never wait on the write. The
/// writer blocks rather than drops when it falls behind: no log line is lost. Dropping the
/// returned guard flushes what is still queued.
fn init_tracing(format: LogFormat) -> tracing_appender::non_blocking::WorkerGuard {
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .finish(std::io::stdout());
    // PostgreSQL NOTICEs (e.g. "relation already exists, skipping" at every migration check) are
    // chatter, not events; RUST_LOG can still ask for them.
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,tokio_postgres::connection=warn"));
    // Colour codes only help a person at a terminal; in a file or a log collector they are noise.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::stdout().is_terminal())
        .with_writer(writer);
    match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .init(),
        LogFormat::Text => builder.init(),
    }
    guard
}

async fn migrate(config: DatabaseConfig) -> anyhow::Result<()> {
    let applied = wiring::migrate(&config).await?;
    println!("{}", serde_json::json!({ "applied": applied }));
    Ok(())
}

/// Expires stale intents now and then, for as long as the server runs. Every instance sweeps;
/// skipped row locks keep them from doing the same work twice.
fn spawn_expiry(expiry: IntentExpiry, every: Duration) {
    actix_web::rt::spawn(async move {
        let mut ticker = tokio::time::interval(every);
        loop {
            ticker.tick().await;
            match expiry.sweep().await {
                Ok(expired) if !expired.is_empty() => {
                    tracing::info!(
                        count = expired.len(),
                        "expired transfer intents left pending"
                    )
                }
                Ok(_) => {}
                Err(error) => {
                    tracing::warn!(%error, "expiring pending transfer intents failed; retrying later")
                }
            }
        }
    });
}

/// Executes confirmed intents for as long as the server runs: submits every confirmed intent,
/// then follows the submitted ones. Several instances may run it side by side.
fn spawn_executor(executor: Executor, every: Duration) {
    actix_web::rt::spawn(async move {
        let mut ticker = tokio::time::interval(every);
        loop {
            ticker.tick().await;
            loop {
                match executor.submit_next().await {
                    Ok(true) => continue,
                    Ok(false) => break,
                    Err(error) => {
                        tracing::warn!(%error, "submitting a confirmed intent failed; retrying later");
                        break;
                    }
                }
            }
            if let Err(error) = executor.follow_submitted().await {
                tracing::warn!(%error, "following submitted intents failed; retrying later");
            }
        }
    });
}

/// Takes the listening socket first, so a taken port fails at once, before any migration, with
/// the setting to change in the message.
fn listen(bind_addr: SocketAddr) -> anyhow::Result<TcpListener> {
    TcpListener::bind(bind_addr).map_err(|error| {
        anyhow::anyhow!(
            "cannot listen on BIND_ADDR {bind_addr}: {error}; set BIND_ADDR to a free address"
        )
    })
}

async fn serve(config: ServerConfig) -> anyhow::Result<()> {
    let listener = listen(config.bind_addr)?;
    let database = wiring::open_database(&config.database).await?;
    spawn_expiry(
        wiring::intent_expiry(&database, &config.intents),
        config.intents.expiry_interval,
    );
    let chain = wiring::chain(&database, &config.chain)?;
    if config.intents.executor_enabled {
        spawn_executor(
            wiring::executor(&database, &chain, &config.provisioning),
            config.intents.executor_interval,
        );
    } else {
        tracing::info!("EXECUTOR_ENABLED=false: confirmed intents are left to other instances");
    }
    let state = web::Data::new(ApiState {
        agents: wiring::agent_service(&database),
        wallets: wiring::wallet_service(
            &database,
            &chain,
            &config.provisioning,
            config.cursors.codec(),
        ),
        database: Arc::new(database),
        metrics: Metrics::new(),
    });
    let server = HttpServer::new(move || {
        App::new()
            .wrap(from_fn(http_api::telemetry_middleware))
            .configure(http_api::configure(state.clone()))
    })
    .shutdown_timeout(config.shutdown_timeout.as_secs())
    .listen(listener)
    .map_err(|error| anyhow::anyhow!("serving on BIND_ADDR {}: {error}", config.bind_addr))?;
    for address in server.addrs() {
        tracing::info!(
            %address,
            chain = config.chain.describe(),
            "agent-runtime {} serving on http://{address} (API description at /docs)",
            env!("CARGO_PKG_VERSION"),
        );
    }
    server.run().await?;
    tracing::info!("stopped");
    Ok(())
}
