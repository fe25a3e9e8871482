//! Threads of an inbox, black-box (mail-plus.md): a page of conversations newest first with
//! their subject, participants, count and preview, and one conversation read whole.

use serde_json::{json, Value};
use test_support::TestDatabase;

use crate::email::{email_agent, email_server, get, now, post, raw_mail, webhook_signed, SECRET};
use crate::support::harness::Server;

async fn deliver(server: &Server, delivery: &str, mail: &[u8]) -> String {
    let (status, stored) =
        webhook_signed(server, SECRET, delivery, now(), "message/rfc822", mail).await;
    assert_eq!(status, 200, "{stored}");
    stored["stored"][0].as_str().expect("stored").to_owned()
}

fn subjects(messages: &Value) -> Vec<&str> {
    messages
        .as_array()
        .expect("a list")
        .iter()
        .map(|m| m["subject"].as_str().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn threads_list_newest_first_and_read_whole_in_order() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "acme").await;

    let first = deliver(
        &server,
        "msg_t1",
        &raw_mail(
            "Alice@Example.org",
            &address,
            "Plans",
            "<plans-1@example.org>",
            "Lunch?",
        ),
    )
    .await;
    deliver(
        &server,
        "msg_t2",
        &raw_mail(
            "carol@example.net",
            &address,
            "Other",
            "<other-1@example.net>",
            "Hello",
        ),
    )
    .await;
    let reply = post(
        &server,
        &format!("/v1/email/reply/{first}"),
        &key,
        &json!({"body_text": "Yes, at noon."}),
        None,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let reply_id = reply.body["data"]["internet_message_id"]
        .as_str()
        .expect("the reply's Message-ID")
        .to_owned();
    let answer = format!(
        "From: alice@example.org\r\nTo: {address}\r\nSubject: Re: Plans\r\nMessage-ID: <plans-3@example.org>\r\n\
         In-Reply-To: {reply_id}\r\nReferences: <plans-1@example.org> {reply_id}\r\n\r\nSee you there.\r\n"
    );
    deliver(&server, "msg_t3", answer.as_bytes()).await;

    let (status, page) = get(&server, "/v1/email/threads", &key).await;
    assert_eq!(status, 200, "{page}");
    let items = page["items"].as_array().expect("items");
    assert_eq!(items.len(), 2, "{page}");
    let plans = &items[0];
    assert_eq!(plans["thread_id"], first);
    assert_eq!(plans["subject"], "Plans", "the first message's subject");
    assert_eq!(plans["message_count"], 3);
    assert_eq!(plans["last_message_preview"], "See you there.");
    assert_eq!(
        plans["participants"],
        json!(["alice@example.org", address.to_lowercase()])
    );
    assert_eq!(items[1]["subject"], "Other");
    assert_eq!(items[1]["message_count"], 1);
    assert_eq!(page["next_cursor"], Value::Null);

    let (status, one) = get(&server, "/v1/email/threads?limit=1", &key).await;
    assert_eq!(status, 200);
    assert_eq!(one["items"][0]["thread_id"], first);
    let cursor = one["next_cursor"].as_str().expect("a next page");
    let (_, next) = get(
        &server,
        &format!("/v1/email/threads?limit=1&cursor={cursor}"),
        &key,
    )
    .await;
    assert_eq!(next["items"][0]["subject"], "Other");
    assert_eq!(next["next_cursor"], Value::Null);
    assert_eq!(
        get(&server, "/v1/email/threads?cursor=nope", &key).await.0,
        400
    );
    assert_eq!(get(&server, "/v1/email/threads?limit=0", &key).await.0, 422);

    let (status, thread) = get(&server, &format!("/v1/email/threads/{first}"), &key).await;
    assert_eq!(status, 200, "{thread}");
    assert_eq!(thread["thread_id"], first);
    assert_eq!(
        (&thread["subject"], &thread["participants"]),
        (&plans["subject"], &plans["participants"]),
        "a thread read is described as the list describes it"
    );
    assert_eq!(
        subjects(&thread["messages"]),
        ["Plans", "Re: Plans", "Re: Plans"],
        "oldest first"
    );
    let texts: Vec<&str> = thread["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["text"].as_str().unwrap_or_default().trim_end())
        .collect();
    assert_eq!(texts, ["Lunch?", "Yes, at noon.", "See you there."]);
    assert_eq!(thread["earlier_messages_omitted"], 0);

    let (other_key, _) = email_agent(&database, "acme").await;
    assert_eq!(
        get(&server, &format!("/v1/email/threads/{first}"), &other_key)
            .await
            .0,
        404
    );
    assert_eq!(
        get(&server, "/v1/email/threads/not-an-id", &key).await.0,
        404
    );
    let (_, others) = get(&server, "/v1/email/threads", &other_key).await;
    assert_eq!(others["items"], json!([]));
}

#[tokio::test]
async fn a_long_thread_reads_its_newest_hundred_and_counts_the_rest() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "acme").await;
    let first = deliver(
        &server,
        "msg_long_0",
        &raw_mail(
            "alice@example.org",
            &address,
            "Long",
            "<long-0@example.org>",
            "0",
        ),
    )
    .await;
    for n in 1..=104 {
        let mail = format!(
            "From: alice@example.org\r\nTo: {address}\r\nSubject: Re: Long\r\nMessage-ID: <long-{n}@example.org>\r\n\
             In-Reply-To: <long-0@example.org>\r\n\r\n{n}\r\n"
        );
        deliver(&server, &format!("msg_long_{n}"), mail.as_bytes()).await;
    }
    let (_, thread) = get(&server, &format!("/v1/email/threads/{first}"), &key).await;
    let messages = thread["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 100);
    assert_eq!(thread["earlier_messages_omitted"], 5);
    assert_eq!(messages[0]["text"].as_str().map(str::trim_end), Some("5"));
    assert_eq!(
        messages[99]["text"].as_str().map(str::trim_end),
        Some("104")
    );
    assert_eq!(
        thread["subject"], "Long",
        "the first message's subject, though that message is omitted"
    );
    assert_eq!(
        thread["participants"],
        json!(["alice@example.org", address.to_lowercase()])
    );
    let (_, page) = get(&server, "/v1/email/threads", &key).await;
    assert_eq!(page["items"][0]["message_count"], 105);
}
