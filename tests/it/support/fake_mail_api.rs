//! A stand-in for the Resend email API (`POST /emails`), to prove the outbox against a provider
//! that fails and recovers: it can answer 503 to the next requests, or be down altogether, and
//! it counts every message it accepted by its idempotency key.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::{json, Value};

use crate::support::fake_http::FakeServer;

#[derive(Default)]
struct ApiState {
    /// Requests still to be answered 503.
    failures_left: usize,
    /// While down, every request is answered 503.
    down: bool,
    /// Every request is refused with a 422, as for a message the provider will never take.
    refusing: bool,
    requests: usize,
    /// Accepted messages: idempotency key → (times accepted, the last body).
    accepted: HashMap<String, (usize, Value)>,
}

pub struct FakeMailApi {
    pub url: String,
    server: FakeServer<Mutex<ApiState>>,
}

impl FakeMailApi {
    pub async fn start() -> Self {
        let (url, server) = FakeServer::start(Mutex::default(), answer).await;
        Self { url, server }
    }

    fn with_state<R>(&self, act: impl FnOnce(&mut ApiState) -> R) -> R {
        act(&mut self.server.state().lock().expect("state"))
    }

    pub fn fail_next(&self, requests: usize) {
        self.with_state(|state| state.failures_left = requests);
    }

    pub fn go_down(&self) {
        self.with_state(|state| state.down = true);
    }

    pub fn come_back(&self) {
        self.with_state(|state| state.down = false);
    }

    pub fn refuse_everything(&self) {
        self.with_state(|state| state.refusing = true);
    }

    pub fn requests(&self) -> usize {
        self.with_state(|state| state.requests)
    }

    /// How many times each idempotency key's message was accepted.
    pub fn accepted(&self) -> HashMap<String, usize> {
        self.with_state(|state| {
            state
                .accepted
                .iter()
                .map(|(key, (times, _))| (key.clone(), *times))
                .collect()
        })
    }

    /// The body of the message accepted under `key`.
    pub fn body_of(&self, key: &str) -> Option<Value> {
        self.with_state(|state| state.accepted.get(key).map(|(_, body)| body.clone()))
    }
}

async fn answer(
    state: Arc<Mutex<ApiState>>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let key = request
        .headers()
        .get("idempotency-key")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = request.into_body().collect().await?.to_bytes();
    let (status, reply) = {
        let mut state = state.lock().expect("state");
        state.requests += 1;
        if state.refusing {
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                json!({"statusCode": 422, "name": "validation_error", "message": "The to address is invalid"}),
            )
        } else if state.down || state.failures_left > 0 {
            state.failures_left = state.failures_left.saturating_sub(1);
            (
                StatusCode::SERVICE_UNAVAILABLE,
                json!({"statusCode": 503, "name": "internal_server_error", "message": "down"}),
            )
        } else {
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let entry = state
                .accepted
                .entry(key.clone())
                .or_insert((0, Value::Null));
            entry.0 += 1;
            entry.1 = body;
            (StatusCode::OK, json!({"id": format!("re-{key}")}))
        }
    };
    let mut response = Response::new(Full::new(Bytes::from(reply.to_string())));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert("content-type", "application/json".parse().expect("header"));
    Ok(response)
}
