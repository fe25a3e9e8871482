//! Receipts of executed intents (x402.md): an Ed25519 signature over the RFC 8785 canonical JSON
//! of the receipt, by a key `/v1/wallet/receipt-keys` lists, checked here as a verifier would.

use std::time::Duration;

use base64::Engine as _;
use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use serde_json::{json, Value};

use crate::onchain::{OnChain, Payer, RECIPIENT};
use crate::support::harness::Server;
use crate::x402::{authorize, auto_confirming, settle_payment};

fn unpadded(text: &str) -> Vec<u8> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .expect("base64url without padding")
}

/// `{"receipt", "signature"}` of the payer's intent `id`, as the API gives it.
async fn signed_receipt(server: &Server, payer: &Payer, id: &str) -> Value {
    let (status, signed) = server
        .get(
            &format!("/v1/wallet/intents/{id}/receipt"),
            Some(&payer.key),
        )
        .await;
    assert_eq!(status, 200, "{signed}");
    signed
}

/// The receipt of the payer's intent `id`, its signature verified by the listed key it names.
async fn verified_receipt(server: &Server, payer: &Payer, id: &str) -> Value {
    let signed = signed_receipt(server, payer, id).await;
    let (status, listed) = server
        .get("/v1/wallet/receipt-keys", Some(&payer.key))
        .await;
    assert_eq!(status, 200, "{listed}");
    let receipt = &signed["receipt"];
    let key = listed["keys"]
        .as_array()
        .expect("keys")
        .iter()
        .find(|key| key["id"] == receipt["receipt_key_id"])
        .unwrap_or_else(|| panic!("the receipt's key is listed: {listed}"));
    assert_eq!(key["algorithm"], "Ed25519");
    let public_key: [u8; 32] = unpadded(key["public_key"].as_str().expect("a key"))
        .try_into()
        .expect("32 bytes");
    let signature: [u8; 64] = unpadded(signed["signature"].as_str().expect("a signature"))
        .try_into()
        .expect("64 bytes");
    let canonical = serde_jcs::to_vec(receipt).expect("canonical JSON");
    VerifyingKey::from_bytes(&public_key)
        .expect("an Ed25519 key")
        .verify(&canonical, &Signature::from_bytes(&signature))
        .expect("the signature verifies over the canonical receipt");
    let mut tampered = receipt.clone();
    tampered["amount_atomic"] = json!("1");
    assert!(
        VerifyingKey::from_bytes(&public_key)
            .expect("an Ed25519 key")
            .verify(
                &serde_jcs::to_vec(&tampered).expect("canonical JSON"),
                &Signature::from_bytes(&signature)
            )
            .is_err(),
        "a changed receipt does not verify"
    );
    receipt.clone()
}

fn block_of(receipt: &Value) -> u64 {
    u64::from_str_radix(
        receipt["blockNumber"]
            .as_str()
            .expect("a block number")
            .trim_start_matches("0x"),
        16,
    )
    .expect("hex")
}

#[tokio::test]
async fn an_executed_transfer_and_an_executed_payment_have_signed_receipts_and_others_none() {
    let chain = OnChain::start().await;
    let server = chain.server(&[]).await;
    let payer = chain.payer(5_000_000).await;
    auto_confirming(&chain, &payer, &[]).await;

    let pending = chain.send(&server, &payer, RECIPIENT, "1250000").await;
    let (status, refused) = server
        .get(
            &format!("/v1/wallet/intents/{pending}/receipt"),
            Some(&payer.key),
        )
        .await;
    assert_eq!(status, 409, "not executed yet: {refused}");
    let (status, _) = server
        .get(
            "/v1/wallet/intents/00000000-0000-7000-8000-000000000000/receipt",
            Some(&payer.key),
        )
        .await;
    assert_eq!(status, 404);

    chain.confirm(&pending).await;
    let transfer = chain.settled(&pending).await;
    assert_eq!(transfer["status"], "executed", "{transfer}");
    let tx_hash = transfer["tx_hash"].as_str().expect("a transaction");
    let receipt = verified_receipt(&server, &payer, &pending).await;
    assert_eq!(receipt["intent_id"], pending.as_str());
    assert_eq!(receipt["kind"], "transfer");
    assert_eq!(receipt["agent_id"], payer.id.as_str());
    assert_eq!(
        receipt["wallet"].as_str().map(str::to_lowercase),
        Some(payer.address.to_lowercase())
    );
    assert_eq!(receipt["amount_atomic"], "1250000");
    assert_eq!(receipt["asset"], "USDC");
    assert_eq!(receipt["network"], "eip155:8453");
    assert_eq!(receipt["tx_hash"], tx_hash);
    assert_eq!(
        receipt["block_number"],
        block_of(&chain.anvil.receipt(tx_hash).await),
        "the block the transfer was mined in"
    );
    assert_eq!(receipt["decided_by"], "cli");
    assert!(receipt.get("resource_url").is_none(), "{receipt}");

    let (status, answer) = authorize(
        &server,
        &payer,
        &json!({"payment_required": crate::x402::challenge_of(&chain, "1500"),
                "idempotency_key": "receipt-1"}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let settled = settle_payment(&chain, &answer).await;
    let id = answer["intent"]["id"].as_str().expect("an intent id");
    let executed = chain
        .reaching(id, &["executed", "expired"], Duration::from_secs(30))
        .await;
    assert_eq!(executed["status"], "executed", "{executed}");
    let receipt = verified_receipt(&server, &payer, id).await;
    assert_eq!(receipt["kind"], "x402");
    assert_eq!(receipt["decided_by"], "policy");
    assert_eq!(receipt["resource_url"], "https://api.example.com/report");
    assert_eq!(receipt["tx_hash"], settled["transactionHash"]);
    assert_eq!(receipt["block_number"], block_of(&settled));

    assert_exported(&chain, &server, &payer, &[&pending, id]).await;
}

/// `agentctl intents export` gives, in JSON and in CSV, exactly the receipts the API gives for
/// `executed` (oldest first), signatures included, and nothing outside its range.
async fn assert_exported(chain: &OnChain, server: &Server, payer: &Payer, executed: &[&str]) {
    let mut expected = Vec::new();
    for id in executed {
        expected.push(signed_receipt(server, payer, id).await);
    }
    let now = time::OffsetDateTime::now_utc();
    let (yesterday, today) = (
        (now - time::Duration::DAY).date().to_string(),
        now.date().to_string(),
    );
    let export = |format: &'static str, from: String, to: String| {
        let agent = payer.id.clone();
        async move {
            chain
                .agentctl(&[
                    "intents", "export", &agent, "--from", &from, "--to", &to, "--format", format,
                ])
                .await
        }
    };
    let json = export("json", yesterday.clone(), today.clone())
        .await
        .json();
    assert_eq!(json, Value::Array(expected.clone()));

    let csv = export("csv", yesterday, today.clone()).await;
    assert!(csv.success, "{}", csv.stderr);
    let mut reader = csv::Reader::from_reader(csv.stdout.as_bytes());
    let columns = reader.headers().expect("a header").clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(|row| row.expect("a row")).collect();
    assert_eq!(rows.len(), expected.len(), "{}", csv.stdout);
    for (row, signed) in rows.iter().zip(&expected) {
        for (column, cell) in columns.iter().zip(row.iter()) {
            let given = match column {
                "signature" => signed["signature"].clone(),
                field => signed["receipt"].get(field).cloned().unwrap_or(Value::Null),
            };
            let text = match given {
                Value::String(text) => text,
                Value::Null => String::new(),
                number => number.to_string(),
            };
            assert_eq!(cell, text, "column {column}");
        }
    }

    let before = export(
        "json",
        "2020-01-01".to_owned(),
        "2020-01-02T00:00:00Z".to_owned(),
    )
    .await
    .json();
    assert_eq!(before, json!([]), "nothing executed in 2020");
    let refused = export("csv", "yesterday".to_owned(), today).await;
    assert!(!refused.success);
    assert!(
        refused
            .stderr
            .contains("start \"yesterday\" is neither a date"),
        "{}",
        refused.stderr
    );
}
