//! Spend policy of a wallet: the limits an operator configures, and what is left of them.

use std::time::Duration;

use alloy_primitives::U256;

use crate::{AtomicAmount, EvmAddress};

/// Amount limits of a spend policy; `None` means no limit is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpendLimits {
    pub max_per_tx: Option<AtomicAmount>,
    pub max_daily: Option<AtomicAmount>,
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

    /// This allowlist with `added` appended, creating the list if none was configured.
    pub fn extended(&self, added: &[EvmAddress]) -> Self {
        let existing = self.0.iter().flatten().copied();
        Self::of(existing.chain(added.iter().copied()))
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

/// A change to a spend policy; `None` fields keep their current value, `Some(None)` clears a limit.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PolicyChange {
    pub max_per_tx: Option<Option<AtomicAmount>>,
    pub max_daily: Option<Option<AtomicAmount>>,
    pub allowlist: AllowlistChange,
}

impl PolicyChange {
    /// The limits and allowlist that result from applying this change to the current ones.
    pub fn apply(&self, limits: SpendLimits, allowlist: &Allowlist) -> (SpendLimits, Allowlist) {
        let limits = SpendLimits {
            max_per_tx: self.max_per_tx.unwrap_or(limits.max_per_tx),
            max_daily: self.max_daily.unwrap_or(limits.max_daily),
        };
        let allowlist = match &self.allowlist {
            AllowlistChange::Keep => allowlist.clone(),
            AllowlistChange::Remove => Allowlist::unrestricted(),
            AllowlistChange::Replace(replacement) => replacement.clone(),
            AllowlistChange::Extend(added) => allowlist.extended(added),
        };
        (limits, allowlist)
    }
}

/// Why a transfer breaks the spend policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PolicyViolation {
    #[error("recipient {recipient} is not on the wallet's allowlist")]
    RecipientNotAllowlisted { recipient: EvmAddress },
    #[error("amount {amount} exceeds the per-transaction maximum of {max}")]
    ExceedsPerTransactionMax {
        amount: AtomicAmount,
        max: AtomicAmount,
    },
    #[error(
        "amount {amount} exceeds the daily maximum of {max}; {available} is still available in the rolling 24 hours"
    )]
    ExceedsDailyMax {
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
            Self::ExceedsDailyMax { .. } => "max_daily",
        }
    }
}

/// A rolling window a policy caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpendWindow {
    /// The rolling 24 hours of `max_daily`.
    Daily,
}

impl SpendWindow {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Daily => "daily",
        }
    }

    /// How far back the window reaches from now.
    pub const fn length(self) -> Duration {
        match self {
            Self::Daily => Duration::from_secs(24 * 60 * 60),
        }
    }
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

/// Each window the limits cap, with what it holds (`held_daily`, as admission sums it) and what
/// is left: the figures a verdict and the wallet's view show.
pub fn window_usage(limits: &SpendLimits, held_daily: U256) -> Vec<WindowUsage> {
    limits
        .max_daily
        .map(|cap| WindowUsage {
            window: SpendWindow::Daily,
            cap,
            spent: held_daily,
            remaining: cap.value().saturating_sub(held_daily),
        })
        .into_iter()
        .collect()
}

/// Checks a transfer of `amount` to `recipient` against the policy, given the amount already
/// held by intents in the rolling 24-hour window. Rules apply only where configured; the
/// allowlist is checked first, then the per-transaction and the daily maximum.
pub fn evaluate_transfer(
    limits: &SpendLimits,
    allowlist: &Allowlist,
    recipient: &EvmAddress,
    amount: AtomicAmount,
    held_in_window: U256,
) -> Result<(), PolicyViolation> {
    if let Some(allowed) = allowlist.addresses() {
        if !allowed.contains(recipient) {
            return Err(PolicyViolation::RecipientNotAllowlisted {
                recipient: *recipient,
            });
        }
    }
    if let Some(max) = limits.max_per_tx {
        if amount > max {
            return Err(PolicyViolation::ExceedsPerTransactionMax { amount, max });
        }
    }
    if let Some(max) = limits.max_daily {
        let within = held_in_window
            .checked_add(amount.value())
            .is_some_and(|total| total <= max.value());
        if !within {
            let available = max.value().saturating_sub(held_in_window);
            return Err(PolicyViolation::ExceedsDailyMax {
                amount,
                max,
                available,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(last: u8) -> EvmAddress {
        let mut bytes = [0u8; 20];
        bytes[19] = last;
        EvmAddress::from_bytes(bytes)
    }

    #[test]
    fn an_allowlist_keeps_each_address_once_in_order() {
        let list = Allowlist::of([address(2), address(1), address(2)]);
        assert_eq!(list.addresses(), Some(&[address(2), address(1)][..]));
    }

    #[test]
    fn no_allowlist_and_an_empty_allowlist_differ() {
        assert_eq!(Allowlist::unrestricted().addresses(), None);
        assert_eq!(Allowlist::of([]).addresses(), Some(&[][..]));
    }

    fn amount(value: &str) -> AtomicAmount {
        AtomicAmount::parse(value).expect("valid amount")
    }

    #[test]
    fn an_empty_change_keeps_everything() {
        let limits = SpendLimits {
            max_per_tx: Some(amount("5")),
            max_daily: None,
        };
        let list = Allowlist::of([address(1)]);
        assert_eq!(PolicyChange::default().apply(limits, &list), (limits, list));
    }

    #[test]
    fn limits_can_be_set_and_cleared_independently() {
        let limits = SpendLimits {
            max_per_tx: Some(amount("5")),
            max_daily: Some(amount("9")),
        };
        let change = PolicyChange {
            max_per_tx: Some(None),
            max_daily: Some(Some(amount("20"))),
            allowlist: AllowlistChange::Keep,
        };
        let (changed, _) = change.apply(limits, &Allowlist::unrestricted());
        assert_eq!(
            changed,
            SpendLimits {
                max_per_tx: None,
                max_daily: Some(amount("20"))
            }
        );
    }

    #[test]
    fn allowlist_changes_remove_replace_and_extend() {
        let current = Allowlist::of([address(1)]);
        let apply = |allowlist| {
            PolicyChange {
                allowlist,
                ..PolicyChange::default()
            }
            .apply(SpendLimits::default(), &current)
            .1
        };
        assert_eq!(apply(AllowlistChange::Remove), Allowlist::unrestricted());
        assert_eq!(
            apply(AllowlistChange::Replace(Allowlist::of([]))),
            Allowlist::of([])
        );
        assert_eq!(
            apply(AllowlistChange::Extend(vec![address(2)])),
            Allowlist::of([address(1), address(2)])
        );
    }

    fn limits(per_tx: Option<&str>, daily: Option<&str>) -> SpendLimits {
        SpendLimits {
            max_per_tx: per_tx.map(amount),
            max_daily: daily.map(amount),
        }
    }

    fn check(
        limits: &SpendLimits,
        list: &Allowlist,
        value: &str,
        held: U256,
    ) -> Result<(), PolicyViolation> {
        evaluate_transfer(limits, list, &address(1), amount(value), held)
    }

    #[test]
    fn no_rules_configured_allows_anything() {
        let max = U256::MAX.to_string();
        assert_eq!(
            check(
                &SpendLimits::default(),
                &Allowlist::unrestricted(),
                &max,
                U256::MAX
            ),
            Ok(())
        );
    }

    #[test]
    fn the_per_transaction_maximum_allows_exactly_the_limit_and_refuses_one_more() {
        let policy = limits(Some("100"), None);
        assert_eq!(
            check(&policy, &Allowlist::unrestricted(), "100", U256::ZERO),
            Ok(())
        );
        assert_eq!(
            check(&policy, &Allowlist::unrestricted(), "101", U256::ZERO),
            Err(PolicyViolation::ExceedsPerTransactionMax {
                amount: amount("101"),
                max: amount("100")
            })
        );
    }

    #[test]
    fn the_daily_maximum_counts_what_the_window_already_holds() {
        let policy = limits(None, Some("1000"));
        let list = Allowlist::unrestricted();
        assert_eq!(check(&policy, &list, "400", U256::from(600)), Ok(()));
        assert_eq!(
            check(&policy, &list, "401", U256::from(600)),
            Err(PolicyViolation::ExceedsDailyMax {
                amount: amount("401"),
                max: amount("1000"),
                available: U256::from(400)
            })
        );
        assert_eq!(check(&policy, &list, "1000", U256::ZERO), Ok(()));
        assert_eq!(
            check(&policy, &list, "1", U256::from(1000)),
            Err(PolicyViolation::ExceedsDailyMax {
                amount: amount("1"),
                max: amount("1000"),
                available: U256::ZERO
            })
        );
    }

    #[test]
    fn a_window_already_over_the_limit_shows_nothing_available() {
        let refused = check(
            &limits(None, Some("10")),
            &Allowlist::unrestricted(),
            "1",
            U256::from(50),
        );
        assert!(
            matches!(refused, Err(PolicyViolation::ExceedsDailyMax { available, .. }) if available == U256::ZERO)
        );
    }

    #[test]
    fn sums_that_overflow_256_bits_are_refused_not_wrapped() {
        let max = U256::MAX.to_string();
        let policy = limits(None, Some(&max));
        let list = Allowlist::unrestricted();
        assert_eq!(check(&policy, &list, &max, U256::ZERO), Ok(()));
        assert!(matches!(
            check(&policy, &list, "2", U256::MAX - U256::from(1)),
            Err(PolicyViolation::ExceedsDailyMax { available, .. }) if available == U256::from(1)
        ));
        assert!(check(&policy, &list, &max, U256::MAX).is_err());
    }

    #[test]
    fn an_allowlist_admits_only_its_addresses_and_an_empty_one_admits_none() {
        let policy = SpendLimits::default();
        assert_eq!(
            check(&policy, &Allowlist::of([address(1)]), "5", U256::ZERO),
            Ok(())
        );
        let refused = Err(PolicyViolation::RecipientNotAllowlisted {
            recipient: address(1),
        });
        assert_eq!(
            check(&policy, &Allowlist::of([address(2)]), "5", U256::ZERO),
            refused
        );
        assert_eq!(check(&policy, &Allowlist::of([]), "5", U256::ZERO), refused);
        assert_eq!(
            check(&policy, &Allowlist::unrestricted(), "5", U256::ZERO),
            Ok(())
        );
    }

    #[test]
    fn the_allowlist_is_checked_before_the_amounts() {
        let policy = limits(Some("1"), Some("1"));
        let refused = check(&policy, &Allowlist::of([]), "5", U256::ZERO);
        assert!(matches!(
            refused,
            Err(PolicyViolation::RecipientNotAllowlisted { .. })
        ));
        let refused = check(&policy, &Allowlist::unrestricted(), "5", U256::ZERO);
        assert!(matches!(
            refused,
            Err(PolicyViolation::ExceedsPerTransactionMax { .. })
        ));
    }

    #[test]
    fn details_name_the_rule_and_what_is_left() {
        let refused = check(
            &limits(None, Some("1000")),
            &Allowlist::unrestricted(),
            "700",
            U256::from(600),
        );
        let detail = refused.expect_err("over").to_string();
        assert!(
            detail.contains("daily maximum of 1000") && detail.contains("400 is still available"),
            "{detail}"
        );
    }

    #[test]
    fn extending_creates_or_appends_without_duplicates() {
        let created = Allowlist::unrestricted().extended(&[address(1)]);
        assert_eq!(created.addresses(), Some(&[address(1)][..]));
        let appended = created.extended(&[address(1), address(3)]);
        assert_eq!(appended.addresses(), Some(&[address(1), address(3)][..]));
    }
    #[test]
    fn each_violation_names_its_rule() {
        let rules = [
            PolicyViolation::RecipientNotAllowlisted {
                recipient: address(1),
            },
            PolicyViolation::ExceedsPerTransactionMax {
                amount: amount("2"),
                max: amount("1"),
            },
            PolicyViolation::ExceedsDailyMax {
                amount: amount("2"),
                max: amount("1"),
                available: U256::ZERO,
            },
        ]
        .map(|violation| violation.rule());
        assert_eq!(rules, ["allowlist", "max_per_tx", "max_daily"]);
    }

    #[test]
    fn usage_shows_only_capped_windows_with_what_is_left() {
        assert_eq!(window_usage(&SpendLimits::default(), U256::from(5)), []);
        let limits = SpendLimits {
            max_per_tx: Some(amount("10")),
            max_daily: Some(amount("50")),
        };
        assert_eq!(
            window_usage(&limits, U256::from(20)),
            [WindowUsage {
                window: SpendWindow::Daily,
                cap: amount("50"),
                spent: U256::from(20),
                remaining: U256::from(30),
            }]
        );
    }

    #[test]
    fn a_window_holding_more_than_its_lowered_cap_has_nothing_left() {
        let limits = SpendLimits {
            max_per_tx: None,
            max_daily: Some(amount("50")),
        };
        let usage = window_usage(&limits, U256::from(80));
        assert_eq!(
            (usage[0].spent, usage[0].remaining),
            (U256::from(80), U256::ZERO)
        );
    }

    #[test]
    fn the_daily_window_is_a_rolling_day() {
        assert_eq!(SpendWindow::Daily.length(), Duration::from_secs(86_400));
        assert_eq!(SpendWindow::Daily.as_str(), "daily");
    }
}
