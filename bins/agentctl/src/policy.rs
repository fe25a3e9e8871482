//! `agentctl policy`: the spend policy of an agent's wallet.

use anyhow::Context as _;
use api_types::SpendPolicyOut;
use app::PolicyError;
use clap::{Args, Subcommand};
use domain::{
    Actor, AgentId, Allowlist, AllowlistChange, ApprovalCount, AtomicAmount, EvmAddress,
    PolicyChange, PolicyChangeRefused, RecipientLimit, RecipientLimitsChange,
    MAX_APPROVALS_REQUIRED,
};
use serde_json::{json, Value};

use crate::{operator, Context, ATOMIC_UNITS};

#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Change the spend policy; options left out keep their value.
    #[command(after_help = ATOMIC_UNITS)]
    Set(Box<PolicySetArgs>),
    /// Show the spend policy in force with what each window it caps holds (`usage`).
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
    /// Largest total over a rolling 7 days in atomic units, or `none`.
    #[arg(long, value_name = "N|none")]
    max_weekly: Option<String>,
    /// Largest total over a rolling 30 days in atomic units, or `none`.
    #[arg(long, value_name = "N|none")]
    max_monthly: Option<String>,
    /// Caps for one recipient on top of the wallet's (repeatable): its largest transfer and its
    /// largest total over a rolling 24 hours, each in atomic units or `none`; `none:none`
    /// removes the recipient's caps. Other recipients keep theirs.
    #[arg(long = "recipient-limit", value_name = "ADDRESS:PER_TX:DAILY")]
    recipient_limits: Vec<String>,
    /// Remove every recipient's caps; with --recipient-limit, replace them instead.
    #[arg(long)]
    clear_recipient_limits: bool,
    /// Transfers at or under this amount are confirmed by the policy at creation, within
    /// --auto-confirm-daily (atomic units, or `none`).
    #[arg(long, value_name = "N|none")]
    auto_confirm_max: Option<String>,
    /// Largest total the policy confirms by itself over a rolling 24 hours (atomic units, or
    /// `none`).
    #[arg(long, value_name = "N|none")]
    auto_confirm_daily: Option<String>,
    /// Distinct operators who must approve a transfer above --approvals-above (2 to 5, or `none`
    /// for one).
    #[arg(long, value_name = "N|none")]
    approvals_required: Option<String>,
    /// The amount above which --approvals-required applies (atomic units), or `none` for every
    /// transfer.
    #[arg(long, value_name = "N|none")]
    approvals_above: Option<String>,
    /// Whether the wallet pays x402 challenges (`on` unless turned off).
    #[arg(long, value_name = "on|off", value_parser = ["on", "off"])]
    x402: Option<String>,
}

pub async fn run(context: &Context, command: PolicyCommand) -> anyhow::Result<Value> {
    let policies = context.services().await?.operator.policies;
    Ok(match command {
        PolicyCommand::Show { agent_id } => {
            let usage = policies.usage(agent_id).await?;
            json!(SpendPolicyOut::with_usage(&usage.policy, &usage.windows))
        }
        // The policy in force once set, with its usage (policy.md), as `show` prints it.
        PolicyCommand::Set(args) => {
            let change = policy_change(&args)?;
            policies
                .set(args.agent_id, change, &Actor::local(operator()))
                .await
                .map_err(policy_error)?;
            let usage = policies.usage(args.agent_id).await?;
            json!(SpendPolicyOut::with_usage(&usage.policy, &usage.windows))
        }
    })
}

/// The use case's refusal, with the flags of this CLI that set what it asks for.
fn policy_error(error: PolicyError) -> anyhow::Error {
    match error {
        PolicyError::Refused(PolicyChangeRefused::AutoConfirmWithoutDailyBound) => {
            anyhow::anyhow!(
                "{error}: give --auto-confirm-daily with --auto-confirm-max, or remove the tier \
                 with --auto-confirm-max none"
            )
        }
        other => other.into(),
    }
}

/// An amount in atomic units, or `none` for no limit.
fn amount_or_none(flag: &str, raw: &str) -> anyhow::Result<Option<AtomicAmount>> {
    match raw {
        "none" => Ok(None),
        digits => AtomicAmount::parse(digits)
            .map(Some)
            .with_context(|| format!("{flag} {digits:?}")),
    }
}

/// `ADDRESS:PER_TX:DAILY`, each amount in atomic units or `none`.
fn recipient_limit(raw: &str) -> anyhow::Result<RecipientLimit> {
    let flag = "--recipient-limit";
    let [address, per_tx, daily] = raw.split(':').collect::<Vec<_>>()[..] else {
        anyhow::bail!("{flag} {raw:?}: expected ADDRESS:PER_TX:DAILY");
    };
    Ok(RecipientLimit {
        address: EvmAddress::parse(address).with_context(|| format!("{flag} {raw:?}"))?,
        max_per_tx: amount_or_none(flag, per_tx)?,
        max_daily: amount_or_none(flag, daily)?,
    })
}

fn policy_change(args: &PolicySetArgs) -> anyhow::Result<PolicyChange> {
    let limit =
        |flag: &str, raw: &Option<String>| -> anyhow::Result<Option<Option<AtomicAmount>>> {
            raw.as_deref()
                .map(|raw| amount_or_none(flag, raw))
                .transpose()
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
    let limits = args
        .recipient_limits
        .iter()
        .map(|raw| recipient_limit(raw))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let recipient_limits = match (args.clear_recipient_limits, limits.is_empty()) {
        (false, true) => RecipientLimitsChange::Keep,
        (false, false) => RecipientLimitsChange::Merge(limits),
        (true, _) => RecipientLimitsChange::Replace(limits),
    };
    let approvals_required = args
        .approvals_required
        .as_deref()
        .map(|raw| match raw {
            "none" => Ok(None),
            count => count
                .parse::<u8>()
                .ok()
                .and_then(|count| ApprovalCount::quorum(count).ok())
                .map(Some)
                .with_context(|| {
                    format!("--approvals-required {count:?}: a number from 2 to {MAX_APPROVALS_REQUIRED}, or none")
                }),
        })
        .transpose()?;
    Ok(PolicyChange {
        max_per_tx: limit("--max-per-tx", &args.max_per_tx)?,
        max_daily: limit("--max-daily", &args.max_daily)?,
        max_weekly: limit("--max-weekly", &args.max_weekly)?,
        max_monthly: limit("--max-monthly", &args.max_monthly)?,
        allowlist,
        recipient_limits,
        auto_confirm_max: limit("--auto-confirm-max", &args.auto_confirm_max)?,
        auto_confirm_daily: limit("--auto-confirm-daily", &args.auto_confirm_daily)?,
        approvals_required,
        approvals_above: limit("--approvals-above", &args.approvals_above)?,
        x402_enabled: args.x402.as_deref().map(|switch| switch == "on"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unbounded_auto_confirm_tier_is_refused_with_the_flags_that_bound_it() {
        let refused = policy_error(PolicyError::Refused(
            PolicyChangeRefused::AutoConfirmWithoutDailyBound,
        ))
        .to_string();
        assert!(
            refused.starts_with("the auto-confirm tier needs a daily bound")
                && refused.contains("--auto-confirm-daily")
                && refused.contains("--auto-confirm-max none"),
            "{refused}"
        );
    }
}
