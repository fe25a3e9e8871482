//! The sandbox chain takes broadcasts as a node does: a transaction ahead of its sender's next
//! nonce waits, and is mined once the nonces before it are used.

use std::sync::Arc;

use domain::{AtomicAmount, EvmAddress, FeeQuote, U256};
use ports::{BroadcastError, ChainClient, ChainWriter, ReceiptStatus, SignedTransfer};
use postgres_store::{Database, PgSandboxChain, PoolSettings};
use test_support::TestDatabase;

const FEES: FeeQuote = FeeQuote {
    max_fee_per_gas: 1_000,
    max_priority_fee_per_gas: 100,
};

fn sender() -> EvmAddress {
    EvmAddress::from_bytes([0x11; 20])
}

fn recipient() -> EvmAddress {
    EvmAddress::from_bytes([0x22; 20])
}

fn token() -> EvmAddress {
    EvmAddress::from_bytes([0xaa; 20])
}

async fn funded_chain(database: &TestDatabase, tokens: u64) -> PgSandboxChain {
    let pool = Database::connect(&database.connector(), PoolSettings::default()).expect("pool");
    let chain = PgSandboxChain::new(pool);
    chain
        .fund(
            &sender(),
            Some(&token()),
            AtomicAmount::parse(&tokens.to_string()).expect("amount"),
        )
        .await
        .expect("funded");
    chain
}

/// A transfer of `amount` with `nonce`; `tag` tells transfers of one nonce apart.
fn transfer(nonce: u64, amount: u64, fees: FeeQuote, tag: u8) -> SignedTransfer {
    SignedTransfer {
        from: sender(),
        token: token(),
        to: recipient(),
        amount: U256::from(amount),
        nonce,
        fees,
        raw: vec![tag],
        hash: format!("0x{tag:02x}{nonce:062x}"),
    }
}

async fn received(chain: &PgSandboxChain) -> U256 {
    chain
        .token_balance(&token(), &recipient())
        .await
        .expect("balance")
}

#[tokio::test]
async fn a_transaction_ahead_of_its_senders_next_nonce_waits_until_the_gap_is_filled() {
    let database = TestDatabase::new().await;
    let chain = funded_chain(&database, 1_000).await;
    let (first, second, third) = (
        transfer(0, 1, FEES, 1),
        transfer(1, 10, FEES, 1),
        transfer(2, 100, FEES, 1),
    );
    chain.broadcast(&third).await.expect("waits");
    chain.broadcast(&second).await.expect("waits");
    chain
        .broadcast(&third)
        .await
        .expect("known: accepted again");
    assert_eq!(chain.mined_nonce(&sender()).await.expect("count"), 0);
    assert_eq!(chain.pending_nonce(&sender()).await.expect("count"), 0);
    assert_eq!(
        chain.receipt(&third.hash).await.expect("receipt"),
        ReceiptStatus::Pending
    );
    assert_eq!(received(&chain).await, U256::ZERO);

    chain.broadcast(&first).await.expect("mined");
    assert_eq!(chain.mined_nonce(&sender()).await.expect("count"), 3);
    for mined in [&first, &second, &third] {
        let receipt = chain.receipt(&mined.hash).await.expect("receipt");
        assert!(
            matches!(receipt, ReceiptStatus::Succeeded { block_number } if block_number > 1_700_000_000),
            "mined in the block of its second: {receipt:?}"
        );
    }
    assert_eq!(received(&chain).await, U256::from(111u64));
    assert_eq!(
        chain.broadcast(&second).await,
        Ok(()),
        "a mined transaction sent again changes nothing"
    );
    assert_eq!(received(&chain).await, U256::from(111u64));
}

#[tokio::test]
async fn a_waiting_transaction_gives_way_only_to_one_that_pays_more_and_a_used_nonce_is_refused() {
    let database = TestDatabase::new().await;
    let chain = funded_chain(&database, 1_000).await;
    let waiting = transfer(1, 5, FEES, 1);
    chain.broadcast(&waiting).await.expect("waits");
    let cheaper = transfer(1, 5, FEES, 2);
    assert!(
        matches!(chain.broadcast(&cheaper).await, Err(BroadcastError::Rejected(reason)) if reason.contains("underpriced"))
    );
    let better = FeeQuote {
        max_fee_per_gas: 1_200,
        max_priority_fee_per_gas: 120,
    };
    let replacement = transfer(1, 5, better, 3);
    chain
        .broadcast(&replacement)
        .await
        .expect("takes its place");

    chain
        .broadcast(&transfer(0, 1, FEES, 1))
        .await
        .expect("mined");
    assert_eq!(chain.mined_nonce(&sender()).await.expect("count"), 2);
    assert!(matches!(
        chain.receipt(&replacement.hash).await.expect("receipt"),
        ReceiptStatus::Succeeded { .. }
    ));
    assert_eq!(
        chain.receipt(&waiting.hash).await.expect("receipt"),
        ReceiptStatus::Pending,
        "the replaced transaction is never mined"
    );
    assert_eq!(received(&chain).await, U256::from(6u64));
    assert!(
        matches!(chain.broadcast(&waiting).await, Err(BroadcastError::Rejected(reason)) if reason.contains("nonce too low"))
    );
}

#[tokio::test]
async fn a_waiting_transfer_the_sender_cannot_pay_is_mined_as_a_revert() {
    let database = TestDatabase::new().await;
    let chain = funded_chain(&database, 10).await;
    let beyond = transfer(1, 50, FEES, 1);
    chain.broadcast(&beyond).await.expect("waits");
    chain
        .broadcast(&transfer(0, 10, FEES, 1))
        .await
        .expect("mined");
    assert_eq!(
        chain.receipt(&beyond.hash).await.expect("receipt"),
        ReceiptStatus::Reverted
    );
    assert_eq!(chain.mined_nonce(&sender()).await.expect("count"), 2);
    assert_eq!(received(&chain).await, U256::from(10u64));
}

#[tokio::test]
async fn broadcasts_of_one_sender_in_any_order_and_at_once_mine_each_nonce_once() {
    let database = TestDatabase::new().await;
    let chain = Arc::new(funded_chain(&database, 1_000_000).await);
    // Each nonce twice, by two transactions paying alike: only one of them may be mined.
    let transfers: Vec<SignedTransfer> = (0..40u64)
        .rev()
        .flat_map(|nonce| [transfer(nonce, 1, FEES, 1), transfer(nonce, 1, FEES, 2)])
        .collect();
    let mut broadcasts = tokio::task::JoinSet::new();
    for sent in transfers.clone() {
        let chain = chain.clone();
        // Refusals are expected: a nonce used, or one waiting at that price already.
        broadcasts.spawn(async move { chain.broadcast(&sent).await.is_ok() });
    }
    let accepted = broadcasts.join_all().await;
    assert!(accepted.iter().filter(|taken| **taken).count() >= 40);
    let mut pending = 0;
    for sent in &transfers {
        pending += usize::from(
            chain.receipt(&sent.hash).await.expect("receipt") == ReceiptStatus::Pending,
        );
    }
    let mined = chain.mined_nonce(&sender()).await.expect("count");
    assert_eq!(mined, 40, "every nonce was filled");
    assert_eq!(pending, 40, "no nonce was used twice");
    assert_eq!(received(&chain).await, U256::from(40u64));
}
