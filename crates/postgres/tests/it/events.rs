use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use domain::{
    AgentId, AgentKey, AgentProfile, EventPayload, EventType, EventTypes, LeaseId, RateLimit,
    Targets, WebhookEndpointId, WebhookUrl, DEACTIVATED_AGENT_REASON, ROTATED_KEY_REASON,
};
use ports::{
    events_topic, AgentStore, EndpointRefusal, EventLog, JobOutcome, LeasedQueue,
    NewWebhookEndpoint, Notifications, Replayed, SmsStore, WebhookDelivery, WebhookDeliveryLog,
    WebhookEndpointChanges, WebhookEndpointStore, EVERY_AGENTS_EVENTS_TOPIC,
};
use postgres_store::{Database, PgEventLog, PgWebhookStore, PoolSettings, NOTIFICATION_CHANNEL};
use test_support::TestDatabase;
use uuid::Uuid;

use crate::agents::{full_agent, key_of, store};
use crate::sms::{inbound, sms_store};
use domain::keys::KeyId;

fn pool(database: &TestDatabase) -> Database {
    Database::connect(&database.connector(), PoolSettings::default()).expect("pool")
}

/// An endpoint the agent's key in force makes.
fn endpoint_of(profile: &AgentProfile, types: Option<EventTypes>) -> NewWebhookEndpoint {
    NewWebhookEndpoint {
        id: WebhookEndpointId(Uuid::now_v7()),
        url: WebhookUrl::parse("https://hooks.example.com/in", Targets::PublicOnly).expect("url"),
        types,
        description: None,
        secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".into(),
        key: key_of(profile.agent.id).hash(),
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
        let endpoint = endpoint_of(&profile, None);
        tokio::spawn(async move { webhooks.create(agent, endpoint, 10, None).await })
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
        LeasedQueue::<WebhookDelivery>::claim_due(webhooks, lease, Duration::from_secs(60), &[])
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
            endpoint_of(&profile, Some(EventTypes::of([EventType::SmsReceived]))),
            10,
            None,
        )
        .await
        .expect("created")
        .answer
        .0;
    webhooks
        .create(
            agent,
            endpoint_of(&profile, Some(EventTypes::of([EventType::EmailReceived]))),
            10,
            None,
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
        &[],
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
    // A replay queues the event again, for the same event id; while that delivery waits,
    // another replay queues nothing more.
    for queued in [1, 0] {
        assert_eq!(
            webhooks
                .replay(agent, wants_sms.id, 0, None, None)
                .await
                .expect("replay"),
            Some(Replayed::Queued(queued))
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
        .create(agent, endpoint_of(&profile, None), 10, None)
        .await
        .expect("created")
        .answer
        .0;
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
        .create(agent, endpoint_of(&profile, None), 10, None)
        .await
        .expect("created")
        .answer
        .0;
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

/// Every delivery's status, by the endpoint it is for.
async fn statuses_of(database: &TestDatabase, endpoint: WebhookEndpointId) -> Vec<String> {
    diesel_async::RunQueryDsl::load::<String>(
        diesel::dsl::sql::<diesel::sql_types::Text>(&format!(
            "SELECT status FROM webhook_deliveries WHERE endpoint_id = '{}' ORDER BY created_at",
            endpoint.0
        )),
        &mut database.connection().await,
    )
    .await
    .expect("statuses")
}

async fn claim_none(webhooks: &PgWebhookStore, full: &[AgentId]) -> bool {
    LeasedQueue::<WebhookDelivery>::claim_due(
        webhooks,
        LeaseId(Uuid::now_v7()),
        Duration::from_secs(60),
        full,
    )
    .await
    .expect("claim")
    .is_none()
}

#[tokio::test]
async fn nothing_is_queued_or_claimed_for_an_inactive_agent() {
    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(88), &crate::actor())
        .await
        .expect("created");
    let webhooks = PgWebhookStore::new(pool(&database));
    let created = webhooks
        .create(profile.agent.id, endpoint_of(&profile, None), 10, None)
        .await
        .expect("created")
        .answer
        .0;
    let sms = sms_store(&database);
    sms.store(vec![inbound(&profile, "SM1", "code 123456")])
        .await
        .expect("stored");
    // Deactivated by a statement of its own: the queued delivery stays pending.
    database
        .execute(&format!(
            "UPDATE agents SET is_active = false WHERE id = '{}'",
            profile.agent.id
        ))
        .await;
    assert!(
        claim_none(&webhooks, &[]).await,
        "the queued one is not claimed"
    );
    sms.store(vec![inbound(&profile, "SM2", "code 654321")])
        .await
        .expect("stored");
    assert_eq!(
        statuses_of(&database, created.id).await,
        ["pending"],
        "the later event queued nothing"
    );
}

#[tokio::test]
async fn a_rotation_disables_the_endpoints_of_the_old_key_until_the_new_key_enables_them() {
    let database = TestDatabase::new().await;
    let agents = store(&database);
    let profile = agents
        .create(full_agent(89), &crate::actor())
        .await
        .expect("created");
    let agent = profile.agent.id;
    let webhooks = PgWebhookStore::new(pool(&database));
    let created = webhooks
        .create(agent, endpoint_of(&profile, None), 10, None)
        .await
        .expect("created")
        .answer
        .0;
    let sms = sms_store(&database);
    sms.store(vec![inbound(&profile, "SM1", "code 123456")])
        .await
        .expect("stored");

    let new_key = AgentKey::from_random_bytes([90; 32]).hash();
    let disabled = agents
        .replace_first_key(agent, KeyId::generate(), new_key, &crate::actor())
        .await
        .expect("rotated")
        .expect("found");
    assert_eq!(disabled.len(), 1, "{disabled:?}");
    assert_eq!(disabled[0].id, created.id);
    assert!(!disabled[0].enabled);
    assert_eq!(
        disabled[0].disabled_reason.as_deref(),
        Some(ROTATED_KEY_REASON)
    );
    assert_eq!(statuses_of(&database, created.id).await, ["failed"]);
    assert!(claim_none(&webhooks, &[]).await);
    sms.store(vec![inbound(&profile, "SM2", "code 654321")])
        .await
        .expect("stored");
    assert_eq!(statuses_of(&database, created.id).await, ["failed"]);

    // The old key enables nothing and makes nothing; the new key's enabling makes it its own.
    let enabling = || WebhookEndpointChanges {
        enabled: Some(true),
        ..WebhookEndpointChanges::default()
    };
    assert!(matches!(
        webhooks
            .update(agent, created.id, enabling(), key_of(agent).hash())
            .await,
        Err(EndpointRefusal::KeyRevoked)
    ));
    assert!(matches!(
        webhooks
            .create(agent, endpoint_of(&profile, None), 10, None)
            .await,
        Err(EndpointRefusal::KeyRevoked)
    ));
    let enabled = webhooks
        .update(agent, created.id, enabling(), new_key)
        .await
        .expect("enabled")
        .expect("found");
    assert!(enabled.enabled && enabled.disabled_reason.is_none());
    sms.store(vec![inbound(&profile, "SM3", "code 111111")])
        .await
        .expect("stored");
    let (delivery, _) = claim(&webhooks).await;
    assert_eq!((delivery.endpoint, delivery.event.seq), (created.id, 3));

    assert!(agents
        .deactivate(agent, &crate::actor())
        .await
        .expect("deactivated"));
    let after = webhooks
        .get(agent, created.id)
        .await
        .expect("read")
        .expect("found");
    assert_eq!(
        (after.enabled, after.disabled_reason.as_deref()),
        (false, Some(DEACTIVATED_AGENT_REASON))
    );
    assert_eq!(
        statuses_of(&database, created.id).await,
        ["failed", "failed"],
        "the delivery under way is the deactivation's to fail, its record refused"
    );
}

/// The deliverers' turns: a claim serves the agent whose turn is oldest, then sends it behind
/// every agent waiting, so one agent's backlog delays another's delivery by one claim.
#[tokio::test]
async fn deliveries_are_claimed_round_robin_by_agent_and_a_full_agent_is_passed_over() {
    let database = TestDatabase::new().await;
    let agents = store(&database);
    let busy = agents
        .create(full_agent(91), &crate::actor())
        .await
        .expect("created");
    let quiet = agents
        .create(full_agent(92), &crate::actor())
        .await
        .expect("created");
    let webhooks = PgWebhookStore::new(pool(&database));
    for profile in [&busy, &quiet] {
        webhooks
            .create(profile.agent.id, endpoint_of(profile, None), 10, None)
            .await
            .expect("created");
    }
    let sms = sms_store(&database);
    for n in 0..5 {
        sms.store(vec![inbound(&busy, &format!("SMb{n}"), "hello")])
            .await
            .expect("stored");
    }
    sms.store(vec![inbound(&quiet, "SMq", "hello")])
        .await
        .expect("stored");

    let mut order = Vec::new();
    for _ in 0..6 {
        let (delivery, _) = claim(&webhooks).await;
        order.push((delivery.agent == quiet.agent.id, delivery.event.seq));
    }
    assert_eq!(
        order,
        [
            (false, 1),
            (true, 1),
            (false, 2),
            (false, 3),
            (false, 4),
            (false, 5)
        ],
        "the quiet agent's one delivery comes second, not after the busy one's backlog"
    );

    sms.store(vec![inbound(&busy, "SMb5", "hello")])
        .await
        .expect("stored");
    assert!(
        claim_none(&webhooks, &[busy.agent.id]).await,
        "an agent holding all its places is passed over"
    );
    let (delivery, _) = claim(&webhooks).await;
    assert_eq!((delivery.agent, delivery.event.seq), (busy.agent.id, 6));
}

#[tokio::test]
async fn a_replay_delivers_again_an_event_being_attempted_and_brings_a_waiting_one_forward() {
    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(93), &crate::actor())
        .await
        .expect("created");
    let agent = profile.agent.id;
    let webhooks = PgWebhookStore::new(pool(&database));
    let created = webhooks
        .create(agent, endpoint_of(&profile, None), 10, None)
        .await
        .expect("created")
        .answer
        .0;
    sms_store(&database)
        .store(vec![inbound(&profile, "SM1", "code 123456")])
        .await
        .expect("stored");

    // Replayed while its delivery is under way: the attempt may end delivered a moment later,
    // so the replay queues the event anew.
    let (attempted, lease) = claim(&webhooks).await;
    assert_eq!(
        webhooks
            .replay(agent, created.id, 0, None, None)
            .await
            .expect("replay"),
        Some(Replayed::Queued(1))
    );
    assert!(webhooks
        .record(attempted.id, lease, &JobOutcome::Done(200))
        .await
        .expect("recorded"));
    let (again, lease) = claim(&webhooks).await;
    assert_eq!(again.event.id, attempted.event.id);
    assert_ne!(again.id, attempted.id);

    // Waiting an hour for its next attempt, it is brought forward, not queued twice.
    let hour = JobOutcome::Retry {
        error: "HTTP 500".into(),
        wait: Duration::from_secs(3600),
    };
    assert!(webhooks
        .record(again.id, lease, &hour)
        .await
        .expect("recorded"));
    assert!(claim_none(&webhooks, &[]).await, "not due for an hour");
    assert_eq!(
        webhooks
            .replay(agent, created.id, 0, None, None)
            .await
            .expect("replay"),
        Some(Replayed::Queued(1))
    );
    let (brought, _) = claim(&webhooks).await;
    assert_eq!(brought.id, again.id);
    assert_eq!(
        statuses_of(&database, created.id).await,
        ["delivered", "pending"]
    );

    // An agent's replays take from the endpoint's bucket.
    let rate = RateLimit {
        per_minute: 1,
        burst: 1,
    };
    assert!(matches!(
        webhooks
            .replay(agent, created.id, 0, Some(rate), None)
            .await,
        Ok(Some(Replayed::Queued(_)))
    ));
    assert!(matches!(
        webhooks.replay(agent, created.id, 0, Some(rate), None).await,
        Ok(Some(Replayed::Limited { retry_after })) if retry_after > Duration::from_secs(50)
    ));
}

#[tokio::test]
async fn a_rotated_secret_signs_beside_the_newest_and_older_ones_stop() {
    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(94), &crate::actor())
        .await
        .expect("created");
    let agent = profile.agent.id;
    let webhooks = PgWebhookStore::new(pool(&database));
    let created = webhooks
        .create(agent, endpoint_of(&profile, None), 10, None)
        .await
        .expect("created")
        .answer
        .0;
    let secrets: Vec<String> = (0..5).map(|n| format!("whsec_secret{n}")).collect();
    for secret in &secrets {
        webhooks
            .rotate_secret(
                agent,
                created.id,
                secret.clone(),
                Duration::from_secs(86_400),
                None,
            )
            .await
            .expect("rotated")
            .expect("found");
    }
    sms_store(&database)
        .store(vec![inbound(&profile, "SM1", "hi")])
        .await
        .expect("stored");
    let (delivery, _) = claim(&webhooks).await;
    assert_eq!(delivery.secrets, [secrets[4].clone(), secrets[3].clone()]);
}

/// Events written while the deliverers of two instances claim and settle them: every delivery is
/// claimed, whatever order the writes, the leases and the turns' moves took. (A claim reading its
/// event in a snapshot taken before the event committed once left its delivery leased and
/// unreturned.)
#[tokio::test]
async fn deliveries_queued_while_others_are_claimed_are_all_claimed() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(95), &crate::actor())
        .await
        .expect("created");
    PgWebhookStore::new(pool(&database))
        .create(profile.agent.id, endpoint_of(&profile, None), 10, None)
        .await
        .expect("created");
    const WRITERS: usize = 4;
    const EACH: usize = 30;
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let sms = sms_store(&database);
            let profile = profile.clone();
            tokio::spawn(async move {
                for n in 0..EACH {
                    let message = inbound(&profile, &format!("SM{writer}-{n}"), "hello");
                    sms.store(vec![message]).await.expect("stored");
                }
            })
        })
        .collect();
    let delivered = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut deliverers = Vec::new();
    for _instance in 0..2 {
        let webhooks = Arc::new(PgWebhookStore::new(pool(&database)));
        for _ in 0..6 {
            let (webhooks, delivered, stop) = (webhooks.clone(), delivered.clone(), stop.clone());
            deliverers.push(tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let lease = LeaseId(Uuid::now_v7());
                    let claimed = LeasedQueue::<WebhookDelivery>::claim_due(
                        &*webhooks,
                        lease,
                        Duration::from_secs(60),
                        &[],
                    )
                    .await
                    .expect("claim");
                    let Some(claimed) = claimed else {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        continue;
                    };
                    assert!(webhooks
                        .record(claimed.job.id, lease, &JobOutcome::Done(200))
                        .await
                        .expect("recorded"));
                    delivered.fetch_add(1, Ordering::SeqCst);
                }
            }));
        }
    }
    for writer in writers {
        writer.await.expect("writer");
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while delivered.load(Ordering::SeqCst) < WRITERS * EACH {
        if std::time::Instant::now() > deadline {
            let pending: Vec<String> = diesel_async::RunQueryDsl::load::<String>(
                diesel::dsl::sql::<diesel::sql_types::Text>(
                    "SELECT event_seq || ' due ' || next_attempt_at::text || ' leased until ' \
                         || coalesce(lease_until::text, '-') \
                     FROM webhook_deliveries WHERE status = 'pending'",
                ),
                &mut database.connection().await,
            )
            .await
            .expect("pending");
            panic!(
                "{} of {} delivered; pending: {pending:?}",
                delivered.load(Ordering::SeqCst),
                WRITERS * EACH
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, Ordering::SeqCst);
    for deliverer in deliverers {
        deliverer.await.expect("deliverer");
    }
}

#[tokio::test]
async fn a_claim_given_back_is_due_again_at_once() {
    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(96), &crate::actor())
        .await
        .expect("created");
    let webhooks = PgWebhookStore::new(pool(&database));
    webhooks
        .create(profile.agent.id, endpoint_of(&profile, None), 10, None)
        .await
        .expect("created");
    sms_store(&database)
        .store(vec![inbound(&profile, "SM1", "hi")])
        .await
        .expect("stored");
    let (claimed, lease) = claim(&webhooks).await;
    assert!(claim_none(&webhooks, &[]).await, "leased");
    LeasedQueue::<WebhookDelivery>::release(&webhooks, lease)
        .await
        .expect("given back");
    let (again, _) = claim(&webhooks).await;
    assert_eq!(again.id, claimed.id);
}

#[tokio::test]
async fn a_retry_is_claimed_when_it_falls_due_not_when_its_old_lease_would_have_lapsed() {
    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(97), &crate::actor())
        .await
        .expect("created");
    let webhooks = PgWebhookStore::new(pool(&database));
    webhooks
        .create(profile.agent.id, endpoint_of(&profile, None), 10, None)
        .await
        .expect("created");
    sms_store(&database)
        .store(vec![inbound(&profile, "SM1", "hi")])
        .await
        .expect("stored");
    let (first, lease) = claim(&webhooks).await;
    // Looked at while its one delivery is under way, the agent's turn waits for that lease.
    assert!(claim_none(&webhooks, &[]).await);
    let soon = JobOutcome::Retry {
        error: "HTTP 500".into(),
        wait: Duration::from_millis(200),
    };
    assert!(webhooks
        .record(first.id, lease, &soon)
        .await
        .expect("recorded"));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let lease = LeaseId(Uuid::now_v7());
        let claimed = LeasedQueue::<WebhookDelivery>::claim_due(
            &webhooks,
            lease,
            Duration::from_secs(60),
            &[],
        )
        .await
        .expect("claim");
        if let Some(claimed) = claimed {
            assert_eq!((claimed.job.id, claimed.attempts), (first.id, 2));
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the retry waited for the 60 s lease"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A listener of the test's own on the notification channel: every payload published, in commit
/// order.
pub(crate) async fn raw_listener(
    database: &TestDatabase,
) -> (
    tokio_postgres::Client,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let url = database.url_with_tls(&[("sslmode", "disable")]);
    let (client, mut connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("a plain connection");
    let (heard, hearing) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages =
            futures_util::stream::poll_fn(move |context| connection.poll_message(context));
        while let Some(Ok(message)) = futures_util::StreamExt::next(&mut messages).await {
            if let tokio_postgres::AsyncMessage::Notification(notification) = message {
                let _ = heard.send(notification.payload().to_owned());
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN {NOTIFICATION_CHANNEL}"))
        .await
        .expect("listening");
    (client, hearing)
}

/// The payloads heard until `wanted`, which must come within the deadline.
pub(crate) async fn heard_until(
    hearing: &mut tokio::sync::mpsc::UnboundedReceiver<String>,
    wanted: &str,
) -> Vec<String> {
    let mut heard = Vec::new();
    loop {
        let payload = tokio::time::timeout(Duration::from_secs(10), hearing.recv())
            .await
            .unwrap_or_else(|_| panic!("never heard {wanted}; heard {heard:?}"))
            .expect("the listener lives");
        let done = payload == wanted;
        heard.push(payload);
        if done {
            return heard;
        }
    }
}

// Issue 41 (decision 0080): every event notified its agent's topic, watched or not, and the
// notification cost about a fifth of a send's throughput.
#[tokio::test]
async fn an_agents_events_notify_only_while_a_hub_watches_it() {
    let database = TestDatabase::new().await;
    let agents = store(&database);
    let watched = agents
        .create(full_agent(83), &crate::actor())
        .await
        .expect("created");
    let unwatched = agents
        .create(full_agent(84), &crate::actor())
        .await
        .expect("created");
    let (_client, mut hearing) = raw_listener(&database).await;
    let hub = crate::agents::listening_hub(database.connector()).await;
    let watching = hub.subscribe(&events_topic(watched.agent.id));
    // Once its watch is written, the subscription is woken: its watcher reads again then.
    tokio::time::timeout(Duration::from_secs(10), watching)
        .await
        .expect("woken once its watch is registered");
    let watching = hub.subscribe(&events_topic(watched.agent.id));
    let sms = sms_store(&database);
    sms.store(vec![inbound(&unwatched, "SM-unwatched", "code 111111")])
        .await
        .expect("stored");
    sms.store(vec![inbound(&watched, "SM-watched", "code 222222")])
        .await
        .expect("stored");
    tokio::time::timeout(Duration::from_secs(10), watching)
        .await
        .expect("woken by the watched agent's event");
    // Notifications come in commit order: the unwatched agent's would have come first.
    let heard = heard_until(&mut hearing, &events_topic(watched.agent.id)).await;
    assert!(
        !heard.contains(&events_topic(unwatched.agent.id)),
        "{heard:?}"
    );
}

#[tokio::test]
async fn a_watch_of_every_agent_makes_each_agents_events_notify() {
    let database = TestDatabase::new().await;
    let agent = store(&database)
        .create(full_agent(85), &crate::actor())
        .await
        .expect("created");
    let (_client, mut hearing) = raw_listener(&database).await;
    let hub = crate::agents::listening_hub(database.connector()).await;
    let every = hub.subscribe(EVERY_AGENTS_EVENTS_TOPIC);
    tokio::time::timeout(Duration::from_secs(10), every)
        .await
        .expect("woken once its watch is registered");
    let every = hub.subscribe(EVERY_AGENTS_EVENTS_TOPIC);
    sms_store(&database)
        .store(vec![inbound(&agent, "SM-every", "code 333333")])
        .await
        .expect("stored");
    tokio::time::timeout(Duration::from_secs(10), every)
        .await
        .expect("woken by an agent's event");
    heard_until(&mut hearing, &events_topic(agent.agent.id)).await;
}

/// A key of the agent's, kept under the agent key `made_by`, for a request of `fingerprint`.
fn request_key(key: &str, made_by: KeyId, fingerprint: u8) -> Option<ports::RequestKey> {
    Some(ports::RequestKey {
        key: domain::IdempotencyKey::parse(key).expect("a key"),
        made_by,
        fingerprint: [fingerprint; 32],
    })
}

#[tokio::test]
async fn a_keyed_create_rotation_and_replay_happen_once_and_answer_the_first_answer_again() {
    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(98), &crate::actor())
        .await
        .expect("created");
    let webhooks = PgWebhookStore::new(pool(&database));
    let agent = profile.agent.id;
    let made_by = KeyId(Uuid::now_v7());
    let first = webhooks
        .create(
            agent,
            endpoint_of(&profile, None),
            10,
            request_key("hook-1", made_by, 1),
        )
        .await
        .expect("created");
    assert!(!first.replayed);
    let mut again = endpoint_of(&profile, None);
    again.secret = "whsec_another".into();
    let retried = webhooks
        .create(agent, again.clone(), 10, request_key("hook-1", made_by, 1))
        .await
        .expect("replayed");
    assert!(retried.replayed);
    assert_eq!(
        retried.answer, first.answer,
        "the first endpoint and secret"
    );
    assert_eq!(webhooks.list(agent).await.expect("listed").len(), 1);
    assert!(matches!(
        webhooks
            .create(agent, again.clone(), 10, request_key("hook-1", made_by, 2))
            .await,
        Err(EndpointRefusal::KeyReused)
    ));
    // Another agent key's `hook-1` is its own.
    let other = webhooks
        .create(
            agent,
            again,
            10,
            request_key("hook-1", KeyId(Uuid::now_v7()), 1),
        )
        .await
        .expect("created");
    assert!(!other.replayed);
    assert_eq!(webhooks.list(agent).await.expect("listed").len(), 2);

    let id = first.answer.0.id;
    let rotated = webhooks
        .rotate_secret(
            agent,
            id,
            "whsec_rotated".into(),
            Duration::from_secs(60),
            request_key("rotate-1", made_by, 3),
        )
        .await
        .expect("rotated")
        .expect("found");
    let retried = webhooks
        .rotate_secret(
            agent,
            id,
            "whsec_rotated_twice".into(),
            Duration::from_secs(60),
            request_key("rotate-1", made_by, 3),
        )
        .await
        .expect("replayed")
        .expect("found");
    assert!(retried.replayed);
    assert_eq!(retried.answer.1, "whsec_rotated");
    assert_eq!(rotated.answer, retried.answer);
    let secrets: Vec<String> = {
        use diesel_async::RunQueryDsl;
        #[derive(diesel::QueryableByName)]
        struct Secret {
            #[diesel(sql_type = diesel::sql_types::Text)]
            secret: String,
        }
        diesel::sql_query("SELECT secret FROM webhook_secrets WHERE endpoint_id = $1 ORDER BY 1")
            .bind::<diesel::sql_types::Uuid, _>(id.0)
            .load::<Secret>(&mut database.connection().await)
            .await
            .expect("secrets")
            .into_iter()
            .map(|row| row.secret)
            .collect()
    };
    assert_eq!(
        secrets,
        ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_rotated"],
        "one rotation"
    );

    sms_store(&database)
        .store(vec![inbound(&profile, "SM1", "hi")])
        .await
        .expect("stored");
    let rate = Some(RateLimit {
        per_minute: 1,
        burst: 1,
    });
    let replay = |fingerprint| {
        webhooks.replay(
            agent,
            id,
            0,
            rate,
            request_key("replay-1", made_by, fingerprint),
        )
    };
    let Some(Replayed::Queued(queued)) = replay(4).await.expect("replayed") else {
        panic!("queued");
    };
    // The retry is answered though the one replay the rate allows is spent.
    assert_eq!(
        replay(4).await.expect("answered"),
        Some(Replayed::Again(queued))
    );
    assert_eq!(
        replay(5).await.expect("answered"),
        Some(Replayed::KeyReused)
    );
}
