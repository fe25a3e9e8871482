//! What handlers share: the use cases and the probes.

use std::sync::Arc;

use app::{AgentService, CodeService, EmailService, SmsService, WalletService};
use ports::DatabaseHealth;

use crate::rendered_pages::RenderedPages;
use crate::routes::webhooks::WebhookGate;
use crate::telemetry::Metrics;

pub struct ApiState {
    pub agents: AgentService,
    pub wallets: WalletService,
    pub email: EmailService,
    pub sms: SmsService,
    pub codes: CodeService,
    pub database: Arc<dyn DatabaseHealth>,
    /// First pages of inboxes and intents as last rendered, answered again while unchanged.
    pub first_pages: RenderedPages,
    pub metrics: Metrics,
    /// When set, `/metrics` answers only `Authorization: Bearer <this token>`.
    pub metrics_token: Option<String>,
    /// Turns to read and handle the bodies of the inbound mail webhook, and of Twilio's.
    pub inbound_mail_gate: WebhookGate,
    pub twilio_gate: WebhookGate,
}
