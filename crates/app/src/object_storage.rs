//! Attachment bytes in an object store: put ahead of the transaction that stores their message,
//! under a record that transaction takes, so that bytes no stored message came to own (a crash
//! between the two, a replay, a redelivery, a refused send) are found and removed.

use std::sync::Arc;
use std::time::Duration;

use domain::EmailMessageId;
use ports::{AttachmentBytes, AttachmentObjects, AttachmentUploads, StoreError};

/// How many leftover records one round of the sweep takes; it repeats while rounds are full.
const SWEEP_BATCH: usize = 100;

/// The object store of attachment bytes, and the records of what was put in it.
#[derive(Clone)]
pub struct ObjectStorage {
    pub objects: Arc<dyn AttachmentObjects>,
    pub uploads: Arc<dyn AttachmentUploads>,
}

impl ObjectStorage {
    /// Puts the bytes at hand of the stored `attachments` of `message`, recorded first, and takes
    /// them out of `attachments`: the message's transaction then takes the record instead of
    /// writing them. Returns whether anything was put. On a failure, what was put is removed
    /// (or, failing that, left to the sweep).
    pub(crate) async fn place(
        &self,
        message: EmailMessageId,
        attachments: &mut [AttachmentBytes],
    ) -> Result<bool, StoreError> {
        let placing: Vec<usize> = (0..attachments.len())
            .filter(|&index| attachments[index].meta.stored && attachments[index].content.is_some())
            .collect();
        if placing.is_empty() {
            return Ok(false);
        }
        self.uploads.record_upload(message).await?;
        for index in placing {
            let attachment = &mut attachments[index];
            let Some(bytes) = attachment.content.take() else {
                continue;
            };
            if let Err(error) = self.objects.put(message, attachment.meta.id, bytes).await {
                self.discard(message).await;
                return Err(error);
            }
        }
        Ok(true)
    }

    /// Removes the bytes put for a message that was not stored, and their record. A failure is
    /// logged and left to the sweep, which finds the record.
    pub(crate) async fn discard(&self, message: EmailMessageId) {
        if let Err(error) = self.remove(&[message]).await {
            tracing::warn!(%message, %error, "attachment bytes of an unstored message left to the sweep");
        }
    }

    /// Removes the bytes of each of `messages`, then forgets the records of those removed;
    /// returns how many. Bytes that could not be removed keep their record, for the sweep.
    async fn remove(&self, messages: &[EmailMessageId]) -> Result<usize, StoreError> {
        let mut gone = Vec::with_capacity(messages.len());
        for message in messages {
            match self.objects.remove(*message).await {
                Ok(()) => gone.push(*message),
                Err(error) => {
                    tracing::warn!(%message, %error, "leftover attachment bytes not removed yet");
                }
            }
        }
        if !gone.is_empty() {
            self.uploads.forget_uploads(&gone).await?;
        }
        Ok(gone.len())
    }
}

/// Removes the bytes of messages never stored, once their record is older than any ingest or
/// send could take between putting them and storing their message.
pub struct AttachmentSweep {
    storage: ObjectStorage,
    older_than: Duration,
}

impl AttachmentSweep {
    pub fn new(storage: ObjectStorage, older_than: Duration) -> Self {
        Self {
            storage,
            older_than,
        }
    }

    /// One sweep: every leftover record's bytes removed, then the record; returns how many. A
    /// record whose bytes could not be removed stays, swept again later.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn sweep(&self) -> Result<usize, StoreError> {
        let mut removed = 0;
        loop {
            let stale = self
                .storage
                .uploads
                .stale_uploads(self.older_than, SWEEP_BATCH)
                .await?;
            removed += self.storage.remove(&stale).await?;
            if stale.len() < SWEEP_BATCH {
                return Ok(removed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{AttachmentId, AttachmentMeta};
    use mockall::Sequence;
    use ports::{MockAttachmentObjects, MockAttachmentUploads};
    use uuid::Uuid;

    const MESSAGE: EmailMessageId = EmailMessageId(Uuid::from_u128(7));

    fn attachment(index: usize, stored: bool, bytes: &[u8]) -> AttachmentBytes {
        AttachmentBytes {
            meta: AttachmentMeta {
                id: AttachmentId::at_index(index),
                filename: None,
                content_type: "text/plain".into(),
                size: bytes.len() as u64,
                content_id: None,
                stored,
                sha256: None,
            },
            content: Some(Arc::from(bytes)),
        }
    }

    fn storage(objects: MockAttachmentObjects, uploads: MockAttachmentUploads) -> ObjectStorage {
        ObjectStorage {
            objects: Arc::new(objects),
            uploads: Arc::new(uploads),
        }
    }

    #[tokio::test]
    async fn bytes_are_recorded_then_put_and_taken_out_of_the_message() {
        let mut sequence = Sequence::new();
        let mut objects = MockAttachmentObjects::new();
        let mut uploads = MockAttachmentUploads::new();
        uploads
            .expect_record_upload()
            .withf(|message| *message == MESSAGE)
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_| Ok(()));
        objects
            .expect_put()
            .withf(|message, id, bytes| {
                *message == MESSAGE && id.to_string() == "att_1" && &bytes[..] == b"kept"
            })
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _| Ok(()));
        let mut attachments = vec![attachment(0, true, b"kept"), attachment(1, false, b"over")];
        let placed = storage(objects, uploads)
            .place(MESSAGE, &mut attachments)
            .await
            .expect("placed");
        assert!(placed);
        assert!(
            attachments[0].content.is_none(),
            "the transaction writes none"
        );
        assert!(
            attachments[1].content.is_some(),
            "bytes not kept are not put anywhere"
        );
    }

    #[tokio::test]
    async fn a_message_without_kept_bytes_records_nothing() {
        let mut uploads = MockAttachmentUploads::new();
        uploads.expect_record_upload().never();
        let mut attachments = vec![attachment(0, false, b"over")];
        let placed = storage(MockAttachmentObjects::new(), uploads)
            .place(MESSAGE, &mut attachments)
            .await
            .expect("nothing to place");
        assert!(!placed);
    }

    #[tokio::test]
    async fn a_failed_put_removes_what_was_put_and_its_record() {
        let mut objects = MockAttachmentObjects::new();
        let mut uploads = MockAttachmentUploads::new();
        uploads.expect_record_upload().returning(|_| Ok(()));
        objects
            .expect_put()
            .returning(|_, id, _| match id.position() {
                1 => Ok(()),
                _ => Err(StoreError::ObjectStoreUnavailable("store down".into())),
            });
        objects
            .expect_remove()
            .withf(|message| *message == MESSAGE)
            .times(1)
            .returning(|_| Ok(()));
        uploads
            .expect_forget_uploads()
            .withf(|messages| messages == [MESSAGE])
            .times(1)
            .returning(|_| Ok(()));
        let mut attachments = vec![attachment(0, true, b"a"), attachment(1, true, b"b")];
        let failed = storage(objects, uploads)
            .place(MESSAGE, &mut attachments)
            .await;
        assert!(matches!(failed, Err(StoreError::ObjectStoreUnavailable(_))));
    }

    #[tokio::test]
    async fn the_sweep_forgets_only_records_whose_bytes_are_gone_and_repeats_full_rounds() {
        let first: Vec<EmailMessageId> = (0..SWEEP_BATCH as u128)
            .map(|n| EmailMessageId(Uuid::from_u128(100 + n)))
            .collect();
        let stuck = first[3];
        let mut sequence = Sequence::new();
        let mut objects = MockAttachmentObjects::new();
        let mut uploads = MockAttachmentUploads::new();
        let rounds = [first.clone(), vec![MESSAGE]];
        for round in rounds {
            uploads
                .expect_stale_uploads()
                .withf(|older_than, limit| {
                    *older_than == Duration::from_secs(3600) && *limit == SWEEP_BATCH
                })
                .times(1)
                .in_sequence(&mut sequence)
                .return_once(move |_, _| Ok(round));
            uploads
                .expect_forget_uploads()
                .times(1)
                .in_sequence(&mut sequence)
                .returning(move |messages| {
                    assert!(!messages.contains(&stuck), "its bytes are still there");
                    Ok(())
                });
        }
        objects
            .expect_remove()
            .returning(move |message| match message == stuck {
                true => Err(StoreError::Unavailable("timeout".into())),
                false => Ok(()),
            });
        let sweep = AttachmentSweep::new(storage(objects, uploads), Duration::from_secs(3600));
        assert_eq!(sweep.sweep().await.expect("swept"), SWEEP_BATCH);
    }
}
