//! The verdict of a spend policy: on a transfer the agent asks for, and on an operator's approval
//! of a pending one.

use alloy_primitives::U256;

use crate::{AtomicAmount, ConfirmedBy, EvmAddress, IntentStatus};

use super::windows::fits;
use super::{ApprovalCount, Held, SpendRules, SpendWindow};

/// Why a transfer breaks the spend policy. Each says the rule, and for a window what it still
/// allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PolicyViolation {
    #[error("recipient {recipient} is not on the wallet's allowlist")]
    RecipientNotAllowlisted { recipient: EvmAddress },
    #[error("amount {amount} exceeds the per-transaction maximum of {max}")]
    ExceedsPerTransactionMax {
        amount: AtomicAmount,
        max: AtomicAmount,
    },
    #[error("amount {amount} exceeds the per-transaction maximum of {max} for this recipient")]
    ExceedsRecipientPerTransactionMax {
        amount: AtomicAmount,
        max: AtomicAmount,
    },
    #[error(
        "amount {amount} exceeds the {window} maximum of {max}; {available} is still available in the rolling {span}",
        span = window.span()
    )]
    ExceedsWindowMax {
        window: SpendWindow,
        amount: AtomicAmount,
        max: AtomicAmount,
        available: U256,
    },
    #[error(
        "amount {amount} exceeds the daily maximum of {max} for this recipient; {available} is still available to it in the rolling 24 hours"
    )]
    ExceedsRecipientDailyMax {
        amount: AtomicAmount,
        max: AtomicAmount,
        available: U256,
    },
    #[error("x402 payments are turned off for this wallet")]
    X402Disabled,
}

impl PolicyViolation {
    /// The name of the rule that refused, as a verdict names it.
    pub fn rule(&self) -> &'static str {
        match self {
            Self::RecipientNotAllowlisted { .. } => "allowlist",
            Self::ExceedsPerTransactionMax { .. } => "max_per_tx",
            Self::ExceedsRecipientPerTransactionMax { .. } => "recipient_max_per_tx",
            Self::ExceedsWindowMax { window, .. } => match window {
                SpendWindow::Daily => "max_daily",
                SpendWindow::Weekly => "max_weekly",
                SpendWindow::Monthly => "max_monthly",
                SpendWindow::AutoConfirmDaily => "auto_confirm_daily",
            },
            Self::ExceedsRecipientDailyMax { .. } => "recipient_max_daily",
            Self::X402Disabled => "x402_disabled",
        }
    }
}

/// How a transfer the policy admits goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admitted {
    /// It waits for this many distinct operators' approvals.
    AwaitsApprovals(ApprovalCount),
    /// The policy confirmed it: it executes without an operator.
    ConfirmedByPolicy,
}

impl Admitted {
    /// Where the intent starts.
    pub fn status(self) -> IntentStatus {
        match self {
            Self::AwaitsApprovals(_) => IntentStatus::PendingConfirmation,
            Self::ConfirmedByPolicy => IntentStatus::Confirmed,
        }
    }

    /// Who confirmed it at its creation, if anyone did.
    pub fn confirmed_by(self) -> Option<ConfirmedBy> {
        match self {
            Self::AwaitsApprovals(_) => None,
            Self::ConfirmedByPolicy => Some(ConfirmedBy::Policy),
        }
    }

    /// The operators' approvals it starts out needing: none once the policy confirmed it.
    pub fn approvals_required(self) -> u8 {
        match self {
            Self::AwaitsApprovals(count) => count.get(),
            Self::ConfirmedByPolicy => 0,
        }
    }
}

/// Judges a transfer of `amount` to `recipient` by `rules`, given what each window holds
/// already. Rules apply only where configured, in this order: the allowlist, the wallet's
/// per-transaction cap, the recipient's, the wallet's daily, weekly and monthly caps, the
/// recipient's daily cap. An admitted transfer is confirmed by the policy when it is within both
/// auto-confirm limits and needs no more than one approval.
/// `evaluate_transfer` for an x402 payment of `amount` to `pay_to`: refused first when the
/// policy turns x402 payments off, then judged by every rule of a transfer.
pub fn evaluate_x402(
    rules: &SpendRules,
    pay_to: &EvmAddress,
    amount: AtomicAmount,
    held: &Held,
) -> Result<Admitted, PolicyViolation> {
    if !rules.x402_enabled {
        return Err(PolicyViolation::X402Disabled);
    }
    evaluate_transfer(rules, pay_to, amount, held)
}

pub fn evaluate_transfer(
    rules: &SpendRules,
    recipient: &EvmAddress,
    amount: AtomicAmount,
    held: &Held,
) -> Result<Admitted, PolicyViolation> {
    if !rules.allowlist.admits(recipient) {
        return Err(PolicyViolation::RecipientNotAllowlisted {
            recipient: *recipient,
        });
    }
    if let Some(max) = rules.limits.max_per_tx.filter(|max| amount > *max) {
        return Err(PolicyViolation::ExceedsPerTransactionMax { amount, max });
    }
    let counterparty = rules.recipient_limits.of_recipient(recipient);
    if let Some(max) = counterparty
        .and_then(|limit| limit.max_per_tx)
        .filter(|max| amount > *max)
    {
        return Err(PolicyViolation::ExceedsRecipientPerTransactionMax { amount, max });
    }
    for window in [
        SpendWindow::Daily,
        SpendWindow::Weekly,
        SpendWindow::Monthly,
    ] {
        let held = held.of(window);
        if let Some(max) = rules
            .limits
            .cap(window)
            .filter(|max| !fits(held, amount, *max))
        {
            return Err(PolicyViolation::ExceedsWindowMax {
                window,
                amount,
                max,
                available: max.value().saturating_sub(held),
            });
        }
    }
    if let Some(max) = counterparty
        .and_then(|limit| limit.max_daily)
        .filter(|max| !fits(held.recipient_daily, amount, *max))
    {
        return Err(PolicyViolation::ExceedsRecipientDailyMax {
            amount,
            max,
            available: max.value().saturating_sub(held.recipient_daily),
        });
    }
    let approvals = rules.quorum.required_for(amount);
    let confirmed = approvals == ApprovalCount::ONE
        && rules.auto_confirm.confirms(amount, held.auto_confirm_daily);
    Ok(if confirmed {
        Admitted::ConfirmedByPolicy
    } else {
        Admitted::AwaitsApprovals(approvals)
    })
}

/// Why an approval is refused as things stand when it is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalRefusal {
    #[error("the agent is deactivated: its intents are not executed")]
    AgentInactive,
    #[error("the intent breaks the spend policy in force: {0}")]
    Policy(PolicyViolation),
    #[error("the intent needs {required} approvals by distinct operators: each approves under a name of their own")]
    QuorumNeedsNamedOperator { required: u8 },
    #[error("the wallet's balance does not cover it: it holds {balance}, {committed} of it is already committed to confirmed transfers, and this one needs {amount}")]
    Balance {
        balance: U256,
        committed: U256,
        amount: U256,
    },
}

/// What an approval is judged on, as things stand under the locks of the intent and its wallet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalStanding<'a> {
    pub recipient: &'a EvmAddress,
    pub amount: AtomicAmount,
    pub agent_active: bool,
    pub rules: &'a SpendRules,
    /// What the wallet's intents hold in each window, this one's own amount among them.
    pub held: &'a Held,
    /// The wallet's token balance, read from the chain before the locks were taken; `None` where
    /// the balance is left to the execution, which fails the intent if the chain refuses it.
    pub balance: Option<U256>,
    /// What the wallet's intents confirmed and not yet executed will take from that balance.
    pub committed: U256,
}

/// Whether `approver` may approve a pending intent now: its agent is active, the operator may
/// count towards the quorum it needs, the policy in force allows it (unless `forced`), and the
/// balance, where it was read, covers it beside what is already committed. `Ok` says what the policy says of it: an
/// `Err` inside is a violation the approval was forced past.
pub fn judge_approval(
    standing: &ApprovalStanding<'_>,
    approver: &crate::Operator,
    forced: bool,
) -> Result<Result<(), PolicyViolation>, ApprovalRefusal> {
    if !standing.agent_active {
        return Err(ApprovalRefusal::AgentInactive);
    }
    let required = standing.rules.quorum.required_for(standing.amount);
    if !approver.may_approve(required) {
        return Err(ApprovalRefusal::QuorumNeedsNamedOperator {
            required: required.get(),
        });
    }
    // The pending intent holds its own amount already: judge it as if it came now.
    let verdict = evaluate_transfer(
        standing.rules,
        standing.recipient,
        standing.amount,
        &standing.held.without_pending(standing.amount),
    )
    .map(drop);
    if let (Err(violation), false) = (verdict, forced) {
        return Err(ApprovalRefusal::Policy(violation));
    }
    let amount = standing.amount.value();
    if let Some(balance) = standing
        .balance
        .filter(|balance| standing.committed.saturating_add(amount) > *balance)
    {
        return Err(ApprovalRefusal::Balance {
            balance,
            committed: standing.committed,
            amount,
        });
    }
    Ok(verdict)
}
