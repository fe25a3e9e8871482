//! What the mail services' tests share: an agent with (or without) its inbox, a stored message,
//! an attachment as the parser lists it, and an object store that counts what it is given.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use domain::{
    AgentProfile, AgentRecord, AttachmentId, AttachmentMeta, Direction, EmailAddress, EmailInboxId,
    EmailInboxRecord, EmailMessageId, EmailMessageRecord,
};
use ports::AttachmentBytes;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::object_storage::ObjectStorage;

pub(super) fn address(text: &str) -> EmailAddress {
    EmailAddress::parse(text).expect("valid address")
}

pub(super) fn inbox() -> EmailInboxRecord {
    EmailInboxRecord {
        id: EmailInboxId(Uuid::from_u128(1)),
        address: address("agent@inbox.example.com"),
        provider: "sandbox".into(),
        created_at: OffsetDateTime::UNIX_EPOCH,
    }
}

pub(super) fn profile(with_inbox: bool) -> AgentProfile {
    AgentProfile {
        agent: AgentRecord::fixture(),
        phone_number: None,
        email_inbox: with_inbox.then(inbox),
        wallet: None,
    }
}

pub(super) fn record(direction: Direction, from: Option<&str>) -> EmailMessageRecord {
    EmailMessageRecord {
        id: EmailMessageId(Uuid::from_u128(5)),
        inbox_id: inbox().id,
        direction,
        thread_id: EmailMessageId(Uuid::from_u128(4)),
        provider_message_id: Some("p".into()),
        internet_message_id: Some("<b@x>".into()),
        in_reply_to: Some("<a@x>".into()),
        references: vec!["<a@x>".into()],
        subject: Some("Re: Plans".into()),
        from: from.map(str::to_owned),
        to: vec!["agent@inbox.example.com".into()],
        text: Some("t".into()),
        created_at: OffsetDateTime::UNIX_EPOCH,
        received_at: Some(OffsetDateTime::UNIX_EPOCH),
        ..EmailMessageRecord::fixture()
    }
}

/// An object store that takes every put and removal, counting them.
pub(super) fn counted_object_storage(
    puts: &Arc<AtomicUsize>,
    discards: &Arc<AtomicUsize>,
) -> ObjectStorage {
    let mut objects = ports::MockAttachmentObjects::new();
    let mut uploads = ports::MockAttachmentUploads::new();
    let put = Arc::clone(puts);
    objects.expect_put().returning(move |_, _, _| {
        put.fetch_add(1, Ordering::SeqCst);
        Ok(())
    });
    let removed = Arc::clone(discards);
    objects.expect_remove().returning(move |_| {
        removed.fetch_add(1, Ordering::SeqCst);
        Ok(())
    });
    uploads.expect_record_upload().returning(|_| Ok(()));
    uploads.expect_forget_uploads().returning(|_| Ok(()));
    ObjectStorage {
        objects: Arc::new(objects),
        uploads: Arc::new(uploads),
    }
}

/// An attachment as the parser lists it, with these bytes.
pub(super) fn listed(filename: &str, content: Option<&[u8]>) -> AttachmentBytes {
    AttachmentBytes {
        meta: AttachmentMeta {
            id: AttachmentId::at_index(0),
            filename: Some(filename.into()),
            content_type: "text/plain".into(),
            size: content.map_or(7, |bytes| bytes.len() as u64),
            content_id: None,
            stored: false,
            sha256: None,
        },
        content: content.map(Arc::from),
    }
}
