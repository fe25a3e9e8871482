//! `GET /v1/agents/me`: the AgentResponse of the spec, with resources nested or null.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::support::harness::{agentctl, create_agent, Server};
use crate::wallet::post_send;

fn assert_timestamp(value: &Value) {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("timestamp string, got {value}"));
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|e| panic!("{text} is not ISO 8601: {e}"));
}

fn assert_uuid(value: &Value) {
    uuid::Uuid::parse_str(value.as_str().expect("uuid string")).expect("uuid");
}

#[tokio::test]
async fn an_agent_without_resources_has_them_null() {
    let (server, database) = Server::start().await;
    let (key, created) = create_agent(&database, &["--label", "plain agent"]).await;
    let (status, me) = server.get("/v1/agents/me", Some(&key)).await;
    assert_eq!(status, 200);
    assert_eq!(me, created, "agentctl and the API describe the agent alike");
    assert_uuid(&me["id"]);
    assert_eq!(me["is_active"], true);
    assert_eq!(me["label"], "plain agent");
    assert_timestamp(&me["created_at"]);
    for resource in ["phone_number", "email_inbox", "wallet"] {
        assert_eq!(me[resource], Value::Null, "{resource}");
    }
    let expected_hash = hex::encode(&Sha256::digest(key.as_bytes())[..8]);
    assert_eq!(me["agent_key_hash"], expected_hash.as_str());
    let body = me.to_string();
    assert!(
        !body.contains(&key[4..]),
        "the key itself is never returned"
    );
}

#[tokio::test]
async fn an_agent_with_every_resource_shows_them_nested() {
    let (server, database) = Server::start().await;
    let (key, _) = create_agent(&database, &["--email", "--phone", "--wallet"]).await;
    let (status, me) = server.get("/v1/agents/me", Some(&key)).await;
    assert_eq!(status, 200);

    let phone = &me["phone_number"];
    assert_uuid(&phone["id"]);
    let number = phone["number"].as_str().expect("number");
    assert!(
        number.starts_with('+') && number[1..].bytes().all(|b| b.is_ascii_digit()),
        "{number}"
    );
    assert_eq!(phone["country_iso2"], "US");
    assert_timestamp(&phone["created_at"]);

    let inbox = &me["email_inbox"];
    assert_uuid(&inbox["id"]);
    assert!(inbox["address"].as_str().expect("address").contains('@'));
    assert_timestamp(&inbox["created_at"]);

    let wallet = &me["wallet"];
    assert_uuid(&wallet["id"]);
    assert_eq!(wallet["chain"], "base");
    assert_eq!(wallet["custody"], "self_custodial");
    assert_eq!(wallet["status"], "active");
    assert_eq!(wallet["delegated"], false);
    assert!(wallet["provider"].is_string());
    assert_timestamp(&wallet["created_at"]);
    let address = wallet["address"].as_str().expect("address");
    assert!(
        address.len() == 42 && address.starts_with("0x"),
        "{address}"
    );
    let checksummed = alloy_primitives::Address::parse_checksummed(address, None);
    assert!(checksummed.is_ok(), "{address} is EIP-55 checksummed");

    let policy = &wallet["spend_policy"];
    assert_uuid(&policy["id"]);
    assert_eq!(policy["asset"], "USDC");
    assert_eq!(policy["chain"], "base");
    assert_eq!(policy["decimals"], 6);
    assert_eq!(
        policy["token_address"],
        "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
    );
    assert_eq!(policy["max_per_tx_atomic"], Value::Null);
    assert_eq!(policy["max_daily_atomic"], Value::Null);
    assert_eq!(policy["allowlisted_addresses"], Value::Null);
    // A policy that caps no window holds none (policy.md).
    assert_eq!(policy["usage"], json!({}));
}

#[tokio::test]
async fn a_policy_set_by_the_operator_shows_in_the_wallet() {
    let (server, database) = Server::start().await;
    let (key, agent) = create_agent(&database, &["--wallet"]).await;
    let id = agent["id"].as_str().expect("id");
    let recipient = "0x000000000000000000000000000000000000dead";
    let set = agentctl(
        &database,
        &[
            "policy",
            "set",
            id,
            "--max-per-tx",
            "1000000",
            "--max-daily",
            "5000000",
            "--allow",
            recipient,
        ],
    )
    .await
    .json();
    let (_, me) = server.get("/v1/agents/me", Some(&key)).await;
    let policy = &me["wallet"]["spend_policy"];
    assert_eq!(policy, &set);
    assert_eq!(policy["max_per_tx_atomic"], "1000000");
    assert_eq!(policy["max_daily_atomic"], "5000000");
    assert_eq!(
        policy["allowlisted_addresses"],
        json!(["0x000000000000000000000000000000000000dEaD"])
    );
    assert_eq!(
        policy["usage"],
        json!({"daily": {"spent_atomic": "0", "remaining_atomic": "5000000"}})
    );

    // What a send reserves shows at once, as the policy route shows it, and in `agents show`.
    let (status, _) = post_send(
        &server,
        &key,
        json!({"to": recipient, "amount_atomic": "750000"}),
    )
    .await;
    assert_eq!(status, 200);
    let (_, me) = server.get("/v1/agents/me", Some(&key)).await;
    let policy = &me["wallet"]["spend_policy"];
    let held = json!({"daily": {"spent_atomic": "750000", "remaining_atomic": "4250000"}});
    assert_eq!(policy["usage"], held);
    let (_, read) = server.get("/v1/wallet/policy", Some(&key)).await;
    assert_eq!(read["usage"], held);
    let shown = agentctl(&database, &["agents", "show", id]).await.json();
    assert_eq!(&shown["wallet"]["spend_policy"], policy);
}

#[tokio::test]
async fn each_key_sees_only_its_own_agent() {
    let (server, database) = Server::start().await;
    let (first_key, first) = create_agent(&database, &["--wallet"]).await;
    let (second_key, second) = create_agent(&database, &["--wallet"]).await;
    let (_, first_me) = server.get("/v1/agents/me", Some(&first_key)).await;
    let (_, second_me) = server.get("/v1/agents/me", Some(&second_key)).await;
    assert_eq!(first_me["id"], first["id"]);
    assert_eq!(second_me["id"], second["id"]);
    assert_ne!(
        first_me["wallet"]["address"],
        second_me["wallet"]["address"]
    );
    let first_body = first_me.to_string();
    for leaked in [
        &second["id"],
        &second["agent_key_hash"],
        &second["wallet"]["address"],
    ] {
        assert!(
            !first_body.contains(leaked.as_str().expect("string")),
            "{leaked} leaked"
        );
    }
}
