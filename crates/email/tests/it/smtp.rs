//! `SmtpSender` against a real SMTP server: aiosmtpd, installed by scripts/smtp-tools.sh, on a
//! free loopback port, writing what it accepts to files (smtp_sink.py beside this file).

use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use email::{MailParserInbound, SmtpSecurity, SmtpSender, SmtpSettings};
use ports::{DeliveryError, EmailSender, InboundFormat, InboundParser};
use secrecy::SecretString;
use uuid::Uuid;

use crate::{address, outbound, outbound_with_attachments};

/// An aiosmtpd server, stopped (with its process group) and its spool removed when dropped.
struct SmtpServer {
    child: Child,
    port: u16,
    spool: PathBuf,
}

/// What the server received: the message as sent, and the envelope it came in.
struct Received {
    raw: Vec<u8>,
    mail_from: String,
    rcpt_tos: Vec<String>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

impl SmtpServer {
    async fn start() -> SmtpServer {
        let python = std::env::var("SMTP_PYTHON").unwrap_or_else(|_| {
            panic!(
                "SMTP_PYTHON is not set: run `export SMTP_PYTHON=$(scripts/smtp-tools.sh)` \
                 (make test does) to install the SMTP server of these tests"
            )
        });
        let port = free_port();
        let spool = std::env::temp_dir().join(format!("email-smtp-{}", Uuid::now_v7()));
        std::fs::create_dir_all(&spool).expect("spool directory");
        let handler_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
        let child = Command::new(&python)
            .args(["-m", "aiosmtpd", "-n", "-l"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["-c", "smtp_sink.Sink"])
            .arg(&spool)
            .env("PYTHONPATH", handler_dir)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            // A group of its own, so Drop stops whatever the interpreter started.
            .process_group(0)
            .spawn()
            .unwrap_or_else(|error| panic!("starting {python} -m aiosmtpd: {error}"));
        let mut server = SmtpServer { child, port, spool };
        server.wait_until_listening().await;
        server
    }

    async fn wait_until_listening(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Some(status) = self.child.try_wait().expect("server status") {
                panic!("aiosmtpd exited before listening: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "aiosmtpd did not listen within 30 s"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn sender(&self) -> SmtpSender {
        SmtpSender::new(settings(self.port)).expect("sender")
    }

    /// The messages accepted so far, in order. The server writes each before it answers the
    /// end of data, so whatever the sender saw accepted is here.
    fn received(&self) -> Vec<Received> {
        let mut envelopes: Vec<PathBuf> = std::fs::read_dir(&self.spool)
            .expect("spool")
            .map(|entry| entry.expect("entry").path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .collect();
        envelopes.sort();
        envelopes
            .into_iter()
            .map(|path| {
                let envelope: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(&path).expect("envelope"))
                        .expect("envelope json");
                let strings = |value: &serde_json::Value| {
                    value
                        .as_array()
                        .expect("list")
                        .iter()
                        .map(|item| item.as_str().expect("text").to_owned())
                        .collect()
                };
                Received {
                    raw: std::fs::read(path.with_extension("eml")).expect("message"),
                    mail_from: envelope["mail_from"].as_str().expect("sender").to_owned(),
                    rcpt_tos: strings(&envelope["rcpt_tos"]),
                }
            })
            .collect()
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.spool);
    }
}

fn settings(port: u16) -> SmtpSettings {
    SmtpSettings::new(
        "127.0.0.1",
        port,
        SmtpSecurity::None,
        None,
        Duration::from_secs(5),
    )
    .expect("valid settings")
}

/// The header section of a raw message, one unfolded line per field.
fn header_names(raw: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(raw);
    let head = text.split("\r\n\r\n").next().expect("a header section");
    head.split("\r\n")
        .filter(|line| !line.starts_with([' ', '\t']))
        .filter_map(|line| line.split_once(':'))
        .map(|(name, _)| name.to_ascii_lowercase())
        .collect()
}

#[tokio::test]
async fn a_message_arrives_with_its_headers_body_and_every_recipient() {
    let server = SmtpServer::start().await;
    let email = outbound();

    let delivery = server.sender().send(&email).await.expect("sent");

    assert_eq!(delivery.provider_message_id, email.internet_message_id);
    let received = server.received();
    assert_eq!(received.len(), 1);
    let message = &received[0];
    assert_eq!(message.mail_from, "agent-7@inbox.example.test");
    assert_eq!(
        message.rcpt_tos,
        vec![
            "ada@example.org",
            "bob@example.net",
            "carol@example.com",
            "hidden@example.com"
        ]
    );
    assert!(
        !header_names(&message.raw).contains(&"bcc".to_owned()),
        "the Bcc recipient shows in the headers"
    );

    let parsed = MailParserInbound
        .parse(InboundFormat::Raw, message.raw.clone())
        .await
        .expect("parsed");
    assert_eq!(parsed.from.as_deref(), Some("agent-7@inbox.example.test"));
    assert_eq!(parsed.to, vec!["ada@example.org", "bob@example.net"]);
    assert_eq!(parsed.cc, vec!["carol@example.com"]);
    assert_eq!(parsed.subject.as_deref(), Some(email.subject.as_str()));
    assert_eq!(
        parsed.internet_message_id.as_deref(),
        Some(email.internet_message_id.as_str())
    );
    assert_eq!(parsed.in_reply_to, email.in_reply_to);
    assert_eq!(parsed.references, email.references);
    assert_eq!(
        parsed
            .text
            .as_deref()
            .map(|text| text.replace("\r\n", "\n")),
        Some(email.text.clone())
    );
    for (name, value) in &email.headers {
        assert!(
            parsed.headers.contains(&(name.clone(), value.clone())),
            "{name}: {value} missing from {:?}",
            parsed.headers
        );
    }
    let content_type = parsed
        .headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
        .map(|(_, value)| value.to_ascii_lowercase());
    assert_eq!(content_type.as_deref(), Some("text/plain; charset=utf-8"));
}

#[tokio::test]
async fn attachments_arrive_as_parts_of_a_mixed_message_with_their_names_types_and_bytes() {
    let server = SmtpServer::start().await;
    let email = outbound_with_attachments();

    server.sender().send(&email).await.expect("sent");

    let received = server.received();
    let parsed = MailParserInbound
        .parse(InboundFormat::Raw, received[0].raw.clone())
        .await
        .expect("parsed");
    assert_eq!(
        parsed
            .text
            .as_deref()
            .map(|text| text.replace("\r\n", "\n")),
        Some(email.text.clone()),
        "the text stays the body"
    );
    assert_eq!(parsed.attachments.len(), 2);
    for (sent, arrived) in email.attachments.iter().zip(&parsed.attachments) {
        assert_eq!(arrived.meta.filename, sent.meta.filename);
        assert_eq!(arrived.content, sent.content, "{:?}", sent.meta.filename);
    }
    assert_eq!(parsed.attachments[0].meta.content_type, "application/pdf");
    assert!(parsed.attachments[1]
        .meta
        .content_type
        .starts_with("application/octet-stream"));
}

#[tokio::test]
async fn a_message_handed_over_without_its_attachments_bytes_is_refused_not_sent_short() {
    let server = SmtpServer::start().await;
    let mut email = outbound_with_attachments();
    email.attachments[1].content = None;

    let refused = server.sender().send(&email).await.expect_err("refused");

    assert!(matches!(refused, DeliveryError::Refused(ref reason) if reason.contains("att_2")));
    assert!(server.received().is_empty());
}

#[tokio::test]
async fn one_connection_setup_serves_several_messages() {
    let server = SmtpServer::start().await;
    let sender = server.sender();
    for _ in 0..3 {
        let mut email = outbound();
        email.internet_message_id = format!("<{}@inbox.example.test>", Uuid::now_v7());
        sender.send(&email).await.expect("sent");
    }
    assert_eq!(server.received().len(), 3);
}

#[tokio::test]
async fn a_relay_that_is_not_there_is_a_passing_failure() {
    let sender = SmtpSender::new(settings(free_port())).expect("sender");
    let error = sender.send(&outbound()).await.expect_err("no server");
    assert!(
        matches!(error, DeliveryError::Transient { .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_permanent_refusal_is_refused_with_the_servers_reply() {
    let server = SmtpServer::start().await;
    let mut email = outbound();
    email.to = vec![address("refuse-me@example.org")];

    let error = server.sender().send(&email).await.expect_err("refused");

    match error {
        DeliveryError::Refused(reason) => {
            assert!(reason.contains("550"), "{reason}");
            assert!(reason.contains("mailbox unavailable"), "{reason}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(server.received().is_empty());
}

#[tokio::test]
async fn a_temporary_refusal_may_pass() {
    let server = SmtpServer::start().await;
    let mut email = outbound();
    email.to = vec![address("later@example.org")];

    let error = server.sender().send(&email).await.expect_err("deferred");

    match error {
        DeliveryError::Transient { reason, .. } => assert!(reason.contains("451"), "{reason}"),
        other => panic!("expected a transient failure, got {other:?}"),
    }
}

#[tokio::test]
async fn tls_senders_are_set_up_before_any_connection() {
    for (security, port) in [(SmtpSecurity::StartTls, 587), (SmtpSecurity::Tls, 465)] {
        let credentials = Some(("user".to_owned(), SecretString::from("pw")));
        let settings = SmtpSettings::new(
            "smtp.example.com",
            port,
            security,
            credentials,
            Duration::from_secs(5),
        )
        .expect("valid");
        assert!(SmtpSender::new(settings).is_ok(), "{security:?}");
    }
}
