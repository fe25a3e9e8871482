//! The wallet on a real EVM chain (anvil): balances over JSON-RPC, and confirmed transfers that
//! the executor signs, broadcasts and settles by their receipts.

use serde_json::{json, Value};
use test_support::TestDatabase;

use crate::chain::Anvil;
use crate::harness::{agentctl_with, read, Server};
use crate::wallet::FAST_EXECUTOR;

const MASTER_KEY: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";
const CURSOR_SECRET: &str = "cursor secret of the on-chain tests, 32+ chars";
const RECIPIENT: &str = "0x000000000000000000000000000000000000dEaD";

struct OnChain {
    anvil: Anvil,
    token: String,
    database: TestDatabase,
    server: Server,
}

/// The settings of a server and of agentctl on the chain at `rpc_url` with the token `token`.
fn chain_settings<'a>(rpc_url: &'a str, token: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("EVM_RPC_URL", rpc_url),
        ("USDC_TOKEN_ADDRESS", token),
        ("WALLET_MASTER_KEY", MASTER_KEY),
        ("CURSOR_SECRET", CURSOR_SECRET),
    ]
}

impl OnChain {
    fn env(&self) -> Vec<(&str, &str)> {
        chain_settings(&self.anvil.url, &self.token)
    }

    async fn start() -> OnChain {
        let anvil = Anvil::start().await;
        let token = anvil.deploy_token().await;
        let database = TestDatabase::new().await;
        let mut settings = chain_settings(&anvil.url, &token);
        settings.push(FAST_EXECUTOR);
        let server = Server::start_on(&database, &settings).await;
        OnChain {
            anvil,
            token,
            database,
            server,
        }
    }

    /// A new agent with a wallet; returns its key and wallet address.
    async fn wallet_agent(&self) -> (String, String) {
        let created = agentctl_with(
            &self.database,
            &self.env(),
            &["agents", "create", "--wallet"],
        )
        .await
        .json();
        let key = created["agent_key"].as_str().expect("key").to_owned();
        let address = created["agent"]["wallet"]["address"]
            .as_str()
            .expect("address")
            .to_owned();
        (key, address)
    }

    async fn send_and_confirm(&self, key: &str, amount: &str) -> Value {
        let response = self
            .server
            .client
            .post(self.server.url("/v1/wallet/send"))
            .bearer_auth(key)
            .json(&json!({"to": RECIPIENT, "amount_atomic": amount}))
            .send()
            .await
            .expect("send");
        let (status, intent) = read(response).await;
        assert_eq!(status, 200, "{intent}");
        let id = intent["id"].as_str().expect("id");
        agentctl_with(&self.database, &self.env(), &["intents", "confirm", id])
            .await
            .json();
        let started = std::time::Instant::now();
        loop {
            let (_, page) = self
                .server
                .get("/v1/wallet/intents?limit=1", Some(key))
                .await;
            let intent = page["items"][0].clone();
            if ["executed", "failed"].contains(&intent["status"].as_str().unwrap_or_default()) {
                return intent;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(30),
                "never settled: {intent}\n{}",
                self.server.logs()
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test]
async fn balances_are_read_from_the_chain() {
    let chain = OnChain::start().await;
    let (key, address) = chain.wallet_agent().await;
    chain.anvil.mint(&chain.token, &address, 5_000_000).await;
    chain
        .anvil
        .set_eth(&address, 1_500_000_000_000_000_000)
        .await;
    let (status, balance) = chain.server.get("/v1/wallet/balance", Some(&key)).await;
    assert_eq!(status, 200, "{balance}");
    assert_eq!(balance["assets"][0]["amount_atomic"], "1500000000000000000");
    assert_eq!(balance["assets"][0]["formatted_amount"], "1.5");
    assert_eq!(balance["assets"][1]["amount_atomic"], "5000000");
    assert_eq!(balance["assets"][1]["formatted_amount"], "5");
    assert_eq!(balance["assets"][1]["decimals"], 6);
}

#[tokio::test]
async fn a_confirmed_transfer_is_executed_on_chain() {
    let chain = OnChain::start().await;
    let (key, address) = chain.wallet_agent().await;
    chain.anvil.mint(&chain.token, &address, 5_000_000).await;
    chain
        .anvil
        .set_eth(&address, 1_000_000_000_000_000_000)
        .await;
    let intent = chain.send_and_confirm(&key, "1250000").await;
    assert_eq!(intent["status"], "executed", "{intent}");
    let hash = intent["tx_hash"].as_str().expect("tx_hash");
    assert_eq!(chain.anvil.receipt(hash).await["status"], "0x1");
    assert_eq!(
        chain.anvil.token_balance(&chain.token, RECIPIENT).await,
        alloy_primitives::U256::from(1_250_000u64)
    );
    assert_eq!(
        chain.anvil.token_balance(&chain.token, &address).await,
        alloy_primitives::U256::from(3_750_000u64)
    );
}

#[tokio::test]
async fn a_transfer_beyond_the_token_balance_reverts_and_fails_with_a_reason() {
    let chain = OnChain::start().await;
    let (key, address) = chain.wallet_agent().await;
    chain.anvil.mint(&chain.token, &address, 100).await;
    chain
        .anvil
        .set_eth(&address, 1_000_000_000_000_000_000)
        .await;
    let intent = chain.send_and_confirm(&key, "1000").await;
    assert_eq!(intent["status"], "failed", "{intent}");
    assert!(
        intent["failure_reason"]
            .as_str()
            .expect("reason")
            .contains("reverted"),
        "{intent}"
    );
    let hash = intent["tx_hash"]
        .as_str()
        .expect("the reverted transaction is on record");
    assert_eq!(chain.anvil.receipt(hash).await["status"], "0x0");
    assert_eq!(
        chain.anvil.token_balance(&chain.token, &address).await,
        alloy_primitives::U256::from(100u64)
    );
}

#[tokio::test]
async fn an_unreachable_node_is_503_never_a_stale_balance() {
    let database = TestDatabase::new().await;
    let env = chain_settings(
        "http://127.0.0.1:1",
        "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    );
    let mut server_env = env.clone();
    server_env.push(("EVM_RPC_TIMEOUT_MS", "2000"));
    let server = Server::start_on(&database, &server_env).await;
    let created = agentctl_with(&database, &env, &["agents", "create", "--wallet"])
        .await
        .json();
    let key = created["agent_key"].as_str().expect("key");
    let (status, body) = server.get("/v1/wallet/balance", Some(key)).await;
    assert_eq!(
        (status, body),
        (503, json!({"detail": "Chain unavailable"}))
    );
}
