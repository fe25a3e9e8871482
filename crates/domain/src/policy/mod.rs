//! Spend policy of a wallet: the rules an operator configures, the verdict they give on a
//! transfer, and what is left of each window they cap. Every rule is optional; `None` means it is
//! not configured, so a policy of the first edition (per-transaction and daily caps, allowlist)
//! reads and behaves as it always did.

mod evaluation;
mod rules;
mod tiers;
mod windows;

pub use evaluation::{
    evaluate_transfer, evaluate_x402, judge_approval, Admitted, ApprovalRefusal, ApprovalStanding,
    PolicyViolation,
};
pub use rules::{
    Allowlist, AllowlistChange, PolicyChange, PolicyChangeRefused, RecipientLimit, RecipientLimits,
    RecipientLimitsChange, SpendLimits, SpendRules, TooManyRecipientLimits, MAX_RECIPIENT_LIMITS,
};
pub use tiers::{
    ApprovalCount, ApprovalCountOutOfRange, AutoConfirm, Quorum, QuorumOutOfRange,
    MAX_APPROVALS_REQUIRED,
};
pub use windows::{window_usage, EarliestExecutions, Held, Reservation, SpendWindow, WindowUsage};

#[cfg(test)]
mod tests;
