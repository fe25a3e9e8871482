//! The service on a database it reaches over verified TLS, and the TLS settings it refuses.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;
use test_support::{server_ca, TestDatabase};

use crate::support::harness::{agentctl_with, binary, Server};

const DEADLINE: Duration = Duration::from_secs(10);

#[tokio::test]
async fn the_server_and_agentctl_work_over_verified_tls_and_the_hub_listens_encrypted() {
    let database = TestDatabase::new().await;
    let ca = server_ca();
    let url = database.url_with_tls(&[
        ("sslmode", "verify-full"),
        ("sslrootcert", ca.to_str().expect("a UTF-8 path")),
    ]);
    let settings = [("DATABASE_URL", url.as_str())];
    let created = agentctl_with(
        &database,
        &settings,
        &["agents", "create", "--label", "tls"],
    )
    .await
    .json();
    let key = created["agent_key"].as_str().expect("agent_key");

    let server = Server::start_with(&settings).await;
    assert_eq!(
        server.get("/readyz", None).await,
        (200, json!({"status": "ready"}))
    );
    let (status, me) = server.get("/v1/agents/me", Some(key)).await;
    assert_eq!((status, &me["label"]), (200, &json!("tls")), "{me}");

    let started = Instant::now();
    let sessions = loop {
        let sessions = database.sessions().await;
        if sessions
            .iter()
            .any(|session| session.last_query.starts_with("LISTEN "))
        {
            break sessions;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "the notification hub never listened: {sessions:?}\n{}",
            server.logs()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        sessions.iter().all(|session| session.encrypted),
        "every connection of the server is encrypted: {sessions:?}"
    );
}

#[tokio::test]
async fn a_tls_setting_it_cannot_honour_stops_start_up_naming_it_without_the_password() {
    for (query, setting) in [
        ("sslmode=verify-everything", "sslmode"),
        (
            "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
            "sslrootcert /nonexistent/ca.pem",
        ),
    ] {
        let run = tokio::process::Command::new(binary("agent-runtime"))
            .env_clear()
            .env(
                "DATABASE_URL",
                format!("postgres://postgres:hunter2@127.0.0.1:1/nothing?{query}"),
            )
            .env("BIND_ADDR", "127.0.0.1:0")
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output();
        let output = tokio::time::timeout(DEADLINE, run)
            .await
            .unwrap_or_else(|_| panic!("{query}: the server started"))
            .expect("run");
        assert!(!output.status.success(), "{query}");
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            printed.contains("DATABASE_URL") && printed.contains(setting),
            "{printed}"
        );
        assert!(!printed.contains("hunter2"), "{printed}");
    }
}
