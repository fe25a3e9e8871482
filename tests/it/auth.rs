//! The 401 rule: a missing, malformed, unknown, deactivated or rotated key is refused alike.

use std::time::{Duration, Instant};

use serde_json::json;
use test_support::TestDatabase;

use crate::support::harness::{agentctl, create_agent, read, Server};

const INVALID: &str = "Invalid agent key";
/// How soon a change to an agent reaches the key caches of every instance.
const PROPAGATION: Duration = Duration::from_secs(1);

/// Polls `GET /v1/agents/me` with `key` on every server until it is refused, for at most
/// `PROPAGATION` since the call.
async fn refused_within_a_second(servers: &[&Server], key: &str) {
    answered_within_a_second(servers, key, |status, _| status == 401).await;
}

async fn answered_within_a_second(
    servers: &[&Server],
    key: &str,
    expected: impl Fn(u16, &serde_json::Value) -> bool,
) {
    let changed = Instant::now();
    for server in servers {
        loop {
            let (status, me) = server.get("/v1/agents/me", Some(key)).await;
            if expected(status, &me) {
                break;
            }
            assert!(
                changed.elapsed() < PROPAGATION,
                "{} still answers {status} {me} after {:?}",
                server.base_url,
                changed.elapsed()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

async fn status_with_header(
    server: &Server,
    authorization: Option<&str>,
) -> (u16, serde_json::Value, Option<String>) {
    let mut request = server.client.get(server.url("/v1/agents/me"));
    if let Some(value) = authorization {
        request = request.header("Authorization", value);
    }
    let response = request.send().await.expect("request");
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().expect("ascii").to_owned());
    let (status, body) = read(response).await;
    (status, body, challenge)
}

#[tokio::test]
async fn missing_and_malformed_keys_are_401_with_the_detail() {
    let (server, database) = Server::start().await;
    let (key, _) = create_agent(&database, &[]).await;
    let wrong_scheme = format!("Basic {key}");
    let no_space = format!("Bearer{key}");
    let body_only = key[4..].to_owned();
    let attempts: Vec<Option<&str>> = vec![
        None,
        Some(""),
        Some("Bearer"),
        Some("Bearer "),
        Some(&wrong_scheme),
        Some(&no_space),
        Some("Bearer ark_tooshort"),
        Some("Bearer sk_0000000000000000000000000000000000000000000"),
        Some(&body_only),
    ];
    for authorization in attempts {
        let (status, body, challenge) = status_with_header(&server, authorization).await;
        assert_eq!(status, 401, "{authorization:?}");
        assert_eq!(body, json!({"detail": INVALID}), "{authorization:?}");
        assert_eq!(challenge.as_deref(), Some("Bearer"));
    }
}

#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive() {
    let (server, database) = Server::start().await;
    let (key, _) = create_agent(&database, &[]).await;
    let (status, _, _) = status_with_header(&server, Some(&format!("bearer {key}"))).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_well_formed_but_unknown_key_is_401() {
    let (server, _database) = Server::start().await;
    let unknown = format!("ark_{}", "A".repeat(43));
    assert_eq!(
        server.get("/v1/agents/me", Some(&unknown)).await,
        (401, json!({"detail": INVALID}))
    );
}

#[tokio::test]
async fn a_deactivated_agents_key_stops_working_within_a_second() {
    let (server, database) = Server::start().await;
    let (key, agent) = create_agent(&database, &[]).await;
    assert_eq!(server.get("/v1/agents/me", Some(&key)).await.0, 200);
    let id = agent["id"].as_str().expect("id");
    let shown = agentctl(&database, &["agents", "deactivate", id])
        .await
        .json();
    assert_eq!(shown["is_active"], false);
    refused_within_a_second(&[&server], &key).await;
    assert_eq!(
        server.get("/v1/agents/me", Some(&key)).await,
        (401, json!({"detail": INVALID}))
    );
}

#[tokio::test]
async fn a_rotated_key_replaces_the_old_one_within_a_second() {
    let (server, database) = Server::start().await;
    let (old_key, agent) = create_agent(&database, &[]).await;
    let id = agent["id"].as_str().expect("id");
    let rotated = agentctl(&database, &["agents", "rotate-key", id])
        .await
        .json();
    let new_key = rotated["agent_key"].as_str().expect("new key");
    assert_ne!(new_key, old_key);
    assert_eq!(rotated["agent"]["id"], agent["id"]);
    refused_within_a_second(&[&server], &old_key).await;
    assert_eq!(
        server.get("/v1/agents/me", Some(&old_key)).await,
        (401, json!({"detail": INVALID}))
    );
    let (status, me) = server.get("/v1/agents/me", Some(new_key)).await;
    assert_eq!(status, 200);
    assert_eq!(me["id"], agent["id"]);
    assert_ne!(me["agent_key_hash"], agent["agent_key_hash"]);
}

#[tokio::test]
async fn keys_never_appear_in_the_logs() {
    let (server, database) = Server::start().await;
    let (key, _) = create_agent(&database, &[]).await;
    server.get("/v1/agents/me", Some(&key)).await;
    server.get("/v1/agents/me", Some(&format!("{key}x"))).await;
    let logs = server
        .wait_for_logs(|logs| logs.matches("request finished").count() >= 2)
        .await;
    assert!(!logs.contains(&key[4..]), "a key leaked into the logs");
}

#[tokio::test]
async fn changes_to_an_agent_reach_the_key_caches_of_every_instance_within_a_second() {
    let database = TestDatabase::new().await;
    let first = Server::start_on(&database, &[]).await;
    let second = Server::start_on(&database, &[]).await;
    let (key, agent) = create_agent(&database, &["--wallet"]).await;
    let id = agent["id"].as_str().expect("id");
    for server in [&first, &second] {
        for _ in 0..2 {
            assert_eq!(server.get("/v1/agents/me", Some(&key)).await.0, 200);
        }
    }
    agentctl(&database, &["policy", "set", id, "--max-per-tx", "7"]).await;
    answered_within_a_second(&[&first, &second], &key, |status, me| {
        status == 200 && me["wallet"]["spend_policy"]["max_per_tx_atomic"] == "7"
    })
    .await;
    let rotated = agentctl(&database, &["agents", "rotate-key", id])
        .await
        .json();
    let new_key = rotated["agent_key"].as_str().expect("new key");
    refused_within_a_second(&[&first, &second], &key).await;
    for server in [&first, &second] {
        assert_eq!(server.get("/v1/agents/me", Some(new_key)).await.0, 200);
    }
    agentctl(&database, &["agents", "deactivate", id]).await;
    refused_within_a_second(&[&first, &second], new_key).await;
}

#[tokio::test]
async fn while_the_listener_is_down_keys_are_checked_against_the_database() {
    let (server, database) = Server::start().await;
    let (key, agent) = create_agent(&database, &[]).await;
    assert_eq!(server.get("/v1/agents/me", Some(&key)).await.0, 200);
    database
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND query LIKE 'LISTEN%'",
        )
        .await;
    agentctl(
        &database,
        &["agents", "deactivate", agent["id"].as_str().expect("id")],
    )
    .await;
    refused_within_a_second(&[&server], &key).await;
    server
        .wait_for_logs(|logs| logs.matches("notification listener connected").count() >= 2)
        .await;
    assert_eq!(server.get("/v1/agents/me", Some(&key)).await.0, 401);
}
