//! Rules a send must pass before any policy is looked at: how much one transfer may move, whom it
//! may pay, and the idempotency key that makes a retry safe.

use std::fmt;

use alloy_primitives::U256;

use crate::text::hidden_or_control;
use crate::{AtomicAmount, EvmAddress};

/// The most one transfer may move: 2^128 - 1 atomic units, far above any token's supply. Bounding
/// it keeps every sum of a wallet's transfers exact in 256 bits.
pub const MAX_TRANSFER_ATOMIC: U256 = U256::from_limbs([u64::MAX, u64::MAX, 0, 0]);

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("amount must be at most {MAX_TRANSFER_ATOMIC} atomic units")]
pub struct TransferTooLarge;

/// `amount` if one transfer may move it.
pub fn check_transfer_amount(amount: AtomicAmount) -> Result<AtomicAmount, TransferTooLarge> {
    if amount.value() > MAX_TRANSFER_ATOMIC {
        Err(TransferTooLarge)
    } else {
        Ok(amount)
    }
}

/// A recipient that can only lose the money sent to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RecipientRefused {
    #[error("recipient must not be the zero address: tokens sent there are burnt")]
    ZeroAddress,
    #[error("recipient must not be the wallet itself")]
    OwnWallet,
    #[error("recipient must not be the token contract: tokens sent there are lost")]
    TokenContract,
}

/// Refuses recipients that can only lose money: the zero address, the sending wallet and the
/// token contract.
pub fn check_recipient(
    recipient: &EvmAddress,
    wallet: &EvmAddress,
    token: Option<&EvmAddress>,
) -> Result<(), RecipientRefused> {
    if recipient.as_bytes() == &[0; 20] {
        return Err(RecipientRefused::ZeroAddress);
    }
    if recipient == wallet {
        return Err(RecipientRefused::OwnWallet);
    }
    if Some(recipient) == token {
        return Err(RecipientRefused::TokenContract);
    }
    Ok(())
}

/// A client-chosen key that makes retries of one send safe: 1 to 255 characters, none of them a
/// control character.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

pub const MAX_IDEMPOTENCY_KEY_CHARS: usize = 255;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IdempotencyKeyError {
    #[error("idempotency key must not be empty or blank")]
    Empty,
    #[error("idempotency key must be at most {MAX_IDEMPOTENCY_KEY_CHARS} characters")]
    TooLong,
    #[error("idempotency key must not contain control or invisible characters")]
    ControlCharacter,
}

impl IdempotencyKey {
    pub fn parse(candidate: &str) -> Result<Self, IdempotencyKeyError> {
        if candidate
            .chars()
            .all(|c| c.is_whitespace() || (hidden_or_control(c) && !c.is_control()))
        {
            return Err(IdempotencyKeyError::Empty);
        }
        if candidate.chars().count() > MAX_IDEMPOTENCY_KEY_CHARS {
            return Err(IdempotencyKeyError::TooLong);
        }
        if candidate.chars().any(hidden_or_control) {
            return Err(IdempotencyKeyError::ControlCharacter);
        }
        Ok(Self(candidate.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(byte: u8) -> EvmAddress {
        EvmAddress::from_bytes([byte; 20])
    }

    #[test]
    fn one_transfer_moves_at_most_two_to_the_128_minus_one() {
        let max = AtomicAmount::new(MAX_TRANSFER_ATOMIC).expect("non-zero");
        assert_eq!(check_transfer_amount(max), Ok(max));
        assert_eq!(MAX_TRANSFER_ATOMIC, U256::from(u128::MAX));
        let above = AtomicAmount::new(MAX_TRANSFER_ATOMIC + U256::from(1u8)).expect("non-zero");
        assert_eq!(check_transfer_amount(above), Err(TransferTooLarge));
        // Even 2^128 transfers of the maximum fit in 256 bits: a window's sum cannot overflow.
        assert!(MAX_TRANSFER_ATOMIC
            .checked_mul(MAX_TRANSFER_ATOMIC)
            .is_some());
    }

    #[test]
    fn recipients_that_can_only_lose_money_are_refused_by_rule() {
        let (wallet, token) = (address(1), address(2));
        assert_eq!(check_recipient(&address(3), &wallet, Some(&token)), Ok(()));
        assert_eq!(
            check_recipient(&EvmAddress::from_bytes([0; 20]), &wallet, Some(&token)),
            Err(RecipientRefused::ZeroAddress)
        );
        assert_eq!(
            check_recipient(&wallet, &wallet, Some(&token)),
            Err(RecipientRefused::OwnWallet)
        );
        assert_eq!(
            check_recipient(&token, &wallet, Some(&token)),
            Err(RecipientRefused::TokenContract)
        );
        assert_eq!(check_recipient(&token, &wallet, None), Ok(()));
    }

    #[test]
    fn idempotency_keys_are_bounded_printable_text() {
        assert_eq!(
            IdempotencyKey::parse("order-42").map(|k| k.to_string()),
            Ok("order-42".into())
        );
        assert!(IdempotencyKey::parse(&"é".repeat(255)).is_ok());
        assert_eq!(
            IdempotencyKey::parse("   "),
            Err(IdempotencyKeyError::Empty),
            "a blank key is none"
        );
        assert_eq!(IdempotencyKey::parse(""), Err(IdempotencyKeyError::Empty));
        for blank in ["\u{200B}", " \u{FEFF} ", "\u{3000}\u{2060}", "\u{00A0}"] {
            assert_eq!(
                IdempotencyKey::parse(blank),
                Err(IdempotencyKeyError::Empty),
                "{blank:?} shows nothing"
            );
        }
        assert_eq!(
            IdempotencyKey::parse(&"k".repeat(256)),
            Err(IdempotencyKeyError::TooLong)
        );
        for bad in [
            "a\0b",
            "line\nbreak",
            "\u{7f}",
            "order\u{200B}-42",
            "\u{202E}24-redro",
        ] {
            assert_eq!(
                IdempotencyKey::parse(bad),
                Err(IdempotencyKeyError::ControlCharacter),
                "{bad:?}"
            );
        }
    }
}
