//! The tiers a transfer the policy admits falls in: the one the policy confirms by itself, and
//! the quorum of operators' approvals.

use alloy_primitives::U256;

use crate::AtomicAmount;

use super::windows::fits;

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
