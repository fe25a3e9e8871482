//! Probes, metrics, the API description, logs, configuration errors and shutdown.

use std::time::Duration;

use serde_json::{json, Value};
use test_support::workspace_root;

use crate::support::harness::{binary, create_agent, Server};

const UNREACHABLE_DATABASE: &str = "postgres://postgres@127.0.0.1:1/nothing";

#[tokio::test]
async fn liveness_and_readiness_answer_when_the_database_does() {
    let (server, _database) = Server::start().await;
    assert_eq!(
        server.get("/healthz", None).await,
        (200, json!({"status": "ok"}))
    );
    assert_eq!(
        server.get("/readyz", None).await,
        (200, json!({"status": "ready"}))
    );
}

#[tokio::test]
async fn without_a_database_the_process_is_live_but_not_ready_and_never_500s() {
    let server = Server::start_with(&[("DATABASE_URL", UNREACHABLE_DATABASE)]).await;
    assert_eq!(server.get("/healthz", None).await.0, 200);
    let (status, body) = server.get("/readyz", None).await;
    assert_eq!((status, body["detail"].is_string()), (503, true), "{body}");
    let key = format!("ark_{}", "B".repeat(43));
    let (status, body) = server.get("/v1/agents/me", Some(&key)).await;
    assert_eq!(status, 503, "{body}");
    // Every 503 says when to come back: a database failing over is back within seconds.
    for path in ["/v1/agents/me", "/readyz"] {
        let answer = server
            .client
            .get(server.url(path))
            .bearer_auth(&key)
            .send()
            .await
            .expect("an answer");
        assert_eq!(
            (
                answer.status().as_u16(),
                answer
                    .headers()
                    .get("retry-after")
                    .and_then(|value| value.to_str().ok())
            ),
            (503, Some("2")),
            "{path}"
        );
    }
    assert!(
        !body["detail"]
            .as_str()
            .expect("detail")
            .contains("127.0.0.1"),
        "no internals: {body}"
    );
}

#[tokio::test]
async fn metrics_count_requests_by_route_and_status_and_show_the_pool() {
    let (server, database) = Server::start().await;
    let (key, _) = create_agent(&database, &["--wallet"]).await;
    server.get("/v1/agents/me", Some(&key)).await;
    server.get("/v1/agents/me", None).await;
    server.get("/nope", None).await;
    server.get("/v1/wallet/intents", Some(&key)).await;
    let text = server.metrics().await;
    for expected in [
        r#"http_requests_total{method="GET",route="/v1/agents/me",status="200"} 1"#,
        r#"http_requests_total{method="GET",route="/v1/agents/me",status="401"} 1"#,
        r#"http_requests_total{method="GET",route="unmatched",status="404"} 1"#,
        "http_request_duration_seconds_bucket",
        r#"db_pool_connections{state="max"}"#,
        r#"db_pool_connections{state="in_use"}"#,
        r#"rendered_first_pages{measure="pages"} 1"#,
        r#"rendered_first_pages{measure="bytes"}"#,
    ] {
        assert!(text.contains(expected), "missing {expected} in:\n{text}");
    }
    // The hub connects beside the server's start: its first connection is counted once made.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = server.metrics().await;
        if text.contains("notification_listener_connections_total 1")
            && text.contains("notification_listener_up 1")
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the listener's connection is not shown in:\n{text}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn the_served_openapi_document_matches_the_committed_copy() {
    let (server, _database) = Server::start().await;
    let (status, served) = server.get("/openapi.json", None).await;
    assert_eq!(status, 200);
    let committed_path = workspace_root().join("docs/openapi.json");
    let committed: Value =
        serde_json::from_str(&std::fs::read_to_string(&committed_path).expect("docs/openapi.json"))
            .expect("committed copy is JSON");
    assert_eq!(
        served, committed,
        "the API contract changed: run `make openapi` and review the diff"
    );
    assert!(served["openapi"]
        .as_str()
        .expect("version")
        .starts_with("3.1"));
    assert_eq!(served["info"]["version"], "0.1.0");
    assert_eq!(
        served["components"]["securitySchemes"]["HTTPBearer"]["scheme"],
        "bearer"
    );
    let me = &served["paths"]["/v1/agents/me"]["get"];
    assert_eq!(me["security"], json!([{"HTTPBearer": []}]));
    for status in ["200", "401", "503"] {
        assert!(
            me["responses"][status].is_object(),
            "status {status} is declared"
        );
    }
}

#[tokio::test]
async fn request_ids_are_echoed_or_issued() {
    let (server, _database) = Server::start().await;
    let echoed = server
        .client
        .get(server.url("/healthz"))
        .header("X-Request-Id", "trace-123")
        .send()
        .await
        .expect("request");
    assert_eq!(echoed.headers()["x-request-id"], "trace-123");
    let issued = server
        .client
        .get(server.url("/healthz"))
        .send()
        .await
        .expect("request");
    let id = issued.headers()["x-request-id"]
        .to_str()
        .expect("ascii")
        .to_owned();
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");
}

#[tokio::test]
async fn json_logs_carry_request_id_route_status_and_latency() {
    let database = test_support::TestDatabase::new().await;
    let server = Server::start_on(&database, &[("LOG_FORMAT", "json")]).await;
    server
        .client
        .get(server.url("/v1/agents/me"))
        .header("X-Request-Id", "json-log-check")
        .send()
        .await
        .expect("request");
    let request_line = |logs: &str| {
        logs.lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find(|entry| {
                entry["message"] == "request finished"
                    && entry["span"]["request_id"] == "json-log-check"
            })
    };
    let logs = server
        .wait_for_logs(|logs| request_line(logs).is_some())
        .await;
    let line = request_line(&logs).expect("found above");
    assert_eq!(line["status"], 401);
    assert_eq!(line["span"]["route"], "/v1/agents/me");
    assert!(line["latency_ms"].is_number());
}

#[tokio::test]
async fn logs_in_a_file_are_plain_text_and_the_banner_follows_the_bind() {
    let (server, _database) = Server::start().await;
    let banner = format!("serving on {}", server.base_url);
    let logs = server.wait_for_logs(|logs| logs.contains(&banner)).await;
    assert!(
        !logs.contains('\u{1b}'),
        "no colour codes when stdout is not a terminal:\n{logs}"
    );
    let banner_line = logs
        .lines()
        .find(|line| line.contains(&banner))
        .expect("found above");
    assert!(
        banner_line.contains("sandbox") && banner_line.contains("/docs"),
        "{banner_line}"
    );
}

#[tokio::test]
async fn a_taken_port_stops_start_up_at_once_with_one_line_naming_bind_addr() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = taken.local_addr().expect("address").to_string();
    let output = tokio::process::Command::new(binary("agent-runtime"))
        .env_clear()
        .env("DATABASE_URL", UNREACHABLE_DATABASE)
        .env("BIND_ADDR", &address)
        .output()
        .await
        .expect("run");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(
        lines[0].contains("BIND_ADDR") && lines[0].contains(&address),
        "{stderr}"
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).is_empty(),
        "nothing was started before the port was known to be free"
    );
}

#[tokio::test]
async fn a_missing_required_setting_stops_start_up_naming_it() {
    let output = tokio::process::Command::new(binary("agent-runtime"))
        .env_clear()
        .output()
        .await
        .expect("run");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("DATABASE_URL"), "{stderr}");
}

#[tokio::test]
async fn sigterm_stops_the_server_and_its_background_jobs_gracefully() {
    let (mut server, _database) = Server::start().await;
    server.terminate();
    assert!(
        server.wait_for_exit(Duration::from_secs(30)).await,
        "clean exit:\n{}",
        server.logs()
    );
    let logs = server.logs();
    for job in ["executor", "expiry"] {
        assert!(
            logs.lines()
                .any(|line| line.contains("job stopped") && line.contains(job)),
            "{job} stopped before the process exited:\n{logs}"
        );
    }
}

#[tokio::test]
async fn background_jobs_report_their_rounds_and_queue_lag_in_metrics() {
    let (server, _database) = Server::start().await;
    let started = std::time::Instant::now();
    loop {
        let text = server.metrics().await;
        let reported = [
            r#"job_ticks_total{job="executor",result="ok"}"#,
            r#"job_ticks_total{job="expiry",result="ok"}"#,
            r#"job_queue_lag_seconds{job="executor"} 0"#,
            r#"job_last_success_timestamp_seconds{job="executor"}"#,
        ]
        .iter()
        .all(|expected| text.contains(expected));
        if reported {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the jobs' first rounds never showed:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
