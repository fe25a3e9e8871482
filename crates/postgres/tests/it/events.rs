use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use domain::{
    EventPayload, EventType, EventTypes, LeaseId, Targets, WebhookEndpointId, WebhookUrl,
};
use ports::{
    AgentStore, EndpointRefusal, EventLog, JobOutcome, LeasedQueue, NewWebhookEndpoint, SmsStore,
    WebhookDelivery, WebhookEndpoints,
};
use postgres_store::{Database, PgEventLog, PgWebhookStore, PoolSettings};
use test_support::TestDatabase;
use uuid::Uuid;

use crate::agents::{full_agent, store};
use crate::sms::{inbound, sms_store};

fn pool(database: &TestDatabase) -> Database {
    Database::connect(&database.connector(), PoolSettings::default()).expect("pool")
}

fn endpoint(types: Option<EventTypes>) -> NewWebhookEndpoint {
    NewWebhookEndpoint {
        id: WebhookEndpointId(Uuid::now_v7()),
        url: WebhookUrl::parse("https://hooks.example.com/in", Targets::PublicOnly).expect("url"),
        types,
        description: None,
        secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".into(),
    }
}

#[tokio::test]
async fn a_reader_following_seq_never_sees_a_gap_while_several_instances_write() {
    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(81), &crate::actor())
        .await
        .expect("created");
    const WRITERS: usize = 4;
    const EACH: usize = 40;
    // Each writer has a pool of its own, as an instance of the server would.
    let writers = (0..WRITERS).map(|writer| {
        let sms = sms_store(&database);
        let profile = profile.clone();
        tokio::spawn(async move {
            for n in 0..EACH {
                let message = inbound(&profile, &format!("SM{writer}-{n}"), "code 123456");
                sms.store(vec![message]).await.expect("stored");
            }
        })
    });
    let writers: Vec<_> = writers.collect();
    let log = PgEventLog::new(pool(&database));
    let mut seen = 0u64;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while seen < (WRITERS * EACH) as u64 {
        assert!(tokio::time::Instant::now() < deadline, "stalled at {seen}");
        let page = log
            .page(profile.agent.id, seen, EventTypes::all(), 7)
            .await
            .expect("read");
        for event in page {
            assert_eq!(event.seq, seen + 1, "a gap or a disorder after {seen}");
            assert_eq!(event.event_type, EventType::SmsReceived);
            seen = event.seq;
        }
    }
    for writer in writers {
        writer.await.expect("writer");
    }
    let rest = log
        .page(profile.agent.id, seen, EventTypes::all(), 10)
        .await
        .expect("read");
    assert!(rest.is_empty(), "more events than changes: {rest:?}");
}

#[tokio::test]
async fn a_change_that_never_commits_leaves_no_event_and_takes_no_seq() {
    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(82), &crate::actor())
        .await
        .expect("created");
    let number = profile.phone_number.clone().expect("number");
    // A change cut off before its commit, as by a server killed mid-change: its connection
    // closes with the transaction open.
    let held = database
        .hold(&format!(
            "INSERT INTO sms_messages (id, agent_id, phone_number_id, direction, provider, \
             provider_message_id, source, from_number, to_number, body) VALUES \
             (gen_random_uuid(), '{}', '{}', 'inbound', 'sandbox', 'SMcut', 'webhook', \
             '+15550001111', '{}', 'cut off')",
            profile.agent.id,
            number.id,
            number.number.as_str()
        ))
        .await;
    drop(held);
    sms_store(&database)
        .store(vec![inbound(&profile, "SMkept", "kept")])
        .await
        .expect("stored");
    let log = PgEventLog::new(pool(&database));
    let events = log
        .page(profile.agent.id, 0, EventTypes::all(), 10)
        .await
        .expect("read");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].seq, 1, "the cut-off change took no number");
    let EventPayload::SmsReceived { from_number, .. } = &events[0].payload else {
        panic!("{:?}", events[0].payload)
    };
    assert_eq!(from_number, "+15550001111");
}

#[tokio::test]
async fn retention_removes_old_events_and_readers_are_told_how_far() {
    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(83), &crate::actor())
        .await
        .expect("created");
    let sms = sms_store(&database);
    for n in 0..3 {
        sms.store(vec![inbound(&profile, &format!("SM{n}"), "hello")])
            .await
            .expect("stored");
    }
    database
        .execute("UPDATE events SET created_at = now() - interval '40 days' WHERE seq <= 2")
        .await;
    let log = PgEventLog::new(pool(&database));
    let thirty_days = Duration::from_secs(30 * 86_400);
    assert_eq!(
        log.prune(thirty_days, 1).await.expect("pruned"),
        1,
        "one batch of one"
    );
    assert_eq!(log.prune(thirty_days, 100).await.expect("pruned"), 1);
    assert_eq!(log.prune(thirty_days, 100).await.expect("pruned"), 0);
    let bounds = log.bounds(profile.agent.id).await.expect("bounds");
    assert_eq!(bounds.pruned_through, 2);
    assert!(bounds.must_reset(0) && bounds.must_reset(1) && !bounds.must_reset(2));
    let kept = log
        .page(profile.agent.id, 0, EventTypes::all(), 10)
        .await
        .expect("read");
    assert_eq!(kept.iter().map(|event| event.seq).collect::<Vec<_>>(), [3]);
}

#[tokio::test]
async fn an_agent_holds_at_most_its_endpoints_even_when_created_at_once() {
    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(84), &crate::actor())
        .await
        .expect("created");
    let webhooks = Arc::new(PgWebhookStore::new(pool(&database)));
    let attempts = (0..15).map(|_| {
        let webhooks = webhooks.clone();
        let agent = profile.agent.id;
        tokio::spawn(async move { webhooks.create(agent, endpoint(None), 10).await })
    });
    let mut created = 0;
    for attempt in attempts.collect::<Vec<_>>() {
        match attempt.await.expect("task") {
            Ok(_) => created += 1,
            Err(EndpointRefusal::TooMany) => {}
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(created, 10);
    assert_eq!(
        webhooks.list(profile.agent.id).await.expect("list").len(),
        10
    );
}

/// Claims the due delivery, failing the test when none is.
async fn claim(webhooks: &PgWebhookStore) -> (WebhookDelivery, LeaseId) {
    let lease = LeaseId(Uuid::now_v7());
    let claimed =
        LeasedQueue::<WebhookDelivery>::claim_due(webhooks, lease, Duration::from_secs(60))
            .await
            .expect("claim")
            .expect("a delivery is due");
    (claimed.job, lease)
}

#[tokio::test]
async fn deliveries_are_queued_for_the_types_an_endpoint_wants_and_claimed_once() {
    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(85), &crate::actor())
        .await
        .expect("created");
    let webhooks = PgWebhookStore::new(pool(&database));
    let agent = profile.agent.id;
    let wants_sms = webhooks
        .create(
            agent,
            endpoint(Some(EventTypes::of([EventType::SmsReceived]))),
            10,
        )
        .await
        .expect("created");
    webhooks
        .create(
            agent,
            endpoint(Some(EventTypes::of([EventType::EmailReceived]))),
            10,
        )
        .await
        .expect("created");
    sms_store(&database)
        .store(vec![inbound(&profile, "SM1", "code 123456")])
        .await
        .expect("stored");
    let (delivery, lease) = claim(&webhooks).await;
    assert_eq!(delivery.endpoint, wants_sms.id);
    assert_eq!(delivery.event.seq, 1);
    assert_eq!(delivery.attempt, 1);
    assert_eq!(delivery.secrets.len(), 1);
    let again = LeasedQueue::<WebhookDelivery>::claim_due(
        &webhooks,
        LeaseId(Uuid::now_v7()),
        Duration::from_secs(60),
    )
    .await
    .expect("claim");
    assert!(
        again.is_none(),
        "claimed once, and the other endpoint wants no SMS"
    );
    assert!(webhooks
        .record(delivery.id, lease, &JobOutcome::Done(200))
        .await
        .expect("recorded"));
    // A replay queues the event again, for the same event id; while that delivery is still
    // pending, another replay queues nothing more.
    for queued in [1, 0] {
        assert_eq!(
            webhooks
                .replay(agent, wants_sms.id, 0)
                .await
                .expect("replay"),
            Some(queued)
        );
    }
    let (replayed, _) = claim(&webhooks).await;
    assert_eq!(replayed.event.id, delivery.event.id);
    assert_ne!(replayed.id, delivery.id);
}

#[tokio::test]
async fn an_endpoint_failing_for_five_days_is_disabled_and_its_queue_fails() {
    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(86), &crate::actor())
        .await
        .expect("created");
    let webhooks = PgWebhookStore::new(pool(&database));
    let agent = profile.agent.id;
    let created = webhooks
        .create(agent, endpoint(None), 10)
        .await
        .expect("created");
    let sms = sms_store(&database);
    for n in 0..2 {
        sms.store(vec![inbound(&profile, &format!("SM{n}"), "hi")])
            .await
            .expect("stored");
    }
    let (first, lease) = claim(&webhooks).await;
    let retry = JobOutcome::Retry {
        error: "HTTP 500".into(),
        wait: Duration::ZERO,
    };
    assert!(webhooks
        .record(first.id, lease, &retry)
        .await
        .expect("recorded"));
    let still = webhooks
        .get(agent, created.id)
        .await
        .expect("read")
        .expect("found");
    assert!(still.enabled, "a day's failures do not disable it");
    database
        .execute("UPDATE webhook_endpoints SET failing_since = now() - interval '6 days'")
        .await;
    let (next, lease) = claim(&webhooks).await;
    assert!(webhooks
        .record(next.id, lease, &retry)
        .await
        .expect("recorded"));
    let disabled = webhooks
        .get(agent, created.id)
        .await
        .expect("read")
        .expect("found");
    assert!(!disabled.enabled);
    assert_eq!(
        disabled.disabled_reason.as_deref(),
        Some("every delivery failed for 5 days")
    );
    let statuses: HashSet<String> = diesel_async::RunQueryDsl::load::<String>(
        diesel::dsl::sql::<diesel::sql_types::Text>("SELECT status FROM webhook_deliveries"),
        &mut database.connection().await,
    )
    .await
    .expect("statuses")
    .into_iter()
    .collect();
    assert_eq!(statuses, HashSet::from(["failed".to_owned()]));
}

#[tokio::test]
async fn deleting_an_endpoint_waits_for_a_failure_being_settled_instead_of_deadlocking() {
    use diesel_async::SimpleAsyncConnection;

    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(87), &crate::actor())
        .await
        .expect("created");
    let webhooks = Arc::new(PgWebhookStore::new(pool(&database)));
    let agent = profile.agent.id;
    let created = webhooks
        .create(agent, endpoint(None), 10)
        .await
        .expect("created");
    sms_store(&database)
        .store(vec![inbound(&profile, "SM1", "hi")])
        .await
        .expect("stored");
    let (delivery, _) = claim(&webhooks).await;
    // A failed attempt being settled holds its delivery's row, then takes its endpoint's to
    // continue the failing spell (record_failure).
    let mut settling = database.connection().await;
    settling
        .batch_execute(&format!(
            "BEGIN; UPDATE webhook_deliveries SET last_error = 'HTTP 500' WHERE id = '{}'",
            delivery.id.0
        ))
        .await
        .expect("the delivery's row");
    let deleting = {
        let webhooks = webhooks.clone();
        tokio::spawn(async move { webhooks.delete(agent, created.id).await })
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !database
        .sessions()
        .await
        .iter()
        .any(|session| session.waiting_for_lock)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the delete never waited"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    settling
        .batch_execute(&format!(
            "UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, now()) \
             WHERE id = '{}'; COMMIT",
            created.id.0
        ))
        .await
        .expect("the settlement takes the endpoint's row and commits");
    assert_eq!(deleting.await.expect("joined"), Ok(true));
}
