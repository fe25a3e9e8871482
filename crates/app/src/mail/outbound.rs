//! Mail the agent sends: a new message, a reply or a forward, accepted into the outbox under the
//! sponsor's and the agent's send rates, bound to its idempotency key; the outbox job hands it
//! to the provider.

use std::sync::Arc;

use domain::{
    download_content_type, download_filename, forward_subject, forward_text,
    outbound_attachments_fit, reply_references, reply_subject, request_fingerprint, AttachmentId,
    AttachmentMeta, EmailAddress, EmailInboxRecord, EmailMessageId, EmailMessageRecord,
    IdempotencyKey, NewAttachment, SponsorId,
};
use ports::{
    AcceptError, Acceptance, AttachmentBytes, AttachmentContent, EmailIdempotency, EmailOutbox,
    KeyedRefusal, Mailbox, NewOutboundEmail, SendThrottle,
};
use uuid::Uuid;

use super::{
    discard_bytes, inbox_of, place_bytes, AttachmentDownload, ForwardMail, ReplyMail, SendMail,
    SendMailError, SendRates, EMAIL_IDEMPOTENCY_KEY_TTL, TRANSACTIONAL,
};
use crate::agents::Principal;
use crate::object_storage::ObjectStorage;

/// The ports sending mail works through.
pub struct OutboundMailPorts {
    /// The message a reply or forward is made from, and whether the inbox's domain is verified.
    pub mailbox: Arc<dyn Mailbox>,
    pub outbox: Arc<dyn EmailOutbox>,
    /// Where a forward reads the original's stored attachments from.
    pub attachments: Arc<dyn AttachmentContent>,
    /// Where attachment bytes are put when they are not kept in the database with their message.
    pub objects: Option<ObjectStorage>,
}

pub struct OutboundMailService {
    ports: OutboundMailPorts,
    rates: SendRates,
}

impl OutboundMailService {
    pub fn new(ports: OutboundMailPorts, rates: SendRates) -> Self {
        Self { ports, rates }
    }

    /// Accepts a new message into the outbox, `queued`; the outbox job hands it to the provider.
    /// Returns the message and whether it is an earlier one replayed for the same key.
    #[tracing::instrument(level = "debug", skip(self, principal, mail), fields(agent = %principal.profile.agent.id, recipients = mail.to.len() + mail.cc.len() + mail.bcc.len()))]
    pub async fn send(
        &self,
        principal: &Principal,
        mut mail: SendMail,
    ) -> Result<(EmailMessageRecord, bool), SendMailError> {
        let profile = principal.profile.as_ref();
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
            key_id: Some(principal.key.id),
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
    #[tracing::instrument(level = "debug", skip(self, principal, reply), fields(agent = %principal.profile.agent.id))]
    pub async fn reply(
        &self,
        principal: &Principal,
        source: &str,
        reply: ReplyMail,
    ) -> Result<(EmailMessageRecord, bool), SendMailError> {
        let profile = principal.profile.as_ref();
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
            key_id: Some(principal.key.id),
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
    #[tracing::instrument(level = "debug", skip(self, principal, forward), fields(agent = %principal.profile.agent.id, recipients = forward.to.len() + forward.cc.len() + forward.bcc.len()))]
    pub async fn forward(
        &self,
        principal: &Principal,
        source: &str,
        forward: ForwardMail,
    ) -> Result<(EmailMessageRecord, bool), SendMailError> {
        let profile = principal.profile.as_ref();
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
            key_id: Some(principal.key.id),
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
        let placed = place_bytes(self.ports.objects.as_ref(), id, &mut message.attachments).await?;
        let accepted = self.ports.outbox.accept(message, throttle).await;
        if placed && !matches!(accepted, Ok(Acceptance::Accepted(_))) {
            discard_bytes(self.ports.objects.as_ref(), id).await;
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
}

/// The Message-ID of a message the service sends: its own id at the inbox's domain.
fn internet_message_id(id: EmailMessageId, from: &EmailAddress) -> String {
    format!("<{}@{}>", id.0, from.domain())
}

/// What an idempotency key of a send, reply or forward is bound to, when one was given.
fn keyed(key: Option<IdempotencyKey>, fingerprint: [u8; 32]) -> Option<EmailIdempotency> {
    key.map(|key| EmailIdempotency {
        key,
        fingerprint,
        ttl: EMAIL_IDEMPOTENCY_KEY_TTL,
    })
}

/// What an idempotency key of a send is bound to: every field the agent gave.
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
    use crate::agents::fixtures::principal;
    use crate::mail::test_support::{address, counted_object_storage, profile, record};
    use crate::NotProvisioned;
    use domain::{AgentRecord, Direction, RateLimit};
    use ports::{MockAttachmentContent, MockEmailOutbox, MockMailbox};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

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

    struct Mocks {
        mailbox: MockMailbox,
        outbox: MockEmailOutbox,
        attachments: MockAttachmentContent,
        objects: Option<ObjectStorage>,
    }

    impl Mocks {
        fn new() -> Self {
            Self {
                mailbox: MockMailbox::new(),
                outbox: MockEmailOutbox::new(),
                attachments: MockAttachmentContent::new(),
                objects: None,
            }
        }

        fn with_inbox(mut self, verified: bool) -> Self {
            self.mailbox
                .expect_domain_verified()
                .returning(move |_| Ok(verified));
            self
        }

        fn service(self) -> OutboundMailService {
            OutboundMailService::new(
                OutboundMailPorts {
                    mailbox: Arc::new(self.mailbox),
                    outbox: Arc::new(self.outbox),
                    attachments: Arc::new(self.attachments),
                    objects: self.objects,
                },
                SendRates {
                    sponsor: RATE,
                    agent: AGENT_RATE,
                },
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
            .send(&principal(profile(true)), mail)
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
            .send(&principal(profile(true)), with_two)
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
            .send(&principal(profile(true)), with_two())
            .await
            .expect("sent");
        assert!(!replayed);
        assert_eq!(
            (puts.load(Ordering::SeqCst), discards.load(Ordering::SeqCst)),
            (2, 0)
        );
        let (_, replayed) = service
            .send(&principal(profile(true)), with_two())
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
                message.key_id == Some(crate::agents::fixtures::first_key().id)
                    && message.thread_id == message.id
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
            .forward(
                &principal(profile(true)),
                &Uuid::from_u128(5).to_string(),
                forward,
            )
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
                    .forward(&principal(profile(true)), &source, forward.clone())
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
            .send(&principal(profile(true)), mail())
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
                .send(&principal(profile(true)), change)
                .await
                .expect_err("refused");
            assert!(error.to_string().contains(expected), "{error}");
        }
        let mut unverified = Mocks::new().with_inbox(false);
        unverified.outbox.expect_accept().never();
        assert!(matches!(
            unverified.service().send(&principal(profile(true)), mail()).await,
            Err(SendMailError::DomainNotVerified(domain)) if domain == "inbox.example.com"
        ));
        let mut no_inbox = Mocks::new();
        no_inbox.outbox.expect_accept().never();
        assert!(matches!(
            no_inbox
                .service()
                .send(&principal(profile(false)), mail())
                .await,
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
            .reply(&principal(profile(true)), &source, reply_of("Sure"))
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
                    .reply(&principal(profile(true)), &source, reply_of("x"))
                    .await,
                Err(SendMailError::NotReplyable)
            ));
        }
        let mut unknown = Mocks::new().with_inbox(true);
        unknown.mailbox.expect_message().never();
        assert!(matches!(
            unknown
                .service()
                .reply(&principal(profile(true)), "not-a-uuid", reply_of("x"))
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
            mocks
                .service()
                .send(&principal(profile(true)), mail())
                .await,
            Err(SendMailError::Throttled)
        ));
    }
}
