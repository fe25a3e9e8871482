//! Attachments on the way out and forwards, black-box (mail-plus.md): a send, a reply and a
//! forward carry attachments to the provider (the Resend stand-in, on the wire) and keep them
//! like inbound ones; a forward quotes its original and carries its stored attachments. Each
//! test runs with each store of bytes.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde_json::{json, Value};
use test_support::TestDatabase;

use crate::attachments::{deliver, download, mail_with, with_each_store, BytesIn, Part};
use crate::email::{email_agent, message_reaching, post, Answer};
use crate::support::fake_mail_api::FakeMailApi;
use crate::support::harness::Server;

/// A server handing mail to the Resend stand-in, keeping bytes in `bytes_in`.
async fn server_to(api: &FakeMailApi, database: &TestDatabase, bytes_in: &BytesIn) -> Server {
    bytes_in
        .server(
            database,
            &[
                ("EMAIL_PROVIDER", "resend"),
                ("RESEND_API_KEY", "re_test_key"),
                ("RESEND_BASE_URL", api.url.as_str()),
            ],
        )
        .await
}

fn attachment(filename: &str, content_type: Option<&str>, bytes: &[u8]) -> Value {
    let mut given = json!({"filename": filename, "content_base64": BASE64.encode(bytes)});
    if let Some(content_type) = content_type {
        given["content_type"] = json!(content_type);
    }
    given
}

/// Bytes of every value, over several of the pieces bytes are kept in.
fn binary(len: usize) -> Vec<u8> {
    (0..len).map(|n| (n * 31 % 256) as u8).collect()
}

/// The message is handed to the stand-in with exactly these attachments: name, type, bytes.
async fn handed_with(
    server: &Server,
    api: &FakeMailApi,
    key: &str,
    answer: &Answer,
    expected: &[(&str, &str, &[u8])],
) {
    assert_eq!(answer.status, 200, "{}", answer.body);
    let id = answer.body["data"]["id"].as_str().expect("an id");
    message_reaching(server, key, id, "sent").await;
    let body = api.body_of(id).expect("handed to the provider");
    let handed: Vec<(String, String, Vec<u8>)> = body["attachments"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|item| {
                    (
                        item["filename"].as_str().expect("a name").to_owned(),
                        item["content_type"].as_str().expect("a type").to_owned(),
                        BASE64
                            .decode(item["content"].as_str().expect("content"))
                            .expect("base64"),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let expected: Vec<(String, String, Vec<u8>)> = expected
        .iter()
        .map(|(name, kind, bytes)| ((*name).to_owned(), (*kind).to_owned(), bytes.to_vec()))
        .collect();
    assert_eq!(handed, expected);
}

/// Each attachment of the message as the API lists it downloads as `expected`.
async fn downloads_as(server: &Server, key: &str, message: &Value, expected: &[&[u8]]) {
    let id = message["id"].as_str().expect("an id");
    let listed = message["attachments"].as_array().expect("attachments");
    assert_eq!(listed.len(), expected.len(), "{message}");
    for (index, (listed, bytes)) in listed.iter().zip(expected).enumerate() {
        assert_eq!(listed["id"], format!("att_{}", index + 1));
        assert_eq!(listed["stored"], true);
        assert_eq!(listed["size"], bytes.len());
        let path = format!("/v1/email/messages/{id}/attachments/att_{}", index + 1);
        let downloaded = download(server, key, &path, None).await;
        assert_eq!(downloaded.status, 200);
        assert!(downloaded.bytes == *bytes, "{path} downloads as sent");
    }
}

with_each_store! {
    attachments_go_out_with_a_send_and_a_reply_and_are_kept_like_inbound_ones =>
        attachments_go_out_with_sends_and_replies,
    a_forward_quotes_its_original_and_carries_its_stored_attachments => forwards,
    wrong_attachments_and_forwards_are_refused_and_store_nothing => refusals,
}

async fn attachments_go_out_with_sends_and_replies(bytes_in: &BytesIn) {
    let database = TestDatabase::new().await;
    let api = FakeMailApi::start().await;
    let server = server_to(&api, &database, bytes_in).await;
    let (key, address) = email_agent(&database, "acme").await;
    let report = binary(700_000);
    let body = json!({
        "to": ["ada@example.org"],
        "subject": "Your report",
        "body_text": "Attached.",
        "attachments": [
            attachment("Bericht für März.bin", None, &report),
            attachment("notes.txt", Some("text/plain; charset=utf-8"), b"first line\n"),
        ],
    });
    let sent = post(&server, "/v1/email/send", &key, &body, Some("report-1")).await;
    handed_with(
        &server,
        &api,
        &key,
        &sent,
        &[
            ("Bericht für März.bin", "application/octet-stream", &report),
            ("notes.txt", "text/plain; charset=utf-8", b"first line\n"),
        ],
    )
    .await;
    downloads_as(
        &server,
        &key,
        &sent.body["data"],
        &[&report, b"first line\n"],
    )
    .await;

    let again = post(&server, "/v1/email/send", &key, &body, Some("report-1")).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.body["data"]["id"], sent.body["data"]["id"]);
    let mut other_bytes = body.clone();
    other_bytes["attachments"][1] = attachment("notes.txt", None, b"second line\n");
    let conflict = post(
        &server,
        "/v1/email/send",
        &key,
        &other_bytes,
        Some("report-1"),
    )
    .await;
    assert_eq!(
        conflict.status, 409,
        "other bytes under the key: {}",
        conflict.body
    );

    let question = mail_with(
        &address,
        "<question-1@example.org>",
        &[Part {
            disposition_name: "filename=\"form.pdf\"",
            content_type: "application/pdf",
            bytes: b"%PDF-1.7 form",
        }],
    );
    let source = deliver(&server, "msg_question", &question).await;
    let reply = post(
        &server,
        &format!("/v1/email/reply/{source}"),
        &key,
        &json!({
            "body_text": "Filled in.",
            "attachments": [attachment("form-filled.pdf", Some("application/pdf"), b"%PDF-1.7 filled")],
        }),
        None,
    )
    .await;
    handed_with(
        &server,
        &api,
        &key,
        &reply,
        &[("form-filled.pdf", "application/pdf", b"%PDF-1.7 filled")],
    )
    .await;
    assert_eq!(reply.body["data"]["subject"], "Re: Your files");
    downloads_as(&server, &key, &reply.body["data"], &[b"%PDF-1.7 filled"]).await;
}

async fn forwards(bytes_in: &BytesIn) {
    let database = TestDatabase::new().await;
    let api = FakeMailApi::start().await;
    let server = server_to(&api, &database, bytes_in).await;
    let (key, address) = email_agent(&database, "acme").await;
    let invoice = binary(300_000);
    let mail = mail_with(
        &address,
        "<invoice-7@example.org>",
        &[Part {
            disposition_name: "filename=\"invoice-7.pdf\"",
            content_type: "application/pdf",
            bytes: &invoice,
        }],
    );
    let source = deliver(&server, "msg_invoice", &mail).await;
    let forward = json!({
        "to": ["accounts@example.net"],
        "cc": ["boss@example.net"],
        "body_text": "Please pay this one.",
        "attachments": [attachment("approval.txt", Some("text/plain"), b"approved")],
    });
    let forwarded = post(
        &server,
        &format!("/v1/email/forward/{source}"),
        &key,
        &forward,
        Some("forward-1"),
    )
    .await;
    handed_with(
        &server,
        &api,
        &key,
        &forwarded,
        &[
            ("invoice-7.pdf", "application/pdf", &invoice),
            ("approval.txt", "text/plain", b"approved"),
        ],
    )
    .await;
    let data = &forwarded.body["data"];
    assert_eq!(data["direction"], "outbound");
    assert_eq!(data["subject"], "Fwd: Your files");
    assert_eq!(data["to"], json!(["accounts@example.net"]));
    assert_eq!(data["cc"], json!(["boss@example.net"]));
    assert_eq!(
        data["thread_id"], data["id"],
        "a forward starts its own thread"
    );
    let text = data["text"].as_str().expect("a text");
    assert!(
        text.starts_with("Please pay this one.\n\n---------- Forwarded message ---------\n"),
        "{text}"
    );
    assert!(text.contains("From: billing@example.org\n"), "{text}");
    assert!(text.contains("Subject: Your files\n"), "{text}");
    assert!(text.trim_end().ends_with("Attached."), "{text}");
    downloads_as(&server, &key, data, &[&invoice, b"approved"]).await;

    let replayed = post(
        &server,
        &format!("/v1/email/forward/{source}"),
        &key,
        &forward,
        Some("forward-1"),
    )
    .await;
    assert_eq!(
        (replayed.status, &replayed.body["data"]["id"]),
        (200, &data["id"])
    );
    let mut another = forward.clone();
    another["to"] = json!(["someone-else@example.net"]);
    let conflict = post(
        &server,
        &format!("/v1/email/forward/{source}"),
        &key,
        &another,
        Some("forward-1"),
    )
    .await;
    assert_eq!(conflict.status, 409, "{}", conflict.body);

    // A forward of the forward keeps one prefix and carries both attachments on.
    let onward = post(
        &server,
        &format!("/v1/email/forward/{}", data["id"].as_str().expect("id")),
        &key,
        &json!({"to": ["archive@example.net"]}),
        None,
    )
    .await;
    handed_with(
        &server,
        &api,
        &key,
        &onward,
        &[
            ("invoice-7.pdf", "application/pdf", &invoice),
            ("approval.txt", "text/plain", b"approved"),
        ],
    )
    .await;
    assert_eq!(onward.body["data"]["subject"], "Fwd: Your files");
    assert!(onward.body["data"]["text"]
        .as_str()
        .expect("a text")
        .starts_with("---------- Forwarded message"));

    let (stranger, _) = email_agent(&database, "other-sponsor").await;
    let theirs = post(
        &server,
        &format!("/v1/email/forward/{source}"),
        &stranger,
        &json!({"to": ["thief@example.net"]}),
        None,
    )
    .await;
    assert_eq!(theirs.status, 404, "{}", theirs.body);
}

async fn refusals(bytes_in: &BytesIn) {
    let database = TestDatabase::new().await;
    let api = FakeMailApi::start().await;
    let server = server_to(&api, &database, bytes_in).await;
    let (key, address) = email_agent(&database, "acme").await;
    let with = |attachments: Value| json!({"to": ["ada@example.org"], "subject": "s", "body_text": "t", "attachments": attachments});
    let small = attachment("a.txt", None, b"a");
    let half = attachment("half.bin", None, &vec![0u8; 5 * 1024 * 1024 + 1]);
    let cases = [
        (
            with(json!(vec![small.clone(); 11])),
            json!(["body", "attachments"]),
        ),
        (
            with(json!([half.clone(), half])),
            json!(["body", "attachments"]),
        ),
        (
            with(json!([{"filename": "a.txt", "content_base64": "not base64!"}])),
            json!(["body", "attachments", 0, "content_base64"]),
        ),
        (
            with(json!([small.clone(), {"filename": "x\u{202e}fdp.exe", "content_base64": ""}])),
            json!(["body", "attachments", 1, "filename"]),
        ),
        (
            with(json!([{"filename": "a", "content_type": "not a type", "content_base64": ""}])),
            json!(["body", "attachments", 0, "content_type"]),
        ),
    ];
    for (body, loc) in cases {
        let refused = post(&server, "/v1/email/send", &key, &body, None).await;
        assert_eq!(refused.status, 422, "{}", refused.body);
        assert_eq!(refused.body["detail"][0]["loc"], loc, "{}", refused.body);
    }
    let source = deliver(
        &server,
        "msg_source",
        &mail_with(&address, "<source@example.org>", &[]),
    )
    .await;
    for (path, body) in [
        (
            format!("/v1/email/reply/{source}"),
            json!({"body_text": "t", "attachments": vec![small.clone(); 11]}),
        ),
        (
            format!("/v1/email/forward/{source}"),
            json!({"to": [], "attachments": [small]}),
        ),
        (
            format!("/v1/email/forward/{source}"),
            json!({"to": ["not an address"]}),
        ),
    ] {
        let refused = post(&server, &path, &key, &body, None).await;
        assert_eq!(refused.status, 422, "{path}: {}", refused.body);
    }
    // A forward carries the original's stored attachments: with those given, no more than one
    // message may, judged before the original's bytes are read.
    let large = binary(6 * 1024 * 1024);
    let carrying = deliver(
        &server,
        "msg_large",
        &mail_with(
            &address,
            "<large@example.org>",
            &[Part {
                disposition_name: "filename=\"large.bin\"",
                content_type: "application/octet-stream",
                bytes: &large,
            }],
        ),
    )
    .await;
    let kept = bytes_in.object_keys().await;
    let four_mib = attachment("four.bin", None, &vec![0u8; 4 * 1024 * 1024]);
    let five_mib = attachment("five.bin", None, &vec![0u8; 5 * 1024 * 1024]);
    let fits = post(
        &server,
        &format!("/v1/email/forward/{carrying}"),
        &key,
        &json!({"to": ["ada@example.org"], "attachments": [four_mib]}),
        None,
    )
    .await;
    assert_eq!(fits.status, 200, "{}", fits.body);
    for attachments in [json!([five_mib]), json!(vec![small.clone(); 10])] {
        let refused = post(
            &server,
            &format!("/v1/email/forward/{carrying}"),
            &key,
            &json!({"to": ["ada@example.org"], "attachments": attachments}),
            None,
        )
        .await;
        assert_eq!(refused.status, 422, "{}", refused.body);
        let error = &refused.body["detail"][0];
        assert_eq!(error["loc"], json!(["body", "attachments"]), "{error}");
        assert_eq!(error["ctx"]["forwarded_attachments"], 1, "{error}");
        assert_eq!(error["ctx"]["forwarded_bytes"], large.len(), "{error}");
    }
    for unknown in ["not-an-id", "0190a5a0-0000-7000-8000-000000000000"] {
        let refused = post(
            &server,
            &format!("/v1/email/forward/{unknown}"),
            &key,
            &json!({"to": ["ada@example.org"]}),
            None,
        )
        .await;
        assert_eq!(refused.status, 404, "{}", refused.body);
    }
    let (status, inbox) =
        crate::email::get(&server, "/v1/email/inbox?direction=outbound", &key).await;
    assert_eq!(status, 200);
    let stored: Vec<&Value> = inbox["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|message| &message["id"])
        .collect();
    assert_eq!(
        stored,
        [&fits.body["data"]["id"]],
        "nothing refused was stored"
    );
    let put = bytes_in.object_keys().await;
    let added = put.iter().filter(|key| !kept.contains(key)).count();
    let expected = if kept.is_empty() { 0 } else { 2 };
    assert_eq!(added, expected, "only the one forward's two attachments");
}
