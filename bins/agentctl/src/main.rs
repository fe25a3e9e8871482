//! `agentctl`: the control plane of agent-runtime, on the use cases and the database directly.
//! Prints JSON on stdout; errors go to stderr with a non-zero exit status. One module per
//! command group.

mod agents;
mod codes;
mod events;
mod intents;
mod keys;
mod operators;
mod policy;
mod sandbox;
mod wallets;
mod webhooks;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context as _;
use app::{Operator, OperatorName, Services};
use clap::{Parser, Subcommand};
use runtime::config::{DatabaseConfig, Environment, ProvisioningConfig, ServicesConfig};
use runtime::wiring::{self, Database};
use serde_json::{json, Value};

/// Said wherever an amount is typed: the most common mistake is to type USDC, not atomic units.
const ATOMIC_UNITS: &str = "Amounts are integers in atomic units: USDC has 6 decimals, so \
1 USDC = 1000000 and 100 USDC = 100000000 (ETH amounts are in wei).";

#[derive(Parser)]
#[command(
    name = "agentctl",
    version,
    about = "Control plane of agent-runtime (reads DATABASE_URL)",
    after_help = ATOMIC_UNITS
)]
struct Cli {
    /// Do not apply pending migrations first (same as MIGRATE_ON_START=false).
    #[arg(long, global = true)]
    no_migrate: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create, inspect, deactivate agents and rotate their keys.
    #[command(subcommand)]
    Agents(agents::AgentsCommand),
    /// List, make and revoke an agent's keys.
    #[command(subcommand)]
    Keys(keys::KeysCommand),
    /// Set or show the spend policy of an agent's wallet.
    #[command(subcommand)]
    Policy(policy::PolicyCommand),
    /// List transfer intents; confirm or reject pending ones; resolve a stuck submitted one;
    /// export the receipts of executed ones.
    #[command(subcommand)]
    Intents(intents::IntentsCommand),
    /// Act on the sandbox providers.
    #[command(subcommand)]
    Sandbox(sandbox::SandboxCommand),
    /// Verification codes in text, as inbound mail and SMS get them.
    #[command(subcommand)]
    Codes(codes::CodesCommand),
    /// Maintain wallet keys.
    #[command(subcommand)]
    Wallets(wallets::WalletsCommand),
    /// Read an agent's event log.
    #[command(subcommand)]
    Events(events::EventsCommand),
    /// List an agent's webhook endpoints; show, replay or disable one.
    #[command(subcommand)]
    Webhooks(webhooks::WebhooksCommand),
    /// Invite, list and disable the operators of the console.
    #[command(subcommand)]
    Operators(operators::OperatorsCommand),
    /// Apply pending migrations and exit.
    Migrate,
}

/// Who runs this `agentctl`, as the decisions it takes record it: the OS user who ran it (the
/// one behind `sudo` first, since operators run it from a root shell) when it is a name an
/// operator may go by, else the CLI unnamed.
fn operator() -> Operator {
    let user = ["SUDO_USER", "USER", "LOGNAME"]
        .into_iter()
        .filter_map(|name| std::env::var(name).ok())
        .find_map(|user| OperatorName::parse(&user).ok());
    Operator::Cli { user }
}

/// What a command prints: JSON (pretty), or a document in its own format (a CSV export).
pub enum Output {
    Json(Value),
    Text(String),
}

/// What every command group reads: the environment and the database settings.
pub struct Context {
    env: Environment,
    /// `--no-migrate`: skip pending migrations whatever MIGRATE_ON_START says.
    no_migrate: bool,
}

impl Context {
    fn provisioning(&self) -> anyhow::Result<ProvisioningConfig> {
        ProvisioningConfig::from_env(&self.env).context("configuration")
    }

    /// Read when a command needs the database, so commands without one run without it.
    pub(crate) fn database_config(&self) -> anyhow::Result<DatabaseConfig> {
        let mut config = DatabaseConfig::from_env(&self.env).context("configuration")?;
        config.migrate_on_start &= !self.no_migrate;
        Ok(config)
    }

    async fn database(&self) -> anyhow::Result<Database> {
        wiring::open_database(&self.database_config()?).await
    }

    /// The use cases, built as the server builds them.
    async fn services(&self) -> anyhow::Result<Services> {
        let config = ServicesConfig::for_control_plane(&self.env).context("configuration")?;
        let database = self.database().await?;
        let chain = wiring::chain(&database, &config.chain)?;
        let hub = wiring::notification_hub(&self.database_config()?);
        // The cache of authenticated keys needs no follower here: agentctl authenticates none.
        let (services, _auth_cache_follower) = wiring::services(&database, hub, &chain, &config)?;
        Ok(services)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("agentctl: starting the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(output) => {
            let text = match output {
                Output::Json(value) => {
                    serde_json::to_string_pretty(&value).expect("JSON values serialize") + "\n"
                }
                Output::Text(text) => text,
            };
            // A closed or full stdout must not pass for success: it may have swallowed a key
            // that is printed only once.
            match write!(std::io::stdout().lock(), "{text}") {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("agentctl: writing the output failed: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(error) => {
            eprintln!("agentctl: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<Output> {
    let context = Context {
        env: Environment::from_process(),
        no_migrate: cli.no_migrate,
    };
    let printed = match cli.command {
        Command::Intents(command) => return intents::run(&context, command).await,
        Command::Codes(command) => codes::run(command),
        Command::Migrate => Ok(json!({
            "applied": wiring::migrate(&context.database_config()?).await?
        })),
        Command::Agents(command) => agents::run(&context, command).await,
        Command::Keys(command) => keys::run(&context, command).await,
        Command::Policy(command) => policy::run(&context, command).await,
        Command::Sandbox(command) => sandbox::run(&context, command).await,
        Command::Wallets(command) => wallets::run(&context, command).await,
        Command::Events(command) => events::run(&context, command).await,
        Command::Webhooks(command) => webhooks::run(&context, command).await,
        Command::Operators(command) => operators::run(&context, command).await,
    };
    printed.map(Output::Json)
}
