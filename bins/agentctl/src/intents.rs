//! `agentctl intents`: list, show, confirm, reject, expire and resolve transfer intents.

use std::time::Duration;

use anyhow::Context as _;
use api_types::TransferIntentOut;
use clap::Subcommand;
use domain::{AgentId, IntentId, IntentStatus, TransferIntentRecord};
use ports::IntentFilter;
use runtime::config::IntentConfig;
use runtime::wiring;
use serde_json::{json, Value};

use crate::Context;

#[derive(Subcommand)]
pub enum IntentsCommand {
    /// List intents, newest first.
    List {
        #[arg(long)]
        agent: Option<AgentId>,
        /// pending_confirmation, confirmed, submitted, executed, failed, rejected or expired.
        #[arg(long)]
        status: Option<String>,
    },
    /// Show one intent, with every transaction sent for it.
    Show { id: IntentId },
    /// Approve a pending intent for execution on chain. The intent is judged again by the spend
    /// policy in force; one that breaks it is refused unless --force is given.
    Confirm {
        id: IntentId,
        /// Confirm even if the intent breaks the spend policy in force.
        #[arg(long)]
        force: bool,
    },
    /// Refuse a pending intent; its amount is released from the daily limit.
    Reject {
        id: IntentId,
        #[arg(long)]
        reason: Option<String>,
    },
    /// Settle a submitted intent by what the chain says now, when its nonce was taken by a
    /// transaction sent outside this service: a receipt of one of its transactions settles it
    /// (executed, or failed on a revert); its nonce used with none of them mined fails it at once.
    /// While its nonce is still free it may yet be mined: nothing is changed.
    Resolve { id: IntentId },
    /// Expire intents pending longer than INTENT_PENDING_TTL_SECS (default 24 h) or --pending-for-secs.
    Expire {
        #[arg(long, value_name = "SECONDS")]
        pending_for_secs: Option<u64>,
    },
}

pub async fn run(context: &Context, command: IntentsCommand) -> anyhow::Result<Value> {
    Ok(match command {
        IntentsCommand::Expire { pending_for_secs } => {
            let mut config = IntentConfig::from_env(&context.env).context("configuration")?;
            if let Some(seconds) = pending_for_secs {
                config.pending_ttl = Duration::from_secs(seconds);
            }
            let expiry = wiring::intent_expiry(&context.database().await?, &config);
            listed(&expiry.sweep().await?)
        }
        IntentsCommand::List { agent, status } => {
            let status = status
                .map(|name| {
                    IntentStatus::parse(&name)
                        .with_context(|| format!("--status {name:?} is not an intent status"))
                })
                .transpose()?;
            let plane = context.services().await?.operator;
            listed(&plane.list_intents(IntentFilter { agent, status }).await?)
        }
        IntentsCommand::Show { id } => {
            let plane = context.services().await?.operator;
            let mut view = operator_view(&plane.show_intent(id).await?);
            view["attempts"] = json!(plane
                .intent_attempts(id)
                .await?
                .iter()
                .map(|attempt| json!({
                    "tx_hash": attempt.transfer.hash,
                    "nonce": attempt.transfer.nonce,
                    "max_fee_per_gas": attempt.transfer.fees.max_fee_per_gas.to_string(),
                    "max_priority_fee_per_gas":
                        attempt.transfer.fees.max_priority_fee_per_gas.to_string(),
                    "broadcasts": attempt.broadcasts,
                    "last_error": attempt.last_error,
                }))
                .collect::<Vec<_>>());
            view
        }
        IntentsCommand::Confirm { id, force } => {
            let confirmation = context
                .services()
                .await?
                .operator
                .confirm_intent(id, force)
                .await?;
            let mut view = operator_view(&confirmation.intent);
            // What the policy in force says: null when the intent keeps to it.
            view["policy_violation"] = json!(confirmation
                .policy_verdict
                .err()
                .map(|violation| violation.to_string()));
            view
        }
        IntentsCommand::Resolve { id } => operator_view(
            &context
                .services()
                .await?
                .operator
                .resolve_intent(id)
                .await?,
        ),
        IntentsCommand::Reject { id, reason } => operator_view(
            &context
                .services()
                .await?
                .operator
                .reject_intent(id, reason)
                .await?,
        ),
    })
}

fn listed(intents: &[TransferIntentRecord]) -> Value {
    json!(intents.iter().map(operator_view).collect::<Vec<_>>())
}

/// The API's view of an intent plus what only an operator needs: whose it is.
fn operator_view(intent: &TransferIntentRecord) -> Value {
    let mut view = json!(TransferIntentOut::from(intent));
    view["agent_id"] = json!(intent.agent_id.to_string());
    view["wallet_id"] = json!(intent.wallet_id.to_string());
    view["idempotency_key"] = json!(intent.idempotency_key.as_ref().map(|key| key.as_str()));
    view
}
