//! The wait for an operator's decision on a transfer intent: the agent that asked for a transfer
//! learns as soon as it leaves `pending_confirmation` (confirmed, rejected, expired), on whichever
//! instance that happened.
//!
//! Every move of an intent writes an event and notifies the agent's events topic at commit
//! (migration 000017), so the wait sleeps on that topic, holding no database connection, and
//! reads the intent again when woken.

use std::sync::Arc;
use std::time::Duration;

use domain::{AgentProfile, IntentId, IntentStatus, TransferIntentRecord};
use futures_util::future::FutureExt;
use ports::{events_topic, AgentStore, IntentRecords, Notifications, StoreError, Timer};

use crate::agents::Principal;
use crate::codes::WaitError;
use crate::long_lived::{LongLived, LongLivedKind};
use crate::waiting::{look_until_found, Waiter, Waits};
use crate::wallet::own_intent;
use crate::NotProvisioned;

#[derive(Debug, Clone, thiserror::Error)]
pub enum DecisionWaitError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    /// No intent of this agent has that id.
    #[error("transfer intent not found")]
    NotFound,
    #[error("too many waits for a decision of this agent at once")]
    TooManyWaiters,
    /// The agent's key stopped authenticating it while it waited.
    #[error("the agent key no longer authenticates")]
    Revoked,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Where an intent stands when the wait ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// It left `pending_confirmation`: its status says how.
    Decided(TransferIntentRecord),
    /// Still `pending_confirmation` when the wait's time ran out (or the instance is stopping).
    Pending(TransferIntentRecord),
}

pub struct DecisionPorts {
    pub agents: Arc<dyn AgentStore>,
    pub records: Arc<dyn IntentRecords>,
    pub notifications: Arc<dyn Notifications>,
    pub timer: Arc<dyn Timer>,
}

pub struct DecisionWaits {
    ports: Arc<DecisionPorts>,
    waits: Waits<TransferIntentRecord>,
}

impl DecisionWaits {
    pub fn new(ports: DecisionPorts, long_lived: Arc<LongLived>) -> Self {
        Self {
            ports: Arc::new(ports),
            waits: Waits::new(long_lived, LongLivedKind::DecisionWait),
        }
    }

    /// Ends every wait at once, each answering where its intent stands.
    pub fn shut_down(&self) {
        self.waits.shut_down(self.ports.notifications.as_ref());
    }

    /// The agent's intent `id` once it has left `pending_confirmation`, at once when it already
    /// has; else waits for that until `timeout`, holding one of the agent's places of kind
    /// `decision_wait`, and answers where it stands then.
    #[tracing::instrument(level = "debug", skip(self, principal), fields(agent = %principal.profile.agent.id))]
    pub async fn wait(
        &self,
        principal: &Principal,
        id: &str,
        timeout: Duration,
    ) -> Result<Decision, DecisionWaitError> {
        let profile = principal.profile.as_ref();
        if profile.wallet.is_none() {
            return Err(NotProvisioned::Wallet.into());
        }
        let id = id
            .parse::<IntentId>()
            .map_err(|_| DecisionWaitError::NotFound)?;
        let agent = profile.agent.id;
        let intent = self.read(profile, id).await?;
        if intent.status != IntentStatus::PendingConfirmation {
            return Ok(Decision::Decided(intent));
        }
        let waiter = Waiter::new(principal, self.ports.agents.clone());
        let ports = self.ports.clone();
        let waited = self
            .waits
            .run(agent, None, move |shutdown| {
                async move {
                    let topic = events_topic(agent);
                    look_until_found(
                        ports.notifications.as_ref(),
                        ports.timer.as_ref(),
                        &topic,
                        timeout,
                        &shutdown,
                        &waiter,
                        || async {
                            let intent = ports.records.find(id).await?;
                            Ok(intent.filter(|intent| {
                                intent.status != IntentStatus::PendingConfirmation
                            }))
                        },
                    )
                    .await
                }
                .boxed()
            })
            .await;
        match waited {
            Ok(decided) => Ok(Decision::Decided(decided)),
            Err(WaitError::TimedOut) => {
                let intent = self.read(profile, id).await?;
                Ok(match intent.status {
                    IntentStatus::PendingConfirmation => Decision::Pending(intent),
                    _ => Decision::Decided(intent),
                })
            }
            Err(WaitError::TooManyWaiters) => Err(DecisionWaitError::TooManyWaiters),
            // A decision wait names no channel.
            Err(WaitError::Revoked | WaitError::ScopeLacking(_)) => Err(DecisionWaitError::Revoked),
            Err(WaitError::NotProvisioned(missing)) => Err(missing.into()),
            Err(WaitError::Store(store)) => Err(store.into()),
        }
    }

    /// The agent's intent `id`; another agent's is not found.
    async fn read(
        &self,
        profile: &AgentProfile,
        id: IntentId,
    ) -> Result<TransferIntentRecord, DecisionWaitError> {
        own_intent(self.ports.records.as_ref(), profile, id)
            .await?
            .ok_or(DecisionWaitError::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::fixtures::{found, principal};
    use crate::LongLivedCaps;
    use domain::{AgentId, AgentRecord, WalletRecord};
    use ports::{MockAgentStore, MockIntentRecords, MockNotifications, MockTimer, Wakeup};
    use uuid::Uuid;

    fn pending() -> Wakeup {
        Box::pin(std::future::pending())
    }

    fn ready() -> Wakeup {
        Box::pin(std::future::ready(()))
    }

    fn profile() -> AgentProfile {
        AgentProfile {
            agent: AgentRecord::fixture(),
            phone_number: None,
            email_inbox: None,
            wallet: Some(WalletRecord::fixture()),
        }
    }

    fn intent(status: IntentStatus) -> TransferIntentRecord {
        TransferIntentRecord {
            id: IntentId(Uuid::from_u128(7)),
            agent_id: AgentRecord::fixture().id,
            status,
            ..TransferIntentRecord::fixture()
        }
    }

    struct Mocks {
        agents: MockAgentStore,
        records: MockIntentRecords,
        notifications: MockNotifications,
        timer: MockTimer,
        places: usize,
    }

    impl Mocks {
        fn new() -> Self {
            let mut agents = MockAgentStore::new();
            agents
                .expect_active_profile_by_key_hash()
                .returning(|_| Ok(Some(found(profile()))));
            Self {
                agents,
                records: MockIntentRecords::new(),
                notifications: MockNotifications::new(),
                timer: MockTimer::new(),
                places: 4,
            }
        }

        /// The records answer each read with the next of `statuses`, the last one for good.
        fn reading(mut self, statuses: &[IntentStatus]) -> Self {
            let statuses = statuses.to_vec();
            let mut reads = 0;
            self.records.expect_find().returning(move |_| {
                let status = statuses[reads.min(statuses.len() - 1)];
                reads += 1;
                Ok(Some(intent(status)))
            });
            self
        }

        fn waits(self) -> (DecisionWaits, Arc<LongLived>) {
            let long_lived = LongLived::new(LongLivedCaps {
                code_waits: 1,
                event_streams: 1,
                decision_waits: self.places,
                attachment_downloads: 1,
                searches: 1,
                request_body_bytes: 1 << 20,
                live_lists: 1,
            });
            let waits = DecisionWaits::new(
                DecisionPorts {
                    agents: Arc::new(self.agents),
                    records: Arc::new(self.records),
                    notifications: Arc::new(self.notifications),
                    timer: Arc::new(self.timer),
                },
                long_lived.clone(),
            );
            (waits, long_lived)
        }
    }

    const ID: &str = "00000000-0000-0000-0000-000000000007";

    #[tokio::test]
    async fn a_decided_intent_answers_at_once_without_waiting() {
        let mut mocks = Mocks::new().reading(&[IntentStatus::Rejected]);
        mocks.notifications.expect_subscribe().never();
        mocks.timer.expect_sleep().never();
        let (waits, _) = mocks.waits();
        assert_eq!(
            waits
                .wait(&principal(profile()), ID, Duration::from_secs(55))
                .await
                .expect("answered"),
            Decision::Decided(intent(IntentStatus::Rejected))
        );
    }

    #[tokio::test]
    async fn a_wait_wakes_on_the_agents_events_and_answers_the_decision() {
        let mut mocks = Mocks::new().reading(&[
            IntentStatus::PendingConfirmation,
            IntentStatus::PendingConfirmation,
            IntentStatus::Confirmed,
        ]);
        let events = events_topic(AgentRecord::fixture().id);
        mocks
            .notifications
            .expect_subscribe()
            .returning(move |topic| if topic == events { ready() } else { pending() });
        mocks.timer.expect_sleep().returning(|_| pending());
        let (waits, long_lived) = mocks.waits();
        assert_eq!(
            waits
                .wait(&principal(profile()), ID, Duration::from_secs(55))
                .await
                .expect("answered"),
            Decision::Decided(intent(IntentStatus::Confirmed))
        );
        assert_eq!(long_lived.usage()[2].held, 0, "its place is given back");
    }

    #[tokio::test]
    async fn a_wait_that_runs_out_answers_still_pending() {
        let mut mocks = Mocks::new().reading(&[IntentStatus::PendingConfirmation]);
        mocks
            .notifications
            .expect_subscribe()
            .returning(|_| pending());
        mocks.timer.expect_sleep().returning(|_| ready());
        let (waits, _) = mocks.waits();
        assert_eq!(
            waits
                .wait(&principal(profile()), ID, Duration::from_secs(5))
                .await
                .expect("answered"),
            Decision::Pending(intent(IntentStatus::PendingConfirmation))
        );
    }

    #[tokio::test]
    async fn another_agents_intent_and_a_malformed_id_are_not_found() {
        let mut mocks = Mocks::new();
        mocks.records.expect_find().returning(|_| {
            Ok(Some(TransferIntentRecord {
                agent_id: AgentId(Uuid::now_v7()),
                ..intent(IntentStatus::PendingConfirmation)
            }))
        });
        mocks.notifications.expect_subscribe().never();
        let (waits, _) = mocks.waits();
        for id in [ID, "not-an-id"] {
            assert!(matches!(
                waits
                    .wait(&principal(profile()), id, Duration::from_secs(5))
                    .await,
                Err(DecisionWaitError::NotFound)
            ));
        }
        let walletless = AgentProfile {
            wallet: None,
            ..profile()
        };
        assert!(matches!(
            waits
                .wait(&principal(walletless), ID, Duration::from_secs(5))
                .await,
            Err(DecisionWaitError::NotProvisioned(NotProvisioned::Wallet))
        ));
    }

    #[tokio::test]
    async fn waits_beyond_the_agents_places_are_refused() {
        let mut mocks = Mocks::new().reading(&[IntentStatus::PendingConfirmation]);
        mocks.places = 0;
        mocks
            .notifications
            .expect_subscribe()
            .returning(|_| pending());
        let (waits, long_lived) = mocks.waits();
        assert!(matches!(
            waits
                .wait(&principal(profile()), ID, Duration::from_secs(5))
                .await,
            Err(DecisionWaitError::TooManyWaiters)
        ));
        assert_eq!(long_lived.usage()[2].refused, 1);
    }
}
