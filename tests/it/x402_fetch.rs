//! `POST /v1/wallet/x402/fetch` against a seller of this test (x402.md): a version 1 challenge
//! paid with `X-PAYMENT`, a body that is not text, the headers shown, a method and body carried
//! to both requests, an answer too long after payment (502, the payment kept), and a redirect to
//! another origin not followed.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use serde_json::{json, Value};

use crate::onchain::{OnChain, Payer, RECIPIENT};
use crate::support::fake_http::FakeServer;
use crate::support::harness::Server;
use crate::x402::{auto_confirming, post_as};

/// Bytes that are not UTF-8.
const BINARY: [u8; 4] = [0xff, 0xfe, 0x00, 0x01];

/// One request the seller received.
#[derive(Debug, Clone)]
struct Received {
    method: String,
    path: String,
    payment: Option<String>,
    v2_payment: bool,
    trace: Option<String>,
    body: Vec<u8>,
}

struct Seller {
    token: String,
    /// Its own base URL under another name (`localhost`), which is another origin.
    elsewhere: Mutex<String>,
    received: Mutex<Vec<Received>>,
}

impl Seller {
    fn received(&self, path: &str) -> Vec<Received> {
        self.received
            .lock()
            .expect("unpoisoned")
            .iter()
            .filter(|request| request.path == path)
            .cloned()
            .collect()
    }

    fn offer(&self, network: &str, amount_field: &str) -> Value {
        json!({"scheme": "exact", "network": network, amount_field: "1500",
               "asset": self.token, "payTo": RECIPIENT, "maxTimeoutSeconds": 60,
               "resource": "https://seller.example/report", "description": "", "mimeType": "",
               "extra": {"name": "USDC", "version": "2"}})
    }
}

fn answer(status: u16, headers: &[(&str, &str)], body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut response = Response::builder().status(status);
    for (name, value) in headers {
        response = response.header(*name, *value);
    }
    response
        .body(Full::new(Bytes::from(body)))
        .expect("a response")
}

async fn sell(
    seller: Arc<Seller>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    let (method, path) = (
        request.method().to_string(),
        request.uri().path().to_owned(),
    );
    let (v1_payment, v2_payment) = (header("x-payment"), header("payment-signature"));
    let trace = header("x-trace");
    let body = request
        .into_body()
        .collect()
        .await
        .map(|collected| collected.to_bytes().to_vec())
        .unwrap_or_default();
    seller.received.lock().expect("unpoisoned").push(Received {
        method,
        path: path.clone(),
        payment: v1_payment.clone().or(v2_payment.clone()),
        v2_payment: v2_payment.is_some(),
        trace,
        body: body.clone(),
    });
    let v2_challenge = || {
        let challenge = json!({"x402Version": 2, "resource": {"url": "https://seller.example/"},
                               "accepts": [seller.offer("eip155:8453", "amount")]});
        base64::engine::general_purpose::STANDARD.encode(challenge.to_string())
    };
    Ok(match path.as_str() {
        "/report-v1" if v1_payment.is_none() => {
            let challenge = json!({"x402Version": 1, "error": "X-PAYMENT header is required",
                                   "accepts": [seller.offer("base", "maxAmountRequired")]});
            answer(
                402,
                &[("content-type", "application/json")],
                challenge.to_string().into_bytes(),
            )
        }
        "/report-v1" => answer(
            200,
            &[
                ("content-type", "application/octet-stream"),
                ("etag", "\"v1\""),
                ("x-internal", "not for the agent"),
                ("set-cookie", "session=seller"),
            ],
            BINARY.to_vec(),
        ),
        "/echo" | "/big" if v2_payment.is_none() => {
            answer(402, &[("payment-required", &v2_challenge())], Vec::new())
        }
        "/echo" => answer(200, &[("content-type", "text/plain")], body),
        "/big" => answer(200, &[], vec![b'x'; 4 * 1024 * 1024 + 1]),
        "/moved" => {
            let elsewhere = seller.elsewhere.lock().expect("unpoisoned").clone();
            answer(
                302,
                &[("location", &format!("{elsewhere}/report-v1"))],
                Vec::new(),
            )
        }
        _ => answer(404, &[], Vec::new()),
    })
}

async fn fetch(server: &Server, payer: &Payer, body: &Value) -> (u16, Value) {
    post_as(server, payer, "/v1/wallet/x402/fetch", body).await
}

#[tokio::test]
async fn a_fetch_pays_either_version_shows_only_what_it_should_and_keeps_what_it_paid() {
    let chain = OnChain::start().await;
    let server = chain
        .server(&[("X402_ALLOW_PRIVATE_TARGETS", "true")])
        .await;
    let payer = chain.payer(10_000).await;
    auto_confirming(&chain, &payer, &[]).await;
    let (base, seller) = FakeServer::start(
        Seller {
            token: chain.token.clone(),
            elsewhere: Mutex::new(String::new()),
            received: Mutex::new(Vec::new()),
        },
        sell,
    )
    .await;
    *seller.state().elsewhere.lock().expect("unpoisoned") = base.replace("127.0.0.1", "localhost");
    let paying = |path: &str, key: &str| json!({"url": format!("{base}{path}"), "max_amount_atomic": "2000", "idempotency_key": key});

    // Version 1: the challenge in the 402's body, the payment in X-PAYMENT.
    let (status, paid) = fetch(&server, &payer, &paying("/report-v1", "v1")).await;
    assert_eq!(status, 200, "{paid}");
    assert_eq!(paid["status"], "paid", "{paid}");
    let response = &paid["response"];
    assert_eq!(response["status"], 200);
    assert_eq!(
        response["body_base64"],
        base64::engine::general_purpose::STANDARD.encode(BINARY),
        "a body that is not UTF-8 comes in base64: {response}"
    );
    assert!(response.get("body").is_none(), "{response}");
    let shown: Vec<&str> = response["headers"]
        .as_object()
        .expect("headers")
        .keys()
        .map(String::as_str)
        .collect();
    for name in &shown {
        assert!(
            [
                "content-type",
                "content-length",
                "payment-response",
                "etag",
                "cache-control"
            ]
            .contains(name),
            "{name} is not shown: {response}"
        );
    }
    assert!(
        shown.contains(&"etag") && shown.contains(&"content-type"),
        "{response}"
    );
    let v1 = seller.state().received("/report-v1");
    assert_eq!(v1.len(), 2, "asked, then paid: {v1:?}");
    assert!(v1[0].payment.is_none());
    assert!(
        v1[1].payment.is_some() && !v1[1].v2_payment,
        "version 1 pays in X-PAYMENT: {v1:?}"
    );
    assert_eq!(paid["payment"]["intent"]["x402"]["network"], "base");

    // A method, a body and a header of the agent's go with both requests.
    let mut echo = paying("/echo", "echo");
    echo["method"] = json!("POST");
    echo["body"] = json!("the question");
    echo["headers"] = json!({"x-trace": "t-1"});
    let (status, paid) = fetch(&server, &payer, &echo).await;
    assert_eq!(status, 200, "{paid}");
    assert_eq!(paid["response"]["body"], "the question");
    let echoed = seller.state().received("/echo");
    assert_eq!(echoed.len(), 2, "{echoed:?}");
    for request in &echoed {
        assert_eq!(request.method, "POST");
        assert_eq!(request.body, b"the question");
        assert_eq!(request.trace.as_deref(), Some("t-1"));
    }
    assert!(echoed[1].v2_payment, "version 2 pays in PAYMENT-SIGNATURE");

    // Paid, then an answer past 4 MiB: 502, with the payment's intent kept and shown.
    let (status, failed) = fetch(&server, &payer, &paying("/big", "big")).await;
    assert_eq!(status, 502, "{failed}");
    assert!(
        failed["detail"]
            .as_str()
            .expect("a detail")
            .contains("paid"),
        "{failed}"
    );
    assert_eq!(failed["intent"]["status"], "authorized", "{failed}");
    let id = failed["intent"]["id"].as_str().expect("an intent id");
    let (_, kept) = server
        .get(&format!("/v1/wallet/intents/{id}"), Some(&payer.key))
        .await;
    assert_eq!(kept["status"], "authorized", "{kept}");

    // A redirect to another origin is the answer; it is not followed.
    let before = seller.state().received("/report-v1").len();
    let (status, moved) = fetch(&server, &payer, &paying("/moved", "moved")).await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(moved["status"], "free", "{moved}");
    assert_eq!(moved["response"]["status"], 302, "{moved}");
    assert_eq!(seller.state().received("/report-v1").len(), before);
}
