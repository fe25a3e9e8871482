//! `agentctl`: the control plane of agent-runtime, on the use cases and the database directly.
//! Prints JSON on stdout; errors go to stderr with a non-zero exit status.

use std::io::Write;
use std::process::ExitCode;

use agent_runtime::config::{
    ChainConfig, DatabaseConfig, Environment, IntentConfig, ProvisioningConfig,
};
use agent_runtime::wiring;
use anyhow::Context;
use app::{ControlPlane, CreateAgent, IssuedKey};
use clap::{Args, Parser, Subcommand};
use domain::{
    AgentId, Allowlist, AllowlistChange, AtomicAmount, EvmAddress, IntentStatus, Label,
    PolicyChange,
};
use http_api::dto::{AgentResponse, SpendPolicyOut, TransferIntentOut};
use ports::{IntentFilter, TransferIntentRecord};
use serde_json::{json, Value};
use uuid::Uuid;

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
    Agents(AgentsCommand),
    /// Set or show the spend policy of an agent's wallet.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// List transfer intents; confirm or reject pending ones.
    #[command(subcommand)]
    Intents(IntentsCommand),
    /// Act on the sandbox providers.
    #[command(subcommand)]
    Sandbox(SandboxCommand),
    /// Maintain wallet keys.
    #[command(subcommand)]
    Wallets(WalletsCommand),
    /// Apply pending migrations and exit.
    Migrate,
}

#[derive(Subcommand)]
enum AgentsCommand {
    /// Create an agent; prints its key, which is never shown again.
    Create {
        #[arg(long)]
        label: Option<String>,
        /// The sponsor (owner account) the agent belongs to; created if new.
        #[arg(long, default_value = "default")]
        sponsor: String,
        /// Provision an email inbox.
        #[arg(long)]
        email: bool,
        /// Provision a receive-only phone number.
        #[arg(long)]
        phone: bool,
        /// Provision a wallet on Base.
        #[arg(long)]
        wallet: bool,
    },
    /// List all agents, oldest first.
    List,
    /// Show one agent.
    Show { id: Uuid },
    /// Deactivate an agent; its key stops working at once.
    Deactivate { id: Uuid },
    /// Issue a new key; the old one stops working at once.
    RotateKey { id: Uuid },
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Change the spend policy; options left out keep their value.
    #[command(after_help = ATOMIC_UNITS)]
    Set(PolicySetArgs),
    /// Show the spend policy in force.
    Show { agent_id: Uuid },
}

#[derive(Subcommand)]
enum IntentsCommand {
    /// List intents, newest first.
    List {
        #[arg(long)]
        agent: Option<Uuid>,
        /// pending_confirmation, confirmed, submitted, executed, failed, rejected or expired.
        #[arg(long)]
        status: Option<String>,
    },
    /// Show one intent.
    Show { id: Uuid },
    /// Approve a pending intent for execution on chain.
    Confirm { id: Uuid },
    /// Refuse a pending intent; its amount is released from the daily limit.
    Reject {
        id: Uuid,
        #[arg(long)]
        reason: Option<String>,
    },
    /// Expire intents pending longer than INTENT_PENDING_TTL_SECS (default 24 h) or --pending-for-secs.
    Expire {
        #[arg(long, value_name = "SECONDS")]
        pending_for_secs: Option<u64>,
    },
}

#[derive(Subcommand)]
enum WalletsCommand {
    /// Seal every wallet key under WALLET_MASTER_KEY that is still sealed under
    /// WALLET_MASTER_KEY_PREVIOUS (the last step of a master key rotation; safe to repeat).
    Reseal,
}

#[derive(Subcommand)]
enum SandboxCommand {
    /// Credit USDC (or, with --native, ETH) to an address on the sandbox chain.
    #[command(after_help = ATOMIC_UNITS)]
    Fund {
        address: String,
        /// Amount in atomic units: 100 USDC is 100000000 (wei with --native).
        amount: String,
        #[arg(long)]
        native: bool,
    },
}

#[derive(Args)]
struct PolicySetArgs {
    agent_id: Uuid,
    /// Largest amount of one transfer in atomic units (25 USDC is 25000000), or `none` to
    /// remove the limit.
    #[arg(long, value_name = "N|none")]
    max_per_tx: Option<String>,
    /// Largest total over a rolling 24 hours in atomic units (100 USDC is 100000000), or `none`
    /// to remove the limit.
    #[arg(long, value_name = "N|none")]
    max_daily: Option<String>,
    /// Add a recipient to the allowlist (repeatable); creates the allowlist if there is none.
    #[arg(long = "allow", value_name = "ADDRESS")]
    allow: Vec<String>,
    /// Remove the allowlist (any recipient allowed); with --allow, replace it instead.
    #[arg(long)]
    clear_allowlist: bool,
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
            let text = serde_json::to_string_pretty(&output).expect("JSON values serialize");
            // A closed or full stdout must not pass for success: it may have swallowed a key
            // that is printed only once.
            match writeln!(std::io::stdout().lock(), "{text}") {
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

async fn run(cli: Cli) -> anyhow::Result<Value> {
    let env = Environment::from_process();
    let mut database = DatabaseConfig::from_env(&env).context("configuration")?;
    database.migrate_on_start &= !cli.no_migrate;
    match cli.command {
        Command::Migrate => Ok(json!({ "applied": wiring::migrate(&database).await? })),
        Command::Agents(command) => agents(&control_plane(&env, &database).await?, command).await,
        Command::Policy(command) => policy(&control_plane(&env, &database).await?, command).await,
        Command::Intents(command) => intents(&env, &database, command).await,
        Command::Wallets(WalletsCommand::Reseal) => reseal_wallet_keys(&env, &database).await,
        Command::Sandbox(SandboxCommand::Fund {
            address,
            amount,
            native,
        }) => {
            let holder =
                EvmAddress::parse(&address).with_context(|| format!("address {address:?}"))?;
            let amount =
                AtomicAmount::parse(&amount).with_context(|| format!("amount {amount:?}"))?;
            if ChainConfig::from_env(&env)
                .context("configuration")?
                .rpc_url
                .is_some()
            {
                anyhow::bail!(
                    "sandbox fund credits the sandbox chain only; EVM_RPC_URL names a real chain"
                );
            }
            let provisioning = ProvisioningConfig::from_env(&env).context("configuration")?;
            let token = (!native).then_some(provisioning.usdc_token_address);
            let chain = wiring::sandbox_chain(&wiring::open_database(&database).await?);
            let balance = chain.fund(&holder, token.as_ref(), amount).await?;
            Ok(json!({
                "address": holder.to_string(),
                "asset": if native { "ETH" } else { "USDC" },
                "token_address": token.map(|t| t.to_string()),
                "balance_atomic": balance.to_string(),
            }))
        }
    }
}

async fn intents(
    env: &Environment,
    database: &DatabaseConfig,
    command: IntentsCommand,
) -> anyhow::Result<Value> {
    let one = |intent: TransferIntentRecord| operator_view(&intent);
    Ok(match command {
        IntentsCommand::Expire { pending_for_secs } => {
            let mut config = IntentConfig::from_env(env).context("configuration")?;
            if let Some(seconds) = pending_for_secs {
                config.pending_ttl = std::time::Duration::from_secs(seconds);
            }
            let expiry = wiring::intent_expiry(&wiring::open_database(database).await?, &config);
            json!(expiry
                .sweep()
                .await?
                .iter()
                .map(operator_view)
                .collect::<Vec<_>>())
        }
        IntentsCommand::List { agent, status } => {
            let status = status
                .map(|name| {
                    IntentStatus::parse(&name)
                        .with_context(|| format!("--status {name:?} is not an intent status"))
                })
                .transpose()?;
            let filter = IntentFilter {
                agent: agent.map(AgentId),
                status,
            };
            let listed = control_plane(env, database)
                .await?
                .list_intents(filter)
                .await?;
            json!(listed.iter().map(operator_view).collect::<Vec<_>>())
        }
        IntentsCommand::Show { id } => {
            one(control_plane(env, database).await?.show_intent(id).await?)
        }
        IntentsCommand::Confirm { id } => one(control_plane(env, database)
            .await?
            .confirm_intent(id)
            .await?),
        IntentsCommand::Reject { id, reason } => one(control_plane(env, database)
            .await?
            .reject_intent(id, reason)
            .await?),
    })
}

/// The API's view of an intent plus what only an operator needs: whose it is.
fn operator_view(intent: &TransferIntentRecord) -> Value {
    let mut view = json!(TransferIntentOut::from(intent));
    view["agent_id"] = json!(intent.agent_id.0);
    view["wallet_id"] = json!(intent.wallet_id);
    view["idempotency_key"] = json!(intent.idempotency_key);
    view
}

async fn reseal_wallet_keys(env: &Environment, database: &DatabaseConfig) -> anyhow::Result<Value> {
    let provisioning = ProvisioningConfig::from_env(env).context("configuration")?;
    if provisioning.previous_wallet_master_key.is_none() {
        anyhow::bail!(
            "set WALLET_MASTER_KEY_PREVIOUS to the master key being replaced \
             (and WALLET_MASTER_KEY to the new one)"
        );
    }
    let rotation =
        wiring::wallet_key_rotation(&wiring::open_database(database).await?, &provisioning);
    let report = rotation.reseal_all().await?;
    let counts = json!({
        "resealed": report.resealed,
        "already_current": report.already_current,
        "changed_meanwhile": report.changed_meanwhile,
    });
    if !report.unopenable.is_empty() {
        let addresses: Vec<_> = report.unopenable.iter().map(ToString::to_string).collect();
        anyhow::bail!(
            "{counts}; {} wallet keys open under neither WALLET_MASTER_KEY nor \
             WALLET_MASTER_KEY_PREVIOUS: {}",
            addresses.len(),
            addresses.join(", ")
        );
    }
    Ok(counts)
}

async fn control_plane(
    env: &Environment,
    database: &DatabaseConfig,
) -> anyhow::Result<ControlPlane> {
    let provisioning = ProvisioningConfig::from_env(env).context("configuration")?;
    let database = wiring::open_database(database).await?;
    Ok(wiring::control_plane(&database, provisioning))
}

async fn agents(plane: &ControlPlane, command: AgentsCommand) -> anyhow::Result<Value> {
    Ok(match command {
        AgentsCommand::Create {
            label,
            sponsor,
            email,
            phone,
            wallet,
        } => {
            let label = label
                .map(|label| Label::parse(&label))
                .transpose()
                .context("--label")?;
            let issued = plane
                .create_agent(CreateAgent {
                    sponsor,
                    label,
                    email,
                    phone,
                    wallet,
                })
                .await?;
            issued_key(&issued)
        }
        AgentsCommand::List => {
            let agents = plane.list_agents().await?;
            json!(agents.iter().map(AgentResponse::from).collect::<Vec<_>>())
        }
        AgentsCommand::Show { id } => {
            json!(AgentResponse::from(&plane.show_agent(AgentId(id)).await?))
        }
        AgentsCommand::Deactivate { id } => {
            json!(AgentResponse::from(
                &plane.deactivate_agent(AgentId(id)).await?
            ))
        }
        AgentsCommand::RotateKey { id } => issued_key(&plane.rotate_key(AgentId(id)).await?),
    })
}

/// The only place a key is ever printed: once, to the operator who asked for it.
fn issued_key(issued: &IssuedKey) -> Value {
    json!({ "agent_key": issued.key.expose(), "agent": AgentResponse::from(&issued.profile) })
}

async fn policy(plane: &ControlPlane, command: PolicyCommand) -> anyhow::Result<Value> {
    let policy = match command {
        PolicyCommand::Show { agent_id } => plane.show_policy(AgentId(agent_id)).await?,
        PolicyCommand::Set(args) => {
            let change = policy_change(&args)?;
            plane.set_policy(AgentId(args.agent_id), change).await?
        }
    };
    Ok(json!(SpendPolicyOut::from(&policy)))
}

fn policy_change(args: &PolicySetArgs) -> anyhow::Result<PolicyChange> {
    let limit =
        |flag: &str, raw: &Option<String>| -> anyhow::Result<Option<Option<AtomicAmount>>> {
            match raw.as_deref() {
                None => Ok(None),
                Some("none") => Ok(Some(None)),
                Some(digits) => AtomicAmount::parse(digits)
                    .map(|amount| Some(Some(amount)))
                    .with_context(|| format!("{flag} {digits:?}")),
            }
        };
    let allowed = args
        .allow
        .iter()
        .map(|address| EvmAddress::parse(address).with_context(|| format!("--allow {address:?}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let allowlist = match (args.clear_allowlist, allowed.is_empty()) {
        (false, true) => AllowlistChange::Keep,
        (false, false) => AllowlistChange::Extend(allowed),
        (true, true) => AllowlistChange::Remove,
        (true, false) => AllowlistChange::Replace(Allowlist::of(allowed)),
    };
    Ok(PolicyChange {
        max_per_tx: limit("--max-per-tx", &args.max_per_tx)?,
        max_daily: limit("--max-daily", &args.max_daily)?,
        allowlist,
    })
}
