//! The barrier a revocation passes: every listening hub of the database answers it, after
//! every notification committed before it.

use std::time::Duration;

use diesel_async::SimpleAsyncConnection;
use futures_util::FutureExt;
use ports::{InstanceBarrier, Notifications};
use postgres_store::NOTIFICATION_CHANNEL;
use test_support::TestDatabase;

use crate::agents::listening_hub;

/// Long enough for any hub that is up to answer; only a hub that never answers waits it out.
const WITHIN: Duration = Duration::from_secs(10);

#[tokio::test]
async fn every_hub_has_heard_what_committed_before_the_barrier_when_it_returns() {
    let database = TestDatabase::new().await;
    let hubs = [
        listening_hub(database.connector()).await,
        listening_hub(database.connector()).await,
    ];
    let elsewhere = TestDatabase::new().await;
    let other_database = listening_hub(elsewhere.connector()).await;
    let mut connection = database.connection().await;
    for round in 1..=20 {
        let topic = format!("barrier-test:{round}");
        let woken: Vec<_> = hubs.iter().map(|hub| hub.subscribe(&topic)).collect();
        connection
            .batch_execute(&format!(
                "SELECT pg_notify('{NOTIFICATION_CHANNEL}', '{topic}')"
            ))
            .await
            .expect("notified");
        let passed = hubs[round % 2].pass(WITHIN).await.expect("passed");
        assert_eq!((passed.asked, passed.answered), (2, 2), "round {round}");
        for (hub, woken) in hubs.iter().zip(woken) {
            assert_eq!(hub.barriers_heard(), round as u64, "round {round}");
            assert!(
                woken.now_or_never().is_some(),
                "round {round}: a change committed before the barrier was not heard"
            );
        }
    }
    assert_eq!(other_database.barriers_heard(), 0, "another database's hub");
}

#[tokio::test]
async fn a_listener_that_never_answers_holds_the_barrier_only_until_its_time() {
    let database = TestDatabase::new().await;
    let hub = listening_hub(database.connector()).await;
    let mut mute = database.connection().await;
    mute.batch_execute(&format!("LISTEN {NOTIFICATION_CHANNEL}"))
        .await
        .expect("listening");
    let passed = hub.pass(Duration::from_millis(300)).await.expect("passed");
    assert_eq!((passed.asked, passed.answered), (2, 1));
    assert!(!passed.by_all());
    assert_eq!(hub.barriers_heard(), 1);
}

#[tokio::test]
async fn a_barrier_that_cannot_reach_the_database_fails_within_its_time() {
    // Nothing listens on the discard port.
    let hub = postgres_store::PgNotificationHub::start(
        postgres_store::Connector::from_url("postgres://nobody@127.0.0.1:9/none")
            .expect("a valid URL"),
    );
    assert!(hub.pass(WITHIN).await.is_err());
}
