//! The operator's decisions on transfer intents: listing and showing them with their
//! transactions, confirming a pending one for execution or rejecting it. Each decision records
//! the operator who took it.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use domain::{
    evaluate_transfer, Actor, Admitted, AgentRecord, EvmAddress, IntentEvent, IntentId,
    IntentStatus, Operator, PolicyViolation, TransferIntentRecord, TransitionRefused, WalletId,
};
use ports::{
    AgentStore, AttemptRecord, IntentFilter, IntentLedger, Notifications, StoreError,
    TransitionError, Wakeup, EVERY_AGENTS_EVENTS_TOPIC,
};
use time::OffsetDateTime;

#[derive(Debug, thiserror::Error)]
pub enum ConfirmError {
    #[error("intent {0} not found")]
    NotFound(IntentId),
    #[error("the agent of intent {0} is deactivated: its intents are not executed")]
    AgentInactive(IntentId),
    /// The intent breaks the spend policy as it is now; a forced confirmation executes it anyway
    /// (the way in says how its operator forces one).
    #[error("the intent breaks the spend policy in force: {0}")]
    Policy(PolicyViolation),
    /// A quorum counts only operators who name themselves.
    #[error(
        "intent {id} needs {required} approvals by distinct operators: each approves under a name of their own"
    )]
    QuorumNeedsNamedOperator { id: IntentId, required: u8 },
    #[error("{operator} has already approved intent {id}; it needs {required} distinct operators, {received} so far")]
    AlreadyApproved {
        id: IntentId,
        operator: Operator,
        required: u8,
        received: u8,
    },
    #[error(transparent)]
    Refused(#[from] TransitionRefused),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<TransitionError> for ConfirmError {
    fn from(error: TransitionError) -> Self {
        match error {
            TransitionError::NotFound(id) => Self::NotFound(id),
            TransitionError::Store(store) => Self::Store(store),
            TransitionError::Refused(refused) => Self::Refused(refused),
        }
    }
}

/// An approved intent (confirmed once it has every approval it needs; its `approvals` say how
/// many) and what the spend policy in force says of it: a violation here means the operator
/// forced the approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmation {
    pub intent: TransferIntentRecord,
    pub policy_verdict: Result<(), PolicyViolation>,
}

/// Where a pending intent's recipient stands with its wallet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecipientStanding {
    /// On the policy's allowlist.
    Allowlisted,
    /// Never paid by this wallet.
    New,
    /// Paid before, not on an allowlist.
    Paid,
}

/// A pending intent as an operator reviews it: its agent, the policy's verdict as things are
/// now, where its recipient stands, and when it expires undecided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    pub intent: TransferIntentRecord,
    pub agent: AgentRecord,
    pub verdict: Result<Admitted, PolicyViolation>,
    pub recipient: RecipientStanding,
    pub expires_at: OffsetDateTime,
}

/// What the decisions read and write.
pub struct DecisionStores {
    /// Where the profile of an intent's agent (its state, its policy in force) is read.
    pub agents: Arc<dyn AgentStore>,
    pub intents: Arc<dyn IntentLedger>,
    /// Wakes the reviews of pending intents at every change of any agent's intents.
    pub notifications: Arc<dyn Notifications>,
}

pub struct IntentDecisions {
    store: Arc<dyn AgentStore>,
    intents: Arc<dyn IntentLedger>,
    notifications: Arc<dyn Notifications>,
    /// How long an intent stays pending before it expires.
    pending_ttl: Duration,
}

impl IntentDecisions {
    pub fn new(stores: DecisionStores, pending_ttl: Duration) -> Self {
        Self {
            store: stores.agents,
            intents: stores.intents,
            notifications: stores.notifications,
            pending_ttl,
        }
    }

    /// Woken at the next change of any agent's events, which every change of an intent is:
    /// subscribe before reading the pending intents, and none falls between the reading and the
    /// wait.
    pub fn watch(&self) -> Wakeup {
        self.notifications.subscribe(EVERY_AGENTS_EVENTS_TOPIC)
    }

    /// The oldest `limit` intents awaiting a decision, each judged as it would be now.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn pending(&self, limit: usize) -> Result<Vec<Review>, StoreError> {
        let intents = self
            .intents
            .list(IntentFilter {
                status: Some(IntentStatus::PendingConfirmation),
                oldest_first: true,
                limit: Some(limit),
                ..IntentFilter::default()
            })
            .await?;
        self.reviews(intents).await
    }

    /// `intents` (pending ones) as an operator reviews them: one reading of each agent, of each
    /// wallet's windows per recipient, and one of the recipients the wallets paid.
    pub async fn reviews(
        &self,
        intents: Vec<TransferIntentRecord>,
    ) -> Result<Vec<Review>, StoreError> {
        let pairs: Vec<(WalletId, EvmAddress)> = intents
            .iter()
            .map(|intent| (intent.wallet_id, intent.recipient))
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        let paid: HashSet<(WalletId, EvmAddress)> = self
            .intents
            .paid_recipients(pairs)
            .await?
            .into_iter()
            .collect();
        let mut agents = HashMap::new();
        let mut reviews = Vec::with_capacity(intents.len());
        for intent in intents {
            if let Entry::Vacant(unread) = agents.entry(intent.agent_id) {
                let profile = self.store.profile(intent.agent_id).await?;
                unread.insert(profile.map(|profile| profile.agent));
            }
            let Some(Some(agent)) = agents.get(&intent.agent_id).cloned() else {
                continue;
            };
            let Some((wallet, held)) = self
                .intents
                .wallet_and_held(intent.agent_id, Some(intent.recipient))
                .await?
            else {
                continue;
            };
            let rules = wallet
                .spend_policy
                .map(|policy| policy.rules)
                .unwrap_or_default();
            let verdict = evaluate_transfer(
                &rules,
                &intent.recipient,
                intent.amount,
                &held.without_pending(intent.amount),
            );
            let recipient = if rules.allowlist.lists(&intent.recipient) {
                RecipientStanding::Allowlisted
            } else if paid.contains(&(intent.wallet_id, intent.recipient)) {
                RecipientStanding::Paid
            } else {
                RecipientStanding::New
            };
            reviews.push(Review {
                expires_at: intent.created_at + self.pending_ttl,
                intent,
                agent,
                verdict,
                recipient,
            });
        }
        Ok(reviews)
    }

    /// Intents matching `filter`, newest first.
    pub async fn list(
        &self,
        filter: IntentFilter,
    ) -> Result<Vec<TransferIntentRecord>, StoreError> {
        self.intents.list(filter).await
    }

    pub async fn show(&self, id: IntentId) -> Result<TransferIntentRecord, TransitionError> {
        self.intents
            .find(id)
            .await?
            .ok_or(TransitionError::NotFound(id))
    }

    /// Records `operator`'s approval of a pending intent, after judging it again as things are
    /// now: the intent of a deactivated agent is never approved, and one that breaks the spend
    /// policy in force only when `force` says so. The intent is confirmed for execution once
    /// the approvals the policy in force asks of it are in: distinct named operators' where it
    /// needs more than one.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn confirm(
        &self,
        id: IntentId,
        force: bool,
        actor: &Actor,
    ) -> Result<Confirmation, ConfirmError> {
        let operator = &actor.operator;
        let intent = self
            .intents
            .find(id)
            .await?
            .ok_or(ConfirmError::NotFound(id))?;
        // Only a pending intent can be confirmed: say so before judging it.
        intent.status.apply(IntentEvent::Confirm)?;
        let profile = self
            .store
            .profile(intent.agent_id)
            .await?
            .ok_or(ConfirmError::NotFound(id))?;
        if !profile.agent.is_active {
            return Err(ConfirmError::AgentInactive(id));
        }
        let (wallet, held) = self
            .intents
            .wallet_and_held(intent.agent_id, Some(intent.recipient))
            .await?
            .ok_or(ConfirmError::NotFound(id))?;
        let rules = wallet
            .spend_policy
            .map(|policy| policy.rules)
            .unwrap_or_default();
        let required = rules.quorum.required_for(intent.amount);
        if !operator.may_approve(required) {
            return Err(ConfirmError::QuorumNeedsNamedOperator {
                id,
                required: required.get(),
            });
        }
        // The pending intent holds its own amount already: judge it as if it came now.
        let policy_verdict = evaluate_transfer(
            &rules,
            &intent.recipient,
            intent.amount,
            &held.without_pending(intent.amount),
        )
        .map(drop);
        if let (Err(violation), false) = (policy_verdict, force) {
            return Err(ConfirmError::Policy(violation));
        }
        let approval = self.intents.approve(id, actor.clone()).await?;
        if !approval.counted && approval.intent.status == IntentStatus::PendingConfirmation {
            return Err(ConfirmError::AlreadyApproved {
                id,
                operator: operator.clone(),
                required: approval.intent.approvals.required,
                received: approval.intent.approvals.received,
            });
        }
        Ok(Confirmation {
            intent: approval.intent,
            policy_verdict,
        })
    }

    /// The transactions recorded for an intent, newest first.
    pub async fn attempts(&self, id: IntentId) -> Result<Vec<AttemptRecord>, StoreError> {
        self.intents.attempts(id).await
    }

    /// Refuses a pending intent; its amount no longer counts against the spend windows.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn reject(
        &self,
        id: IntentId,
        reason: Option<String>,
        actor: &Actor,
    ) -> Result<TransferIntentRecord, TransitionError> {
        let reason = reason.unwrap_or_else(|| "rejected by operator".to_owned());
        self.intents
            .transition(id, IntentEvent::Reject, Some(reason), actor.clone())
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{
        AgentProfile, AgentRecord, ApprovalCount, Approvals, AtomicAmount, Held, Quorum,
        SpendLimits, SpendPolicyRecord, SpendRules, WalletRecord, U256,
    };
    use ports::{Approval, MockAgentStore, MockIntentLedger, MockNotifications};
    use uuid::Uuid;

    use crate::operator::tests::actor;

    fn deciding(store: MockAgentStore, intents: MockIntentLedger) -> IntentDecisions {
        IntentDecisions::new(
            DecisionStores {
                agents: Arc::new(store),
                intents: Arc::new(intents),
                notifications: Arc::new(MockNotifications::new()),
            },
            Duration::from_secs(24 * 60 * 60),
        )
    }

    #[tokio::test]
    async fn a_rejection_always_records_a_reason_and_who_took_it() {
        let mut intents = MockIntentLedger::new();
        intents
            .expect_transition()
            .withf(|_, event, reason, decided_by| {
                *event == IntentEvent::Reject
                    && reason.as_deref() == Some("rejected by operator")
                    && *decided_by == actor()
            })
            .times(1)
            .returning(|id, _, _, _| Err(TransitionError::NotFound(id)));
        let decisions = deciding(MockAgentStore::new(), intents);
        assert!(decisions
            .reject(IntentId(Uuid::now_v7()), None, &actor())
            .await
            .is_err());
    }

    /// A pending intent of 25, the profile of its agent and its wallet, with a daily limit of
    /// `daily`.
    fn pending_with(
        active: bool,
        daily: &str,
    ) -> (TransferIntentRecord, MockAgentStore, WalletRecord) {
        pending_under(active, daily, Quorum::default())
    }

    /// `pending_with`, the policy asking for `quorum` too.
    fn pending_under(
        active: bool,
        daily: &str,
        quorum: Quorum,
    ) -> (TransferIntentRecord, MockAgentStore, WalletRecord) {
        let intent = TransferIntentRecord::fixture();
        let policy = SpendPolicyRecord {
            rules: SpendRules {
                limits: SpendLimits {
                    max_daily: Some(AtomicAmount::parse(daily).expect("valid")),
                    ..SpendLimits::default()
                },
                quorum,
                ..SpendRules::default()
            },
            ..SpendPolicyRecord::fixture()
        };
        let profile = AgentProfile {
            agent: AgentRecord {
                is_active: active,
                ..AgentRecord::fixture()
            },
            wallet: Some(WalletRecord {
                spend_policy: Some(policy),
                ..WalletRecord::fixture()
            }),
            ..AgentProfile::fixture()
        };
        let wallet = profile.wallet.clone().expect("a wallet");
        let mut store = MockAgentStore::new();
        store
            .expect_profile()
            .returning(move |_| Ok(Some(profile.clone())));
        (intent, store, wallet)
    }

    /// A ledger holding `intent` and its `wallet`, with `held` in the wallet's window, expecting
    /// `confirms` approvals by `operator()` that confirm it.
    fn ledger_of(
        intent: TransferIntentRecord,
        wallet: &WalletRecord,
        held: u64,
        confirms: usize,
    ) -> MockIntentLedger {
        let mut intents = reading_ledger(&intent, wallet, held);
        intents
            .expect_approve()
            .withf(|_, approver| *approver == actor())
            .times(confirms)
            .returning(move |_, _| {
                Ok(Approval {
                    intent: TransferIntentRecord {
                        status: IntentStatus::Confirmed,
                        ..intent.clone()
                    },
                    counted: true,
                })
            });
        intents
    }

    /// A ledger that finds `intent` and its `wallet`, with `held` in the wallet's windows and
    /// its recipient's.
    fn reading_ledger(
        intent: &TransferIntentRecord,
        wallet: &WalletRecord,
        held: u64,
    ) -> MockIntentLedger {
        let mut intents = MockIntentLedger::new();
        let found = intent.clone();
        intents
            .expect_find()
            .returning(move |_| Ok(Some(found.clone())));
        let wallet = wallet.clone();
        intents
            .expect_wallet_and_held()
            .returning(move |_, recipient| {
                assert!(recipient.is_some(), "its recipient's window is judged too");
                let held = Held {
                    daily: U256::from(held),
                    ..Held::default()
                };
                Ok(Some((wallet.clone(), held)))
            });
        intents
    }

    fn two_above_ten() -> Quorum {
        Quorum {
            required: Some(ApprovalCount::quorum(2).expect("in range")),
            above: Some(AtomicAmount::parse("10").expect("valid")),
        }
    }

    #[tokio::test]
    async fn above_the_quorum_threshold_only_named_operators_approve() {
        let (intent, store, wallet) = pending_under(true, "100", two_above_ten());
        let mut intents = reading_ledger(&intent, &wallet, 25);
        intents.expect_approve().never();
        let decisions = deciding(store, intents);
        assert!(matches!(
            decisions.confirm(intent.id, false, &actor()).await,
            Err(ConfirmError::QuorumNeedsNamedOperator { required: 2, .. })
        ));
    }

    #[tokio::test]
    async fn a_second_approval_of_one_operator_is_refused() {
        let (intent, store, wallet) = pending_under(true, "100", two_above_ten());
        let bob = Operator::Named(domain::OperatorName::parse("bob").expect("valid"));
        let mut intents = reading_ledger(&intent, &wallet, 25);
        let pending = intent.clone();
        intents.expect_approve().times(1).returning(move |_, _| {
            Ok(Approval {
                intent: TransferIntentRecord {
                    approvals: Approvals {
                        required: 2,
                        received: 1,
                    },
                    ..pending.clone()
                },
                counted: false,
            })
        });
        let decisions = deciding(store, intents);
        let refused = decisions
            .confirm(intent.id, false, &Actor::local(bob.clone()))
            .await;
        assert!(
            matches!(
                &refused,
                Err(ConfirmError::AlreadyApproved {
                    required: 2,
                    received: 1,
                    ..
                })
            ),
            "{refused:?}"
        );
        assert!(refused
            .expect_err("refused")
            .to_string()
            .contains("operator:bob has already approved"));
    }

    #[tokio::test]
    async fn the_intent_of_a_deactivated_agent_is_never_confirmed() {
        let (intent, store, wallet) = pending_with(false, "100");
        let id = intent.id;
        let decisions = deciding(store, ledger_of(intent, &wallet, 25, 0));
        for force in [false, true] {
            assert!(matches!(
                decisions.confirm(id, force, &actor()).await,
                Err(ConfirmError::AgentInactive(x)) if x == id
            ));
        }
    }

    #[tokio::test]
    async fn a_confirmation_judges_the_intent_by_the_policy_in_force() {
        // Its own 25 is in the window already: 25 of others plus 25 fit a limit of 50.
        let (intent, store, wallet) = pending_with(true, "50");
        let decisions = deciding(store, ledger_of(intent.clone(), &wallet, 50, 1));
        let confirmed = decisions
            .confirm(intent.id, false, &actor())
            .await
            .expect("within");
        assert_eq!(confirmed.policy_verdict, Ok(()));
        assert_eq!(confirmed.intent.status, IntentStatus::Confirmed);
    }

    #[tokio::test]
    async fn a_confirmation_that_breaks_a_tightened_policy_needs_force() {
        let (intent, store, wallet) = pending_with(true, "40");
        let decisions = deciding(store, ledger_of(intent.clone(), &wallet, 50, 1));
        assert!(matches!(
            decisions.confirm(intent.id, false, &actor()).await,
            Err(ConfirmError::Policy(
                PolicyViolation::ExceedsWindowMax { .. }
            ))
        ));
        let forced = decisions
            .confirm(intent.id, true, &actor())
            .await
            .expect("forced");
        assert!(matches!(
            forced.policy_verdict,
            Err(PolicyViolation::ExceedsWindowMax { .. })
        ));
    }
}
