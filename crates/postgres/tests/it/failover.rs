//! Connections across a formation's failover: a node that freezes (it keeps its connections and
//! accepts new ones, and never answers again) is left for the next host of the URL.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use diesel_async::SimpleAsyncConnection;
use futures_util::FutureExt;
use ports::Notifications;
use postgres_store::{Connector, PgNotificationHub, NOTIFICATION_CHANNEL};
use test_support::TestDatabase;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A node in front of the test server: it passes bytes both ways until `freeze`, then holds every
/// connection open, old and new, and passes nothing more, as a stopped (SIGSTOP) server does.
struct FreezableNode {
    port: u16,
    frozen: Arc<AtomicBool>,
    connections: Arc<AtomicUsize>,
}

impl FreezableNode {
    async fn start(upstream: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let port = listener.local_addr().expect("its address").port();
        let frozen = Arc::new(AtomicBool::new(false));
        let connections = Arc::new(AtomicUsize::new(0));
        let (held_frozen, counted) = (Arc::clone(&frozen), Arc::clone(&connections));
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((client, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                if held_frozen.load(Ordering::SeqCst) {
                    held.push(client);
                    continue;
                }
                let server = TcpStream::connect(&upstream)
                    .await
                    .expect("the test server");
                let (client_reads, client_writes) = client.into_split();
                let (server_reads, server_writes) = server.into_split();
                tokio::spawn(pass(client_reads, server_writes, Arc::clone(&held_frozen)));
                tokio::spawn(pass(server_reads, client_writes, Arc::clone(&held_frozen)));
            }
        });
        Self {
            port,
            frozen,
            connections,
        }
    }

    fn freeze(&self) {
        self.frozen.store(true, Ordering::SeqCst);
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// Copies `from` to `to` until the node freezes; then keeps both open, silent.
async fn pass(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    frozen: Arc<AtomicBool>,
) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        if frozen.load(Ordering::SeqCst) {
            let _held = (from, to);
            return std::future::pending().await;
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
    }
}

/// Waits until `done` holds, for at most `within`.
async fn until(within: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + within;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_listener_on_a_node_that_froze_moves_to_the_next_host_and_everyone_looks_again() {
    let database = TestDatabase::new().await;
    let node = FreezableNode::start(database.url_behind(0).1).await;
    let url = database.url_behind(node.port).0;
    let hub = PgNotificationHub::start(Connector::from_url(&url).expect("a valid URL"));
    until(Duration::from_secs(10), "the hub never listened", || {
        hub.is_listening()
    })
    .await;
    assert_eq!(hub.connections_made(), 1);
    let through_node = node.connections();
    assert!(
        through_node >= 2,
        "the listener and its registrar go through the first host"
    );

    let missed = hub.subscribe("failover-test:missed");
    node.freeze();
    // The probe finds the node silent within its deadline; the next connection tries the node
    // (1 s), then the next host.
    until(
        Duration::from_secs(15),
        "the hub did not move to the next host",
        || hub.connections_made() == 2 && hub.is_listening(),
    )
    .await;
    assert!(
        node.connections() > through_node,
        "the frozen node was tried first, as the host that answered last"
    );
    assert!(
        missed.now_or_never().is_some(),
        "a waiter is told to look again: what was published meanwhile may be lost"
    );

    // What commits now is heard through the new connection.
    let heard = hub.subscribe("failover-test:after");
    database
        .connection()
        .await
        .batch_execute(&format!(
            "SELECT pg_notify('{NOTIFICATION_CHANNEL}', 'failover-test:after')"
        ))
        .await
        .expect("notified");
    tokio::time::timeout(Duration::from_secs(10), heard)
        .await
        .expect("a notification after the move is heard");
}

#[tokio::test]
async fn a_query_held_by_a_node_that_froze_fails_once_the_listener_finds_the_node_silent() {
    let database = TestDatabase::new().await;
    let node = FreezableNode::start(database.url_behind(0).1).await;
    let url = database.url_behind(node.port).0;
    let connector = Connector::from_url(&url).expect("a valid URL");
    let hub = PgNotificationHub::start(connector.clone());
    until(Duration::from_secs(10), "the hub never listened", || {
        hub.is_listening()
    })
    .await;
    let mut through_node = connector
        .open()
        .await
        .expect("a connection through the node");
    through_node
        .batch_execute("SELECT 1")
        .await
        .expect("the node answers before it freezes");

    node.freeze();
    let held = tokio::spawn(async move { through_node.batch_execute("SELECT 1").await });
    // The probe finds the node silent within 1 + 2 s; the listener's next attempt on it fails
    // within the URL's connect_timeout of 1 s, which ends the connections opened before.
    let ended = tokio::time::timeout(Duration::from_secs(15), held)
        .await
        .expect("the held query still waits on the frozen node")
        .expect("the query's task");
    assert!(ended.is_err(), "the held query cannot have been answered");

    let mut after = connector
        .open()
        .await
        .expect("a connection through the next host");
    after
        .batch_execute("SELECT 1")
        .await
        .expect("the next host answers");
}

#[tokio::test]
async fn connections_to_the_only_host_end_when_it_falls_silent_and_a_new_attempt_times_out() {
    let database = TestDatabase::new().await;
    let node = FreezableNode::start(database.url_behind(0).1).await;
    let (behind, server) = database.url_behind(node.port);
    let only_the_node = behind.replacen(&format!(",{server}"), "", 1);
    let connector = Connector::from_url(&only_the_node).expect("a valid URL");
    let mut opened = connector
        .open()
        .await
        .expect("a connection through the node");
    opened
        .batch_execute("SELECT 1")
        .await
        .expect("the node answers before it freezes");

    node.freeze();
    let held = tokio::spawn(async move { opened.batch_execute("SELECT 1").await });
    assert!(
        connector.open().await.is_err(),
        "a frozen node gives no connection within the URL's connect_timeout"
    );
    let ended = tokio::time::timeout(Duration::from_secs(5), held)
        .await
        .expect("the held query still waits on the frozen node")
        .expect("the query's task");
    assert!(ended.is_err(), "the held query cannot have been answered");
}
