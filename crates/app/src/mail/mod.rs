//! Mail as a context of its own, in three services, each holding only the ports it works
//! through: sending, replying and forwarding through the outbox (`OutboundMailService`), reading
//! the inbox and its sender rules (`MailboxService`), and taking in the mail the provider delivers
//! (`MailIntakeService`). What they share sits here: the error enums, the constants, the send
//! rates, an attachment's download, and bytes placed in (or discarded from) the object store.

use std::sync::Arc;
use std::time::Duration;

use domain::{
    piece_count, AgentProfile, AttachmentMeta, EmailInboxRecord, EmailMessageId, RateLimit,
    SponsorId,
};
use futures_util::{Stream, TryStreamExt};
use ports::{
    AttachmentBytes, AttachmentContent, InboundParseError, ProviderWebhookRefusal, StoreError,
};

pub use domain::commands::{ForwardMail, ReplyMail, SendMail};
pub use intake::{IngestReport, MailIntakePorts, MailIntakeService};
pub use mailbox::{MailPage, MailboxPorts, MailboxService, SenderRulesView, ThreadPage};
pub use outbound::{OutboundMailPorts, OutboundMailService};

use crate::long_lived::LongLivedPlace;
use crate::object_storage::ObjectStorage;
use crate::NotProvisioned;

mod intake;
mod mailbox;
mod outbound;
#[cfg(test)]
mod test_support;

/// Every mail use case, as `app::Services` holds them.
pub struct MailServices {
    /// Sending, replying and forwarding through the outbox.
    pub outbound: OutboundMailService,
    /// The agent's inbox, threads, searches, attachments and sender rules.
    pub mailbox: MailboxService,
    /// The mail the provider delivers, by its webhook or raw.
    pub intake: MailIntakeService,
}

/// The only category mail may be sent in.
pub const TRANSACTIONAL: &str = "transactional";

/// How much of each body an inbox page carries; a message read returns them in full.
pub const PREVIEW_CHARS: usize = 4096;

/// How long an idempotency key of a send answers retries, as for wallet sends.
pub const EMAIL_IDEMPOTENCY_KEY_TTL: Duration = crate::IDEMPOTENCY_KEY_TTL;

#[derive(Debug, thiserror::Error)]
pub enum SendMailError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    #[error("category {0:?} is not supported: only transactional mail can be sent")]
    Category(String),
    #[error("{0} is unavailable")]
    Unavailable(&'static str),
    #[error("the sending domain {0} is not verified")]
    DomainNotVerified(String),
    #[error("source message not found")]
    SourceNotFound,
    /// A forward's attachments, the original's stored ones with those given, are more than
    /// one message carries.
    #[error(
        "the original's {carried} stored attachments ({carried_bytes} bytes) and the {given} \
         given ({given_bytes} bytes) are more than one message carries"
    )]
    ForwardTooLarge {
        carried: usize,
        carried_bytes: u64,
        given: usize,
        given_bytes: u64,
    },
    #[error("the source message is not a replyable inbound message")]
    NotReplyable,
    #[error("the sponsor's send rate is exhausted")]
    Throttled,
    #[error("idempotency key already used by message {original} for a different request")]
    IdempotencyMismatch { original: EmailMessageId },
    #[error("a request with this idempotency key is in progress")]
    KeyInFlight,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum ReadMailError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    #[error("Invalid cursor")]
    InvalidCursor,
    #[error("message not found")]
    NotFound,
    /// The agent has as many searches under way on this instance as it may.
    #[error("too many searches of this agent under way")]
    TooManySearches,
    /// The search ran past the time a search may take.
    #[error("the search took too long")]
    SearchTooLong,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum AttachmentError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    /// No such message in the agent's inbox, or no such attachment in it.
    #[error("attachment not found")]
    NotFound,
    /// The attachment is listed but its bytes were not kept (over the size bound, or the
    /// provider delivered metadata only).
    #[error("the attachment's content was not stored")]
    NotStored,
    /// The agent has as many downloads under way on this instance as it may.
    #[error("too many attachment downloads of this agent under way")]
    TooManyDownloads,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A stored attachment to download: what is known of it, and its bytes read a piece at a time.
pub struct AttachmentDownload {
    pub meta: AttachmentMeta,
    message: EmailMessageId,
    content: Arc<dyn AttachmentContent>,
    /// The agent's place among its downloads under way, held until the last piece is read.
    place: Option<LongLivedPlace>,
}

impl AttachmentDownload {
    /// A stored attachment of `message`, read through `content`.
    pub fn new(
        meta: AttachmentMeta,
        message: EmailMessageId,
        content: Arc<dyn AttachmentContent>,
    ) -> Self {
        Self {
            meta,
            message,
            content,
            place: None,
        }
    }

    /// Its bytes whole, for mail that carries them: a forward, a hand-off to the provider.
    pub async fn whole(self) -> Result<Arc<[u8]>, StoreError> {
        let mut bytes = Vec::with_capacity(usize::try_from(self.meta.size).unwrap_or(0));
        let mut pieces = std::pin::pin!(self.pieces());
        while let Some(piece) = pieces.try_next().await? {
            bytes.extend_from_slice(&piece);
        }
        Ok(Arc::from(bytes))
    }

    /// Its bytes, one piece of `domain::ATTACHMENT_PIECE_BYTES` read when the last is taken, so
    /// a slow reader holds one piece and no connection to the store. Bytes that end before the
    /// size kept end the stream with an error, as a store error does.
    pub fn pieces(self) -> impl Stream<Item = Result<Vec<u8>, StoreError>> + Send + 'static {
        let count = piece_count(self.meta.size);
        let attachment = self.meta.id;
        let (content, message, place) = (self.content, self.message, self.place);
        futures_util::stream::try_unfold(0u64, move |index| {
            // The place goes with the stream: held while it is read, freed once it is dropped.
            let _held = &place;
            let content = Arc::clone(&content);
            async move {
                if index == count {
                    return Ok(None);
                }
                match content.piece(message, attachment, index).await? {
                    Some(piece) => Ok(Some((piece, index + 1))),
                    None => Err(StoreError::Internal(format!(
                        "attachment {attachment} of message {message} ends at piece {index} of \
                         {count}"
                    ))),
                }
            }
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The inbound webhook has no secret to check signatures with.
    #[error("the inbound email webhook is not configured")]
    NotConfigured,
    /// The provider's webhook adapter refused the request.
    #[error(transparent)]
    Refused(#[from] ProviderWebhookRefusal),
    #[error(transparent)]
    Unreadable(#[from] InboundParseError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The send rates of mail: every sponsor's, which its agents share, and each agent's share of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendRates {
    pub sponsor: RateLimit,
    pub agent: RateLimit,
}

/// The inbox and sponsor of the authenticated agent, or the error that says it has no inbox. The
/// profile is the one the request authenticated with, kept as fresh as authentication itself
/// (decision 0030), so no use case reads it again.
fn inbox_of(profile: &AgentProfile) -> Result<(&EmailInboxRecord, SponsorId), NotProvisioned> {
    let inbox = profile
        .email_inbox
        .as_ref()
        .ok_or(NotProvisioned::EmailInbox)?;
    Ok((inbox, profile.agent.sponsor_id))
}

/// Puts the bytes of a message's stored attachments in the object store when the operator keeps
/// them there (`objects`), taking them out of `attachments`; else leaves them for the message's
/// transaction to write. Returns whether any were put.
async fn place_bytes(
    objects: Option<&ObjectStorage>,
    message: EmailMessageId,
    attachments: &mut [AttachmentBytes],
) -> Result<bool, StoreError> {
    match objects {
        Some(storage) => storage.place(message, attachments).await,
        None => Ok(false),
    }
}

/// Removes the bytes put for a message that was then not stored.
async fn discard_bytes(objects: Option<&ObjectStorage>, message: EmailMessageId) {
    if let Some(storage) = objects {
        storage.discard(message).await;
    }
}
