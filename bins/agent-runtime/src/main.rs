//! The agent-runtime server: reads its configuration, migrates, and serves the HTTP API until
//! SIGTERM or Ctrl-C, finishing requests in flight and the background jobs' steps in hand.

mod serve;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use http_api::ApiDoc;
use runtime::config::{DatabaseConfig, Environment, LogFormat, ServerConfig};
use runtime::wiring;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::EnvFilter;
use utoipa::OpenApi;

/// glibc's allocator spent a sixth of the server's time on a page of mail, much of it merging
/// freed blocks; mimalloc's per-thread pages suit one allocation-heavy request per thread.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
            let document = ApiDoc::openapi();
            if markdown {
                let value =
                    serde_json::to_value(&document).expect("the API description serializes");
                print!("{}", http_api::render_api_page(&value));
            } else {
                let json = document
                    .to_pretty_json()
                    .expect("the API description serializes");
                println!("{json}");
            }
            Ok(())
        }
        Command::Migrate => DatabaseConfig::from_env(&env)
            .map_err(|error| anyhow::anyhow!("configuration: {error}"))
            .and_then(|config| current_thread()?.block_on(migrate(config))),
        Command::Serve => ServerConfig::from_env(&env)
            .map_err(|error| anyhow::anyhow!("configuration: {error}"))
            .and_then(|mut config| {
                config.database.migrate_on_start &= !cli.no_migrate;
                let _flush_logs_on_exit = init_tracing(config.log_format);
                actix_web::rt::System::new().block_on(serve::serve(config))
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

fn current_thread() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// Logs go to stdout through a writer thread, so request workers never wait on the write. The
/// writer blocks rather than drops when it falls behind: no log line is lost. It writes what has
/// queued up in one system call and flushes whenever the queue runs dry, so no line waits for
/// more to come (one write per line cost a fifth of a database read's CPU, decision 0035).
/// Dropping the returned guard flushes what is still queued.
fn init_tracing(format: LogFormat) -> tracing_appender::non_blocking::WorkerGuard {
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .finish(std::io::BufWriter::with_capacity(
            64 * 1024,
            std::io::stdout(),
        ));
    // PostgreSQL NOTICEs (e.g. "relation already exists, skipping" at every migration check) are
    // chatter, not events, and so are the MCP SDK's three lines for every stateless request (its
    // service started, its input ended, its service ended); RUST_LOG can still ask for them.
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,tokio_postgres::connection=warn,rmcp=warn"));
    // Use cases, store and chain calls are debug spans: free at `info`, and at `debug` each one
    // logs its duration when it closes, so a request's lines show where its time went.
    let span_events = match filter.max_level_hint() {
        Some(level) if level >= LevelFilter::DEBUG => FmtSpan::CLOSE,
        _ => FmtSpan::NONE,
    };
    // Colour codes only help a person at a terminal; in a file or a log collector they are noise.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_span_events(span_events)
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
