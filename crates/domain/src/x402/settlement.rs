//! Whether a handed-out authorization was settled, read from the token's `AuthorizationUsed`
//! logs over a range of blocks: used (the money moved), expired (no block that can still come may
//! use it), or not seen yet.

use std::ops::RangeInclusive;

use crate::{EvmAddress, IntentId};

/// A block of the chain: its number and its timestamp in seconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockHead {
    pub number: u64,
    pub timestamp: u64,
}

/// An `AuthorizationUsed(authorizer, nonce)` log of the token: the authorization moved the money in
/// the transaction `tx_hash`, mined in block `block_number`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsedAuthorization {
    pub authorizer: EvmAddress,
    pub nonce: [u8; 32],
    pub tx_hash: String,
    pub block_number: u64,
}

/// An authorized x402 intent whose settlement is watched for: its authorization's signer, nonce,
/// token and `validBefore` (seconds), and the first block not yet searched for its use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchedAuthorization {
    pub intent: IntentId,
    pub token: EvmAddress,
    pub authorizer: EvmAddress,
    pub nonce: [u8; 32],
    pub valid_before: u64,
    pub from_block: u64,
}

/// What a search of blocks found of one authorization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettlementSeen {
    /// Used in `tx_hash`: the intent is executed.
    Used { tx_hash: String, block_number: u64 },
    /// Unused through a block whose timestamp reached `validBefore`: EIP-3009 refuses it in that
    /// block and every later one (timestamps never go back), so the money will never move.
    Expired,
    /// Unused so far, and still usable.
    Unseen,
}

/// The blocks one search covers for `watched`: from the lowest first block not yet searched, up to
/// `head`, at most `max_blocks` of them; `None` when every authorization is searched through
/// `head`.
pub fn search_range(
    watched: &[WatchedAuthorization],
    head: u64,
    max_blocks: u64,
) -> Option<RangeInclusive<u64>> {
    let from = watched.iter().map(|watched| watched.from_block).min()?;
    if from > head {
        return None;
    }
    let to = head.min(from.saturating_add(max_blocks.max(1) - 1));
    Some(from..=to)
}

/// What the search of blocks up to `through` (every one from `watched.from_block` on), whose
/// last block's timestamp is `through_time`, found of `watched` among the `used` logs. A use wins
/// over expiry: a log proves the money moved.
pub fn settlement_seen(
    watched: &WatchedAuthorization,
    used: &[UsedAuthorization],
    through_time: u64,
) -> SettlementSeen {
    match used
        .iter()
        .find(|log| log.authorizer == watched.authorizer && log.nonce == watched.nonce)
    {
        Some(log) => SettlementSeen::Used {
            tx_hash: log.tx_hash.clone(),
            block_number: log.block_number,
        },
        None if through_time >= watched.valid_before => SettlementSeen::Expired,
        None => SettlementSeen::Unseen,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PAYER: &str = "0x1111111111111111111111111111111111111111";
    const OTHER: &str = "0x2222222222222222222222222222222222222222";
    const TOKEN: &str = "0x3333333333333333333333333333333333333333";

    fn address(text: &str) -> EvmAddress {
        EvmAddress::parse(text).expect("an address")
    }

    fn watched(from_block: u64, valid_before: u64) -> WatchedAuthorization {
        WatchedAuthorization {
            intent: IntentId(uuid::Uuid::from_u128(1)),
            token: address(TOKEN),
            authorizer: address(PAYER),
            nonce: [7; 32],
            valid_before,
            from_block,
        }
    }

    fn used_by(authorizer: &str, nonce: [u8; 32]) -> UsedAuthorization {
        UsedAuthorization {
            authorizer: address(authorizer),
            nonce,
            tx_hash: format!("0x{}", "ab".repeat(32)),
            block_number: 12,
        }
    }

    #[test]
    fn a_log_of_its_signer_and_nonce_is_its_settlement() {
        let seen = settlement_seen(&watched(10, 1_000), &[used_by(PAYER, [7; 32])], 900);
        assert_eq!(
            seen,
            SettlementSeen::Used {
                tx_hash: format!("0x{}", "ab".repeat(32)),
                block_number: 12
            }
        );
    }

    #[test]
    fn a_use_is_seen_even_when_the_search_reached_past_valid_before() {
        let seen = settlement_seen(&watched(10, 1_000), &[used_by(PAYER, [7; 32])], 5_000);
        assert!(matches!(seen, SettlementSeen::Used { .. }), "{seen:?}");
    }

    #[test]
    fn another_signers_nonce_or_another_nonce_of_its_signer_is_not_its_settlement() {
        let logs = [used_by(OTHER, [7; 32]), used_by(PAYER, [8; 32])];
        assert_eq!(
            settlement_seen(&watched(10, 1_000), &logs, 900),
            SettlementSeen::Unseen
        );
    }

    #[test]
    fn unused_through_a_block_at_valid_before_is_expired_and_not_before() {
        let authorization = watched(10, 1_000);
        assert_eq!(
            settlement_seen(&authorization, &[], 999),
            SettlementSeen::Unseen,
            "a block at 999 may still be followed by one at 999 that uses it"
        );
        assert_eq!(
            settlement_seen(&authorization, &[], 1_000),
            SettlementSeen::Expired,
            "EIP-3009 requires block.timestamp < validBefore"
        );
    }

    #[test]
    fn a_search_starts_at_the_lowest_unsearched_block_and_is_capped() {
        let batch = [watched(40, 1), watched(25, 1), watched(90, 1)];
        assert_eq!(search_range(&batch, 100, 1_000), Some(25..=100));
        assert_eq!(search_range(&batch, 100, 10), Some(25..=34));
        assert_eq!(search_range(&batch, 24, 10), None, "nothing new to search");
        assert_eq!(search_range(&[], 100, 10), None);
        assert_eq!(
            search_range(&batch, 100, 0),
            Some(25..=25),
            "one block at least"
        );
    }

    proptest! {
        /// Whatever the batch, the range starts at a block some authorization still needs, never
        /// passes the head, and covers at most `max_blocks`.
        #[test]
        fn a_search_never_skips_a_block_nor_passes_the_head(
            froms in proptest::collection::vec(0u64..1_000, 1..20),
            head in 0u64..1_200,
            max_blocks in 1u64..500,
        ) {
            let batch: Vec<_> = froms.iter().map(|&from| watched(from, 1)).collect();
            let lowest = *froms.iter().min().expect("a batch");
            match search_range(&batch, head, max_blocks) {
                Some(range) => {
                    prop_assert_eq!(*range.start(), lowest);
                    prop_assert!(*range.end() <= head);
                    prop_assert!(range.end() - range.start() < max_blocks);
                }
                None => prop_assert!(lowest > head),
            }
        }
    }
}
