//! The outbox worker: hands queued mail to the provider one message at a time, from any number
//! of instances. A message is leased before its hand-off, so no two workers send it at once; a
//! transient failure keeps it queued with a growing wait, a refusal fails it with the reason.
//! What the store could not take (a claim whose answer was lost, an outcome not recorded) is
//! settled before anything new is claimed, so an outage neither holds a message for a whole
//! lease nor hands it over again.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use domain::{DeliveryRetry, EmailMessageId, LeaseId};
use ports::{ClaimedEmail, Delivery, DeliveryError, EmailSender, OutboxQueue, StoreError};
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutboxSettings {
    /// How long a claim keeps other workers off a message. Longer than the provider's timeout,
    /// so a hand-off in progress is never started twice.
    pub lease: Duration,
    pub retry: DeliveryRetry,
}

/// What became of one claimed message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandOff {
    Sent,
    /// Kept queued, due again after the wait.
    Retrying(Duration),
    Failed,
    /// The lease passed to another worker before the outcome was recorded.
    LeaseLost,
}

/// The outcome of a hand-off, as the store records it.
#[derive(Debug, Clone)]
enum Outcome {
    Sent(Delivery),
    Retry { error: String, wait: Duration },
    Failed(String),
}

impl Outcome {
    fn hand_off(&self) -> HandOff {
        match self {
            Self::Sent(_) => HandOff::Sent,
            Self::Retry { wait, .. } => HandOff::Retrying(*wait),
            Self::Failed(_) => HandOff::Failed,
        }
    }
}

/// Work the store refused while it was unreachable.
#[derive(Debug)]
enum Unsettled {
    /// A claim whose answer never came: it may hold a message, which is given back.
    Claim(LeaseId),
    /// A hand-off that happened but is not recorded; its lease still keeps others off it.
    Outcome {
        id: EmailMessageId,
        lease: LeaseId,
        outcome: Outcome,
    },
}

pub struct OutboxWorker {
    queue: Arc<dyn OutboxQueue>,
    sender: Arc<dyn EmailSender>,
    settings: OutboxSettings,
    unsettled: Mutex<Vec<Unsettled>>,
}

impl OutboxWorker {
    pub fn new(
        queue: Arc<dyn OutboxQueue>,
        sender: Arc<dyn EmailSender>,
        settings: OutboxSettings,
    ) -> Self {
        Self {
            queue,
            sender,
            settings,
            unsettled: Mutex::default(),
        }
    }

    /// Hands the oldest due message to the provider; `None` when none is due.
    pub async fn deliver_next(&self) -> Result<Option<HandOff>, StoreError> {
        self.settle().await?;
        let lease = LeaseId(Uuid::now_v7());
        let claimed = match self.queue.claim_due(lease, self.settings.lease).await {
            Ok(Some(claimed)) => claimed,
            Ok(None) => return Ok(None),
            Err(error) => {
                // The claim may have been committed with its answer lost.
                self.lock_unsettled().push(Unsettled::Claim(lease));
                return Err(error);
            }
        };
        self.hand_off(claimed).await.map(Some)
    }

    fn lock_unsettled(&self) -> MutexGuard<'_, Vec<Unsettled>> {
        // The list stays whole whatever panicked while it was held.
        self.unsettled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Gives back the claims and records the outcomes an earlier round could not; while the
    /// store still refuses, nothing new is claimed.
    async fn settle(&self) -> Result<(), StoreError> {
        let mut pending = std::mem::take(&mut *self.lock_unsettled()).into_iter();
        while let Some(unsettled) = pending.next() {
            let settled = match &unsettled {
                Unsettled::Claim(lease) => self.queue.release(*lease).await,
                Unsettled::Outcome { id, lease, outcome } => {
                    self.record(*id, *lease, outcome).await.map(drop)
                }
            };
            if let Err(error) = settled {
                self.lock_unsettled()
                    .extend(std::iter::once(unsettled).chain(pending));
                return Err(error);
            }
        }
        Ok(())
    }

    /// Records `outcome` under `lease`; `LeaseLost` when the lease passed to another worker.
    async fn record(
        &self,
        id: EmailMessageId,
        lease: LeaseId,
        outcome: &Outcome,
    ) -> Result<HandOff, StoreError> {
        let recorded = match outcome {
            Outcome::Sent(delivery) => self.queue.record_sent(id, lease, delivery).await?,
            Outcome::Retry { error, wait } => {
                self.queue.record_retry(id, lease, error, *wait).await?
            }
            Outcome::Failed(reason) => self.queue.record_failed(id, lease, reason).await?,
        };
        if recorded {
            return Ok(outcome.hand_off());
        }
        tracing::warn!(message_id = %id, "lease lost before the outcome was recorded");
        Ok(HandOff::LeaseLost)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(message_id = %claimed.email.message_id, attempt = claimed.attempts))]
    async fn hand_off(&self, claimed: ClaimedEmail) -> Result<HandOff, StoreError> {
        let ClaimedEmail {
            email,
            lease,
            attempts,
            age,
        } = claimed;
        let id = email.message_id;
        let outcome = match self.sender.send(&email).await {
            Ok(delivery) => {
                tracing::info!(message_id = %id, provider = self.sender.provider(), provider_message_id = %delivery.provider_message_id, "mail handed to the provider");
                Outcome::Sent(delivery)
            }
            Err(DeliveryError::Transient(error)) => {
                match self.settings.retry.after_transient(attempts, age) {
                    Some(wait) => {
                        tracing::warn!(message_id = %id, attempts, %error, retry_in = ?wait, "provider unavailable; mail stays queued");
                        Outcome::Retry { error, wait }
                    }
                    None => {
                        let reason = format!(
                            "gave up after {attempts} attempts over {}s: {error}",
                            age.as_secs()
                        );
                        tracing::warn!(message_id = %id, %reason, "mail failed");
                        Outcome::Failed(reason)
                    }
                }
            }
            Err(DeliveryError::Refused(reason)) => {
                tracing::warn!(message_id = %id, %reason, "provider refused the mail");
                Outcome::Failed(reason)
            }
        };
        self.record(id, lease, &outcome).await.inspect_err(|error| {
            tracing::warn!(message_id = %id, %error, "recording the hand-off failed; it is recorded at the next round");
            self.lock_unsettled()
                .push(Unsettled::Outcome { id, lease, outcome });
        })
    }

    /// How long the oldest due message has waited; zero when none is due.
    pub async fn queue_lag(&self) -> Result<Duration, StoreError> {
        Ok(self.queue.oldest_due_wait().await?.unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{EmailAddress, EmailMessageId, LeaseId, RetrySchedule};
    use mockall::Sequence;
    use ports::{Delivery, MockEmailSender, MockOutboxQueue, OutboundEmail};
    use uuid::Uuid;

    const SETTINGS: OutboxSettings = OutboxSettings {
        lease: Duration::from_secs(120),
        retry: DeliveryRetry {
            schedule: RetrySchedule {
                base: Duration::from_secs(2),
                cap: Duration::from_secs(300),
            },
            give_up_after: Duration::from_secs(86_400),
        },
    };

    fn claimed(attempts: u32, age: Duration) -> ClaimedEmail {
        let address = EmailAddress::parse("agent@inbox.example.com").expect("valid");
        ClaimedEmail {
            email: OutboundEmail {
                message_id: EmailMessageId(Uuid::from_u128(7)),
                from: address.clone(),
                to: vec![address],
                cc: Vec::new(),
                bcc: Vec::new(),
                subject: "s".into(),
                text: "t".into(),
                headers: Vec::new(),
                internet_message_id: "<7@inbox.example.com>".into(),
                in_reply_to: None,
                references: Vec::new(),
            },
            lease: LeaseId(Uuid::from_u128(9)),
            attempts,
            age,
        }
    }

    fn worker(queue: MockOutboxQueue, sender: MockEmailSender) -> OutboxWorker {
        OutboxWorker::new(Arc::new(queue), Arc::new(sender), SETTINGS)
    }

    #[tokio::test]
    async fn a_claimed_message_is_handed_over_then_recorded_sent() {
        let mut sequence = Sequence::new();
        let mut queue = MockOutboxQueue::new();
        let mut sender = MockEmailSender::new();
        let message = claimed(1, Duration::ZERO);
        let (id, lease) = (message.email.message_id, message.lease);
        queue
            .expect_claim_due()
            .withf(|_, lease_for| *lease_for == SETTINGS.lease)
            .times(1)
            .in_sequence(&mut sequence)
            .return_once(move |_, _| Ok(Some(message)));
        sender
            .expect_send()
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_| sent_delivery());
        sender.expect_provider().return_const("test");
        queue
            .expect_record_sent()
            .withf(move |i, l, d| *i == id && *l == lease && d.provider_message_id == "p-1")
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _| Ok(true));
        assert_eq!(
            worker(queue, sender).deliver_next().await.expect("ok"),
            Some(HandOff::Sent)
        );
    }

    #[tokio::test]
    async fn an_unavailable_provider_keeps_the_message_queued_with_a_growing_wait() {
        let mut queue = MockOutboxQueue::new();
        let mut sender = MockEmailSender::new();
        queue
            .expect_claim_due()
            .return_once(|_, _| Ok(Some(claimed(3, Duration::from_secs(60)))));
        sender
            .expect_send()
            .returning(|_| Err(DeliveryError::Transient("connection refused".into())));
        queue
            .expect_record_retry()
            .withf(|_, _, error, wait| {
                error == "connection refused" && *wait == Duration::from_secs(8)
            })
            .times(1)
            .returning(|_, _, _, _| Ok(true));
        queue.expect_record_sent().never();
        queue.expect_record_failed().never();
        assert_eq!(
            worker(queue, sender).deliver_next().await.expect("ok"),
            Some(HandOff::Retrying(Duration::from_secs(8)))
        );
    }

    #[tokio::test]
    async fn a_refusal_fails_the_message_with_the_providers_reason() {
        let mut queue = MockOutboxQueue::new();
        let mut sender = MockEmailSender::new();
        queue
            .expect_claim_due()
            .return_once(|_, _| Ok(Some(claimed(1, Duration::ZERO))));
        sender
            .expect_send()
            .returning(|_| Err(DeliveryError::Refused("550 no such user".into())));
        queue
            .expect_record_failed()
            .withf(|_, _, reason| reason == "550 no such user")
            .times(1)
            .returning(|_, _, _| Ok(true));
        queue.expect_record_retry().never();
        assert_eq!(
            worker(queue, sender).deliver_next().await.expect("ok"),
            Some(HandOff::Failed)
        );
    }

    #[tokio::test]
    async fn a_message_unavailable_for_too_long_fails_saying_so() {
        let mut queue = MockOutboxQueue::new();
        let mut sender = MockEmailSender::new();
        queue
            .expect_claim_due()
            .return_once(|_, _| Ok(Some(claimed(40, Duration::from_secs(86_400)))));
        sender
            .expect_send()
            .returning(|_| Err(DeliveryError::Transient("timeout".into())));
        queue
            .expect_record_failed()
            .withf(|_, _, reason| reason.starts_with("gave up after 40 attempts"))
            .times(1)
            .returning(|_, _, _| Ok(true));
        assert_eq!(
            worker(queue, sender).deliver_next().await.expect("ok"),
            Some(HandOff::Failed)
        );
    }

    #[tokio::test]
    async fn a_lost_lease_is_reported_not_counted_as_delivered() {
        let mut queue = MockOutboxQueue::new();
        let mut sender = MockEmailSender::new();
        queue
            .expect_claim_due()
            .return_once(|_, _| Ok(Some(claimed(1, Duration::ZERO))));
        sender.expect_send().returning(|_| {
            Ok(Delivery {
                provider_message_id: "p".into(),
            })
        });
        sender.expect_provider().return_const("test");
        queue.expect_record_sent().returning(|_, _, _| Ok(false));
        assert_eq!(
            worker(queue, sender).deliver_next().await.expect("ok"),
            Some(HandOff::LeaseLost)
        );
    }

    #[tokio::test]
    async fn nothing_due_sends_nothing() {
        let mut queue = MockOutboxQueue::new();
        let mut sender = MockEmailSender::new();
        queue.expect_claim_due().return_once(|_, _| Ok(None));
        sender.expect_send().never();
        assert_eq!(
            worker(queue, sender).deliver_next().await.expect("ok"),
            None
        );
    }

    fn sent_delivery() -> Result<Delivery, DeliveryError> {
        Ok(Delivery {
            provider_message_id: "p-1".into(),
        })
    }

    #[tokio::test]
    async fn a_claim_whose_answer_was_lost_is_given_back_before_anything_new_is_claimed() {
        let mut sequence = Sequence::new();
        let mut queue = MockOutboxQueue::new();
        let mut sender = MockEmailSender::new();
        let first_lease = Arc::new(Mutex::new(None));
        let remembered = first_lease.clone();
        queue
            .expect_claim_due()
            .times(1)
            .in_sequence(&mut sequence)
            .returning(move |lease, _| {
                *remembered.lock().expect("lease") = Some(lease);
                Err(StoreError::Unavailable("connection reset".into()))
            });
        let is_first = |first: &Arc<Mutex<Option<LeaseId>>>| {
            let first = first.clone();
            move |lease: &LeaseId| Some(*lease) == *first.lock().expect("lease")
        };
        queue
            .expect_release()
            .withf(is_first(&first_lease))
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_| Err(StoreError::Unavailable("still down".into())));
        queue
            .expect_release()
            .withf(is_first(&first_lease))
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_| Ok(()));
        queue
            .expect_claim_due()
            .withf({
                let is_first = is_first(&first_lease);
                move |lease, _| !is_first(lease)
            })
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _| Ok(None));
        sender.expect_send().never();
        let worker = worker(queue, sender);
        assert!(worker.deliver_next().await.is_err(), "the claim failed");
        assert!(
            worker.deliver_next().await.is_err(),
            "nothing is claimed while the lost claim cannot be given back"
        );
        assert_eq!(worker.deliver_next().await.expect("ok"), None);
    }

    #[tokio::test]
    async fn a_hand_off_the_store_could_not_record_is_recorded_at_the_next_round_not_sent_again() {
        let mut sequence = Sequence::new();
        let mut queue = MockOutboxQueue::new();
        let mut sender = MockEmailSender::new();
        let message = claimed(1, Duration::ZERO);
        let (id, lease) = (message.email.message_id, message.lease);
        queue
            .expect_claim_due()
            .times(1)
            .in_sequence(&mut sequence)
            .return_once(move |_, _| Ok(Some(message)));
        sender.expect_send().times(1).returning(|_| sent_delivery());
        sender.expect_provider().return_const("test");
        queue
            .expect_record_sent()
            .withf(move |i, l, _| *i == id && *l == lease)
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _| Err(StoreError::Unavailable("connection reset".into())));
        queue
            .expect_record_sent()
            .withf(move |i, l, d| *i == id && *l == lease && d.provider_message_id == "p-1")
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _| Ok(true));
        queue
            .expect_claim_due()
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _| Ok(None));
        let worker = worker(queue, sender);
        assert!(worker.deliver_next().await.is_err(), "the record failed");
        assert_eq!(worker.deliver_next().await.expect("ok"), None);
    }
}
