//! Email: the provider that delivers outbound mail, what inbound mail parses into, the
//! provider's inbound webhook, and the stores of the outbox and the mailbox.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use domain::{
    AgentId, AttachmentId, AttachmentMeta, CursorPosition, Direction, EmailAddress, EmailInboxId,
    EmailInboxRecord, EmailMessageId, EmailMessageRecord, IdempotencyKey, RateLimit, SearchQuery,
    SenderAuthentication, SenderRules, SponsorId, ThreadRead, ThreadSummary,
};

use crate::{
    Claimed, DeliveryError, KeyedRefusal, LeasedJob, ListingVersion, ProviderWebhookHeaders,
    ProviderWebhookRefusal, ProviderWebhookRequest, StoreError,
};

/// A message as handed to the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboundEmail {
    /// Also the idempotency key at providers that take one: a second hand-off of the same
    /// message is recognised there instead of mailed again.
    pub message_id: EmailMessageId,
    pub from: EmailAddress,
    pub to: Vec<EmailAddress>,
    pub cc: Vec<EmailAddress>,
    pub bcc: Vec<EmailAddress>,
    pub subject: String,
    pub text: String,
    /// Custom headers, already checked against the sensitive list.
    pub headers: Vec<(String, String)>,
    /// The Message-ID header, `<...@domain>`, fixed when the message was accepted.
    pub internet_message_id: String,
    pub in_reply_to: Option<String>,
    pub references: Vec<String>,
    /// Each with its bytes when handed to the provider.
    pub attachments: Vec<AttachmentBytes>,
}

/// The provider took the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The provider's id of the message.
    pub provider_message_id: String,
}

/// Hands outbound mail to an email provider.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait EmailSender: Send + Sync {
    /// The provider's name, stored with what it delivers (`sandbox`, `smtp`, `resend`).
    fn provider(&self) -> &'static str;

    async fn send(&self, email: &OutboundEmail) -> Result<Delivery, DeliveryError>;
}

/// An inbound message as the provider delivered it, parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InboundEmail {
    /// The provider's id of the message, when its payload carries one.
    pub provider_message_id: Option<String>,
    /// The Message-ID header, with its angle brackets.
    pub internet_message_id: Option<String>,
    pub in_reply_to: Option<String>,
    pub references: Vec<String>,
    pub subject: Option<String>,
    /// The sender's address (without a display name).
    pub from: Option<String>,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub reply_to: Vec<String>,
    /// The envelope sender the delivery reports (`Return-Path`), which sender rules match before
    /// `from`.
    pub envelope_from: Option<String>,
    /// Addresses the message was delivered to that the headers may not show (`Delivered-To`,
    /// `X-Original-To`, the provider's envelope recipients): routing looks at these too.
    pub envelope_to: Vec<String>,
    pub text: Option<String>,
    pub html: Option<String>,
    pub attachments: Vec<AttachmentBytes>,
    /// Header names and decoded values in the order they came.
    pub headers: Vec<(String, String)>,
    /// What the receiving side's `Authentication-Results` said of the sender, read by the parser.
    pub sender_authentication: SenderAuthentication,
}

/// An attachment: what is known of it, and its decoded bytes when they are at hand (shared: one
/// inbound mail may be stored in several inboxes). Inbound mail carries the bytes the delivery
/// held; outbound mail claimed from the outbox carries none until they are read for the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentBytes {
    pub meta: AttachmentMeta,
    pub content: Option<Arc<[u8]>>,
}

/// How an inbound webhook's body is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InboundFormat {
    /// A raw RFC 5322 message.
    Raw,
    /// The provider's JSON event.
    ProviderJson,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unreadable inbound message: {0}")]
pub struct InboundParseError(pub String);

/// Reads inbound mail: MIME of any charset and transfer encoding, or the provider's JSON. Takes
/// the body by value: parsing a large message is CPU work the adapter may move off the caller's
/// thread.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait InboundParser: Send + Sync {
    async fn parse(
        &self,
        format: InboundFormat,
        body: Vec<u8>,
    ) -> Result<InboundEmail, InboundParseError>;
}

/// An inbound mail as the provider's webhook delivered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookMail {
    /// The webhook's own id, the same on each redelivery: the key against storing it twice when
    /// the mail carries no provider id.
    pub delivery_id: String,
    pub email: InboundEmail,
}

/// The inbound-mail webhook of the email provider: its signature checked and its body read, per
/// the provider's protocol.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait InboundMailWebhook: Send + Sync {
    /// What can be told from the headers alone, before the body is read: whether they could
    /// carry a valid signature, fresh at `now_unix`.
    fn could_verify(
        &self,
        headers: &ProviderWebhookHeaders,
        now_unix: i64,
    ) -> Result<(), ProviderWebhookRefusal>;

    /// The mail the webhook delivers, once its signature is found to be the provider's at
    /// `now_unix`.
    async fn receive(
        &self,
        request: ProviderWebhookRequest,
        now_unix: i64,
    ) -> Result<WebhookMail, ProviderWebhookRefusal>;
}

/// What an idempotency key of a send is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailIdempotency {
    pub key: IdempotencyKey,
    /// SHA-256 of the request as the agent sent it: another body under the same key is a 409.
    pub fingerprint: [u8; 32],
    /// How long the key answers retries.
    pub ttl: Duration,
}

/// A message an agent sends, ready to be accepted into the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOutboundEmail {
    pub id: EmailMessageId,
    /// The agent key that sends it.
    pub key_id: Option<domain::keys::KeyId>,
    pub agent_id: AgentId,
    pub inbox_id: EmailInboxId,
    pub thread_id: EmailMessageId,
    pub internet_message_id: String,
    pub in_reply_to: Option<String>,
    pub references: Vec<String>,
    pub from: EmailAddress,
    pub to: Vec<EmailAddress>,
    pub cc: Vec<EmailAddress>,
    pub bcc: Vec<EmailAddress>,
    pub subject: String,
    pub text: String,
    pub headers: Vec<(String, String)>,
    /// Each with its bytes, stored with the message; or without, when they were put in the
    /// object store under a record of `AttachmentUploads`, which the message's transaction takes.
    pub attachments: Vec<AttachmentBytes>,
    pub idempotency: Option<EmailIdempotency>,
}

/// The rates a send is taken from: the sponsor's, which its agents share, and the sending agent's
/// own share of it, so that one agent's flood cannot take all of its sponsor's sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendThrottle {
    pub sponsor: SponsorId,
    pub sponsor_limit: RateLimit,
    pub agent_limit: RateLimit,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acceptance {
    Accepted(EmailMessageRecord),
    /// The idempotency key was used before for the same request: the original message.
    Replayed(EmailMessageRecord),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AcceptError {
    /// The key is in flight or was used for another message, or the agent's or its sponsor's
    /// send rate is spent.
    #[error(transparent)]
    Keyed(#[from] KeyedRefusal<EmailMessageId>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Where accepted mail waits for its hand-off to the provider.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait EmailOutbox: Send + Sync {
    /// In one transaction: replays the message of a live idempotency key (or refuses the key),
    /// takes one send from the agent's bucket and one from the sponsor's, and stores the message
    /// `queued`. A throttled or
    /// refused send stores nothing.
    async fn accept(
        &self,
        message: NewOutboundEmail,
        throttle: SendThrottle,
    ) -> Result<Acceptance, AcceptError>;
}

/// The topic published on commit when an outbound message is queued (migration 000032).
pub const QUEUED_MAIL_TOPIC: &str = "mail-queued";

/// A queued message claimed for one hand-off attempt.
pub type ClaimedEmail = Claimed<OutboundEmail>;

/// Outbound mail is a leased queue's job: known by its message id, done when the provider took
/// it.
impl LeasedJob for OutboundEmail {
    type Id = EmailMessageId;
    type Done = Delivery;
    /// Messages share no places: the outbox hands them off one at a time.
    type Owner = std::convert::Infallible;
    const QUEUED_TOPIC: &'static str = QUEUED_MAIL_TOPIC;

    fn id(&self) -> EmailMessageId {
        self.message_id
    }

    fn owner(&self) -> Option<std::convert::Infallible> {
        None
    }
}

/// Reads of an agent's inbox.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait Mailbox: Send + Sync {
    /// Whether mail may be sent from `domain`.
    async fn domain_verified(&self, domain: &str) -> Result<bool, StoreError>;

    /// Messages of the inbox, newest first (created_at, then id, descending), after `after`.
    /// Bodies longer than `preview_chars` are cut to that many characters.
    async fn page(
        &self,
        inbox: EmailInboxId,
        direction: Option<Direction>,
        after: Option<CursorPosition>,
        limit: usize,
        preview_chars: usize,
    ) -> Result<Vec<EmailMessageRecord>, StoreError>;

    /// Where the inbox's messages stand: changes with every message stored, changed or removed.
    async fn listing_version(&self, inbox: EmailInboxId) -> Result<ListingVersion, StoreError>;

    /// A message of the inbox, in full.
    async fn message(
        &self,
        inbox: EmailInboxId,
        id: EmailMessageId,
    ) -> Result<Option<EmailMessageRecord>, StoreError>;

    /// Messages of the inbox matching `query`, best match first, ties newest first, from the
    /// `offset`-th on. Bodies longer than `preview_chars` are cut to that many characters.
    async fn search(
        &self,
        inbox: EmailInboxId,
        query: &SearchQuery,
        direction: Option<Direction>,
        offset: usize,
        limit: usize,
        preview_chars: usize,
    ) -> Result<Vec<EmailMessageRecord>, StoreError>;

    /// Threads of the inbox, the one with the newest message first (its time, then the thread's
    /// id, descending), after `after`.
    async fn threads(
        &self,
        inbox: EmailInboxId,
        after: Option<CursorPosition>,
        limit: usize,
    ) -> Result<Vec<ThreadSummary>, StoreError>;

    /// A thread of the inbox as a page of threads describes it, with its newest `limit`
    /// messages, oldest first, in full; `None` when the inbox has no such thread.
    async fn thread(
        &self,
        inbox: EmailInboxId,
        thread: EmailMessageId,
        limit: usize,
    ) -> Result<Option<ThreadRead>, StoreError>;

    /// What is known of the attachments of a message of the inbox; `None` when the inbox holds
    /// no such message.
    async fn attachments(
        &self,
        inbox: EmailInboxId,
        id: EmailMessageId,
    ) -> Result<Option<Vec<AttachmentMeta>>, StoreError>;
}

/// Where the bytes of kept attachments are read from, a piece of
/// `domain::ATTACHMENT_PIECE_BYTES` at a time (the last may be shorter), so that a download
/// holds one piece whatever the attachment weighs.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AttachmentContent: Send + Sync {
    /// The piece at `index` (from 0) of a stored attachment's bytes; `None` past the last.
    async fn piece(
        &self,
        message: EmailMessageId,
        attachment: AttachmentId,
        index: u64,
    ) -> Result<Option<Vec<u8>>, StoreError>;
}

/// Attachment bytes kept in an object store instead of the database. They are put before the
/// transaction that stores their message, under a record of `AttachmentUploads`, so bytes that no
/// stored message came to own are found and removed; they are read back through
/// `AttachmentContent`.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AttachmentObjects: Send + Sync {
    /// Puts the bytes of one attachment of `message`, replacing any put before.
    async fn put(
        &self,
        message: EmailMessageId,
        attachment: AttachmentId,
        bytes: Arc<[u8]>,
    ) -> Result<(), StoreError>;

    /// Removes the bytes of every attachment of `message`; none is no error.
    async fn remove(&self, message: EmailMessageId) -> Result<(), StoreError>;
}

/// The records of attachment bytes put in an object store ahead of their message: the
/// transaction that stores the message takes its record away, so a record left over names bytes
/// no stored message owns.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AttachmentUploads: Send + Sync {
    /// Records, committed, that bytes of `message` are about to be put.
    async fn record_upload(&self, message: EmailMessageId) -> Result<(), StoreError>;

    /// At most `limit` records left for longer than `older_than` (or whose sweep began that long
    /// ago and never ended), marked swept: no message can take them any more.
    async fn stale_uploads(
        &self,
        older_than: Duration,
        limit: usize,
    ) -> Result<Vec<EmailMessageId>, StoreError>;

    /// Forgets the records of messages whose bytes were removed.
    async fn forget_uploads(&self, messages: &[EmailMessageId]) -> Result<(), StoreError>;
}

/// An inbound message for one inbox, ready to be stored: the bytes of each attachment kept
/// (`stored`) are stored with it, in the same transaction; one kept without its bytes has them in
/// the object store, under a record of `AttachmentUploads` the transaction takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewInboundEmail {
    pub id: EmailMessageId,
    pub agent_id: AgentId,
    pub inbox_id: EmailInboxId,
    /// The key a redelivery is recognised by, within the inbox.
    pub provider_message_id: String,
    pub email: InboundEmail,
    pub verification_codes: Vec<String>,
    /// The service its subject and text name, recognised once here.
    pub service_name: Option<String>,
}

/// Where inbound mail is stored.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait InboundMailStore: Send + Sync {
    /// The inboxes (with their agents) at any of these addresses, compared case-insensitively.
    async fn inboxes_at(
        &self,
        addresses: &[EmailAddress],
    ) -> Result<Vec<(AgentId, EmailInboxRecord)>, StoreError>;

    /// Whether the inbox already holds the message with this provider id: a redelivery, whose
    /// bytes need not be put anywhere again.
    async fn holds_delivery(
        &self,
        inbox: EmailInboxId,
        provider_message_id: &str,
    ) -> Result<bool, StoreError>;

    /// Stores the message `received`, in the thread of the first stored message of the inbox it
    /// answers (by In-Reply-To, then References), else in a thread of its own. A message whose
    /// provider id the inbox already holds is not stored again: returns the stored one and
    /// `false`.
    async fn store_inbound(
        &self,
        message: NewInboundEmail,
    ) -> Result<(EmailMessageRecord, bool), StoreError>;
}

/// Verification codes of inbound mail, for waits for a code.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait EmailCodes: Send + Sync {
    /// Inbound mail of the inbox with codes no wait has returned yet, newest first.
    async fn unseen_codes(
        &self,
        inbox: EmailInboxId,
        limit: usize,
    ) -> Result<Vec<EmailMessageRecord>, StoreError>;

    /// Marks the mail's codes seen for a wait (and binds `request_id` to it), unless another wait
    /// got it first: then `None`.
    async fn take_codes(
        &self,
        id: EmailMessageId,
        agent: AgentId,
        request_id: Option<String>,
    ) -> Result<Option<EmailMessageRecord>, StoreError>;

    /// The mail an earlier wait with this request id returned.
    async fn code_wait_result(
        &self,
        agent: AgentId,
        request_id: &str,
    ) -> Result<Option<EmailMessageRecord>, StoreError>;
}

/// Each agent's sender rules, and the count of inbound mail they kept out of its inbox.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait SenderRuleStore: Send + Sync {
    /// The agent's rules (none when never set) and how much mail they kept out.
    async fn sender_rules(&self, agent: AgentId) -> Result<(SenderRules, u64), StoreError>;

    /// Replaces the agent's rules; returns how much mail they have kept out so far.
    async fn set_sender_rules(
        &self,
        agent: AgentId,
        rules: &SenderRules,
    ) -> Result<u64, StoreError>;

    /// The rules of each of these agents that has any.
    async fn rules_of(&self, agents: &[AgentId])
        -> Result<Vec<(AgentId, SenderRules)>, StoreError>;

    /// Counts one inbound mail kept out of the agent's inbox, once per delivery key (a
    /// provider's redelivery brings the same key again): whether it was counted now.
    async fn count_kept_out(&self, agent: AgentId, delivery_key: &str) -> Result<bool, StoreError>;
}
