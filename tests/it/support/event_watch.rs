//! What an agent hears of its events while the servers' database comes and goes: a reader of the
//! event stream that reconnects with `Last-Event-ID` as an SSE client does and records every
//! `seq` it was given, and a webhook receiver that takes every delivery and counts them by
//! `webhook-id`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};

use crate::support::fake_http::FakeServer;
use crate::support::harness::Server;

/// A stream that sends nothing, not even its keep-alive comment, for this long is taken as dead
/// and left for a new one (the servers of these tests keep streams alive every second).
const SILENCE: Duration = Duration::from_secs(5);

/// What one agent's reader saw.
#[derive(Debug, Default)]
pub(crate) struct Followed {
    /// Every event's `seq`, in the order it came.
    pub seqs: Vec<u64>,
    /// Streams opened after the first.
    pub reconnects: usize,
    /// Answers other than 200 to an opening, and openings that failed: (status or error).
    pub refused: Vec<String>,
    /// Streams left for saying nothing for `SILENCE`.
    pub silent: usize,
    /// `event: reset` messages: the position asked for was no longer kept.
    pub resets: usize,
}

/// Until the reader has seen this `seq` it goes on (`u64::MAX`: until told).
pub(crate) type Target = Arc<AtomicU64>;

pub(crate) fn target() -> Target {
    Arc::new(AtomicU64::new(u64::MAX))
}

fn reached(followed: &Followed, target: &Target) -> bool {
    let target = target.load(Ordering::Relaxed);
    target != u64::MAX && followed.seqs.last().copied().unwrap_or(0) >= target
}

/// Follows the agent's stream over `servers` (a new stream on the next server each time one
/// ends) until it has seen `target`'s seq, or `give_up` passed once a target is set.
pub(crate) async fn follow(
    servers: &[&Server],
    key: &str,
    target: &Target,
    give_up: Duration,
) -> Followed {
    let mut followed = Followed::default();
    let mut opening = 0usize;
    let mut targeted_at: Option<Instant> = None;
    loop {
        if reached(&followed, target) {
            return followed;
        }
        if target.load(Ordering::Relaxed) != u64::MAX {
            let since = *targeted_at.get_or_insert_with(Instant::now);
            if since.elapsed() > give_up {
                return followed;
            }
        }
        let server = servers[opening % servers.len()];
        if opening > 0 {
            followed.reconnects += 1;
        }
        opening += 1;
        let mut request = server
            .client
            .get(server.url("/v1/events/stream"))
            .bearer_auth(key);
        if let Some(last) = followed.seqs.last() {
            request = request.header("Last-Event-ID", last.to_string());
        }
        let response = match tokio::time::timeout(SILENCE, request.send()).await {
            Ok(Ok(response)) if response.status() == 200 => response,
            Ok(Ok(response)) => {
                followed.refused.push(response.status().to_string());
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            Ok(Err(error)) => {
                followed.refused.push(error.to_string());
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            Err(_) => {
                followed
                    .refused
                    .push(format!("no answer within {SILENCE:?}"));
                continue;
            }
        };
        read_stream(response, &mut followed, target).await;
    }
}

/// Reads one stream until it ends, falls silent, or the target is reached.
async fn read_stream(mut response: reqwest::Response, followed: &mut Followed, target: &Target) {
    let mut pending = String::new();
    let mut heard = Instant::now();
    loop {
        while let Some(end) = pending.find("\n\n") {
            let block: String = pending.drain(..end + 2).collect();
            let mut id = None;
            let mut data = false;
            for line in block.lines() {
                match line.split_once(": ") {
                    Some(("id", value)) => id = value.parse::<u64>().ok(),
                    Some(("event", "reset")) => followed.resets += 1,
                    Some(("data", _)) => data = true,
                    _ => {}
                }
            }
            if let (Some(seq), true) = (id, data) {
                followed.seqs.push(seq);
            }
        }
        if reached(followed, target) {
            return;
        }
        match tokio::time::timeout(Duration::from_secs(1), response.chunk()).await {
            Ok(Ok(Some(chunk))) => {
                heard = Instant::now();
                pending.push_str(&String::from_utf8_lossy(&chunk));
            }
            // The stream ended or broke: open another.
            Ok(Ok(None) | Err(_)) => return,
            Err(_) if heard.elapsed() > SILENCE => {
                followed.silent += 1;
                return;
            }
            Err(_) => {}
        }
    }
}

/// A webhook endpoint of the test's own: answers every delivery 204 and counts them by
/// `webhook-id`.
pub(crate) struct Receiver {
    pub url: String,
    server: FakeServer<Mutex<HashMap<String, usize>>>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let (base, server) = FakeServer::start(Mutex::default(), receive).await;
        Receiver {
            url: format!("{base}/hook"),
            server,
        }
    }

    /// How many times each event was delivered, by its id.
    pub fn deliveries(&self) -> HashMap<String, usize> {
        self.server.state().lock().expect("deliveries").clone()
    }
}

async fn receive(
    state: Arc<Mutex<HashMap<String, usize>>>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, std::convert::Infallible> {
    let id = request
        .headers()
        .get("webhook-id")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    *state.lock().expect("deliveries").entry(id).or_default() += 1;
    Ok(Response::builder()
        .status(204)
        .body(Full::new(Bytes::new()))
        .expect("a response"))
}
