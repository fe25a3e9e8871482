use std::time::Duration;

use domain::{AgentProfile, Direction, SmsMessageId, SmsSource};
use ports::{events_topic, AgentStore, NewSms, Notifications, SmsStore};
use postgres_store::{Database, PgSmsStore, PoolSettings};
use test_support::TestDatabase;
use uuid::Uuid;

use crate::agents::{full_agent, store};

pub(crate) fn sms_store(database: &TestDatabase) -> PgSmsStore {
    PgSmsStore::new(
        Database::connect(&database.connector(), PoolSettings::default()).expect("pool"),
    )
}

pub(crate) fn inbound(profile: &AgentProfile, sid: &str, body: &str) -> NewSms {
    let number = profile.phone_number.as_ref().expect("number");
    NewSms {
        id: SmsMessageId(Uuid::now_v7()),
        agent_id: profile.agent.id,
        phone_number_id: number.id,
        direction: Direction::Inbound,
        provider: "sandbox".into(),
        provider_message_id: sid.into(),
        source: SmsSource::Webhook,
        from: "+15550001111".into(),
        to: number.number.as_str().into(),
        body: body.into(),
        parsed_code: None,
        service_name: None,
        provider_received_at: None,
    }
}

#[tokio::test]
async fn messages_are_stored_once_per_provider_id_and_a_wait_takes_each_once() {
    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(61), &crate::actor())
        .await
        .expect("created");
    let sms = sms_store(&database);
    let number = profile.phone_number.clone().expect("number");
    let batch = vec![
        inbound(&profile, "SM1", "one"),
        inbound(&profile, "SM2", "two"),
    ];
    assert_eq!(sms.store(batch.clone()).await.expect("stored"), 2);
    assert_eq!(
        sms.store(batch).await.expect("stored"),
        0,
        "a redelivery stores nothing"
    );
    assert_eq!(
        sms.number_owner(&number.number)
            .await
            .expect("read")
            .map(|(agent, _)| agent),
        Some(profile.agent.id)
    );

    let unseen = sms.unseen(number.id, 10).await.expect("read");
    assert_eq!(unseen.len(), 2);
    let newest = unseen[0].id;
    let agent = profile.agent.id;
    let taken = sms
        .mark_seen(newest, agent, Some("r-1".into()))
        .await
        .expect("marked");
    assert!(taken.is_some_and(|message| message.seen_at.is_some()));
    assert_eq!(
        sms.mark_seen(newest, agent, None).await.expect("read"),
        None,
        "a seen message is no one else's"
    );
    assert_eq!(
        sms.mark_seen(unseen[1].id, agent, Some("r-1".into()))
            .await
            .expect("read"),
        None,
        "a request id answers with one message only"
    );
    assert_eq!(
        sms.unseen(number.id, 10).await.expect("read").len(),
        1,
        "the refused mark left its message unseen"
    );
    assert_eq!(
        sms.wait_result(agent, "r-1")
            .await
            .expect("read")
            .map(|m| m.id),
        Some(newest)
    );
    let page = sms.page(number.id, None, 1, 1).await.expect("page");
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].id, unseen[1].id, "newest first, then the offset");
    assert!(sms
        .page(number.id, Some(Direction::Outbound), 10, 0)
        .await
        .expect("page")
        .is_empty());
}

#[tokio::test]
async fn a_stored_inbound_message_wakes_the_agents_subscription_through_the_hub() {
    let database = TestDatabase::new().await;
    let profile = store(&database)
        .create(full_agent(62), &crate::actor())
        .await
        .expect("created");
    let hub = crate::agents::listening_hub(database.connector()).await;
    let other_agent = domain::AgentId(Uuid::now_v7());
    // A first subscription is woken once its watch is registered (decision 0080).
    for agent in [other_agent, profile.agent.id] {
        tokio::time::timeout(Duration::from_secs(10), hub.subscribe(&events_topic(agent)))
            .await
            .expect("woken once watched");
    }
    let other = hub.subscribe(&events_topic(other_agent));
    let woken = hub.subscribe(&events_topic(profile.agent.id));
    sms_store(&database)
        .store(vec![inbound(&profile, "SM9", "Your code is 482913")])
        .await
        .expect("stored");
    tokio::time::timeout(Duration::from_secs(10), woken)
        .await
        .expect("woken by the commit");
    assert!(
        tokio::time::timeout(Duration::from_millis(200), other)
            .await
            .is_err(),
        "another agent's subscription sleeps on"
    );
}
