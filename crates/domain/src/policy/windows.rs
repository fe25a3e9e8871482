//! The rolling windows a policy caps: what the wallet's intents hold in each, which intent counts
//! where, when what they hold changes by time alone, and what is left of each cap.

use std::fmt;
use std::time::Duration;

use alloy_primitives::U256;
use time::OffsetDateTime;

use crate::{AtomicAmount, ConfirmedBy, EvmAddress, IntentStatus};

use super::SpendRules;

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
    pub(super) fn span(self) -> &'static str {
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
pub(super) fn fits(held: U256, amount: AtomicAmount, cap: AtomicAmount) -> bool {
    held.checked_add(amount.value())
        .is_some_and(|total| total <= cap.value())
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
