//! `EmailSender` over SMTP with lettre: any relay (a provider's submission port, a local MTA, a
//! test server) reached in clear on loopback, with STARTTLS, or over implicit TLS.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use domain::attachments::OCTET_STREAM;
use lettre::message::header::ContentType;
use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Attachment, Mailbox, MessageBuilder, MultiPart, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use ports::{Delivery, DeliveryError, EmailSender, OutboundEmail};
use secrecy::{ExposeSecret, SecretString};

pub const SMTP_PROVIDER: &str = "smtp";

/// How the connection to the relay is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmtpSecurity {
    /// Plain text: for a relay on loopback only, since nothing would protect the mail or a password.
    None,
    /// Plain text upgraded with STARTTLS, which the relay must offer (usually port 587).
    StartTls,
    /// TLS from the first byte (usually port 465).
    Tls,
}

impl FromStr for SmtpSecurity {
    type Err = InvalidSmtpSettings;

    /// `none`, `starttls` or `tls`, in any case.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name.to_ascii_lowercase().as_str() {
            "none" => Ok(Self::None),
            "starttls" => Ok(Self::StartTls),
            "tls" => Ok(Self::Tls),
            _ => Err(InvalidSmtpSettings::Security(name.to_owned())),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidSmtpSettings {
    #[error("the SMTP host must be a host name or an IP address, got {0:?}")]
    Host(String),
    #[error("the SMTP port must not be 0")]
    Port,
    #[error("the SMTP security must be none, starttls or tls, got {0:?}")]
    Security(String),
    #[error("the SMTP timeout must be longer than zero")]
    Timeout,
    #[error("the SMTP username must not be empty")]
    Username,
    #[error(
        "SMTP credentials need starttls or tls unless the relay is on loopback: the password \
         would cross the network in clear"
    )]
    CredentialsInClear,
    #[error("the SMTP TLS setup failed: {0}")]
    Tls(String),
}

/// Where and how to reach the relay. Checked when made, so a sender built from them only fails
/// on what the relay says.
#[derive(Debug, Clone)]
pub struct SmtpSettings {
    host: String,
    port: u16,
    security: SmtpSecurity,
    credentials: Option<(String, SecretString)>,
    timeout: Duration,
}

impl SmtpSettings {
    /// `timeout` bounds the connection and each command of the exchange with the relay.
    pub fn new(
        host: impl Into<String>,
        port: u16,
        security: SmtpSecurity,
        credentials: Option<(String, SecretString)>,
        timeout: Duration,
    ) -> Result<Self, InvalidSmtpSettings> {
        let host = host.into();
        if host.is_empty() || host.contains(|c: char| c.is_whitespace() || c == '/') {
            return Err(InvalidSmtpSettings::Host(host));
        }
        if port == 0 {
            return Err(InvalidSmtpSettings::Port);
        }
        if timeout.is_zero() {
            return Err(InvalidSmtpSettings::Timeout);
        }
        if let Some((username, _)) = &credentials {
            if username.is_empty() {
                return Err(InvalidSmtpSettings::Username);
            }
            if security == SmtpSecurity::None && !is_loopback(&host) {
                return Err(InvalidSmtpSettings::CredentialsInClear);
            }
        }
        Ok(Self {
            host,
            port,
            security,
            credentials,
            timeout,
        })
    }
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Hands mail to an SMTP relay, reusing its connections between messages.
pub struct SmtpSender {
    transport: AsyncSmtpTransport<Tokio1Executor>,
}

impl fmt::Debug for SmtpSender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpSender").finish_non_exhaustive()
    }
}

impl SmtpSender {
    /// Call it within a Tokio runtime: the connection pool starts its upkeep task here. No
    /// connection is opened until the first message.
    pub fn new(settings: SmtpSettings) -> Result<Self, InvalidSmtpSettings> {
        let tls_error =
            |error: lettre::transport::smtp::Error| InvalidSmtpSettings::Tls(error.to_string());
        let builder = match settings.security {
            SmtpSecurity::None => {
                AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&settings.host)
            }
            SmtpSecurity::StartTls => {
                AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&settings.host)
                    .map_err(tls_error)?
            }
            SmtpSecurity::Tls => {
                AsyncSmtpTransport::<Tokio1Executor>::relay(&settings.host).map_err(tls_error)?
            }
        };
        let mut builder = builder.port(settings.port).timeout(Some(settings.timeout));
        if let Some((username, password)) = settings.credentials {
            builder = builder.credentials(Credentials::new(
                username,
                password.expose_secret().to_owned(),
            ));
        }
        Ok(Self {
            transport: builder.build(),
        })
    }
}

#[async_trait]
impl EmailSender for SmtpSender {
    fn provider(&self) -> &'static str {
        SMTP_PROVIDER
    }

    async fn send(&self, email: &OutboundEmail) -> Result<Delivery, DeliveryError> {
        let message = build_message(email)?;
        self.transport.send(message).await.map_err(classify)?;
        // SMTP has no id of its own that every relay reports (the queue id in the 250 reply is
        // free text, when there at all): the Message-ID is what finds the message downstream.
        Ok(Delivery {
            provider_message_id: email.internet_message_id.clone(),
        })
    }
}

/// Authentication refusals (530, 534, 535, 538): permanent for SMTP, but they say the service's
/// credentials are wrong, not the message. Mail waits until an operator fixes them.
const AUTHENTICATION_CODES: [&str; 4] = ["530", "534", "535", "538"];

/// 5xx replies refuse the message for good; 4xx replies, a relay that cannot be reached or does
/// not answer in time, TLS trouble and refused credentials may pass.
fn classify(error: lettre::transport::smtp::Error) -> DeliveryError {
    let authentication = error
        .status()
        .is_some_and(|code| AUTHENTICATION_CODES.contains(&code.to_string().as_str()));
    if error.is_permanent() && !authentication {
        DeliveryError::Refused(error.to_string())
    } else {
        DeliveryError::transient(error.to_string())
    }
}

/// The message as the recipients see it. Bcc recipients are in the envelope only: lettre takes
/// them out of the headers once the envelope is made.
fn build_message(email: &OutboundEmail) -> Result<Message, DeliveryError> {
    let mut builder = Message::builder()
        .from(mailbox(email.from.as_str())?)
        .subject(email.subject.as_str())
        .message_id(Some(email.internet_message_id.clone()));
    for address in &email.to {
        builder = builder.to(mailbox(address.as_str())?);
    }
    for address in &email.cc {
        builder = builder.cc(mailbox(address.as_str())?);
    }
    for address in &email.bcc {
        builder = builder.bcc(mailbox(address.as_str())?);
    }
    if let Some(id) = &email.in_reply_to {
        builder = builder.in_reply_to(id.clone());
    }
    if !email.references.is_empty() {
        builder = builder.references(email.references.join(" "));
    }
    builder = custom_headers(builder, &email.headers)?;
    let text = SinglePart::plain(email.text.clone());
    let built = match email.attachments.is_empty() {
        true => builder.singlepart(text),
        false => {
            let mut parts = MultiPart::mixed().singlepart(text);
            for attachment in &email.attachments {
                // Types were checked as media types when given; one lettre cannot read goes as
                // octets, as a download of it would.
                let content_type = ContentType::parse(&attachment.meta.content_type)
                    .or_else(|_| ContentType::parse(OCTET_STREAM))
                    .map_err(|error| DeliveryError::Refused(format!("content type: {error}")))?;
                let name = attachment.meta.filename.clone().unwrap_or_default();
                parts = parts.singlepart(
                    Attachment::new(name)
                        .body(crate::bytes_to_send(attachment)?.to_vec(), content_type),
                );
            }
            builder.multipart(parts)
        }
    };
    built.map_err(|error| DeliveryError::Refused(format!("the message cannot be built: {error}")))
}

fn mailbox(address: &str) -> Result<Mailbox, DeliveryError> {
    address
        .parse()
        .map_err(|error| DeliveryError::Refused(format!("address {address:?}: {error}")))
}

/// Values are written as given (RFC 2047-encoded when not ASCII). A name given twice keeps its
/// last value: lettre holds one value per header name.
fn custom_headers(
    mut builder: MessageBuilder,
    headers: &[(String, String)],
) -> Result<MessageBuilder, DeliveryError> {
    for (name, value) in headers {
        let name = HeaderName::new_from_ascii(name.clone())
            .map_err(|_| DeliveryError::Refused(format!("header name {name:?} is not valid")))?;
        builder = builder.raw_header(HeaderValue::new(name, value.clone()));
    }
    Ok(builder)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(
        host: &str,
        port: u16,
        security: SmtpSecurity,
        credentials: Option<(&str, &str)>,
    ) -> Result<SmtpSettings, InvalidSmtpSettings> {
        SmtpSettings::new(
            host,
            port,
            security,
            credentials.map(|(user, password)| (user.to_owned(), SecretString::from(password))),
            Duration::from_secs(5),
        )
    }

    #[test]
    fn security_names_parse_in_any_case() {
        assert_eq!("none".parse(), Ok(SmtpSecurity::None));
        assert_eq!("STARTTLS".parse(), Ok(SmtpSecurity::StartTls));
        assert_eq!("Tls".parse(), Ok(SmtpSecurity::Tls));
        assert_eq!(
            "ssl".parse::<SmtpSecurity>(),
            Err(InvalidSmtpSettings::Security("ssl".to_owned()))
        );
    }

    #[test]
    fn settings_are_checked() {
        assert!(settings("smtp.example.com", 587, SmtpSecurity::StartTls, None).is_ok());
        assert_eq!(
            settings("", 25, SmtpSecurity::None, None).err(),
            Some(InvalidSmtpSettings::Host(String::new()))
        );
        assert!(matches!(
            settings("smtp example.com", 25, SmtpSecurity::None, None),
            Err(InvalidSmtpSettings::Host(_))
        ));
        assert_eq!(
            settings("smtp.example.com", 0, SmtpSecurity::Tls, None).err(),
            Some(InvalidSmtpSettings::Port)
        );
        assert_eq!(
            settings("smtp.example.com", 465, SmtpSecurity::Tls, Some(("", "pw"))).err(),
            Some(InvalidSmtpSettings::Username)
        );
        let zero = SmtpSettings::new("h.example", 25, SmtpSecurity::None, None, Duration::ZERO);
        assert_eq!(zero.err(), Some(InvalidSmtpSettings::Timeout));
    }

    #[test]
    fn passwords_cross_the_network_only_encrypted() {
        assert_eq!(
            settings(
                "smtp.example.com",
                25,
                SmtpSecurity::None,
                Some(("u", "pw"))
            )
            .err(),
            Some(InvalidSmtpSettings::CredentialsInClear)
        );
        for host in ["localhost", "127.0.0.1", "[::1]"] {
            assert!(
                settings(host, 1025, SmtpSecurity::None, Some(("u", "pw"))).is_ok(),
                "{host}"
            );
        }
    }

    #[test]
    fn the_password_stays_out_of_debug_output() {
        let settings = settings(
            "smtp.example.com",
            465,
            SmtpSecurity::Tls,
            Some(("user", "hunter2")),
        )
        .expect("valid");
        assert!(!format!("{settings:?}").contains("hunter2"));
    }
}
