//! A local EVM chain for the tests: anvil (installed from npm by scripts/chain-tools.sh) on a
//! free port with Base's chain id, and the ERC-20 test token compiled from tests/chain.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use alloy_primitives::{Address, U256};
use alloy_sol_types::{sol, SolCall, SolEvent};
use serde_json::{json, Value};
use test_support::workspace_root;

sol! {
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);
    function mint(address to, uint256 amount);
    function balanceOf(address owner) returns (uint256);
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes signature
    );
}

/// An EIP-3009 authorization as x402 writes it in a payment: every number a decimal string, the
/// nonce and the signature in hex.
pub struct WrittenAuthorization<'a> {
    pub authorization: &'a Value,
    pub signature: &'a str,
}

pub struct Anvil {
    child: Child,
    pub url: String,
    client: reqwest::Client,
    funder: String,
}

/// Where anvil listens, as its output says; what it writes after that (a line per call) is read
/// and dropped on a thread of its own, so its pipe never fills.
async fn listening_address(output: ChildStdout) -> String {
    let (said, heard) = mpsc::channel();
    std::thread::spawn(move || {
        let mut said = Some(said);
        for line in BufReader::new(output).lines() {
            let Ok(line) = line else { break };
            if let Some(address) = line.strip_prefix("Listening on ") {
                if let Some(said) = said.take() {
                    let _ = said.send(address.trim().to_owned());
                }
            }
        }
    });
    tokio::task::spawn_blocking(move || heard.recv_timeout(Duration::from_secs(30)))
        .await
        .expect("the wait for anvil's address")
        .expect("anvil says where it listens")
}

impl Anvil {
    pub async fn start() -> Anvil {
        let binary = std::env::var("ANVIL_BIN").map_or_else(
            |_| workspace_root().join("tests/chain/node_modules/.bin/anvil"),
            std::path::PathBuf::from,
        );
        assert!(
            binary.exists(),
            "{} is missing: run scripts/chain-tools.sh (make test does)",
            binary.display()
        );
        // Port 0, and the port anvil says it listens on: a port picked free beforehand could be
        // taken by another test's server before anvil binds it.
        let mut child = Command::new(binary)
            .args(["--host", "127.0.0.1", "--port", "0", "--chain-id", "8453"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            // npm's `anvil` is a Node wrapper that starts the real binary: a group of their own
            // lets Drop stop both.
            .process_group(0)
            .spawn()
            .expect("spawning anvil");
        let address = listening_address(child.stdout.take().expect("anvil's output")).await;
        let mut anvil = Anvil {
            child,
            url: format!("http://{address}"),
            client: reqwest::Client::new(),
            funder: String::new(),
        };
        let started = Instant::now();
        while anvil.try_rpc("eth_chainId", json!([])).await.is_none() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "anvil did not answer"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let accounts = anvil.rpc("eth_accounts", json!([])).await;
        anvil.funder = accounts[0]
            .as_str()
            .expect("an unlocked account")
            .to_owned();
        anvil
    }

    async fn try_rpc(&self, method: &str, params: Value) -> Option<Value> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let response = self.client.post(&self.url).json(&body).send().await.ok()?;
        response.json::<Value>().await.ok()
    }

    pub async fn rpc(&self, method: &str, params: Value) -> Value {
        let answer = self.try_rpc(method, params).await.expect("anvil answers");
        assert!(answer["error"].is_null(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// Sends a transaction from anvil's unlocked account and returns its receipt (anvil mines at once).
    async fn transact(&self, to: Option<&str>, data: String) -> Value {
        let mut transaction = json!({"from": self.funder, "data": data});
        if let Some(to) = to {
            transaction["to"] = json!(to);
        }
        let hash = self.rpc("eth_sendTransaction", json!([transaction])).await;
        self.receipt(hash.as_str().expect("hash")).await
    }

    /// The transaction's receipt, waiting (with a deadline) until anvil has mined it.
    pub async fn receipt(&self, hash: &str) -> Value {
        let started = Instant::now();
        loop {
            let receipt = self.rpc("eth_getTransactionReceipt", json!([hash])).await;
            if !receipt.is_null() {
                return receipt;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "{hash} was never mined"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Deploys the ERC-20 test token (6 decimals) and returns its address.
    pub async fn deploy_token(&self) -> String {
        let path = workspace_root().join("tests/chain/build/TestToken_sol_TestToken.bin");
        let bytecode = std::fs::read_to_string(&path).expect("compiled test token");
        let receipt = self.transact(None, format!("0x{}", bytecode.trim())).await;
        receipt["contractAddress"]
            .as_str()
            .expect("deployed")
            .to_owned()
    }

    pub async fn mint(&self, token: &str, to: &str, amount: u64) {
        let call = mintCall {
            to: to.parse::<Address>().expect("address"),
            amount: U256::from(amount),
        };
        let receipt = self
            .transact(Some(token), format!("0x{}", hex::encode(call.abi_encode())))
            .await;
        assert_eq!(receipt["status"], "0x1");
    }

    /// Settles `written` on `token` as a payee's facilitator would: `transferWithAuthorization`
    /// sent by anvil's funded account. The transaction's receipt.
    pub async fn settle_authorization(
        &self,
        token: &str,
        written: &WrittenAuthorization<'_>,
    ) -> Value {
        let field = |name: &str| {
            written.authorization[name]
                .as_str()
                .unwrap_or_else(|| panic!("authorization.{name}: {}", written.authorization))
        };
        let number = |name: &str| field(name).parse::<U256>().expect("a decimal number");
        let call = transferWithAuthorizationCall {
            from: field("from").parse::<Address>().expect("from"),
            to: field("to").parse::<Address>().expect("to"),
            value: number("value"),
            validAfter: number("validAfter"),
            validBefore: number("validBefore"),
            nonce: field("nonce").parse().expect("a 32-byte nonce"),
            signature: hex::decode(written.signature.trim_start_matches("0x"))
                .expect("a hex signature")
                .into(),
        };
        self.transact(Some(token), format!("0x{}", hex::encode(call.abi_encode())))
            .await
    }

    /// Every `AuthorizationUsed` log `token` ever emitted: the chain's own count of the EIP-3009
    /// authorizations that moved money.
    pub async fn authorizations_used(&self, token: &str) -> Vec<Value> {
        let logs = self
            .rpc(
                "eth_getLogs",
                json!([{"address": token, "fromBlock": "0x0", "toBlock": "latest",
                        "topics": [AuthorizationUsed::SIGNATURE_HASH.to_string()]}]),
            )
            .await;
        logs.as_array()
            .cloned()
            .unwrap_or_else(|| panic!("logs: {logs}"))
    }

    pub async fn set_eth(&self, to: &str, wei: u128) {
        self.rpc("anvil_setBalance", json!([to, format!("0x{wei:x}")]))
            .await;
    }

    /// Stops mining: transactions wait in the pool until `mine` or `resume_mining`.
    pub async fn hold_mining(&self) {
        self.rpc("evm_setAutomine", json!([false])).await;
    }

    pub async fn resume_mining(&self) {
        self.rpc("evm_setAutomine", json!([true])).await;
        self.rpc("evm_mine", json!([])).await;
    }

    /// Waits (with a deadline) until the node knows the transaction, mined or not.
    pub async fn wait_for_pool(&self, hash: &str) {
        let started = Instant::now();
        while self
            .rpc("eth_getTransactionByHash", json!([hash]))
            .await
            .is_null()
        {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "{hash} never reached the node"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// How many transactions of `sender` are mined.
    pub async fn mined_nonce(&self, sender: &str) -> u64 {
        let count = self
            .rpc("eth_getTransactionCount", json!([sender, "latest"]))
            .await;
        u64::from_str_radix(count.as_str().expect("hex").trim_start_matches("0x"), 16)
            .expect("a count")
    }

    pub async fn token_balance(&self, token: &str, owner: &str) -> U256 {
        let call = balanceOfCall {
            owner: owner.parse::<Address>().expect("address"),
        };
        let output = self
            .rpc("eth_call", json!([{"to": token, "data": format!("0x{}", hex::encode(call.abi_encode()))}, "latest"]))
            .await;
        let bytes =
            hex::decode(output.as_str().expect("hex").trim_start_matches("0x")).expect("hex");
        balanceOfCall::abi_decode_returns(&bytes).expect("uint256")
    }
}

impl Drop for Anvil {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.wait();
    }
}
