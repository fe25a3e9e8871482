//! Exactly-once money movement, black-box: real servers execute on anvil through a node that
//! refuses, loses, delays or half-sends their broadcasts, and are killed mid-transfer. Whatever
//! happens, every intent ends `executed` (its money moved once) or `failed` (it did not move).

use std::time::{Duration, Instant};

use alloy_primitives::U256;
use futures_util::future::join_all;
use serde_json::{json, Value};

use crate::onchain::{OnChain, Payer, RECIPIENT};
use crate::support::faulty_node::BroadcastFault;
use crate::support::harness::{amount_of, Server};
use crate::wallet::post_send;

/// How long a test waits for a chain that works again to settle everything.
pub(crate) const SETTLE_DEADLINE: Duration = Duration::from_secs(120);
/// agentctl runs at once when confirming many intents.
const CONFIRMING_AT_ONCE: usize = 8;

pub(crate) async fn confirm_all(chain: &OnChain, ids: &[String]) {
    for batch in ids.chunks(CONFIRMING_AT_ONCE) {
        join_all(batch.iter().map(|id| chain.confirm(id))).await;
    }
}

/// The operator's list of intents in `status`.
pub(crate) async fn listed(chain: &OnChain, status: &str) -> Vec<Value> {
    let listed = chain
        .agentctl(&["intents", "list", "--status", status])
        .await
        .json();
    listed.as_array().expect("a list").clone()
}

/// Waits until no intent is confirmed or submitted any more, and returns every intent.
pub(crate) async fn all_settled(chain: &OnChain, deadline: Duration) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let open = listed(chain, "confirmed").await.len() + listed(chain, "submitted").await.len();
        if open == 0 {
            let all = chain.agentctl(&["intents", "list"]).await.json();
            return all.as_array().expect("a list").clone();
        }
        assert!(
            started.elapsed() < deadline,
            "{open} intents still unsettled"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub(crate) fn attempts(shown: &Value) -> &Vec<Value> {
    shown["attempts"].as_array().expect("attempts")
}

#[tokio::test]
async fn a_refused_broadcast_is_sent_again_so_later_transfers_are_not_wedged_behind_its_nonce() {
    let chain = OnChain::start().await;
    let server = chain.server(&[]).await;
    let payer = chain.payer(1_000).await;
    chain.node.fault_next_broadcasts(BroadcastFault::Refuse, 1);
    let first = chain.send(&server, &payer, RECIPIENT, "100").await;
    let second = chain.send(&server, &payer, RECIPIENT, "200").await;
    chain.confirm(&first).await;
    chain.confirm(&second).await;
    for id in [&first, &second] {
        let settled = chain.settled(id).await;
        assert_eq!(settled["status"], "executed", "{settled}");
    }
    let refused = chain.show(&first).await;
    assert_eq!(attempts(&refused).len(), 1, "{refused}");
    assert!(
        attempts(&refused)[0]["broadcasts"].as_u64() >= Some(2),
        "the refused transaction was sent again: {refused}"
    );
    chain.assert_paid(&payer, 2, 300).await;
}

#[tokio::test]
async fn a_broadcast_that_errs_after_sending_settles_by_its_receipt_and_is_never_paid_twice() {
    let chain = OnChain::start().await;
    let server = chain.server(&[]).await;
    let mut paid = 0u64;
    for fault in [
        BroadcastFault::ErrorAfterSending,
        BroadcastFault::SilentAfterSending,
    ] {
        let payer = chain.payer(10_000).await;
        chain
            .agentctl(&["policy", "set", &payer.id, "--max-daily", "1000"])
            .await
            .json();
        chain.node.fault_next_broadcasts(fault, 1);
        let id = chain.send(&server, &payer, RECIPIENT, "1000").await;
        chain.confirm(&id).await;
        let settled = chain.settled(&id).await;
        assert_eq!(settled["status"], "executed", "{fault:?}: {settled}");
        paid += 1000;
        let shown = chain.show(&id).await;
        assert_eq!(attempts(&shown).len(), 1, "{shown}");
        chain.assert_paid(&payer, 1, paid).await;
        let (status, body) = post_send(
            &server,
            &payer.key,
            json!({"to": RECIPIENT, "amount_atomic": "1"}),
        )
        .await;
        assert_eq!(
            status, 403,
            "the day's allowance stays spent: {fault:?}: {body}"
        );
    }
}

#[tokio::test]
async fn a_swallowed_broadcast_is_sent_again_until_it_is_mined() {
    let chain = OnChain::start().await;
    let server = chain.server(&[]).await;
    let payer = chain.payer(1_000).await;
    chain.node.fault_next_broadcasts(BroadcastFault::Swallow, 2);
    let id = chain.send(&server, &payer, RECIPIENT, "5").await;
    chain.confirm(&id).await;
    let settled = chain.settled(&id).await;
    assert_eq!(settled["status"], "executed", "{settled}");
    let shown = chain.show(&id).await;
    assert!(
        attempts(&shown)[0]["broadcasts"].as_u64() >= Some(3),
        "{shown}"
    );
    assert_eq!(chain.anvil.mined_nonce(&payer.address).await, 1);
}

#[tokio::test]
async fn an_unmined_transfer_is_sent_again_with_backoff_then_replaced_with_a_higher_fee() {
    let chain = OnChain::start().await;
    let server = chain.server(&[("EXECUTOR_REPLACE_AFTER_SECS", "2")]).await;
    let payer = chain.payer(1_000).await;
    chain.anvil.hold_mining().await;
    let id = chain.send(&server, &payer, RECIPIENT, "40").await;
    chain.confirm(&id).await;
    let started = Instant::now();
    let shown = loop {
        let shown = chain.show(&id).await;
        if attempts(&shown).len() >= 2 {
            break shown;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "never replaced: {shown}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (replacement, original) = (&attempts(&shown)[0], &attempts(&shown)[1]);
    assert_eq!(replacement["nonce"], original["nonce"]);
    assert_ne!(replacement["tx_hash"], original["tx_hash"]);
    let fee = |attempt: &Value| {
        attempt["max_fee_per_gas"]
            .as_str()
            .expect("fee")
            .parse::<u128>()
            .expect("a number")
    };
    assert!(fee(replacement) > fee(original), "{shown}");
    // Backoff from 100 ms doubling: a handful of sends in two seconds, where sending on every
    // 50 ms executor round would have made about forty.
    let sends = original["broadcasts"].as_u64().expect("broadcasts");
    assert!((2..=10).contains(&sends), "{shown}");
    chain.anvil.resume_mining().await;
    let settled = chain.settled(&id).await;
    assert_eq!(settled["status"], "executed", "{settled}");
    let hashes: Vec<&Value> = attempts(&shown)
        .iter()
        .map(|attempt| &attempt["tx_hash"])
        .collect();
    assert!(hashes.contains(&&settled["tx_hash"]), "{settled}");
    chain.assert_paid(&payer, 1, 40).await;
}

#[tokio::test]
async fn a_server_killed_between_recording_and_broadcasting_sends_the_recorded_transfer_once_after_restart(
) {
    let chain = OnChain::start().await;
    let first = chain.server(&[]).await;
    let payer = chain.payer(1_000).await;
    chain.node.fault_next_broadcasts(BroadcastFault::Hold, 1);
    let id = chain.send(&first, &payer, RECIPIENT, "250").await;
    chain.confirm(&id).await;
    chain.node.wait_for_broadcasts(1).await;
    drop(first);
    let recorded = chain.show(&id).await;
    assert_eq!(recorded["status"], "submitted", "{recorded}");
    assert_eq!(chain.anvil.mined_nonce(&payer.address).await, 0);
    let _restarted = chain.server(&[]).await;
    let settled = chain.settled(&id).await;
    assert_eq!(settled["status"], "executed", "{settled}");
    assert_eq!(
        settled["tx_hash"],
        attempts(&recorded)[0]["tx_hash"],
        "the recorded transaction was sent, not a new one"
    );
    assert_eq!(attempts(&chain.show(&id).await).len(), 1);
    chain.assert_paid(&payer, 1, 250).await;
}

#[tokio::test]
async fn a_server_killed_between_broadcasting_and_the_receipt_settles_it_once_after_restart() {
    let chain = OnChain::start().await;
    let first = chain.server(&[]).await;
    let payer = chain.payer(1_000).await;
    chain.anvil.hold_mining().await;
    let id = chain.send(&first, &payer, RECIPIENT, "300").await;
    chain.confirm(&id).await;
    let recorded = chain.reaching(&id, &["submitted"], SETTLE_DEADLINE).await;
    let hash = recorded["tx_hash"].as_str().expect("tx_hash").to_owned();
    chain.anvil.wait_for_pool(&hash).await;
    drop(first);
    chain.anvil.resume_mining().await;
    let _restarted = chain.server(&[]).await;
    let settled = chain.settled(&id).await;
    assert_eq!(settled["status"], "executed", "{settled}");
    assert_eq!(settled["tx_hash"], hash.as_str());
    assert_eq!(attempts(&chain.show(&id).await).len(), 1);
    chain.assert_paid(&payer, 1, 300).await;
}

/// What a run of many transfers over several instances came to.
struct Run {
    transfers: usize,
    wallets: usize,
    faults: usize,
    elapsed: Duration,
}

/// `instances` servers on one database execute ten transfers from each of 30 wallets while the
/// node refuses, half-sends, swallows and holds broadcasts and goes down for a while.
async fn transfers_through_faults(instances: usize) -> Run {
    const WALLETS: usize = 30;
    const PER_WALLET: u64 = 10;
    const FUNDS: u64 = 1_000_000;
    let chain = OnChain::start().await;
    let mut servers = Vec::new();
    for _ in 0..instances {
        servers.push(chain.server(&[]).await);
    }
    // One at a time: anvil's funding account sends the minting transactions.
    let mut payers: Vec<Payer> = Vec::new();
    for _ in 0..WALLETS {
        payers.push(chain.payer(FUNDS).await);
    }
    let pattern = [
        BroadcastFault::Refuse,
        BroadcastFault::ErrorAfterSending,
        BroadcastFault::Swallow,
        BroadcastFault::Refuse,
        BroadcastFault::SilentAfterSending,
    ];
    for _ in 0..6 {
        for fault in pattern {
            chain.node.fault_next_broadcasts(fault, 1);
        }
    }
    let faults = chain.node.faults_left();
    let started = Instant::now();
    let mut expected_sent = vec![0u64; WALLETS];
    let chain_ref = &chain;
    for round in 0..PER_WALLET {
        let sends = payers.iter().enumerate().map(|(index, payer)| {
            let server: &Server = &servers[index % instances];
            let amount = round + 1 + index as u64;
            expected_sent[index] += amount;
            async move {
                chain_ref
                    .send(server, payer, RECIPIENT, &amount.to_string())
                    .await
            }
        });
        let ids = join_all(sends).await;
        confirm_all(&chain, &ids).await;
        if round == PER_WALLET / 2 {
            chain.node.go_down();
            chain.node.wait_for_cut_requests(20).await;
            chain.node.come_back();
        }
    }
    let all = all_settled(&chain, SETTLE_DEADLINE).await;
    let elapsed = started.elapsed();
    assert_eq!(all.len(), WALLETS * PER_WALLET as usize);
    let failed: Vec<&Value> = all
        .iter()
        .filter(|intent| intent["status"] != "executed")
        .collect();
    assert!(failed.is_empty(), "funded transfers failed: {failed:?}");
    let mut hashes: Vec<&str> = all
        .iter()
        .map(|intent| intent["tx_hash"].as_str().expect("tx_hash"))
        .collect();
    hashes.sort_unstable();
    hashes.dedup();
    assert_eq!(
        hashes.len(),
        all.len(),
        "every transfer has its own transaction"
    );
    let executed_sum: u64 = all.iter().map(amount_of).sum();
    assert_eq!(
        chain.anvil.token_balance(&chain.token, RECIPIENT).await,
        U256::from(executed_sum),
        "the chain moved exactly what was executed"
    );
    for (payer, sent) in payers.iter().zip(&expected_sent) {
        assert_eq!(chain.anvil.mined_nonce(&payer.address).await, PER_WALLET);
        assert_eq!(
            chain
                .anvil
                .token_balance(&chain.token, &payer.address)
                .await,
            U256::from(FUNDS - sent)
        );
    }
    assert_eq!(chain.node.faults_left(), 0, "every fault was met");
    Run {
        transfers: all.len(),
        wallets: WALLETS,
        faults,
        elapsed,
    }
}

fn report(instances: usize, run: &Run) {
    println!(
        "{instances} instances: {} transfers from {} wallets through {} broadcast faults and an \
         outage settled in {:.1} s, 0 failed",
        run.transfers,
        run.wallets,
        run.faults,
        run.elapsed.as_secs_f64()
    );
}

#[tokio::test]
async fn two_instances_execute_300_transfers_through_faults_exactly_once() {
    report(2, &transfers_through_faults(2).await);
}

#[tokio::test]
async fn three_instances_execute_300_transfers_through_faults_exactly_once() {
    report(3, &transfers_through_faults(3).await);
}
