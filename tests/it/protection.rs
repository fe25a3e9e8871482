//! What keeps one caller from hurting the service or others: bounded metrics labels, per-agent
//! send limits, capped waits for a wallet, a body limit read after authentication, forged
//! cursors refused, metrics behind a token, and requests in flight finished at shutdown.

use std::time::Duration;

use domain::{CursorCodec, CursorPosition};
use futures_util::future::join_all;
use reqwest::Method;
use serde_json::{json, Value};
use test_support::TestDatabase;

use crate::onchain::OnChain;
use crate::support::harness::{binary, create_agent, read, Server, PATIENT_POOL};
use crate::wallet::{post_send, send_amount, wallet_agent, RECIPIENT};

const CURSOR_SECRET: &str = "cursor secret of the protection tests, 32+ chars";

async fn metrics(server: &Server, token: Option<&str>) -> (u16, String) {
    let mut request = server.client.get(server.url("/metrics"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("metrics");
    let status = response.status().as_u16();
    (status, response.text().await.expect("text"))
}

#[tokio::test]
async fn methods_outside_the_known_set_share_one_metrics_label() {
    let (server, _database) = Server::start().await;
    for index in 0..20 {
        let method = Method::from_bytes(format!("PROBE{index}").as_bytes()).expect("method");
        server
            .client
            .request(method, server.url("/v1/agents/me"))
            .send()
            .await
            .expect("request");
    }
    let text = server.metrics().await;
    assert!(!text.contains("PROBE"), "{text}");
    assert!(
        text.contains(
            r#"http_requests_total{method="other",route="/v1/agents/me",status="405"} 20"#
        ),
        "{text}"
    );
}

#[tokio::test]
async fn one_agent_flooding_sends_is_throttled_while_another_agent_is_served() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[PATIENT_POOL]).await;
    let (flooder, _) = wallet_agent(&database).await;
    let (bystander, _) = wallet_agent(&database).await;
    let flood = (0..200).map(|_| {
        let request = server
            .client
            .post(server.url("/v1/wallet/send"))
            .bearer_auth(&flooder)
            .json(&json!({"to": RECIPIENT, "amount_atomic": "1"}));
        async move {
            let response = request.send().await.expect("send");
            let retry_after = response
                .headers()
                .get("retry-after")
                .map(|value| value.to_str().expect("ASCII").to_owned());
            let (status, body) = read(response).await;
            (status, retry_after, body)
        }
    });
    let reads = (0..50).map(|_| server.get("/v1/agents/me", Some(&bystander)));
    let (flooded, served) = tokio::join!(join_all(flood), join_all(reads));
    for (status, body) in &served {
        assert_eq!(*status, 200, "{body}");
    }
    let throttled: Vec<_> = flooded
        .iter()
        .filter(|(status, _, _)| *status == 429)
        .collect();
    assert!(!throttled.is_empty(), "a flood is throttled");
    for (status, retry_after, body) in &flooded {
        assert!([200, 429].contains(status), "{status}: {body}");
        if *status == 429 {
            let seconds: u64 = retry_after
                .as_deref()
                .expect("Retry-After")
                .parse()
                .expect("seconds");
            assert!(seconds >= 1, "{body}");
            assert!(body["detail"].is_string(), "{body}");
        }
    }
    let (status, body) = send_amount(&server, &bystander, "1").await;
    assert_eq!(status, 200, "another agent's limit is its own: {body}");
}

#[tokio::test]
async fn a_send_waiting_too_long_for_its_wallet_is_429_not_a_hang() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[("DATABASE_LOCK_TIMEOUT_MS", "300")]).await;
    let (key, _) = wallet_agent(&database).await;
    let wallet_lock = database.hold("SELECT id FROM wallets FOR UPDATE").await;
    let response = server
        .client
        .post(server.url("/v1/wallet/send"))
        .bearer_auth(&key)
        .json(&json!({"to": RECIPIENT, "amount_atomic": "1"}))
        .send()
        .await
        .expect("send");
    assert!(response.headers().contains_key("retry-after"));
    let (status, body) = read(response).await;
    assert_eq!(status, 429, "{body}");
    drop(wallet_lock);
    let (status, body) = send_amount(&server, &key, "1").await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn a_control_character_in_the_idempotency_key_is_422() {
    let (server, database) = Server::start().await;
    let (key, _) = wallet_agent(&database).await;
    for idempotency_key in ["order\u{0}1", "order\n1", "\u{7f}"] {
        let (status, body) = post_send(
            &server,
            &key,
            json!({"to": RECIPIENT, "amount_atomic": "1", "idempotency_key": idempotency_key}),
        )
        .await;
        assert_eq!(status, 422, "{idempotency_key:?}: {body}");
        assert_eq!(body["detail"][0]["loc"], json!(["body", "idempotency_key"]));
    }
}

#[tokio::test]
async fn without_a_valid_key_the_answer_is_401_whatever_the_body() {
    let (server, _database) = Server::start().await;
    for body in ["{not json", "", &"x".repeat(600 * 1024)] {
        let response = server
            .client
            .post(server.url("/v1/wallet/send"))
            .bearer_auth("ark_unknown")
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send()
            .await
            .expect("send");
        assert_eq!(
            read(response).await,
            (401, json!({"detail": "Invalid agent key"}))
        );
    }
}

#[tokio::test]
async fn bodies_up_to_512_kib_are_read_and_larger_ones_are_422() {
    let (server, database) = Server::start().await;
    let (key, _) = wallet_agent(&database).await;
    let with_padding = |bytes: usize| {
        json!({"to": RECIPIENT, "amount_atomic": "1", "note": "x".repeat(bytes)}).to_string()
    };
    for (body, expected_msg) in [
        // Read in full: the unknown field is ignored and the send goes through.
        (with_padding(300 * 1024), None),
        (
            with_padding(600 * 1024),
            Some("body must be at most 524288 bytes"),
        ),
    ] {
        let response = server
            .client
            .post(server.url("/v1/wallet/send"))
            .bearer_auth(&key)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("send");
        let (status, answer) = read(response).await;
        match expected_msg {
            None => assert_eq!(status, 200, "{answer}"),
            Some(msg) => {
                assert_eq!(status, 422, "{answer}");
                assert!(
                    answer["detail"][0]["msg"]
                        .as_str()
                        .expect("msg")
                        .contains(msg),
                    "{answer}"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_cursor_signed_with_the_secret_but_holding_an_impossible_time_is_400() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[("CURSOR_SECRET", CURSOR_SECRET)]).await;
    let (key, agent) = create_agent(&database, &["--wallet"]).await;
    let codec = CursorCodec::new(CURSOR_SECRET.as_bytes());
    let scope = format!("intents:{}", agent["id"].as_str().expect("id"));
    for created_at_micros in [i64::MAX, i64::MIN] {
        let cursor = codec.encode(
            &scope,
            CursorPosition {
                created_at_micros,
                id: uuid::Uuid::nil(),
            },
        );
        let (status, body) = server
            .get(&format!("/v1/wallet/intents?cursor={cursor}"), Some(&key))
            .await;
        assert_eq!(
            (status, body),
            (400, json!({"detail": "Invalid cursor"})),
            "{created_at_micros}"
        );
    }
}

// Found by an outside attack: /metrics was open unless METRICS_TOKEN was set, real providers
// or not.
#[tokio::test]
async fn metrics_are_open_only_in_the_sandbox_and_a_real_provider_requires_a_token() {
    let database = TestDatabase::new().await;
    let sandbox = Server::start_on(&database, &[("METRICS_TOKEN", "")]).await;
    let (status, text) = metrics(&sandbox, None).await;
    assert_eq!(status, 200, "{text}");
    let output = tokio::process::Command::new(binary("agent-runtime"))
        .env_clear()
        .env("DATABASE_URL", database.url())
        .env("BIND_ADDR", "127.0.0.1:0")
        .env("EMAIL_PROVIDER", "resend")
        .env("RESEND_API_KEY", "re_test_key")
        .output()
        .await
        .expect("run");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("METRICS_TOKEN"), "{stderr}");
}

#[tokio::test]
async fn metrics_behind_a_token_are_served_only_with_it() {
    const TOKEN: &str = "metrics-token-of-the-test-0123";
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[("METRICS_TOKEN", TOKEN)]).await;
    for wrong in [None, Some("metrics-token-of-the-test-0124"), Some("short")] {
        let (status, body) = metrics(&server, wrong).await;
        assert_eq!(status, 401, "{wrong:?}");
        let body: Value = serde_json::from_str(&body).expect("JSON");
        assert_eq!(body, json!({"detail": "Invalid metrics token"}));
    }
    let (status, text) = metrics(&server, Some(TOKEN)).await;
    assert_eq!(status, 200);
    assert!(text.contains("http_requests_total"), "{text}");
}

#[tokio::test]
async fn sigterm_lets_a_request_in_flight_finish() {
    let chain = OnChain::start().await;
    let mut server = chain.server(&[("EVM_RPC_TIMEOUT_MS", "10000")]).await;
    let payer = chain.payer(5_000).await;
    chain.node.delay_answers(Duration::from_millis(1500));
    let before = chain.node.requests_seen();
    let balance = server
        .client
        .get(server.url("/v1/wallet/balance"))
        .bearer_auth(&payer.key)
        .send();
    let in_flight = tokio::spawn(balance);
    chain.node.wait_for_requests(before + 1).await;
    server.terminate();
    let response = in_flight
        .await
        .expect("task")
        .expect("an answer, not a cut");
    let (status, body) = read(response).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["assets"][1]["amount_atomic"], "5000");
    assert!(
        server.wait_for_exit(Duration::from_secs(30)).await,
        "{}",
        server.logs()
    );
}
