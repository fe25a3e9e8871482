//! The policy record: the wallet's amount caps, its allowlist and per-recipient caps, every rule
//! together (`SpendRules`), and the changes an operator makes to them, refused when the result
//! would not hold.

use crate::{AtomicAmount, EvmAddress};

use super::{ApprovalCount, AutoConfirm, Quorum, SpendWindow};

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

/// Every rule of a spend policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpendRules {
    pub limits: SpendLimits,
    pub allowlist: Allowlist,
    pub recipient_limits: RecipientLimits,
    pub auto_confirm: AutoConfirm,
    pub quorum: Quorum,
    /// Whether the wallet pays x402 challenges at all.
    pub x402_enabled: bool,
}

/// No limit, no allowlist, no tier, one approval; x402 payments allowed.
impl Default for SpendRules {
    fn default() -> Self {
        Self {
            limits: SpendLimits::default(),
            allowlist: Allowlist::default(),
            recipient_limits: RecipientLimits::default(),
            auto_confirm: AutoConfirm::default(),
            quorum: Quorum::default(),
            x402_enabled: true,
        }
    }
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
    pub x402_enabled: Option<bool>,
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
            x402_enabled: self.x402_enabled.unwrap_or(rules.x402_enabled),
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
