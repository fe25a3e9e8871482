//! `agentctl intents resolve` on a real chain (anvil): a submitted intent is settled by what the
//! chain shows, and only by that.

use std::time::Duration;

use serde_json::json;

use crate::onchain::{OnChain, Payer, RECIPIENT};
use crate::support::faulty_node::BroadcastFault;
use crate::support::harness::Server;

/// A submitted intent: its id, the hash of its transaction, and the server that sent it, to be
/// stopped once the transaction is where the test wants it, so only the resolve settles it.
async fn submitted(chain: &OnChain, payer: &Payer, amount: &str) -> (String, String, Server) {
    // Its executor would fail the intent itself only after this grace, long after the test.
    let server = chain.server(&[("EXECUTOR_NONCE_GRACE_SECS", "3600")]).await;
    let id = chain.send(&server, payer, RECIPIENT, amount).await;
    chain.confirm(&id).await;
    let intent = chain
        .reaching(&id, &["submitted"], Duration::from_secs(30))
        .await;
    let hash = intent["tx_hash"].as_str().expect("tx_hash").to_owned();
    (id, hash, server)
}

async fn resolve_refused(chain: &OnChain, id: &str, expected: &str) {
    let refused = chain.agentctl(&["intents", "resolve", id]).await;
    assert!(!refused.success, "{}", refused.stdout);
    assert!(refused.stderr.contains(expected), "{}", refused.stderr);
}

#[tokio::test]
async fn a_nonce_taken_outside_the_service_fails_the_intent_once_the_chain_shows_it() {
    let chain = OnChain::start().await;
    let payer = chain.payer(1_000).await;
    // The node answers the broadcasts but never passes them on: nothing of ours is mined.
    chain
        .node
        .fault_next_broadcasts(BroadcastFault::Swallow, 1_000);
    let (id, _, server) = submitted(&chain, &payer, "25").await;
    chain.node.wait_for_broadcasts(1).await;
    drop(server);

    resolve_refused(&chain, &id, "nothing was changed").await;
    assert_eq!(chain.show(&id).await["status"], "submitted");

    // Someone holding the wallet's key spends its nonce 0 without this service.
    chain
        .anvil
        .rpc("anvil_impersonateAccount", json!([payer.address]))
        .await;
    let outside = chain
        .anvil
        .rpc(
            "eth_sendTransaction",
            json!([{"from": payer.address, "to": payer.address, "value": "0x0"}]),
        )
        .await;
    chain.anvil.receipt(outside.as_str().expect("a hash")).await;

    let resolved = chain.agentctl(&["intents", "resolve", &id]).await.json();
    assert_eq!(resolved["status"], "failed", "{resolved}");
    let reason = resolved["failure_reason"].as_str().expect("a reason");
    assert!(reason.contains("nonce 0"), "{reason}");
    chain.assert_paid(&payer, 1, 0).await;
    resolve_refused(&chain, &id, "is failed, not submitted").await;
}

#[tokio::test]
async fn a_transaction_mined_after_its_sender_stopped_executes_the_intent_by_its_receipt() {
    let chain = OnChain::start().await;
    let payer = chain.payer(1_000).await;
    chain.anvil.hold_mining().await;
    let (id, hash, server) = submitted(&chain, &payer, "40").await;
    chain.anvil.wait_for_pool(&hash).await;
    drop(server);

    resolve_refused(&chain, &id, "still pending on chain").await;

    chain.anvil.resume_mining().await;
    chain.anvil.receipt(&hash).await;
    let resolved = chain.agentctl(&["intents", "resolve", &id]).await.json();
    assert_eq!(resolved["status"], "executed", "{resolved}");
    assert_eq!(resolved["tx_hash"], hash.as_str());
    chain.assert_paid(&payer, 1, 40).await;
}
