//! Sender rules, black-box (mail-plus.md): `GET`/`PUT /v1/email/rules`, what they keep out of
//! the inbox (counted, not stored, no event), the envelope sender matched before `From` by an
//! allow list, and a block held against both.

use serde_json::{json, Value};
use test_support::TestDatabase;

use crate::email::{email_agent, email_server, get, now, webhook_signed, SECRET};
use crate::support::harness::{create_agent, read, Server};

async fn put_rules(server: &Server, key: &str, body: &Value) -> (u16, Value) {
    let response = server
        .client
        .put(server.url("/v1/email/rules"))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .expect("request");
    read(response).await
}

/// A mail to `to` from `from`, with a `Return-Path` when `envelope` is given.
fn mail(to: &str, from: &str, envelope: Option<&str>, n: u32) -> Vec<u8> {
    let return_path = envelope
        .map(|sender| format!("Return-Path: <{sender}>\r\n"))
        .unwrap_or_default();
    format!(
        "{return_path}From: {from}\r\nTo: {to}\r\nSubject: Note {n}\r\nMessage-ID: <note-{n}@example.org>\r\n\
         \r\nBody {n}\r\n"
    )
    .into_bytes()
}

#[tokio::test]
async fn rules_are_read_and_replaced_and_wrong_entries_are_422_by_place() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, _) = email_agent(&database, "acme").await;
    let (status, rules) = get(&server, "/v1/email/rules", &key).await;
    assert_eq!(status, 200, "{rules}");
    assert_eq!(
        rules,
        json!({"allow": [], "block": [], "kept_out_count": 0})
    );

    let (status, rules) = put_rules(
        &server,
        &key,
        &json!({"allow": ["Boss@Corp.example", "boss@corp.example", "@Partner.example"]}),
    )
    .await;
    assert_eq!(status, 200, "{rules}");
    assert_eq!(
        rules,
        json!({"allow": ["boss@corp.example", "@partner.example"], "block": [], "kept_out_count": 0})
    );
    assert_eq!(get(&server, "/v1/email/rules", &key).await.1, rules);

    let (status, refused) = put_rules(
        &server,
        &key,
        &json!({"allow": ["ok@x.example", "not an address"], "block": ["@"]}),
    )
    .await;
    assert_eq!(status, 422, "{refused}");
    let places: Vec<&Value> = refused["detail"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| &item["loc"])
        .collect();
    assert_eq!(
        places,
        [&json!(["body", "allow", 1]), &json!(["body", "block", 0])]
    );
    let too_many: Vec<String> = (0..1001).map(|n| format!("a{n}@x.example")).collect();
    let (status, refused) = put_rules(&server, &key, &json!({"block": too_many})).await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["detail"][0]["type"], "too_long");
    let (status, refused) = put_rules(&server, &key, &json!({"allow": "a@x.example"})).await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(
        get(&server, "/v1/email/rules", &key).await.1,
        rules,
        "a refused change changes nothing"
    );

    let (no_inbox, _) = create_agent(&database, &[]).await;
    assert_eq!(get(&server, "/v1/email/rules", &no_inbox).await.0, 400);
    assert_eq!(put_rules(&server, &no_inbox, &json!({})).await.0, 400);
}

#[tokio::test]
async fn kept_out_mail_is_counted_not_stored_and_emits_nothing() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "acme").await;
    let (status, _) = put_rules(
        &server,
        &key,
        &json!({"allow": ["@partner.example"], "block": ["spam@partner.example"]}),
    )
    .await;
    assert_eq!(status, 200);

    let deliveries = [
        // From the allowed domain: stored.
        (mail(&address, "ann@partner.example", None, 1), true),
        // From anyone else: kept out.
        (mail(&address, "eve@elsewhere.example", None, 2), false),
        // Blocked, although its domain is allowed.
        (mail(&address, "spam@partner.example", None, 3), false),
        // The envelope sender is matched before From.
        (
            mail(
                &address,
                "ann@partner.example",
                Some("bulk@elsewhere.example"),
                4,
            ),
            false,
        ),
        (
            mail(
                &address,
                "eve@elsewhere.example",
                Some("ann@partner.example"),
                5,
            ),
            true,
        ),
        // A block holds against From too, under an allowed envelope sender.
        (
            mail(
                &address,
                "spam@partner.example",
                Some("ann@partner.example"),
                6,
            ),
            false,
        ),
    ];
    for (n, (body, stored)) in deliveries.iter().enumerate() {
        let (status, answer) = webhook_signed(
            &server,
            SECRET,
            &format!("msg_rule_{n}"),
            now(),
            "message/rfc822",
            body,
        )
        .await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(
            answer["stored"].as_array().map(Vec::len),
            Some(usize::from(*stored)),
            "{n}: {answer}"
        );
        assert_eq!(answer["kept_out"], u32::from(!stored), "{n}: {answer}");
    }
    // A provider's retry of a kept-out mail is no second one.
    let (status, retried) = webhook_signed(
        &server,
        SECRET,
        "msg_rule_1",
        now(),
        "message/rfc822",
        &deliveries[1].0,
    )
    .await;
    assert_eq!(status, 200, "{retried}");
    assert_eq!(
        (&retried["kept_out"], &retried["duplicates"]),
        (&json!(0), &json!(1)),
        "{retried}"
    );

    let (_, inbox) = get(&server, "/v1/email/inbox", &key).await;
    let subjects: Vec<&str> = inbox["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|m| m["subject"].as_str().expect("subject"))
        .collect();
    assert_eq!(subjects, ["Note 5", "Note 1"]);
    assert_eq!(
        get(&server, "/v1/email/rules", &key).await.1["kept_out_count"],
        4
    );
    let (_, events) = get(&server, "/v1/events", &key).await;
    let received = events["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|event| event["type"] == "email.received")
        .count();
    assert_eq!(received, 2, "no event for kept-out mail: {events}");

    let (status, _) = put_rules(&server, &key, &json!({})).await;
    assert_eq!(status, 200);
    let (_, answer) = webhook_signed(
        &server,
        SECRET,
        "msg_rule_after",
        now(),
        "message/rfc822",
        &mail(&address, "eve@elsewhere.example", None, 6),
    )
    .await;
    assert_eq!(
        answer["stored"].as_array().map(Vec::len),
        Some(1),
        "no rules: {answer}"
    );
}
