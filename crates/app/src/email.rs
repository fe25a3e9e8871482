//! The runtime side of email: sending and replying through the outbox, reading the inbox, and
//! taking in the mail the provider delivers.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use domain::email::MAX_THREAD_MESSAGES;
use domain::inbound::{
    delivery_key, kept_addresses, kept_attachment, kept_headers, kept_message_id, kept_optional,
    kept_references, preview_attachments, preview_headers, MAX_KEPT_ATTACHMENTS,
    MAX_KEPT_BODY_CHARS, MAX_SUBJECT_CHARS,
};
use domain::{
    download_content_type, download_filename, forward_subject, forward_text,
    outbound_attachments_fit, piece_count, reply_references, reply_subject, request_fingerprint,
    AgentId, AgentProfile, AttachmentId, AttachmentMeta, CursorCodec, CursorPosition, Direction,
    EmailAddress, EmailInboxRecord, EmailMessageId, EmailMessageRecord, IdempotencyKey,
    NewAttachment, RateLimit, SearchQuery, SenderRules, SponsorId, ThreadSummary,
    DEFAULT_ATTACHMENT_MAX_BYTES, MAX_ADDRESS_CHARS, MAX_SEARCH_RESULTS,
};
use futures_util::{Stream, TryStreamExt};
use ports::{
    AcceptError, Acceptance, AttachmentBytes, AttachmentContent, EmailIdempotency, EmailOutbox,
    InboundEmail, InboundFormat, InboundMailStore, InboundMailWebhook, InboundParseError,
    InboundParser, KeyedRefusal, ListingVersion, Mailbox, NewInboundEmail, NewOutboundEmail,
    SendThrottle, SenderRuleStore, StoreError, WebhookHeaders, WebhookRefusal, WebhookRequest,
};
use text_mining::extract_verification_codes;
use uuid::Uuid;

pub use domain::commands::{ForwardMail, ReplyMail, SendMail};

use crate::long_lived::{LongLived, LongLivedKind, LongLivedPlace};
use crate::object_storage::ObjectStorage;
use crate::paging::{first_page_against, into_page, Kept};
use crate::NotProvisioned;

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
    Refused(#[from] WebhookRefusal),
    #[error(transparent)]
    Unreadable(#[from] InboundParseError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailPage {
    pub items: Vec<EmailMessageRecord>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadPage {
    pub items: Vec<ThreadSummary>,
    pub next_cursor: Option<String>,
}

/// A thread read: its newest `MAX_THREAD_MESSAGES` messages, oldest first, in full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadView {
    pub thread_id: EmailMessageId,
    pub messages: Vec<EmailMessageRecord>,
    /// Its earlier messages not returned (0 unless it holds more than `MAX_THREAD_MESSAGES`).
    pub earlier_omitted: u64,
}

/// What one inbound delivery came to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IngestReport {
    /// The messages stored, one per inbox the mail was addressed to.
    pub stored: Vec<EmailMessageRecord>,
    /// Inboxes that already held this message (a redelivery).
    pub duplicates: usize,
    /// Inboxes whose sender rules kept the message out: counted there, not stored.
    pub kept_out: usize,
}

/// An agent's sender rules and how much inbound mail they have kept out of its inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderRulesView {
    pub rules: SenderRules,
    pub kept_out_count: u64,
}

/// The ports the email service works through.
pub struct EmailPorts {
    pub mailbox: Arc<dyn Mailbox>,
    pub outbox: Arc<dyn EmailOutbox>,
    pub inbound: Arc<dyn InboundMailStore>,
    /// Reads the mail `agentctl sandbox email` delivers.
    pub parser: Arc<dyn InboundParser>,
    /// `None` when no webhook secret is configured: every webhook is then refused.
    pub webhook: Option<Arc<dyn InboundMailWebhook>>,
    /// Where the bytes of kept attachments are read from.
    pub attachments: Arc<dyn AttachmentContent>,
    /// Each agent's sender rules.
    pub rules: Arc<dyn SenderRuleStore>,
    /// Where attachment bytes are put when they are not kept in the database with their message
    /// (`attachments` then reads them from there too).
    pub objects: Option<ObjectStorage>,
}

/// The send rates of mail: every sponsor's, which its agents share, and each agent's share of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendRates {
    pub sponsor: RateLimit,
    pub agent: RateLimit,
}

pub struct EmailService {
    ports: EmailPorts,
    cursors: CursorCodec,
    rates: SendRates,
    /// Where each agent's downloads under way are counted against their cap.
    long_lived: Arc<LongLived>,
    /// The largest inbound attachment whose bytes are kept.
    attachment_max_bytes: u64,
}

fn inbox_scope(agent: AgentId) -> String {
    format!("email-inbox:{agent}")
}

fn threads_scope(agent: AgentId) -> String {
    format!("email-threads:{agent}")
}

/// A search's cursors are bound to the agent, the query and the direction.
fn search_scope(agent: AgentId, query: &SearchQuery, direction: Option<Direction>) -> String {
    let direction = direction.map_or("any", Direction::as_str);
    format!("email-search:{agent}:{direction}:{}", query.canonical())
}

/// Where a search's next page starts: results are ranked, not keyed, so its cursor holds the
/// count of results already read (in the position's time field, its id nil).
fn search_offset(position: CursorPosition) -> Option<usize> {
    let offset = usize::try_from(position.created_at_micros).ok()?;
    (position.id.is_nil() && offset <= MAX_SEARCH_RESULTS).then_some(offset)
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

impl EmailService {
    pub fn new(
        ports: EmailPorts,
        cursors: CursorCodec,
        rates: SendRates,
        long_lived: Arc<LongLived>,
    ) -> Self {
        Self {
            ports,
            cursors,
            rates,
            long_lived,
            attachment_max_bytes: DEFAULT_ATTACHMENT_MAX_BYTES,
        }
    }

    /// Keeps the bytes of inbound attachments up to `max_bytes` each (a larger one keeps its
    /// metadata, `stored: false`).
    pub fn with_attachment_max_bytes(mut self, max_bytes: u64) -> Self {
        self.attachment_max_bytes = max_bytes;
        self
    }

    /// Accepts a new message into the outbox, `queued`; the outbox job hands it to the provider.
    /// Returns the message and whether it is an earlier one replayed for the same key.
    #[tracing::instrument(level = "debug", skip(self, profile, mail), fields(agent = %profile.agent.id, recipients = mail.to.len() + mail.cc.len() + mail.bcc.len()))]
    pub async fn send(
        &self,
        profile: &AgentProfile,
        mut mail: SendMail,
    ) -> Result<(EmailMessageRecord, bool), SendMailError> {
        if let Some(category) = mail.category.as_deref().filter(|c| *c != TRANSACTIONAL) {
            return Err(SendMailError::Category(category.to_owned()));
        }
        if mail.reply_to_given {
            return Err(SendMailError::Unavailable("reply_to"));
        }
        if mail.html_given {
            return Err(SendMailError::Unavailable("body_html"));
        }
        let (inbox, sponsor) = inbox_of(profile)?;
        self.require_verified_domain(inbox).await?;
        let attachments = outbound_attachments(Vec::new(), std::mem::take(&mut mail.attachments));
        let fingerprint = send_fingerprint(&mail, &attachments);
        let id = EmailMessageId(Uuid::now_v7());
        let message = NewOutboundEmail {
            id,
            agent_id: profile.agent.id,
            inbox_id: inbox.id,
            thread_id: id,
            internet_message_id: internet_message_id(id, &inbox.address),
            in_reply_to: None,
            references: Vec::new(),
            from: inbox.address.clone(),
            to: mail.to,
            cc: mail.cc,
            bcc: mail.bcc,
            subject: mail.subject,
            text: mail.text,
            headers: mail.headers,
            attachments,
            idempotency: keyed(mail.idempotency_key, fingerprint),
        };
        self.accept(message, sponsor).await
    }

    /// Replies to an inbound message of the agent's inbox: to its sender, `Re:` its subject, in
    /// its thread, with `In-Reply-To` and `References` taken from it.
    #[tracing::instrument(level = "debug", skip(self, profile, reply), fields(agent = %profile.agent.id))]
    pub async fn reply(
        &self,
        profile: &AgentProfile,
        source: &str,
        reply: ReplyMail,
    ) -> Result<(EmailMessageRecord, bool), SendMailError> {
        let ReplyMail {
            text,
            attachments,
            idempotency_key,
        } = reply;
        let (inbox, sponsor) = inbox_of(profile)?;
        let original = self.source_message(inbox, source).await?;
        let recipient = original
            .reply_recipient()
            .ok_or(SendMailError::NotReplyable)?;
        self.require_verified_domain(inbox).await?;
        let attachments = outbound_attachments(Vec::new(), attachments);
        let described = described_attachments(&attachments);
        let fingerprint = request_fingerprint(
            ["reply", source, &text]
                .into_iter()
                .chain(described.iter().map(String::as_str)),
        );
        let id = EmailMessageId(Uuid::now_v7());
        let message = NewOutboundEmail {
            id,
            agent_id: profile.agent.id,
            inbox_id: inbox.id,
            thread_id: original.thread_id,
            internet_message_id: internet_message_id(id, &inbox.address),
            in_reply_to: original.internet_message_id.clone(),
            references: reply_references(
                &original.references,
                original.in_reply_to.as_deref(),
                original.internet_message_id.as_deref(),
            ),
            from: inbox.address.clone(),
            to: vec![recipient],
            cc: Vec::new(),
            bcc: Vec::new(),
            subject: reply_subject(original.subject.as_deref()),
            text,
            headers: Vec::new(),
            attachments,
            idempotency: keyed(idempotency_key, fingerprint),
        };
        self.accept(message, sponsor).await
    }

    /// Forwards a message of the agent's inbox (either direction) to new recipients: `Fwd:` its
    /// subject, the agent's text above it quoted, its stored attachments then the agent's attached,
    /// in a thread of its own. Same outbox, throttle and idempotency as a send.
    #[tracing::instrument(level = "debug", skip(self, profile, forward), fields(agent = %profile.agent.id, recipients = forward.to.len() + forward.cc.len() + forward.bcc.len()))]
    pub async fn forward(
        &self,
        profile: &AgentProfile,
        source: &str,
        forward: ForwardMail,
    ) -> Result<(EmailMessageRecord, bool), SendMailError> {
        let (inbox, sponsor) = inbox_of(profile)?;
        let original = self.source_message(inbox, source).await?;
        self.require_verified_domain(inbox).await?;
        // Judged on the stored sizes before a byte is read: the original may hold far more
        // than one message carries.
        let carried: Vec<&AttachmentMeta> = original
            .attachments
            .iter()
            .filter(|meta| meta.stored)
            .collect();
        let carried_bytes: u64 = carried.iter().map(|meta| meta.size).sum();
        let given_bytes: u64 = forward
            .attachments
            .iter()
            .map(|attachment| attachment.content().len() as u64)
            .sum();
        if !outbound_attachments_fit(
            carried.len() + forward.attachments.len(),
            carried_bytes.saturating_add(given_bytes),
        ) {
            return Err(SendMailError::ForwardTooLarge {
                carried: carried.len(),
                carried_bytes,
                given: forward.attachments.len(),
                given_bytes,
            });
        }
        let mut forwarded = Vec::new();
        for meta in carried {
            let download = AttachmentDownload::new(
                meta.clone(),
                original.id,
                Arc::clone(&self.ports.attachments),
            );
            forwarded.push((meta, download.whole().await?));
        }
        let attachments = outbound_attachments(forwarded, forward.attachments);
        let mut fields = vec![
            "forward".to_owned(),
            source.to_owned(),
            forward.text.clone(),
        ];
        for (label, list) in [
            ("to", &forward.to),
            ("cc", &forward.cc),
            ("bcc", &forward.bcc),
        ] {
            fields.push(label.to_owned());
            fields.extend(list.iter().map(|address| address.as_str().to_owned()));
        }
        fields.extend(described_attachments(&attachments));
        let fingerprint = request_fingerprint(fields.iter().map(String::as_str));
        let id = EmailMessageId(Uuid::now_v7());
        let message = NewOutboundEmail {
            id,
            agent_id: profile.agent.id,
            inbox_id: inbox.id,
            thread_id: id,
            internet_message_id: internet_message_id(id, &inbox.address),
            in_reply_to: None,
            references: Vec::new(),
            from: inbox.address.clone(),
            to: forward.to,
            cc: forward.cc,
            bcc: forward.bcc,
            subject: forward_subject(original.subject.as_deref()),
            text: forward_text(&forward.text, &original),
            headers: Vec::new(),
            attachments,
            idempotency: keyed(forward.idempotency_key, fingerprint),
        };
        self.accept(message, sponsor).await
    }

    /// The message of the inbox a reply or forward is made from; any id that is not one is the
    /// same "not found".
    async fn source_message(
        &self,
        inbox: &EmailInboxRecord,
        source: &str,
    ) -> Result<EmailMessageRecord, SendMailError> {
        let id = source
            .parse::<EmailMessageId>()
            .map_err(|_| SendMailError::SourceNotFound)?;
        self.ports
            .mailbox
            .message(inbox.id, id)
            .await?
            .ok_or(SendMailError::SourceNotFound)
    }

    async fn require_verified_domain(&self, inbox: &EmailInboxRecord) -> Result<(), SendMailError> {
        let domain = inbox.address.domain();
        match self.ports.mailbox.domain_verified(domain).await? {
            true => Ok(()),
            false => Err(SendMailError::DomainNotVerified(domain.to_owned())),
        }
    }

    async fn accept(
        &self,
        mut message: NewOutboundEmail,
        sponsor: SponsorId,
    ) -> Result<(EmailMessageRecord, bool), SendMailError> {
        let throttle = SendThrottle {
            sponsor,
            sponsor_limit: self.rates.sponsor,
            agent_limit: self.rates.agent,
        };
        let id = message.id;
        let placed = self.place_bytes(id, &mut message.attachments).await?;
        let accepted = self.ports.outbox.accept(message, throttle).await;
        if placed && !matches!(accepted, Ok(Acceptance::Accepted(_))) {
            self.discard_bytes(id).await;
        }
        match accepted {
            Ok(Acceptance::Accepted(message)) => Ok((message, false)),
            Ok(Acceptance::Replayed(message)) => Ok((message, true)),
            Err(AcceptError::Keyed(KeyedRefusal::RateLimited { .. })) => {
                Err(SendMailError::Throttled)
            }
            Err(AcceptError::Keyed(KeyedRefusal::IdempotencyMismatch { original })) => {
                Err(SendMailError::IdempotencyMismatch { original })
            }
            Err(AcceptError::Keyed(KeyedRefusal::KeyInFlight)) => Err(SendMailError::KeyInFlight),
            Err(AcceptError::Store(store)) => Err(store.into()),
        }
    }

    /// Puts the bytes of a message's stored attachments in the object store when the operator
    /// keeps them there, taking them out of `attachments`; else leaves them for the message's
    /// transaction to write. Returns whether any were put.
    async fn place_bytes(
        &self,
        message: EmailMessageId,
        attachments: &mut [AttachmentBytes],
    ) -> Result<bool, StoreError> {
        match &self.ports.objects {
            Some(storage) => storage.place(message, attachments).await,
            None => Ok(false),
        }
    }

    /// Removes the bytes put for a message that was then not stored.
    async fn discard_bytes(&self, message: EmailMessageId) {
        if let Some(storage) = &self.ports.objects {
            storage.discard(message).await;
        }
    }

    /// One page of the agent's inbox, newest first; bodies cut to `PREVIEW_CHARS`, headers and
    /// attachments to the first few (`domain::inbound::PREVIEW_*`).
    #[tracing::instrument(level = "debug", skip(self, profile, cursor), fields(agent = %profile.agent.id))]
    pub async fn inbox(
        &self,
        profile: &AgentProfile,
        direction: Option<Direction>,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<MailPage, ReadMailError> {
        let scope = inbox_scope(profile.agent.id);
        let after = self
            .cursors
            .decode_optional(&scope, cursor)
            .map_err(|_| ReadMailError::InvalidCursor)?;
        let (inbox, _) = inbox_of(profile)?;
        let fetched = self
            .ports
            .mailbox
            .page(inbox.id, direction, after, limit + 1, PREVIEW_CHARS)
            .await?;
        let (items, next_cursor) = into_page(fetched, limit, &self.cursors, &scope, |last| {
            CursorPosition::of(last.created_at, last.id.0)
        });
        let items = items.into_iter().map(previewed).collect();
        Ok(MailPage { items, next_cursor })
    }

    /// The first page of the inbox, unless it is still the page at `held`, a version an earlier
    /// answer of this call gave, with what the caller keeps of its page (see `Kept`).
    #[tracing::instrument(level = "debug", skip(self, profile, held), fields(agent = %profile.agent.id))]
    pub async fn inbox_first_page<H>(
        &self,
        profile: &AgentProfile,
        direction: Option<Direction>,
        limit: usize,
        held: Option<(ListingVersion, H)>,
    ) -> Result<Kept<MailPage, H>, ReadMailError> {
        let (inbox, _) = inbox_of(profile)?;
        first_page_against(
            held,
            || async { Ok(self.ports.mailbox.listing_version(inbox.id).await?) },
            || self.inbox(profile, direction, None, limit),
        )
        .await
    }

    /// A message of the agent's inbox in full. Any id that is not one (malformed, unknown, of
    /// another inbox) is the same "not found", so nothing tells another agent's ids exist.
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn message(
        &self,
        profile: &AgentProfile,
        id: &str,
    ) -> Result<EmailMessageRecord, ReadMailError> {
        let (inbox, _) = inbox_of(profile)?;
        let id = id
            .parse::<EmailMessageId>()
            .map_err(|_| ReadMailError::NotFound)?;
        self.ports
            .mailbox
            .message(inbox.id, id)
            .await?
            .ok_or(ReadMailError::NotFound)
    }

    /// One page of the messages matching `query`, best match first, ties newest first; bodies
    /// cut as an inbox page cuts them. A cursor is bound to its query: the same query, however
    /// written, reads on; another is refused as an invalid cursor. Pages reach the
    /// `MAX_SEARCH_RESULTS`-th result at most. Past `MAX_RANKED_MATCHES` matches, they come newest
    /// first. Each search holds one of the agent's places for searches while it runs.
    #[tracing::instrument(level = "debug", skip(self, profile, query, cursor), fields(agent = %profile.agent.id))]
    pub async fn search(
        &self,
        profile: &AgentProfile,
        query: &SearchQuery,
        direction: Option<Direction>,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<MailPage, ReadMailError> {
        let scope = search_scope(profile.agent.id, query, direction);
        let offset = match cursor {
            None => 0,
            Some(cursor) => search_offset(
                self.cursors
                    .decode(&scope, cursor)
                    .map_err(|_| ReadMailError::InvalidCursor)?,
            )
            .ok_or(ReadMailError::InvalidCursor)?,
        };
        let (inbox, _) = inbox_of(profile)?;
        let _place = self
            .long_lived
            .enter(profile.agent.id, LongLivedKind::Search)
            .ok_or(ReadMailError::TooManySearches)?;
        let mut items = self
            .ports
            .mailbox
            .search(inbox.id, query, direction, offset, limit + 1, PREVIEW_CHARS)
            .await
            .map_err(|error| match error {
                StoreError::TimedOut(_) => ReadMailError::SearchTooLong,
                other => ReadMailError::Store(other),
            })?;
        let reached = offset + limit;
        let next_cursor = (items.len() > limit && reached < MAX_SEARCH_RESULTS).then(|| {
            self.cursors.encode(
                &scope,
                CursorPosition {
                    created_at_micros: i64::try_from(reached).unwrap_or(i64::MAX),
                    id: Uuid::nil(),
                },
            )
        });
        items.truncate(limit);
        let items = items.into_iter().map(previewed).collect();
        Ok(MailPage { items, next_cursor })
    }

    /// One page of the inbox's threads, the one with the newest message first.
    #[tracing::instrument(level = "debug", skip(self, profile, cursor), fields(agent = %profile.agent.id))]
    pub async fn threads(
        &self,
        profile: &AgentProfile,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<ThreadPage, ReadMailError> {
        let scope = threads_scope(profile.agent.id);
        let after = self
            .cursors
            .decode_optional(&scope, cursor)
            .map_err(|_| ReadMailError::InvalidCursor)?;
        let (inbox, _) = inbox_of(profile)?;
        let fetched = self
            .ports
            .mailbox
            .threads(inbox.id, after, limit + 1)
            .await?;
        let (items, next_cursor) = into_page(fetched, limit, &self.cursors, &scope, |last| {
            CursorPosition::of(last.last_message_at, last.thread_id.0)
        });
        // A preview is read as a line: the text's trailing line breaks say nothing.
        let items = items
            .into_iter()
            .map(|mut thread| {
                thread.last_message_preview = thread
                    .last_message_preview
                    .map(|preview| preview.trim_end().to_owned());
                thread
            })
            .collect();
        Ok(ThreadPage { items, next_cursor })
    }

    /// A thread of the agent's inbox: its newest `MAX_THREAD_MESSAGES` messages, oldest first,
    /// in full. Any id that is not one of the inbox's threads is the same "not found".
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn thread(
        &self,
        profile: &AgentProfile,
        thread_id: &str,
    ) -> Result<ThreadView, ReadMailError> {
        let (inbox, _) = inbox_of(profile)?;
        let thread_id = thread_id
            .parse::<EmailMessageId>()
            .map_err(|_| ReadMailError::NotFound)?;
        let (messages, count) = self
            .ports
            .mailbox
            .thread(inbox.id, thread_id, MAX_THREAD_MESSAGES)
            .await?
            .ok_or(ReadMailError::NotFound)?;
        Ok(ThreadView {
            thread_id,
            earlier_omitted: count.saturating_sub(messages.len() as u64),
            messages,
        })
    }

    /// A stored attachment of a message of the agent's inbox, to download. Any message id that
    /// is not one of the inbox, and any attachment id it does not list, is the same "not found".
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn attachment(
        &self,
        profile: &AgentProfile,
        message_id: &str,
        attachment_id: &str,
    ) -> Result<AttachmentDownload, AttachmentError> {
        let (inbox, _) = inbox_of(profile)?;
        let message = message_id
            .parse::<EmailMessageId>()
            .map_err(|_| AttachmentError::NotFound)?;
        let wanted = attachment_id
            .parse::<AttachmentId>()
            .map_err(|_| AttachmentError::NotFound)?;
        let meta = self
            .ports
            .mailbox
            .attachments(inbox.id, message)
            .await?
            .and_then(|listed| listed.into_iter().find(|meta| meta.id == wanted))
            .ok_or(AttachmentError::NotFound)?;
        if !meta.stored {
            return Err(AttachmentError::NotStored);
        }
        let place = self
            .long_lived
            .enter(profile.agent.id, LongLivedKind::AttachmentDownload)
            .ok_or(AttachmentError::TooManyDownloads)?;
        Ok(AttachmentDownload {
            meta,
            message,
            content: Arc::clone(&self.ports.attachments),
            place: Some(place),
        })
    }

    /// The agent's sender rules, and how much mail they have kept out.
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn sender_rules(
        &self,
        profile: &AgentProfile,
    ) -> Result<SenderRulesView, ReadMailError> {
        inbox_of(profile)?;
        let (rules, kept_out_count) = self.ports.rules.sender_rules(profile.agent.id).await?;
        Ok(SenderRulesView {
            rules,
            kept_out_count,
        })
    }

    /// Replaces the agent's sender rules; mail already stored stays.
    #[tracing::instrument(level = "debug", skip(self, profile, rules), fields(agent = %profile.agent.id))]
    pub async fn set_sender_rules(
        &self,
        profile: &AgentProfile,
        rules: SenderRules,
    ) -> Result<SenderRulesView, ReadMailError> {
        inbox_of(profile)?;
        let kept_out_count = self
            .ports
            .rules
            .set_sender_rules(profile.agent.id, &rules)
            .await?;
        Ok(SenderRulesView {
            rules,
            kept_out_count,
        })
    }

    /// What can be judged of an inbound webhook before its body is read: the webhook is
    /// configured, and its headers could carry a valid signature. Refusing here keeps a sender
    /// without the secret from making the server read and hold a body.
    pub fn check_webhook(&self, headers: &WebhookHeaders) -> Result<(), IngestError> {
        let webhook = self
            .ports
            .webhook
            .as_ref()
            .ok_or(IngestError::NotConfigured)?;
        webhook.could_verify(headers, unix_now())?;
        Ok(())
    }

    /// Takes in a webhook from the provider: its adapter checks the signature and reads the
    /// mail, stored here in the inboxes it was delivered to.
    #[tracing::instrument(level = "debug", skip_all, fields(bytes = request.body.len(), delivery_id))]
    pub async fn receive_webhook(
        &self,
        request: WebhookRequest,
    ) -> Result<IngestReport, IngestError> {
        let webhook = self
            .ports
            .webhook
            .as_ref()
            .ok_or(IngestError::NotConfigured)?;
        let mail = webhook.receive(request, unix_now()).await?;
        tracing::Span::current().record("delivery_id", mail.delivery_id.as_str());
        Ok(self.ingest(mail.email, &mail.delivery_id).await?)
    }

    /// Takes in a raw RFC 5322 message delivered without a webhook (the sandbox provider's
    /// inbound mail), through the same parsing and storing as a webhook.
    pub async fn receive_raw(
        &self,
        raw: Vec<u8>,
        delivery_id: &str,
    ) -> Result<IngestReport, IngestError> {
        let email = self.ports.parser.parse(InboundFormat::Raw, raw).await?;
        Ok(self.ingest(email, delivery_id).await?)
    }

    /// Stores `email`, bounded (`kept`), once in each inbox it was delivered to: those of the
    /// envelope the provider reports, else of its To and Cc. Its key against redelivery is the
    /// provider's id of the message, else the delivery's own id: never its Message-ID, which the
    /// sender writes (an earlier mail could take a later one's).
    async fn ingest(
        &self,
        email: InboundEmail,
        delivery_id: &str,
    ) -> Result<IngestReport, StoreError> {
        let email = kept(email, self.attachment_max_bytes);
        let addressed: Vec<&String> = match email.envelope_to.is_empty() {
            true => email.to.iter().chain(&email.cc).collect(),
            false => email.envelope_to.iter().collect(),
        };
        let mut recipients: Vec<EmailAddress> = Vec::new();
        for candidate in addressed {
            if let Ok(address) = EmailAddress::parse(candidate.trim()) {
                if !recipients
                    .iter()
                    .any(|known| known.as_str().eq_ignore_ascii_case(address.as_str()))
                {
                    recipients.push(address);
                }
            }
        }
        let inboxes = self.ports.inbound.inboxes_at(&recipients).await?;
        if inboxes.is_empty() {
            tracing::info!(
                recipients = recipients.len(),
                "inbound mail for no inbox of this service; dropped"
            );
            return Ok(IngestReport::default());
        }
        let provider_message_id =
            delivery_key(email.provider_message_id.as_deref().unwrap_or(delivery_id));
        let searched = format!(
            "{}\n{}",
            email.subject.as_deref().unwrap_or_default(),
            email.text.as_deref().unwrap_or_default()
        );
        let verification_codes = extract_verification_codes(&searched);
        let agents: Vec<AgentId> = inboxes.iter().map(|(agent, _)| *agent).collect();
        let rules = self.ports.rules.rules_of(&agents).await?;
        let (envelope, from) = (email.envelope_from.as_deref(), email.from.as_deref());
        let mut report = IngestReport::default();
        for (agent, inbox) in inboxes {
            let kept_out = rules
                .iter()
                .any(|(ruled, rules)| *ruled == agent && !rules.admits(envelope, from));
            if kept_out {
                match self
                    .ports
                    .rules
                    .count_kept_out(agent, &provider_message_id)
                    .await?
                {
                    true => report.kept_out += 1,
                    false => report.duplicates += 1,
                }
                continue;
            }
            let mut message = NewInboundEmail {
                id: EmailMessageId(Uuid::now_v7()),
                agent_id: agent,
                inbox_id: inbox.id,
                provider_message_id: provider_message_id.clone(),
                email: email.clone(),
                verification_codes: verification_codes.clone(),
            };
            let id = message.id;
            // A redelivery's bytes are not put in the object store only to be removed again.
            if self.ports.objects.is_some()
                && self
                    .ports
                    .inbound
                    .holds_delivery(inbox.id, &message.provider_message_id)
                    .await?
            {
                report.duplicates += 1;
                continue;
            }
            let placed = self.place_bytes(id, &mut message.email.attachments).await?;
            let stored = self.ports.inbound.store_inbound(message).await;
            if placed && !matches!(stored, Ok((_, true))) {
                self.discard_bytes(id).await;
            }
            match stored? {
                (stored, true) => report.stored.push(stored),
                (_, false) => report.duplicates += 1,
            }
        }
        Ok(report)
    }
}

/// A message as an inbox page shows it: bodies cut by the store, the first headers and
/// attachments here; a message read shows everything kept.
fn previewed(mut message: EmailMessageRecord) -> EmailMessageRecord {
    message.headers = preview_headers(std::mem::take(&mut message.headers));
    message.attachments = preview_attachments(std::mem::take(&mut message.attachments));
    message
}

/// Seconds since the Unix epoch, for webhook timestamps.
fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
        })
}

/// What is kept of a message an outside sender wrote: no NUL anywhere, and every size and count
/// bounded (domain::inbound), so storing it cannot fail and no page of its inbox grows with it;
/// the bytes of each attachment listed up to `attachment_max_bytes`.
fn kept(email: InboundEmail, attachment_max_bytes: u64) -> InboundEmail {
    InboundEmail {
        provider_message_id: email.provider_message_id,
        internet_message_id: email
            .internet_message_id
            .as_deref()
            .and_then(kept_message_id),
        in_reply_to: email.in_reply_to.as_deref().and_then(kept_message_id),
        references: kept_references(&email.references),
        subject: kept_optional(email.subject.as_deref(), MAX_SUBJECT_CHARS),
        from: kept_optional(email.from.as_deref(), MAX_ADDRESS_CHARS),
        to: kept_addresses(&email.to),
        cc: kept_addresses(&email.cc),
        reply_to: kept_addresses(&email.reply_to),
        envelope_to: kept_addresses(&email.envelope_to),
        envelope_from: kept_optional(email.envelope_from.as_deref(), MAX_ADDRESS_CHARS),
        text: kept_optional(email.text.as_deref(), MAX_KEPT_BODY_CHARS),
        html: kept_optional(email.html.as_deref(), MAX_KEPT_BODY_CHARS),
        attachments: email
            .attachments
            .into_iter()
            .take(MAX_KEPT_ATTACHMENTS)
            .enumerate()
            .map(|(index, attachment)| {
                let meta = kept_attachment(
                    index,
                    &attachment.meta,
                    attachment.content.as_deref(),
                    attachment_max_bytes,
                );
                let content = attachment.content.filter(|_| meta.stored);
                AttachmentBytes { meta, content }
            })
            .collect(),
        headers: kept_headers(&email.headers),
    }
}

/// The Message-ID of a message the service sends: its own id at the inbox's domain.
fn internet_message_id(id: EmailMessageId, from: &EmailAddress) -> String {
    format!("<{}@{}>", id.0, from.domain())
}

/// What an idempotency key of a send is bound to: every field the agent gave.
/// What an idempotency key of a send, reply or forward is bound to, when one was given.
fn keyed(key: Option<IdempotencyKey>, fingerprint: [u8; 32]) -> Option<EmailIdempotency> {
    key.map(|key| EmailIdempotency {
        key,
        fingerprint,
        ttl: EMAIL_IDEMPOTENCY_KEY_TTL,
    })
}

fn send_fingerprint(mail: &SendMail, attachments: &[AttachmentBytes]) -> [u8; 32] {
    let mut fields: Vec<&str> = vec!["send", &mail.subject, &mail.text];
    for (label, list) in [("to", &mail.to), ("cc", &mail.cc), ("bcc", &mail.bcc)] {
        fields.push(label);
        fields.extend(list.iter().map(EmailAddress::as_str));
    }
    fields.push("headers");
    for (name, value) in &mail.headers {
        fields.push(name);
        fields.push(value);
    }
    fields.push(mail.category.as_deref().unwrap_or(TRANSACTIONAL));
    let described = described_attachments(attachments);
    fields.extend(described.iter().map(String::as_str));
    request_fingerprint(fields)
}

/// The attachments of an outbound message, each with its bytes: `forwarded` ones (of another
/// message) first, then those the agent gave, numbered anew.
fn outbound_attachments(
    forwarded: Vec<(&AttachmentMeta, Arc<[u8]>)>,
    given: Vec<NewAttachment>,
) -> Vec<AttachmentBytes> {
    let mut attachments: Vec<AttachmentBytes> = forwarded
        .into_iter()
        .enumerate()
        .map(|(index, (meta, content))| AttachmentBytes {
            // An outside sender's name and type go on as a download would give them: one path
            // segment without controls or reordering marks, a valid media type.
            meta: AttachmentMeta {
                id: AttachmentId::at_index(index),
                filename: Some(download_filename(meta.filename.as_deref())),
                content_type: download_content_type(&meta.content_type).to_owned(),
                content_id: None,
                ..meta.clone()
            },
            content: Some(content),
        })
        .collect();
    for attachment in given {
        let meta = attachment.meta(attachments.len());
        attachments.push(AttachmentBytes {
            meta,
            content: Some(Arc::clone(attachment.content())),
        });
    }
    attachments
}

/// What an idempotency key binds of attachments: each one's name, type and digest.
fn described_attachments(attachments: &[AttachmentBytes]) -> Vec<String> {
    let mut fields = vec!["attachments".to_owned()];
    for AttachmentBytes { meta, .. } in attachments {
        fields.push(meta.filename.clone().unwrap_or_default());
        fields.push(meta.content_type.clone());
        fields.push(meta.etag().unwrap_or_default());
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LongLivedCaps;
    use domain::{AgentRecord, AttachmentMeta, EmailInboxId};
    use ports::{
        Listing, MockAttachmentContent, MockEmailOutbox, MockInboundMailStore,
        MockInboundMailWebhook, MockInboundParser, MockMailbox, MockSenderRuleStore, WebhookMail,
    };
    use std::sync::atomic::{AtomicUsize, Ordering};
    use time::OffsetDateTime;

    const RATE: RateLimit = RateLimit {
        per_minute: 60,
        burst: 10,
    };
    const AGENT_RATE: RateLimit = RateLimit {
        per_minute: 30,
        burst: 5,
    };

    fn reply_of(text: &str) -> ReplyMail {
        ReplyMail {
            text: text.into(),
            attachments: Vec::new(),
            idempotency_key: None,
        }
    }

    fn address(text: &str) -> EmailAddress {
        EmailAddress::parse(text).expect("valid address")
    }

    fn inbox() -> EmailInboxRecord {
        EmailInboxRecord {
            id: EmailInboxId(Uuid::from_u128(1)),
            address: address("agent@inbox.example.com"),
            provider: "sandbox".into(),
            created_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn profile(with_inbox: bool) -> AgentProfile {
        AgentProfile {
            agent: AgentRecord::fixture(),
            phone_number: None,
            email_inbox: with_inbox.then(inbox),
            wallet: None,
        }
    }

    fn record(direction: Direction, from: Option<&str>) -> EmailMessageRecord {
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

    /// A rule store where no agent has rules.
    fn no_rules() -> MockSenderRuleStore {
        let mut rules = MockSenderRuleStore::new();
        rules.expect_rules_of().returning(|_| Ok(Vec::new()));
        rules
    }

    struct Mocks {
        mailbox: MockMailbox,
        outbox: MockEmailOutbox,
        inbound: MockInboundMailStore,
        parser: MockInboundParser,
        webhook: Option<MockInboundMailWebhook>,
        attachments: MockAttachmentContent,
        rules: MockSenderRuleStore,
        objects: Option<ObjectStorage>,
    }

    impl Mocks {
        fn new() -> Self {
            Self {
                mailbox: MockMailbox::new(),
                outbox: MockEmailOutbox::new(),
                inbound: MockInboundMailStore::new(),
                parser: MockInboundParser::new(),
                webhook: None,
                attachments: MockAttachmentContent::new(),
                rules: no_rules(),
                objects: None,
            }
        }

        fn with_inbox(mut self, verified: bool) -> Self {
            self.mailbox
                .expect_domain_verified()
                .returning(move |_| Ok(verified));
            self
        }

        fn service(self) -> EmailService {
            let webhook = self
                .webhook
                .map(|webhook| Arc::new(webhook) as Arc<dyn InboundMailWebhook>);
            EmailService::new(
                EmailPorts {
                    mailbox: Arc::new(self.mailbox),
                    outbox: Arc::new(self.outbox),
                    inbound: Arc::new(self.inbound),
                    parser: Arc::new(self.parser),
                    webhook,
                    attachments: Arc::new(self.attachments),
                    rules: Arc::new(self.rules),
                    objects: self.objects,
                },
                CursorCodec::new(b"test-secret-test-secret-test-secret"),
                SendRates {
                    sponsor: RATE,
                    agent: AGENT_RATE,
                },
                LongLived::new(LongLivedCaps {
                    code_waits: 1,
                    event_streams: 1,
                    decision_waits: 1,
                    attachment_downloads: 1,
                    searches: 1,
                    request_body_bytes: 1 << 20,
                    live_lists: 1,
                }),
            )
        }
    }

    fn mail() -> SendMail {
        SendMail {
            to: vec![address("bob@example.com")],
            cc: Vec::new(),
            bcc: Vec::new(),
            subject: "Hello".into(),
            text: "Hi".into(),
            headers: Vec::new(),
            category: None,
            attachments: Vec::new(),
            reply_to_given: false,
            html_given: false,
            idempotency_key: None,
        }
    }

    fn new_attachment(name: &str, bytes: &[u8]) -> NewAttachment {
        NewAttachment::new(name.into(), Some("text/plain".into()), Arc::from(bytes)).expect("valid")
    }

    /// The fingerprint of the idempotency key the outbox is given for `mail`.
    async fn fingerprint_of(mail: SendMail) -> [u8; 32] {
        let mut mocks = Mocks::new().with_inbox(true);
        let seen = Arc::new(std::sync::Mutex::new(None));
        let into = Arc::clone(&seen);
        mocks.outbox.expect_accept().returning(move |message, _| {
            *into.lock().expect("lock") = message.idempotency.map(|i| i.fingerprint);
            Ok(Acceptance::Accepted(record(Direction::Outbound, None)))
        });
        mocks
            .service()
            .send(&profile(true), mail)
            .await
            .expect("sent");
        let fingerprint = seen.lock().expect("lock").take();
        fingerprint.expect("a key")
    }

    #[tokio::test]
    async fn attachments_are_accepted_with_the_send_and_bound_to_its_key() {
        let mut mocks = Mocks::new().with_inbox(true);
        mocks
            .outbox
            .expect_accept()
            .withf(|message, _| {
                let [first, second] = &message.attachments[..] else {
                    return false;
                };
                first.meta.id.to_string() == "att_1"
                    && second.meta.id.to_string() == "att_2"
                    && first.meta.filename.as_deref() == Some("a.txt")
                    && first.meta.stored
                    && first.meta.sha256 == Some(domain::content_digest(b"alpha"))
                    && second.content.as_deref() == Some(&b"beta"[..])
            })
            .times(1)
            .returning(|_, _| Ok(Acceptance::Accepted(record(Direction::Outbound, None))));
        let with_two = SendMail {
            attachments: vec![
                new_attachment("a.txt", b"alpha"),
                new_attachment("b.txt", b"beta"),
            ],
            ..mail()
        };
        mocks
            .service()
            .send(&profile(true), with_two)
            .await
            .expect("sent");

        let keyed_send = |bytes: &[u8]| SendMail {
            attachments: vec![new_attachment("a.txt", bytes)],
            idempotency_key: Some(domain::IdempotencyKey::parse("k").expect("key")),
            ..mail()
        };
        assert_ne!(
            fingerprint_of(keyed_send(b"alpha")).await,
            fingerprint_of(keyed_send(b"alphb")).await,
            "other bytes under the same key are another request"
        );
        assert_eq!(
            fingerprint_of(keyed_send(b"alpha")).await,
            fingerprint_of(keyed_send(b"alpha")).await
        );
    }

    /// An object store that takes every put and removal, counting them.
    fn counted_object_storage(
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

    #[tokio::test]
    async fn with_an_object_store_the_bytes_go_there_and_a_replay_removes_its_own() {
        let (puts, discards) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let mut mocks = Mocks::new().with_inbox(true);
        mocks.objects = Some(counted_object_storage(&puts, &discards));
        let mut outcomes = vec![
            Acceptance::Replayed(record(Direction::Outbound, None)),
            Acceptance::Accepted(record(Direction::Outbound, None)),
        ];
        mocks
            .outbox
            .expect_accept()
            .withf(|message, _| {
                message.attachments.len() == 2
                    && message
                        .attachments
                        .iter()
                        .all(|a| a.meta.stored && a.content.is_none())
            })
            .times(2)
            .returning(move |_, _| Ok(outcomes.pop().expect("an outcome")));
        let service = mocks.service();
        let with_two = || SendMail {
            attachments: vec![
                new_attachment("a.txt", b"alpha"),
                new_attachment("b.txt", b"beta"),
            ],
            ..mail()
        };
        let (_, replayed) = service
            .send(&profile(true), with_two())
            .await
            .expect("sent");
        assert!(!replayed);
        assert_eq!(
            (puts.load(Ordering::SeqCst), discards.load(Ordering::SeqCst)),
            (2, 0)
        );
        let (_, replayed) = service
            .send(&profile(true), with_two())
            .await
            .expect("replayed");
        assert!(replayed);
        assert_eq!(
            (puts.load(Ordering::SeqCst), discards.load(Ordering::SeqCst)),
            (4, 1),
            "the replay's own bytes are removed: the original keeps its own"
        );
    }

    #[tokio::test]
    async fn a_forward_carries_the_original_quoted_and_its_stored_attachments_then_the_agents() {
        let mut mocks = Mocks::new().with_inbox(true);
        let invoice = AttachmentMeta {
            id: AttachmentId::at_index(1),
            filename: Some("invoice.pdf".into()),
            content_type: "application/pdf".into(),
            size: 5,
            content_id: Some("<cid-1>".into()),
            stored: true,
            sha256: Some(domain::content_digest(b"%PDF-")),
        };
        let invoice = AttachmentMeta {
            filename: Some("../../invoice\u{202e}fdp.pdf".into()),
            content_type: "application/pdf; garbage".into(),
            ..invoice
        };
        let too_big = AttachmentMeta {
            id: AttachmentId::at_index(0),
            stored: false,
            sha256: None,
            ..invoice.clone()
        };
        let listed = vec![too_big, invoice.clone()];
        mocks.mailbox.expect_message().returning(move |_, _| {
            Ok(Some(EmailMessageRecord {
                attachments: listed.clone(),
                ..record(Direction::Inbound, Some("alice@example.org"))
            }))
        });
        mocks
            .attachments
            .expect_piece()
            .withf(|message, attachment, index| {
                *message == EmailMessageId(Uuid::from_u128(5))
                    && attachment.to_string() == "att_2"
                    && *index == 0
            })
            .times(1)
            .returning(|_, _, _| Ok(Some(b"%PDF-".to_vec())));
        mocks
            .outbox
            .expect_accept()
            .withf(move |message, _| {
                let [forwarded, given] = &message.attachments[..] else {
                    return false;
                };
                message.thread_id == message.id
                    && message.in_reply_to.is_none()
                    && message.to == vec![address("carol@example.net")]
                    && message.subject == "Fwd: Re: Plans"
                    && message
                        .text
                        .starts_with("FYI\n\n---------- Forwarded message")
                    && message.text.ends_with("\n\nt")
                    && forwarded.meta.id.to_string() == "att_1"
                    && forwarded.meta.content_id.is_none()
                    && forwarded.meta.filename.as_deref() == Some("invoicefdp.pdf")
                    && forwarded.meta.content_type == "application/octet-stream"
                    && forwarded.meta.sha256 == invoice.sha256
                    && forwarded.content.as_deref() == Some(&b"%PDF-"[..])
                    && given.meta.id.to_string() == "att_2"
            })
            .times(1)
            .returning(|_, _| Ok(Acceptance::Accepted(record(Direction::Outbound, None))));
        let forward = ForwardMail {
            to: vec![address("carol@example.net")],
            cc: Vec::new(),
            bcc: Vec::new(),
            text: "FYI".into(),
            attachments: vec![new_attachment("note.txt", b"mine")],
            idempotency_key: None,
        };
        mocks
            .service()
            .forward(&profile(true), &Uuid::from_u128(5).to_string(), forward)
            .await
            .expect("forwarded");
    }

    #[tokio::test]
    async fn a_forward_of_a_message_outside_the_inbox_is_not_found() {
        let mut mocks = Mocks::new().with_inbox(true);
        mocks.mailbox.expect_message().returning(|_, _| Ok(None));
        mocks.outbox.expect_accept().never();
        let service = mocks.service();
        let forward = ForwardMail {
            to: vec![address("carol@example.net")],
            cc: Vec::new(),
            bcc: Vec::new(),
            text: String::new(),
            attachments: Vec::new(),
            idempotency_key: None,
        };
        for source in ["not-an-id".to_owned(), Uuid::from_u128(6).to_string()] {
            assert!(matches!(
                service
                    .forward(&profile(true), &source, forward.clone())
                    .await,
                Err(SendMailError::SourceNotFound)
            ));
        }
    }

    #[tokio::test]
    async fn a_send_is_accepted_with_its_own_thread_and_message_id_under_its_rates() {
        let mut mocks = Mocks::new().with_inbox(true);
        mocks
            .outbox
            .expect_accept()
            .withf(|message, throttle| {
                message.thread_id == message.id
                    && message.internet_message_id
                        == format!("<{}@inbox.example.com>", message.id.0)
                    && message.from.as_str() == "agent@inbox.example.com"
                    && throttle.sponsor == AgentRecord::fixture().sponsor_id
                    && throttle.sponsor_limit == RATE
                    && throttle.agent_limit == AGENT_RATE
            })
            .times(1)
            .returning(|_, _| Ok(Acceptance::Accepted(record(Direction::Outbound, None))));
        let (_, replayed) = mocks
            .service()
            .send(&profile(true), mail())
            .await
            .expect("sent");
        assert!(!replayed);
    }

    #[tokio::test]
    async fn unsupported_sends_are_refused_before_anything_is_stored() {
        for (change, expected) in [
            (
                SendMail {
                    category: Some("marketing".into()),
                    ..mail()
                },
                "category",
            ),
            (
                SendMail {
                    reply_to_given: true,
                    ..mail()
                },
                "reply_to",
            ),
            (
                SendMail {
                    html_given: true,
                    ..mail()
                },
                "body_html",
            ),
        ] {
            let mut mocks = Mocks::new();
            mocks.outbox.expect_accept().never();
            let error = mocks
                .service()
                .send(&profile(true), change)
                .await
                .expect_err("refused");
            assert!(error.to_string().contains(expected), "{error}");
        }
        let mut unverified = Mocks::new().with_inbox(false);
        unverified.outbox.expect_accept().never();
        assert!(matches!(
            unverified.service().send(&profile(true), mail()).await,
            Err(SendMailError::DomainNotVerified(domain)) if domain == "inbox.example.com"
        ));
        let mut no_inbox = Mocks::new();
        no_inbox.outbox.expect_accept().never();
        assert!(matches!(
            no_inbox.service().send(&profile(false), mail()).await,
            Err(SendMailError::NotProvisioned(NotProvisioned::EmailInbox))
        ));
    }

    #[tokio::test]
    async fn a_reply_answers_the_sender_in_the_original_thread() {
        let mut mocks = Mocks::new().with_inbox(true);
        mocks
            .mailbox
            .expect_message()
            .returning(|_, _| Ok(Some(record(Direction::Inbound, Some("alice@example.org")))));
        mocks
            .outbox
            .expect_accept()
            .withf(|message, _| {
                message.to == vec![address("alice@example.org")]
                    && message.subject == "Re: Plans"
                    && message.thread_id == EmailMessageId(Uuid::from_u128(4))
                    && message.in_reply_to.as_deref() == Some("<b@x>")
                    && message.references == vec!["<a@x>".to_owned(), "<b@x>".to_owned()]
            })
            .times(1)
            .returning(|_, _| Ok(Acceptance::Accepted(record(Direction::Outbound, None))));
        let source = Uuid::from_u128(5).to_string();
        mocks
            .service()
            .reply(&profile(true), &source, reply_of("Sure"))
            .await
            .expect("replied");
    }

    #[tokio::test]
    async fn only_inbound_mail_with_a_sender_can_be_answered() {
        for original in [
            record(Direction::Outbound, Some("alice@example.org")),
            record(Direction::Inbound, None),
            record(Direction::Inbound, Some("not an address")),
        ] {
            let mut mocks = Mocks::new().with_inbox(true);
            mocks
                .mailbox
                .expect_message()
                .return_once(move |_, _| Ok(Some(original)));
            mocks.outbox.expect_accept().never();
            let source = Uuid::from_u128(5).to_string();
            assert!(matches!(
                mocks
                    .service()
                    .reply(&profile(true), &source, reply_of("x"))
                    .await,
                Err(SendMailError::NotReplyable)
            ));
        }
        let mut unknown = Mocks::new().with_inbox(true);
        unknown.mailbox.expect_message().never();
        assert!(matches!(
            unknown
                .service()
                .reply(&profile(true), "not-a-uuid", reply_of("x"))
                .await,
            Err(SendMailError::SourceNotFound)
        ));
    }

    #[tokio::test]
    async fn a_throttled_send_is_reported_as_such() {
        let mut mocks = Mocks::new().with_inbox(true);
        mocks.outbox.expect_accept().returning(|_, _| {
            Err(AcceptError::Keyed(KeyedRefusal::RateLimited {
                retry_after: Duration::from_secs(3),
            }))
        });
        assert!(matches!(
            mocks.service().send(&profile(true), mail()).await,
            Err(SendMailError::Throttled)
        ));
    }

    fn inbound_to(addresses: &[&str]) -> InboundEmail {
        InboundEmail {
            internet_message_id: Some("<m@x>".into()),
            subject: Some("Your code".into()),
            from: Some("alice@example.org".into()),
            to: addresses.iter().map(|a| (*a).to_owned()).collect(),
            text: Some("Use 482913 to sign in".into()),
            ..InboundEmail::default()
        }
    }

    fn webhook_request() -> WebhookRequest {
        WebhookRequest {
            path_and_query: "/webhooks/email/inbound".into(),
            headers: WebhookHeaders::new([("webhook-id".to_owned(), "msg_1".to_owned())]),
            body: b"x".to_vec(),
        }
    }

    #[tokio::test]
    async fn a_refused_webhook_stores_nothing_and_says_why() {
        let refusal = WebhookRefusal::Signature("Invalid webhook signature: wrong".into());
        let mut mocks = Mocks::new();
        let mut webhook = MockInboundMailWebhook::new();
        let refused = refusal.clone();
        webhook
            .expect_could_verify()
            .returning(move |_, _| Err(refused.clone()));
        let refused = refusal.clone();
        webhook
            .expect_receive()
            .returning(move |_, _| Err(refused.clone()));
        mocks.webhook = Some(webhook);
        mocks.inbound.expect_inboxes_at().never();
        mocks.inbound.expect_store_inbound().never();
        let service = mocks.service();
        let request = webhook_request();
        assert!(matches!(
            service.check_webhook(&request.headers),
            Err(IngestError::Refused(ref why)) if *why == refusal
        ));
        assert!(matches!(
            service.receive_webhook(request).await,
            Err(IngestError::Refused(ref why)) if *why == refusal
        ));
    }

    #[tokio::test]
    async fn without_a_webhook_every_delivery_is_refused_as_not_configured() {
        let unconfigured = Mocks::new().service();
        let request = webhook_request();
        assert!(matches!(
            unconfigured.check_webhook(&request.headers),
            Err(IngestError::NotConfigured)
        ));
        assert!(matches!(
            unconfigured.receive_webhook(request).await,
            Err(IngestError::NotConfigured)
        ));
    }

    #[tokio::test]
    async fn a_webhooks_mail_is_stored_keyed_by_its_delivery_without_a_provider_id() {
        let mut mocks = Mocks::new();
        let mut webhook = MockInboundMailWebhook::new();
        webhook
            .expect_receive()
            .withf(|request, _| request.body == b"x")
            .returning(|_, _| {
                Ok(WebhookMail {
                    delivery_id: "msg_1".into(),
                    email: inbound_to(&["agent@inbox.example.com"]),
                })
            });
        mocks.webhook = Some(webhook);
        mocks.parser.expect_parse().never();
        mocks
            .inbound
            .expect_inboxes_at()
            .returning(|_| Ok(vec![(AgentRecord::fixture().id, inbox())]));
        mocks
            .inbound
            .expect_store_inbound()
            .withf(|message| message.provider_message_id == "msg_1")
            .times(1)
            .returning(|_| Ok((record(Direction::Inbound, Some("alice@example.org")), true)));
        let report = mocks
            .service()
            .receive_webhook(webhook_request())
            .await
            .expect("ingested");
        assert_eq!(report.stored.len(), 1);
    }

    #[tokio::test]
    async fn inbound_mail_is_stored_once_per_addressed_inbox_keyed_by_its_delivery() {
        let mut mocks = Mocks::new();
        mocks.parser.expect_parse().returning(|_, _| {
            Ok(inbound_to(&[
                "Agent@Inbox.example.com",
                "stranger@example.net",
            ]))
        });
        mocks
            .inbound
            .expect_inboxes_at()
            .withf(|addresses| addresses.len() == 2)
            .returning(|_| Ok(vec![(AgentRecord::fixture().id, inbox())]));
        mocks
            .inbound
            .expect_store_inbound()
            .withf(|message| {
                message.provider_message_id == "delivery-1"
                    && message.inbox_id == inbox().id
                    && message.verification_codes
                        == extract_verification_codes("Your code\nUse 482913 to sign in")
            })
            .times(1)
            .returning(|_| Ok((record(Direction::Inbound, Some("alice@example.org")), true)));
        let report = mocks
            .service()
            .receive_raw(b"raw".to_vec(), "delivery-1")
            .await
            .expect("ingested");
        assert_eq!(report.stored.len(), 1);
    }

    #[tokio::test]
    async fn with_an_object_store_a_redelivery_puts_no_bytes_and_a_new_mail_puts_them_first() {
        let (puts, discards) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let mut mocks = Mocks::new();
        mocks.objects = Some(counted_object_storage(&puts, &discards));
        mocks.parser.expect_parse().returning(|_, _| {
            let mut mail = inbound_to(&["agent@inbox.example.com"]);
            mail.attachments = vec![AttachmentBytes {
                meta: AttachmentMeta {
                    id: AttachmentId::at_index(0),
                    filename: Some("a.pdf".into()),
                    content_type: "application/pdf".into(),
                    size: 4,
                    content_id: None,
                    stored: false,
                    sha256: None,
                },
                content: Some(Arc::from(&b"%PDF"[..])),
            }];
            Ok(mail)
        });
        mocks
            .inbound
            .expect_inboxes_at()
            .returning(|_| Ok(vec![(AgentRecord::fixture().id, inbox())]));
        mocks
            .inbound
            .expect_holds_delivery()
            .returning(|_, delivery| Ok(delivery == "delivery-1"));
        mocks
            .inbound
            .expect_store_inbound()
            .withf(|message| {
                message.provider_message_id == "delivery-2"
                    && message.email.attachments[0].meta.stored
                    && message.email.attachments[0].content.is_none()
            })
            .times(1)
            .returning(|_| Ok((record(Direction::Inbound, Some("alice@example.org")), true)));
        let service = mocks.service();
        let again = service
            .receive_raw(b"raw".to_vec(), "delivery-1")
            .await
            .expect("ingested");
        assert_eq!((again.stored.len(), again.duplicates), (0, 1));
        assert_eq!(puts.load(Ordering::SeqCst), 0, "a redelivery puts nothing");
        let new = service
            .receive_raw(b"raw".to_vec(), "delivery-2")
            .await
            .expect("ingested");
        assert_eq!(new.stored.len(), 1);
        assert_eq!(
            (puts.load(Ordering::SeqCst), discards.load(Ordering::SeqCst)),
            (1, 0)
        );
    }

    #[tokio::test]
    async fn mail_delivered_by_its_envelope_goes_only_where_the_envelope_says() {
        let mut mocks = Mocks::new();
        mocks.parser.expect_parse().returning(|_, _| {
            Ok(InboundEmail {
                provider_message_id: Some("provider-7".into()),
                envelope_to: vec!["agent@inbox.example.com".into()],
                ..inbound_to(&["victim@inbox.example.com", "agent@inbox.example.com"])
            })
        });
        mocks
            .inbound
            .expect_inboxes_at()
            .withf(|addresses| {
                addresses.len() == 1 && addresses[0].as_str() == "agent@inbox.example.com"
            })
            .returning(|_| Ok(vec![(AgentRecord::fixture().id, inbox())]));
        stores_once(mocks, |message| message.provider_message_id == "provider-7").await;
    }

    /// Takes in raw mail and expects one message stored, as `stored` says it should be.
    async fn stores_once(
        mut mocks: Mocks,
        stored: impl Fn(&NewInboundEmail) -> bool + Send + 'static,
    ) {
        mocks
            .inbound
            .expect_store_inbound()
            .withf(stored)
            .times(1)
            .returning(|_| Ok((record(Direction::Inbound, Some("alice@example.org")), true)));
        mocks
            .service()
            .receive_raw(b"raw".to_vec(), "delivery-1")
            .await
            .expect("ingested");
    }

    #[tokio::test]
    async fn what_an_outside_sender_writes_is_stored_bounded_and_without_nul() {
        let mut mocks = Mocks::new();
        mocks.parser.expect_parse().returning(|_, _| {
            Ok(InboundEmail {
                internet_message_id: Some(format!("<{}@x>", "i".repeat(3000))),
                subject: Some("Your code\0 is 482913".into()),
                headers: (0..10_000)
                    .map(|n| (format!("X-{n}"), "v\0".repeat(100_000)))
                    .collect(),
                attachments: vec![listed("a\0.txt", Some(b"")); 200_000],
                ..inbound_to(&["agent@inbox.example.com"])
            })
        });
        mocks
            .inbound
            .expect_inboxes_at()
            .returning(|_| Ok(vec![(AgentRecord::fixture().id, inbox())]));
        stores_once(mocks, |message| {
            let email = &message.email;
            let header_bytes: usize = email
                .headers
                .iter()
                .map(|(name, value)| name.len() + value.len())
                .sum();
            email.internet_message_id.is_none()
                && email.subject.as_deref() == Some("Your code\u{fffd} is 482913")
                && header_bytes <= domain::inbound::MAX_KEPT_HEADER_BYTES
                && !email.headers.iter().any(|(_, value)| value.contains('\0'))
                && email.attachments.len() == domain::inbound::MAX_KEPT_ATTACHMENTS
                && email.attachments[0].meta.filename.as_deref() == Some("a\u{fffd}.txt")
                && email.attachments[49].meta.id.to_string() == "att_50"
        })
        .await;
    }

    /// An attachment as the parser lists it, with these bytes.
    fn listed(filename: &str, content: Option<&[u8]>) -> AttachmentBytes {
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

    #[tokio::test]
    async fn attachments_keep_their_bytes_up_to_the_bound_and_only_their_metadata_past_it() {
        let mut mocks = Mocks::new();
        mocks.parser.expect_parse().returning(|_, _| {
            Ok(InboundEmail {
                attachments: vec![
                    listed("small.txt", Some(b"1234")),
                    listed("large.bin", Some(b"12345")),
                    listed("elsewhere.pdf", None),
                ],
                ..inbound_to(&["agent@inbox.example.com"])
            })
        });
        mocks
            .inbound
            .expect_inboxes_at()
            .returning(|_| Ok(vec![(AgentRecord::fixture().id, inbox())]));
        mocks
            .inbound
            .expect_store_inbound()
            .withf(|message| {
                let kept: Vec<_> = message
                    .email
                    .attachments
                    .iter()
                    .map(|a| {
                        (
                            a.meta.id.to_string(),
                            a.meta.stored,
                            a.meta.size,
                            a.content.as_deref().map(<[u8]>::len),
                        )
                    })
                    .collect();
                kept == [
                    ("att_1".to_owned(), true, 4, Some(4)),
                    ("att_2".to_owned(), false, 5, None),
                    ("att_3".to_owned(), false, 7, None),
                ] && message.email.attachments[0].meta.sha256
                    == Some(domain::content_digest(b"1234"))
            })
            .times(1)
            .returning(|_| Ok((record(Direction::Inbound, Some("alice@example.org")), true)));
        mocks
            .service()
            .with_attachment_max_bytes(4)
            .receive_raw(b"raw".to_vec(), "delivery-1")
            .await
            .expect("ingested");
    }

    fn kept_meta(stored: bool, size: u64) -> AttachmentMeta {
        AttachmentMeta {
            stored,
            size,
            sha256: stored.then_some([7; 32]),
            ..listed("a.bin", None).meta
        }
    }

    #[tokio::test]
    async fn an_attachment_downloads_piece_by_piece_and_only_a_stored_one_of_the_inbox() {
        let size = domain::ATTACHMENT_PIECE_BYTES as u64 * 2 + 3;
        let mut mocks = Mocks::new();
        mocks.mailbox.expect_attachments().returning(move |_, id| {
            Ok((id == EmailMessageId(Uuid::from_u128(5))).then(|| {
                vec![
                    kept_meta(true, size),
                    AttachmentMeta {
                        id: AttachmentId::at_index(1),
                        ..kept_meta(false, 9)
                    },
                ]
            }))
        });
        let mut sequence = mockall::Sequence::new();
        for (index, bytes) in [
            (0u64, domain::ATTACHMENT_PIECE_BYTES),
            (1, domain::ATTACHMENT_PIECE_BYTES),
            (2, 3),
        ] {
            mocks
                .attachments
                .expect_piece()
                .withf(move |_, attachment, at| attachment.position() == 1 && *at == index)
                .times(1)
                .in_sequence(&mut sequence)
                .returning(move |_, _, _| Ok(Some(vec![1; bytes])));
        }
        let service = mocks.service();
        let message = Uuid::from_u128(5).to_string();
        let download = service
            .attachment(&profile(true), &message, "att_1")
            .await
            .expect("found");
        let pieces: Vec<Vec<u8>> = futures_util::TryStreamExt::try_collect(download.pieces())
            .await
            .expect("read");
        assert_eq!(pieces.iter().map(Vec::len).sum::<usize>() as u64, size);

        for (message_id, attachment_id) in [
            (message.as_str(), "att_3"),
            (message.as_str(), "att_0"),
            (message.as_str(), "1"),
            ("not-a-uuid", "att_1"),
            (&Uuid::from_u128(6).to_string(), "att_1"),
        ] {
            assert!(
                matches!(
                    service
                        .attachment(&profile(true), message_id, attachment_id)
                        .await,
                    Err(AttachmentError::NotFound)
                ),
                "{message_id} {attachment_id}"
            );
        }
        assert!(matches!(
            service.attachment(&profile(true), &message, "att_2").await,
            Err(AttachmentError::NotStored)
        ));
        assert!(matches!(
            service.attachment(&profile(false), &message, "att_1").await,
            Err(AttachmentError::NotProvisioned(_))
        ));
    }

    #[tokio::test]
    async fn bytes_that_end_before_the_size_kept_end_the_download_with_an_error() {
        let mut mocks = Mocks::new();
        mocks
            .mailbox
            .expect_attachments()
            .returning(|_, _| Ok(Some(vec![kept_meta(true, 10)])));
        mocks
            .attachments
            .expect_piece()
            .returning(|_, _, _| Ok(None));
        let download = mocks
            .service()
            .attachment(&profile(true), &Uuid::from_u128(5).to_string(), "att_1")
            .await
            .expect("found");
        let read: Result<Vec<Vec<u8>>, _> =
            futures_util::TryStreamExt::try_collect(download.pieces()).await;
        assert!(matches!(read, Err(StoreError::Internal(_))), "{read:?}");
    }

    #[tokio::test]
    async fn mail_a_rule_keeps_out_is_counted_for_that_agent_and_stored_for_the_others() {
        let mut mocks = Mocks::new();
        let ruled = AgentRecord::fixture().id;
        let other = AgentId(Uuid::from_u128(77));
        mocks.parser.expect_parse().returning(|_, _| {
            Ok(InboundEmail {
                from: Some("friend@allowed.example".into()),
                envelope_from: Some("bounces@spam.example".into()),
                ..inbound_to(&["agent@inbox.example.com", "other@inbox.example.com"])
            })
        });
        mocks.inbound.expect_inboxes_at().returning(move |_| {
            let mut second = inbox();
            second.id = EmailInboxId(Uuid::from_u128(2));
            Ok(vec![(ruled, inbox()), (other, second)])
        });
        let mut rules = MockSenderRuleStore::new();
        rules.expect_rules_of().returning(move |_| {
            Ok(vec![(
                ruled,
                SenderRules::new(&["@allowed.example".into()], &[]).expect("valid"),
            )])
        });
        rules
            .expect_count_kept_out()
            .withf(move |agent, delivery| *agent == ruled && delivery == "delivery-1")
            .times(1)
            .returning(|_, _| Ok(true));
        mocks.rules = rules;
        mocks
            .inbound
            .expect_store_inbound()
            .withf(move |message| message.agent_id == other)
            .times(1)
            .returning(|_| {
                Ok((
                    record(Direction::Inbound, Some("friend@allowed.example")),
                    true,
                ))
            });
        let report = mocks
            .service()
            .receive_raw(b"raw".to_vec(), "delivery-1")
            .await
            .expect("ingested");
        assert_eq!((report.stored.len(), report.kept_out), (1, 1));
    }

    #[tokio::test]
    async fn mail_for_no_inbox_is_dropped_without_an_error() {
        let mut mocks = Mocks::new();
        mocks
            .parser
            .expect_parse()
            .returning(|_, _| Ok(inbound_to(&["nobody@example.net"])));
        mocks
            .inbound
            .expect_inboxes_at()
            .returning(|_| Ok(Vec::new()));
        mocks.inbound.expect_store_inbound().never();
        let report = mocks
            .service()
            .receive_raw(b"raw".to_vec(), "delivery-1")
            .await
            .expect("no error");
        assert_eq!(report, IngestReport::default());
    }

    #[tokio::test]
    async fn a_first_inbox_page_is_read_only_when_the_inbox_changed() {
        let version = |changes| ListingVersion {
            listing: Listing::Inbox(inbox().id),
            changes,
        };
        let mut mocks = Mocks::new();
        let mut versions = mockall::Sequence::new();
        for changes in [2, 3, 3] {
            mocks
                .mailbox
                .expect_listing_version()
                .withf(|asked| *asked == inbox().id)
                .times(1)
                .in_sequence(&mut versions)
                .returning(move |_| Ok(version(changes)));
        }
        mocks
            .mailbox
            .expect_page()
            .times(1)
            .returning(|_, direction, after, _, _| {
                assert_eq!((direction, after), (Some(Direction::Inbound), None));
                Ok(vec![record(Direction::Inbound, Some("bob@example.com"))])
            });
        let service = mocks.service();
        let held = service
            .inbox_first_page(
                &profile(true),
                Some(Direction::Inbound),
                20,
                Some((version(2), "kept")),
            )
            .await
            .expect("read");
        assert!(matches!(held, Kept::Unchanged("kept")));
        let read = service
            .inbox_first_page(
                &profile(true),
                Some(Direction::Inbound),
                20,
                Some((version(2), "kept")),
            )
            .await
            .expect("read");
        let Kept::Read {
            value: page,
            version: read,
        } = read
        else {
            panic!("the inbox changed: the page is read");
        };
        assert_eq!((page.items.len(), read), (1, Some(version(3))));
        assert!(matches!(
            service
                .inbox_first_page::<()>(&profile(false), None, 20, None)
                .await,
            Err(ReadMailError::NotProvisioned(NotProvisioned::EmailInbox))
        ));
    }

    #[tokio::test]
    async fn searches_beyond_the_agents_cap_are_refused_and_one_past_its_time_says_so() {
        let mut mocks = Mocks::new();
        mocks
            .mailbox
            .expect_search()
            .times(1)
            .returning(|_, _, _, _, _, _| Err(StoreError::TimedOut("statement timeout".into())));
        let service = mocks.service();
        let agent = profile(true);
        let query = SearchQuery::parse("invoice").expect("query");

        let running = service
            .long_lived
            .enter(agent.agent.id, LongLivedKind::Search)
            .expect("the one search allowed");
        assert!(matches!(
            service.search(&agent, &query, None, None, 20).await,
            Err(ReadMailError::TooManySearches)
        ));
        drop(running);
        assert!(matches!(
            service.search(&agent, &query, None, None, 20).await,
            Err(ReadMailError::SearchTooLong)
        ));
        assert!(
            service
                .long_lived
                .enter(agent.agent.id, LongLivedKind::Search)
                .is_some(),
            "a search that ended gave its place back"
        );
    }
}
