//! `/v1/wallet`: the spec's wallet rules, black-box, on the sandbox chain.

use serde_json::{json, Value};

use crate::support::harness::{agentctl, create_agent, read, Server};
use test_support::TestDatabase;

const NO_WALLET: &str = "No wallet provisioned for this agent";
/// USDC on Base, the token the sandbox wallets hold.
pub(crate) const USDC_TOKEN: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
/// A mixed-case address with a valid EIP-55 checksum (the EIP's own example).
pub(crate) const RECIPIENT: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
const OTHER_RECIPIENT: &str = "0x1111111111111111111111111111111111111111";
/// Sends as fast and as many at once as a test needs, when the test is not about those limits.
pub(crate) const UNLIMITED_SENDS: [(&str, &str); 3] = [
    ("SEND_RATE_PER_MINUTE", "100000"),
    ("SEND_BURST", "1000"),
    ("SEND_CONCURRENCY_PER_AGENT", "100"),
];
/// An executor that looks for work every 50 ms, so a confirmed intent settles within the test.
pub(crate) const FAST_EXECUTOR: (&str, &str) = ("EXECUTOR_INTERVAL_MS", "50");

pub(crate) async fn post_send(server: &Server, key: &str, body: Value) -> (u16, Value) {
    let response = server
        .client
        .post(server.url("/v1/wallet/send"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .expect("request");
    read(response).await
}

/// Sends `amount_atomic` to `RECIPIENT` as the agent.
pub(crate) async fn send_amount(server: &Server, key: &str, amount_atomic: &str) -> (u16, Value) {
    post_send(
        server,
        key,
        json!({"to": RECIPIENT, "amount_atomic": amount_atomic}),
    )
    .await
}

/// `agentctl policy set` of the agent with these flags.
/// Sets the agent's policy with `agentctl policy set`; returns what it printed.
pub(crate) async fn set_policy(database: &TestDatabase, agent_id: &str, flags: &[&str]) -> Value {
    let mut args = vec!["policy", "set", agent_id];
    args.extend_from_slice(flags);
    agentctl(database, &args).await.json()
}

/// The address of the agent's wallet, as the API shows it.
pub(crate) async fn address_of(server: &Server, key: &str) -> String {
    let (_, wallet) = server.get("/v1/wallet/address", Some(key)).await;
    wallet["address"].as_str().expect("address").to_owned()
}

pub(crate) async fn wallet_agent(database: &TestDatabase) -> (String, String) {
    let (key, agent) = create_agent(database, &["--wallet"]).await;
    (key, agent["id"].as_str().expect("id").to_owned())
}

#[tokio::test]
async fn every_wallet_route_says_when_there_is_no_wallet() {
    let (server, database) = Server::start().await;
    let (key, _) = create_agent(&database, &["--email"]).await;
    for path in [
        "/v1/wallet/address",
        "/v1/wallet/policy",
        "/v1/wallet/balance",
        "/v1/wallet/intents",
    ] {
        assert_eq!(
            server.get(path, Some(&key)).await,
            (400, json!({"detail": NO_WALLET})),
            "{path}"
        );
    }
    let body = json!({"to": RECIPIENT, "amount_atomic": "1"});
    assert_eq!(
        post_send(&server, &key, body).await,
        (400, json!({"detail": NO_WALLET}))
    );
}

#[tokio::test]
async fn wallet_routes_require_a_valid_key() {
    let (server, _database) = Server::start().await;
    for path in [
        "/v1/wallet/address",
        "/v1/wallet/policy",
        "/v1/wallet/balance",
        "/v1/wallet/intents",
    ] {
        assert_eq!(
            server.get(path, None).await,
            (401, json!({"detail": "Invalid agent key"})),
            "{path}"
        );
    }
    let (status, _) = post_send(
        &server,
        "ark_nope",
        json!({"to": RECIPIENT, "amount_atomic": "1"}),
    )
    .await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn address_and_policy_describe_the_agents_wallet() {
    let (server, database) = Server::start().await;
    let (key, id) = wallet_agent(&database).await;
    let (_, me) = server.get("/v1/agents/me", Some(&key)).await;
    let (status, address) = server.get("/v1/wallet/address", Some(&key)).await;
    assert_eq!(status, 200);
    assert_eq!(
        address,
        json!({"address": me["wallet"]["address"], "chain": "base"})
    );
    let (status, policy) = server.get("/v1/wallet/policy", Some(&key)).await;
    assert_eq!(status, 200);
    assert_eq!(
        policy,
        json!({"asset": "USDC", "chain": "base", "decimals": 6, "token_address": USDC_TOKEN,
               "max_per_tx_atomic": null, "max_daily_atomic": null, "allowlisted_addresses": null,
               "max_weekly_atomic": null, "max_monthly_atomic": null, "recipient_limits": null,
               "auto_confirm_max_atomic": null, "auto_confirm_daily_atomic": null,
               "approvals_required": null, "approvals_required_above_atomic": null,
               "x402_enabled": true, "usage": {}})
    );
    agentctl(
        &database,
        &[
            "policy",
            "set",
            &id,
            "--max-per-tx",
            "50",
            "--allow",
            OTHER_RECIPIENT,
        ],
    )
    .await
    .json();
    let (_, policy) = server.get("/v1/wallet/policy", Some(&key)).await;
    assert_eq!(policy["max_per_tx_atomic"], "50");
    assert_eq!(policy["allowlisted_addresses"], json!([OTHER_RECIPIENT]));
}

#[tokio::test]
async fn balances_come_from_the_chain_with_exact_decimals() {
    let (server, database) = Server::start().await;
    let (key, _) = wallet_agent(&database).await;
    let (_, address) = server.get("/v1/wallet/address", Some(&key)).await;
    let address = address["address"].as_str().expect("address").to_owned();
    let (status, empty) = server.get("/v1/wallet/balance", Some(&key)).await;
    assert_eq!(status, 200);
    assert_eq!(empty["assets"][1]["amount_atomic"], "0");
    assert_eq!(empty["assets"][1]["formatted_amount"], "0");
    agentctl(&database, &["sandbox", "fund", &address, "1500000"])
        .await
        .json();
    agentctl(
        &database,
        &["sandbox", "fund", &address, "2000000000000000", "--native"],
    )
    .await
    .json();
    let (_, balance) = server.get("/v1/wallet/balance", Some(&key)).await;
    assert_eq!(balance["address"], address.as_str());
    assert_eq!(balance["chain"], "base");
    assert!(uuid::Uuid::parse_str(balance["wallet_id"].as_str().expect("wallet_id")).is_ok());
    assert_eq!(
        balance["assets"],
        json!([
            {"asset": "ETH", "chain": "base", "decimals": 18, "amount_atomic": "2000000000000000",
             "formatted_amount": "0.002", "symbol": "ETH", "token_address": null},
            {"asset": "USDC", "chain": "base", "decimals": 6, "amount_atomic": "1500000",
             "formatted_amount": "1.5", "symbol": "USDC", "token_address": USDC_TOKEN},
        ])
    );
}

#[tokio::test]
async fn a_send_creates_a_pending_intent_and_an_operator_confirms_it() {
    let database = TestDatabase::new().await;
    // The executor's first pass runs at start-up; the next one is an hour away, so the confirmed
    // intent stays confirmed while the test looks at it.
    let server = Server::start_on(&database, &[("EXECUTOR_INTERVAL_MS", "3600000")]).await;
    let (key, _) = wallet_agent(&database).await;
    let lower = RECIPIENT.to_lowercase();
    let (status, intent) = post_send(
        &server,
        &key,
        json!({"to": lower, "amount_atomic": "250000"}),
    )
    .await;
    assert_eq!(status, 200, "{intent}");
    assert_eq!(intent["status"], "pending_confirmation");
    assert_eq!(intent["asset"], "USDC");
    assert_eq!(intent["chain"], "base");
    assert_eq!(intent["recipient_address"], RECIPIENT);
    assert_eq!(intent["amount_atomic"], "250000");
    assert_eq!(intent["token_address"], USDC_TOKEN);
    for empty in ["tx_hash", "failure_reason", "confirmed_at"] {
        assert_eq!(intent[empty], Value::Null, "{empty}");
    }
    let id = intent["id"].as_str().expect("id");
    // The page is read twice, so the server keeps it, before the operator changes the intent.
    for _ in 0..2 {
        let (_, page) = server.get("/v1/wallet/intents", Some(&key)).await;
        assert_eq!(page["items"][0]["status"], "pending_confirmation");
    }
    let confirmed = agentctl(&database, &["intents", "confirm", id])
        .await
        .json();
    assert_eq!(confirmed["status"], "confirmed");
    let (_, page) = server.get("/v1/wallet/intents", Some(&key)).await;
    assert_eq!(page["items"][0]["status"], "confirmed");
    assert!(page["items"][0]["confirmed_at"].is_string());
    let again = agentctl(&database, &["intents", "reject", id]).await;
    assert!(
        !again.success && again.stderr.contains("cannot be rejected"),
        "{}",
        again.stderr
    );
}

#[tokio::test]
async fn malformed_sends_are_422_in_fastapis_shape() {
    let (server, database) = Server::start().await;
    let (key, _) = wallet_agent(&database).await;
    let bad_checksum = RECIPIENT.replacen("5aAe", "5aae", 1);
    let cases: Vec<(Value, Value, &str)> = vec![
        (
            json!({"to": bad_checksum, "amount_atomic": "1"}),
            json!(["body", "to"]),
            "value_error",
        ),
        (
            json!({"to": "0x123", "amount_atomic": "1"}),
            json!(["body", "to"]),
            "value_error",
        ),
        (
            json!({"to": RECIPIENT, "amount_atomic": "1.5"}),
            json!(["body", "amount_atomic"]),
            "value_error",
        ),
        (
            json!({"to": RECIPIENT, "amount_atomic": "0"}),
            json!(["body", "amount_atomic"]),
            "value_error",
        ),
        (
            json!({"to": RECIPIENT, "amount_atomic": "-1"}),
            json!(["body", "amount_atomic"]),
            "value_error",
        ),
        (
            json!({"to": RECIPIENT, "amount_atomic": "1e6"}),
            json!(["body", "amount_atomic"]),
            "value_error",
        ),
        (
            json!({"to": RECIPIENT, "amount_atomic": "0x10"}),
            json!(["body", "amount_atomic"]),
            "value_error",
        ),
        (
            json!({"to": RECIPIENT, "amount_atomic": "9".repeat(80)}),
            json!(["body", "amount_atomic"]),
            "value_error",
        ),
        (
            json!({"to": RECIPIENT, "amount_atomic": 5}),
            json!(["body", "amount_atomic"]),
            "string_type",
        ),
        (
            json!({"to": RECIPIENT}),
            json!(["body", "amount_atomic"]),
            "missing",
        ),
        (
            json!({"amount_atomic": "1"}),
            json!(["body", "to"]),
            "missing",
        ),
        (
            json!({"to": RECIPIENT, "amount_atomic": "1", "idempotency_key": ""}),
            json!(["body", "idempotency_key"]),
            "string_too_short",
        ),
        (
            json!({"to": RECIPIENT, "amount_atomic": "1", "idempotency_key": "k".repeat(256)}),
            json!(["body", "idempotency_key"]),
            "string_too_long",
        ),
    ];
    for (body, loc, kind) in cases {
        let (status, error) = post_send(&server, &key, body.clone()).await;
        assert_eq!(status, 422, "{body}: {error}");
        assert_eq!(error["detail"][0]["loc"], loc, "{body}: {error}");
        assert_eq!(error["detail"][0]["type"], kind, "{body}: {error}");
        assert!(error["detail"][0]["msg"].is_string());
    }
    let response = server
        .client
        .post(server.url("/v1/wallet/send"))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body("{\"to\": ")
        .send()
        .await
        .expect("request");
    let (status, error) = read(response).await;
    assert_eq!(
        (status, error["detail"][0]["type"].clone()),
        (422, json!("json_invalid"))
    );
    let (_, page) = server.get("/v1/wallet/intents", Some(&key)).await;
    assert_eq!(page["items"], json!([]), "nothing was stored");
}

#[tokio::test]
async fn only_usdc_on_base_is_supported() {
    let (server, database) = Server::start().await;
    let (key, _) = wallet_agent(&database).await;
    for (asset, chain) in [("ETH", "base"), ("USDC", "ethereum")] {
        let (status, error) = post_send(
            &server,
            &key,
            json!({"to": RECIPIENT, "amount_atomic": "1", "asset": asset, "chain": chain}),
        )
        .await;
        assert_eq!(status, 400);
        let detail = error["detail"].as_str().expect("detail");
        assert!(
            detail.contains("USDC") && detail.contains("base"),
            "{detail}"
        );
    }
}

#[tokio::test]
async fn policy_violations_are_403_naming_the_rule() {
    let (server, database) = Server::start().await;
    let (key, id) = wallet_agent(&database).await;
    agentctl(
        &database,
        &[
            "policy",
            "set",
            &id,
            "--max-per-tx",
            "100",
            "--max-daily",
            "150",
        ],
    )
    .await
    .json();
    let (status, error) = send_amount(&server, &key, "101").await;
    assert_eq!(status, 403);
    assert!(
        error["detail"]
            .as_str()
            .expect("detail")
            .contains("per-transaction maximum of 100"),
        "{error}"
    );
    assert_eq!(send_amount(&server, &key, "100").await.0, 200);
    let (status, error) = send_amount(&server, &key, "60").await;
    assert_eq!(status, 403);
    let detail = error["detail"].as_str().expect("detail");
    assert!(
        detail.contains("daily maximum of 150") && detail.contains("50 is still available"),
        "{detail}"
    );
    set_policy(&database, &id, &["--allow", OTHER_RECIPIENT]).await;
    let (status, error) = send_amount(&server, &key, "1").await;
    assert_eq!(status, 403);
    assert!(
        error["detail"]
            .as_str()
            .expect("detail")
            .contains("allowlist"),
        "{error}"
    );
    assert_eq!(
        post_send(
            &server,
            &key,
            json!({"to": OTHER_RECIPIENT, "amount_atomic": "1"})
        )
        .await
        .0,
        200
    );
}

#[tokio::test]
async fn a_rejected_intent_releases_its_amount() {
    let (server, database) = Server::start().await;
    let (key, id) = wallet_agent(&database).await;
    set_policy(&database, &id, &["--max-daily", "10"]).await;
    let (_, intent) = send_amount(&server, &key, "10").await;
    assert_eq!(send_amount(&server, &key, "1").await.0, 403);
    let rejected = agentctl(
        &database,
        &[
            "intents",
            "reject",
            intent["id"].as_str().expect("id"),
            "--reason",
            "no",
        ],
    )
    .await
    .json();
    assert_eq!(
        (
            rejected["status"].clone(),
            rejected["failure_reason"].clone()
        ),
        (json!("rejected"), json!("no"))
    );
    assert_eq!(send_amount(&server, &key, "10").await.0, 200);
}

#[tokio::test]
async fn an_idempotency_key_returns_the_original_or_409() {
    let (server, database) = Server::start().await;
    let (key, _) = wallet_agent(&database).await;
    let body = json!({"to": RECIPIENT, "amount_atomic": "5", "idempotency_key": "order-1"});
    let (first_status, first) = post_send(&server, &key, body.clone()).await;
    let (second_status, second) = post_send(&server, &key, body).await;
    assert_eq!((first_status, second_status), (200, 200));
    assert_eq!(first, second);
    let (status, error) = post_send(
        &server,
        &key,
        json!({"to": RECIPIENT, "amount_atomic": "6", "idempotency_key": "order-1"}),
    )
    .await;
    assert_eq!(status, 409, "{error}");
    assert!(error["detail"].is_string());
}

#[tokio::test]
async fn intents_page_newest_first_with_opaque_cursors() {
    let (server, database) = Server::start().await;
    let (key, _) = wallet_agent(&database).await;
    let mut created = Vec::new();
    for n in 1..=5 {
        let (_, intent) = post_send(
            &server,
            &key,
            json!({"to": RECIPIENT, "amount_atomic": n.to_string()}),
        )
        .await;
        created.push(intent["id"].clone());
    }
    created.reverse();
    let mut seen = Vec::new();
    let mut path = "/v1/wallet/intents?limit=2".to_owned();
    loop {
        let (status, page) = server.get(&path, Some(&key)).await;
        assert_eq!(status, 200, "{page}");
        seen.extend(
            page["items"]
                .as_array()
                .expect("items")
                .iter()
                .map(|i| i["id"].clone()),
        );
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/v1/wallet/intents?limit=2&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen, created);
    let (_, all) = server.get("/v1/wallet/intents", Some(&key)).await;
    assert_eq!(all["items"].as_array().expect("items").len(), 5);
    assert_eq!(all["next_cursor"], Value::Null);

    assert_eq!(
        server
            .get("/v1/wallet/intents?cursor=bogus", Some(&key))
            .await,
        (400, json!({"detail": "Invalid cursor"}))
    );
    let (_, first_page) = server.get("/v1/wallet/intents?limit=1", Some(&key)).await;
    let cursor = first_page["next_cursor"].as_str().expect("cursor");
    let (other_key, _) = wallet_agent(&database).await;
    let foreign = server
        .get(
            &format!("/v1/wallet/intents?cursor={cursor}"),
            Some(&other_key),
        )
        .await;
    assert_eq!(
        foreign,
        (400, json!({"detail": "Invalid cursor"})),
        "a cursor does not travel to another agent"
    );
    for (limit, kind) in [
        ("0", "greater_than_equal"),
        ("101", "less_than_equal"),
        ("ten", "int_parsing"),
    ] {
        let (status, error) = server
            .get(&format!("/v1/wallet/intents?limit={limit}"), Some(&key))
            .await;
        assert_eq!(status, 422);
        assert_eq!(error["detail"][0]["type"], kind);
        assert_eq!(error["detail"][0]["loc"], json!(["query", "limit"]));
    }
}

#[tokio::test]
async fn twenty_concurrent_sends_with_one_idempotency_key_make_one_intent() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &UNLIMITED_SENDS).await;
    let (key, id) = wallet_agent(&database).await;
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let (client, url, key) = (
                server.client.clone(),
                server.url("/v1/wallet/send"),
                key.clone(),
            );
            tokio::spawn(async move {
                let response = client
                    .post(url)
                    .bearer_auth(key)
                    .json(
                        &json!({"to": RECIPIENT, "amount_atomic": "3", "idempotency_key": "once"}),
                    )
                    .send()
                    .await
                    .expect("request");
                read(response).await
            })
        })
        .collect();
    let mut ids = Vec::new();
    for task in tasks {
        match task.await.expect("task") {
            (200, intent) => ids.push(intent["id"].clone()),
            // Arrived while the first use of the key was being admitted: refused at once.
            (409, error) => assert!(
                error["detail"]
                    .as_str()
                    .expect("detail")
                    .contains("in progress"),
                "{error}"
            ),
            other => panic!("{other:?}"),
        }
    }
    ids.dedup();
    assert_eq!(ids.len(), 1);
    let stored = agentctl(&database, &["intents", "list", "--agent", &id])
        .await
        .json();
    assert_eq!(stored.as_array().expect("intents").len(), 1);
}

#[tokio::test]
async fn intents_left_pending_expire_and_release_their_amount() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(
        &database,
        &[
            ("INTENT_PENDING_TTL_SECS", "1"),
            ("INTENT_EXPIRY_INTERVAL_SECS", "1"),
        ],
    )
    .await;
    let (key, id) = wallet_agent(&database).await;
    set_policy(&database, &id, &["--max-daily", "10"]).await;
    let (_, intent) = send_amount(&server, &key, "10").await;
    let expired = newest_intent_reaching(&server, &key, &["expired"]).await;
    assert_eq!(expired["id"], intent["id"]);
    assert_eq!(send_amount(&server, &key, "10").await.0, 200);
}

#[tokio::test]
async fn agentctl_expires_intents_pending_longer_than_asked() {
    let (server, database) = Server::start().await;
    let (key, _) = wallet_agent(&database).await;
    let (_, intent) = send_amount(&server, &key, "1").await;
    let kept = agentctl(&database, &["intents", "expire"]).await.json();
    assert_eq!(
        kept,
        json!([]),
        "a fresh intent is kept under the default 24 hours"
    );
    let expired = agentctl(&database, &["intents", "expire", "--pending-for-secs", "0"])
        .await
        .json();
    assert_eq!(expired[0]["id"], intent["id"]);
    assert_eq!(expired[0]["status"], "expired");
}

/// Polls the agent's newest intent until its status is one of `statuses`, within a deadline.
pub(crate) async fn newest_intent_reaching(server: &Server, key: &str, statuses: &[&str]) -> Value {
    let started = std::time::Instant::now();
    loop {
        let (_, page) = server.get("/v1/wallet/intents?limit=1", Some(key)).await;
        let intent = page["items"][0].clone();
        if statuses.contains(&intent["status"].as_str().unwrap_or_default()) {
            return intent;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "never reached {statuses:?}: {intent}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

pub(crate) async fn settled_intent(server: &Server, key: &str) -> Value {
    newest_intent_reaching(server, key, &["executed", "failed"]).await
}

/// Sends as the agent, then confirms as the operator; returns the intent as created.
pub(crate) async fn confirmed_send(
    server: &Server,
    database: &TestDatabase,
    key: &str,
    body: Value,
) -> Value {
    let (status, intent) = post_send(server, key, body).await;
    assert_eq!(status, 200, "{intent}");
    agentctl(
        database,
        &["intents", "confirm", intent["id"].as_str().expect("id")],
    )
    .await
    .json();
    intent
}

#[tokio::test]
async fn a_confirmed_transfer_is_executed_on_the_sandbox_chain() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[FAST_EXECUTOR]).await;
    let (payer_key, _) = wallet_agent(&database).await;
    let (payee_key, _) = wallet_agent(&database).await;
    let payer = address_of(&server, &payer_key).await;
    let payee = address_of(&server, &payee_key).await;
    agentctl(&database, &["sandbox", "fund", &payer, "5000000"])
        .await
        .json();
    confirmed_send(
        &server,
        &database,
        &payer_key,
        json!({"to": payee, "amount_atomic": "1250000"}),
    )
    .await;
    let settled = settled_intent(&server, &payer_key).await;
    assert_eq!(settled["status"], "executed", "{settled}");
    let hash = settled["tx_hash"].as_str().expect("tx_hash");
    assert!(hash.len() == 66 && hash.starts_with("0x"), "{hash}");
    assert_eq!(settled["failure_reason"], Value::Null);
    let usdc = |balance: &Value| balance["assets"][1]["amount_atomic"].clone();
    assert_eq!(
        usdc(&server.get("/v1/wallet/balance", Some(&payer_key)).await.1),
        "3750000"
    );
    assert_eq!(
        usdc(&server.get("/v1/wallet/balance", Some(&payee_key)).await.1),
        "1250000"
    );
}

// Issue 41: the executor looked for confirmed intents every EXECUTOR_INTERVAL_MS (500 ms by
// default); a confirmation now wakes it on every instance at its commit.
#[tokio::test]
async fn a_confirmation_wakes_the_executor_without_waiting_for_its_interval() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[("EXECUTOR_INTERVAL_MS", "600000")]).await;
    let (key, id) = wallet_agent(&database).await;
    set_policy(&database, &id, &["--max-daily", "100"]).await;
    for _ in 0..2 {
        let intent = confirmed_send(
            &server,
            &database,
            &key,
            json!({"to": RECIPIENT, "amount_atomic": "10"}),
        )
        .await;
        let claimed =
            newest_intent_reaching(&server, &key, &["submitted", "executed", "failed"]).await;
        assert_eq!(claimed["id"], intent["id"], "{claimed}");
    }
}

#[tokio::test]
async fn a_transfer_beyond_the_balance_fails_with_a_reason() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[FAST_EXECUTOR]).await;
    let (key, id) = wallet_agent(&database).await;
    set_policy(&database, &id, &["--max-daily", "100"]).await;
    confirmed_send(
        &server,
        &database,
        &key,
        json!({"to": RECIPIENT, "amount_atomic": "100"}),
    )
    .await;
    let settled = settled_intent(&server, &key).await;
    assert_eq!(settled["status"], "failed", "{settled}");
    assert!(
        settled["failure_reason"]
            .as_str()
            .expect("reason")
            .contains("reverted"),
        "{settled}"
    );
    assert!(
        settled["tx_hash"].is_string(),
        "the reverted transaction is on record"
    );
    assert_eq!(
        send_amount(&server, &key, "100").await.0,
        200,
        "the failed amount was released"
    );
}

#[tokio::test]
async fn an_instance_with_the_executor_disabled_leaves_confirmed_intents_to_others() {
    let database = TestDatabase::new().await;
    let api_only =
        Server::start_on(&database, &[FAST_EXECUTOR, ("EXECUTOR_ENABLED", "false")]).await;
    api_only
        .wait_for_logs(|logs| logs.contains("EXECUTOR_ENABLED=false"))
        .await;
    let (key, _) = wallet_agent(&database).await;
    let intent = confirmed_send(
        &api_only,
        &database,
        &key,
        json!({"to": RECIPIENT, "amount_atomic": "1"}),
    )
    .await;
    // Twenty executor intervals of this instance: a running executor would have submitted it.
    let watched = std::time::Instant::now();
    while watched.elapsed() < std::time::Duration::from_secs(1) {
        let (_, page) = api_only.get("/v1/wallet/intents?limit=1", Some(&key)).await;
        assert_eq!(page["items"][0]["status"], "confirmed", "{page}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let _executing = Server::start_on(&database, &[FAST_EXECUTOR]).await;
    let settled = settled_intent(&api_only, &key).await;
    assert_eq!(settled["id"], intent["id"]);
    assert_ne!(settled["status"], "confirmed");
}
