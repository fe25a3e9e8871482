//! A stand-in for Twilio's Message list resource (`GET /2010-04-01/Accounts/{sid}/Messages.json`),
//! to prove the SMS history against a provider that goes down and comes back: it holds the
//! messages that reached each number, lists them newest first as Twilio does, and while down
//! answers every request with Twilio's 503.

use std::sync::{Arc, Mutex};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};

use crate::support::fake_http::FakeServer;

/// A message that reached a number at Twilio.
struct Received {
    sid: String,
    from: String,
    to: String,
    body: String,
    /// RFC 2822, as Twilio writes dates.
    date_created: String,
}

#[derive(Default)]
struct ApiState {
    down: bool,
    /// Oldest first.
    received: Vec<Received>,
    /// Requests answered 503 because the API was down.
    refused_while_down: usize,
    /// Lists of messages asked for while up.
    lists: usize,
}

pub struct FakeTwilioApi {
    pub url: String,
    server: FakeServer<Mutex<ApiState>>,
}

impl FakeTwilioApi {
    pub async fn start() -> Self {
        let (url, server) = FakeServer::start(Mutex::default(), answer).await;
        Self { url, server }
    }

    fn with_state<R>(&self, act: impl FnOnce(&mut ApiState) -> R) -> R {
        act(&mut self.server.state().lock().expect("state"))
    }

    /// An SMS from `from` reaches `to` at Twilio; whether its webhook reaches the service is up to
    /// the test.
    pub fn receive(&self, sid: &str, from: &str, to: &str, body: &str) {
        self.with_state(|state| {
            // One second apart, so the list's order is the order they came in.
            let second = state.received.len();
            state.received.push(Received {
                sid: sid.to_owned(),
                from: from.to_owned(),
                to: to.to_owned(),
                body: body.to_owned(),
                date_created: format!(
                    "Sun, 22 Nov 2026 {:02}:{:02}:{:02} +0000",
                    10 + second / 3600,
                    second / 60 % 60,
                    second % 60
                ),
            });
        });
    }

    pub fn go_down(&self) {
        self.with_state(|state| state.down = true);
    }

    pub fn come_back(&self) {
        self.with_state(|state| state.down = false);
    }

    /// The SIDs of every message that reached `to`, oldest first.
    pub fn sids_to(&self, to: &str) -> Vec<String> {
        self.with_state(|state| {
            state
                .received
                .iter()
                .filter(|message| message.to == to)
                .map(|message| message.sid.clone())
                .collect()
        })
    }

    pub fn refused_while_down(&self) -> usize {
        self.with_state(|state| state.refused_while_down)
    }

    /// How many lists of messages it answered.
    pub fn lists(&self) -> usize {
        self.with_state(|state| state.lists)
    }
}

fn json_response(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert("content-type", "application/json".parse().expect("header"));
    response
}

/// Twilio's error body.
fn twilio_error(status: StatusCode, code: u32, message: &str) -> Response<Full<Bytes>> {
    json_response(
        status,
        &json!({
            "code": code,
            "message": message,
            "more_info": format!("https://www.twilio.com/docs/errors/{code}"),
            "status": status.as_u16(),
        }),
    )
}

/// One page holding the newest `page_size` messages to the number in `To`; the tests never hold
/// more than a page, so there is no next one.
fn list(state: &ApiState, query: &str) -> Value {
    let params: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap_or_default();
    let param = |name: &str| {
        params
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    };
    let to = param("To").unwrap_or_default();
    let page_size = param("PageSize")
        .and_then(|size| size.parse().ok())
        .unwrap_or(50);
    let messages: Vec<Value> = state
        .received
        .iter()
        .rev()
        .filter(|message| message.to == to)
        .take(page_size)
        .map(|message| {
            json!({
                "sid": message.sid,
                "direction": "inbound",
                "from": message.from,
                "to": message.to,
                "body": message.body,
                "status": "received",
                "num_media": "0",
                "date_created": message.date_created,
                "date_sent": message.date_created,
                "date_updated": message.date_created,
            })
        })
        .collect();
    json!({
        "messages": messages,
        "next_page_uri": null,
        "page": 0,
        "page_size": page_size,
    })
}

async fn answer(
    state: Arc<Mutex<ApiState>>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let mut state = state.lock().expect("state");
    if state.down {
        state.refused_while_down += 1;
        return Ok(twilio_error(
            StatusCode::SERVICE_UNAVAILABLE,
            20500,
            "An internal server error has occurred",
        ));
    }
    let is_list = request.method() == Method::GET
        && request.uri().path().starts_with("/2010-04-01/Accounts/")
        && request.uri().path().ends_with("/Messages.json");
    if !is_list {
        return Ok(twilio_error(
            StatusCode::NOT_FOUND,
            20404,
            "The requested resource was not found",
        ));
    }
    state.lists += 1;
    let page = list(&state, request.uri().query().unwrap_or_default());
    Ok(json_response(StatusCode::OK, &page))
}
