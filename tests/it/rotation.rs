//! Rotating the secrets of docs/operations.md: the cursor secret and the wallet master key, each
//! with its previous value accepted during the change, then without it.

use serde_json::{json, Value};
use test_support::TestDatabase;

use crate::support::harness::{agentctl_with, Server};
use crate::wallet::{confirmed_send, post_send, settled_intent, FAST_EXECUTOR};

const OLD_CURSOR_SECRET: &str = "old-cursor-secret-0123456789abcdefghij";
const NEW_CURSOR_SECRET: &str = "new-cursor-secret-0123456789abcdefghij";
const OLD_MASTER_KEY: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const NEW_MASTER_KEY: &str = "2222222222222222222222222222222222222222222222222222222222222222";
const RECIPIENT: &str = "0x000000000000000000000000000000000000dEaD";

async fn server(database: &TestDatabase, settings: &[(&str, &str)]) -> Server {
    let mut env = vec![FAST_EXECUTOR];
    env.extend_from_slice(settings);
    Server::start_on(database, &env).await
}

async fn page(server: &Server, key: &str, cursor: Option<&str>) -> (u16, Value) {
    let path = match cursor {
        Some(cursor) => format!("/v1/wallet/intents?limit=1&cursor={cursor}"),
        None => "/v1/wallet/intents?limit=1".to_owned(),
    };
    server.get(&path, Some(key)).await
}

#[tokio::test]
async fn cursors_survive_a_cursor_secret_rotation_until_the_previous_secret_is_dropped() {
    let database = TestDatabase::new().await;
    let created = agentctl_with(&database, &[], &["agents", "create", "--wallet"])
        .await
        .json();
    let key = created["agent_key"].as_str().expect("key");
    let before = server(&database, &[("CURSOR_SECRET", OLD_CURSOR_SECRET)]).await;
    for amount in ["1", "2", "3"] {
        let (status, _) = post_send(
            &before,
            key,
            json!({"to": RECIPIENT, "amount_atomic": amount}),
        )
        .await;
        assert_eq!(status, 200);
    }
    let (_, first) = page(&before, key, None).await;
    let issued_before = first["next_cursor"].as_str().expect("cursor").to_owned();
    drop(before);

    let rotating = server(
        &database,
        &[
            ("CURSOR_SECRET", NEW_CURSOR_SECRET),
            ("CURSOR_SECRET_PREVIOUS", OLD_CURSOR_SECRET),
        ],
    )
    .await;
    let (status, second) = page(&rotating, key, Some(&issued_before)).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["items"][0]["amount_atomic"], "2");
    let issued_during = second["next_cursor"].as_str().expect("cursor").to_owned();
    drop(rotating);

    let after = server(&database, &[("CURSOR_SECRET", NEW_CURSOR_SECRET)]).await;
    assert_eq!(
        page(&after, key, Some(&issued_before)).await,
        (400, json!({"detail": "Invalid cursor"}))
    );
    let (status, third) = page(&after, key, Some(&issued_during)).await;
    assert_eq!(status, 200, "{third}");
    assert_eq!(third["items"][0]["amount_atomic"], "1");
}

async fn pay(server: &Server, key: &str, database: &TestDatabase, amount: &str) -> Value {
    confirmed_send(
        server,
        database,
        key,
        json!({"to": RECIPIENT, "amount_atomic": amount}),
    )
    .await;
    settled_intent(server, key).await
}

#[tokio::test]
async fn wallets_keep_signing_through_a_master_key_rotation_and_reseal() {
    let database = TestDatabase::new().await;
    let old = [("WALLET_MASTER_KEY", OLD_MASTER_KEY)];
    let rotating = [
        ("WALLET_MASTER_KEY", NEW_MASTER_KEY),
        ("WALLET_MASTER_KEY_PREVIOUS", OLD_MASTER_KEY),
    ];
    let new = [("WALLET_MASTER_KEY", NEW_MASTER_KEY)];
    let created = agentctl_with(&database, &old, &["agents", "create", "--wallet"])
        .await
        .json();
    let key = created["agent_key"].as_str().expect("key");
    let address = created["agent"]["wallet"]["address"]
        .as_str()
        .expect("address");
    agentctl_with(&database, &[], &["sandbox", "fund", address, "10"])
        .await
        .json();

    let during = server(&database, &rotating).await;
    let settled = pay(&during, key, &database, "1").await;
    assert_eq!(
        settled["status"], "executed",
        "a key sealed under the previous master key still signs: {settled}"
    );
    drop(during);

    assert_eq!(
        agentctl_with(&database, &rotating, &["wallets", "reseal"])
            .await
            .json(),
        json!({"resealed": 1, "already_current": 0, "changed_meanwhile": 0})
    );
    assert_eq!(
        agentctl_with(&database, &rotating, &["wallets", "reseal"])
            .await
            .json(),
        json!({"resealed": 0, "already_current": 1, "changed_meanwhile": 0}),
        "a second run finds nothing left to do"
    );

    let after = server(&database, &new).await;
    let settled = pay(&after, key, &database, "2").await;
    assert_eq!(
        settled["status"], "executed",
        "the resealed key signs under the new master key alone: {settled}"
    );

    let without_previous = agentctl_with(&database, &new, &["wallets", "reseal"]).await;
    assert!(!without_previous.success);
    assert!(
        without_previous
            .stderr
            .contains("WALLET_MASTER_KEY_PREVIOUS"),
        "{}",
        without_previous.stderr
    );
    let wrong_keys = [
        ("WALLET_MASTER_KEY", OLD_MASTER_KEY),
        ("WALLET_MASTER_KEY_PREVIOUS", &"33".repeat(32)),
    ];
    let unopenable = agentctl_with(&database, &wrong_keys, &["wallets", "reseal"]).await;
    assert!(!unopenable.success);
    assert!(
        unopenable.stderr.contains(address) && unopenable.stderr.contains("open under neither"),
        "{}",
        unopenable.stderr
    );
}
