//! Spend policy of a wallet: the rules an operator configures, the verdict they give on a
//! transfer, and what is left of each window they cap. Every rule is optional; `None` means it is
//! not configured, so a policy of the first edition (per-transaction and daily caps, allowlist)
//! reads and behaves as it always did.

use std::fmt;
use std::time::Duration;

use alloy_primitives::U256;
use time::OffsetDateTime;

use crate::{AtomicAmount, ConfirmedBy, EvmAddress, IntentStatus};

/// Amount caps of the whole wallet; `None` means no cap is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpendLimits {
    pub max_per_tx: Option<AtomicAmount>,
    pub max_daily: Option<AtomicAmount>,
    pub max_weekly: Option<AtomicAmount>,
    pub max_monthly: Option<AtomicAmount>,
}

impl SpendLimits {
    /// The cap of one of the wallet's rolling windows.
    pub fn cap(&self, window: SpendWindow) -> Option<AtomicAmount> {
        match window {
            SpendWindow::Daily => self.max_daily,
            SpendWindow::Weekly => self.max_weekly,
            SpendWindow::Monthly => self.max_monthly,
            SpendWindow::AutoConfirmDaily => None,
        }
    }
}

/// Recipients a wallet may pay. `None` (no allowlist configured) differs from an empty list,
/// which allows no recipient at all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Allowlist(Option<Vec<EvmAddress>>);

impl Allowlist {
    pub fn unrestricted() -> Self {
        Self(None)
    }

    /// An allowlist of the given addresses, each listed once in first-seen order.
    pub fn of(addresses: impl IntoIterator<Item = EvmAddress>) -> Self {
        let mut unique: Vec<EvmAddress> = Vec::new();
        for address in addresses {
            if !unique.contains(&address) {
                unique.push(address);
            }
        }
        Self(Some(unique))
    }

    pub fn addresses(&self) -> Option<&[EvmAddress]> {
        self.0.as_deref()
    }

    /// Whether `recipient` is on a configured allowlist (an unrestricted policy lists no one).
    pub fn lists(&self, recipient: &EvmAddress) -> bool {
        self.addresses()
            .is_some_and(|allowed| allowed.contains(recipient))
    }

    /// Whether the allowlist lets `recipient` be paid: always, when none is configured.
    pub fn admits(&self, recipient: &EvmAddress) -> bool {
        self.addresses()
            .is_none_or(|allowed| allowed.contains(recipient))
    }

    /// This allowlist with `added` appended, creating the list if none was configured.
    pub fn extended(&self, added: &[EvmAddress]) -> Self {
        let existing = self.0.iter().flatten().copied();
        Self::of(existing.chain(added.iter().copied()))
    }
}

/// The most counterparties one policy caps, so a policy stays a small record read with every
/// send.
pub const MAX_RECIPIENT_LIMITS: usize = 100;

/// Caps on what one counterparty may be paid, on top of the wallet's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecipientLimit {
    pub address: EvmAddress,
    pub max_per_tx: Option<AtomicAmount>,
    pub max_daily: Option<AtomicAmount>,
}

/// The counterparties a policy caps, each once, in the order they were first configured.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecipientLimits(Vec<RecipientLimit>);

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a policy caps at most {MAX_RECIPIENT_LIMITS} recipients")]
pub struct TooManyRecipientLimits;

impl RecipientLimits {
    /// The given limits, the last one of an address replacing earlier ones in place; an entry
    /// capping nothing removes its address.
    pub fn of(
        limits: impl IntoIterator<Item = RecipientLimit>,
    ) -> Result<Self, TooManyRecipientLimits> {
        Self::default().merged(limits)
    }

    pub fn as_slice(&self) -> &[RecipientLimit] {
        &self.0
    }

    pub fn of_recipient(&self, recipient: &EvmAddress) -> Option<&RecipientLimit> {
        self.0.iter().find(|limit| limit.address == *recipient)
    }

    /// `recipient` when its day is capped: the one recipient whose own window a transfer to it
    /// is judged against (`Held::recipient_daily`).
    pub fn daily_capped(&self, recipient: &EvmAddress) -> Option<EvmAddress> {
        self.of_recipient(recipient)
            .filter(|limit| limit.max_daily.is_some())
            .map(|limit| limit.address)
    }

    /// These limits with `changes` applied one by one (see `of`).
    pub fn merged(
        &self,
        changes: impl IntoIterator<Item = RecipientLimit>,
    ) -> Result<Self, TooManyRecipientLimits> {
        let mut limits = self.0.clone();
        for change in changes {
            let caps_anything = change.max_per_tx.is_some() || change.max_daily.is_some();
            match limits
                .iter()
                .position(|limit| limit.address == change.address)
            {
                Some(at) if caps_anything => limits[at] = change,
                Some(at) => {
                    limits.remove(at);
                }
                None if caps_anything => limits.push(change),
                None => {}
            }
        }
        if limits.len() > MAX_RECIPIENT_LIMITS {
            return Err(TooManyRecipientLimits);
        }
        Ok(Self(limits))
    }
}

/// The tier of transfers the policy confirms by itself: each at or under `max`, while those it
/// confirmed in the rolling 24 hours stay within `daily`. Neither configured: no such tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AutoConfirm {
    pub max: Option<AtomicAmount>,
    pub daily: Option<AtomicAmount>,
}

impl AutoConfirm {
    /// Whether what the tier confirms is capped per 24 hours: no tier at all, or one with a
    /// daily bound. A per-transfer amount alone would confirm without end.
    pub fn is_bounded(&self) -> bool {
        self.max.is_none() || self.daily.is_some()
    }

    /// Whether a transfer of `amount` is confirmed by the policy, the tier's window holding
    /// `held_daily` already.
    pub fn confirms(&self, amount: AtomicAmount, held_daily: U256) -> bool {
        let configured = self.max.is_some() || self.daily.is_some();
        configured
            && self.max.is_none_or(|max| amount <= max)
            && self.daily.is_none_or(|cap| fits(held_daily, amount, cap))
    }
}

/// How many distinct operators a quorum may ask for.
pub const MAX_APPROVALS_REQUIRED: u8 = 5;

/// A number of distinct operators' approvals, 1 to `MAX_APPROVALS_REQUIRED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApprovalCount(u8);

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("approvals required must be between 1 and {MAX_APPROVALS_REQUIRED}")]
pub struct ApprovalCountOutOfRange;

impl ApprovalCount {
    pub const ONE: Self = Self(1);

    pub fn new(count: u8) -> Result<Self, ApprovalCountOutOfRange> {
        (1..=MAX_APPROVALS_REQUIRED)
            .contains(&count)
            .then_some(Self(count))
            .ok_or(ApprovalCountOutOfRange)
    }

    /// The count a policy's quorum asks for: 2 to `MAX_APPROVALS_REQUIRED` distinct operators
    /// (one operator is no quorum: a policy without one asks for one approval).
    pub fn quorum(count: u8) -> Result<Self, QuorumOutOfRange> {
        (2..=MAX_APPROVALS_REQUIRED)
            .contains(&count)
            .then_some(Self(count))
            .ok_or(QuorumOutOfRange)
    }

    pub fn get(self) -> u8 {
        self.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a quorum is 2 to {MAX_APPROVALS_REQUIRED} distinct operators")]
pub struct QuorumOutOfRange;

/// How many distinct operators must approve a transfer: `required` for amounts above `above`
/// (for every amount when no threshold is configured), one otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Quorum {
    pub required: Option<ApprovalCount>,
    pub above: Option<AtomicAmount>,
}

impl Quorum {
    pub fn required_for(&self, amount: AtomicAmount) -> ApprovalCount {
        match self.required {
            Some(required) if self.above.is_none_or(|threshold| amount > threshold) => required,
            _ => ApprovalCount::ONE,
        }
    }
}

/// Every rule of a spend policy.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpendRules {
    pub limits: SpendLimits,
    pub allowlist: Allowlist,
    pub recipient_limits: RecipientLimits,
    pub auto_confirm: AutoConfirm,
    pub quorum: Quorum,
}

/// What an operator does to a wallet's allowlist.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum AllowlistChange {
    #[default]
    Keep,
    /// No allowlist at all: any recipient may be paid.
    Remove,
    Replace(Allowlist),
    /// Append addresses, creating the allowlist if none was configured.
    Extend(Vec<EvmAddress>),
}

/// What an operator does to a wallet's per-recipient caps.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RecipientLimitsChange {
    #[default]
    Keep,
    /// Sets the caps of the given recipients and keeps the others; an entry capping nothing
    /// removes its recipient's.
    Merge(Vec<RecipientLimit>),
    /// Exactly the given caps (none at all when empty).
    Replace(Vec<RecipientLimit>),
}

/// A change to a spend policy; `None` fields keep their current value, `Some(None)` clears a
/// rule.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PolicyChange {
    pub max_per_tx: Option<Option<AtomicAmount>>,
    pub max_daily: Option<Option<AtomicAmount>>,
    pub max_weekly: Option<Option<AtomicAmount>>,
    pub max_monthly: Option<Option<AtomicAmount>>,
    pub allowlist: AllowlistChange,
    pub recipient_limits: RecipientLimitsChange,
    pub auto_confirm_max: Option<Option<AtomicAmount>>,
    pub auto_confirm_daily: Option<Option<AtomicAmount>>,
    pub approvals_required: Option<Option<ApprovalCount>>,
    pub approvals_above: Option<Option<AtomicAmount>>,
}

impl PolicyChange {
    /// The rules that result from applying this change to the current ones. A policy whose
    /// auto-confirm tier has no daily bound is refused, whatever the change touched: a tier
    /// without one would confirm any number of transfers under its per-transfer amount, every
    /// day, with no operator ever asked.
    pub fn apply(&self, rules: &SpendRules) -> Result<SpendRules, PolicyChangeRefused> {
        let limits = SpendLimits {
            max_per_tx: self.max_per_tx.unwrap_or(rules.limits.max_per_tx),
            max_daily: self.max_daily.unwrap_or(rules.limits.max_daily),
            max_weekly: self.max_weekly.unwrap_or(rules.limits.max_weekly),
            max_monthly: self.max_monthly.unwrap_or(rules.limits.max_monthly),
        };
        let allowlist = match &self.allowlist {
            AllowlistChange::Keep => rules.allowlist.clone(),
            AllowlistChange::Remove => Allowlist::unrestricted(),
            AllowlistChange::Replace(replacement) => replacement.clone(),
            AllowlistChange::Extend(added) => rules.allowlist.extended(added),
        };
        let recipient_limits = match &self.recipient_limits {
            RecipientLimitsChange::Keep => rules.recipient_limits.clone(),
            RecipientLimitsChange::Merge(changes) => {
                rules.recipient_limits.merged(changes.iter().copied())?
            }
            RecipientLimitsChange::Replace(limits) => RecipientLimits::of(limits.iter().copied())?,
        };
        let auto_confirm = AutoConfirm {
            max: self.auto_confirm_max.unwrap_or(rules.auto_confirm.max),
            daily: self.auto_confirm_daily.unwrap_or(rules.auto_confirm.daily),
        };
        if !auto_confirm.is_bounded() {
            return Err(PolicyChangeRefused::AutoConfirmWithoutDailyBound);
        }
        Ok(SpendRules {
            limits,
            allowlist,
            recipient_limits,
            auto_confirm,
            quorum: Quorum {
                required: self.approvals_required.unwrap_or(rules.quorum.required),
                above: self.approvals_above.unwrap_or(rules.quorum.above),
            },
        })
    }
}

/// Why a policy change is refused; the policy stays as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PolicyChangeRefused {
    #[error(transparent)]
    TooManyRecipientLimits(#[from] TooManyRecipientLimits),
    /// A per-transfer amount the policy confirms by itself, with no total it may confirm per
    /// 24 hours.
    #[error(
        "the auto-confirm tier needs a daily bound: set the total the policy may confirm by \
         itself per 24 hours, or remove the tier"
    )]
    AutoConfirmWithoutDailyBound,
}

/// A rolling window a policy caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpendWindow {
    /// The rolling 24 hours of `max_daily` (and of each recipient's `max_daily`).
    Daily,
    /// The rolling 7 days of `max_weekly`.
    Weekly,
    /// The rolling 30 days of `max_monthly`.
    Monthly,
    /// The rolling 24 hours of the intents the policy confirmed, capped by `auto_confirm_daily`.
    AutoConfirmDaily,
}

impl SpendWindow {
    pub const ALL: [Self; 4] = [
        Self::Daily,
        Self::Weekly,
        Self::Monthly,
        Self::AutoConfirmDaily,
    ];

    /// The window's name in `usage`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Daily => "daily",
            Self::Weekly => "weekly",
            Self::Monthly => "monthly",
            Self::AutoConfirmDaily => "auto_confirm_daily",
        }
    }

    /// How far back the window reaches from now.
    pub const fn length(self) -> Duration {
        const DAY: u64 = 24 * 60 * 60;
        match self {
            Self::Daily | Self::AutoConfirmDaily => Duration::from_secs(DAY),
            Self::Weekly => Duration::from_secs(7 * DAY),
            Self::Monthly => Duration::from_secs(30 * DAY),
        }
    }

    /// The window's length as a refusal says it.
    fn span(self) -> &'static str {
        match self {
            Self::Daily | Self::AutoConfirmDaily => "24 hours",
            Self::Weekly => "7 days",
            Self::Monthly => "30 days",
        }
    }

    /// Its cap in a policy, if one is configured.
    pub fn cap(self, rules: &SpendRules) -> Option<AtomicAmount> {
        match self {
            Self::AutoConfirmDaily => rules.auto_confirm.daily,
            wallet => rules.limits.cap(wallet),
        }
    }
}

impl fmt::Display for SpendWindow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the wallet's intents hold now in each window a transfer is checked against: those whose
/// money may still move, and those whose money moved within the window (`Reservation` says which
/// intent counts where). Sums saturate rather than overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Held {
    pub daily: U256,
    pub weekly: U256,
    pub monthly: U256,
    /// Of the intents the policy confirmed.
    pub auto_confirm_daily: U256,
    /// Of the intents to the transfer's recipient, in the rolling 24 hours.
    pub recipient_daily: U256,
}

impl Held {
    pub fn of(&self, window: SpendWindow) -> U256 {
        match window {
            SpendWindow::Daily => self.daily,
            SpendWindow::Weekly => self.weekly,
            SpendWindow::Monthly => self.monthly,
            SpendWindow::AutoConfirmDaily => self.auto_confirm_daily,
        }
    }

    fn of_mut(&mut self, window: SpendWindow) -> &mut U256 {
        match window {
            SpendWindow::Daily => &mut self.daily,
            SpendWindow::Weekly => &mut self.weekly,
            SpendWindow::Monthly => &mut self.monthly,
            SpendWindow::AutoConfirmDaily => &mut self.auto_confirm_daily,
        }
    }

    /// What is held without one pending intent of `amount` to the recipient, which holds its
    /// amount in the wallet's windows and its recipient's: the figures to judge that intent
    /// against as if it came now.
    pub fn without_pending(&self, amount: AtomicAmount) -> Self {
        let amount = amount.value();
        Self {
            daily: self.daily.saturating_sub(amount),
            weekly: self.weekly.saturating_sub(amount),
            monthly: self.monthly.saturating_sub(amount),
            auto_confirm_daily: self.auto_confirm_daily,
            recipient_daily: self.recipient_daily.saturating_sub(amount),
        }
    }
}

/// What one intent holds of the windows: the facts the running totals of a wallet are kept
/// from, and the definition they are checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reservation {
    pub status: IntentStatus,
    pub recipient: EvmAddress,
    pub amount: AtomicAmount,
    pub confirmed_by: Option<ConfirmedBy>,
    pub executed_at: Option<OffsetDateTime>,
}

impl Reservation {
    /// Whether the intent counts in `window` at `now`: from its creation while its money may
    /// still move, and once executed for the window's length after; never once it was rejected,
    /// expired or failed. The auto-confirm window counts only what the policy confirmed.
    pub fn counts_in(&self, window: SpendWindow, now: OffsetDateTime) -> bool {
        if window == SpendWindow::AutoConfirmDaily && self.confirmed_by != Some(ConfirmedBy::Policy)
        {
            return false;
        }
        match self.status {
            IntentStatus::Executed => self
                .executed_at
                .is_some_and(|at| at > now - window.length()),
            status => status.holds_allowance(),
        }
    }
}

impl Held {
    /// What `reservations` hold at `now`, `recipient_daily` for intents to `recipient`.
    pub fn tally<'a>(
        reservations: impl IntoIterator<Item = &'a Reservation>,
        recipient: &EvmAddress,
        now: OffsetDateTime,
    ) -> Self {
        let mut held = Self::default();
        for reservation in reservations {
            let amount = reservation.amount.value();
            for window in SpendWindow::ALL {
                if reservation.counts_in(window, now) {
                    let sum = held.of_mut(window);
                    *sum = sum.saturating_add(amount);
                }
            }
            if reservation.recipient == *recipient && reservation.counts_in(SpendWindow::Daily, now)
            {
                held.recipient_daily = held.recipient_daily.saturating_add(amount);
            }
        }
        held
    }
}

/// The earliest execution each window counts at one instant. What the windows hold changes with
/// no change to any intent only when one of these leaves its window, a window's length after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EarliestExecutions {
    pub daily: Option<OffsetDateTime>,
    pub weekly: Option<OffsetDateTime>,
    pub monthly: Option<OffsetDateTime>,
    /// Of the intents the policy confirmed.
    pub auto_confirm_daily: Option<OffsetDateTime>,
}

impl EarliestExecutions {
    pub fn of(&self, window: SpendWindow) -> Option<OffsetDateTime> {
        match window {
            SpendWindow::Daily => self.daily,
            SpendWindow::Weekly => self.weekly,
            SpendWindow::Monthly => self.monthly,
            SpendWindow::AutoConfirmDaily => self.auto_confirm_daily,
        }
    }

    fn of_mut(&mut self, window: SpendWindow) -> &mut Option<OffsetDateTime> {
        match window {
            SpendWindow::Daily => &mut self.daily,
            SpendWindow::Weekly => &mut self.weekly,
            SpendWindow::Monthly => &mut self.monthly,
            SpendWindow::AutoConfirmDaily => &mut self.auto_confirm_daily,
        }
    }

    /// The earliest executions of `reservations` each window counts at `now`.
    pub fn tally<'a>(
        reservations: impl IntoIterator<Item = &'a Reservation>,
        now: OffsetDateTime,
    ) -> Self {
        let mut earliest = Self::default();
        for reservation in reservations {
            let Some(executed_at) = reservation.executed_at else {
                continue;
            };
            for window in SpendWindow::ALL {
                let first = earliest.of_mut(window);
                if reservation.status == IntentStatus::Executed
                    && reservation.counts_in(window, now)
                    && first.is_none_or(|first| executed_at < first)
                {
                    *first = Some(executed_at);
                }
            }
        }
        earliest
    }

    /// When what the windows hold first changes by time alone: the instant the first of these
    /// executions leaves its window. Until then, only a change of an intent changes it; `None`
    /// while no window counts an execution.
    pub fn first_departure(&self) -> Option<OffsetDateTime> {
        SpendWindow::ALL
            .into_iter()
            .filter_map(|window| Some(self.of(window)? + window.length()))
            .min()
    }
}

/// Whether a window holding `held` can take `amount` more under `cap`.
fn fits(held: U256, amount: AtomicAmount, cap: AtomicAmount) -> bool {
    held.checked_add(amount.value())
        .is_some_and(|total| total <= cap.value())
}

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

/// What a capped window holds now and what is left of its cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowUsage {
    pub window: SpendWindow,
    pub cap: AtomicAmount,
    /// Reserved by intents whose money may still move, and moved within the window.
    pub spent: U256,
    /// What a transfer may still take; zero when the window holds its cap or more (a cap lowered
    /// after the money was reserved).
    pub remaining: U256,
}

impl SpendRules {
    /// Whether any window is capped: without one, a policy's usage holds nothing to read.
    pub fn caps_a_window(&self) -> bool {
        SpendWindow::ALL
            .into_iter()
            .any(|window| window.cap(self).is_some())
    }
}

/// Each window the rules cap, in `SpendWindow::ALL` order, with what it holds and what is left:
/// the figures a verdict and the wallet's view show.
pub fn window_usage(rules: &SpendRules, held: &Held) -> Vec<WindowUsage> {
    SpendWindow::ALL
        .into_iter()
        .filter_map(|window| {
            let cap = window.cap(rules)?;
            let spent = held.of(window);
            Some(WindowUsage {
                window,
                cap,
                spent,
                remaining: cap.value().saturating_sub(spent),
            })
        })
        .collect()
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

#[cfg(test)]
mod tests;
