//! `agentctl policy`: the spend policy of an agent's wallet.

use anyhow::Context as _;
use api_types::SpendPolicyOut;
use clap::{Args, Subcommand};
use domain::{AgentId, Allowlist, AllowlistChange, AtomicAmount, EvmAddress, PolicyChange};
use serde_json::{json, Value};

use crate::{Context, ATOMIC_UNITS};

#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Change the spend policy; options left out keep their value.
    #[command(after_help = ATOMIC_UNITS)]
    Set(PolicySetArgs),
    /// Show the spend policy in force.
    Show { agent_id: AgentId },
}

#[derive(Args)]
pub struct PolicySetArgs {
    agent_id: AgentId,
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

pub async fn run(context: &Context, command: PolicyCommand) -> anyhow::Result<Value> {
    let policies = context.services().await?.operator.policies;
    let policy = match command {
        PolicyCommand::Show { agent_id } => policies.show(agent_id).await?,
        PolicyCommand::Set(args) => {
            let change = policy_change(&args)?;
            policies.set(args.agent_id, change).await?
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
