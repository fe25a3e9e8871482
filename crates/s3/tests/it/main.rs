//! `S3AttachmentStore` against a real S3-compatible server (moto's, a fresh bucket per test), and
//! against endpoints that are down or answer only errors.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use domain::{AttachmentId, EmailMessageId, ATTACHMENT_PIECE_BYTES};
use futures_util::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::{ClientOptions, ObjectStore};
use ports::{AttachmentContent, AttachmentObjects, StoreError};
use s3_store::{S3AttachmentStore, S3Settings};
use test_support::s3::{S3_ACCESS_KEY_ID, S3_REGION, S3_SECRET_ACCESS_KEY};
use test_support::S3Server;
use uuid::Uuid;

const PIECE: usize = ATTACHMENT_PIECE_BYTES;

fn settings(endpoint: String) -> S3Settings {
    S3Settings {
        endpoint,
        region: S3_REGION.to_owned(),
        access_key_id: S3_ACCESS_KEY_ID.to_owned(),
        secret_access_key: S3_SECRET_ACCESS_KEY.to_owned(),
    }
}

fn store(server: &S3Server, prefix: &str) -> S3AttachmentStore {
    S3AttachmentStore::from_settings(&server.location(prefix), settings(server.endpoint()))
        .expect("store")
}

fn message() -> EmailMessageId {
    EmailMessageId(Uuid::now_v7())
}

fn attachment(position: u32) -> AttachmentId {
    AttachmentId::from_position(position).expect("a position from 1")
}

/// Bytes that differ from piece to piece and within each, so a piece read from the wrong place
/// shows.
fn bytes(len: usize) -> Arc<[u8]> {
    (0..len)
        .map(|index| (index % 251) as u8 ^ (index / PIECE) as u8)
        .collect()
}

/// Every key in the server's bucket, read with object_store itself.
async fn keys(server: &S3Server) -> Vec<String> {
    let bucket = AmazonS3Builder::new()
        .with_endpoint(server.endpoint())
        .with_region(S3_REGION)
        .with_access_key_id(S3_ACCESS_KEY_ID)
        .with_secret_access_key(S3_SECRET_ACCESS_KEY)
        .with_bucket_name(server.bucket())
        .with_client_options(ClientOptions::new().with_allow_http(true))
        .build()
        .expect("a client of the bucket");
    let mut keys: Vec<String> = bucket
        .list(None)
        .map_ok(|object| object.location.to_string())
        .try_collect()
        .await
        .expect("listing");
    keys.sort();
    keys
}

#[tokio::test]
async fn every_piece_reads_back_byte_for_byte() {
    let server = S3Server::start();
    let store = store(&server, "mail");
    let (message, attachment) = (message(), attachment(1));
    let content = bytes(600 * 1024);
    store
        .put(message, attachment, Arc::clone(&content))
        .await
        .expect("put");

    let mut pieces = Vec::new();
    for index in 0..3 {
        pieces.push(
            store
                .piece(message, attachment, index)
                .await
                .expect("read")
                .expect("a piece"),
        );
    }
    assert_eq!(
        pieces.iter().map(Vec::len).collect::<Vec<_>>(),
        [PIECE, PIECE, 600 * 1024 - 2 * PIECE]
    );
    assert_eq!(pieces.concat(), &content[..]);
}

#[tokio::test]
async fn a_piece_past_the_end_is_none() {
    let server = S3Server::start();
    let store = store(&server, "mail");
    let message = message();
    store
        .put(message, attachment(1), bytes(600 * 1024))
        .await
        .expect("put");
    // Exactly two pieces: the third starts at the very end.
    store
        .put(message, attachment(2), bytes(2 * PIECE))
        .await
        .expect("put");
    // No piece at all.
    store
        .put(message, attachment(3), bytes(0))
        .await
        .expect("put");

    for (position, index) in [(1, 3), (1, 4), (1, u64::MAX), (2, 2), (3, 0)] {
        assert_eq!(
            store.piece(message, attachment(position), index).await,
            Ok(None),
            "piece {index} of attachment {position}"
        );
    }
    assert!(store
        .piece(message, attachment(2), 1)
        .await
        .expect("read")
        .is_some());
}

#[tokio::test]
async fn an_unknown_message_or_attachment_is_none() {
    let server = S3Server::start();
    let store = store(&server, "mail");
    let message = message();
    assert_eq!(store.piece(message, attachment(1), 0).await, Ok(None));

    store
        .put(message, attachment(1), bytes(10))
        .await
        .expect("put");
    assert_eq!(store.piece(message, attachment(2), 0).await, Ok(None));
}

#[tokio::test]
async fn a_second_put_replaces_the_first() {
    let server = S3Server::start();
    let store = store(&server, "mail");
    let (message, attachment) = (message(), attachment(1));
    store
        .put(message, attachment, bytes(PIECE + 10))
        .await
        .expect("first put");
    let second: Arc<[u8]> = Arc::from(&b"the second bytes"[..]);
    store
        .put(message, attachment, Arc::clone(&second))
        .await
        .expect("second put");

    assert_eq!(
        store.piece(message, attachment, 0).await,
        Ok(Some(second.to_vec()))
    );
    assert_eq!(store.piece(message, attachment, 1).await, Ok(None));
}

#[tokio::test]
async fn remove_takes_every_attachment_of_its_message_only() {
    let server = S3Server::start();
    let store = store(&server, "mail");
    let (removed, kept) = (message(), message());
    for position in 1..=3 {
        store
            .put(removed, attachment(position), bytes(100))
            .await
            .expect("put");
    }
    store
        .put(kept, attachment(1), bytes(100))
        .await
        .expect("put");

    store.remove(removed).await.expect("remove");

    for position in 1..=3 {
        assert_eq!(
            store.piece(removed, attachment(position), 0).await,
            Ok(None)
        );
    }
    assert!(store
        .piece(kept, attachment(1), 0)
        .await
        .expect("read")
        .is_some());
    assert_eq!(keys(&server).await, [format!("mail/{kept}/1")]);
}

#[tokio::test]
async fn removing_a_message_without_attachments_is_no_error() {
    let server = S3Server::start();
    let store = store(&server, "mail");
    assert_eq!(store.remove(message()).await, Ok(()));
}

#[tokio::test]
async fn keys_are_the_prefix_the_message_and_the_position() {
    let server = S3Server::start();
    let message = message();
    let prefixed = store(&server, "tenant/attachments");
    let bare = store(&server, "");
    prefixed
        .put(message, attachment(1), bytes(1))
        .await
        .expect("put");
    prefixed
        .put(message, attachment(12), bytes(1))
        .await
        .expect("put");
    bare.put(message, attachment(2), bytes(1))
        .await
        .expect("put");

    let mut expected = vec![
        format!("tenant/attachments/{message}/1"),
        format!("tenant/attachments/{message}/12"),
        format!("{message}/2"),
    ];
    expected.sort();
    assert_eq!(keys(&server).await, expected);
}

#[tokio::test]
async fn an_endpoint_nobody_listens_on_is_unavailable() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let store = S3AttachmentStore::from_settings(
        "s3://bucket/mail",
        settings(format!("http://127.0.0.1:{port}")),
    )
    .expect("store");

    let (message, attachment) = (message(), attachment(1));
    let within = Duration::from_secs(20);
    let read = tokio::time::timeout(within, store.piece(message, attachment, 0))
        .await
        .expect("an answer within the bound");
    assert!(
        matches!(read, Err(StoreError::ObjectStoreUnavailable(_))),
        "{read:?}"
    );
    let put = tokio::time::timeout(within, store.put(message, attachment, bytes(10)))
        .await
        .expect("an answer within the bound");
    assert!(
        matches!(put, Err(StoreError::ObjectStoreUnavailable(_))),
        "{put:?}"
    );
    let remove = tokio::time::timeout(within, store.remove(message))
        .await
        .expect("an answer within the bound");
    assert!(
        matches!(remove, Err(StoreError::ObjectStoreUnavailable(_))),
        "{remove:?}"
    );
}

/// An endpoint that answers every request with `status` and an S3 error body echoing a token.
fn answering(status: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a listener");
    let endpoint = format!("http://{}", listener.local_addr().expect("its address"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            // The request's head (a GET has no body), then the answer.
            let mut head = Vec::new();
            let mut byte = [0u8];
            while !head.ends_with(b"\r\n\r\n") && stream.read_exact(&mut byte).is_ok() {
                head.push(byte[0]);
            }
            let body = "<Error><Code>Refused</Code><Token-0>session-token-echo</Token-0></Error>";
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: application/xml\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    endpoint
}

#[tokio::test]
async fn a_server_error_is_unavailable_and_a_refusal_internal_neither_with_the_body() {
    for (status, unavailable) in [
        ("503 Service Unavailable", true),
        ("500 Internal Server Error", true),
        ("400 Bad Request", false),
    ] {
        let store = S3AttachmentStore::from_settings("s3://bucket", settings(answering(status)))
            .expect("store");
        let read = tokio::time::timeout(
            Duration::from_secs(20),
            store.piece(message(), attachment(1), 0),
        )
        .await
        .expect("an answer within the bound");
        let text = match (&read, unavailable) {
            (Err(StoreError::ObjectStoreUnavailable(text)), true)
            | (Err(StoreError::Internal(text)), false) => text,
            _ => panic!("{status}: {read:?}"),
        };
        assert!(text.contains(&status[..3]), "{status}: {text}");
        assert!(!text.contains("session-token-echo"), "{status}: {text}");
    }
}
