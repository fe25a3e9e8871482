use std::time::Duration;

use alloy_primitives::U256;
use proptest::prelude::*;
use time::OffsetDateTime;

use super::*;
use crate::{
    Approvals, AtomicAmount, ConfirmedBy, EvmAddress, IntentStatus, Operator, OperatorName,
};

fn address(last: u8) -> EvmAddress {
    let mut bytes = [0u8; 20];
    bytes[19] = last;
    EvmAddress::from_bytes(bytes)
}

fn amount(value: &str) -> AtomicAmount {
    AtomicAmount::parse(value).expect("valid amount")
}

fn some(value: &str) -> Option<AtomicAmount> {
    Some(amount(value))
}

fn held(daily: u64, weekly: u64, monthly: u64, recipient_daily: u64) -> Held {
    Held {
        daily: U256::from(daily),
        weekly: U256::from(weekly),
        monthly: U256::from(monthly),
        auto_confirm_daily: U256::ZERO,
        recipient_daily: U256::from(recipient_daily),
    }
}

fn check(rules: &SpendRules, value: &str, held: &Held) -> Result<Admitted, PolicyViolation> {
    evaluate_transfer(rules, &address(1), amount(value), held)
}

const ONE: Admitted = Admitted::AwaitsApprovals(ApprovalCount::ONE);

#[test]
fn an_allowlist_keeps_each_address_once_in_order() {
    let list = Allowlist::of([address(2), address(1), address(2)]);
    assert_eq!(list.addresses(), Some(&[address(2), address(1)][..]));
}

#[test]
fn no_allowlist_and_an_empty_allowlist_differ() {
    assert_eq!(Allowlist::unrestricted().addresses(), None);
    assert_eq!(Allowlist::of([]).addresses(), Some(&[][..]));
    assert!(Allowlist::unrestricted().admits(&address(1)));
    assert!(!Allowlist::of([]).admits(&address(1)));
}

#[test]
fn an_empty_change_keeps_everything() {
    let rules = SpendRules {
        limits: SpendLimits {
            max_per_tx: some("5"),
            max_weekly: some("50"),
            ..SpendLimits::default()
        },
        allowlist: Allowlist::of([address(1)]),
        recipient_limits: RecipientLimits::of([RecipientLimit {
            address: address(2),
            max_per_tx: some("3"),
            max_daily: None,
        }])
        .expect("one"),
        auto_confirm: AutoConfirm {
            max: some("2"),
            daily: some("6"),
        },
        quorum: Quorum {
            required: Some(ApprovalCount::new(2).expect("in range")),
            above: some("40"),
        },
        x402_enabled: false,
    };
    assert_eq!(PolicyChange::default().apply(&rules), Ok(rules));
}

#[test]
fn x402_payments_are_allowed_until_turned_off_and_then_refused_before_any_other_rule() {
    let allowed = SpendRules::default();
    assert!(allowed.x402_enabled, "a new policy pays x402 challenges");
    let amount = AtomicAmount::parse("5").expect("valid");
    assert_eq!(
        evaluate_x402(&allowed, &address(1), amount, &Held::default()),
        evaluate_transfer(&allowed, &address(1), amount, &Held::default())
    );
    let off = PolicyChange {
        x402_enabled: Some(false),
        ..PolicyChange::default()
    }
    .apply(&allowed)
    .expect("a valid change");
    let refused = evaluate_x402(&off, &address(1), amount, &Held::default());
    assert_eq!(refused, Err(PolicyViolation::X402Disabled));
    assert_eq!(PolicyViolation::X402Disabled.rule(), "x402_disabled");
    assert!(
        evaluate_transfer(&off, &address(1), amount, &Held::default()).is_ok(),
        "a send is not an x402 payment"
    );
}

#[test]
fn each_rule_can_be_set_and_cleared_independently() {
    let rules = SpendRules {
        limits: SpendLimits {
            max_per_tx: some("5"),
            max_daily: some("9"),
            max_weekly: some("30"),
            max_monthly: None,
        },
        ..SpendRules::default()
    };
    let change = PolicyChange {
        max_per_tx: Some(None),
        max_daily: Some(some("20")),
        max_monthly: Some(some("100")),
        auto_confirm_daily: Some(some("7")),
        approvals_required: Some(Some(ApprovalCount::new(3).expect("in range"))),
        ..PolicyChange::default()
    };
    let changed = change.apply(&rules).expect("within bounds");
    assert_eq!(
        changed.limits,
        SpendLimits {
            max_per_tx: None,
            max_daily: some("20"),
            max_weekly: some("30"),
            max_monthly: some("100"),
        }
    );
    assert_eq!(
        changed.auto_confirm,
        AutoConfirm {
            max: None,
            daily: some("7")
        }
    );
    assert_eq!(changed.quorum.required.map(ApprovalCount::get), Some(3));
}

#[test]
fn allowlist_changes_remove_replace_and_extend() {
    let current = SpendRules {
        allowlist: Allowlist::of([address(1)]),
        ..SpendRules::default()
    };
    let apply = |allowlist| {
        PolicyChange {
            allowlist,
            ..PolicyChange::default()
        }
        .apply(&current)
        .expect("within bounds")
        .allowlist
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

fn cap(address_last: u8, per_tx: Option<&str>, daily: Option<&str>) -> RecipientLimit {
    RecipientLimit {
        address: address(address_last),
        max_per_tx: per_tx.map(amount),
        max_daily: daily.map(amount),
    }
}

#[test]
fn recipient_limits_merge_replace_and_remove_by_address() {
    let limits =
        RecipientLimits::of([cap(1, Some("5"), None), cap(2, None, Some("9"))]).expect("two");
    let merged = limits
        .merged([
            cap(1, None, Some("7")),
            cap(3, Some("1"), None),
            cap(2, None, None),
        ])
        .expect("two");
    assert_eq!(
        merged.as_slice(),
        [cap(1, None, Some("7")), cap(3, Some("1"), None)]
    );
    assert_eq!(
        merged.of_recipient(&address(3)),
        Some(&cap(3, Some("1"), None))
    );
    assert_eq!(merged.of_recipient(&address(2)), None);
    let current = SpendRules {
        recipient_limits: limits,
        ..SpendRules::default()
    };
    let replaced = PolicyChange {
        recipient_limits: RecipientLimitsChange::Replace(vec![]),
        ..PolicyChange::default()
    }
    .apply(&current)
    .expect("none");
    assert_eq!(replaced.recipient_limits, RecipientLimits::default());
}

#[test]
fn a_policy_caps_at_most_a_hundred_recipients() {
    let many = |count: usize| {
        (0..count).map(|n| RecipientLimit {
            address: EvmAddress::from_bytes([u8::try_from(n).expect("small"); 20]),
            max_per_tx: some("1"),
            max_daily: None,
        })
    };
    assert!(RecipientLimits::of(many(MAX_RECIPIENT_LIMITS)).is_ok());
    assert_eq!(
        RecipientLimits::of(many(MAX_RECIPIENT_LIMITS + 1)),
        Err(TooManyRecipientLimits)
    );
}

#[test]
fn approval_counts_run_from_one_to_five() {
    assert_eq!(ApprovalCount::new(0), Err(ApprovalCountOutOfRange));
    assert_eq!(ApprovalCount::new(1), Ok(ApprovalCount::ONE));
    assert_eq!(ApprovalCount::new(5).map(ApprovalCount::get), Ok(5));
    assert_eq!(ApprovalCount::new(6), Err(ApprovalCountOutOfRange));
}

#[test]
fn a_quorum_asks_for_two_to_five_operators() {
    assert_eq!(ApprovalCount::quorum(1), Err(QuorumOutOfRange));
    assert_eq!(ApprovalCount::quorum(2).map(ApprovalCount::get), Ok(2));
    assert_eq!(ApprovalCount::quorum(5).map(ApprovalCount::get), Ok(5));
    assert_eq!(ApprovalCount::quorum(6), Err(QuorumOutOfRange));
}

#[test]
fn no_rules_configured_allows_anything_and_needs_one_approval() {
    let max = U256::MAX.to_string();
    let full = Held {
        daily: U256::MAX,
        weekly: U256::MAX,
        monthly: U256::MAX,
        auto_confirm_daily: U256::MAX,
        recipient_daily: U256::MAX,
    };
    assert_eq!(check(&SpendRules::default(), &max, &full), Ok(ONE));
}

fn limits(per_tx: Option<&str>, daily: Option<&str>) -> SpendRules {
    SpendRules {
        limits: SpendLimits {
            max_per_tx: per_tx.map(amount),
            max_daily: daily.map(amount),
            ..SpendLimits::default()
        },
        ..SpendRules::default()
    }
}

#[test]
fn the_per_transaction_maximum_allows_exactly_the_limit_and_refuses_one_more() {
    let rules = limits(Some("100"), None);
    assert_eq!(check(&rules, "100", &Held::default()), Ok(ONE));
    assert_eq!(
        check(&rules, "101", &Held::default()),
        Err(PolicyViolation::ExceedsPerTransactionMax {
            amount: amount("101"),
            max: amount("100")
        })
    );
}

#[test]
fn each_wallet_window_counts_what_it_already_holds() {
    for window in [
        SpendWindow::Daily,
        SpendWindow::Weekly,
        SpendWindow::Monthly,
    ] {
        let mut rules = SpendRules::default();
        match window {
            SpendWindow::Daily => rules.limits.max_daily = some("1000"),
            SpendWindow::Weekly => rules.limits.max_weekly = some("1000"),
            _ => rules.limits.max_monthly = some("1000"),
        }
        let holding = held(600, 600, 600, 0);
        assert_eq!(check(&rules, "400", &holding), Ok(ONE), "{window}");
        assert_eq!(
            check(&rules, "401", &holding),
            Err(PolicyViolation::ExceedsWindowMax {
                window,
                amount: amount("401"),
                max: amount("1000"),
                available: U256::from(400)
            }),
            "{window}"
        );
    }
}

#[test]
fn windows_are_checked_daily_then_weekly_then_monthly() {
    let rules = SpendRules {
        limits: SpendLimits {
            max_daily: some("100"),
            max_weekly: some("100"),
            max_monthly: some("100"),
            ..SpendLimits::default()
        },
        ..SpendRules::default()
    };
    let rule = |holding: Held| check(&rules, "10", &holding).expect_err("over").rule();
    assert_eq!(rule(held(95, 95, 95, 0)), "max_daily");
    assert_eq!(rule(held(0, 95, 95, 0)), "max_weekly");
    assert_eq!(rule(held(0, 0, 95, 0)), "max_monthly");
}

#[test]
fn a_recipients_caps_apply_to_it_alone_on_top_of_the_wallets() {
    let rules = SpendRules {
        limits: SpendLimits {
            max_daily: some("1000"),
            ..SpendLimits::default()
        },
        recipient_limits: RecipientLimits::of([cap(1, Some("50"), Some("80"))]).expect("one"),
        ..SpendRules::default()
    };
    assert_eq!(
        check(&rules, "51", &Held::default()),
        Err(PolicyViolation::ExceedsRecipientPerTransactionMax {
            amount: amount("51"),
            max: amount("50")
        })
    );
    assert_eq!(check(&rules, "30", &held(50, 50, 50, 50)), Ok(ONE));
    assert_eq!(
        check(&rules, "31", &held(50, 50, 50, 50)),
        Err(PolicyViolation::ExceedsRecipientDailyMax {
            amount: amount("31"),
            max: amount("80"),
            available: U256::from(30)
        })
    );
    // Another recipient is held only to the wallet's caps.
    assert_eq!(
        evaluate_transfer(&rules, &address(2), amount("500"), &held(50, 50, 50, 80)),
        Ok(ONE)
    );
}

#[test]
fn a_window_already_over_the_limit_shows_nothing_available() {
    let refused = check(&limits(None, Some("10")), "1", &held(50, 0, 0, 0));
    assert!(
        matches!(refused, Err(PolicyViolation::ExceedsWindowMax { available, .. }) if available == U256::ZERO)
    );
}

#[test]
fn sums_that_overflow_256_bits_are_refused_not_wrapped() {
    let max = U256::MAX.to_string();
    let rules = limits(None, Some(&max));
    assert_eq!(check(&rules, &max, &Held::default()), Ok(ONE));
    let nearly_full = Held {
        daily: U256::MAX - U256::from(1),
        ..Held::default()
    };
    assert!(matches!(
        check(&rules, "2", &nearly_full),
        Err(PolicyViolation::ExceedsWindowMax { available, .. }) if available == U256::from(1)
    ));
}

#[test]
fn the_allowlist_is_checked_before_the_amounts() {
    let mut rules = limits(Some("1"), Some("1"));
    rules.allowlist = Allowlist::of([]);
    assert_eq!(
        check(&rules, "5", &Held::default()).map_err(|v| v.rule()),
        Err("allowlist")
    );
    rules.allowlist = Allowlist::unrestricted();
    assert_eq!(
        check(&rules, "5", &Held::default()).map_err(|v| v.rule()),
        Err("max_per_tx")
    );
}

#[test]
fn every_refusal_names_its_rule_and_each_window_what_is_left() {
    let refusals = [
        (
            PolicyViolation::RecipientNotAllowlisted {
                recipient: address(1),
            },
            "allowlist",
            "not on the wallet's allowlist",
        ),
        (
            PolicyViolation::ExceedsPerTransactionMax {
                amount: amount("2"),
                max: amount("1"),
            },
            "max_per_tx",
            "per-transaction maximum of 1",
        ),
        (
            PolicyViolation::ExceedsRecipientPerTransactionMax {
                amount: amount("2"),
                max: amount("1"),
            },
            "recipient_max_per_tx",
            "per-transaction maximum of 1 for this recipient",
        ),
        (
            PolicyViolation::ExceedsWindowMax {
                window: SpendWindow::Daily,
                amount: amount("700"),
                max: amount("1000"),
                available: U256::from(400),
            },
            "max_daily",
            "daily maximum of 1000; 400 is still available in the rolling 24 hours",
        ),
        (
            PolicyViolation::ExceedsWindowMax {
                window: SpendWindow::Weekly,
                amount: amount("2"),
                max: amount("10"),
                available: U256::from(1),
            },
            "max_weekly",
            "weekly maximum of 10; 1 is still available in the rolling 7 days",
        ),
        (
            PolicyViolation::ExceedsWindowMax {
                window: SpendWindow::Monthly,
                amount: amount("2"),
                max: amount("10"),
                available: U256::from(1),
            },
            "max_monthly",
            "monthly maximum of 10; 1 is still available in the rolling 30 days",
        ),
        (
            PolicyViolation::ExceedsRecipientDailyMax {
                amount: amount("2"),
                max: amount("10"),
                available: U256::from(1),
            },
            "recipient_max_daily",
            "1 is still available to it in the rolling 24 hours",
        ),
    ];
    for (violation, rule, detail) in refusals {
        assert_eq!(violation.rule(), rule);
        assert!(violation.to_string().contains(detail), "{violation}");
    }
}

fn auto(max: Option<&str>, daily: Option<&str>) -> SpendRules {
    SpendRules {
        auto_confirm: AutoConfirm {
            max: max.map(amount),
            daily: daily.map(amount),
        },
        ..SpendRules::default()
    }
}

fn with_auto_held(auto_confirm_daily: u64) -> Held {
    Held {
        auto_confirm_daily: U256::from(auto_confirm_daily),
        ..Held::default()
    }
}

#[test]
fn the_policy_confirms_what_is_within_both_auto_confirm_limits() {
    let rules = auto(Some("10"), Some("25"));
    let confirmed = Ok(Admitted::ConfirmedByPolicy);
    assert_eq!(check(&rules, "10", &with_auto_held(15)), confirmed);
    assert_eq!(check(&rules, "11", &Held::default()), Ok(ONE));
    assert_eq!(check(&rules, "10", &with_auto_held(16)), Ok(ONE));
    assert_eq!(
        check(&auto(Some("10"), None), "10", &with_auto_held(1_000_000)),
        confirmed
    );
    assert_eq!(
        check(&auto(None, Some("25")), "25", &Held::default()),
        confirmed
    );
    assert_eq!(check(&auto(None, None), "1", &Held::default()), Ok(ONE));
    assert_eq!(confirmed.map(Admitted::status), Ok(IntentStatus::Confirmed));
    assert_eq!(ONE.status(), IntentStatus::PendingConfirmation);
}

#[test]
fn a_quorum_applies_above_its_threshold_and_overrides_auto_confirmation() {
    let two = ApprovalCount::new(2).expect("in range");
    let mut rules = auto(Some("1000"), None);
    rules.quorum = Quorum {
        required: Some(two),
        above: some("100"),
    };
    assert_eq!(
        check(&rules, "100", &Held::default()),
        Ok(Admitted::ConfirmedByPolicy)
    );
    assert_eq!(
        check(&rules, "101", &Held::default()),
        Ok(Admitted::AwaitsApprovals(two))
    );
    rules.quorum.above = None;
    assert_eq!(
        check(&rules, "1", &Held::default()),
        Ok(Admitted::AwaitsApprovals(two))
    );
}

#[test]
fn only_a_cap_of_a_window_caps_a_window() {
    let mut rules = SpendRules {
        limits: SpendLimits {
            max_per_tx: some("10"),
            ..SpendLimits::default()
        },
        auto_confirm: AutoConfirm {
            max: some("5"),
            daily: None,
        },
        ..SpendRules::default()
    };
    assert!(!rules.caps_a_window());
    rules.auto_confirm.daily = some("8");
    assert!(rules.caps_a_window());
    rules.auto_confirm.daily = None;
    rules.limits.max_weekly = some("70");
    assert!(rules.caps_a_window());
}

#[test]
fn usage_shows_only_capped_windows_with_what_is_left() {
    assert_eq!(window_usage(&SpendRules::default(), &held(5, 5, 5, 5)), []);
    let rules = SpendRules {
        limits: SpendLimits {
            max_per_tx: some("10"),
            max_daily: some("50"),
            max_monthly: some("60"),
            ..SpendLimits::default()
        },
        auto_confirm: AutoConfirm {
            max: some("5"),
            daily: some("8"),
        },
        ..SpendRules::default()
    };
    let holding = Held {
        auto_confirm_daily: U256::from(3),
        ..held(20, 30, 80, 0)
    };
    let usage: Vec<_> = window_usage(&rules, &holding)
        .into_iter()
        .map(|usage| (usage.window, usage.spent, usage.remaining))
        .collect();
    assert_eq!(
        usage,
        [
            (SpendWindow::Daily, U256::from(20), U256::from(30)),
            (SpendWindow::Monthly, U256::from(80), U256::ZERO),
            (SpendWindow::AutoConfirmDaily, U256::from(3), U256::from(5)),
        ]
    );
}

#[test]
fn windows_are_rolling_days() {
    let days: Vec<_> = SpendWindow::ALL
        .map(|window| (window.as_str(), window.length().as_secs() / 86_400))
        .into();
    assert_eq!(
        days,
        [
            ("daily", 1),
            ("weekly", 7),
            ("monthly", 30),
            ("auto_confirm_daily", 1)
        ]
    );
}

#[test]
fn a_pending_intent_is_judged_without_its_own_amount() {
    let holding = Held {
        auto_confirm_daily: U256::from(4),
        ..held(30, 40, 50, 25)
    };
    assert_eq!(
        holding.without_pending(amount("25")),
        Held {
            auto_confirm_daily: U256::from(4),
            ..held(5, 15, 25, 0)
        }
    );
}

// The model-based property: over random sends, decisions, executions, failures, policy changes
// and the passing of time, the policy's verdicts on what `Held::tally` counts never let a window
// exceed its cap, refuse only what would exceed one, and what is counted always equals a
// reference that keeps each intent's reservation as an interval of time.

const RECIPIENTS: u8 = 3;
const HOUR: i64 = 3600;

#[derive(Debug, Clone)]
enum Step {
    Send { recipient: u8, amount: u64 },
    Approve(usize),
    Reject(usize),
    Expire(usize),
    Execute(usize),
    Fail(usize),
    Wait { hours: i64 },
    ChangePolicy(Box<SpendRules>),
}

fn optional_cap(
    range: std::ops::RangeInclusive<u64>,
) -> impl Strategy<Value = Option<AtomicAmount>> {
    proptest::option::of(
        range.prop_map(|cap| AtomicAmount::new(U256::from(cap)).expect("positive")),
    )
}

fn rules() -> impl Strategy<Value = SpendRules> {
    let recipient_limit = (0..RECIPIENTS, optional_cap(10..=60), optional_cap(20..=150));
    (
        (
            optional_cap(10..=60),
            optional_cap(40..=200),
            optional_cap(100..=600),
            optional_cap(200..=1500),
        ),
        proptest::collection::vec(recipient_limit, 0..3),
        (optional_cap(5..=40), optional_cap(20..=120)),
        (proptest::option::of(1u8..=5), optional_cap(10..=60)),
        proptest::option::of(proptest::collection::vec(0..RECIPIENTS, 0..3)),
    )
        .prop_map(
            |(
                (per_tx, daily, weekly, monthly),
                recipients,
                (auto_max, auto_daily),
                (required, above),
                allowlist,
            )| {
                SpendRules {
                    limits: SpendLimits {
                        max_per_tx: per_tx,
                        max_daily: daily,
                        max_weekly: weekly,
                        max_monthly: monthly,
                    },
                    allowlist: allowlist.map_or_else(Allowlist::unrestricted, |listed| {
                        Allowlist::of(listed.into_iter().map(address))
                    }),
                    recipient_limits: RecipientLimits::of(recipients.into_iter().map(
                        |(recipient, max_per_tx, max_daily)| RecipientLimit {
                            address: address(recipient),
                            max_per_tx,
                            max_daily,
                        },
                    ))
                    .expect("at most three"),
                    auto_confirm: AutoConfirm {
                        max: auto_max,
                        daily: auto_daily,
                    },
                    quorum: Quorum {
                        required: required.map(|count| ApprovalCount::new(count).expect("1 to 5")),
                        above,
                    },
                    x402_enabled: true,
                }
            },
        )
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0..RECIPIENTS, 1u64..=70).prop_map(|(recipient, amount)| Step::Send { recipient, amount }),
        3 => any::<usize>().prop_map(Step::Approve),
        1 => any::<usize>().prop_map(Step::Reject),
        1 => any::<usize>().prop_map(Step::Expire),
        3 => any::<usize>().prop_map(Step::Execute),
        1 => any::<usize>().prop_map(Step::Fail),
        3 => prop_oneof![1i64..=30, 100i64..=800].prop_map(|hours| Step::Wait { hours }),
        1 => rules().prop_map(|rules| Step::ChangePolicy(Box::new(rules))),
    ]
}

/// The reference: an intent reserves its amount from its creation until it is released, or
/// until a window's length after its execution.
#[derive(Debug, Clone, Copy)]
struct ReferenceReservation {
    recipient: EvmAddress,
    amount: u64,
    by_policy: bool,
    released_at: Option<OffsetDateTime>,
    executed_at: Option<OffsetDateTime>,
}

impl ReferenceReservation {
    fn reserved(&self, length: Duration, now: OffsetDateTime) -> bool {
        match (self.released_at, self.executed_at) {
            (Some(_), _) => false,
            (None, Some(executed)) => now < executed + length,
            (None, None) => true,
        }
    }
}

fn reference_held(
    reservations: &[ReferenceReservation],
    window: SpendWindow,
    recipient: Option<&EvmAddress>,
    now: OffsetDateTime,
) -> u64 {
    reservations
        .iter()
        .filter(|r| window != SpendWindow::AutoConfirmDaily || r.by_policy)
        .filter(|r| recipient.is_none_or(|recipient| r.recipient == *recipient))
        .filter(|r| r.reserved(window.length(), now))
        .map(|r| r.amount)
        .sum()
}

fn fits_u64(held: u64, amount: u64, cap: Option<AtomicAmount>) -> bool {
    cap.is_none_or(|cap| U256::from(held + amount) <= cap.value())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn no_window_is_ever_exceeded_and_what_is_held_matches_the_reference(
        initial in rules(),
        steps in proptest::collection::vec(step(), 1..120),
    ) {
        let mut now = OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000);
        let mut rules = initial;
        let mut intents: Vec<Reservation> = Vec::new();
        let mut reference: Vec<ReferenceReservation> = Vec::new();
        for step in steps {
            let pick = |index: usize| (!intents.is_empty()).then(|| index % intents.len());
            match step {
                Step::Send { recipient, amount: value } => {
                    let recipient = address(recipient);
                    let amount = AtomicAmount::new(U256::from(value)).expect("positive");
                    let held = Held::tally(&intents, &recipient, now);
                    let reference_of = |window, only: Option<&EvmAddress>| {
                        reference_held(&reference, window, only, now)
                    };
                    let wallet = [SpendWindow::Daily, SpendWindow::Weekly, SpendWindow::Monthly];
                    let counterparty = rules.recipient_limits.of_recipient(&recipient).copied();
                    let all_fit = rules.allowlist.admits(&recipient)
                        && rules.limits.max_per_tx.is_none_or(|max| amount <= max)
                        && counterparty.and_then(|c| c.max_per_tx).is_none_or(|max| amount <= max)
                        && wallet.iter().all(|w| fits_u64(reference_of(*w, None), value, rules.limits.cap(*w)))
                        && fits_u64(reference_of(SpendWindow::Daily, Some(&recipient)), value, counterparty.and_then(|c| c.max_daily));
                    match evaluate_transfer(&rules, &recipient, amount, &held) {
                        Ok(admitted) => {
                            prop_assert!(all_fit, "admitted past a cap: {:?}", rules);
                            let by_policy = admitted == Admitted::ConfirmedByPolicy;
                            if by_policy {
                                prop_assert!(rules.auto_confirm.max.is_none_or(|max| amount <= max));
                                prop_assert!(fits_u64(reference_of(SpendWindow::AutoConfirmDaily, None), value, rules.auto_confirm.daily));
                                prop_assert_eq!(rules.quorum.required_for(amount), ApprovalCount::ONE);
                            }
                            intents.push(Reservation {
                                status: admitted.status(),
                                recipient,
                                amount,
                                confirmed_by: by_policy.then_some(ConfirmedBy::Policy),
                                executed_at: None,
                            });
                            reference.push(ReferenceReservation {
                                recipient,
                                amount: value,
                                by_policy,
                                released_at: None,
                                executed_at: None,
                            });
                        }
                        Err(_) => prop_assert!(!all_fit, "refused what fits every rule"),
                    }
                }
                Step::Approve(index) | Step::Reject(index) | Step::Expire(index) | Step::Fail(index) | Step::Execute(index) => {
                    let Some(at) = pick(index) else { continue };
                    let intent = &mut intents[at];
                    let events: &[crate::IntentEvent] = match step {
                        Step::Approve(_) => &[crate::IntentEvent::Confirm],
                        Step::Reject(_) => &[crate::IntentEvent::Reject],
                        Step::Expire(_) => &[crate::IntentEvent::Expire],
                        Step::Fail(_) => &[crate::IntentEvent::Fail],
                        _ => &[crate::IntentEvent::Submit, crate::IntentEvent::Execute],
                    };
                    let mut status = intent.status;
                    for event in events {
                        status = match status.apply(*event) {
                            Ok(next) => next,
                            Err(_) => break,
                        };
                    }
                    if status == intent.status {
                        continue;
                    }
                    intent.status = status;
                    if status == IntentStatus::Confirmed && intent.confirmed_by.is_none() {
                        intent.confirmed_by = Some(ConfirmedBy::Operator);
                    }
                    match status {
                        IntentStatus::Executed => {
                            intent.executed_at = Some(now);
                            reference[at].executed_at = Some(now);
                        }
                        IntentStatus::Rejected | IntentStatus::Expired | IntentStatus::Failed => {
                            reference[at].released_at = Some(now);
                        }
                        _ => {}
                    }
                }
                Step::Wait { hours } => now += time::Duration::seconds(hours * HOUR),
                Step::ChangePolicy(changed) => rules = *changed,
            }
            for recipient in (0..RECIPIENTS).map(address) {
                let held = Held::tally(&intents, &recipient, now);
                for window in SpendWindow::ALL {
                    prop_assert_eq!(held.of(window), U256::from(reference_held(&reference, window, None, now)), "{}", window);
                }
                prop_assert_eq!(held.recipient_daily, U256::from(reference_held(&reference, SpendWindow::Daily, Some(&recipient), now)));
            }
        }
    }
}

#[test]
fn above_one_approval_only_operators_who_name_themselves_approve() {
    let named = Operator::Named(OperatorName::parse("alice").expect("valid"));
    let cli = Operator::Cli {
        user: Some(OperatorName::parse("bob").expect("valid")),
    };
    let two = ApprovalCount::quorum(2).expect("in range");
    assert!(named.may_approve(ApprovalCount::ONE) && named.may_approve(two));
    assert!(cli.may_approve(ApprovalCount::ONE));
    assert!(!cli.may_approve(two), "the control plane is one approver");
    assert!(!Approvals {
        required: 2,
        received: 1
    }
    .are_met());
    assert!(Approvals {
        required: 2,
        received: 2
    }
    .are_met());
}

#[test]
fn an_intent_the_policy_confirmed_needs_no_approval() {
    assert_eq!(
        (
            Admitted::ConfirmedByPolicy.confirmed_by(),
            Admitted::ConfirmedByPolicy.approvals_required()
        ),
        (Some(ConfirmedBy::Policy), 0)
    );
    let awaiting = Admitted::AwaitsApprovals(ApprovalCount::quorum(3).expect("in range"));
    assert_eq!(
        (awaiting.confirmed_by(), awaiting.approvals_required()),
        (None, 3)
    );
}

/// An intent in any status, to one of two recipients, executed up to 40 days before the test's
/// instant where its status says it was.
fn reservation() -> impl Strategy<Value = Reservation> {
    (
        prop::sample::select(IntentStatus::ALL.to_vec()),
        0..2u8,
        1u64..=1_000,
        any::<bool>(),
        0..40 * 24 * HOUR,
    )
        .prop_map(
            |(status, recipient, value, by_policy, age_secs)| Reservation {
                status,
                recipient: address(recipient),
                amount: AtomicAmount::new(U256::from(value)).expect("positive"),
                confirmed_by: Some(if by_policy {
                    ConfirmedBy::Policy
                } else {
                    ConfirmedBy::Operator
                }),
                executed_at: (status == IntentStatus::Executed)
                    .then(|| instant() - time::Duration::seconds(age_secs)),
            },
        )
}

fn instant() -> OffsetDateTime {
    OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000)
}

#[test]
fn the_first_departure_is_the_earliest_counted_execution_plus_its_windows_length() {
    let executed = |hours_ago: i64, by_policy: bool| Reservation {
        status: IntentStatus::Executed,
        recipient: address(1),
        amount: amount("5"),
        confirmed_by: Some(if by_policy {
            ConfirmedBy::Policy
        } else {
            ConfirmedBy::Operator
        }),
        executed_at: Some(instant() - time::Duration::hours(hours_ago)),
    };
    let pending = Reservation {
        status: IntentStatus::PendingConfirmation,
        executed_at: None,
        ..executed(0, false)
    };
    assert_eq!(
        EarliestExecutions::tally(&[pending], instant()).first_departure(),
        None,
        "an open intent holds its amount until it changes"
    );
    // Out of the day 1 hour ago, the week 6 days 23 hours from now: the week's leaves first.
    let earliest =
        EarliestExecutions::tally(&[executed(25, false), executed(167, true)], instant());
    assert_eq!(
        (earliest.daily, earliest.weekly, earliest.auto_confirm_daily),
        (None, Some(instant() - time::Duration::hours(167)), None)
    );
    assert_eq!(
        earliest.first_departure(),
        Some(instant() + time::Duration::hours(1))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// What the windows hold stays as it is from any instant until the first departure, and
    /// changes there; with no departure it stays past the longest window.
    #[test]
    fn what_is_held_changes_by_time_only_at_the_first_departure(
        reservations in proptest::collection::vec(reservation(), 0..12),
        offset in 0.0f64..1.0,
    ) {
        let now = instant();
        let held_at = |at| [address(0), address(1)].map(|recipient| Held::tally(&reservations, &recipient, at));
        match EarliestExecutions::tally(&reservations, now).first_departure() {
            Some(departure) => {
                prop_assert!(departure > now);
                let within = now + (departure - now) * offset;
                prop_assert_eq!(held_at(within), held_at(now));
                prop_assert_ne!(held_at(departure), held_at(now));
            }
            None => prop_assert_eq!(
                held_at(now + SpendWindow::Monthly.length() + time::Duration::days(1)),
                held_at(now)
            ),
        }
    }
}

fn standing<'a>(
    rules: &'a SpendRules,
    held: &'a Held,
    recipient: &'a EvmAddress,
    balance: u64,
    committed: u64,
) -> ApprovalStanding<'a> {
    ApprovalStanding {
        recipient,
        amount: amount("40"),
        agent_active: true,
        rules,
        held,
        balance: Some(U256::from(balance)),
        committed: U256::from(committed),
    }
}

#[test]
fn an_approval_needs_an_active_agent_a_countable_operator_the_policy_and_the_balance() {
    let named = crate::Operator::Named(OperatorName::parse("alice").expect("valid"));
    let cli = crate::Operator::Cli { user: None };
    let to = address(1);
    let daily_100 = limits(None, Some("100"));
    // The intent of 40 holds 40 of the day already; 50 more are held by others.
    let held = held(90, 90, 90, 0);
    assert_eq!(
        judge_approval(&standing(&daily_100, &held, &to, 100, 60), &cli, false),
        Ok(Ok(()))
    );
    assert_eq!(
        judge_approval(
            &ApprovalStanding {
                agent_active: false,
                ..standing(&daily_100, &held, &to, 100, 0)
            },
            &cli,
            false
        ),
        Err(ApprovalRefusal::AgentInactive)
    );
    let balance = judge_approval(&standing(&daily_100, &held, &to, 100, 61), &cli, false);
    assert!(
        matches!(balance, Err(ApprovalRefusal::Balance { .. })),
        "{balance:?}"
    );
    assert_eq!(
        judge_approval(
            &ApprovalStanding {
                balance: None,
                ..standing(&daily_100, &held, &to, 0, 61)
            },
            &cli,
            false
        ),
        Ok(Ok(())),
        "a balance left to the execution is not judged"
    );
    let tight = limits(None, Some("80"));
    assert!(matches!(
        judge_approval(&standing(&tight, &held, &to, 100, 0), &cli, false),
        Err(ApprovalRefusal::Policy(
            PolicyViolation::ExceedsWindowMax { .. }
        ))
    ));
    assert!(
        matches!(
            judge_approval(&standing(&tight, &held, &to, 100, 0), &cli, true),
            Ok(Err(_))
        ),
        "a forced approval passes the policy and says so"
    );
    assert!(
        matches!(
            judge_approval(&standing(&tight, &held, &to, 10, 0), &cli, true),
            Err(ApprovalRefusal::Balance { .. })
        ),
        "no approval is forced past the balance"
    );
    let quorum = SpendRules {
        quorum: Quorum {
            required: Some(ApprovalCount::quorum(2).expect("in range")),
            above: None,
        },
        ..SpendRules::default()
    };
    assert_eq!(
        judge_approval(&standing(&quorum, &held, &to, 100, 0), &cli, false),
        Err(ApprovalRefusal::QuorumNeedsNamedOperator { required: 2 })
    );
    assert_eq!(
        judge_approval(&standing(&quorum, &held, &to, 100, 0), &named, false),
        Ok(Ok(()))
    );
}

#[test]
fn an_auto_confirm_tier_without_a_daily_bound_is_refused_whatever_the_change_touched() {
    let up_to_ten = PolicyChange {
        auto_confirm_max: Some(some("10")),
        ..PolicyChange::default()
    };
    assert_eq!(
        up_to_ten.apply(&SpendRules::default()),
        Err(PolicyChangeRefused::AutoConfirmWithoutDailyBound)
    );
    let bounded = PolicyChange {
        auto_confirm_daily: Some(some("25")),
        ..up_to_ten.clone()
    }
    .apply(&SpendRules::default())
    .expect("a bounded tier");
    assert_eq!(
        bounded.auto_confirm,
        AutoConfirm {
            max: some("10"),
            daily: some("25")
        }
    );
    // Taking the bound away from a tier that has one is the same tier without a bound.
    let unbound = PolicyChange {
        auto_confirm_daily: Some(None),
        ..PolicyChange::default()
    };
    assert_eq!(
        unbound.apply(&bounded),
        Err(PolicyChangeRefused::AutoConfirmWithoutDailyBound)
    );
    // A tier stored without a bound (before the rule) holds every other change back until its
    // bound is set or the tier removed, in the same change.
    let stored = SpendRules {
        auto_confirm: AutoConfirm {
            max: some("10"),
            daily: None,
        },
        ..SpendRules::default()
    };
    let tighten = PolicyChange {
        max_daily: Some(some("100")),
        ..PolicyChange::default()
    };
    assert_eq!(
        tighten.apply(&stored),
        Err(PolicyChangeRefused::AutoConfirmWithoutDailyBound)
    );
    let removed = PolicyChange {
        auto_confirm_max: Some(None),
        ..tighten
    }
    .apply(&stored)
    .expect("the tier removed");
    assert_eq!(removed.auto_confirm, AutoConfirm::default());
    // A daily bound alone caps what the policy confirms, each transfer up to it.
    let daily_only = PolicyChange {
        auto_confirm_daily: Some(some("25")),
        ..PolicyChange::default()
    };
    assert!(daily_only.apply(&SpendRules::default()).is_ok());
}
