//! What a send and its confirmation must pass beyond the spend policy: whom it may pay, how much
//! one transfer and a day may move, an agent still active and the policy in force at
//! confirmation, and idempotency keys that expire, say when they replay and never wait.

use std::time::Duration;

use serde_json::{json, Value};
use test_support::TestDatabase;

use crate::support::harness::{agentctl, agentctl_with, intent_reaching, read, Server};
use crate::wallet::{
    address_of, confirmed_send, post_send, send_amount, set_policy, settled_intent, wallet_agent,
    FAST_EXECUTOR, RECIPIENT, USDC_TOKEN,
};

/// 2^128 - 1: the most one transfer may move.
const MAX_TRANSFER: &str = "340282366920938463463374607431768211455";
const API_ONLY: (&str, &str) = ("EXECUTOR_ENABLED", "false");

/// The intent as the operator sees it once its status is one of `statuses`, within a deadline.
async fn operator_sees(database: &TestDatabase, id: &str, statuses: &[&str]) -> Value {
    intent_reaching(database, &[], id, statuses, Duration::from_secs(20)).await
}

/// A send's status, its `Idempotent-Replayed` header and its body.
async fn send_keyed(server: &Server, key: &str, body: Value) -> (u16, Option<String>, Value) {
    let response = server
        .client
        .post(server.url("/v1/wallet/send"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .expect("request");
    let replayed = response
        .headers()
        .get("idempotent-replayed")
        .map(|value| value.to_str().expect("ASCII").to_owned());
    let (status, body) = read(response).await;
    (status, replayed, body)
}

fn id_of(intent: &Value) -> String {
    intent["id"].as_str().expect("id").to_owned()
}

/// A confirmation that finds its wallet locked past the lock timeout (a backlog of decisions, an
/// executor at work) tries again, saying so, instead of failing the operator's command.
#[tokio::test]
async fn agentctl_waits_out_a_busy_wallet_and_confirms() {
    let database = TestDatabase::new().await;
    let api = Server::start_on(&database, &[API_ONLY]).await;
    let (key, _) = wallet_agent(&database).await;
    let (status, pending) = send_amount(&api, &key, "20").await;
    assert_eq!(status, 200, "{pending}");
    let pending = id_of(&pending);
    let wallet_lock = database.hold("SELECT id FROM wallets FOR UPDATE").await;
    // The lock is let go once the confirmation has waited for it in a second transaction: its
    // first gave up (lock timeout) and it tried again.
    let releasing = async {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        let mut first_wait = None;
        loop {
            let waiting: Vec<String> = database
                .sessions()
                .await
                .into_iter()
                .filter(|session| session.waiting_for_lock)
                .map(|session| session.transaction_started)
                .collect();
            match (&first_wait, waiting.first()) {
                (None, Some(started)) => first_wait = Some(started.clone()),
                (Some(first), Some(started)) if first != started => break,
                _ => {}
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no second try seen (first wait: {first_wait:?})"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        drop(wallet_lock);
    };
    let confirm = ["intents", "confirm", pending.as_str()];
    let (confirmed, ()) = tokio::join!(
        agentctl_with(&database, &[("DATABASE_LOCK_TIMEOUT_MS", "100")], &confirm),
        releasing
    );
    assert!(confirmed.success, "{}", confirmed.stderr);
    assert_eq!(confirmed.json()["status"], "confirmed");
    assert!(
        confirmed.stderr.contains("busy") && confirmed.stderr.contains("trying again"),
        "{}",
        confirmed.stderr
    );
}

#[tokio::test]
async fn a_deactivated_agents_intents_are_neither_confirmed_nor_executed() {
    let database = TestDatabase::new().await;
    let api = Server::start_on(&database, &[API_ONLY]).await;
    let (key, agent_id) = wallet_agent(&database).await;
    let confirmed = confirmed_send(
        &api,
        &database,
        &key,
        json!({"to": RECIPIENT, "amount_atomic": "10"}),
    )
    .await;
    let (status, pending) = send_amount(&api, &key, "20").await;
    assert_eq!(status, 200, "{pending}");
    agentctl(&database, &["agents", "deactivate", &agent_id])
        .await
        .json();
    let refused = agentctl(&database, &["intents", "confirm", &id_of(&pending)]).await;
    assert!(!refused.success, "{}", refused.stdout);
    assert!(refused.stderr.contains("deactivated"), "{}", refused.stderr);
    let _executor = Server::start_on(&database, &[FAST_EXECUTOR]).await;
    let failed = operator_sees(&database, &id_of(&confirmed), &["failed", "executed"]).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(
        failed["failure_reason"]
            .as_str()
            .expect("reason")
            .contains("deactivated"),
        "{failed}"
    );
    assert_eq!(failed["tx_hash"], Value::Null, "nothing was sent");
    let untouched = operator_sees(&database, &id_of(&pending), &["pending_confirmation"]).await;
    assert_eq!(untouched["status"], "pending_confirmation");
}

#[tokio::test]
async fn a_confirmation_judges_the_intent_by_the_policy_in_force_and_breaking_it_needs_force() {
    let database = TestDatabase::new().await;
    let api = Server::start_on(&database, &[API_ONLY]).await;
    let (key, agent_id) = wallet_agent(&database).await;
    let (status, large) = send_amount(&api, &key, "500").await;
    assert_eq!(status, 200, "{large}");
    set_policy(&database, &agent_id, &["--max-per-tx", "100"]).await;
    let refused = agentctl(&database, &["intents", "confirm", &id_of(&large)]).await;
    assert!(!refused.success, "{}", refused.stdout);
    for named in ["per-transaction maximum of 100", "--force"] {
        assert!(refused.stderr.contains(named), "{}", refused.stderr);
    }
    assert_eq!(
        operator_sees(&database, &id_of(&large), &["pending_confirmation"]).await["status"],
        "pending_confirmation"
    );
    let forced = agentctl(
        &database,
        &["intents", "confirm", &id_of(&large), "--force"],
    )
    .await
    .json();
    assert_eq!(forced["status"], "confirmed", "{forced}");
    assert!(
        forced["policy_violation"]
            .as_str()
            .expect("the verdict is shown")
            .contains("per-transaction maximum"),
        "{forced}"
    );
    let (_, small) = send_amount(&api, &key, "50").await;
    let kept = agentctl(&database, &["intents", "confirm", &id_of(&small)])
        .await
        .json();
    assert_eq!(
        (kept["status"].clone(), kept["policy_violation"].clone()),
        (json!("confirmed"), Value::Null),
        "{kept}"
    );
}

#[tokio::test]
async fn no_amount_can_overflow_a_wallets_window_and_too_large_ones_are_422() {
    let (server, database) = Server::start().await;
    let (key, agent_id) = wallet_agent(&database).await;
    for too_large in [
        "340282366920938463463374607431768211456",
        "115792089237316195423570985008687907853269984665640564039457584007913129639935",
    ] {
        let (status, body) = post_send(
            &server,
            &key,
            json!({"to": RECIPIENT, "amount_atomic": too_large}),
        )
        .await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["detail"][0]["loc"], json!(["body", "amount_atomic"]));
        assert!(
            body["detail"][0]["msg"]
                .as_str()
                .expect("msg")
                .contains(MAX_TRANSFER),
            "{body}"
        );
    }
    for _ in 0..3 {
        let (status, body) = send_amount(&server, &key, MAX_TRANSFER).await;
        assert_eq!(status, 200, "{body}");
    }
    set_policy(&database, &agent_id, &["--max-daily", MAX_TRANSFER]).await;
    let (status, body) = send_amount(&server, &key, "1").await;
    assert_eq!(
        status, 403,
        "the full window refuses, it does not break: {body}"
    );
}

#[tokio::test]
async fn recipients_that_can_only_lose_money_are_422_naming_the_rule() {
    let (server, database) = Server::start().await;
    let (key, _) = wallet_agent(&database).await;
    let own = address_of(&server, &key).await;
    for (recipient, rule) in [
        ("0x0000000000000000000000000000000000000000", "zero address"),
        (own.as_str(), "the wallet itself"),
        (USDC_TOKEN, "the token contract"),
    ] {
        let (status, body) = post_send(
            &server,
            &key,
            json!({"to": recipient, "amount_atomic": "1"}),
        )
        .await;
        assert_eq!(status, 422, "{recipient}: {body}");
        assert_eq!(body["detail"][0]["loc"], json!(["body", "to"]));
        assert!(
            body["detail"][0]["msg"]
                .as_str()
                .expect("msg")
                .contains(rule),
            "{body}"
        );
    }
}

#[tokio::test]
async fn the_daily_window_holds_a_transfer_for_24_hours_from_when_its_money_moved() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[FAST_EXECUTOR]).await;
    let (key, agent_id) = wallet_agent(&database).await;
    let address = address_of(&server, &key).await;
    agentctl(&database, &["sandbox", "fund", &address, "10000"])
        .await
        .json();
    set_policy(&database, &agent_id, &["--max-daily", "1000"]).await;
    confirmed_send(
        &server,
        &database,
        &key,
        json!({"to": RECIPIENT, "amount_atomic": "1000"}),
    )
    .await;
    assert_eq!(settled_intent(&server, &key).await["status"], "executed");
    // The clock moves on: the intent was asked for and confirmed 30 hours ago, and its money
    // moved just now.
    database
        .execute(
            "UPDATE transfer_intents SET created_at = created_at - interval '30 hours', \
             confirmed_at = confirmed_at - interval '30 hours', \
             submitted_at = submitted_at - interval '30 hours'",
        )
        .await;
    let (status, body) = send_amount(&server, &key, "1").await;
    assert_eq!(
        status, 403,
        "money that moved just now still counts: {body}"
    );
    database
        .execute("UPDATE transfer_intents SET executed_at = executed_at - interval '25 hours'")
        .await;
    let (status, body) = send_amount(&server, &key, "1000").await;
    assert_eq!(
        status, 200,
        "24 hours after it moved it is released: {body}"
    );
}

#[tokio::test]
async fn a_replayed_send_says_so_in_a_header() {
    let (server, database) = Server::start().await;
    let (key, _) = wallet_agent(&database).await;
    let body = json!({"to": RECIPIENT, "amount_atomic": "7", "idempotency_key": "order-1"});
    let (status, replayed, first) = send_keyed(&server, &key, body.clone()).await;
    assert_eq!((status, replayed), (200, None), "{first}");
    let (status, replayed, again) = send_keyed(&server, &key, body).await;
    assert_eq!((status, replayed.as_deref()), (200, Some("true")));
    assert_eq!(again["id"], first["id"]);
}

#[tokio::test]
async fn a_replay_is_answered_when_the_send_rate_is_spent_and_spends_none_of_it() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(
        &database,
        &[("SEND_BURST", "2"), ("SEND_RATE_PER_MINUTE", "1")],
    )
    .await;
    let (key, _) = wallet_agent(&database).await;
    let keyed = json!({"to": RECIPIENT, "amount_atomic": "7", "idempotency_key": "order-1"});
    let (status, _, first) = send_keyed(&server, &key, keyed.clone()).await;
    assert_eq!(status, 200, "{first}");
    for _ in 0..3 {
        let (status, replayed, again) = send_keyed(&server, &key, keyed.clone()).await;
        assert_eq!(
            (status, replayed.as_deref()),
            (200, Some("true")),
            "{again}"
        );
        assert_eq!(again["id"], first["id"]);
    }
    let fresh = json!({"to": RECIPIENT, "amount_atomic": "7"});
    let (status, _, second) = send_keyed(&server, &key, fresh.clone()).await;
    assert_eq!(status, 200, "the replays spent none of the burst: {second}");
    let (status, _, limited) = send_keyed(&server, &key, fresh).await;
    assert_eq!(status, 429, "{limited}");
    let (status, replayed, again) = send_keyed(&server, &key, keyed).await;
    assert_eq!(
        (status, replayed.as_deref()),
        (200, Some("true")),
        "{again}"
    );
}

#[tokio::test]
async fn a_key_whose_first_send_is_still_in_flight_is_409_at_once() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[("DATABASE_LOCK_TIMEOUT_MS", "20000")]).await;
    let (key, _) = wallet_agent(&database).await;
    let body = json!({"to": RECIPIENT, "amount_atomic": "7", "idempotency_key": "order-1"});
    // Someone else holds the wallet: the sends wait on it, one of them holding the key.
    let wallet_lock = database.hold("SELECT id FROM wallets FOR UPDATE").await;
    let send = |server: &Server| {
        let request = server
            .client
            .post(server.url("/v1/wallet/send"))
            .bearer_auth(&key)
            .json(&body);
        tokio::spawn(async move { read(request.send().await.expect("request")).await })
    };
    let mut sends = vec![send(&server), send(&server)];
    // Had it waited for the wallet, it would have got no answer until the lock is dropped below.
    let (first_done, index, _) = futures_util::future::select_all(sends.iter_mut()).await;
    let (status, detail) = first_done.expect("send task");
    assert_eq!(status, 409, "{detail}");
    drop(wallet_lock);
    let (status, intent) = sends.remove(1 - index).await.expect("send task");
    assert_eq!(status, 200, "{intent}");
}

#[tokio::test]
async fn an_idempotency_key_expires_after_24_hours() {
    let (server, database) = Server::start().await;
    let (key, _) = wallet_agent(&database).await;
    let body = json!({"to": RECIPIENT, "amount_atomic": "7", "idempotency_key": "order-1"});
    let (_, _, first) = send_keyed(&server, &key, body.clone()).await;
    database
        .execute("UPDATE transfer_intents SET created_at = created_at - interval '25 hours'")
        .await;
    let (status, replayed, second) = send_keyed(&server, &key, body).await;
    assert_eq!((status, replayed), (200, None), "{second}");
    assert_ne!(second["id"], first["id"], "a new intent for an expired key");
}

/// A send as raw text: its status and body.
async fn post_raw(
    server: &Server,
    path: &str,
    key: &str,
    content_type: &str,
    body: &str,
    idempotency_key: Option<&str>,
) -> (u16, Value) {
    let mut request = server
        .client
        .post(server.url(path))
        .bearer_auth(key)
        .header("content-type", content_type)
        .body(body.to_owned());
    if let Some(idempotency_key) = idempotency_key {
        request = request.header("Idempotency-Key", idempotency_key);
    }
    read(request.send().await.expect("request")).await
}

// Found by an outside attack: sends took a body naming a key twice, a body declared text/plain
// and an idempotency key of spaces.
#[tokio::test]
async fn sends_refuse_keys_given_twice_bodies_of_another_type_and_blank_idempotency_keys() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[API_ONLY]).await;
    let (wallet_key, _) = wallet_agent(&database).await;
    let (mail_key, _) = crate::email::email_agent(&database, "acme").await;
    let transfer = format!(r#"{{"to": "{RECIPIENT}", "amount_atomic": "1000000"}}"#);
    let twice =
        format!(r#"{{"to": "{RECIPIENT}", "amount_atomic": "1", "amount_atomic": "1000000"}}"#);
    let mail = r#"{"to": ["bob@example.org"], "subject": "Hi", "body_text": "Hello"}"#;
    let mail_twice = r#"{"to": ["bob@example.org"], "subject": "Hi", "body_text": "Hello", "to": ["eve@example.org"]}"#;
    for (path, key, body) in [
        ("/v1/wallet/send", &wallet_key, twice.as_str()),
        ("/v1/email/send", &mail_key, mail_twice),
    ] {
        let (status, refused) = post_raw(&server, path, key, "application/json", body, None).await;
        assert_eq!(status, 422, "{path}: {refused}");
        assert_eq!(refused["detail"][0]["loc"], json!(["body"]), "{refused}");
    }
    for (path, key, body) in [
        ("/v1/wallet/send", &wallet_key, transfer.as_str()),
        ("/v1/email/send", &mail_key, mail),
    ] {
        let (status, refused) = post_raw(&server, path, key, "text/plain", body, None).await;
        assert_eq!(status, 422, "{path}: {refused}");
        assert_eq!(refused["detail"][0]["type"], "model_attributes_type");
        let (status, answer) = post_raw(
            &server,
            path,
            key,
            "application/json; charset=utf-8",
            body,
            None,
        )
        .await;
        assert_eq!(status, 200, "{path} as JSON: {answer}");
    }
    let (status, refused) = post_raw(
        &server,
        "/v1/email/send",
        &mail_key,
        "application/json",
        mail,
        Some("   "),
    )
    .await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(
        refused["detail"][0]["loc"],
        json!(["header", "idempotency-key"])
    );
    let blank =
        format!(r#"{{"to": "{RECIPIENT}", "amount_atomic": "1000000", "idempotency_key": "  "}}"#);
    let (status, refused) = post_raw(
        &server,
        "/v1/wallet/send",
        &wallet_key,
        "application/json",
        &blank,
        None,
    )
    .await;
    assert_eq!(status, 422, "{refused}");
}

#[tokio::test]
async fn every_operator_decision_shows_who_took_it() {
    let database = TestDatabase::new().await;
    let api = Server::start_on(&database, &[API_ONLY]).await;
    let (key, _) = wallet_agent(&database).await;
    let (_, confirmed) = send_amount(&api, &key, "10").await;
    let (_, rejected) = send_amount(&api, &key, "20").await;
    assert_eq!(
        operator_sees(&database, &id_of(&confirmed), &["pending_confirmation"]).await["decided_by"],
        Value::Null,
        "no operator has decided yet"
    );
    let by_alice = agentctl_with(
        &database,
        &[("USER", "alice")],
        &["intents", "confirm", &id_of(&confirmed)],
    )
    .await
    .json();
    assert_eq!(by_alice["decided_by"], "cli:alice", "{by_alice}");
    let unnamed = agentctl(&database, &["intents", "reject", &id_of(&rejected)])
        .await
        .json();
    assert_eq!(unnamed["decided_by"], "cli", "no user to name: {unnamed}");
    assert_eq!(
        operator_sees(&database, &id_of(&confirmed), &["confirmed"]).await["decided_by"],
        "cli:alice",
        "kept with the intent"
    );
}

#[tokio::test]
async fn a_confirmation_repeated_after_it_took_effect_answers_as_the_first_did() {
    let database = TestDatabase::new().await;
    let api = Server::start_on(&database, &[API_ONLY]).await;
    let (key, _) = wallet_agent(&database).await;
    let (status, pending) =
        post_send(&api, &key, json!({"to": RECIPIENT, "amount_atomic": "10"})).await;
    assert_eq!(status, 200, "{pending}");
    let confirm = ["intents", "confirm", &id_of(&pending)];
    let first = agentctl(&database, &confirm).await.json();
    // The answer lost (to a failover, say), the operator's tool asks again.
    let again = agentctl(&database, &confirm).await.json();
    for field in ["id", "status", "decided_by", "policy_violation"] {
        assert_eq!(
            again[field], first[field],
            "{field}: {again} against {first}"
        );
    }
    assert_eq!(again["status"], "confirmed", "{again}");

    // Forced, the first verdict is not kept: refused as for any intent no longer pending.
    let forced = agentctl(
        &database,
        &["intents", "confirm", &id_of(&pending), "--force"],
    )
    .await;
    assert!(!forced.success, "{}", forced.stdout);
}
