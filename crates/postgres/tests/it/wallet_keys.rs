use ports::{AgentStore, WalletKeyStore};
use postgres_store::{Database, PgWalletKeyStore, PoolSettings};
use test_support::TestDatabase;

use crate::agents::{full_agent, store};

fn keys(database: &TestDatabase) -> PgWalletKeyStore {
    PgWalletKeyStore::new(
        Database::connect(&database.connector(), PoolSettings::default()).expect("pool"),
    )
}

#[tokio::test]
async fn sealed_keys_page_in_wallet_order_and_are_replaced_only_when_unchanged() {
    let database = TestDatabase::new().await;
    let agents = store(&database);
    for seed in 1..=3 {
        agents
            .create(full_agent(seed), &crate::actor())
            .await
            .expect("created");
    }
    let keys = keys(&database);
    let first = keys.sealed_keys_after(None, 2).await.expect("first page");
    let rest = keys
        .sealed_keys_after(Some(first[1].wallet_id), 2)
        .await
        .expect("second page");
    assert_eq!((first.len(), rest.len()), (2, 1));
    assert!(first[0].wallet_id < first[1].wallet_id && first[1].wallet_id < rest[0].wallet_id);
    let mut seeds: Vec<_> = first
        .iter()
        .chain(&rest)
        .map(|wallet| wallet.sealed_key.clone())
        .collect();
    seeds.sort();
    assert_eq!(seeds, vec![vec![1, 1], vec![1, 2], vec![1, 3]]);

    let target = &rest[0];
    assert!(keys
        .replace_sealed_key(target.wallet_id, &target.sealed_key, &[2, 9])
        .await
        .expect("replaced"));
    assert!(
        !keys
            .replace_sealed_key(target.wallet_id, &target.sealed_key, &[2, 8])
            .await
            .expect("compared"),
        "a stale expectation replaces nothing"
    );
    let reread = keys.sealed_keys_after(None, 10).await.expect("all");
    let stored = reread
        .iter()
        .find(|wallet| wallet.wallet_id == target.wallet_id)
        .expect("still there");
    assert_eq!(stored.sealed_key, vec![2, 9]);
    assert_eq!(stored.address, target.address);
}
