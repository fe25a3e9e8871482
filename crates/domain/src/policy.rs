//! Spend policy of a wallet: the limits an operator configures.

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

    #[test]
    fn extending_creates_or_appends_without_duplicates() {
        let created = Allowlist::unrestricted().extended(&[address(1)]);
        assert_eq!(created.addresses(), Some(&[address(1)][..]));
        let appended = created.extended(&[address(1), address(3)]);
        assert_eq!(appended.addresses(), Some(&[address(1), address(3)][..]));
    }
}
