//! The wallet on a real EVM chain (anvil): balances over JSON-RPC, and confirmed transfers that
//! the executor signs, broadcasts and settles by their receipts.

use std::time::Duration;

use alloy_primitives::U256;
use serde_json::{json, Value};
use test_support::TestDatabase;

use crate::chain::Anvil;
use crate::support::faulty_node::FaultyNode;
use crate::support::harness::{agentctl_with, intent_reaching, CliOutput, Server};
use crate::wallet::{post_send, FAST_EXECUTOR, UNLIMITED_SENDS};

const MASTER_KEY: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";
const CURSOR_SECRET: &str = "cursor secret of the on-chain tests, 32+ chars";
/// The seed of the key the on-chain tests' receipts are signed with.
pub(crate) const RECEIPT_SIGNING_KEY: &str =
    "5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed";
pub(crate) const RECIPIENT: &str = "0x000000000000000000000000000000000000dEaD";

/// A chain for one test: anvil with the test token, a faulty node in front of it (passing
/// everything through until told otherwise), and a database for the servers and agentctl.
pub(crate) struct OnChain {
    pub anvil: Anvil,
    pub node: FaultyNode,
    pub token: String,
    pub database: TestDatabase,
}

/// A wallet agent: its key, id and wallet address.
pub(crate) struct Payer {
    pub key: String,
    pub id: String,
    pub address: String,
}

/// The settings of a server and of agentctl on the chain at `rpc_url` with the token `token`.
fn chain_settings<'a>(rpc_url: &'a str, token: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("EVM_RPC_URL", rpc_url),
        ("USDC_TOKEN_ADDRESS", token),
        ("WALLET_MASTER_KEY", MASTER_KEY),
        ("CURSOR_SECRET", CURSOR_SECRET),
        ("RECEIPT_SIGNING_KEY", RECEIPT_SIGNING_KEY),
    ]
}

impl OnChain {
    pub async fn start() -> OnChain {
        let anvil = Anvil::start().await;
        let token = anvil.deploy_token().await;
        let node = FaultyNode::start(&anvil.url).await;
        OnChain {
            anvil,
            node,
            token,
            database: TestDatabase::new().await,
        }
    }

    /// What agentctl needs besides the database.
    pub fn env(&self) -> Vec<(&str, &str)> {
        chain_settings(&self.node.url, &self.token)
    }

    /// A server talking to the chain through the faulty node, executing quickly, looking again at
    /// unsettled transfers within a second; `extra` settings override these.
    pub async fn server(&self, extra: &[(&str, &str)]) -> Server {
        let mut settings = self.env();
        settings.extend([
            FAST_EXECUTOR,
            ("EVM_RPC_TIMEOUT_MS", "1000"),
            ("EXECUTOR_RETRY_BASE_MS", "100"),
            ("EXECUTOR_RETRY_CAP_SECS", "1"),
            // A killed server's claims and looks lapse within the tests' deadlines.
            ("EXECUTOR_LEASE_SECS", "5"),
            ("X402_WATCH_INTERVAL_MS", "50"),
        ]);
        settings.extend_from_slice(&UNLIMITED_SENDS);
        settings.extend_from_slice(extra);
        Server::start_on(&self.database, &settings).await
    }

    pub async fn agentctl(&self, args: &[&str]) -> CliOutput {
        agentctl_with(&self.database, &self.env(), args).await
    }

    /// A new agent with a wallet holding `tokens` (atomic units) and gas for its transfers.
    pub async fn payer(&self, tokens: u64) -> Payer {
        let created = self
            .agentctl(&["agents", "create", "--wallet"])
            .await
            .json();
        let payer = Payer {
            key: created["agent_key"].as_str().expect("key").to_owned(),
            id: created["agent"]["id"].as_str().expect("id").to_owned(),
            address: created["agent"]["wallet"]["address"]
                .as_str()
                .expect("address")
                .to_owned(),
        };
        if tokens > 0 {
            self.anvil.mint(&self.token, &payer.address, tokens).await;
        }
        self.anvil
            .set_eth(&payer.address, 1_000_000_000_000_000_000)
            .await;
        payer
    }

    /// Sends `amount` to `to` as the payer and returns the intent's id.
    pub async fn send(&self, server: &Server, payer: &Payer, to: &str, amount: &str) -> String {
        let (status, intent) = post_send(
            server,
            &payer.key,
            json!({"to": to, "amount_atomic": amount}),
        )
        .await;
        assert_eq!(status, 200, "{intent}");
        intent["id"].as_str().expect("id").to_owned()
    }

    pub async fn confirm(&self, id: &str) -> Value {
        self.agentctl(&["intents", "confirm", id]).await.json()
    }

    /// The intent as the operator sees it, with every transaction sent for it.
    pub async fn show(&self, id: &str) -> Value {
        self.agentctl(&["intents", "show", id]).await.json()
    }

    /// Waits (with a deadline) until the intent is executed or failed, and returns it.
    pub async fn settled(&self, id: &str) -> Value {
        self.reaching(id, &["executed", "failed"], Duration::from_secs(30))
            .await
    }

    /// Asserts that the payer's wallet has mined `transactions` transactions and that
    /// `RECIPIENT` holds `received` tokens: what moved on chain, counted by the chain itself.
    pub async fn assert_paid(&self, payer: &Payer, transactions: u64, received: u64) {
        assert_eq!(self.anvil.mined_nonce(&payer.address).await, transactions);
        assert_eq!(
            self.anvil.token_balance(&self.token, RECIPIENT).await,
            U256::from(received)
        );
    }

    /// Waits until the intent's status is one of `statuses`, for at most `deadline`.
    pub async fn reaching(&self, id: &str, statuses: &[&str], deadline: Duration) -> Value {
        intent_reaching(&self.database, &self.env(), id, statuses, deadline).await
    }
}

#[tokio::test]
async fn balances_are_read_from_the_chain() {
    let chain = OnChain::start().await;
    let server = chain.server(&[]).await;
    let payer = chain.payer(5_000_000).await;
    chain
        .anvil
        .set_eth(&payer.address, 1_500_000_000_000_000_000)
        .await;
    let (status, balance) = server.get("/v1/wallet/balance", Some(&payer.key)).await;
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
    let server = chain.server(&[]).await;
    let payer = chain.payer(5_000_000).await;
    let id = chain.send(&server, &payer, RECIPIENT, "1250000").await;
    chain.confirm(&id).await;
    let intent = chain.settled(&id).await;
    assert_eq!(intent["status"], "executed", "{intent}");
    let hash = intent["tx_hash"].as_str().expect("tx_hash");
    assert_eq!(chain.anvil.receipt(hash).await["status"], "0x1");
    assert_eq!(
        chain.anvil.token_balance(&chain.token, RECIPIENT).await,
        U256::from(1_250_000u64)
    );
    assert_eq!(
        chain
            .anvil
            .token_balance(&chain.token, &payer.address)
            .await,
        U256::from(3_750_000u64)
    );
}

#[tokio::test]
async fn a_transfer_beyond_the_token_balance_reverts_and_fails_with_a_reason() {
    let chain = OnChain::start().await;
    let server = chain.server(&[]).await;
    let payer = chain.payer(100).await;
    let id = chain.send(&server, &payer, RECIPIENT, "1000").await;
    chain.confirm(&id).await;
    let intent = chain.settled(&id).await;
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
        chain
            .anvil
            .token_balance(&chain.token, &payer.address)
            .await,
        U256::from(100u64)
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
