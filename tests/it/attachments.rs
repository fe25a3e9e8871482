//! Attachments of inbound mail, black-box (mail-plus.md): kept with their message, listed with
//! `id` and `stored`, downloaded with the headers of the spec, and hostile ones (names with path
//! separators, NUL, reordering marks and 10,000 characters; garbage types; 10,000 tiny parts; a
//! zip of zeros) stored as given and served safely. Every test runs with each store of bytes:
//! the database, and an S3-compatible server (moto).

use serde_json::{json, Value};
use test_support::s3::{S3_ACCESS_KEY_ID, S3_REGION, S3_SECRET_ACCESS_KEY};
use test_support::{S3Server, TestDatabase};

use crate::email::{email_agent, email_server, get, now, post, webhook_signed, SECRET};
use crate::support::harness::Server;

/// Where the server under test keeps attachment bytes: the tests that keep, serve or sweep bytes
/// run with each; search, threads and sender rules, which never touch them, on the database alone.
pub(crate) enum BytesIn {
    Database,
    S3(S3Server),
}

/// The key prefix the bytes go under in S3.
const PREFIX: &str = "attachments";

impl BytesIn {
    /// Bytes kept in a fresh bucket of this process's S3-compatible server.
    pub(crate) fn in_s3() -> BytesIn {
        BytesIn::S3(S3Server::start())
    }

    /// The settings that keep bytes here, with `extra`. Leftover bytes are swept once their
    /// record is `sweep_after_secs` old: long enough that no ingest under test is swept.
    fn settings(&self, sweep_after_secs: &str, extra: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut settings: Vec<(String, String)> = extra
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        if let BytesIn::S3(s3) = self {
            settings.extend(
                [
                    ("EMAIL_ATTACHMENT_STORE", s3.location(PREFIX)),
                    ("AWS_ENDPOINT_URL", s3.endpoint()),
                    ("AWS_ACCESS_KEY_ID", S3_ACCESS_KEY_ID.to_owned()),
                    ("AWS_SECRET_ACCESS_KEY", S3_SECRET_ACCESS_KEY.to_owned()),
                    ("AWS_REGION", S3_REGION.to_owned()),
                    (
                        "EMAIL_ATTACHMENT_SWEEP_AFTER_SECS",
                        sweep_after_secs.to_owned(),
                    ),
                    ("EMAIL_ATTACHMENT_SWEEP_INTERVAL_SECS", "1".to_owned()),
                ]
                .map(|(name, value)| (name.to_owned(), value)),
            );
        }
        settings
    }

    /// An email server keeping bytes here, with `extra` settings.
    pub(crate) async fn server(&self, database: &TestDatabase, extra: &[(&str, &str)]) -> Server {
        self.server_sweeping_after(database, "600", extra).await
    }

    async fn server_sweeping_after(
        &self,
        database: &TestDatabase,
        sweep_after_secs: &str,
        extra: &[(&str, &str)],
    ) -> Server {
        let settings = self.settings(sweep_after_secs, extra);
        let borrowed: Vec<(&str, &str)> = settings
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        email_server(database, &borrowed).await
    }

    /// The keys of the objects in the store (none for the database), listed over plain HTTP:
    /// moto takes unsigned requests.
    pub(crate) async fn object_keys(&self) -> Vec<String> {
        let BytesIn::S3(s3) = self else {
            return Vec::new();
        };
        let listing = reqwest::get(format!(
            "{}/{}?list-type=2&prefix={PREFIX}/",
            s3.endpoint(),
            s3.bucket()
        ))
        .await
        .expect("a listing")
        .text()
        .await
        .expect("its body");
        assert!(
            !listing.contains("<IsTruncated>true"),
            "one page lists them all"
        );
        listing
            .split("<Key>")
            .skip(1)
            .filter_map(|rest| rest.split_once("</Key>"))
            .map(|(key, _)| key.to_owned())
            .collect()
    }
}

/// Tests that run with each store of bytes: `test => scenario`, the scenario an
/// `async fn(&BytesIn)`. Each store is a test of its own, `test::in_the_database` and
/// `test::in_s3`, so the two run at the same time.
macro_rules! with_each_store {
    ($($test:ident => $scenario:ident),* $(,)?) => {
        $(
            mod $test {
                #[tokio::test]
                async fn in_the_database() {
                    super::$scenario(&crate::attachments::BytesIn::Database).await;
                }

                #[tokio::test]
                async fn in_s3() {
                    super::$scenario(&crate::attachments::BytesIn::in_s3()).await;
                }
            }
        )*
    };
}
pub(crate) use with_each_store;

/// One attachment of a test mail: its MIME headers' name and type as written, and its bytes.
pub(crate) struct Part<'a> {
    pub(crate) disposition_name: &'a str,
    pub(crate) content_type: &'a str,
    pub(crate) bytes: &'a [u8],
}

/// A mail to `to` with a text body and these attachments, base64 encoded.
pub(crate) fn mail_with(to: &str, message_id: &str, parts: &[Part<'_>]) -> Vec<u8> {
    use base64::Engine as _;
    let mut mail = format!(
        "From: billing@example.org\r\nTo: {to}\r\nSubject: Your files\r\nMessage-ID: {message_id}\r\n\
         MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"part\"\r\n\r\n\
         --part\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nAttached.\r\n"
    )
    .into_bytes();
    for part in parts {
        let encoded = base64::engine::general_purpose::STANDARD.encode(part.bytes);
        mail.extend_from_slice(
            format!(
                "--part\r\nContent-Type: {}\r\nContent-Disposition: attachment; {}\r\n\
                 Content-Transfer-Encoding: base64\r\n\r\n",
                part.content_type, part.disposition_name
            )
            .as_bytes(),
        );
        for line in encoded.as_bytes().chunks(76) {
            mail.extend_from_slice(line);
            mail.extend_from_slice(b"\r\n");
        }
    }
    mail.extend_from_slice(b"--part--\r\n");
    mail
}

/// Delivers `mail` through the signed webhook; the stored message's id.
pub(crate) async fn deliver(server: &Server, delivery: &str, mail: &[u8]) -> String {
    let (status, stored) =
        webhook_signed(server, SECRET, delivery, now(), "message/rfc822", mail).await;
    assert_eq!(status, 200, "{stored}");
    stored["stored"][0]
        .as_str()
        .expect("one message stored")
        .to_owned()
}

pub(crate) struct Download {
    pub(crate) status: u16,
    pub(crate) headers: reqwest::header::HeaderMap,
    pub(crate) bytes: Vec<u8>,
}

pub(crate) async fn download(
    server: &Server,
    key: &str,
    path: &str,
    etag: Option<&str>,
) -> Download {
    let mut request = server.client.get(server.url(path)).bearer_auth(key);
    if let Some(etag) = etag {
        request = request.header("If-None-Match", etag);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response.bytes().await.expect("body").to_vec();
    Download {
        status,
        headers,
        bytes,
    }
}

fn header<'a>(download: &'a Download, name: &str) -> &'a str {
    download
        .headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_else(|| panic!("no {name} header"))
}

fn attachment_path(message: &str, attachment: &Value) -> String {
    format!(
        "/v1/email/messages/{message}/attachments/{}",
        attachment["id"].as_str().expect("an id")
    )
}

with_each_store! {
    attachments_download_as_sent_with_safe_names_and_types => attachments_download_as_sent_with_safe_names_and_types_with,
    only_the_inboxs_agent_downloads_and_unknown_or_unstored_ones_say_so => only_the_inboxs_agent_downloads_and_unknown_or_unstored_ones_say_so_with,
    thousands_of_tiny_attachments_are_kept_up_to_the_bound_or_the_mail_flattened => thousands_of_tiny_attachments_are_kept_up_to_the_bound_or_the_mail_flattened_with,
}

async fn attachments_download_as_sent_with_safe_names_and_types_with(bytes_in: &BytesIn) {
    let database = TestDatabase::new().await;
    let server = bytes_in.server(&database, &[]).await;
    let (key, address) = email_agent(&database, "acme").await;
    let pdf: Vec<u8> = (0..600_000u32).map(|n| (n * 7 % 256) as u8).collect();
    let long_name = format!("{}.txt", "n".repeat(10_000));
    let zeros = zip_of_zeros();
    let parts = [
        Part {
            disposition_name: "filename=\"../../etc/invoice.pdf\"",
            content_type: "application/pdf",
            bytes: &pdf,
        },
        Part {
            disposition_name: "filename*=UTF-8''r%C3%A9sum%C3%A9%E2%80%AEfdp.exe",
            content_type: "text/plain; charset=utf-8",
            bytes: "Größe\n".as_bytes(),
        },
        Part {
            disposition_name: "filename=\"C:\\\\temp\\\\a%00b\u{0}.txt\"",
            content_type: "not a type at all",
            bytes: b"<script>alert(1)</script>",
        },
        Part {
            disposition_name: &format!("filename=\"{long_name}\""),
            content_type: "text/html",
            bytes: b"<html><script>alert(2)</script></html>",
        },
        Part {
            disposition_name: "filename=\"zeros.zip\"",
            content_type: "application/zip",
            bytes: &zeros,
        },
    ];
    let id = deliver(
        &server,
        "msg_files",
        &mail_with(&address, "<files@example.org>", &parts),
    )
    .await;
    let (status, message) = get(&server, &format!("/v1/email/messages/{id}"), &key).await;
    assert_eq!(status, 200, "{message}");
    let listed = message["attachments"].as_array().expect("attachments");
    let ids: Vec<&str> = listed
        .iter()
        .map(|a| a["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, ["att_1", "att_2", "att_3", "att_4", "att_5"]);
    assert!(listed.iter().all(|a| a["stored"] == true), "{listed:?}");

    let mut served = Vec::new();
    for (attachment, part) in listed.iter().zip(&parts) {
        let got = download(&server, &key, &attachment_path(&id, attachment), None).await;
        assert_eq!(got.status, 200);
        assert_eq!(got.bytes, part.bytes, "{attachment}");
        assert_eq!(header(&got, "content-length"), part.bytes.len().to_string());
        assert_eq!(header(&got, "x-content-type-options"), "nosniff");
        assert_eq!(attachment["size"], part.bytes.len());
        served.push((
            header(&got, "content-type").to_owned(),
            header(&got, "content-disposition").to_owned(),
            header(&got, "etag").to_owned(),
        ));
    }
    assert_eq!(served[0].0, "application/pdf");
    assert_eq!(served[0].1, "attachment; filename*=UTF-8''invoice.pdf");
    assert_eq!(served[1].0, "text/plain", "the type as the parser keeps it");
    assert_eq!(
        served[1].1, "attachment; filename*=UTF-8''r%C3%A9sum%C3%A9fdp.exe",
        "the right-to-left override is gone"
    );
    assert_eq!(
        served[2].0, "application/octet-stream",
        "garbage is served as octets"
    );
    assert!(
        !served[2].1.contains(['/', '\\']) && !served[2].1.contains("%00"),
        "{}",
        served[2].1
    );
    assert!(served[3].1.len() < 300 + 40, "{}", served[3].1);
    assert_eq!(served[4].0, "application/zip");
    let etags: std::collections::HashSet<&str> = served.iter().map(|s| s.2.as_str()).collect();
    assert_eq!(etags.len(), 5, "each attachment's own ETag: {served:?}");

    let (_, events) = get(&server, "/v1/events", &key).await;
    let received = events["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|event| event["type"] == "email.received")
        .expect("the mail's event");
    assert_eq!(
        received["data"]["attachment_count"], 5,
        "the event counts them; the message names them"
    );

    let again = download(
        &server,
        &key,
        &attachment_path(&id, &listed[0]),
        Some(&served[0].2),
    )
    .await;
    assert_eq!(again.status, 304);
    assert!(again.bytes.is_empty());
}

/// A zip archive of one file of 1 MiB of zeros, stored (no compression needed: the point is
/// that the service never unpacks what it is sent, and keeps it byte for byte).
fn zip_of_zeros() -> Vec<u8> {
    let mut archive = b"PK\x03\x04".to_vec();
    archive.extend(std::iter::repeat_n(0u8, 1024 * 1024));
    archive
}

async fn only_the_inboxs_agent_downloads_and_unknown_or_unstored_ones_say_so_with(
    bytes_in: &BytesIn,
) {
    let database = TestDatabase::new().await;
    let server = bytes_in
        .server(&database, &[("EMAIL_ATTACHMENT_MAX_BYTES", "1000")])
        .await;
    let (key, address) = email_agent(&database, "acme").await;
    let (other_key, _) = email_agent(&database, "acme").await;
    let small = vec![1u8; 1000];
    let large = vec![2u8; 1001];
    let parts = [
        Part {
            disposition_name: "filename=\"small.bin\"",
            content_type: "application/octet-stream",
            bytes: &small,
        },
        Part {
            disposition_name: "filename=\"large.bin\"",
            content_type: "application/octet-stream",
            bytes: &large,
        },
    ];
    let id = deliver(
        &server,
        "msg_bound",
        &mail_with(&address, "<bound@example.org>", &parts),
    )
    .await;
    let (_, message) = get(&server, &format!("/v1/email/messages/{id}"), &key).await;
    let listed = message["attachments"].as_array().expect("attachments");
    assert_eq!(
        listed
            .iter()
            .map(|a| (a["stored"].as_bool(), a["size"].as_u64()))
            .collect::<Vec<_>>(),
        [(Some(true), Some(1000)), (Some(false), Some(1001))]
    );
    let stored = attachment_path(&id, &listed[0]);
    assert_eq!(download(&server, &key, &stored, None).await.bytes, small);

    let gone = download(&server, &key, &attachment_path(&id, &listed[1]), None).await;
    assert_eq!(gone.status, 410);
    let detail: Value = serde_json::from_slice(&gone.bytes).expect("json");
    assert!(
        detail["detail"]
            .as_str()
            .expect("detail")
            .contains("not stored"),
        "{detail}"
    );

    for (who, path) in [
        (&other_key, stored.clone()),
        (&key, format!("/v1/email/messages/{id}/attachments/att_3")),
        (&key, format!("/v1/email/messages/{id}/attachments/1")),
        (
            &key,
            format!("/v1/email/messages/{id}/attachments/..%2F..%2Fetc"),
        ),
        (
            &key,
            "/v1/email/messages/not-a-message/attachments/att_1".to_owned(),
        ),
    ] {
        let refused = download(&server, who, &path, None).await;
        assert_eq!(refused.status, 404, "{path}");
        let body: Value = serde_json::from_slice(&refused.bytes).expect("json");
        assert_eq!(body["detail"], "Not Found");
    }
    let (no_inbox_key, _) = crate::support::harness::create_agent(&database, &[]).await;
    assert_eq!(
        download(&server, &no_inbox_key, &stored, None).await.status,
        400
    );
    assert_eq!(
        download(&server, "not-a-key", &stored, None).await.status,
        401
    );
}

/// A mail of `count` attachments of four bytes each, the n-th holding n.
fn tiny_parts_mail(to: &str, message_id: &str, count: u32) -> Vec<u8> {
    let bytes: Vec<[u8; 4]> = (0..count).map(u32::to_be_bytes).collect();
    let names: Vec<String> = (0..count)
        .map(|n| format!("filename=\"p{n}.bin\""))
        .collect();
    let parts: Vec<Part<'_>> = bytes
        .iter()
        .zip(&names)
        .map(|(bytes, name)| Part {
            disposition_name: name,
            content_type: "application/octet-stream",
            bytes,
        })
        .collect();
    mail_with(to, message_id, &parts)
}

async fn thousands_of_tiny_attachments_are_kept_up_to_the_bound_or_the_mail_flattened_with(
    bytes_in: &BytesIn,
) {
    let database = TestDatabase::new().await;
    let server = bytes_in.server(&database, &[]).await;
    let (key, address) = email_agent(&database, "acme").await;

    let id = deliver(
        &server,
        "msg_many",
        &tiny_parts_mail(&address, "<many@example.org>", 4_000),
    )
    .await;
    let (_, message) = get(&server, &format!("/v1/email/messages/{id}"), &key).await;
    let listed = message["attachments"].as_array().expect("attachments");
    assert_eq!(listed.len(), 50, "the first fifty are kept");
    let last = download(&server, &key, &attachment_path(&id, &listed[49]), None).await;
    assert_eq!(last.status, 200);
    assert_eq!(last.bytes, 49u32.to_be_bytes());

    // Past the parts the parser is let build, the mail is kept flattened: its text as it came,
    // no attachment listed, nothing unpacked.
    let id = deliver(
        &server,
        "msg_tiny",
        &tiny_parts_mail(&address, "<tiny@example.org>", 10_000),
    )
    .await;
    let (status, message) = get(&server, &format!("/v1/email/messages/{id}"), &key).await;
    assert_eq!(status, 200, "{message}");
    assert_eq!(message["attachments"], serde_json::json!([]));
    assert!(message["text"].as_str().expect("text").contains("p0.bin"));
    let (status, _) = get(&server, "/v1/email/inbox", &key).await;
    assert_eq!(status, 200);
}

/// What `psql` answers to one query on the test's database, one line per row.
fn query(database: &TestDatabase, sql: &str) -> String {
    let output = std::process::Command::new("psql")
        .args([database.url(), "-qtAc", sql])
        .output()
        .expect("psql runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// What `psql` answers to one counting query on the test's database.
fn count(database: &TestDatabase, sql: &str) -> u64 {
    query(database, sql).parse().expect("a count")
}

/// Once the sweep has run: no record of bytes put ahead is left, and the object store holds
/// exactly the bytes of stored messages' attachments (the database holds none).
async fn only_stored_messages_bytes_are_left(database: &TestDatabase, bytes_in: &BytesIn) {
    let BytesIn::S3(_) = bytes_in else {
        return;
    };
    let _sweeping = bytes_in.server_sweeping_after(database, "1", &[]).await;
    let mut owned: Vec<String> = query(
        database,
        "SELECT m.id || '/' || (a.position) FROM email_messages AS m, \
         jsonb_array_elements(m.attachments) WITH ORDINALITY AS a(item, position) \
         WHERE (a.item->>'stored')::boolean",
    )
    .lines()
    .map(|owned| format!("{PREFIX}/{owned}"))
    .collect();
    owned.sort();
    let started = std::time::Instant::now();
    loop {
        let mut keys = bytes_in.object_keys().await;
        keys.sort();
        let records = count(database, "SELECT count(*) FROM email_attachment_uploads");
        if keys == owned && records == 0 {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{records} record(s) left; objects {keys:?}, owned {owned:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(
        count(database, "SELECT count(*) FROM email_attachment_pieces"),
        0,
        "with an object store, no bytes in the database"
    );
}

#[derive(diesel::QueryableByName)]
struct Records {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    count: i64,
}

/// How many records of bytes put ahead of their message there are, read on an open connection:
/// quick enough to see one between its upload and its message's commit.
async fn upload_records(connection: &mut diesel_async::AsyncPgConnection) -> i64 {
    use diesel_async::RunQueryDsl;
    diesel::sql_query("SELECT count(*) AS count FROM email_attachment_uploads")
        .get_result::<Records>(connection)
        .await
        .expect("counted")
        .count
}

/// When the server taking in a mail is killed.
#[derive(Debug, Clone, Copy)]
enum Kill {
    AfterMs(u64),
    /// As soon as its bytes are recorded as put in the object store, before its message is
    /// stored.
    OnceItsBytesArePut,
}

with_each_store! {
    a_server_killed_while_taking_in_a_mail_leaves_it_whole_or_absent => killed_while_taking_in_a_mail,
}

/// The server is killed (SIGKILL) at several moments of taking in a 20 MiB mail: while its body
/// arrives, while it is parsed, while it is stored. After each, a mail is stored whole with all
/// its attachment's bytes or not at all, no byte is left without its message, and the
/// provider's redelivery stores it once. The moments are fractions of the time one whole
/// take-in took on this run, so they fall inside it however fast the build or busy the machine.
async fn killed_while_taking_in_a_mail(bytes_in: &BytesIn) {
    let database = TestDatabase::new().await;
    let (key, address) = {
        let _server = bytes_in.server(&database, &[]).await;
        email_agent(&database, "acme").await
    };
    // With an object store, the bytes are not in the database's pieces.
    let kept_pieces = |pieces: u64| match bytes_in {
        BytesIn::Database => pieces,
        BytesIn::S3(_) => 0,
    };
    let attachment: Vec<u8> = (0..20 * 1024 * 1024u32)
        .map(|n| (n.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let pieces = attachment.len().div_ceil(domain::ATTACHMENT_PIECE_BYTES) as u64;
    let large_mail = |message_id: &str| {
        mail_with(
            &address,
            message_id,
            &[Part {
                disposition_name: "filename=\"large.bin\"",
                content_type: "application/octet-stream",
                bytes: &attachment,
            }],
        )
    };
    let take_in_ms = {
        let server = bytes_in.server(&database, &[]).await;
        let mail = large_mail("<whole@example.org>");
        let started = std::time::Instant::now();
        deliver(&server, "msg_whole", &mail).await;
        started.elapsed().as_millis() as u64
    };
    let mut moments: Vec<Kill> = [0.005, 0.2, 0.4, 0.55, 0.7, 0.8, 0.95]
        .map(|fraction| Kill::AfterMs((take_in_ms as f64 * fraction) as u64))
        .into();
    if let BytesIn::S3(_) = bytes_in {
        moments.push(Kill::OnceItsBytesArePut);
    }
    let mut outcomes = Vec::new();
    let mut watching = database.connection().await;
    for (n, kill) in moments.into_iter().enumerate() {
        let mail = large_mail(&format!("<crash-{n}@example.org>"));
        let delivery = format!("msg_crash_{n}");
        let records_before = upload_records(&mut watching).await;
        let server = bytes_in.server(&database, &[]).await;
        let in_flight = {
            let (client, url) = (server.client.clone(), server.url("/webhooks/email/inbound"));
            let signed_at = now();
            let signature = email::sign(SECRET, &delivery, signed_at, &mail);
            let (delivery, mail) = (delivery.clone(), mail.clone());
            tokio::spawn(async move {
                client
                    .post(url)
                    .header("content-type", "message/rfc822")
                    .header("webhook-id", delivery)
                    .header("webhook-timestamp", signed_at.to_string())
                    .header("webhook-signature", signature)
                    .body(mail)
                    .send()
                    .await
                    .map(|response| response.status().as_u16())
            })
        };
        match kill {
            Kill::AfterMs(ms) => tokio::time::sleep(std::time::Duration::from_millis(ms)).await,
            Kill::OnceItsBytesArePut => {
                let started = std::time::Instant::now();
                while upload_records(&mut watching).await == records_before {
                    assert!(
                        started.elapsed() < std::time::Duration::from_secs(60),
                        "the upload is never recorded"
                    );
                }
            }
        }
        drop(server);
        let answered = in_flight.await.expect("the request's task");
        let stored = count(
            &database,
            &format!(
                "SELECT count(*) FROM email_messages WHERE provider_message_id = '{delivery}'"
            ),
        );
        let stored_pieces = count(
            &database,
            &format!(
                "SELECT count(*) FROM email_attachment_pieces AS p JOIN email_messages AS m \
                 ON m.id = p.message_id WHERE m.provider_message_id = '{delivery}'"
            ),
        );
        assert!(
            (stored, stored_pieces) == (0, 0)
                || (stored, stored_pieces) == (1, kept_pieces(pieces)),
            "killed {kill:?}: {stored} message(s) with {stored_pieces} of {pieces} pieces"
        );
        // Bytes put in an object store for a message the kill left unstored: their record stays
        // for the sweep.
        let left_for_the_sweep = upload_records(&mut watching).await;
        outcomes.push((kill, answered.ok(), stored == 1, left_for_the_sweep));

        let server = bytes_in.server(&database, &[]).await;
        let (status, redelivered) =
            webhook_signed(&server, SECRET, &delivery, now(), "message/rfc822", &mail).await;
        assert_eq!(status, 200, "{redelivered}");
        let ids: Vec<&Value> = redelivered["stored"]
            .as_array()
            .expect("stored")
            .iter()
            .collect();
        assert_eq!(
            (ids.len() as u64, redelivered["duplicates"].as_u64()),
            match stored {
                1 => (0, Some(1)),
                _ => (1, Some(0)),
            },
            "the redelivery stores what the crash did not: {redelivered}"
        );
        assert_eq!(
            count(
                &database,
                &format!(
                    "SELECT count(*) FROM email_messages WHERE provider_message_id = '{delivery}'"
                ),
            ),
            1
        );
        let (_, inbox) = get(&server, "/v1/email/inbox?limit=1", &key).await;
        let message = inbox["items"][0]["id"]
            .as_str()
            .expect("the mail")
            .to_owned();
        let whole = download(
            &server,
            &key,
            &format!("/v1/email/messages/{message}/attachments/att_1"),
            None,
        )
        .await;
        assert!(whole.bytes == attachment, "the 20 MiB come back whole");
    }
    assert_eq!(
        count(
            &database,
            "SELECT count(*) FROM email_attachment_pieces AS p WHERE NOT EXISTS \
             (SELECT 1 FROM email_messages AS m WHERE m.id = p.message_id)"
        ),
        0,
        "no byte without its message"
    );
    only_stored_messages_bytes_are_left(&database, bytes_in).await;
    println!(
        "a whole take-in took {take_in_ms} ms; killed while taking in a mail (when, answer \
         before the kill, stored, upload records left): {outcomes:?}"
    );
}

#[tokio::test]
async fn an_agent_has_at_most_its_cap_of_downloads_under_way() {
    let database = TestDatabase::new().await;
    let server = BytesIn::Database
        .server(&database, &[("EMAIL_ATTACHMENT_DOWNLOADS_PER_AGENT", "2")])
        .await;
    let (key, address) = email_agent(&database, "acme").await;
    let (other_key, other_address) = email_agent(&database, "acme").await;
    // Larger than what the connection's buffers take in: a download not read stays under way.
    let large = vec![7u8; 20 * 1024 * 1024];
    let part = [Part {
        disposition_name: "filename=\"large.bin\"",
        content_type: "application/octet-stream",
        bytes: &large,
    }];
    let id = deliver(
        &server,
        "msg_cap",
        &mail_with(&address, "<cap@example.org>", &part),
    )
    .await;
    let small = vec![7u8; 1024];
    let small_part = [Part {
        disposition_name: "filename=\"small.bin\"",
        content_type: "application/octet-stream",
        bytes: &small,
    }];
    let other_id = deliver(
        &server,
        "msg_cap_other",
        &mail_with(&other_address, "<cap-other@example.org>", &small_part),
    )
    .await;
    let path = format!("/v1/email/messages/{id}/attachments/att_1");
    let open = || {
        server
            .client
            .get(server.url(&path))
            .bearer_auth(&key)
            .send()
    };
    let first = open().await.expect("response");
    let second = open().await.expect("response");
    assert_eq!(
        (first.status().as_u16(), second.status().as_u16()),
        (200, 200)
    );

    let refused = download(&server, &key, &path, None).await;
    assert_eq!(refused.status, 429);
    assert!(refused.headers.contains_key("retry-after"));
    let other_path = format!("/v1/email/messages/{other_id}/attachments/att_1");
    let others = download(&server, &other_key, &other_path, None).await;
    assert_eq!(
        (others.status, others.bytes),
        (200, small),
        "another agent's cap is its own"
    );

    // A client gone frees its place.
    drop(first);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let again = download(&server, &key, &path, None).await;
        if again.status == 200 {
            assert_eq!(again.bytes, large);
            break;
        }
        assert_eq!(again.status, 429);
        assert!(
            std::time::Instant::now() < deadline,
            "the place was never freed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    drop(second);
}

/// An attachment an agent sends without a type takes the type of its name's extension (issue
/// 46); one typed as any valid media type, even `Y/c`, downloads under that type, as the served
/// API description says the download may (any media type).
#[tokio::test]
async fn an_untyped_attachment_takes_its_names_type_and_any_type_downloads_as_described() {
    let database = TestDatabase::new().await;
    let server = BytesIn::Database.server(&database, &[]).await;
    let (key, _) = email_agent(&database, "acme").await;
    let sent = post(
        &server,
        "/v1/email/send",
        &key,
        &json!({"to": ["bob@example.org"], "subject": "Files", "body_text": "Attached.",
        "attachments": [
            {"filename": "note.txt", "content_base64": "aGVsbG8="},
            {"filename": "odd.bin", "content_type": "Y/c", "content_base64": "aGVsbG8="},
            {"filename": "README", "content_base64": "aGVsbG8="},
        ]}),
        None,
    )
    .await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    let id = sent.body["data"]["id"].as_str().expect("an id");
    let listed = sent.body["data"]["attachments"]
        .as_array()
        .expect("attachments");
    let types: Vec<&str> = listed
        .iter()
        .map(|a| a["content_type"].as_str().expect("a type"))
        .collect();
    assert_eq!(types, ["text/plain", "Y/c", "application/octet-stream"]);
    for (attachment, expected) in listed.iter().zip(&types) {
        let got = download(&server, &key, &attachment_path(id, attachment), None).await;
        assert_eq!(got.status, 200);
        assert_eq!(header(&got, "content-type"), *expected, "{attachment}");
        assert_eq!(got.bytes, b"hello");
    }

    let (status, document) = server.get("/openapi.json", None).await;
    assert_eq!(status, 200);
    let answered = &document["paths"]
        ["/v1/email/messages/{message_id}/attachments/{attachment_id}"]["get"]["responses"]["200"]
        ["content"];
    let media_types: Vec<&String> = answered.as_object().expect("content").keys().collect();
    assert_eq!(media_types, ["*/*"], "{answered}");
}
