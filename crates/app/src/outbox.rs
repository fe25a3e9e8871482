//! The outbox worker: hands queued mail to the provider one message at a time, from any number
//! of instances. A message is leased before its hand-off, so no two workers send it at once; a
//! transient failure keeps it queued with a growing wait, a refusal fails it with the reason.

use std::sync::Arc;
use std::time::Duration;

use domain::DeliveryRetry;
use ports::{ClaimedEmail, DeliveryError, EmailSender, OutboxQueue, StoreError};

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

pub struct OutboxWorker {
    queue: Arc<dyn OutboxQueue>,
    sender: Arc<dyn EmailSender>,
    settings: OutboxSettings,
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
        }
    }

    /// Hands the oldest due message to the provider; `None` when none is due.
    pub async fn deliver_next(&self) -> Result<Option<HandOff>, StoreError> {
        let Some(claimed) = self.queue.claim_due(self.settings.lease).await? else {
            return Ok(None);
        };
        self.hand_off(claimed).await.map(Some)
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
        let (recorded, outcome) = match self.sender.send(&email).await {
            Ok(delivery) => {
                tracing::info!(message_id = %id, provider = self.sender.provider(), provider_message_id = %delivery.provider_message_id, "mail handed to the provider");
                (
                    self.queue.record_sent(id, lease, &delivery).await?,
                    HandOff::Sent,
                )
            }
            Err(DeliveryError::Transient(error)) => {
                match self.settings.retry.after_transient(attempts, age) {
                    Some(wait) => {
                        tracing::warn!(message_id = %id, attempts, %error, retry_in = ?wait, "provider unavailable; mail stays queued");
                        (
                            self.queue.record_retry(id, lease, &error, wait).await?,
                            HandOff::Retrying(wait),
                        )
                    }
                    None => {
                        let reason = format!(
                            "gave up after {attempts} attempts over {}s: {error}",
                            age.as_secs()
                        );
                        tracing::warn!(message_id = %id, %reason, "mail failed");
                        (
                            self.queue.record_failed(id, lease, &reason).await?,
                            HandOff::Failed,
                        )
                    }
                }
            }
            Err(DeliveryError::Refused(reason)) => {
                tracing::warn!(message_id = %id, %reason, "provider refused the mail");
                (
                    self.queue.record_failed(id, lease, &reason).await?,
                    HandOff::Failed,
                )
            }
        };
        if !recorded {
            tracing::warn!(message_id = %id, "lease lost before the outcome was recorded");
            return Ok(HandOff::LeaseLost);
        }
        Ok(outcome)
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
    use mockall::predicate::eq;
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
            .with(eq(SETTINGS.lease))
            .times(1)
            .in_sequence(&mut sequence)
            .return_once(move |_| Ok(Some(message)));
        sender
            .expect_send()
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_| {
                Ok(Delivery {
                    provider_message_id: "p-1".into(),
                })
            });
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
            .return_once(|_| Ok(Some(claimed(3, Duration::from_secs(60)))));
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
            .return_once(|_| Ok(Some(claimed(1, Duration::ZERO))));
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
            .return_once(|_| Ok(Some(claimed(40, Duration::from_secs(86_400)))));
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
            .return_once(|_| Ok(Some(claimed(1, Duration::ZERO))));
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
        queue.expect_claim_due().return_once(|_| Ok(None));
        sender.expect_send().never();
        assert_eq!(
            worker(queue, sender).deliver_next().await.expect("ok"),
            None
        );
    }
}
