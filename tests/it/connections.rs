//! Connections, black-box: a client that never finishes its request is closed by the head
//! deadline whatever it sent, a stopping server does not wait for such clients, and requests are
//! framed by one maintained HTTP implementation, waits for codes included.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::harness::{create_agent, Server};

/// The head deadline is 5 s; this leaves room for a loaded machine.
const CLOSED_WITHIN: Duration = Duration::from_secs(20);

/// What a client sends before it goes quiet: nothing, one byte, and the start of a wait.
const UNFINISHED_HEADS: [&str; 4] = [
    "",
    "P",
    "POST /v1/sms/wait-for-code HTTP/1.1\r\n",
    "POST /v1/codes/wait HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n",
];

fn address(server: &Server) -> String {
    server.base_url.trim_start_matches("http://").to_owned()
}

/// Opens a connection, sends `sent` and waits, reading, until the server closes it; how long
/// that took, or `None` past `CLOSED_WITHIN`.
async fn closed_after(address: String, sent: &'static str) -> Option<Duration> {
    let opened = Instant::now();
    let mut stream = TcpStream::connect(&address).await.expect("connect");
    stream.write_all(sent.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    match tokio::time::timeout(CLOSED_WITHIN, stream.read_to_end(&mut answer)).await {
        Ok(_) => Some(opened.elapsed()),
        Err(_) => None,
    }
}

#[tokio::test]
async fn connections_that_never_finish_their_request_head_are_closed_by_the_deadline() {
    let (server, database) = Server::start().await;
    let (key, _) = create_agent(&database, &[]).await;
    let clients = (0..200).map(|index| {
        closed_after(
            address(&server),
            UNFINISHED_HEADS[index % UNFINISHED_HEADS.len()],
        )
    });
    let closed = join_all(clients).await;
    let open = closed.iter().filter(|closed| closed.is_none()).count();
    assert_eq!(open, 0, "connections left open past {CLOSED_WITHIN:?}");
    let slowest = closed.iter().flatten().max().copied().unwrap_or_default();
    println!("200 unfinished heads, closed after at most {slowest:?}");
    let (status, me) = server.get("/v1/agents/me", Some(&key)).await;
    assert_eq!(status, 200, "the server serves others: {me}");
}

#[tokio::test]
async fn a_stopping_server_does_not_wait_for_clients_that_never_finish_their_request() {
    let (mut server, _database) = Server::start().await;
    let mut quiet = Vec::new();
    for sent in UNFINISHED_HEADS.iter().cycle().take(40) {
        let mut stream = TcpStream::connect(address(&server)).await.expect("connect");
        stream.write_all(sent.as_bytes()).await.expect("write");
        quiet.push(stream);
    }
    let asked = Instant::now();
    server.terminate();
    assert!(
        server.wait_for_exit(Duration::from_secs(15)).await,
        "a clean exit:\n{}",
        server.logs()
    );
    println!("stopped {:?} after SIGTERM", asked.elapsed());
}

/// Sends `request` whole on a connection of its own and reads the answer's status line.
async fn status_line(server: &Server, request: &str) -> String {
    let mut stream = TcpStream::connect(address(server)).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    tokio::time::timeout(CLOSED_WITHIN, stream.read_to_end(&mut answer))
        .await
        .expect("answered")
        .expect("read");
    let answer = String::from_utf8_lossy(&answer).into_owned();
    answer.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn waits_are_framed_like_every_other_request() {
    let (server, database) = Server::start().await;
    let (key, _) = create_agent(&database, &["--phone"]).await;
    let body = r#"{"timeout": 0}"#;
    let with_length = |length: &str| {
        format!(
            "POST /v1/sms/wait-for-code HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \
             {key}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\
             Connection: close\r\n\r\n{body}"
        )
    };
    let plain = status_line(&server, &with_length(&body.len().to_string())).await;
    assert!(plain.starts_with("HTTP/1.1 408"), "{plain}");
    let signed = status_line(&server, &with_length(&format!("+{}", body.len()))).await;
    assert!(signed.starts_with("HTTP/1.1 400"), "{signed}");
}

#[tokio::test]
async fn a_connection_idle_longer_than_a_clients_pool_keeps_it_is_still_open_for_the_next_request()
{
    let (server, _database) = Server::start().await;
    let mut stream = TcpStream::connect(address(&server)).await.expect("connect");
    let request = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let mut answer = [0u8; 1024];
    for _ in 0..2 {
        stream.write_all(request).await.expect("write");
        let read = tokio::time::timeout(CLOSED_WITHIN, stream.read(&mut answer))
            .await
            .expect("an answer")
            .expect("read");
        let text = String::from_utf8_lossy(&answer[..read]);
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        // Idle past the 5 s clients such as httpx keep a connection for: what is under test.
        tokio::time::sleep(Duration::from_secs(6)).await;
    }
}
