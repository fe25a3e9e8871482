//! `agentctl intents`: list, show, confirm, reject, expire and resolve transfer intents; export
//! the receipts of executed ones.

use std::time::Duration;

use anyhow::Context as _;
use api_types::{
    OperatorAttemptView, OperatorConfirmationView, OperatorIntentDetail, OperatorIntentView,
};
use app::{BalanceCheck, ConfirmError};
use clap::{Subcommand, ValueEnum};
use domain::receipts::{export_csv, export_json, ExportRange};
use domain::{
    Actor, AgentId, AuditTarget, IntentId, IntentStatus, Operator, OperatorName,
    TransferIntentRecord,
};
use ports::{AttemptRecord, IntentFilter, StoreError, TransitionError};
use runtime::config::IntentConfig;
use runtime::wiring;
use serde_json::{json, Value};

use crate::{operator, Context, Output};

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
    /// policy in force; one that breaks it is refused unless --force is given. It is confirmed
    /// once it has the approvals the policy asks of it: above the policy's quorum threshold,
    /// that many distinct operators, each proving who they are with their operator token.
    Confirm {
        id: IntentId,
        /// Confirm even if the intent breaks the spend policy in force.
        #[arg(long)]
        force: bool,
        /// Approve as this operator, proven by their operator token; without a token the
        /// approval is the control plane's, and --operator is refused.
        #[arg(long, value_name = "NAME")]
        operator: Option<String>,
        /// The operator token that proves who approves (issued on the console's "Token for
        /// agentctl" page). Prefer the environment variable: a flag stays in the shell's history.
        #[arg(
            long,
            value_name = "TOKEN",
            env = "AGENTCTL_OPERATOR_TOKEN",
            hide_env_values = true
        )]
        operator_token: Option<String>,
    },
    /// Refuse a pending intent; its amount is released from the spend windows.
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
    /// The signed receipts of an agent's intents (transfers and x402 payments) executed in a
    /// range, oldest first, for reconciliation: each verifies against GET
    /// /v1/wallet/receipt-keys. A date is a day in UTC, and --to includes its day.
    Export {
        agent: AgentId,
        /// The first date or RFC 3339 time included (2026-11-01, 2026-11-01T09:00:00Z).
        #[arg(long)]
        from: String,
        /// The last date included, or the RFC 3339 time the range ends before.
        #[arg(long)]
        to: String,
        #[arg(long, value_enum, default_value = "json")]
        format: ExportFormat,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    /// A header row and one row per receipt, its signature last.
    Csv,
    /// An array of receipts, each as GET /v1/wallet/intents/{id}/receipt gives it.
    Json,
}

pub async fn run(context: &Context, command: IntentsCommand) -> anyhow::Result<Output> {
    Ok(Output::Json(match command {
        IntentsCommand::Export {
            agent,
            from,
            to,
            format,
        } => return export(context, agent, &from, &to, format).await,
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
            let decisions = context.services().await?.operator.decisions;
            listed(
                &decisions
                    .list(IntentFilter {
                        agent,
                        status,
                        ..IntentFilter::default()
                    })
                    .await?,
            )
        }
        IntentsCommand::Show { id } => {
            let decisions = context.services().await?.operator.decisions;
            let intent = decisions.show(id).await?;
            let attempts = decisions.attempts(id).await?;
            json!(OperatorIntentDetail {
                intent: (&intent).into(),
                attempts: attempts.iter().map(attempt_view).collect(),
            })
        }
        IntentsCommand::Confirm {
            id,
            force,
            operator: name,
            operator_token,
        } => {
            let services = context.services().await?;
            let named = name
                .map(|name| {
                    OperatorName::parse(&name).with_context(|| format!("--operator {name:?}"))
                })
                .transpose()?;
            let approver = match (operator_token, named) {
                (Some(token), named) => {
                    let proven = services
                        .operator
                        .console
                        .prove(&token, AuditTarget::Intent(id))
                        .await?;
                    refuse_another_name(&proven, named.as_ref())?;
                    proven
                }
                (None, Some(name)) => anyhow::bail!(
                    "--operator {name} counts as {name}'s approval only with {name}'s operator \
                     token: set AGENTCTL_OPERATOR_TOKEN (or --operator-token) to the token {name} \
                     issued on the console's \"Token for agentctl\" page; without --operator \
                     the approval is the control plane's own"
                ),
                (None, None) => operator(),
            };
            // The balance is the executor's to meet: a confirmation from the control plane holds
            // while the chain node is away, and one the balance cannot cover fails with a reason.
            let actor = Actor::local(approver);
            let confirmation = while_busy(
                || {
                    services.operator.decisions.confirm(
                        id,
                        force,
                        BalanceCheck::AtExecution,
                        &actor,
                    )
                },
                |error| matches!(error, ConfirmError::Store(StoreError::Busy(_))),
            )
            .await
            .map_err(confirm_error)?;
            json!(OperatorConfirmationView::new(
                &confirmation.intent,
                &confirmation.policy_verdict
            ))
        }
        IntentsCommand::Resolve { id } => json!(OperatorIntentView::from(
            &context
                .services()
                .await?
                .operator
                .resolution
                .resolve(id, &operator())
                .await?
        )),
        IntentsCommand::Reject { id, reason } => {
            let services = context.services().await?;
            let actor = Actor::local(operator());
            json!(OperatorIntentView::from(
                &while_busy(
                    || services
                        .operator
                        .decisions
                        .reject(id, reason.clone(), &actor),
                    |error| matches!(error, TransitionError::Store(StoreError::Busy(_))),
                )
                .await?
            ))
        }
    }))
}

async fn export(
    context: &Context,
    agent: AgentId,
    from: &str,
    to: &str,
    format: ExportFormat,
) -> anyhow::Result<Output> {
    let range = ExportRange::parse(from, to)?;
    let services = context.services().await?;
    let profile = services.operator.agents.show(agent).await?;
    let receipts = services.wallets.export_receipts(&profile, range).await?;
    Ok(match format {
        ExportFormat::Csv => Output::Text(export_csv(&receipts)?),
        ExportFormat::Json => Output::Json(export_json(&receipts)),
    })
}

/// How long a decision waits for its wallet while other decisions or the executor hold it.
const BUSY_FOR_AT_MOST: Duration = Duration::from_secs(30);

/// Runs `decide` again while the store says the wallet it locks is busy (its lock was not granted
/// in time, so nothing was changed), as an HTTP client does on the API's 429 and Retry-After,
/// for at most `BUSY_FOR_AT_MOST`; says so on stderr, since it can take seconds.
async fn while_busy<T, E, F>(
    mut decide: impl FnMut() -> F,
    busy: impl Fn(&E) -> bool,
) -> Result<T, E>
where
    F: std::future::Future<Output = Result<T, E>>,
{
    let deadline = tokio::time::Instant::now() + BUSY_FOR_AT_MOST;
    let mut pause = Duration::from_millis(100);
    loop {
        match decide().await {
            Err(error) if busy(&error) && tokio::time::Instant::now() + pause < deadline => {
                eprintln!("agentctl: the wallet is busy with other decisions; trying again");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(2));
            }
            decided => return decided,
        }
    }
}

/// Refuses a token of one operator given with the name of another: `--operator` says whose
/// approval is meant, and the token must prove that one.
fn refuse_another_name(proven: &Operator, named: Option<&OperatorName>) -> anyhow::Result<()> {
    match (proven, named) {
        (Operator::Named(owner), Some(name)) if owner != name => anyhow::bail!(
            "the operator token is {owner}'s, not {name}'s: each operator approves with their own"
        ),
        _ => Ok(()),
    }
}

/// The use case's refusal, with the flag of this CLI that gets past it.
fn confirm_error(error: ConfirmError) -> anyhow::Error {
    match error {
        ConfirmError::Policy(_) => {
            anyhow::anyhow!("{error}; confirm with --force to execute it anyway")
        }
        ConfirmError::QuorumNeedsNamedOperator { .. } => anyhow::anyhow!(
            "{error}: approve with your operator token (AGENTCTL_OPERATOR_TOKEN, issued on the \
             console's \"Token for agentctl\" page)"
        ),
        other => other.into(),
    }
}

fn listed(intents: &[TransferIntentRecord]) -> Value {
    json!(intents
        .iter()
        .map(OperatorIntentView::from)
        .collect::<Vec<_>>())
}

fn attempt_view(attempt: &AttemptRecord) -> OperatorAttemptView {
    OperatorAttemptView {
        tx_hash: attempt.transfer.hash.clone(),
        nonce: attempt.transfer.nonce,
        max_fee_per_gas: attempt.transfer.fees.max_fee_per_gas.to_string(),
        max_priority_fee_per_gas: attempt.transfer.fees.max_priority_fee_per_gas.to_string(),
        broadcasts: attempt.broadcasts,
        last_error: attempt.last_error.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{AtomicAmount, PolicyViolation};

    #[test]
    fn a_token_proves_the_operator_it_names_and_no_other() {
        let name = |name: &str| OperatorName::parse(name).expect("valid");
        let alice = Operator::Named(name("alice"));
        assert!(refuse_another_name(&alice, None).is_ok());
        assert!(refuse_another_name(&alice, Some(&name("alice"))).is_ok());
        let posing = refuse_another_name(&alice, Some(&name("bob"))).expect_err("refused");
        assert_eq!(
            posing.to_string(),
            "the operator token is alice's, not bob's: each operator approves with their own"
        );
    }

    #[test]
    fn a_confirmation_refused_by_the_policy_says_how_to_force_it() {
        let violation = PolicyViolation::ExceedsPerTransactionMax {
            amount: AtomicAmount::parse("500").expect("valid"),
            max: AtomicAmount::parse("100").expect("valid"),
        };
        assert_eq!(
            confirm_error(ConfirmError::Policy(violation)).to_string(),
            "the intent breaks the spend policy in force: amount 500 exceeds the per-transaction \
             maximum of 100; confirm with --force to execute it anyway"
        );
    }
}
