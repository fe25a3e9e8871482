//! Waits for a code, served lean.
//!
//! A wait may hold its connection for 300 s, and thousands wait at once. actix-http (and hyper
//! alike) keeps 16 KiB of read and write buffers and a request head for every connection, which
//! is most of what a waiting request costs. So the server peeks at each new connection's first
//! bytes, without taking them. When they hold a whole, plain wait request (a request line of a
//! wait route, a head [`httparse`] accepts, and a `Content-Length` body that is all there), the
//! request is taken off the socket and answered here, keeping only its parsed fields while it
//! waits; the answer closes the connection. Anything else, including every request this does not
//! fully understand, is left untouched for actix-web. Both paths run the same handlers
//! ([`answer_wait_for_code`], [`answer_wait_any_channel`]), authentication, body rules, error
//! shapes and telemetry (decision 0029).

use std::time::{Duration, SystemTime};

use actix_web::body::to_bytes;
use actix_web::{HttpResponse, ResponseError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tracing::Instrument;

use crate::auth::bearer_credential;
use crate::errors::ApiError;
use crate::extract::{parse_json_body, MAX_JSON_BODY_BYTES};
use crate::routes::sms::{answer_wait_any_channel, answer_wait_for_code};
use crate::state::ApiState;
use crate::telemetry::RequestTelemetry;

const SMS_WAIT: &str = "/v1/sms/wait-for-code";
const CODES_WAIT: &str = "/v1/codes/wait";
/// The largest wait request served lean: a wait's body is a few fields, so anything bigger is
/// unusual and goes to the full stack.
pub const MAX_LEAN_REQUEST_BYTES: usize = 4096;
/// As long as actix-web gives a client to send its request head.
pub const REQUEST_HEAD_TIMEOUT: Duration = Duration::from_secs(5);
const MAX_HEADERS: usize = 32;

/// What the bytes received so far say about a connection's first request.
#[derive(Debug, PartialEq, Eq)]
pub enum FirstRequest {
    /// A whole wait request, served lean once its `consumed` bytes are taken off the socket.
    Wait(WaitRequest),
    /// Anything else, or a wait this path does not fully understand: actix-web serves it.
    Other,
    /// The bytes so far begin a wait that is not all there yet.
    Undecided,
}

/// A wait request as read from the socket: all a waiting request keeps.
#[derive(Debug, PartialEq, Eq)]
pub struct WaitRequest {
    route: &'static str,
    authorization: Option<String>,
    request_id: Option<String>,
    body: Vec<u8>,
    /// How many bytes of the connection the request takes.
    pub consumed: usize,
}

/// Classifies a connection by the bytes received so far.
pub fn classify(received: &[u8]) -> FirstRequest {
    const REQUEST_LINES: [&[u8]; 2] = [b"POST /v1/sms/wait-for-code", b"POST /v1/codes/wait"];
    let begins_wait = REQUEST_LINES.iter().any(|line| {
        let shared = line.len().min(received.len());
        received[..shared] == line[..shared]
            && matches!(received.get(line.len()), None | Some(b' ' | b'?'))
    });
    if !begins_wait {
        return FirstRequest::Other;
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let head_length = match request.parse(received) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) if received.len() < MAX_LEAN_REQUEST_BYTES => {
            return FirstRequest::Undecided
        }
        Ok(httparse::Status::Partial) => return FirstRequest::Other,
        Err(_) => return FirstRequest::Other,
    };
    let route = match request
        .path
        .map(|path| path.split('?').next().unwrap_or(path))
    {
        Some(SMS_WAIT) => SMS_WAIT,
        Some(CODES_WAIT) => CODES_WAIT,
        _ => return FirstRequest::Other,
    };
    let mut content_length = None;
    let mut host = false;
    let mut authorization = None;
    let mut request_id = None;
    for header in request.headers.iter() {
        let name = header.name;
        let value = std::str::from_utf8(header.value).ok();
        if name.eq_ignore_ascii_case("transfer-encoding")
            || name.eq_ignore_ascii_case("expect")
            || name.eq_ignore_ascii_case("upgrade")
        {
            return FirstRequest::Other;
        }
        let single = |taken: &Option<_>| value.is_some() && taken.is_none();
        if name.eq_ignore_ascii_case("content-length") {
            match value.and_then(|value| value.trim().parse::<usize>().ok()) {
                Some(length) if content_length.is_none() => content_length = Some(length),
                _ => return FirstRequest::Other,
            }
        } else if name.eq_ignore_ascii_case("host") {
            if host {
                return FirstRequest::Other;
            }
            host = true;
        } else if name.eq_ignore_ascii_case("authorization") {
            if !single(&authorization) {
                return FirstRequest::Other;
            }
            authorization = value.map(str::to_owned);
        } else if name.eq_ignore_ascii_case("x-request-id") {
            if !single(&request_id) {
                return FirstRequest::Other;
            }
            request_id = value.map(str::to_owned);
        }
    }
    if request.version != Some(1) || !host {
        return FirstRequest::Other;
    }
    let consumed = head_length + content_length.unwrap_or(0);
    if consumed > MAX_LEAN_REQUEST_BYTES {
        return FirstRequest::Other;
    }
    if consumed > received.len() {
        return FirstRequest::Undecided;
    }
    FirstRequest::Wait(WaitRequest {
        route,
        authorization,
        request_id,
        body: received[head_length..consumed].to_vec(),
        consumed,
    })
}

/// Peeks at a new connection until its first request is told. A whole wait request is taken off
/// the socket and returned; anything else, or a client too slow to send its head, is left
/// untouched for actix-web (`None`).
pub async fn take_wait(stream: &mut TcpStream) -> Option<WaitRequest> {
    let request = {
        let mut received = vec![0_u8; MAX_LEAN_REQUEST_BYTES];
        let deadline = tokio::time::Instant::now() + REQUEST_HEAD_TIMEOUT;
        loop {
            let peeked = tokio::time::timeout_at(deadline, stream.peek(&mut received)).await;
            let Ok(Ok(count @ 1..)) = peeked else {
                return None;
            };
            match classify(&received[..count]) {
                FirstRequest::Wait(request) => break request,
                FirstRequest::Other => return None,
                // The bytes so far stay readable, so peeking again at once would spin.
                FirstRequest::Undecided => tokio::time::sleep(Duration::from_millis(5)).await,
            }
        }
    };
    let mut taken = vec![0_u8; request.consumed];
    stream.read_exact(&mut taken).await.ok()?;
    Some(request)
}

/// Answers a wait whose bytes were taken off `stream`, then closes the connection. A client
/// that hangs up first ends the wait, as on actix-web.
pub async fn serve_wait(
    mut stream: TcpStream,
    request: WaitRequest,
    state: actix_web::web::Data<ApiState>,
) {
    let telemetry = RequestTelemetry::start(
        Some(&state.metrics),
        "POST",
        request.route.to_owned(),
        request.request_id.as_deref(),
    );
    let answering = answer(&state, request).instrument(telemetry.span().clone());
    let (status, headers, body) = tokio::select! {
        answered = answering => answered,
        () = hung_up(&stream) => {
            tracing::debug!(parent: telemetry.span(), "the client hung up during its wait");
            return;
        }
    };
    let request_id = telemetry.finish(Some(&state.metrics), status);
    let head = response_head(status, &headers, body.len(), &request_id, SystemTime::now());
    let written = async {
        stream.write_all(&head).await?;
        stream.write_all(&body).await?;
        stream.shutdown().await
    };
    if let Err(error) = written.await {
        tracing::debug!(%error, "the answer of a wait did not reach its client");
    }
}

/// Resolves when the client closes its side; bytes it sends meanwhile are not requests this
/// connection will serve.
async fn hung_up(stream: &TcpStream) {
    let mut discarded = [0_u8; 64];
    loop {
        if stream.readable().await.is_err() {
            return;
        }
        match stream.try_read(&mut discarded) {
            Ok(0) => return,
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return,
        }
    }
}

/// Status, the headers of the answer besides the framing ones, and the body.
type Answer = (u16, Vec<(&'static str, String)>, Vec<u8>);

async fn answer(state: &ApiState, request: WaitRequest) -> Answer {
    match wait(state, request).await {
        Ok(body) => (
            200,
            vec![("content-type", "application/json".to_owned())],
            body,
        ),
        Err(error) => as_answer(error.error_response()).await,
    }
}

/// The JSON answer of a wait: authenticated first, so a bad key gets its 401 before the body is
/// looked at, as on actix-web.
async fn wait(state: &ApiState, request: WaitRequest) -> Result<Vec<u8>, ApiError> {
    let presented = request
        .authorization
        .as_deref()
        .and_then(bearer_credential)
        .ok_or(ApiError::InvalidKey)?;
    let agent = state.agents.authenticate(&presented).await?.agent.id;
    let answer = match request.route {
        SMS_WAIT => {
            let body = parse_json_body(&request.body, MAX_JSON_BODY_BYTES)?;
            serde_json::to_vec(&answer_wait_for_code(state, agent, body).await?)
        }
        _ => {
            let body = parse_json_body(&request.body, MAX_JSON_BODY_BYTES)?;
            serde_json::to_vec(&answer_wait_any_channel(state, agent, body).await?)
        }
    };
    answer.map_err(|error| ApiError::Internal(format!("encoding the answer: {error}")))
}

/// An error's actix-web response (its shape is built once, for both paths) as an answer.
async fn as_answer(response: HttpResponse) -> Answer {
    const KEPT: [&str; 3] = ["content-type", "www-authenticate", "retry-after"];
    let status = response.status().as_u16();
    let headers = KEPT
        .into_iter()
        .filter_map(|name| {
            Some((
                name,
                response.headers().get(name)?.to_str().ok()?.to_owned(),
            ))
        })
        .collect();
    let body = to_bytes(response.into_body()).await.unwrap_or_default();
    (status, headers, body.to_vec())
}

fn response_head(
    status: u16,
    headers: &[(&'static str, String)],
    content_length: usize,
    request_id: &str,
    now: SystemTime,
) -> Vec<u8> {
    let reason = actix_web::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|status| status.canonical_reason())
        .unwrap_or("");
    let mut head = format!("HTTP/1.1 {status} {reason}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "content-length: {content_length}\r\nx-request-id: {request_id}\r\nconnection: close\r\n\
         date: {}\r\n\r\n",
        httpdate::fmt_http_date(now)
    ));
    head.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(line: &str, headers: &[&str], body: &str) -> String {
        let mut request = format!("{line}\r\nHost: localhost\r\n");
        for header in headers {
            request.push_str(&format!("{header}\r\n"));
        }
        format!("{request}Content-Length: {}\r\n\r\n{body}", body.len())
    }

    fn taken(received: &str) -> WaitRequest {
        match classify(received.as_bytes()) {
            FirstRequest::Wait(request) => request,
            other => panic!("not a wait: {other:?} for {received}"),
        }
    }

    #[test]
    fn a_whole_wait_is_taken_with_what_it_needs_and_nothing_after_it() {
        let first = request(
            "POST /v1/sms/wait-for-code HTTP/1.1",
            &[
                "Authorization: Bearer ark_key",
                "X-Request-Id: r-1",
                "Connection: keep-alive",
            ],
            r#"{"timeout": 5}"#,
        );
        let pipelined = format!("{first}GET /v1/agents/me HTTP/1.1\r\n\r\n");
        let wait = taken(&pipelined);
        assert_eq!(wait.route, SMS_WAIT);
        assert_eq!(wait.authorization.as_deref(), Some("Bearer ark_key"));
        assert_eq!(wait.request_id.as_deref(), Some("r-1"));
        assert_eq!(wait.body, br#"{"timeout": 5}"#);
        assert_eq!(wait.consumed, first.len());
        let codes = taken(&request("POST /v1/codes/wait?x=1 HTTP/1.1", &[], "{}"));
        assert_eq!((codes.route, codes.authorization), (CODES_WAIT, None));
    }

    #[test]
    fn a_wait_not_all_there_yet_is_undecided() {
        let whole = request("POST /v1/codes/wait HTTP/1.1", &[], r#"{"timeout": 1}"#);
        for cut in [0, 1, 9, 19, 40, whole.len() - 1] {
            assert_eq!(
                classify(&whole.as_bytes()[..cut]),
                FirstRequest::Undecided,
                "{cut}"
            );
        }
    }

    #[test]
    fn everything_else_is_left_to_the_full_stack() {
        let big = "x".repeat(MAX_LEAN_REQUEST_BYTES);
        for received in [
            request("GET /v1/agents/me HTTP/1.1", &[], ""),
            request("GET /v1/sms/wait-for-code HTTP/1.1", &[], ""),
            request("POST /v1/sms/wait-for-codes HTTP/1.1", &[], "{}"),
            request("POST /v1/sms/wait-for-code/ HTTP/1.1", &[], "{}"),
            request("POST /v1/codes/waiting HTTP/1.1", &[], "{}"),
            request("POST /v1/sms/wait-for-code HTTP/1.0", &[], "{}"),
            request(
                "POST /v1/sms/wait-for-code HTTP/1.1",
                &["Expect: 100-continue"],
                "{}",
            ),
            request(
                "POST /v1/sms/wait-for-code HTTP/1.1",
                &["Transfer-Encoding: chunked"],
                "",
            ),
            request(
                "POST /v1/sms/wait-for-code HTTP/1.1",
                &["Content-Length: 2"],
                "{}",
            ),
            request(
                "POST /v1/sms/wait-for-code HTTP/1.1",
                &["Host: twice"],
                "{}",
            ),
            request(
                "POST /v1/sms/wait-for-code HTTP/1.1",
                &["Upgrade: h2c"],
                "{}",
            ),
            request(
                "POST /v1/sms/wait-for-code HTTP/1.1",
                &["Authorization: Bearer a", "Authorization: Bearer b"],
                "{}",
            ),
            request("POST /v1/sms/wait-for-code HTTP/1.1", &[], &big),
            "POST /v1/sms/wait-for-code HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}".to_owned(),
            "POST /v1/sms/wait-for-code HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n".to_owned(),
            "POST http://localhost/v1/sms/wait-for-code HTTP/1.1\r\n\r\n".to_owned(),
            "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_owned(),
        ] {
            assert_eq!(
                classify(received.as_bytes()),
                FirstRequest::Other,
                "{received}"
            );
        }
    }

    #[test]
    fn the_answer_head_frames_the_body_and_closes() {
        let head = response_head(
            408,
            &[("content-type", "application/json".to_owned())],
            42,
            "r-1",
            SystemTime::UNIX_EPOCH,
        );
        assert_eq!(
            String::from_utf8(head).expect("text"),
            "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n\
             content-length: 42\r\nx-request-id: r-1\r\nconnection: close\r\n\
             date: Thu, 01 Jan 1970 00:00:00 GMT\r\n\r\n"
        );
    }
}
