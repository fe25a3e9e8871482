//! The operator's decisions on transfer intents: listing and showing them with their
//! transactions, confirming a pending one for execution or rejecting it. Each decision records
//! the operator who took it.

use std::sync::Arc;

use domain::{
    evaluate_transfer, IntentEvent, IntentId, Operator, PolicyViolation, TransferIntentRecord,
    TransitionRefused,
};
use ports::{AgentStore, AttemptRecord, IntentFilter, IntentLedger, StoreError, TransitionError};

use crate::DAILY_WINDOW;

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

/// A confirmed intent and what the spend policy in force says of it: a violation here means the
/// operator forced the confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmation {
    pub intent: TransferIntentRecord,
    pub policy_verdict: Result<(), PolicyViolation>,
}

pub struct IntentDecisions {
    /// Where the profile of an intent's agent (its state, its policy in force) is read.
    store: Arc<dyn AgentStore>,
    intents: Arc<dyn IntentLedger>,
}

impl IntentDecisions {
    pub fn new(store: Arc<dyn AgentStore>, intents: Arc<dyn IntentLedger>) -> Self {
        Self { store, intents }
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

    /// Approves a pending intent for execution, after judging it again as things are now: the
    /// intent of a deactivated agent is never confirmed, and one that breaks the spend policy in
    /// force only when `force` says so.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn confirm(
        &self,
        id: IntentId,
        force: bool,
        operator: &Operator,
    ) -> Result<Confirmation, ConfirmError> {
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
        let (limits, allowlist) = profile
            .wallet
            .and_then(|wallet| wallet.spend_policy)
            .map(|policy| (policy.limits, policy.allowlist))
            .unwrap_or_default();
        let held = self
            .intents
            .held_in_window(intent.wallet_id, DAILY_WINDOW)
            .await?;
        // The pending intent holds its own amount already: judge it as if it came now.
        let held_by_others = held.saturating_sub(intent.amount.value());
        let policy_verdict = evaluate_transfer(
            &limits,
            &allowlist,
            &intent.recipient,
            intent.amount,
            held_by_others,
        );
        if let (Err(violation), false) = (policy_verdict, force) {
            return Err(ConfirmError::Policy(violation));
        }
        let intent = self
            .intents
            .transition(id, IntentEvent::Confirm, None, operator.clone())
            .await?;
        Ok(Confirmation {
            intent,
            policy_verdict,
        })
    }

    /// The transactions recorded for an intent, newest first.
    pub async fn attempts(&self, id: IntentId) -> Result<Vec<AttemptRecord>, StoreError> {
        self.intents.attempts(id).await
    }

    /// Refuses a pending intent; its amount no longer counts against the daily limit.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn reject(
        &self,
        id: IntentId,
        reason: Option<String>,
        operator: &Operator,
    ) -> Result<TransferIntentRecord, TransitionError> {
        let reason = reason.unwrap_or_else(|| "rejected by operator".to_owned());
        self.intents
            .transition(id, IntentEvent::Reject, Some(reason), operator.clone())
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{
        AgentProfile, AgentRecord, AtomicAmount, IntentStatus, SpendLimits, SpendPolicyRecord,
        WalletRecord, U256,
    };
    use ports::{MockAgentStore, MockIntentLedger};
    use uuid::Uuid;

    use crate::operator::tests::operator;

    fn deciding(store: MockAgentStore, intents: MockIntentLedger) -> IntentDecisions {
        IntentDecisions::new(Arc::new(store), Arc::new(intents))
    }

    #[tokio::test]
    async fn a_rejection_always_records_a_reason_and_who_took_it() {
        let mut intents = MockIntentLedger::new();
        intents
            .expect_transition()
            .withf(|_, event, reason, decided_by| {
                *event == IntentEvent::Reject
                    && reason.as_deref() == Some("rejected by operator")
                    && *decided_by == operator()
            })
            .times(1)
            .returning(|id, _, _, _| Err(TransitionError::NotFound(id)));
        let decisions = deciding(MockAgentStore::new(), intents);
        assert!(decisions
            .reject(IntentId(Uuid::now_v7()), None, &operator())
            .await
            .is_err());
    }

    /// A pending intent of 25 and the profile of its agent, with a daily limit of `daily`.
    fn pending_with(active: bool, daily: &str) -> (TransferIntentRecord, MockAgentStore) {
        let intent = TransferIntentRecord::fixture();
        let policy = SpendPolicyRecord {
            limits: SpendLimits {
                max_per_tx: None,
                max_daily: Some(AtomicAmount::parse(daily).expect("valid")),
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
        let mut store = MockAgentStore::new();
        store
            .expect_profile()
            .returning(move |_| Ok(Some(profile.clone())));
        (intent, store)
    }

    /// A ledger holding `intent`, with `held` in its wallet's window, expecting `confirms`
    /// confirmations by `operator()`.
    fn ledger_of(intent: TransferIntentRecord, held: u64, confirms: usize) -> MockIntentLedger {
        let mut intents = MockIntentLedger::new();
        let found = intent.clone();
        intents
            .expect_find()
            .returning(move |_| Ok(Some(found.clone())));
        intents
            .expect_held_in_window()
            .returning(move |_, _| Ok(U256::from(held)));
        intents
            .expect_transition()
            .withf(|_, event, _, decided_by| {
                *event == IntentEvent::Confirm && *decided_by == operator()
            })
            .times(confirms)
            .returning(move |_, _, _, _| {
                Ok(TransferIntentRecord {
                    status: IntentStatus::Confirmed,
                    ..intent.clone()
                })
            });
        intents
    }

    #[tokio::test]
    async fn the_intent_of_a_deactivated_agent_is_never_confirmed() {
        let (intent, store) = pending_with(false, "100");
        let id = intent.id;
        let decisions = deciding(store, ledger_of(intent, 25, 0));
        for force in [false, true] {
            assert!(matches!(
                decisions.confirm(id, force, &operator()).await,
                Err(ConfirmError::AgentInactive(x)) if x == id
            ));
        }
    }

    #[tokio::test]
    async fn a_confirmation_judges_the_intent_by_the_policy_in_force() {
        // Its own 25 is in the window already: 25 of others plus 25 fit a limit of 50.
        let (intent, store) = pending_with(true, "50");
        let decisions = deciding(store, ledger_of(intent.clone(), 50, 1));
        let confirmed = decisions
            .confirm(intent.id, false, &operator())
            .await
            .expect("within");
        assert_eq!(confirmed.policy_verdict, Ok(()));
        assert_eq!(confirmed.intent.status, IntentStatus::Confirmed);
    }

    #[tokio::test]
    async fn a_confirmation_that_breaks_a_tightened_policy_needs_force() {
        let (intent, store) = pending_with(true, "40");
        let decisions = deciding(store, ledger_of(intent.clone(), 50, 1));
        assert!(matches!(
            decisions.confirm(intent.id, false, &operator()).await,
            Err(ConfirmError::Policy(
                PolicyViolation::ExceedsDailyMax { .. }
            ))
        ));
        let forced = decisions
            .confirm(intent.id, true, &operator())
            .await
            .expect("forced");
        assert!(matches!(
            forced.policy_verdict,
            Err(PolicyViolation::ExceedsDailyMax { .. })
        ));
    }
}
