//! The outbox: accepted mail is a leased queue's job (`LeasedWorker`), handed to the provider
//! one message at a time from any number of instances.

use std::sync::Arc;

use async_trait::async_trait;
use ports::{AttachmentContent, Delivery, DeliveryError, EmailSender, LeasedQueue, OutboundEmail};

use crate::leased_queue::{Deliver, LeasedWorker, QueueSettings};
use crate::AttachmentDownload;

/// The worker that hands queued mail to the provider.
pub type OutboxWorker = LeasedWorker<OutboundEmail>;

/// A message's attempt: its attachments' bytes read, then its hand-off to the provider.
struct ToProvider {
    sender: Arc<dyn EmailSender>,
    attachments: Arc<dyn AttachmentContent>,
}

impl ToProvider {
    /// The message with the bytes of its attachments; a store that cannot give them now is a
    /// transient failure, retried as the provider's are.
    async fn with_contents(&self, email: &OutboundEmail) -> Result<OutboundEmail, DeliveryError> {
        let mut email = email.clone();
        for attachment in email.attachments.iter_mut().filter(|a| a.content.is_none()) {
            let download = AttachmentDownload::new(
                attachment.meta.clone(),
                email.message_id,
                Arc::clone(&self.attachments),
            );
            let bytes = download.whole().await.map_err(|error| {
                DeliveryError::transient(format!("attachment bytes unreadable: {error}"))
            })?;
            attachment.content = Some(bytes);
        }
        Ok(email)
    }
}

#[async_trait]
impl Deliver<OutboundEmail> for ToProvider {
    async fn deliver(&self, email: &OutboundEmail) -> Result<Delivery, DeliveryError> {
        let delivery = match email.attachments.is_empty() {
            true => self.sender.send(email).await?,
            false => self.sender.send(&self.with_contents(email).await?).await?,
        };
        tracing::info!(message_id = %email.message_id, provider = self.sender.provider(), provider_message_id = %delivery.provider_message_id, "mail handed to the provider");
        Ok(delivery)
    }
}

impl OutboxWorker {
    /// Hands queued mail to `sender`, with the bytes of its attachments read from `attachments`.
    pub fn outbox(
        queue: Arc<dyn LeasedQueue<OutboundEmail>>,
        sender: Arc<dyn EmailSender>,
        attachments: Arc<dyn AttachmentContent>,
        settings: QueueSettings,
    ) -> Self {
        Self::new(
            queue,
            Arc::new(ToProvider {
                sender,
                attachments,
            }),
            settings,
        )
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use super::*;
    use crate::HandOff;
    use domain::{
        AttachmentId, AttachmentMeta, DeliveryRetry, EmailAddress, EmailMessageId, LeaseId,
        RetryRule, RetrySchedule, ATTACHMENT_PIECE_BYTES,
    };
    use mockall::Sequence;
    use ports::{
        AttachmentBytes, ClaimedEmail, JobOutcome, MockAttachmentContent, MockEmailSender,
        MockLeasedQueue, StoreError,
    };
    use uuid::Uuid;

    const SETTINGS: QueueSettings = QueueSettings {
        lease: Duration::from_secs(120),
        retry: RetryRule::Doubling(DeliveryRetry {
            schedule: RetrySchedule {
                base: Duration::from_secs(2),
                cap: Duration::from_secs(300),
            },
            give_up_after: Duration::from_secs(86_400),
        }),
        places_per_owner: None,
    };

    fn claimed(attempts: u32, age: Duration) -> ClaimedEmail {
        let address = EmailAddress::parse("agent@inbox.example.com").expect("valid");
        ClaimedEmail {
            job: OutboundEmail {
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
                attachments: Vec::new(),
            },
            lease: LeaseId(Uuid::from_u128(9)),
            attempts,
            age,
        }
    }

    fn sent(provider_message_id: &str) -> JobOutcome<Delivery> {
        JobOutcome::Done(Delivery {
            provider_message_id: provider_message_id.into(),
        })
    }

    /// Whether `wait` is `scheduled` spread by at most a tenth either way.
    fn spread_around(wait: Duration, scheduled: Duration) -> bool {
        wait >= scheduled.mul_f64(0.9) && wait <= scheduled.mul_f64(1.1)
    }

    fn worker(queue: MockLeasedQueue<OutboundEmail>, sender: MockEmailSender) -> OutboxWorker {
        OutboxWorker::outbox(
            Arc::new(queue),
            Arc::new(sender),
            Arc::new(MockAttachmentContent::new()),
            SETTINGS,
        )
    }

    /// A claimed message with one attachment of two pieces whose bytes are still in the store.
    fn claimed_with_attachment() -> ClaimedEmail {
        let mut message = claimed(1, Duration::ZERO);
        message.job.attachments = vec![AttachmentBytes {
            meta: AttachmentMeta {
                id: AttachmentId::at_index(0),
                filename: Some("a.bin".into()),
                content_type: "application/octet-stream".into(),
                size: ATTACHMENT_PIECE_BYTES as u64 + 3,
                content_id: None,
                stored: true,
                sha256: None,
            },
            content: None,
        }];
        message
    }

    #[tokio::test]
    async fn attachments_are_read_from_the_store_before_the_hand_off() {
        let mut sequence = Sequence::new();
        let mut queue = MockLeasedQueue::<OutboundEmail>::new();
        let mut sender = MockEmailSender::new();
        let mut store = MockAttachmentContent::new();
        queue
            .expect_claim_due()
            .return_once(|_, _, _| Ok(Some(claimed_with_attachment())));
        for index in 0..2u64 {
            store
                .expect_piece()
                .withf(move |_, _, i| *i == index)
                .times(1)
                .in_sequence(&mut sequence)
                .returning(move |_, _, _| {
                    Ok(Some(match index {
                        0 => vec![1; ATTACHMENT_PIECE_BYTES],
                        _ => vec![2; 3],
                    }))
                });
        }
        sender
            .expect_send()
            .withf(|email| {
                let bytes = email.attachments[0].content.as_deref().expect("read");
                bytes.len() == ATTACHMENT_PIECE_BYTES + 3 && bytes.ends_with(&[1, 2, 2, 2])
            })
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_| sent_delivery());
        sender.expect_provider().return_const("test");
        queue.expect_record().returning(|_, _, _| Ok(true));
        let worker =
            OutboxWorker::outbox(Arc::new(queue), Arc::new(sender), Arc::new(store), SETTINGS);
        assert_eq!(worker.work_next().await.expect("ok"), Some(HandOff::Sent));
    }

    #[tokio::test]
    async fn an_unreadable_attachment_retries_the_message_and_never_sends_it_without() {
        let mut queue = MockLeasedQueue::<OutboundEmail>::new();
        let mut sender = MockEmailSender::new();
        let mut store = MockAttachmentContent::new();
        queue
            .expect_claim_due()
            .return_once(|_, _, _| Ok(Some(claimed_with_attachment())));
        store
            .expect_piece()
            .returning(|_, _, _| Err(StoreError::Unavailable("down".into())));
        sender.expect_send().never();
        queue
            .expect_record()
            .withf(|_, _, outcome| matches!(outcome, JobOutcome::Retry { .. }))
            .times(1)
            .returning(|_, _, _| Ok(true));
        let worker =
            OutboxWorker::outbox(Arc::new(queue), Arc::new(sender), Arc::new(store), SETTINGS);
        assert!(matches!(
            worker.work_next().await.expect("ok"),
            Some(HandOff::Retrying(_))
        ));
    }

    #[tokio::test]
    async fn a_claimed_message_is_handed_over_then_recorded_sent() {
        let mut sequence = Sequence::new();
        let mut queue = MockLeasedQueue::<OutboundEmail>::new();
        let mut sender = MockEmailSender::new();
        let message = claimed(1, Duration::ZERO);
        let (id, lease) = (message.job.message_id, message.lease);
        queue
            .expect_claim_due()
            .withf(|_, lease_for, _| *lease_for == SETTINGS.lease)
            .times(1)
            .in_sequence(&mut sequence)
            .return_once(move |_, _, _| Ok(Some(message)));
        sender
            .expect_send()
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_| sent_delivery());
        sender.expect_provider().return_const("test");
        queue
            .expect_record()
            .withf(move |i, l, outcome| *i == id && *l == lease && *outcome == sent("p-1"))
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _| Ok(true));
        assert_eq!(
            worker(queue, sender).work_next().await.expect("ok"),
            Some(HandOff::Sent)
        );
    }

    #[tokio::test]
    async fn an_unavailable_provider_keeps_the_message_queued_with_a_growing_wait() {
        let mut queue = MockLeasedQueue::<OutboundEmail>::new();
        let mut sender = MockEmailSender::new();
        queue
            .expect_claim_due()
            .return_once(|_, _, _| Ok(Some(claimed(3, Duration::from_secs(60)))));
        sender
            .expect_send()
            .returning(|_| Err(DeliveryError::transient("connection refused")));
        queue
            .expect_record()
            .withf(|_, _, outcome| {
                matches!(outcome, JobOutcome::Retry { error, wait }
                    if error == "connection refused" && spread_around(*wait, Duration::from_secs(8)))
            })
            .times(1)
            .returning(|_, _, _| Ok(true));
        assert!(matches!(
            worker(queue, sender).work_next().await.expect("ok"),
            Some(HandOff::Retrying(wait)) if spread_around(wait, Duration::from_secs(8))
        ));
    }

    #[tokio::test]
    async fn a_provider_asking_to_wait_longer_than_the_schedule_is_waited_for() {
        let mut queue = MockLeasedQueue::<OutboundEmail>::new();
        let mut sender = MockEmailSender::new();
        queue
            .expect_claim_due()
            .return_once(|_, _, _| Ok(Some(claimed(1, Duration::from_secs(5)))));
        sender.expect_send().returning(|_| {
            Err(DeliveryError::Transient {
                reason: "429: rate_limit_exceeded".into(),
                retry_after: Some(Duration::from_secs(120)),
            })
        });
        queue
            .expect_record()
            .withf(|_, _, outcome| {
                matches!(outcome, JobOutcome::Retry { wait, .. } if *wait == Duration::from_secs(120))
            })
            .times(1)
            .returning(|_, _, _| Ok(true));
        assert_eq!(
            worker(queue, sender).work_next().await.expect("ok"),
            Some(HandOff::Retrying(Duration::from_secs(120)))
        );
    }

    #[tokio::test]
    async fn a_refusal_fails_the_message_with_the_providers_reason() {
        let mut queue = MockLeasedQueue::<OutboundEmail>::new();
        let mut sender = MockEmailSender::new();
        queue
            .expect_claim_due()
            .return_once(|_, _, _| Ok(Some(claimed(1, Duration::ZERO))));
        sender
            .expect_send()
            .returning(|_| Err(DeliveryError::Refused("550 no such user".into())));
        queue
            .expect_record()
            .withf(|_, _, outcome| *outcome == JobOutcome::Failed("550 no such user".into()))
            .times(1)
            .returning(|_, _, _| Ok(true));
        assert_eq!(
            worker(queue, sender).work_next().await.expect("ok"),
            Some(HandOff::Failed)
        );
    }

    #[tokio::test]
    async fn a_message_unavailable_for_too_long_fails_saying_so() {
        let mut queue = MockLeasedQueue::<OutboundEmail>::new();
        let mut sender = MockEmailSender::new();
        queue
            .expect_claim_due()
            .return_once(|_, _, _| Ok(Some(claimed(40, Duration::from_secs(86_400)))));
        sender
            .expect_send()
            .returning(|_| Err(DeliveryError::transient("timeout")));
        queue
            .expect_record()
            .withf(|_, _, outcome| {
                matches!(outcome, JobOutcome::Failed(reason)
                    if reason.starts_with("gave up after 40 attempts"))
            })
            .times(1)
            .returning(|_, _, _| Ok(true));
        assert_eq!(
            worker(queue, sender).work_next().await.expect("ok"),
            Some(HandOff::Failed)
        );
    }

    #[tokio::test]
    async fn a_lost_lease_is_reported_not_counted_as_delivered() {
        let mut queue = MockLeasedQueue::<OutboundEmail>::new();
        let mut sender = MockEmailSender::new();
        queue
            .expect_claim_due()
            .return_once(|_, _, _| Ok(Some(claimed(1, Duration::ZERO))));
        sender.expect_send().returning(|_| {
            Ok(Delivery {
                provider_message_id: "p".into(),
            })
        });
        sender.expect_provider().return_const("test");
        queue.expect_record().returning(|_, _, _| Ok(false));
        assert_eq!(
            worker(queue, sender).work_next().await.expect("ok"),
            Some(HandOff::LeaseLost)
        );
    }

    #[tokio::test]
    async fn nothing_due_sends_nothing() {
        let mut queue = MockLeasedQueue::<OutboundEmail>::new();
        let mut sender = MockEmailSender::new();
        queue.expect_claim_due().return_once(|_, _, _| Ok(None));
        sender.expect_send().never();
        assert_eq!(worker(queue, sender).work_next().await.expect("ok"), None);
    }

    fn sent_delivery() -> Result<Delivery, DeliveryError> {
        Ok(Delivery {
            provider_message_id: "p-1".into(),
        })
    }

    #[tokio::test]
    async fn a_claim_whose_answer_was_lost_is_given_back_before_anything_new_is_claimed() {
        let mut sequence = Sequence::new();
        let mut queue = MockLeasedQueue::<OutboundEmail>::new();
        let mut sender = MockEmailSender::new();
        let first_lease = Arc::new(Mutex::new(None));
        let remembered = first_lease.clone();
        queue
            .expect_claim_due()
            .times(1)
            .in_sequence(&mut sequence)
            .returning(move |lease, _, _| {
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
                move |lease, _, _| !is_first(lease)
            })
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _| Ok(None));
        sender.expect_send().never();
        let worker = worker(queue, sender);
        assert!(worker.work_next().await.is_err(), "the claim failed");
        assert!(
            worker.work_next().await.is_err(),
            "nothing is claimed while the lost claim cannot be given back"
        );
        assert_eq!(worker.work_next().await.expect("ok"), None);
    }

    #[tokio::test]
    async fn a_hand_off_the_store_could_not_record_is_recorded_at_the_next_round_not_sent_again() {
        let mut sequence = Sequence::new();
        let mut queue = MockLeasedQueue::<OutboundEmail>::new();
        let mut sender = MockEmailSender::new();
        let message = claimed(1, Duration::ZERO);
        let (id, lease) = (message.job.message_id, message.lease);
        queue
            .expect_claim_due()
            .times(1)
            .in_sequence(&mut sequence)
            .return_once(move |_, _, _| Ok(Some(message)));
        sender.expect_send().times(1).returning(|_| sent_delivery());
        sender.expect_provider().return_const("test");
        queue
            .expect_record()
            .withf(move |i, l, _| *i == id && *l == lease)
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _| Err(StoreError::Unavailable("connection reset".into())));
        queue
            .expect_record()
            .withf(move |i, l, outcome| *i == id && *l == lease && *outcome == sent("p-1"))
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _| Ok(true));
        queue
            .expect_claim_due()
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _| Ok(None));
        let worker = worker(queue, sender);
        assert!(worker.work_next().await.is_err(), "the record failed");
        assert_eq!(worker.work_next().await.expect("ok"), None);
    }
}
