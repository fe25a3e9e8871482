//! What handlers share: the use cases and the probes.

use std::sync::Arc;

use app::Services;
use mcp::McpEndpoint;
use ports::{DatabaseHealth, Notifications};

use crate::rendered_pages::{RenderedPages, RenderedPolicies};
use crate::routes::provider_webhooks::WebhookGate;
use crate::telemetry::Metrics;
use edge::SseSettings;

pub struct ApiState {
    /// The use cases, built once by the composition root and shared with `/mcp`.
    pub services: Arc<Services>,
    /// The MCP endpoint: the same use cases as tools.
    pub mcp: McpEndpoint,
    /// The operator console, under `/console`: the same use cases as `agentctl`, in pages.
    pub console: actix_web::web::Data<console::Console>,
    pub database: Arc<dyn DatabaseHealth>,
    /// The instance's notification hub, whose connections `/metrics` counts.
    pub notifications: Arc<dyn Notifications>,
    /// First pages of inboxes and intents as last rendered, answered again while unchanged.
    pub first_pages: RenderedPages,
    /// Agents' policies with their usage as last rendered, answered again while unchanged.
    pub policies: RenderedPolicies,
    pub metrics: Metrics,
    /// When set, `/metrics` answers only `Authorization: Bearer <this token>`.
    pub metrics_token: Option<String>,
    /// Turns to read and handle the bodies of the inbound mail webhook, and of Twilio's.
    pub inbound_mail_gate: WebhookGate,
    pub twilio_gate: WebhookGate,
    /// How event streams hold what their readers have not taken yet.
    pub event_streams: SseSettings,
    /// The console's public URL, without a trailing slash: approval links lead under it.
    pub console_base_url: String,
}
