//! Mail the provider delivers, by its webhook or raw, taken in bounded: what an outside sender
//! wrote is kept within every size and count, and stored once in each inbox it was delivered
//! to whose sender rules take it.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use domain::inbound::{
    delivery_key, kept_addresses, kept_attachment, kept_headers, kept_message_id, kept_optional,
    kept_references, MAX_KEPT_ATTACHMENTS, MAX_KEPT_BODY_CHARS, MAX_SUBJECT_CHARS,
};
use domain::{
    AgentId, EmailAddress, EmailMessageId, EmailMessageRecord, DEFAULT_ATTACHMENT_MAX_BYTES,
    MAX_ADDRESS_CHARS,
};
use ports::{
    AttachmentBytes, InboundEmail, InboundFormat, InboundMailStore, InboundMailWebhook,
    InboundParser, NewInboundEmail, ProviderWebhookHeaders, ProviderWebhookRequest,
    SenderRuleStore, StoreError,
};
use text_mining::{extract_verification_codes, mail_text, recognise_service};
use uuid::Uuid;

use super::{discard_bytes, place_bytes, IngestError};
use crate::object_storage::ObjectStorage;

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

/// The ports taking in inbound mail works through.
pub struct MailIntakePorts {
    pub inbound: Arc<dyn InboundMailStore>,
    /// Reads the mail `agentctl sandbox email` delivers.
    pub parser: Arc<dyn InboundParser>,
    /// `None` when no webhook secret is configured: every webhook is then refused.
    pub webhook: Option<Arc<dyn InboundMailWebhook>>,
    /// Each agent's sender rules, which keep mail out of its inbox.
    pub rules: Arc<dyn SenderRuleStore>,
    /// Where attachment bytes are put when they are not kept in the database with their message.
    pub objects: Option<ObjectStorage>,
}

pub struct MailIntakeService {
    ports: MailIntakePorts,
    /// The largest inbound attachment whose bytes are kept.
    attachment_max_bytes: u64,
}

impl MailIntakeService {
    pub fn new(ports: MailIntakePorts) -> Self {
        Self {
            ports,
            attachment_max_bytes: DEFAULT_ATTACHMENT_MAX_BYTES,
        }
    }

    /// Keeps the bytes of inbound attachments up to `max_bytes` each (a larger one keeps its
    /// metadata, `stored: false`).
    pub fn with_attachment_max_bytes(mut self, max_bytes: u64) -> Self {
        self.attachment_max_bytes = max_bytes;
        self
    }

    /// What can be judged of an inbound webhook before its body is read: the webhook is
    /// configured, and its headers could carry a valid signature. Refusing here keeps a sender
    /// without the secret from making the server read and hold a body.
    pub fn check_webhook(&self, headers: &ProviderWebhookHeaders) -> Result<(), IngestError> {
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
        request: ProviderWebhookRequest,
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

    /// The agent whose inbox has `address` (compared case-insensitively), where mail to it is
    /// stored; `None` when no inbox of this service has it.
    pub async fn agent_at(&self, address: &EmailAddress) -> Result<Option<AgentId>, StoreError> {
        let inboxes = self
            .ports
            .inbound
            .inboxes_at(std::slice::from_ref(address))
            .await?;
        Ok(inboxes.first().map(|(agent, _)| *agent))
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
        let searched = mail_text(email.subject.as_deref(), email.text.as_deref());
        let verification_codes = extract_verification_codes(&searched);
        let service_name = recognise_service(&searched);
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
                service_name: service_name.clone(),
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
            let placed = place_bytes(
                self.ports.objects.as_ref(),
                id,
                &mut message.email.attachments,
            )
            .await?;
            let stored = self.ports.inbound.store_inbound(message).await;
            if placed && !matches!(stored, Ok((_, true))) {
                discard_bytes(self.ports.objects.as_ref(), id).await;
            }
            match stored? {
                (stored, true) => report.stored.push(stored),
                (_, false) => report.duplicates += 1,
            }
        }
        Ok(report)
    }
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
        sender_authentication: email.sender_authentication,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mail::test_support::{counted_object_storage, inbox, listed, record};
    use domain::{
        AgentRecord, AttachmentId, AttachmentMeta, Direction, EmailInboxId, SenderAuthentication,
        SenderRules,
    };
    use ports::{
        MockInboundMailStore, MockInboundMailWebhook, MockInboundParser, MockSenderRuleStore,
        ProviderWebhookRefusal, WebhookMail,
    };
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A rule store where no agent has rules.
    fn no_rules() -> MockSenderRuleStore {
        let mut rules = MockSenderRuleStore::new();
        rules.expect_rules_of().returning(|_| Ok(Vec::new()));
        rules
    }

    struct Mocks {
        inbound: MockInboundMailStore,
        parser: MockInboundParser,
        webhook: Option<MockInboundMailWebhook>,
        rules: MockSenderRuleStore,
        objects: Option<ObjectStorage>,
    }

    impl Mocks {
        fn new() -> Self {
            Self {
                inbound: MockInboundMailStore::new(),
                parser: MockInboundParser::new(),
                webhook: None,
                rules: no_rules(),
                objects: None,
            }
        }

        /// Every delivery parses as `email`, addressed to the fixture agent's inbox alone.
        fn delivering(mut self, email: InboundEmail) -> Self {
            self.parser
                .expect_parse()
                .returning(move |_, _| Ok(email.clone()));
            self.inbound
                .expect_inboxes_at()
                .returning(|_| Ok(vec![(AgentRecord::fixture().id, inbox())]));
            self
        }

        fn service(self) -> MailIntakeService {
            let webhook = self
                .webhook
                .map(|webhook| Arc::new(webhook) as Arc<dyn InboundMailWebhook>);
            MailIntakeService::new(MailIntakePorts {
                inbound: Arc::new(self.inbound),
                parser: Arc::new(self.parser),
                webhook,
                rules: Arc::new(self.rules),
                objects: self.objects,
            })
        }
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

    fn webhook_request() -> ProviderWebhookRequest {
        ProviderWebhookRequest {
            path_and_query: "/webhooks/email/inbound".into(),
            headers: ProviderWebhookHeaders::new([("webhook-id".to_owned(), "msg_1".to_owned())]),
            body: b"x".to_vec(),
        }
    }

    #[tokio::test]
    async fn a_refused_webhook_stores_nothing_and_says_why() {
        let refusal = ProviderWebhookRefusal::Signature("Invalid webhook signature: wrong".into());
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

    #[tokio::test]
    async fn the_sender_authentication_and_the_service_named_are_stored_as_read_at_intake() {
        let mocks = Mocks::new().delivering(InboundEmail {
            subject: Some("[Acme] Your sign-in code".into()),
            text: Some("Use 482913 within ten minutes.".into()),
            sender_authentication: SenderAuthentication::Passed {
                domain: "acme.example".into(),
            },
            ..inbound_to(&["agent@inbox.example.com"])
        });
        stores_once(mocks, |message| {
            message.service_name.as_deref() == Some("Acme")
                && message.email.sender_authentication.domain() == Some("acme.example")
                && message.verification_codes == ["482913"]
        })
        .await;
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
        let mocks = Mocks::new().delivering(InboundEmail {
            internet_message_id: Some(format!("<{}@x>", "i".repeat(3000))),
            subject: Some("Your code\0 is 482913".into()),
            headers: (0..10_000)
                .map(|n| (format!("X-{n}"), "v\0".repeat(100_000)))
                .collect(),
            attachments: vec![listed("a\0.txt", Some(b"")); 200_000],
            ..inbound_to(&["agent@inbox.example.com"])
        });
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

    #[tokio::test]
    async fn attachments_keep_their_bytes_up_to_the_bound_and_only_their_metadata_past_it() {
        let mut mocks = Mocks::new().delivering(InboundEmail {
            attachments: vec![
                listed("small.txt", Some(b"1234")),
                listed("large.bin", Some(b"12345")),
                listed("elsewhere.pdf", None),
            ],
            ..inbound_to(&["agent@inbox.example.com"])
        });
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
}
