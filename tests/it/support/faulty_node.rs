//! A JSON-RPC node that misbehaves on demand. It stands in front of anvil and passes every
//! request through, except where a test has asked for a fault: broadcasts refused, sent and then
//! answered with an error or never answered, swallowed, or held; or the whole node down.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use alloy_primitives::keccak256;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use serde_json::{json, Value};

use crate::support::fake_http::FakeServer;

const BROADCAST: &str = "eth_sendRawTransaction";
/// Longer than any RPC timeout the tests give the server: an answer held this long never comes.
const HELD_FOR: Duration = Duration::from_secs(60);

/// What happens to one broadcast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BroadcastFault {
    /// Not passed on; answered with an error, as a rate-limited node answers.
    Refuse,
    /// Passed on to the chain, then answered with an error: the caller cannot tell it was sent.
    ErrorAfterSending,
    /// Passed on to the chain and never answered: the caller times out.
    SilentAfterSending,
    /// Answered with the transaction's hash but never passed on, as a node that drops it does.
    Swallow,
    /// Neither passed on nor answered: the caller is stuck mid-broadcast.
    Hold,
}

#[derive(Default)]
struct NodeState {
    faults: VecDeque<BroadcastFault>,
    down: bool,
    /// How late every answer comes.
    delay: Duration,
    requests_seen: usize,
    /// Broadcasts that arrived, whatever became of them.
    broadcasts_seen: usize,
    /// Requests whose connection was cut because the node was down.
    cut_requests: usize,
}

struct Shared {
    upstream: String,
    client: reqwest::Client,
    state: Mutex<NodeState>,
}

pub struct FaultyNode {
    pub url: String,
    server: FakeServer<Shared>,
}

impl FaultyNode {
    /// A node on a free port passing requests on to `upstream`.
    pub async fn start(upstream: &str) -> FaultyNode {
        let shared = Shared {
            upstream: upstream.to_owned(),
            client: reqwest::Client::new(),
            state: Mutex::new(NodeState::default()),
        };
        let (url, server) = FakeServer::start(shared, answer).await;
        FaultyNode { url, server }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, NodeState> {
        self.server.state().state.lock().expect("node state")
    }

    /// The next `count` broadcasts meet `fault`, after any faults already queued.
    pub fn fault_next_broadcasts(&self, fault: BroadcastFault, count: usize) {
        self.state()
            .faults
            .extend(std::iter::repeat_n(fault, count));
    }

    /// Every answer from now on comes `delay` late, as from a slow node.
    pub fn delay_answers(&self, delay: Duration) {
        self.state().delay = delay;
    }

    /// Every request from now on has its connection cut without an answer.
    pub fn go_down(&self) {
        self.state().down = true;
    }

    pub fn come_back(&self) {
        self.state().down = false;
    }

    pub fn faults_left(&self) -> usize {
        self.state().faults.len()
    }

    /// Waits (with a deadline) until `count` broadcasts have arrived.
    pub async fn wait_for_broadcasts(&self, count: usize) {
        self.wait_until(|state| state.broadcasts_seen >= count, "broadcasts")
            .await;
    }

    /// How many broadcasts have arrived so far.
    pub fn broadcasts_seen(&self) -> usize {
        self.state().broadcasts_seen
    }

    pub fn requests_seen(&self) -> usize {
        self.state().requests_seen
    }

    /// Waits (with a deadline) until `count` requests have arrived.
    pub async fn wait_for_requests(&self, count: usize) {
        self.wait_until(|state| state.requests_seen >= count, "requests")
            .await;
    }

    /// How many requests met the node down so far.
    pub fn cut_requests(&self) -> usize {
        self.state().cut_requests
    }

    /// Waits (with a deadline) until `count` requests met the node down.
    pub async fn wait_for_cut_requests(&self, count: usize) {
        self.wait_until(|state| state.cut_requests >= count, "requests while down")
            .await;
    }

    async fn wait_until(&self, reached: impl Fn(&NodeState) -> bool, what: &str) {
        let started = Instant::now();
        while !reached(&self.state()) {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "too few {what} arrived"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn json_response(body: &Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Response<Full<Bytes>> {
    json_response(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

/// The fault this request meets, if it is a broadcast: counted, and taken off the queue.
fn broadcast_fault(shared: &Shared, call: &Value) -> Option<Option<BroadcastFault>> {
    if call["method"] != BROADCAST {
        return None;
    }
    let mut state = shared.state.lock().expect("node state");
    state.broadcasts_seen += 1;
    Some(state.faults.pop_front())
}

async fn pass_on(shared: &Shared, body: Bytes) -> Result<Response<Full<Bytes>>, String> {
    let answer = shared
        .client
        .post(&shared.upstream)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|error| error.to_string())?;
    let bytes = answer.bytes().await.map_err(|error| error.to_string())?;
    let mut response = Response::new(Full::new(bytes));
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

/// An `Err` cuts the connection without an answer.
async fn answer(
    shared: Arc<Shared>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, String> {
    let body = request
        .into_body()
        .collect()
        .await
        .map_err(|error| error.to_string())?
        .to_bytes();
    let delay = {
        let mut state = shared.state.lock().expect("node state");
        if state.down {
            state.cut_requests += 1;
            return Err("the node is down".into());
        }
        state.requests_seen += 1;
        state.delay
    };
    tokio::time::sleep(delay).await;
    let call: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = call["id"].clone();
    match broadcast_fault(&shared, &call) {
        None | Some(None) => pass_on(&shared, body).await,
        Some(Some(BroadcastFault::Refuse)) => Ok(rpc_error(&id, -32005, "request rate exceeded")),
        Some(Some(BroadcastFault::ErrorAfterSending)) => {
            pass_on(&shared, body).await?;
            Ok(rpc_error(&id, -32603, "upstream request timed out"))
        }
        Some(Some(BroadcastFault::SilentAfterSending)) => {
            pass_on(&shared, body).await?;
            tokio::time::sleep(HELD_FOR).await;
            Err("held".into())
        }
        Some(Some(BroadcastFault::Swallow)) => {
            let raw = call["params"][0].as_str().unwrap_or_default();
            let bytes = hex::decode(raw.trim_start_matches("0x")).unwrap_or_default();
            let hash = keccak256(bytes);
            Ok(json_response(
                &json!({"jsonrpc": "2.0", "id": id, "result": format!("{hash:#x}")}),
            ))
        }
        Some(Some(BroadcastFault::Hold)) => {
            tokio::time::sleep(HELD_FOR).await;
            Err("held".into())
        }
    }
}
