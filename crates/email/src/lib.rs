//! Email provider adapters of agent-runtime: senders over SMTP (lettre) and Resend's HTTP API,
//! the parser of inbound mail (raw MIME or Resend's event), Resend's inbound webhook (signed per
//! Standard Webhooks), and the sandbox provider's inbox provisioning.

mod inbound;
mod resend;
mod sandbox;
mod smtp;
mod webhook;

pub use inbound::MailParserInbound;
pub use resend::{
    InvalidResendSettings, ResendSender, ResendSettings, RESEND_BASE_URL, RESEND_PROVIDER,
};
pub use sandbox::{SandboxInboxProvisioner, SANDBOX_PROVIDER};
pub use smtp::{InvalidSmtpSettings, SmtpSecurity, SmtpSender, SmtpSettings, SMTP_PROVIDER};
pub use webhook::{sign, InvalidWebhookSecret, MailWebhook};
