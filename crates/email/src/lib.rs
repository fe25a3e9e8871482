//! Email provider adapters of agent-runtime: senders over SMTP (lettre) and Resend's HTTP API,
//! the parser of inbound mail (raw MIME or Resend's event) and of its sender's authentication, Resend's inbound webhook (signed per
//! Standard Webhooks), and the sandbox provider's inbox provisioning.

mod authentication;
mod inbound;
mod resend;
mod sandbox;
mod smtp;
mod webhook;

pub use authentication::sender_authentication;
pub use inbound::MailParserInbound;
pub use resend::{
    InvalidResendSettings, ResendSender, ResendSettings, RESEND_BASE_URL, RESEND_PROVIDER,
};
pub use sandbox::{SandboxInboxProvisioner, SANDBOX_PROVIDER};
pub use smtp::{InvalidSmtpSettings, SmtpSecurity, SmtpSender, SmtpSettings, SMTP_PROVIDER};
pub use webhook::{sign, InvalidWebhookSecret, MailWebhook};

use ports::{AttachmentBytes, DeliveryError};

/// The bytes of an attachment to send. The outbox reads them before every hand-off, so a message
/// without them is one no provider can be given.
fn bytes_to_send(attachment: &AttachmentBytes) -> Result<&[u8], DeliveryError> {
    attachment.content.as_deref().ok_or_else(|| {
        DeliveryError::Refused(format!(
            "attachment {} was handed over without its bytes",
            attachment.meta.id
        ))
    })
}
