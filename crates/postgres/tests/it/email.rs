use std::sync::Arc;
use std::time::Duration;

use diesel_async::AsyncConnection;
use domain::{
    AgentProfile, AttachmentId, AttachmentMeta, Direction, EmailAddress, EmailMessageId,
    EmailStatus, IdempotencyKey, LeaseId, RateLimit, SenderAuthentication, SenderRules,
    ATTACHMENT_PIECE_BYTES,
};
use ports::{
    AcceptError, Acceptance, AgentStore, AttachmentBytes, AttachmentContent, AttachmentUploads,
    Delivery, EmailIdempotency, EmailOutbox, InboundEmail, InboundMailStore, JobOutcome,
    KeyedRefusal, LeasedQueue, Listing, ListingVersion, Mailbox, NewInboundEmail, NewOutboundEmail,
    SendThrottle, SenderRuleStore, StoreError,
};
use postgres_store::{fill_inbound_mail_facts, Database, PgEmailStore, PoolSettings};
use test_support::TestDatabase;
use uuid::Uuid;

use crate::agents::{full_agent, store};

const ROOMY: RateLimit = RateLimit {
    per_minute: 600,
    burst: 100,
};

fn email_store(database: &TestDatabase) -> PgEmailStore {
    PgEmailStore::new(
        Database::connect(&database.connector(), PoolSettings::default()).expect("pool"),
    )
}

async fn agent_with_inbox(database: &TestDatabase, seed: u8) -> AgentProfile {
    store(database)
        .create(full_agent(seed), &crate::actor())
        .await
        .expect("created")
}

fn address(text: &str) -> EmailAddress {
    EmailAddress::parse(text).expect("valid address")
}

fn outbound(profile: &AgentProfile, to: &str) -> NewOutboundEmail {
    let inbox = profile.email_inbox.as_ref().expect("inbox");
    let id = EmailMessageId(Uuid::now_v7());
    NewOutboundEmail {
        id,
        key_id: None,
        agent_id: profile.agent.id,
        inbox_id: inbox.id,
        thread_id: id,
        internet_message_id: format!("<{}@inbox.test>", id.0),
        in_reply_to: None,
        references: Vec::new(),
        from: inbox.address.clone(),
        to: vec![address(to)],
        cc: Vec::new(),
        bcc: Vec::new(),
        subject: "Hello".into(),
        text: "Hi".into(),
        headers: vec![("X-Tag".into(), "a".into())],
        attachments: Vec::new(),
        idempotency: None,
    }
}

/// The sponsor's rate `limit`, each agent's share roomy.
fn throttle(profile: &AgentProfile, limit: RateLimit) -> SendThrottle {
    SendThrottle {
        sponsor: profile.agent.sponsor_id,
        sponsor_limit: limit,
        agent_limit: ROOMY,
    }
}

fn inbound(profile: &AgentProfile, provider_id: &str, email: InboundEmail) -> NewInboundEmail {
    NewInboundEmail {
        id: EmailMessageId(Uuid::now_v7()),
        agent_id: profile.agent.id,
        inbox_id: profile.email_inbox.as_ref().expect("inbox").id,
        provider_message_id: provider_id.into(),
        email,
        verification_codes: vec!["482913".into()],
        service_name: None,
    }
}

#[tokio::test]
async fn an_accepted_send_is_queued_with_everything_the_hand_off_needs() {
    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, 41).await;
    let emails = email_store(&database);
    let message = outbound(&profile, "bob@example.com");
    let Acceptance::Accepted(stored) = emails
        .accept(message.clone(), throttle(&profile, ROOMY))
        .await
        .expect("accepted")
    else {
        panic!("a new message")
    };
    assert_eq!(stored.status, EmailStatus::Queued);
    assert_eq!(stored.direction, Direction::Outbound);
    assert!(stored.sent_at.is_some());

    let claimed = emails
        .claim_due(new_lease(), Duration::from_secs(60), &[])
        .await
        .expect("claimed")
        .expect("one due");
    assert_eq!(claimed.job.message_id, message.id);
    assert_eq!(claimed.job.to, message.to);
    assert_eq!(claimed.job.headers, message.headers);
    assert_eq!(claimed.job.internet_message_id, message.internet_message_id);
    assert_eq!(claimed.attempts, 1);
    assert!(
        emails
            .claim_due(new_lease(), Duration::from_secs(60), &[])
            .await
            .expect("claimed")
            .is_none(),
        "a leased message is no one else's"
    );
    let delivery = Delivery {
        provider_message_id: "p-1".into(),
    };
    assert!(emails
        .record(
            message.id,
            claimed.lease,
            &JobOutcome::Done(delivery.clone())
        )
        .await
        .expect("recorded"));
    let sent = emails
        .message(stored.inbox_id, message.id)
        .await
        .expect("read")
        .expect("found");
    assert_eq!(sent.status, EmailStatus::Sent);
    assert_eq!(sent.provider_message_id.as_deref(), Some("p-1"));
}

#[tokio::test]
async fn an_expired_lease_passes_the_message_on_and_the_old_holder_records_nothing() {
    let (_database, profile, emails, message) = accepted_outbound(42).await;
    let first = emails
        .claim_due(new_lease(), Duration::from_millis(1), &[])
        .await
        .expect("claimed")
        .expect("due");
    tokio::time::sleep(Duration::from_millis(20)).await;
    let second = emails
        .claim_due(new_lease(), Duration::from_secs(60), &[])
        .await
        .expect("claimed")
        .expect("the lease expired");
    assert_eq!(second.attempts, 2);
    let delivery = Delivery {
        provider_message_id: "late".into(),
    };
    assert!(!emails
        .record(message.id, first.lease, &JobOutcome::Done(delivery.clone()))
        .await
        .expect("refused"));
    assert!(emails
        .record(
            message.id,
            second.lease,
            &JobOutcome::Retry {
                error: "503".into(),
                wait: Duration::from_secs(3600),
            },
        )
        .await
        .expect("recorded"));
    assert!(
        emails
            .claim_due(new_lease(), Duration::from_secs(60), &[])
            .await
            .expect("claimed")
            .is_none(),
        "not due before its wait"
    );
    let queued = emails
        .message(inbox_of(&profile), message.id)
        .await
        .expect("read")
        .expect("found");
    assert_eq!(queued.status, EmailStatus::Queued);
    assert_eq!(queued.failure_reason, None, "a passing error is no reason");
}

fn new_lease() -> LeaseId {
    LeaseId(Uuid::now_v7())
}

#[tokio::test]
async fn a_released_claim_is_due_again_at_once_and_only_its_own_lease_releases_it() {
    let (_database, _profile, emails, message) = accepted_outbound(46).await;
    let lost = new_lease();
    emails
        .claim_due(lost, Duration::from_secs(600), &[])
        .await
        .expect("claimed")
        .expect("due");
    emails.release(new_lease()).await.expect("released");
    assert!(
        emails
            .claim_due(new_lease(), Duration::from_secs(60), &[])
            .await
            .expect("claimed")
            .is_none(),
        "another lease releases nothing"
    );
    emails.release(lost).await.expect("released");
    let again = emails
        .claim_due(new_lease(), Duration::from_secs(60), &[])
        .await
        .expect("claimed")
        .expect("due again at once");
    assert_eq!(again.job.message_id, message.id);
    assert_eq!(again.attempts, 2);
    let delivery = Delivery {
        provider_message_id: "p".into(),
    };
    assert!(
        !emails
            .record(message.id, lost, &JobOutcome::Done(delivery.clone()))
            .await
            .expect("refused"),
        "a released lease records nothing"
    );
}

fn inbox_of(profile: &AgentProfile) -> domain::EmailInboxId {
    profile.email_inbox.as_ref().expect("inbox").id
}

/// A fresh database with an agent (by `seed`) whose mail to bob@example.com was accepted.
async fn accepted_outbound(
    seed: u8,
) -> (TestDatabase, AgentProfile, PgEmailStore, NewOutboundEmail) {
    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, seed).await;
    let emails = email_store(&database);
    let message = outbound(&profile, "bob@example.com");
    emails
        .accept(message.clone(), throttle(&profile, ROOMY))
        .await
        .expect("accepted");
    (database, profile, emails, message)
}

#[tokio::test]
async fn a_failed_message_keeps_its_reason() {
    let (_database, profile, emails, message) = accepted_outbound(43).await;
    let claimed = emails
        .claim_due(new_lease(), Duration::from_secs(60), &[])
        .await
        .expect("claimed")
        .expect("due");
    assert!(emails
        .record(
            message.id,
            claimed.lease,
            &JobOutcome::Failed("550 no such user".into()),
        )
        .await
        .expect("recorded"));
    let failed = emails
        .message(inbox_of(&profile), message.id)
        .await
        .expect("read")
        .expect("found");
    assert_eq!(failed.status, EmailStatus::Failed);
    assert_eq!(failed.failure_reason.as_deref(), Some("550 no such user"));
}

#[tokio::test]
async fn concurrent_workers_never_claim_one_message_twice() {
    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, 44).await;
    let emails = std::sync::Arc::new(email_store(&database));
    for n in 0..20 {
        emails
            .accept(
                outbound(&profile, &format!("r{n}@example.com")),
                throttle(&profile, ROOMY),
            )
            .await
            .expect("accepted");
    }
    let workers = (0..4).map(|_| {
        let emails = emails.clone();
        tokio::spawn(async move {
            let mut claimed = Vec::new();
            while let Some(message) = emails
                .claim_due(new_lease(), Duration::from_secs(60), &[])
                .await
                .expect("claimed")
            {
                claimed.push(message.job.message_id);
            }
            claimed
        })
    });
    let mut all: Vec<EmailMessageId> = Vec::new();
    for worker in workers {
        all.extend(worker.await.expect("worker"));
    }
    let count = all.len();
    all.sort();
    all.dedup();
    assert_eq!((count, all.len()), (20, 20));
}

#[tokio::test]
async fn a_throttled_or_refused_send_stores_nothing_and_a_key_replays_its_message() {
    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, 45).await;
    let emails = email_store(&database);
    let one = RateLimit {
        per_minute: 1,
        burst: 1,
    };
    let key = EmailIdempotency {
        key: IdempotencyKey::parse("k-1").expect("key"),
        fingerprint: [1; 32],
        ttl: Duration::from_secs(3600),
    };
    let first = NewOutboundEmail {
        idempotency: Some(key.clone()),
        ..outbound(&profile, "bob@example.com")
    };
    let Acceptance::Accepted(original) = emails
        .accept(first, throttle(&profile, one))
        .await
        .expect("accepted")
    else {
        panic!("new")
    };
    let retry = NewOutboundEmail {
        idempotency: Some(key.clone()),
        ..outbound(&profile, "bob@example.com")
    };
    assert_eq!(
        emails.accept(retry, throttle(&profile, one)).await,
        Ok(Acceptance::Replayed(original.clone())),
        "a replay spends nothing from the exhausted bucket"
    );
    let other_body = NewOutboundEmail {
        idempotency: Some(EmailIdempotency {
            fingerprint: [2; 32],
            ..key
        }),
        ..outbound(&profile, "bob@example.com")
    };
    assert_eq!(
        emails.accept(other_body, throttle(&profile, one)).await,
        Err(AcceptError::Keyed(KeyedRefusal::IdempotencyMismatch {
            original: original.id
        }))
    );
    assert!(matches!(
        emails
            .accept(
                outbound(&profile, "carol@example.com"),
                throttle(&profile, one)
            )
            .await,
        Err(AcceptError::Keyed(KeyedRefusal::RateLimited { .. }))
    ));
    let page = emails
        .page(inbox_of(&profile), None, None, 10, 100)
        .await
        .expect("page");
    assert_eq!(page.len(), 1, "only the first send was stored");
}

#[tokio::test]
async fn inbound_mail_is_stored_once_and_joins_the_thread_it_answers() {
    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, 46).await;
    let emails = email_store(&database);
    let inbox_address = profile.email_inbox.as_ref().expect("inbox").address.clone();
    let found = emails
        .inboxes_at(&[
            address(&inbox_address.as_str().to_uppercase()),
            address("x@elsewhere.test"),
        ])
        .await
        .expect("found");
    assert_eq!(found.len(), 1, "addresses compare case-insensitively");

    let first = InboundEmail {
        internet_message_id: Some("<a@example.org>".into()),
        subject: Some("Plans".into()),
        from: Some("alice@example.org".into()),
        to: vec![inbox_address.as_str().into()],
        text: Some("Lunch?".into()),
        headers: vec![
            ("Received".into(), "one".into()),
            ("Received".into(), "two".into()),
        ],
        ..InboundEmail::default()
    };
    let (stored, new) = emails
        .store_inbound(inbound(&profile, "p-a", first.clone()))
        .await
        .expect("stored");
    assert!(new);
    assert_eq!(stored.status, EmailStatus::Received);
    assert_eq!(stored.thread_id, stored.id);
    assert_eq!(stored.verification_codes, vec!["482913"]);
    assert_eq!(stored.headers.len(), 2);
    assert!(emails
        .holds_delivery(inbox_of(&profile), "p-a")
        .await
        .expect("read"));
    assert!(!emails
        .holds_delivery(inbox_of(&profile), "p-b")
        .await
        .expect("read"));
    let (again, new) = emails
        .store_inbound(inbound(&profile, "p-a", first))
        .await
        .expect("stored");
    assert!(!new);
    assert_eq!(again.id, stored.id);

    let answer = InboundEmail {
        internet_message_id: Some("<c@example.org>".into()),
        in_reply_to: Some("<unknown@example.org>".into()),
        references: vec!["<a@example.org>".into(), "<unknown@example.org>".into()],
        ..InboundEmail::default()
    };
    let (threaded, _) = emails
        .store_inbound(inbound(&profile, "p-c", answer))
        .await
        .expect("stored");
    assert_eq!(threaded.thread_id, stored.thread_id);
}

#[tokio::test]
async fn pages_are_newest_first_by_direction_and_cut_bodies_to_the_preview() {
    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, 47).await;
    let emails = email_store(&database);
    for n in 0..3 {
        emails
            .accept(
                NewOutboundEmail {
                    text: "x".repeat(50),
                    ..outbound(&profile, &format!("r{n}@example.com"))
                },
                throttle(&profile, ROOMY),
            )
            .await
            .expect("accepted");
    }
    emails
        .store_inbound(inbound(
            &profile,
            "p-1",
            InboundEmail {
                text: Some("é".repeat(50)),
                ..InboundEmail::default()
            },
        ))
        .await
        .expect("stored");
    let inbox = inbox_of(&profile);
    let all = emails.page(inbox, None, None, 10, 10).await.expect("page");
    assert_eq!(all.len(), 4);
    assert!(all
        .windows(2)
        .all(|pair| (pair[0].created_at, pair[0].id) > (pair[1].created_at, pair[1].id)));
    assert_eq!(all[0].text.as_deref(), Some("é".repeat(10).as_str()));
    let after = domain::CursorPosition::of(all[1].created_at, all[1].id.0);
    let rest = emails
        .page(inbox, None, Some(after), 10, 10)
        .await
        .expect("page");
    assert_eq!(
        rest.iter().map(|m| m.id).collect::<Vec<_>>(),
        all[2..].iter().map(|m| m.id).collect::<Vec<_>>()
    );
    let outbound_only = emails
        .page(inbox, Some(Direction::Outbound), None, 10, 10)
        .await
        .expect("page");
    assert_eq!(outbound_only.len(), 3);
    let full = emails
        .message(inbox, all[0].id)
        .await
        .expect("read")
        .expect("found");
    assert_eq!(full.text.as_deref(), Some("é".repeat(50).as_str()));
}

#[tokio::test]
async fn every_change_to_an_inboxs_messages_moves_its_listing_version_and_only_its() {
    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, 48).await;
    let bystander = inbox_of(&agent_with_inbox(&database, 49).await);
    let emails = email_store(&database);
    let inbox = inbox_of(&profile);
    let untouched = ListingVersion {
        listing: Listing::Inbox(inbox),
        changes: 0,
    };
    assert_eq!(
        emails.listing_version(inbox).await.expect("read"),
        untouched
    );

    let message = outbound(&profile, "bob@example.com");
    emails
        .accept(message.clone(), throttle(&profile, ROOMY))
        .await
        .expect("accepted");
    let sent = emails.listing_version(inbox).await.expect("read");
    assert!(sent.changes > untouched.changes);

    let claimed = emails
        .claim_due(new_lease(), Duration::from_secs(60), &[])
        .await
        .expect("claimed")
        .expect("due");
    emails
        .record(
            message.id,
            claimed.lease,
            &JobOutcome::Failed("550 no such user".into()),
        )
        .await
        .expect("recorded");
    let failed = emails.listing_version(inbox).await.expect("read");
    assert!(failed.changes > sent.changes);

    let mail = InboundEmail {
        subject: Some("Your code".into()),
        ..InboundEmail::default()
    };
    emails
        .store_inbound(inbound(&profile, "p-v", mail.clone()))
        .await
        .expect("stored");
    let received = emails.listing_version(inbox).await.expect("read");
    assert!(received.changes > failed.changes);
    let (_, new) = emails
        .store_inbound(inbound(&profile, "p-v", mail))
        .await
        .expect("stored");
    assert!(!new);
    assert_eq!(
        emails.listing_version(inbox).await.expect("read"),
        received,
        "a redelivery changes no message"
    );
    assert_eq!(
        emails.listing_version(bystander).await.expect("read"),
        ListingVersion {
            listing: Listing::Inbox(bystander),
            changes: 0,
        }
    );
}

#[tokio::test]
async fn the_inbox_domain_starts_verified_and_others_do_not() {
    let database = TestDatabase::new().await;
    agent_with_inbox(&database, 48).await;
    let emails = email_store(&database);
    assert!(emails.domain_verified("inbox.test").await.expect("read"));
    assert!(emails.domain_verified("INBOX.test").await.expect("read"));
    assert!(!emails
        .domain_verified("elsewhere.test")
        .await
        .expect("read"));
    database
        .execute("UPDATE email_domains SET verified_at = NULL WHERE name = 'inbox.test'")
        .await;
    assert!(!emails.domain_verified("inbox.test").await.expect("read"));
}

#[tokio::test]
async fn each_agent_sends_within_its_share_and_all_within_their_sponsors_rate() {
    let database = TestDatabase::new().await;
    let (flooder, other) = (
        agent_with_inbox(&database, 46).await,
        agent_with_inbox(&database, 47).await,
    );
    assert_eq!(flooder.agent.sponsor_id, other.agent.sponsor_id);
    let emails = email_store(&database);
    let one = RateLimit {
        per_minute: 1,
        burst: 1,
    };
    let shares = |profile: &AgentProfile| SendThrottle {
        sponsor: profile.agent.sponsor_id,
        sponsor_limit: RateLimit {
            per_minute: 1,
            burst: 2,
        },
        agent_limit: one,
    };
    let send = |profile: &AgentProfile| {
        let emails = &emails;
        let (message, throttle) = (outbound(profile, "bob@example.com"), shares(profile));
        async move { emails.accept(message, throttle).await }
    };
    assert!(matches!(send(&flooder).await, Ok(Acceptance::Accepted(_))));
    for _ in 0..5 {
        assert!(
            matches!(
                send(&flooder).await,
                Err(AcceptError::Keyed(KeyedRefusal::RateLimited { .. }))
            ),
            "past its share"
        );
    }
    assert!(
        matches!(send(&other).await, Ok(Acceptance::Accepted(_))),
        "the flood took only the flooder's share of the sponsor's sends"
    );
    let third = agent_with_inbox(&database, 48).await;
    assert!(
        matches!(
            send(&third).await,
            Err(AcceptError::Keyed(KeyedRefusal::RateLimited { .. }))
        ),
        "the sponsor's own rate still holds"
    );
}

/// An attachment of inbound mail as the service keeps it: at `index`, its bytes stored.
fn kept_attachment(index: usize, name: &str, bytes: &[u8]) -> AttachmentBytes {
    AttachmentBytes {
        meta: domain::inbound::kept_attachment(
            index,
            &AttachmentMeta {
                id: AttachmentId::at_index(index),
                filename: Some(name.into()),
                content_type: "application/octet-stream".into(),
                size: bytes.len() as u64,
                content_id: None,
                stored: false,
                sha256: None,
            },
            Some(bytes),
            domain::DEFAULT_ATTACHMENT_MAX_BYTES,
        ),
        content: Some(Arc::from(bytes)),
    }
}

/// Every piece of an attachment, read as a download reads them.
async fn read_back(emails: &PgEmailStore, message: EmailMessageId, id: AttachmentId) -> Vec<u8> {
    let mut bytes = Vec::new();
    for index in 0.. {
        match emails.piece(message, id, index).await.expect("read") {
            Some(piece) => {
                assert!(piece.len() <= ATTACHMENT_PIECE_BYTES);
                bytes.extend(piece);
            }
            None => break,
        }
    }
    bytes
}

#[tokio::test]
async fn attachments_are_stored_with_their_message_in_pieces_and_read_back_whole() {
    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, 47).await;
    let emails = email_store(&database);
    let large: Vec<u8> = (0..ATTACHMENT_PIECE_BYTES * 2 + 7)
        .map(|n| (n % 251) as u8)
        .collect();
    let mut unstored = kept_attachment(2, "elsewhere.pdf", b"");
    unstored.meta.stored = false;
    unstored.meta.sha256 = None;
    unstored.content = None;
    let email = InboundEmail {
        from: Some("alice@example.org".into()),
        attachments: vec![
            kept_attachment(0, "large.bin", &large),
            kept_attachment(1, "empty.txt", b""),
            unstored,
        ],
        ..InboundEmail::default()
    };
    let (stored, new) = emails
        .store_inbound(inbound(&profile, "p-att", email.clone()))
        .await
        .expect("stored");
    assert!(new);
    let listed = emails
        .attachments(inbox_of(&profile), stored.id)
        .await
        .expect("read")
        .expect("the inbox's message");
    assert_eq!(
        listed,
        email
            .attachments
            .iter()
            .map(|a| a.meta.clone())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        stored.attachments, listed,
        "the message read lists the same"
    );
    let first = AttachmentId::at_index(0);
    assert_eq!(read_back(&emails, stored.id, first).await, large);
    assert_eq!(
        read_back(&emails, stored.id, AttachmentId::at_index(1)).await,
        b""
    );
    assert_eq!(
        read_back(&emails, stored.id, AttachmentId::at_index(2)).await,
        b""
    );

    let (_, new) = emails
        .store_inbound(inbound(&profile, "p-att", email))
        .await
        .expect("a redelivery");
    assert!(!new);
    assert_eq!(
        read_back(&emails, stored.id, first).await,
        large,
        "a redelivery writes no second copy"
    );

    let other = agent_with_inbox(&database, 48).await;
    assert_eq!(
        emails
            .attachments(inbox_of(&other), stored.id)
            .await
            .expect("read"),
        None,
        "another inbox does not see the message"
    );
}

#[tokio::test]
async fn an_outbound_messages_attachments_are_stored_with_it_and_claimed_without_their_bytes() {
    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, 43).await;
    let emails = email_store(&database);
    let large: Vec<u8> = (0..ATTACHMENT_PIECE_BYTES * 2 + 5)
        .map(|i| (i % 253) as u8)
        .collect();
    let message = NewOutboundEmail {
        attachments: vec![
            kept_attachment(0, "a.bin", &large),
            kept_attachment(1, "b.txt", b"note"),
        ],
        ..outbound(&profile, "bob@example.com")
    };
    let Acceptance::Accepted(stored) = emails
        .accept(message.clone(), throttle(&profile, ROOMY))
        .await
        .expect("accepted")
    else {
        panic!("a new message")
    };
    let metas: Vec<AttachmentMeta> = message.attachments.iter().map(|a| a.meta.clone()).collect();
    assert_eq!(stored.attachments, metas);
    let claimed = emails
        .claim_due(new_lease(), Duration::from_secs(60), &[])
        .await
        .expect("claimed")
        .expect("one due");
    let claimed_metas: Vec<AttachmentMeta> = claimed
        .job
        .attachments
        .iter()
        .map(|a| a.meta.clone())
        .collect();
    assert_eq!(claimed_metas, metas);
    assert!(
        claimed.job.attachments.iter().all(|a| a.content.is_none()),
        "bytes are read apart, for the hand-off alone"
    );
    assert_eq!(read_back(&emails, message.id, metas[0].id).await, large);
    assert_eq!(read_back(&emails, message.id, metas[1].id).await, b"note");
    assert_eq!(
        emails
            .attachments(inbox_of(&profile), message.id)
            .await
            .expect("read")
            .expect("listed"),
        metas
    );
}

#[tokio::test]
async fn bytes_put_elsewhere_are_owned_by_the_message_that_takes_their_unswept_record() {
    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, 44).await;
    let emails = email_store(&database);
    let mut elsewhere = kept_attachment(0, "a.bin", b"in the object store");
    elsewhere.content = None;
    let mail = |message_id: &str| InboundEmail {
        internet_message_id: Some(message_id.into()),
        attachments: vec![elsewhere.clone()],
        ..InboundEmail::default()
    };

    let recorded = inbound(&profile, "p-recorded", mail("<r@x>"));
    emails.record_upload(recorded.id).await.expect("recorded");
    let (stored, new) = emails
        .store_inbound(recorded.clone())
        .await
        .expect("stored");
    assert!(new);
    assert!(stored.attachments[0].stored);
    assert_eq!(
        emails
            .piece(recorded.id, stored.attachments[0].id, 0)
            .await
            .expect("read"),
        None,
        "no bytes in the database"
    );
    assert!(
        emails
            .stale_uploads(Duration::ZERO, 10)
            .await
            .expect("stale")
            .is_empty(),
        "the message took its record"
    );

    let unrecorded = inbound(&profile, "p-unrecorded", mail("<u@x>"));
    assert!(matches!(
        emails.store_inbound(unrecorded).await,
        Err(StoreError::Unavailable(_))
    ));

    let swept = inbound(&profile, "p-swept", mail("<s@x>"));
    emails.record_upload(swept.id).await.expect("recorded");
    assert_eq!(
        emails
            .stale_uploads(Duration::from_secs(3600), 10)
            .await
            .expect("stale"),
        Vec::<EmailMessageId>::new(),
        "a young record is no one's to sweep"
    );
    assert_eq!(
        emails
            .stale_uploads(Duration::ZERO, 10)
            .await
            .expect("stale"),
        vec![swept.id]
    );
    assert!(
        matches!(
            emails.store_inbound(swept.clone()).await,
            Err(StoreError::Unavailable(_))
        ),
        "a message whose bytes are being swept is not stored"
    );
    assert_eq!(
        emails
            .stale_uploads(Duration::from_secs(3600), 10)
            .await
            .expect("stale"),
        Vec::<EmailMessageId>::new(),
        "a sweep in hand is not taken again at once"
    );
    assert_eq!(
        emails
            .stale_uploads(Duration::ZERO, 10)
            .await
            .expect("stale"),
        vec![swept.id],
        "a sweep that died is taken up again"
    );
    emails.forget_uploads(&[swept.id]).await.expect("forgotten");
    assert!(emails
        .stale_uploads(Duration::ZERO, 10)
        .await
        .expect("stale")
        .is_empty());
    let inbox = emails
        .page(inbox_of(&profile), None, None, 10, 100)
        .await
        .expect("page");
    assert_eq!(inbox.len(), 1, "only the message that took its record");
}

#[tokio::test]
async fn a_message_whose_attachments_fail_to_store_is_not_stored_and_leaves_no_bytes() {
    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, 49).await;
    let emails = email_store(&database);
    // Two attachments claiming one id: the message and the first one's pieces are written,
    // then the second one's first piece breaks the primary key.
    let email = InboundEmail {
        from: Some("alice@example.org".into()),
        attachments: vec![
            kept_attachment(0, "a.bin", &[1; 1000]),
            kept_attachment(0, "b.bin", &[2; 1000]),
        ],
        ..InboundEmail::default()
    };
    let message = inbound(&profile, "p-orphan", email);
    assert!(emails.store_inbound(message.clone()).await.is_err());
    assert_eq!(
        emails
            .message(inbox_of(&profile), message.id)
            .await
            .expect("read"),
        None
    );
    let mut connection = diesel_async::AsyncPgConnection::establish(database.url())
        .await
        .expect("connect");
    let pieces: i64 = diesel_async::RunQueryDsl::get_result(
        diesel::dsl::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
            "(SELECT count(*) FROM email_attachment_pieces)",
        )),
        &mut connection,
    )
    .await
    .expect("counted");
    assert_eq!(pieces, 0);
    assert_eq!(
        emails
            .piece(message.id, AttachmentId::at_index(0), 0)
            .await
            .expect("read"),
        None
    );
}

#[tokio::test]
async fn sender_rules_are_replaced_whole_and_keep_their_count_of_kept_out_mail() {
    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, 50).await;
    let other = agent_with_inbox(&database, 51).await;
    let emails = email_store(&database);
    let agent = profile.agent.id;
    assert_eq!(
        emails.sender_rules(agent).await.expect("read"),
        (SenderRules::default(), 0)
    );
    // A redelivery of a kept-out mail brings its key again: counted once.
    for (delivery, counted) in [("d-1", true), ("d-2", true), ("d-1", false)] {
        assert_eq!(
            emails
                .count_kept_out(agent, delivery)
                .await
                .expect("counted"),
            counted,
            "{delivery}"
        );
    }
    let rules = SenderRules::new(
        &["@partner.example".into()],
        &["spam@partner.example".into()],
    )
    .expect("valid");
    assert_eq!(
        emails.set_sender_rules(agent, &rules).await.expect("set"),
        2
    );
    assert_eq!(
        emails.sender_rules(agent).await.expect("read"),
        (rules.clone(), 2)
    );
    assert_eq!(
        emails
            .rules_of(&[agent, other.agent.id])
            .await
            .expect("read"),
        [(agent, rules)],
        "only agents with rules"
    );
    let emptied = SenderRules::default();
    assert_eq!(
        emails.set_sender_rules(agent, &emptied).await.expect("set"),
        2
    );
    assert_eq!(
        emails.sender_rules(agent).await.expect("read"),
        (emptied, 2)
    );
    assert_eq!(
        emails.sender_rules(other.agent.id).await.expect("read").1,
        0
    );
    // Another agent's count of the same delivery is its own.
    assert!(emails
        .count_kept_out(other.agent.id, "d-1")
        .await
        .expect("counted"));
    assert_eq!(
        emails.sender_rules(other.agent.id).await.expect("read").1,
        1
    );
}

#[tokio::test]
async fn threads_are_kept_as_messages_are_stored_and_read_a_page_or_a_thread_at_a_time() {
    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, 52).await;
    let emails = email_store(&database);
    let inbox = inbox_of(&profile);
    let crowd: Vec<String> = (0..60).map(|n| format!("Guest{n}@example.org")).collect();
    let opening = InboundEmail {
        internet_message_id: Some("<open@example.org>".into()),
        subject: Some("Opening".into()),
        from: Some("Host@Example.org".into()),
        to: crowd,
        text: Some("first".into()),
        ..InboundEmail::default()
    };
    let (first, _) = emails
        .store_inbound(inbound(&profile, "p-open", opening))
        .await
        .expect("stored");
    let (other, _) = emails
        .store_inbound(inbound(
            &profile,
            "p-other",
            InboundEmail {
                subject: Some("Elsewhere".into()),
                from: Some("x@example.net".into()),
                ..InboundEmail::default()
            },
        ))
        .await
        .expect("stored");
    let answer = InboundEmail {
        in_reply_to: Some("<open@example.org>".into()),
        subject: Some("Re: Opening".into()),
        from: Some("host@example.org".into()),
        text: Some("second".into()),
        ..InboundEmail::default()
    };
    let (second, _) = emails
        .store_inbound(inbound(&profile, "p-answer", answer))
        .await
        .expect("stored");

    let page = emails.threads(inbox, None, 10).await.expect("page");
    assert_eq!(
        page.iter().map(|t| t.thread_id).collect::<Vec<_>>(),
        [first.thread_id, other.thread_id],
        "the thread answered last comes first"
    );
    let opened = &page[0];
    assert_eq!(opened.subject.as_deref(), Some("Opening"));
    assert_eq!(opened.message_count, 2);
    assert_eq!(opened.last_message_id, second.id);
    assert_eq!(opened.last_message_preview.as_deref(), Some("second"));
    assert_eq!(opened.participants.len(), 50, "the first fifty");
    assert_eq!(
        opened.participants[0], "host@example.org",
        "once, lowercased"
    );
    assert_eq!(opened.participants[1], "guest0@example.org");

    let after = domain::CursorPosition::of(opened.last_message_at, opened.thread_id.0);
    let rest = emails.threads(inbox, Some(after), 10).await.expect("page");
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].thread_id, other.thread_id);

    let newest = emails
        .thread(inbox, first.thread_id, 1)
        .await
        .expect("read")
        .expect("the thread");
    assert_eq!((newest.messages.len(), newest.message_count), (1, 2));
    assert_eq!(newest.messages[0].id, second.id);
    assert_eq!(newest.thread_id, first.thread_id);
    assert_eq!(
        (&newest.subject, &newest.participants),
        (&opened.subject, &opened.participants),
        "described as the page describes it, though its first message is left out"
    );
    let both = emails
        .thread(inbox, first.thread_id, 10)
        .await
        .expect("read")
        .expect("the thread");
    assert_eq!(
        both.messages.iter().map(|m| m.id).collect::<Vec<_>>(),
        [first.id, second.id],
        "oldest first"
    );
    let stranger = agent_with_inbox(&database, 53).await;
    assert_eq!(
        emails
            .thread(inbox_of(&stranger), first.thread_id, 10)
            .await
            .expect("read"),
        None
    );
}

#[tokio::test]
async fn an_inbound_mails_event_is_thin_whatever_its_sender_wrote() {
    use domain::events::thin;
    use ports::EventLog;

    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, 47).await;
    let emails = email_store(&database);
    let inbox_address = profile.email_inbox.as_ref().expect("inbox").address.clone();
    let long_name = "n".repeat(255);
    let mail = InboundEmail {
        subject: Some("é".repeat(3 * thin::SUBJECT_CHARS)),
        from: Some(format!(
            "{}@example.org",
            "a".repeat(2 * thin::ADDRESS_CHARS)
        )),
        to: vec![inbox_address.as_str().into()],
        text: Some("Hello".into()),
        attachments: (0..domain::inbound::MAX_KEPT_ATTACHMENTS)
            .map(|index| kept_attachment(index, &long_name, b"x"))
            .collect(),
        ..InboundEmail::default()
    };
    let mut message = inbound(&profile, "p-thin", mail);
    message.verification_codes = (0..3 * thin::CODES)
        .map(|index| format!("{:06}", 100_000 + index))
        .collect();
    emails.store_inbound(message).await.expect("stored");

    let log = postgres_store::PgEventLog::new(
        Database::connect(&database.connector(), PoolSettings::default()).expect("pool"),
    );
    let events = log
        .page(profile.agent.id, 0, domain::EventTypes::all(), 10)
        .await
        .expect("read");
    let [event] = events.as_slice() else {
        panic!("one event: {events:?}")
    };
    let domain::EventPayload::EmailReceived {
        from,
        subject,
        verification_codes,
        attachment_count,
        ..
    } = &event.payload
    else {
        panic!("an email.received event: {event:?}")
    };
    assert_eq!(
        subject.as_deref().map(|text| text.chars().count()),
        Some(thin::SUBJECT_CHARS)
    );
    assert_eq!(
        from.as_deref().map(|text| text.chars().count()),
        Some(thin::ADDRESS_CHARS)
    );
    assert_eq!(
        verification_codes,
        &(0..thin::CODES)
            .map(|index| format!("{:06}", 100_000 + index))
            .collect::<Vec<_>>(),
        "the most likely first"
    );
    assert_eq!(
        *attachment_count as usize,
        domain::inbound::MAX_KEPT_ATTACHMENTS
    );
}

/// Copies the message of `provider_id` `count` times as weaker matches of "invoice", made a
/// millisecond apart from `since`.
async fn weak_copies(
    database: &TestDatabase,
    provider_id: &str,
    count: usize,
    tag: &str,
    since: &str,
) {
    database
        .execute(&format!(
            "INSERT INTO email_messages (id, agent_id, inbox_id, direction, status, thread_id, \
                 provider_message_id, subject, from_address, to_addresses, body_text, created_at, \
                 received_at) \
             SELECT gen_random_uuid(), agent_id, inbox_id, direction, status, gen_random_uuid(), \
                 '{tag}-' || n, 'Weak', from_address, to_addresses, \
                 'invoice once among many other words of a longer text', \
                 '{since}'::timestamptz + n * interval '1 millisecond', received_at \
             FROM email_messages, generate_series(1, {count}) AS n \
             WHERE provider_message_id = '{provider_id}'"
        ))
        .await;
}

#[tokio::test]
async fn a_search_ranks_at_most_its_bound_of_matches_and_is_cut_at_its_time() {
    use domain::{SearchQuery, MAX_RANKED_MATCHES};

    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, 48).await;
    let emails = email_store(&database);
    let inbox = inbox_of(&profile);
    let strong = InboundEmail {
        subject: Some("invoice invoice invoice".into()),
        from: Some("billing@example.org".into()),
        to: vec![profile
            .email_inbox
            .as_ref()
            .expect("inbox")
            .address
            .as_str()
            .into()],
        text: Some("invoice invoice invoice".into()),
        ..InboundEmail::default()
    };
    let (strong, _) = emails
        .store_inbound(inbound(&profile, "p-strong", strong))
        .await
        .expect("stored");
    weak_copies(
        &database,
        "p-strong",
        MAX_RANKED_MATCHES - 1,
        "weak",
        "2030-01-01",
    )
    .await;
    let query = SearchQuery::parse("invoice").expect("a query");
    let first = |found: Vec<domain::EmailMessageRecord>| found[0].id;

    let found = emails
        .search(inbox, &query, None, 0, 5, 100)
        .await
        .expect("searched");
    assert_eq!(
        first(found),
        strong.id,
        "the best match first, though the oldest"
    );

    let hurried = email_store(&database).with_search_timeout(Duration::from_millis(1));
    assert!(matches!(
        hurried.search(inbox, &query, None, 0, 5, 100).await,
        Err(StoreError::TimedOut(_))
    ));

    weak_copies(&database, "p-strong", 1, "newest", "2031-01-01").await;
    let found = emails
        .search(inbox, &query, None, 0, 5, 100)
        .await
        .expect("searched");
    assert_eq!(
        found[0].provider_message_id.as_deref(),
        Some("newest-1"),
        "past the bound, the newest first"
    );
}

#[tokio::test]
async fn the_senders_authentication_and_service_are_kept_and_older_rows_filled_once() {
    let database = TestDatabase::new().await;
    let profile = agent_with_inbox(&database, 47).await;
    let emails = email_store(&database);
    let passed = SenderAuthentication::Passed {
        domain: "bank.example".into(),
    };
    let mut stored = Vec::new();
    for provider_id in ["p-kept", "p-older"] {
        let message = NewInboundEmail {
            service_name: Some("Bank".into()),
            ..inbound(
                &profile,
                provider_id,
                InboundEmail {
                    from: Some("alerts@bank.example".into()),
                    subject: Some(format!("code {provider_id}")),
                    to: vec![inbox_address(&profile)],
                    headers: vec![("Received".into(), "by mx".into())],
                    sender_authentication: passed.clone(),
                    ..InboundEmail::default()
                },
            )
        };
        emails.store_inbound(message.clone()).await.expect("stored");
        stored.push(message.id);
    }
    let kept = emails_read(&database, &profile, stored[0]).await;
    assert_eq!(
        (kept.sender_authentication, kept.service_name.as_deref()),
        (passed.clone(), Some("Bank"))
    );

    // As a row written before migration 000034: nothing read of it yet.
    let mut connection = diesel_async::AsyncPgConnection::establish(database.url())
        .await
        .expect("connect");
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query(format!(
            "UPDATE email_messages SET sender_authentication = NULL, authenticated_domain = NULL, \
             service_name = NULL WHERE id = '{}'",
            stored[1].0
        )),
        &mut connection,
    )
    .await
    .expect("forgotten");
    let unfilled = emails_read(&database, &profile, stored[1]).await;
    assert_eq!(
        (unfilled.sender_authentication, unfilled.service_name),
        (SenderAuthentication::Unreported, None)
    );

    let subjects = std::sync::Mutex::new(Vec::new());
    let filled = fill_inbound_mail_facts(&database.connector(), |mail| {
        subjects.lock().expect("not poisoned").push((
            mail.subject.map(str::to_owned),
            mail.from.map(str::to_owned),
            mail.headers.len(),
        ));
        (SenderAuthentication::Failed, Some("Filled".into()))
    })
    .await
    .expect("filled");
    assert_eq!(filled, 1, "only the row left unfilled");
    assert_eq!(
        subjects.into_inner().expect("not poisoned"),
        [(
            Some("code p-older".to_owned()),
            Some("alerts@bank.example".to_owned()),
            1
        )]
    );
    let filled_row = emails_read(&database, &profile, stored[1]).await;
    assert_eq!(
        (
            filled_row.sender_authentication,
            filled_row.service_name.as_deref()
        ),
        (SenderAuthentication::Failed, Some("Filled"))
    );
    assert_eq!(
        emails_read(&database, &profile, stored[0])
            .await
            .service_name
            .as_deref(),
        Some("Bank")
    );
    let again =
        fill_inbound_mail_facts(&database.connector(), |_| panic!("nothing is left to fill"))
            .await
            .expect("filled");
    assert_eq!(again, 0);
}

fn inbox_address(profile: &AgentProfile) -> String {
    profile
        .email_inbox
        .as_ref()
        .expect("inbox")
        .address
        .as_str()
        .to_owned()
}

async fn emails_read(
    database: &TestDatabase,
    profile: &AgentProfile,
    id: EmailMessageId,
) -> domain::EmailMessageRecord {
    email_store(database)
        .message(inbox_of(profile), id)
        .await
        .expect("read")
        .expect("stored")
}
