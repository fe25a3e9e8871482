//! Inbox search, black-box (mail-plus.md): words in any order across subject, sender,
//! recipients and text, without regard to case or accents; `from:`, `to:`, `has:attachment`,
//! `after:`, `before:`; ranked pages bound to their query; 422 for empty or malformed queries.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use test_support::TestDatabase;

use crate::email::{email_agent, email_server, get, now, send, webhook_signed, SECRET};
use crate::support::harness::Server;

async fn deliver(server: &Server, delivery: &str, mail: &str) -> String {
    let (status, stored) = webhook_signed(
        server,
        SECRET,
        delivery,
        now(),
        "message/rfc822",
        mail.as_bytes(),
    )
    .await;
    assert_eq!(status, 200, "{stored}");
    stored["stored"][0].as_str().expect("stored").to_owned()
}

/// The ids a search finds, and its page.
async fn found(server: &Server, key: &str, query: &str) -> (BTreeSet<String>, Value) {
    let encoded: String = query
        .bytes()
        .map(|byte| match byte.is_ascii_alphanumeric() {
            true => char::from(byte).to_string(),
            false => format!("%{byte:02X}"),
        })
        .collect();
    let (status, page) = get(server, &format!("/v1/email/search?q={encoded}"), key).await;
    assert_eq!(status, 200, "{query}: {page}");
    let ids = page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|m| m["id"].as_str().expect("id").to_owned())
        .collect();
    (ids, page)
}

fn set(ids: &[&String]) -> BTreeSet<String> {
    ids.iter().map(|id| (*id).clone()).collect()
}

#[tokio::test]
async fn words_and_narrowings_find_what_they_say_and_nothing_else() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "acme").await;
    let invoice = deliver(
        &server,
        "msg_s1",
        &format!(
            "From: Billing <billing@acme.example>\r\nTo: {address}\r\nSubject: =?UTF-8?Q?=C3=9Cberweisung_f=C3=BCr_M=C3=A4rz?=\r\n\
             Message-ID: <s1@acme.example>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n\
             --b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nInvoice 42 attached.\r\n\
             --b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"i.pdf\"\r\n\r\n%PDF\r\n--b--\r\n"
        ),
    )
    .await;
    let lunch = deliver(
        &server,
        "msg_s2",
        &format!(
            "From: alice@example.org\r\nTo: {address}\r\nSubject: Lunch\r\nMessage-ID: <s2@example.org>\r\n\r\n\
             An INVOICE? No: lunch.\r\n"
        ),
    )
    .await;
    let hello = deliver(
        &server,
        "msg_s3",
        &format!(
            "From: bob@corp.example\r\nTo: {address}\r\nCc: Carol@Partner.example\r\nSubject: Hello\r\n\
             Message-ID: <s3@corp.example>\r\n\r\nNothing here.\r\n"
        ),
    )
    .await;
    let sent = send(
        &server,
        &key,
        json!({"to": ["dave@example.com"], "subject": "Invoice question", "body_text": "Which one?"}),
    )
    .await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    let question = sent.body["data"]["id"].as_str().expect("id").to_owned();

    for (query, expected) in [
        ("invoice", set(&[&invoice, &lunch, &question])),
        ("uberweisung MARZ", set(&[&invoice])),
        ("Überweisung für märz", set(&[&invoice])),
        ("42 invoice", set(&[&invoice])),
        ("alice", set(&[&lunch])),
        ("partner", set(&[&hello])),
        ("dave", set(&[&question])),
        ("from:billing@acme.example", set(&[&invoice])),
        ("from:@ACME.example", set(&[&invoice])),
        ("to:carol@partner.example", set(&[&hello])),
        ("to:@example.com invoice", set(&[&question])),
        ("has:attachment", set(&[&invoice])),
        ("invoice has:attachment", set(&[&invoice])),
        ("invoice lunch", set(&[&lunch])),
        ("nowhere", BTreeSet::new()),
    ] {
        assert_eq!(found(&server, &key, query).await.0, expected, "{query}");
    }
    let today = time::OffsetDateTime::now_utc().date();
    let tomorrow = today.next_day().expect("a tomorrow");
    assert_eq!(
        found(&server, &key, &format!("after:{today}"))
            .await
            .0
            .len(),
        4
    );
    assert!(found(&server, &key, &format!("before:{today}"))
        .await
        .0
        .is_empty());
    assert!(found(&server, &key, &format!("after:{tomorrow}"))
        .await
        .0
        .is_empty());

    let (status, outbound) = get(
        &server,
        "/v1/email/search?q=invoice&direction=outbound",
        &key,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(outbound["items"][0]["id"], question);
    assert_eq!(outbound["items"].as_array().map(Vec::len), Some(1));

    let (other_key, _) = email_agent(&database, "acme").await;
    assert!(found(&server, &other_key, "invoice").await.0.is_empty());
}

#[tokio::test]
async fn pages_follow_their_query_and_bad_queries_are_422() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "acme").await;
    for n in 0..3 {
        deliver(
            &server,
            &format!("msg_p{n}"),
            &format!(
                "From: alice@example.org\r\nTo: {address}\r\nSubject: Report {n}\r\nMessage-ID: <p{n}@example.org>\r\n\r\nquarterly report\r\n"
            ),
        )
        .await;
    }
    let mut seen = BTreeSet::new();
    let mut path = "/v1/email/search?q=report&limit=2".to_owned();
    let mut pages = 0;
    loop {
        let (status, page) = get(&server, &path, &key).await;
        assert_eq!(status, 200, "{page}");
        pages += 1;
        for item in page["items"].as_array().expect("items") {
            assert!(
                seen.insert(item["id"].as_str().expect("id").to_owned()),
                "twice: {item}"
            );
        }
        let Some(cursor) = page["next_cursor"].as_str() else {
            break;
        };
        let (status, refused) = get(
            &server,
            &format!("/v1/email/search?q=quarterly&limit=2&cursor={cursor}"),
            &key,
        )
        .await;
        assert_eq!(status, 400, "another query's cursor: {refused}");
        path = format!("/v1/email/search?q=REPORT&limit=2&cursor={cursor}");
    }
    assert_eq!((seen.len(), pages), (3, 2));

    for query in [
        "",
        "%20%20",
        "from:alice",
        "has:pdf",
        "after:2026-02-30",
        "before:soon",
    ] {
        let (status, refused) = get(&server, &format!("/v1/email/search?q={query}"), &key).await;
        assert_eq!(status, 422, "{query}: {refused}");
        assert_eq!(
            refused["detail"][0]["loc"],
            json!(["query", "q"]),
            "{refused}"
        );
    }
    let (status, missing) = get(&server, "/v1/email/search", &key).await;
    assert_eq!(status, 422);
    assert_eq!(missing["detail"][0]["type"], "missing");
    let (no_inbox, _) = crate::support::harness::create_agent(&database, &[]).await;
    assert_eq!(
        get(&server, "/v1/email/search?q=report", &no_inbox).await.0,
        400
    );
}
