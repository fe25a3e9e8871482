//! Rules of carrying out a confirmed transfer on chain: when to send a transaction again, when to
//! replace it with a better-paying one, and when a transfer that left no receipt is known never to
//! happen. Each transfer owns one nonce; every transaction sent for it uses that nonce, so at most
//! one of them can ever be mined.

use std::time::Duration;

/// EIP-1559 fee caps, in wei per gas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeeQuote {
    pub max_fee_per_gas: u128,
    pub max_priority_fee_per_gas: u128,
}

/// Nodes accept a transaction in place of a pending one with the same nonce only when it pays at
/// least 10 % more on both caps; 20 % leaves room for rounding and node differences.
const REPLACEMENT_BUMP_PERCENT: u128 = 120;

/// Fees of a replacement for a transaction that paid `previous`: at least `quoted` (today's
/// market), and at least 20 % above what was offered before on both caps.
pub fn replacement_fees(previous: FeeQuote, quoted: FeeQuote) -> FeeQuote {
    let bumped = |before: u128| {
        before
            .saturating_mul(REPLACEMENT_BUMP_PERCENT)
            .div_ceil(100)
            .max(before.saturating_add(1))
    };
    let priority = bumped(previous.max_priority_fee_per_gas).max(quoted.max_priority_fee_per_gas);
    let max_fee = bumped(previous.max_fee_per_gas)
        .max(quoted.max_fee_per_gas)
        .max(priority);
    FeeQuote {
        max_fee_per_gas: max_fee,
        max_priority_fee_per_gas: priority,
    }
}

/// Waits between checks of a sent transaction: doubling from `base` up to `cap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetrySchedule {
    pub base: Duration,
    pub cap: Duration,
}

impl RetrySchedule {
    /// The wait after the `checks`-th check without a receipt (the first wait is `base`).
    pub fn delay(&self, checks: u32) -> Duration {
        let factor = 1u32.checked_shl(checks.min(31)).unwrap_or(u32::MAX);
        self.base.saturating_mul(factor).min(self.cap)
    }
}

/// What to make of a sent transfer for which none of its transactions has a receipt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WithoutReceipt {
    /// The nonce is still free: the transaction may yet be mined; send it again (or replace it).
    StillPending,
    /// The nonce was used, but the receipt may simply not be visible yet: look again later.
    NonceUsedLookAgain,
    /// The nonce has been used by a transaction that is not ours for longer than the grace: this
    /// transfer was not and will never be executed.
    NonceTakenByAnother,
}

/// Whether a wallet that has mined `mined_nonces` transactions has used `nonce` for good, by
/// whichever transaction: then no other transaction with that nonce can ever be mined.
pub fn nonce_used(nonce: u64, mined_nonces: u64) -> bool {
    mined_nonces > nonce
}

/// Judges a sent transfer whose transactions have no receipt, from the number of transactions the
/// wallet has mined and since when (if ever) its nonce was first seen used.
pub fn without_receipt(
    nonce: u64,
    mined_nonces: u64,
    used_seen_for: Option<Duration>,
    grace: Duration,
) -> WithoutReceipt {
    if !nonce_used(nonce, mined_nonces) {
        return WithoutReceipt::StillPending;
    }
    match used_seen_for {
        Some(seen) if seen >= grace => WithoutReceipt::NonceTakenByAnother,
        _ => WithoutReceipt::NonceUsedLookAgain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fees(max: u128, priority: u128) -> FeeQuote {
        FeeQuote {
            max_fee_per_gas: max,
            max_priority_fee_per_gas: priority,
        }
    }

    #[test]
    fn a_replacement_pays_a_fifth_more_or_the_market_whichever_is_higher() {
        assert_eq!(replacement_fees(fees(100, 10), fees(50, 5)), fees(120, 12));
        assert_eq!(
            replacement_fees(fees(100, 10), fees(300, 40)),
            fees(300, 40)
        );
        assert_eq!(
            replacement_fees(fees(1, 1), fees(0, 0)),
            fees(2, 2),
            "always strictly more"
        );
        let huge = replacement_fees(fees(u128::MAX, u128::MAX), fees(0, 0));
        assert_eq!(huge.max_fee_per_gas, u128::MAX, "saturates, never wraps");
    }

    #[test]
    fn the_priority_fee_never_exceeds_the_max_fee() {
        let replaced = replacement_fees(fees(10, 10), fees(5, 30));
        assert!(replaced.max_priority_fee_per_gas <= replaced.max_fee_per_gas);
    }

    #[test]
    fn waits_double_up_to_the_cap() {
        let schedule = RetrySchedule {
            base: Duration::from_secs(1),
            cap: Duration::from_secs(60),
        };
        let waits: Vec<u64> = (0..8).map(|n| schedule.delay(n).as_secs()).collect();
        assert_eq!(waits, vec![1, 2, 4, 8, 16, 32, 60, 60]);
        assert_eq!(schedule.delay(u32::MAX), Duration::from_secs(60));
    }

    #[test]
    fn a_nonce_is_used_once_the_wallet_has_mined_past_it() {
        assert!(!nonce_used(5, 0));
        assert!(!nonce_used(5, 5));
        assert!(nonce_used(5, 6));
        assert!(nonce_used(0, 1));
    }

    #[test]
    fn only_a_nonce_used_for_longer_than_the_grace_ends_a_transfer_without_receipt() {
        let grace = Duration::from_secs(30);
        assert_eq!(
            without_receipt(5, 5, None, grace),
            WithoutReceipt::StillPending
        );
        assert_eq!(
            without_receipt(5, 3, Some(Duration::from_secs(99)), grace),
            WithoutReceipt::StillPending
        );
        assert_eq!(
            without_receipt(5, 6, None, grace),
            WithoutReceipt::NonceUsedLookAgain
        );
        assert_eq!(
            without_receipt(5, 6, Some(Duration::from_secs(10)), grace),
            WithoutReceipt::NonceUsedLookAgain
        );
        assert_eq!(
            without_receipt(5, 6, Some(grace), grace),
            WithoutReceipt::NonceTakenByAnother
        );
    }
}
