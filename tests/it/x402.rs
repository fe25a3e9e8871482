//! Paying x402 challenges (x402.md) on a real chain: the wallet signs an EIP-3009 authorization
//! under the spend policy, and the payee settles it with the token itself; this service never
//! sends an x402 payment on chain.

use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

use crate::chain::WrittenAuthorization;
use crate::onchain::{OnChain, Payer, RECIPIENT};
use crate::support::harness::{read, Server};

const AUTHORIZE: &str = "/v1/wallet/x402/authorize";

/// A version 2 challenge for `amount` of the chain's token to `RECIPIENT`, as a resource server
/// writes its `PAYMENT-REQUIRED` header.
pub(crate) fn challenge_of(chain: &OnChain, amount: &str) -> Value {
    challenge_valid_for(chain, amount, 60)
}

/// `challenge`, whose authorization is valid `secs` seconds after it is signed.
fn challenge_valid_for(chain: &OnChain, amount: &str, secs: u64) -> Value {
    json!({
        "x402Version": 2,
        "error": "PAYMENT-SIGNATURE header is required",
        "resource": {"url": "https://api.example.com/report", "mimeType": "application/json"},
        "accepts": [
            {"scheme": "exact", "network": "eip155:1", "amount": amount, "asset": chain.token,
             "payTo": RECIPIENT, "maxTimeoutSeconds": secs, "extra": {"name": "USDC", "version": "2"}},
            {"scheme": "exact", "network": "eip155:8453", "amount": amount, "asset": chain.token,
             "payTo": RECIPIENT, "maxTimeoutSeconds": secs, "extra": {"name": "USDC", "version": "2"}},
        ],
    })
}

fn header_value(challenge: &Value) -> String {
    base64::engine::general_purpose::STANDARD.encode(challenge.to_string())
}

/// `body` posted to `path` with the payer's key: the status and the answer.
pub(crate) async fn post_as(
    server: &Server,
    payer: &Payer,
    path: &str,
    body: &Value,
) -> (u16, Value) {
    let response = server
        .client
        .post(server.url(path))
        .bearer_auth(&payer.key)
        .json(body)
        .send()
        .await
        .expect("request");
    read(response).await
}

pub(crate) async fn authorize(server: &Server, payer: &Payer, body: &Value) -> (u16, Value) {
    post_as(server, payer, AUTHORIZE, body).await
}

/// The payment a `PAYMENT-SIGNATURE` value carries.
fn payment_of(answer: &Value) -> Value {
    let value = answer["payment_signature"].as_str().expect("a payment");
    let text = base64::engine::general_purpose::STANDARD
        .decode(value)
        .expect("base64");
    serde_json::from_slice(&text).expect("a JSON payment")
}

/// A 403 whose detail names `rule`, as every refusal of a payment does.
fn refused_by_rule(status: u16, answer: &Value, rule: &str) {
    assert_eq!(status, 403, "{answer}");
    assert!(
        answer["detail"].as_str().expect("detail").contains(rule),
        "{answer}"
    );
}

/// The payer's only event of type `kind`.
async fn event_of(server: &Server, payer: &Payer, kind: &str) -> Value {
    let (status, events) = server
        .get(&format!("/v1/events?types={kind}"), Some(&payer.key))
        .await;
    assert_eq!(status, 200, "{events}");
    match events["items"].as_array().map(Vec::as_slice) {
        Some([event]) => event.clone(),
        _ => panic!("not one {kind} event: {events}"),
    }
}

/// Sets the payer's policy to confirm payments up to 5000 at once (5000 a day), with `more`.
pub(crate) async fn auto_confirming(chain: &OnChain, payer: &Payer, more: &[&str]) {
    let mut flags = vec![
        "policy",
        "set",
        &payer.id,
        "--auto-confirm-max",
        "5000",
        "--auto-confirm-daily",
        "5000",
    ];
    flags.extend_from_slice(more);
    chain.agentctl(&flags).await.json();
}

/// Settles the authorization an answer of `authorize` hands out, as its payee would: the receipt.
pub(crate) async fn settle_payment(chain: &OnChain, answer: &Value) -> Value {
    settle(chain, &payment_of(answer)).await
}

async fn settle(chain: &OnChain, payment: &Value) -> Value {
    chain
        .anvil
        .settle_authorization(
            &chain.token,
            &WrittenAuthorization {
                authorization: &payment["payload"]["authorization"],
                signature: payment["payload"]["signature"].as_str().expect("signature"),
            },
        )
        .await
}

#[tokio::test]
async fn a_payment_the_policy_confirms_is_an_authorization_the_payee_settles_with_the_token() {
    let chain = OnChain::start().await;
    let server = chain.server(&[]).await;
    let payer = chain.payer(10_000).await;
    auto_confirming(&chain, &payer, &[]).await;
    let offered = challenge_of(&chain, "1500");
    let body = json!({
        "payment_required": header_value(&offered),
        "max_amount_atomic": "2000",
        "idempotency_key": "report-1",
    });
    let (status, answer) = authorize(&server, &payer, &body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["status"], "authorized");
    assert_eq!(answer["header"], "PAYMENT-SIGNATURE");
    let intent = &answer["intent"];
    assert_eq!(intent["kind"], "x402", "{intent}");
    assert_eq!(intent["status"], "authorized");
    assert_eq!(intent["amount_atomic"], "1500");
    assert_eq!(
        intent["recipient_address"].as_str().map(str::to_lowercase),
        Some(RECIPIENT.to_lowercase())
    );
    assert_eq!(
        intent["x402"]["resource_url"],
        "https://api.example.com/report"
    );
    assert_eq!(intent["x402"]["network"], "eip155:8453");
    assert_eq!(intent["x402"]["valid_before"], answer["valid_before"]);

    let payment = payment_of(&answer);
    assert_eq!(payment["x402Version"], 2);
    assert_eq!(
        payment["accepted"], offered["accepts"][1],
        "the payable entry, echoed as the server wrote it"
    );
    assert_eq!(payment["resource"], offered["resource"]);
    let authorization = &payment["payload"]["authorization"];
    assert_eq!(
        authorization["from"].as_str().map(str::to_lowercase),
        Some(payer.address.to_lowercase())
    );
    assert_eq!(authorization["value"], "1500");
    assert_eq!(authorization["nonce"], intent["x402"]["nonce"]);

    let (status, again) = authorize(&server, &payer, &body).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(
        again["payment_signature"], answer["payment_signature"],
        "one key, one authorization, one nonce"
    );
    let (status, other_terms) = authorize(
        &server,
        &payer,
        &json!({
            "payment_required": challenge_of(&chain, "1600"),
            "idempotency_key": "report-1",
        }),
    )
    .await;
    assert_eq!(status, 409, "{other_terms}");

    let authorized = event_of(&server, &payer, "transfer_intent.authorized").await;
    assert_eq!(authorized["data"]["kind"], "x402", "{authorized}");
    assert_eq!(authorized["data"]["x402"], intent["x402"], "{authorized}");

    let receipt = settle(&chain, &payment).await;
    assert_eq!(
        receipt["status"], "0x1",
        "the token takes the authorization: {receipt}"
    );
    chain.assert_paid(&payer, 0, 1500).await;

    // The settlement watch finds the token's AuthorizationUsed log: executed, by the payee's
    // transaction.
    let id = intent["id"].as_str().expect("an intent id");
    let executed = chain
        .reaching(id, &["executed", "expired"], Duration::from_secs(30))
        .await;
    assert_eq!(executed["status"], "executed", "{executed}");
    assert_eq!(
        executed["tx_hash"], receipt["transactionHash"],
        "{executed}"
    );
    let executed_event = event_of(&server, &payer, "transfer_intent.executed").await;
    assert_eq!(
        executed_event["data"]["tx_hash"],
        receipt["transactionHash"]
    );
    assert_eq!(executed_event["data"]["kind"], "x402");
}

#[tokio::test]
async fn an_authorization_never_used_expires_once_a_block_reaches_valid_before_and_frees_its_amount(
) {
    let chain = OnChain::start().await;
    let server = chain.server(&[]).await;
    let payer = chain.payer(10_000).await;
    auto_confirming(&chain, &payer, &["--max-daily", "3000"]).await;
    let (status, answer) = authorize(
        &server,
        &payer,
        &json!({
            "payment_required": challenge_valid_for(&chain, "1000", 2),
            "idempotency_key": "never-used",
        }),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let id = answer["intent"]["id"].as_str().expect("an intent id");
    let daily = |policy: &Value| policy["usage"]["daily"].clone();
    let (_, policy) = server.get("/v1/wallet/policy", Some(&payer.key)).await;
    assert_eq!(
        daily(&policy),
        json!({"spent_atomic": "1000", "remaining_atomic": "2000"}),
        "an authorization handed out holds its amount: {policy}"
    );

    // Anvil mines only when asked: blocks come until one is stamped at validBefore or later.
    let deadline = Instant::now() + Duration::from_secs(30);
    let expired = loop {
        chain.anvil.rpc("evm_mine", json!([])).await;
        let shown = chain.show(id).await;
        if shown["status"] != "authorized" || Instant::now() > deadline {
            break shown;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(expired["status"], "expired", "{expired}");
    assert!(expired["tx_hash"].is_null(), "{expired}");
    assert_eq!(
        (&expired["kind"], &expired["x402"]["resource_url"]),
        (&json!("x402"), &json!("https://api.example.com/report")),
        "agentctl shows what the payment was for: {expired}"
    );
    let (_, policy) = server.get("/v1/wallet/policy", Some(&payer.key)).await;
    assert_eq!(
        daily(&policy),
        json!({"spent_atomic": "0", "remaining_atomic": "3000"}),
        "money that never moved does not stay counted: {policy}"
    );
    let expired_event = event_of(&server, &payer, "transfer_intent.expired").await;
    assert_eq!(expired_event["data"]["id"], id);
    chain.assert_paid(&payer, 0, 0).await;
}

#[tokio::test]
async fn a_payment_above_the_auto_confirm_tier_waits_for_an_operator_and_is_signed_after() {
    let chain = OnChain::start().await;
    let server = chain.server(&[]).await;
    let payer = chain.payer(10_000).await;
    let body = json!({
        "payment_required": challenge_of(&chain, "700"),
        "idempotency_key": "report-2",
    });
    let (status, pending) = authorize(&server, &payer, &body).await;
    assert_eq!(status, 202, "{pending}");
    assert_eq!(pending["status"], "pending_confirmation");
    let id = pending["intent"]["id"].as_str().expect("an intent id");
    assert!(
        pending["approval_url"]
            .as_str()
            .expect("an approval link")
            .ends_with(&format!("/console/intents/{id}")),
        "{pending}"
    );
    assert!(
        pending["intent"]["x402"]["nonce"].is_null(),
        "nothing is signed yet"
    );

    chain.confirm(id).await;
    let (status, answer) = authorize(&server, &payer, &body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["intent"]["id"], id);
    assert_eq!(answer["intent"]["status"], "authorized");
    let receipt = settle(&chain, &payment_of(&answer)).await;
    assert_eq!(receipt["status"], "0x1", "{receipt}");
    chain.assert_paid(&payer, 0, 700).await;
}

#[tokio::test]
async fn a_payment_is_refused_above_the_agents_ceiling_by_the_policy_when_turned_off_or_unpayable()
{
    let chain = OnChain::start().await;
    let server = chain.server(&[]).await;
    let payer = chain.payer(10_000).await;
    chain
        .agentctl(&["policy", "set", &payer.id, "--max-per-tx", "1000"])
        .await
        .json();
    let (status, ceiling) = authorize(
        &server,
        &payer,
        &json!({
            "payment_required": challenge_of(&chain, "900"),
            "max_amount_atomic": "899",
            "idempotency_key": "k-1",
        }),
    )
    .await;
    refused_by_rule(status, &ceiling, "max_amount");
    let (status, policy) = authorize(
        &server,
        &payer,
        &json!({"payment_required": challenge_of(&chain, "1001"), "idempotency_key": "k-2"}),
    )
    .await;
    refused_by_rule(status, &policy, "max_per_tx");
    let turned_off = chain
        .agentctl(&["policy", "set", &payer.id, "--x402", "off"])
        .await
        .json();
    assert_eq!(turned_off["x402_enabled"], false, "{turned_off}");
    let (status, off) = authorize(
        &server,
        &payer,
        &json!({"payment_required": challenge_of(&chain, "10"), "idempotency_key": "k-4"}),
    )
    .await;
    refused_by_rule(status, &off, "x402_disabled");
    let (status, send) = crate::wallet::post_send(
        &server,
        &payer.key,
        json!({"to": RECIPIENT, "amount_atomic": "10"}),
    )
    .await;
    assert_eq!(status, 200, "sends are not x402 payments: {send}");
    let mut elsewhere = challenge_of(&chain, "10");
    elsewhere["accepts"][1]["network"] = json!("eip155:84532");
    elsewhere["accepts"][1]["asset"] = json!("0x036CbD53842c5426634e7929541eC2318f3dCF7e");
    let mut misnamed = challenge_of(&chain, "10");
    misnamed["accepts"][1]["extra"]["name"] = json!("USD Coin");
    for (payment_required, what) in [
        (elsewhere, "no entry this wallet pays"),
        (misnamed, "an EIP-712 domain the token does not sign under"),
        (json!("not base64!"), "no challenge"),
        (
            json!({"x402Version": 7, "accepts": []}),
            "an unknown version",
        ),
    ] {
        let (status, refused) = authorize(
            &server,
            &payer,
            &json!({"payment_required": payment_required, "idempotency_key": "k-3"}),
        )
        .await;
        assert_eq!(status, 422, "{what}: {refused}");
        assert_eq!(
            refused["detail"][0]["loc"],
            json!(["body", "payment_required"]),
            "{what}: {refused}"
        );
        if what.starts_with("an EIP-712") {
            assert!(
                refused["detail"][0]["msg"]
                    .as_str()
                    .is_some_and(|msg| msg.contains("\"USD Coin\"") && msg.contains("EIP-712")),
                "the refusal names the domain: {refused}"
            );
        }
    }
    let (status, intents) = {
        let response = server
            .client
            .get(server.url("/v1/wallet/intents"))
            .bearer_auth(&payer.key)
            .send()
            .await
            .expect("request");
        read(response).await
    };
    assert_eq!(status, 200);
    let kinds: Vec<&Value> = intents["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|intent| &intent["kind"])
        .collect();
    assert_eq!(
        kinds,
        [&json!("transfer")],
        "a refused payment leaves no intent, only the send is there: {intents}"
    );
    chain.assert_paid(&payer, 0, 0).await;
}

#[tokio::test]
async fn a_challenge_is_judged_by_check_as_a_payment_without_reserving_anything() {
    let chain = OnChain::start().await;
    let server = chain.server(&[]).await;
    let payer = chain.payer(10_000).await;
    chain
        .agentctl(&[
            "policy",
            "set",
            &payer.id,
            "--max-daily",
            "3000",
            "--auto-confirm-max",
            "500",
            "--auto-confirm-daily",
            "5000",
        ])
        .await
        .json();
    let check = |body: Value| {
        let server = &server;
        let key = payer.key.clone();
        async move {
            let response = server
                .client
                .post(server.url("/v1/wallet/check"))
                .bearer_auth(&key)
                .json(&body)
                .send()
                .await
                .expect("request");
            read(response).await
        }
    };
    let daily = |spent: &str, remaining: &str| json!({"spent_atomic": spent, "remaining_atomic": remaining});
    for _ in 0..2 {
        let (status, verdict) = check(json!({
            "payment_required": header_value(&challenge_of(&chain, "400")),
        }))
        .await;
        assert_eq!(status, 200, "{verdict}");
        assert_eq!(verdict["allowed"], true, "{verdict}");
        assert_eq!(verdict["would_be"], "confirmed", "{verdict}");
        assert_eq!(verdict["usage"]["daily"], daily("0", "3000"));
    }
    let (_, above_tier) = check(json!({"payment_required": challenge_of(&chain, "1000")})).await;
    assert_eq!(
        above_tier["would_be"], "pending_confirmation",
        "{above_tier}"
    );
    let (_, over_window) = check(json!({"payment_required": challenge_of(&chain, "3001")})).await;
    assert_eq!(over_window["allowed"], false, "{over_window}");
    assert_eq!(over_window["rule"], "max_daily", "{over_window}");
    let (status, ceiling) = check(json!({
        "payment_required": challenge_of(&chain, "400"), "max_amount_atomic": "399",
    }))
    .await;
    refused_by_rule(status, &ceiling, "max_amount");
    let (status, unpayable) = check(json!({"payment_required": "not base64!"})).await;
    assert_eq!(status, 422, "{unpayable}");
    assert_eq!(
        unpayable["detail"][0]["loc"],
        json!(["body", "payment_required"])
    );
    chain
        .agentctl(&["policy", "set", &payer.id, "--x402", "off"])
        .await
        .json();
    let (_, off) = check(json!({"payment_required": challenge_of(&chain, "400")})).await;
    assert_eq!(off["allowed"], false, "{off}");
    assert_eq!(off["rule"], "x402_disabled", "{off}");
    let (status, send) = check(json!({"to": RECIPIENT, "amount_atomic": "10"})).await;
    assert_eq!(
        status, 200,
        "a send's body is still judged as a send: {send}"
    );
    assert_eq!(send["allowed"], true, "{send}");

    let (_, page) = server.get("/v1/wallet/intents", Some(&payer.key)).await;
    assert_eq!(page["items"], json!([]), "nothing was created");
}
