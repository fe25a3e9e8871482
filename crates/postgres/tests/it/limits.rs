use std::time::Duration;

use domain::{RateDecision, RateLimit};
use ports::{AgentStore, RateLimiter};
use postgres_store::{Database, PgRateLimiter, PoolSettings};
use test_support::TestDatabase;

use crate::agents::{full_agent, store};

#[tokio::test]
async fn a_bucket_allows_its_burst_then_says_when_to_come_back_and_is_per_agent() {
    let database = TestDatabase::new().await;
    let agents = store(&database);
    let (one, two) = (full_agent(31), full_agent(32));
    let (one_id, two_id) = (one.id, two.id);
    agents.create(one).await.expect("created");
    agents.create(two).await.expect("created");
    let limiter = PgRateLimiter::new(
        Database::connect(&database.connector(), PoolSettings::default()).expect("pool"),
    );
    let limit = RateLimit {
        per_minute: 60,
        burst: 2,
    };
    for _ in 0..2 {
        assert_eq!(
            limiter
                .take(one_id, "wallet_send", limit)
                .await
                .expect("taken"),
            RateDecision::Allowed
        );
    }
    match limiter
        .take(one_id, "wallet_send", limit)
        .await
        .expect("taken")
    {
        RateDecision::Limited { retry_after } => {
            assert!(retry_after <= Duration::from_secs(1), "{retry_after:?}")
        }
        allowed => panic!("the burst was spent: {allowed:?}"),
    }
    assert_eq!(
        limiter
            .take(two_id, "wallet_send", limit)
            .await
            .expect("taken"),
        RateDecision::Allowed,
        "another agent has a bucket of its own"
    );
    assert_eq!(
        limiter
            .take(one_id, "email_send", limit)
            .await
            .expect("taken"),
        RateDecision::Allowed,
        "and so has another action"
    );
}
