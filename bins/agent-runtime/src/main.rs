//! The agent-runtime server: reads its configuration, migrates, and serves the HTTP API until
//! SIGTERM or Ctrl-C, finishing requests in flight and the background jobs' steps in hand.

mod serve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use runtime::config::{DatabaseConfig, Environment, ServerConfig};
use runtime::{logging, wiring};

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
            print!("{}", http_api::api_description(markdown));
            Ok(())
        }
        Command::Migrate => DatabaseConfig::from_env(&env)
            .map_err(|error| anyhow::anyhow!("configuration: {error}"))
            .and_then(|config| current_thread()?.block_on(migrate(config))),
        Command::Serve => ServerConfig::from_env(&env)
            .map_err(|error| anyhow::anyhow!("configuration: {error}"))
            .and_then(|mut config| {
                config.database.migrate_on_start &= !cli.no_migrate;
                let _flush_logs_on_exit = logging::init(config.log_format);
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

async fn migrate(config: DatabaseConfig) -> anyhow::Result<()> {
    let applied = wiring::migrate(&config).await?;
    println!("{}", serde_json::json!({ "applied": applied }));
    Ok(())
}
