//! SMS provider adapters of agent-runtime: Twilio's messages and numbers over its REST API,
//! Twilio's incoming-message webhook, and the sandbox provider's number provisioning.

mod sandbox_numbers;
mod twilio;
mod webhook;

pub use sandbox_numbers::{SandboxNumberProvisioner, SANDBOX_PROVIDER};
pub use twilio::{
    InvalidTwilioSettings, TwilioClient, TwilioSettings, TWILIO_BASE_URL, TWILIO_PROVIDER,
};
pub use webhook::{sign, InvalidTwilioAuthToken, TwilioWebhook};
