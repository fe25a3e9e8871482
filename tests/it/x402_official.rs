//! The official x402 implementation on the other side (PyPI `x402`, installed by
//! scripts/x402-tools.sh): its FastAPI middleware as the paid resource server and its facilitator
//! settling on anvil (tests/x402). The agent pays through `/v1/wallet/x402/authorize` and its own
//! retry; the token's `AuthorizationUsed` logs count what moved.

use std::process::Stdio;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};
use test_support::workspace_root;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::onchain::{OnChain, Payer, RECIPIENT};
use crate::support::harness::Server;
use crate::x402::{authorize, auto_confirming, post_as};

/// Anvil's second funded account: the facilitator's, so its transactions never race the tests'
/// own (sent from the first).
const FACILITATOR_KEY: &str = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const PRICE: &str = "1500";

fn python() -> String {
    std::env::var("X402_PYTHON").unwrap_or_else(|_| {
        panic!(
            "X402_PYTHON is not set: run `export X402_PYTHON=$(scripts/x402-tools.sh)` (make test \
             does) to install the official x402 package"
        )
    })
}

/// A process of the harness, killed when dropped, and the URL it said it listens on.
async fn listening(mut command: Command) -> (Child, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .kill_on_drop(true)
        .spawn()
        .expect("the harness starts");
    let stdout = child.stdout.take().expect("stdout");
    let line = tokio::time::timeout(Duration::from_secs(120), async {
        BufReader::new(stdout).lines().next_line().await
    })
    .await
    .expect("the harness says where it listens within two minutes")
    .expect("its output")
    .expect("a line");
    let url = line
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("not a listening line: {line}"))
        .to_owned();
    (child, url)
}

/// The official facilitator and a paid server behind its middleware, selling `GET /paid` for
/// `PRICE` of the chain's token to `RECIPIENT` (the SDKs' journeys pay it too).
pub(crate) struct PaidResource {
    _facilitator: Child,
    _server: Child,
    pub(crate) url: String,
    free_url: String,
}

impl PaidResource {
    /// `settle_delay_ms`: how long the facilitator waits before each settle; `timeout_ms`: how
    /// long the paid server waits for the facilitator.
    pub(crate) async fn start(
        chain: &OnChain,
        settle_delay_ms: u64,
        timeout_ms: u64,
    ) -> PaidResource {
        let python = python();
        let harness = workspace_root().join("tests/x402");
        let mut facilitator = Command::new(&python);
        facilitator
            .arg(harness.join("facilitator.py"))
            .args(["--rpc", &chain.anvil.url, "--network", "eip155:8453"])
            .args(["--settle-delay-ms", &settle_delay_ms.to_string()])
            .env("X402_FACILITATOR_KEY", FACILITATOR_KEY);
        let (facilitator, facilitator_url) = listening(facilitator).await;
        let mut server = Command::new(&python);
        server
            .arg(harness.join("paid_server.py"))
            .args([
                "--facilitator",
                &facilitator_url,
                "--network",
                "eip155:8453",
            ])
            .args([
                "--asset",
                &chain.token,
                "--pay-to",
                RECIPIENT,
                "--amount",
                PRICE,
            ])
            .args(["--facilitator-timeout-ms", &timeout_ms.to_string()]);
        let (server, url) = listening(server).await;
        PaidResource {
            _facilitator: facilitator,
            _server: server,
            url: format!("{url}/paid"),
            free_url: format!("{url}/free"),
        }
    }

    /// `GET /paid`, with `payment` in `PAYMENT-SIGNATURE` when given: the status, the header
    /// named `header` if any, and the body.
    async fn get(&self, payment: Option<&str>, header: &str) -> (u16, Option<String>, Value) {
        let client = reqwest::Client::new();
        let mut request = client.get(&self.url);
        if let Some(payment) = payment {
            request = request.header("PAYMENT-SIGNATURE", payment);
        }
        let response = request.send().await.expect("the paid server answers");
        let status = response.status().as_u16();
        let named = response
            .headers()
            .get(header)
            .map(|value| value.to_str().expect("ASCII").to_owned());
        let body = response.json().await.unwrap_or(Value::Null);
        (status, named, body)
    }
}

fn decoded(header: &str) -> Value {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(header)
        .expect("base64");
    serde_json::from_slice(&bytes).expect("JSON")
}

/// A payer whose policy confirms payments up to 5000 at once.
async fn auto_confirming_payer(chain: &OnChain) -> Payer {
    let payer = chain.payer(10_000).await;
    auto_confirming(chain, &payer, &[]).await;
    payer
}

/// The payment `id` executed, the token's one `AuthorizationUsed` its only use, and the price
/// moved from the payer's wallet.
async fn assert_paid_once(chain: &OnChain, payer: &Payer, id: &str) {
    let executed = chain
        .reaching(id, &["executed", "expired"], Duration::from_secs(30))
        .await;
    assert_eq!(executed["status"], "executed", "{executed}");
    assert_eq!(chain.anvil.authorizations_used(&chain.token).await.len(), 1);
    chain.assert_paid(payer, 0, 1500).await;
}

#[tokio::test]
async fn the_official_paid_server_is_paid_through_authorize_and_the_agents_own_retry() {
    let chain = OnChain::start().await;
    let server = chain.server(&[]).await;
    let payer = auto_confirming_payer(&chain).await;
    let resource = PaidResource::start(&chain, 0, 30_000).await;

    let (status, challenge, _) = resource.get(None, "payment-required").await;
    assert_eq!(status, 402);
    let challenge = challenge.expect("a PAYMENT-REQUIRED header");
    let (status, refused) = authorize(
        &server,
        &payer,
        &json!({"payment_required": challenge, "max_amount_atomic": "1000",
                "idempotency_key": "too-dear"}),
    )
    .await;
    assert_eq!(status, 403, "above the agent's ceiling: {refused}");

    let (status, answer) = authorize(
        &server,
        &payer,
        &json!({"payment_required": challenge, "max_amount_atomic": "2000",
                "idempotency_key": "paid-1"}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["header"], "PAYMENT-SIGNATURE");
    let payment = answer["payment_signature"].as_str().expect("a payment");
    let (status, settlement, body) = resource.get(Some(payment), "payment-response").await;
    assert_eq!(status, 200, "the official server takes the payment: {body}");
    assert_eq!(body, json!({"paid": true}));
    let settlement = decoded(&settlement.expect("a PAYMENT-RESPONSE header"));
    assert_eq!(settlement["success"], true, "{settlement}");

    let id = answer["intent"]["id"].as_str().expect("an intent id");
    let executed = chain
        .reaching(id, &["executed", "expired"], Duration::from_secs(30))
        .await;
    assert_eq!(executed["status"], "executed", "{executed}");
    assert_eq!(
        executed["tx_hash"], settlement["transaction"],
        "the facilitator's transaction, found by the watch"
    );

    let (status, replayed, _) = resource.get(Some(payment), "payment-required").await;
    assert_eq!(status, 402, "a payment is taken once");
    let replayed = decoded(&replayed.expect("a PAYMENT-REQUIRED header"));
    assert_eq!(replayed["error"], "invalid_exact_evm_nonce_already_used");
    assert_eq!(
        chain.anvil.authorizations_used(&chain.token).await.len(),
        1,
        "one AuthorizationUsed, one executed intent"
    );
    chain.assert_paid(&payer, 0, 1500).await;
}

#[tokio::test]
async fn above_the_tier_the_official_server_is_paid_after_approval_and_refused_over_the_window() {
    let chain = OnChain::start().await;
    let server = chain.server(&[]).await;
    let payer = chain.payer(10_000).await;
    // The price (1500) is above the auto-confirm tier, and a second purchase would pass the
    // daily maximum of 2000.
    chain
        .agentctl(&[
            "policy",
            "set",
            &payer.id,
            "--max-daily",
            "2000",
            "--auto-confirm-max",
            "1000",
            "--auto-confirm-daily",
            "1000",
        ])
        .await
        .json();
    let resource = PaidResource::start(&chain, 0, 30_000).await;

    let (_, challenge, _) = resource.get(None, "payment-required").await;
    let body = json!({"payment_required": challenge.expect("a challenge"),
                      "idempotency_key": "approved-report"});
    let (status, pending) = authorize(&server, &payer, &body).await;
    assert_eq!(status, 202, "above the tier an operator decides: {pending}");
    assert!(
        pending.get("payment_signature").is_none() && pending["intent"]["x402"]["nonce"].is_null(),
        "nothing is signed before the approval: {pending}"
    );
    let id = pending["intent"]["id"].as_str().expect("an intent id");
    chain.confirm(id).await;
    let (status, answer) = authorize(&server, &payer, &body).await;
    assert_eq!(status, 200, "signed once approved: {answer}");
    let payment = answer["payment_signature"].as_str().expect("a payment");
    let (status, settlement, served) = resource.get(Some(payment), "payment-response").await;
    assert_eq!(status, 200, "the official server takes it: {served}");
    assert_eq!(
        decoded(&settlement.expect("a PAYMENT-RESPONSE header"))["success"],
        true
    );

    let (_, again, _) = resource.get(None, "payment-required").await;
    let (status, refused) = authorize(
        &server,
        &payer,
        &json!({"payment_required": again.expect("a challenge"),
                "idempotency_key": "second-report"}),
    )
    .await;
    assert_eq!(status, 403, "{refused}");
    let detail = refused["detail"].as_str().expect("a detail");
    assert!(
        detail.contains("daily maximum of 2000") && detail.contains("500 is still available"),
        "the rule and what is left of its window: {detail}"
    );

    assert_paid_once(&chain, &payer, id).await;
}

#[tokio::test]
async fn a_settle_that_times_out_at_the_paid_server_and_the_agents_retry_never_pay_twice() {
    let chain = OnChain::start().await;
    let server = chain.server(&[]).await;
    let payer = auto_confirming_payer(&chain).await;
    // The facilitator settles 3 s after it is asked; the paid server gives up after 1 s.
    let resource = PaidResource::start(&chain, 3_000, 1_000).await;
    let (_, challenge, _) = resource.get(None, "payment-required").await;
    let body = json!({"payment_required": challenge.expect("a challenge"),
                      "max_amount_atomic": "2000", "idempotency_key": "slow-settle"});
    let (status, first) = authorize(&server, &payer, &body).await;
    assert_eq!(status, 200, "{first}");
    let payment = first["payment_signature"].as_str().expect("a payment");
    let (status, settlement, _) = resource.get(Some(payment), "payment-response").await;
    assert_eq!(status, 402, "the server gave up waiting for the settle");
    let settlement = decoded(&settlement.expect("a PAYMENT-RESPONSE header"));
    assert_eq!(settlement["success"], false, "{settlement}");

    // The agent retries the purchase under its key: the same authorization, one nonce.
    let (status, again) = authorize(&server, &payer, &body).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["payment_signature"], first["payment_signature"]);
    let (status, _, _) = resource.get(Some(payment), "payment-required").await;
    assert_ne!(status, 200, "the retry is not served as a second sale");

    let id = first["intent"]["id"].as_str().expect("an intent id");
    let executed = chain
        .reaching(id, &["executed", "expired"], Duration::from_secs(30))
        .await;
    assert_eq!(
        executed["status"], "executed",
        "the late settle moved the money: {executed}"
    );
    let used = chain.anvil.authorizations_used(&chain.token).await;
    assert_eq!(used.len(), 1, "the token took the nonce once: {used:?}");
    assert_eq!(used[0]["transactionHash"], executed["tx_hash"]);
    chain.assert_paid(&payer, 0, 1500).await;
}

async fn fetch(server: &Server, payer: &Payer, body: &Value) -> (u16, Value) {
    post_as(server, payer, "/v1/wallet/x402/fetch", body).await
}

/// A server that fetches private targets (the paid server listens on loopback), an
/// auto-confirming payer, and the official paid server settling at once.
async fn fetching_from_the_official_server(chain: &OnChain) -> (Server, Payer, PaidResource) {
    let server = chain
        .server(&[("X402_ALLOW_PRIVATE_TARGETS", "true")])
        .await;
    let payer = auto_confirming_payer(chain).await;
    let resource = PaidResource::start(chain, 0, 30_000).await;
    (server, payer, resource)
}

#[tokio::test]
async fn the_official_paid_server_is_paid_through_fetch_and_a_repeat_never_pays_twice() {
    let chain = OnChain::start().await;
    let (server, payer, resource) = fetching_from_the_official_server(&chain).await;

    let (status, free) = fetch(
        &server,
        &payer,
        &json!({"url": resource.free_url, "max_amount_atomic": "2000",
                "idempotency_key": "free-1"}),
    )
    .await;
    assert_eq!(status, 200, "{free}");
    assert_eq!(free["status"], "free");
    assert_eq!(free["response"]["status"], 200);
    assert_eq!(free["response"]["body"], r#"{"free":true}"#);
    assert!(free.get("payment").is_none(), "{free}");

    let body = json!({"url": resource.url, "headers": {"Accept": "application/json"},
                      "max_amount_atomic": "2000", "idempotency_key": "fetch-1"});
    let (status, paid) = fetch(&server, &payer, &body).await;
    assert_eq!(status, 200, "{paid}");
    assert_eq!(paid["status"], "paid");
    assert_eq!(paid["response"]["status"], 200);
    assert_eq!(paid["response"]["body"], r#"{"paid":true}"#);
    assert_eq!(
        paid["response"]["headers"]["content-type"], "application/json",
        "{paid}"
    );
    let shown: Vec<&String> = paid["response"]["headers"]
        .as_object()
        .expect("headers")
        .keys()
        .collect();
    assert!(
        shown.iter().all(|name| [
            "content-type",
            "content-length",
            "payment-response",
            "etag",
            "cache-control"
        ]
        .contains(&name.as_str())),
        "only the shown headers: {shown:?}"
    );
    let settlement = &paid["payment"]["settlement"];
    assert_eq!(settlement["success"], true, "{paid}");
    let intent = &paid["payment"]["intent"];
    assert_eq!(intent["kind"], "x402");
    assert_eq!(intent["x402"]["payment_response"], *settlement);
    assert_eq!(intent["x402"]["resource_url"], resource.url.as_str());

    let id = intent["id"].as_str().expect("an intent id");
    let executed = chain
        .reaching(id, &["executed", "expired"], Duration::from_secs(30))
        .await;
    assert_eq!(executed["status"], "executed", "{executed}");
    assert_eq!(executed["tx_hash"], settlement["transaction"]);

    // The same fetch again: the same payment header, which the server refuses as used.
    let (status, repeated) = fetch(&server, &payer, &body).await;
    assert_eq!(status, 502, "{repeated}");
    assert_eq!(repeated["intent"]["id"], id, "{repeated}");
    assert_eq!(
        chain.anvil.authorizations_used(&chain.token).await.len(),
        1,
        "one key, one authorization, one payment"
    );
    chain.assert_paid(&payer, 0, 1500).await;

    let (status, above) = fetch(
        &server,
        &payer,
        &json!({"url": resource.url, "max_amount_atomic": "1000", "idempotency_key": "fetch-2"}),
    )
    .await;
    assert_eq!(status, 403, "{above}");
}

#[tokio::test]
async fn a_fetch_to_a_private_address_is_refused_naming_the_url_rule_before_anything_is_signed() {
    let chain = OnChain::start().await;
    let server = chain.server(&[]).await;
    let payer = auto_confirming_payer(&chain).await;
    let resource = PaidResource::start(&chain, 0, 30_000).await;
    let https_loopback = resource.url.replacen("http://", "https://", 1);
    for url in [resource.url.as_str(), https_loopback.as_str()] {
        let (status, refused) = fetch(
            &server,
            &payer,
            &json!({"url": url, "max_amount_atomic": "2000", "idempotency_key": "private"}),
        )
        .await;
        assert_eq!(status, 422, "{url}: {refused}");
        assert_eq!(
            refused["detail"][0]["loc"],
            json!(["body", "url"]),
            "{refused}"
        );
    }
    let (status, refused) = fetch(
        &server,
        &payer,
        &json!({"url": "https://api.example.com/", "headers": {"Authorization": "Bearer x"},
                "max_amount_atomic": "2000", "idempotency_key": "creds"}),
    )
    .await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["detail"][0]["loc"], json!(["body", "headers"]));
    let (_, intents) = server.get("/v1/wallet/intents", Some(&payer.key)).await;
    assert_eq!(intents["items"], json!([]), "nothing was admitted");
    assert!(chain
        .anvil
        .authorizations_used(&chain.token)
        .await
        .is_empty());
}

#[tokio::test]
async fn the_official_paid_server_is_paid_through_the_mcp_tool() {
    let chain = OnChain::start().await;
    let (server, payer, resource) = fetching_from_the_official_server(&chain).await;
    let [(_, lifecycle), _] = crate::mcp::lifecycles();
    let client = crate::mcp::connect(&server, &payer.key, lifecycle).await;
    let paid = crate::mcp::ok(
        &client,
        "pay_x402_resource",
        json!({"url": resource.url, "max_amount_atomic": "2000", "idempotency_key": "mcp-1"}),
    )
    .await;
    assert_eq!(paid["status"], "paid", "{paid}");
    assert_eq!(paid["response"]["body"], r#"{"paid":true}"#);
    assert_eq!(paid["payment"]["settlement"]["success"], true, "{paid}");
    let id = paid["payment"]["intent"]["id"]
        .as_str()
        .expect("an intent id");
    assert_paid_once(&chain, &payer, id).await;
}
