//! The 401 rule: a missing, malformed, unknown, deactivated or rotated key is refused alike.

use serde_json::json;

use crate::harness::{agentctl, create_agent, read, Server};

const INVALID: &str = "Invalid agent key";

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
async fn a_deactivated_agents_key_stops_working_at_once() {
    let (server, database) = Server::start().await;
    let (key, agent) = create_agent(&database, &[]).await;
    assert_eq!(server.get("/v1/agents/me", Some(&key)).await.0, 200);
    let id = agent["id"].as_str().expect("id");
    let shown = agentctl(&database, &["agents", "deactivate", id])
        .await
        .json();
    assert_eq!(shown["is_active"], false);
    assert_eq!(
        server.get("/v1/agents/me", Some(&key)).await,
        (401, json!({"detail": INVALID}))
    );
}

#[tokio::test]
async fn a_rotated_key_replaces_the_old_one_at_once() {
    let (server, database) = Server::start().await;
    let (old_key, agent) = create_agent(&database, &[]).await;
    let id = agent["id"].as_str().expect("id");
    let rotated = agentctl(&database, &["agents", "rotate-key", id])
        .await
        .json();
    let new_key = rotated["agent_key"].as_str().expect("new key");
    assert_ne!(new_key, old_key);
    assert_eq!(rotated["agent"]["id"], agent["id"]);
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
